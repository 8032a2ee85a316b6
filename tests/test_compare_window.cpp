// Two checkpoints of one model compared in the window (the Method dock's "Second checkpoint of the
// model"), driving the real window on the tiny Llama that tests/data/gguf holds quantized by ggml
// as Q8_0 (read) and Q4_0 (compared):
// - the Input dock reads the text with the Q8_0 file, the Method dock's list offers the recent
//   Q4_0 file as the second checkpoint: the maps, the error map and the Metrics dock then hold
//   what `attention-lab compute --model Q8_0 --compare-model Q4_0` writes (run as a process), and
//   the map's title, the Metrics dock and the status bar name the checkpoint's file;
// - a checkpoint of another model (another architecture from the list, another shape through
//   Open...) is refused with its reason in the window's error bar, the previous result kept, and
//   does not join the recent models;
// - Inside the model compares the two checkpoints' next-token predictions as core's
//   compareCheckpoints does (top-1 agreement, KL), and its row joins the chart; Heads frames every
//   head by the checkpoint's error, as compute gives it;
// - a session keeps the second checkpoint beside it relative, reopens the comparison, and names
//   the checkpoint when it is missing (in the window, and with exit status 2 for --screenshot).

#include "app_process.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "model_support.h"
#include "sweeps/downstream.h"
#include "ui/experiment/metrics_panel.h"
#include "ui/model/downstream_panel.h"
#include "ui/model/head_grid_panel.h"
#include "ui/model/head_grid_view.h"
#include "ui/plotting/heatmap_view.h"
#include "window_support.h"

#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnlab;
using namespace attnlab::test;
using attnlab::ui::MainWindow;

namespace {

// Words of the tiny fixtures' vocabulary.
const QString kText = QStringLiteral("the theatre at when the");
const QString kCheckpointItem = QStringLiteral("Second checkpoint of the model");

QString firstModel()
{
    return ggufFixture(QStringLiteral("llama-q8_0"));
}
QString secondModel()
{
    return ggufFixture(QStringLiteral("llama-q4_0"));
}

// Whether some label of the widget shows text (whole, inside its text; the zero-width spaces
// where a long file name may break are not counted).
bool showsLabel(const QWidget* widget, const QString& text)
{
    for (const QLabel* label : widget->findChildren<QLabel*>())
        if (label->isVisible() && label->text().remove(QChar(0x200b)).contains(text))
            return true;
    return false;
}

// Waits for the window's controller to refuse its spec; the message, or empty on timeout.
QString waitForFailure(MainWindow& window)
{
    QSignalSpy failed(&window.controller(), &ui::ExperimentController::failed);
    if (!failed.wait(kResultTimeoutMs))
        return QString();
    return failed.front().front().toString();
}

// Reads kText with the model at path through the Input dock (its text box, then the reader list
// where the recent models are).
bool readWithModel(MainWindow& window, const QString& path)
{
    auto* text = window.findChild<QPlainTextEdit*>(QStringLiteral("text"));
    auto* reader = window.findChild<QComboBox*>(QStringLiteral("reader"));
    if (!text || !reader)
        return false;
    text->setPlainText(kText);
    if (!waitForResult(window))
        return false;
    const int index = reader->findData(path);
    if (index < 0)
        return false;
    reader->setCurrentIndex(index);
    emit reader->activated(index);  // as a user's choice in the list
    return waitForResult(window) && resultOf(window).spec.input.modelPath == path;
}

// Chooses "Second checkpoint of the model" in the Method dock's list of methods (the first
// checkpoint its list offers is taken).
bool chooseSecondCheckpoint(MainWindow& window)
{
    auto* methods = window.findChild<QComboBox*>(QStringLiteral("approximation"));
    const int item = methods ? methods->findText(kCheckpointItem) : -1;
    if (item < 0)
        return false;
    methods->setCurrentIndex(item);
    return waitForResult(window);
}

// Picks path in the second checkpoint's list, as a user's choice.
bool pickCheckpoint(MainWindow& window, const QString& path)
{
    auto* list = window.findChild<QComboBox*>(QStringLiteral("checkpointList"));
    const int index = list ? list->findData(path) : -1;
    if (index < 0)
        return false;
    list->setCurrentIndex(index);
    emit list->activated(index);
    return true;
}

// What `attention-lab compute` writes for the pair on layer `layer` (into dir/out).
struct ComputedFiles {
    NpyArray exact;
    NpyArray approx;
    QJsonObject metrics;  // metrics.json
};

ComputedFiles computeWithApp(const QString& dir, int layer)
{
    const QString out = dir + QStringLiteral("/computed");
    const AppRun run = runAttentionLab(
        {QStringLiteral("compute"), QStringLiteral("--model"), firstModel(),
         QStringLiteral("--compare-model"), secondModel(), QStringLiteral("--layer"),
         QString::number(layer), QStringLiteral("--text"), kText, QStringLiteral("--out"), out},
        QString(), 120000);
    if (!run.finished || run.exitCode != 0)
        qFatal("compute failed: %s", qPrintable(run.describe()));
    return {readNpy(out + QStringLiteral("/attention_exact.npy")),
            readNpy(out + QStringLiteral("/attention_approx.npy")),
            QJsonDocument::fromJson(fileBytes(out + QStringLiteral("/metrics.json"))).object()};
}

// The largest |a - b| between a head's matrix and head h of an H x L x L array.
double largestDifference(const ResultMatrix& matrix, const NpyArray& array, qint64 h)
{
    const qint64 l = array.shape[1];
    double largest = 0;
    for (qint64 i = 0; i < l; ++i)
        for (qint64 j = 0; j < l; ++j)
            largest = std::max(
                largest, std::abs(matrix(i, j) - array.values[std::size_t((h * l + i) * l + j)]));
    return largest;
}

}  // namespace

class TestCompareWindow : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setApplicationName(QStringLiteral("attention-lab-compare-window-test"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }

    void init()
    {
        // The models opened before: the Q8_0 file, its Q4_0 sibling, and a Qwen2 file.
        QSettings().setValue(
            QStringLiteral("recentModels"),
            QStringList{firstModel(), secondModel(), ggufFixture(QStringLiteral("qwen2-q4_k_m"))});
        // A title or label built with a wrong count of arguments.
        QTest::failOnWarning(QRegularExpression(QStringLiteral("QString::arg")));
    }

    void theMapsAndMetricsAreComputesOwn();
    void aCheckpointOfAnotherModelIsRefusedWithItsReason();
    void insideTheModelAndHeadsCompareTheCheckpoints();
    void sessionsKeepTheSecondCheckpoint();
};

void TestCompareWindow::theMapsAndMetricsAreComputesOwn()
{
    REQUIRE_ATTENTION_LAB();
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window, QSize(1600, 1000)));
    // Before a language model reads the text, there is nothing to compare with.
    auto* methods = window.findChild<QComboBox*>(QStringLiteral("approximation"));
    QVERIFY(methods);
    auto* items = qobject_cast<QStandardItemModel*>(methods->model());
    auto* random = window.findChild<QComboBox*>(QStringLiteral("reader"));
    random->setCurrentIndex(0);
    emit random->activated(0);  // random embeddings
    QVERIFY(waitForResult(window));
    QVERIFY(!items->item(methods->findText(kCheckpointItem))->isEnabled());

    QVERIFY(readWithModel(window, firstModel()));
    QVERIFY(items->item(methods->findText(kCheckpointItem))->isEnabled());
    QVERIFY(chooseSecondCheckpoint(window));
    const ExperimentResult& result = resultOf(window);
    QCOMPARE(result.spec.input.comparisonModelPath, secondModel());
    auto* list = window.findChild<QComboBox*>(QStringLiteral("checkpointList"));
    QVERIFY(list && list->isVisible());
    QCOMPARE(list->currentText(), QStringLiteral("llama-q4_0.gguf"));
    // The recent models other than the first, and the built-in text models.
    QCOMPARE(list->count(), 2 + int(builtinTextModels().size()));
    QVERIFY(!window.findChild<QWidget*>(QStringLiteral("features"))->isEnabled());

    // The map's title, the Metrics dock and the status bar name the second checkpoint.
    QVERIFY2(window.approxView()->title().startsWith(
                 QStringLiteral("Checkpoint llama-q4_0.gguf, causal: P\u0302")),
             qPrintable(window.approxView()->title()));
    auto* metrics = window.findChild<ui::MetricsPanel*>(QStringLiteral("metricsPanel"));
    QVERIFY(showsLabel(metrics, QStringLiteral("Checkpoint llama-q4_0.gguf")));
    QVERIFY(showsLabel(metrics, QStringLiteral("Time, checkpoint")));
    QVERIFY(showsLabel(window.statusBar(), QStringLiteral("checkpoint llama-q4_0.gguf")));

    // compute's files for the same pair and layer. The two processes run the models' forward
    // passes on different numbers of threads, whose float sums differ in the last bits (about
    // 1e-6 of an attention weight here): the tolerances below allow for that, no more.
    const int layer = result.spec.input.layer;
    const ComputedFiles files = computeWithApp(m_dir.path(), layer);
    const qint64 length = result.labels.size();
    QCOMPARE(files.approx.shape, (std::vector<qint64>{4, length, length}));
    QCOMPARE(qint64(result.heads.size()), files.approx.shape[0]);
    for (qint64 h = 0; h < files.approx.shape[0]; ++h) {
        QVERIFY(largestDifference(result.heads[std::size_t(h)].attentionExact, files.exact, h) <=
                1e-5);
        QVERIFY(largestDifference(result.heads[std::size_t(h)].attentionApprox, files.approx, h) <=
                1e-5);
    }
    // The signed error map of the head shown: P^ - P of the files.
    const int head = window.viewSettings().head;
    double largestError = 0;
    for (qint64 i = 0; i < length; ++i)
        for (qint64 j = 0; j <= i; ++j) {
            const std::size_t at = std::size_t((head * length + i) * length + j);
            const double error = files.approx.values[at] - files.exact.values[at];
            largestError = std::max(largestError, std::abs(error));
            QVERIFY(std::abs(window.errorView()->value(int(i), int(j)) - error) <= 2e-5);
        }
    QVERIFY(largestError > 1e-3);  // the 4-bit file strays visibly
    // Every metric metrics.json holds (the window keeps no kernels), as the dock shows it over
    // all heads.
    const QJsonObject all = files.metrics.value(QStringLiteral("metrics")).toObject();
    const std::pair<const char*, double> shownMetrics[] = {
        {"max_abs", result.metrics.maxAbsError},
        {"mean_abs", result.metrics.meanAbsError},
        {"rel_frobenius_attention", result.metrics.relFrobeniusAttention},
        {"rel_frobenius_output", result.metrics.relFrobeniusOutput},
        {"mean_tv", result.metrics.meanTotalVariation},
        {"mean_kl", result.metrics.meanKl}};
    for (const auto& [key, value] : shownMetrics) {
        const QString name = QString::fromLatin1(key);
        const double written = all.value(name).toDouble();
        QVERIFY2(std::abs(value - written) <= 1e-4 * written, key);
        QCOMPARE(metrics->metricText(name, ui::MetricScope::AllHeads),
                 ui::MetricsPanel::formatValue(value));
    }
    QCOMPARE(metrics->metricText(QStringLiteral("nonpositive_rows")), QStringLiteral("n/a"));

    // Back to a method: the approximation again, the checkpoint's row gone.
    methods->setCurrentIndex(methods->findData(int(Method::FavorPositive)));
    QVERIFY(waitForResult(window));
    QVERIFY(resultOf(window).spec.input.comparisonModelPath.isEmpty());
    QVERIFY(!list->isVisible());
    QVERIFY(window.approxView()->title().startsWith(QStringLiteral("FAVOR+")));
}

void TestCompareWindow::aCheckpointOfAnotherModelIsRefusedWithItsReason()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window, QSize(1280, 800)));
    QVERIFY(readWithModel(window, firstModel()));
    QVERIFY(chooseSecondCheckpoint(window));
    const QString title = window.approxView()->title();

    // Another architecture, from the list.
    QVERIFY(pickCheckpoint(window, ggufFixture(QStringLiteral("qwen2-q4_k_m"))));
    QString message = waitForFailure(window);
    QVERIFY2(message.startsWith(QStringLiteral("qwen2-q4_k_m.gguf cannot be compared with "
                                               "llama-q8_0.gguf as a checkpoint of the same model: "
                                               "its architecture is qwen2, not llama")),
             qPrintable(message));
    QVERIFY(window.errorMessage().contains(message));
    QVERIFY(window.errorMessage().contains(QStringLiteral("still shows the previous result")));
    QCOMPARE(resultOf(window).spec.input.comparisonModelPath, secondModel());
    QCOMPARE(window.approxView()->title(), title);

    // Another shape, through Open... (its file dialog).
    const QString oneLayer = ggufFixture(QStringLiteral("llama-q4_k"));
    acceptFileDialogWith(oneLayer);
    auto* open = window.findChild<QPushButton*>(QStringLiteral("openCheckpoint"));
    QVERIFY(open && open->isVisible());
    QTest::mouseClick(open, Qt::LeftButton);
    message = waitForFailure(window);
    QVERIFY2(message.contains(QStringLiteral("its number of layers is 1, not 2")),
             qPrintable(message));
    QVERIFY(window.errorMessage().contains(QStringLiteral("llama-q4_k.gguf cannot be compared")));
    QCOMPARE(resultOf(window).spec.input.comparisonModelPath, secondModel());
    // A file that could not be compared does not join the recent models.
    QVERIFY(!QSettings().value(QStringLiteral("recentModels")).toStringList().contains(oneLayer));
    // A good checkpoint again clears the message, and comes second among the recent models,
    // after the model it is compared with.
    QVERIFY(pickCheckpoint(window, secondModel()));
    QVERIFY(waitForResult(window));
    QCOMPARE(window.errorMessage(), QString());
    QCOMPARE(QSettings().value(QStringLiteral("recentModels")).toStringList().mid(0, 2),
             (QStringList{firstModel(), secondModel()}));
}

void TestCompareWindow::insideTheModelAndHeadsCompareTheCheckpoints()
{
    REQUIRE_ATTENTION_LAB();
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window, QSize(1600, 1000)));
    QVERIFY(readWithModel(window, firstModel()));
    QVERIFY(chooseSecondCheckpoint(window));

    // Core's comparison of the two checkpoints' forward passes on the text (run here on other
    // threads than the page's worker: float sums that differ in the last bits).
    const auto first = loadModel(firstModel());
    const auto second = loadModel(secondModel());
    const std::vector<int> ids = modelTokens(*first, kText, false).ids;
    const DownstreamComparison expected =
        compareCheckpoints(first->forward(ids), second->forward(ids), first->heads());
    QVERIFY(expected.meanKl > 0);

    ui::DownstreamPanel* panel = window.downstreamPanel();
    QSignalSpy compared(panel, &ui::DownstreamPanel::comparisonFinished);
    window.showPage(MainWindow::ModelPage);
    QVERIFY(compared.wait(kResultTimeoutMs));
    const DownstreamComparison* shown = panel->comparison();
    QVERIFY(shown);
    QCOMPARE(shown->top1Agreement, expected.top1Agreement);
    QVERIFY(std::abs(shown->meanKl - expected.meanKl) <= 1e-4 * expected.meanKl);
    QVERIFY(std::abs(shown->maxKl - expected.maxKl) <= 1e-4 * expected.maxKl);
    QCOMPARE(shown->exactTop1, expected.exactTop1);
    QCOMPARE(shown->approxTop1, expected.approxTop1);
    QVERIFY(std::abs(shown->relFrobeniusAttentionMean - expected.relFrobeniusAttentionMean) <=
            1e-4 * expected.relFrobeniusAttentionMean);
    QVERIFY2(panel->summaryText().startsWith(
                 QStringLiteral("<b>Checkpoint llama-q4_0.gguf</b> against llama-q8_0.gguf: ")),
             qPrintable(panel->summaryText()));
    QVERIFY(panel->summaryText().contains(QStringLiteral("<b>%1%</b> of %2 positions")
                                              .arg(100.0 * expected.top1Agreement, 0, 'f', 1)
                                              .arg(ids.size())));
    // Its row (model-eval's "checkpoint") joins the chart; the sweeps do not apply.
    QCOMPARE(panel->sweepRows().size(), std::size_t(1));
    QCOMPARE(panel->sweepRows().front().method, QStringLiteral("checkpoint"));
    QCOMPARE(panel->sweepRows().front().top1Agreement, expected.top1Agreement);
    for (QPushButton* button : panel->findChildren<QPushButton*>())
        if (button->text().startsWith(QStringLiteral("Sweep")) ||
            button->text() == QStringLiteral("Per layer"))
            QVERIFY2(!button->isEnabled(), qPrintable(button->text()));

    // Heads: each head framed by its error against the second checkpoint, as compute gives it.
    const ComputedFiles files = computeWithApp(m_dir.path(), resultOf(window).spec.input.layer);
    ui::HeadGridPanel* heads = window.headGrid();
    QSignalSpy surveyed(heads, &ui::HeadGridPanel::surveyFinished);
    window.showPage(MainWindow::HeadsPage);
    QVERIFY(surveyed.wait(kResultTimeoutMs));
    QVERIFY2(heads->surveyText().contains(QStringLiteral("Checkpoint llama-q4_0.gguf")),
             qPrintable(heads->surveyText()));
    const QJsonArray perHead = files.metrics.value(QStringLiteral("per_head")).toArray();
    int checked = 0;
    for (const HeadSurveyEntry& entry : heads->view()->entries())
        if (entry.layer == resultOf(window).spec.input.layer) {
            const double expectedError = perHead.at(entry.head)
                                             .toObject()
                                             .value(QStringLiteral("rel_frobenius_attention"))
                                             .toDouble();
            QVERIFY(std::abs(entry.metrics.relFrobeniusAttention - expectedError) <=
                    1e-4 * expectedError);
            ++checked;
        }
    QCOMPARE(checked, 4);
}

void TestCompareWindow::sessionsKeepTheSecondCheckpoint()
{
    REQUIRE_ATTENTION_LAB();
    // The session's folder holds both files.
    const QString folder = m_dir.filePath(QStringLiteral("session"));
    QVERIFY(QDir().mkpath(folder));
    const QString first = folder + QStringLiteral("/model-q8_0.gguf");
    const QString second = folder + QStringLiteral("/model-q4_0.gguf");
    QVERIFY(QFile::copy(firstModel(), first));
    QVERIFY(QFile::copy(secondModel(), second));
    const QString path = folder + QStringLiteral("/compare.attnlab");

    ExperimentSpec spec = exampleSpec();
    spec.input.modelPath = first;
    spec.input.comparisonModelPath = second;
    spec.input.text = kText;
    spec.input.layer = 0;
    Matrix<float> shown;
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window));
        window.setSpec(spec);
        QVERIFY(waitForResult(window));
        shown = *resultOf(window).heads[1].attentionApprox.as<float>();
        QVERIFY(window.saveSession(path));
    }
    const QJsonObject stored =
        QJsonDocument::fromJson(fileBytes(path)).object().value(QStringLiteral("spec")).toObject();
    const QJsonObject input = stored.value(QStringLiteral("input")).toObject();
    QCOMPARE(stored.value(QStringLiteral("method")).toString(), QStringLiteral("checkpoint"));
    QCOMPARE(input.value(QStringLiteral("model")).toString(), QStringLiteral("model-q8_0.gguf"));
    QCOMPARE(input.value(QStringLiteral("comparison_model")).toString(),
             QStringLiteral("model-q4_0.gguf"));

    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window));
        QVERIFY(window.openSession(path));
        QVERIFY(waitForResult(window));
        QCOMPARE(resultOf(window).spec.input.comparisonModelPath, second);
        QCOMPARE(*resultOf(window).heads[1].attentionApprox.as<float>(), shown);
        auto* methods = window.findChild<QComboBox*>(QStringLiteral("approximation"));
        QCOMPARE(methods->currentText(), kCheckpointItem);
        auto* list = window.findChild<QComboBox*>(QStringLiteral("checkpointList"));
        QCOMPARE(list->currentData().toString(), second);
        QVERIFY(
            window.approxView()->title().startsWith(QStringLiteral("Checkpoint model-q4_0.gguf")));
    }

    // Without its second checkpoint the session opens with a message naming it.
    QVERIFY(QFile::rename(second, folder + QStringLiteral("/moved.gguf")));
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window));
        QVERIFY(window.openSession(path));
        const QString message = waitForFailure(window);
        QVERIFY2(message.startsWith(second + QStringLiteral(": no such model folder or .gguf file "
                                                            "(the second checkpoint, compared "
                                                            "with model-q8_0.gguf)")),
                 qPrintable(message));
        QVERIFY(window.errorMessage().contains(second));
    }
    const AppRun run =
        runAttentionLab({QStringLiteral("--session"), path, QStringLiteral("--screenshot"),
                         m_dir.filePath(QStringLiteral("missing.png"))},
                        QString(), 120000);
    QVERIFY2(refusedNaming(run, second), qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("missing.png"))));
}

QTEST_MAIN(TestCompareWindow)
#include "test_compare_window.moc"

// The built-in Vision Transformer in the window, offscreen, driven as a user drives it: the Image
// tab's "Read by" gives [CLS] and the patches of a Fashion-MNIST sample, the image page starts on
// the [CLS] row, follows a clicked patch and the "[CLS] row" button, and shows the rollout over
// every layer when asked (saved with the session); the Heads and Inside the model pages read the
// image too (every head surveyed; the class and the KL of the class distributions compared, for
// the image or for every image of its folder).

#include "errors.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/images/image_loader.h"
#include "ui/experiment/image_overlay_view.h"
#include "inputs/model_input.h"
#include "ui/window/main_window.h"
#include "ui/model/downstream_panel.h"
#include "ui/model/head_grid_panel.h"
#include "ui/model/head_grid_view.h"
#include "sweeps/downstream.h"
#include "window_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <qcustomplot.h>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

// Reading a 28 x 28 image takes milliseconds; this bounds a broken computation.
constexpr int kTimeoutMs = 60'000;
// The built-in ViT: 28 x 28 images in 4 x 4 patches (7 x 7 of them, and [CLS]), 4 layers of 4
// heads (resources/models/fashion-vit/config.json).
constexpr int kTokens = 50;
constexpr int kLayers = 4;
constexpr int kHeads = 4;
const QString kSample =
    QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/models/fashion-vit/samples/03-dress.png");

// Waits until the window shows a result of the built-in ViT; false on timeout.
bool waitForVitResult(MainWindow& window)
{
    return QTest::qWaitFor(
        [&] {
            const auto& result = window.controller().current().result;
            return !window.controller().isBusy() && result &&
                   result->spec.input.kind == InputKind::Model &&
                   result->spec.input.modelPath == QLatin1String(kBuiltinVitModel);
        },
        kTimeoutMs);
}

// The titles of the image page, the figure's and then the three panels', joined by " | " (each
// title's lines by " / ").
QString overlayTitles(MainWindow& window)
{
    auto* view = window.findChild<ImageOverlayView*>();
    QStringList titles;
    for (QCPLayoutElement* element : view->plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(element); text && text->visible())
            titles.append(text->text().replace(QLatin1Char('\n'), QStringLiteral(" / ")));
    return titles.join(QStringLiteral(" | "));
}

// Whether the image page's titles (overlayTitles) name the row shown once, in the figure's title.
bool namesRowOnce(const QString& titles, const QString& row)
{
    return titles.startsWith(row) && titles.count(row) == 1;
}

// The built-in ViT reading the dress sample, with `method` (m = 16) against exact attention.
ExperimentSpec vitSpec(const QString& method)
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = QString::fromLatin1(kBuiltinVitModel);
    spec.input.imagePath = kSample;
    spec.setMethod(method);
    spec.approximation.features = 16;
    return spec;
}

// compareDownstream of spec on one image with every layer replaced, from core directly.
DownstreamComparison comparedAlone(const ExperimentSpec& spec, const QString& image)
{
    const std::shared_ptr<const VitModel> model = loadVitModel(spec.input.modelPath);
    const PixelTensor pixels = model->preprocess(loadImagePixels(image, 0), image);
    return compareDownstream(*model, pixels, *cachedForward(model, pixels), spec, {0, 1, 2, 3});
}

// Shows panel with spec's comparison; false when it did not finish in time.
bool showComparison(DownstreamPanel& panel, const ExperimentSpec& spec)
{
    panel.resize(1200, 800);
    panel.show();
    QSignalSpy finished(&panel, &DownstreamPanel::comparisonFinished);
    panel.setExperiment(spec);
    return finished.wait(kTimeoutMs);
}

}  // namespace

class TestVitWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void imageTabReadsWithTheBuiltinVit();
    void imagePageFollowsPatchesAndComesBackToClass();
    void imagePageOpensOnClassAfterText();
    void rolloutReplacesTheHeadsRowAndIsSaved();
    void headGridSurveysTheVitsHeads();
    void insideTheModelComparesClasses();
    void insideTheModelReadsTheImagesOfTheFolder();
    void insideTheModelSkipsAFoldersUnreadableImage();

private:
    QTemporaryDir m_dir;
};

void TestVitWindow::initTestCase()
{
    startAsFirstRun();
    QVERIFY(m_dir.isValid());
    if (builtinModelFolder(QString::fromLatin1(kBuiltinVitModel)).isEmpty())
        QFAIL("the built-in ViT (resources/models/fashion-vit) is missing");
}

void TestVitWindow::init()
{
    // A title or label built with a wrong count of arguments.
    QTest::failOnWarning(QRegularExpression(QStringLiteral("QString::arg")));
}

// Choosing "Built-in ViT" on the Image tab reads a sample with the model: [CLS] and 7 x 7 patches,
// every head of the chosen layer, no mask; the patch controls give way to the layer; the page's
// bar for a ViT appears and its panels start on the [CLS] row.
void TestVitWindow::imageTabReadsWithTheBuiltinVit()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitFor([&] { return window.controller().current().result != nullptr; },
                            kTimeoutMs));
    auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("inputTabs"));
    auto* reader = window.findChild<QComboBox*>(QStringLiteral("imageReader"));
    QVERIFY(tabs && reader);
    tabs->setCurrentIndex(tabs->indexOf(reader->parentWidget()));
    const int builtin = reader->findData(QString::fromLatin1(kBuiltinVitModel));
    QVERIFY(builtin > 0);
    reader->setCurrentIndex(builtin);
    emit reader->activated(builtin);  // as a user's choice in the list
    QVERIFY(waitForVitResult(window));
    window.showPage(MainWindow::ImagePage);

    const ExperimentResult& result = *window.controller().current().result;
    QCOMPARE(result.labels.size(), kTokens);
    QCOMPARE(result.labels.front(), QStringLiteral("[CLS]"));
    QCOMPARE(result.labels.at(1), QStringLiteral("(0, 0)"));
    QCOMPARE(std::tie(result.gridRows, result.gridCols), std::make_tuple(7, 7));
    QCOMPARE(int(result.heads.size()), kHeads);
    QVERIFY(!result.spec.causal);
    QVERIFY2(result.spec.input.imagePath.contains(QStringLiteral("fashion-vit/samples/")),
             qPrintable(result.spec.input.imagePath));
    QCOMPARE(window.controller().current().patchImage.size(), QSize(28, 28));

    auto* layer = window.findChild<QSpinBox*>(QStringLiteral("imageLayer"));
    QVERIFY(layer && layer->isEnabled());
    QCOMPARE(layer->maximum(), kLayers - 1);
    QVERIFY(!window.findChild<QWidget*>(QStringLiteral("patchSize"))->isEnabled());
    // The Head dimension box, disabled, shows the model's d (hidden size / heads), not the spec's.
    auto* headDim = window.findChild<QSpinBox*>(QStringLiteral("headDim"));
    QVERIFY(headDim && !headDim->isEnabled());
    QCOMPARE(headDim->value(), int(window.controller().current().input->headDim()));
    QCOMPARE(headDim->value(), 32);  // the built-in ViT: hidden size 128, 4 heads
    QTRY_VERIFY(window.findChild<QPushButton*>(QStringLiteral("classRow"))->isVisible());
    const QString titles = overlayTitles(window);
    QVERIFY2(namesRowOnce(titles, QStringLiteral("[CLS] row")), qPrintable(titles));
}

// A click on a patch shows that patch's row (token patch + 1: [CLS] comes first); the "[CLS] row"
// button goes back to the class token.
void TestVitWindow::imagePageFollowsPatchesAndComesBackToClass()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1400, 900);
    window.show();
    window.setSpec(vitSpec(QStringLiteral("favor-positive")));
    QVERIFY(waitForVitResult(window));
    window.showPage(MainWindow::ImagePage);
    auto* view = window.findChild<ImageOverlayView*>();
    emit view->patchClicked(10);  // row 1, column 3
    QCOMPARE(window.viewSettings().query, 11);
    QString titles = overlayTitles(window);
    QVERIFY2(namesRowOnce(titles, QStringLiteral("patch (1, 3) row")), qPrintable(titles));
    QVERIFY(view->selectionOutline(ImageOverlayView::ExactPanel)->visible());

    QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("classRow")), Qt::LeftButton);
    QCOMPARE(window.viewSettings().query, 0);
    titles = overlayTitles(window);
    QVERIFY2(namesRowOnce(titles, QStringLiteral("[CLS] row")), qPrintable(titles));
    QVERIFY(!view->selectionOutline(ImageOverlayView::ExactPanel)->visible());
}

// A query picked in the text's maps (token 10) is not carried over to the ViT's patches: its
// image page opens on the [CLS] row.
void TestVitWindow::imagePageOpensOnClassAfterText()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1400, 900);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.controller().current().result, kTimeoutMs);
    window.selectQuery(10);
    QCOMPARE(window.viewSettings().query, 10);
    window.setSpec(vitSpec(QStringLiteral("favor-positive")));
    QVERIFY(waitForVitResult(window));
    window.showPage(MainWindow::ImagePage);
    const QString titles = overlayTitles(window);
    QVERIFY2(namesRowOnce(titles, QStringLiteral("[CLS] row")), qPrintable(titles));
}

// The rollout box draws the rollout over the 4 layers: the exact panel's title gives the weight
// the [CLS] row of R keeps on [CLS] (R(0, 0) of the computation's rollout, which test_vit checks
// against a reference). The choice is part of the session's view.
void TestVitWindow::rolloutReplacesTheHeadsRowAndIsSaved()
{
    const QString path = m_dir.filePath(QStringLiteral("rollout.attnlab"));
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        window.show();
        window.setSpec(vitSpec(QStringLiteral("nystrom")));
        QVERIFY(waitForVitResult(window));
        window.showPage(MainWindow::ImagePage);
        const auto& rollout = window.controller().current().rollout;
        QVERIFY(rollout);
        QCOMPARE(rollout->layers, kLayers);
        QCOMPARE(rollout->approx.rows(), Eigen::Index(kTokens));
        QVERIFY(!overlayTitles(window).contains(QStringLiteral("rollout")));

        window.findChild<QCheckBox*>(QStringLiteral("rollout"))->setChecked(true);
        QVERIFY(window.viewSettings().rollout);
        const QString titles = overlayTitles(window);
        QVERIFY2(namesRowOnce(titles, QStringLiteral("rollout over 4 layers, [CLS] row")),
                 qPrintable(titles));
        const QString onClass = QStringLiteral("%1 on [CLS]").arg(rollout->exact(0, 0), 0, 'f', 2);
        QVERIFY2(titles.section(QStringLiteral(" | "), 1, 1).contains(onClass),  // the exact panel
                 qPrintable(titles + QStringLiteral(" / expected ") + onClass));
        QVERIFY(window.saveSession(path));
    }
    MainWindow window(MainWindow::Start::DefaultExample);
    window.show();
    QVERIFY(window.openSession(path));
    QVERIFY(waitForVitResult(window));
    QVERIFY(window.viewSettings().rollout);
    QVERIFY(window.findChild<QCheckBox*>(QStringLiteral("rollout"))->isChecked());
    QCOMPARE(window.controller().spec().approximation.kind, Method::Nystrom);
}

// The Heads page surveys every layer and head of the ViT over the image, thumbnails of 48 x 48
// blocks at most (50 tokens: 48 x 48), each with finite metrics.
void TestVitWindow::headGridSurveysTheVitsHeads()
{
    HeadGridPanel panel;
    panel.resize(1200, 800);
    panel.show();
    QSignalSpy finished(&panel, &HeadGridPanel::surveyFinished);
    panel.setExperiment(vitSpec(QStringLiteral("favor-positive")));
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY2(panel.message().isEmpty(), qPrintable(panel.message()));
    QCOMPARE(panel.view()->layerCount(), kLayers);
    QCOMPARE(panel.view()->headCount(), kHeads);
    QVERIFY2(panel.surveyText().contains(QStringLiteral("%1\u00a0tokens").arg(kTokens)),
             qPrintable(panel.surveyText()));
    for (const HeadSurveyEntry& entry : panel.view()->entries()) {
        QCOMPARE(entry.thumbnailExact.rows(), Eigen::Index(48));
        QVERIFY(std::isfinite(entry.metrics.relFrobeniusAttention));
        QVERIFY(entry.metrics.relFrobeniusAttention > 0);
    }
}

// Inside the model on an image: one prediction (the class), named as config.json's id2label names
// it, equal to what compareDownstream gives; exact attention keeps it with a KL of rounding size.
void TestVitWindow::insideTheModelComparesClasses()
{
    const ExperimentSpec spec = vitSpec(QStringLiteral("favor-positive"));
    const DownstreamComparison expected = comparedAlone(spec, kSample);
    const std::shared_ptr<const VitModel> model = loadVitModel(spec.input.modelPath);

    DownstreamPanel panel;
    QVERIFY(showComparison(panel, spec));
    QSignalSpy finished(&panel, &DownstreamPanel::comparisonFinished);
    const DownstreamComparison* shown = panel.comparison();
    QVERIFY(shown);
    QCOMPARE(shown->kl.size(), std::size_t(1));
    // Float forward passes on threads of their own: equal to float rounding.
    QVERIFY(std::abs(shown->kl.front() - expected.kl.front()) < 1e-6 * (1 + expected.kl.front()));
    QCOMPARE(shown->exactTop1, expected.exactTop1);
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("downstreamTable"));
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(table->horizontalHeaderItem(1)->text(), QStringLiteral("Class (exact)"));
    QCOMPARE(table->item(0, 1)->text(), model->classNames().at(expected.exactTop1.front()));
    QCOMPARE(table->item(0, 1)->text(), QStringLiteral("Dress"));
    QVERIFY2(panel.summaryText().contains(QStringLiteral("class distributions")),
             qPrintable(panel.summaryText()));

    panel.setExperiment(vitSpec(QStringLiteral("exact")));
    QVERIFY(finished.wait(kTimeoutMs));
    QCOMPARE(panel.comparison()->top1Agreement, 1.0);
    QVERIFY2(panel.comparison()->maxKl < 1e-6,
             qPrintable(QString::number(panel.comparison()->maxKl)));
}

// "every image of its folder": the ten samples, a table row each (the file's name, its class),
// the agreement the fraction of the ten whose class the approximation keeps and the KL their
// mean, as compareDownstream gives them image by image; the choice is part of the page's state,
// and a choice the page does not have is refused naming the field.
void TestVitWindow::insideTheModelReadsTheImagesOfTheFolder()
{
    const ExperimentSpec spec = vitSpec(QStringLiteral("favor-positive"));
    const QDir samples = QFileInfo(kSample).absoluteDir();
    const QStringList files = samples.entryList({QStringLiteral("*.png")}, QDir::Files, QDir::Name);
    QCOMPARE(files.size(), 10);
    int kept = 0;
    double klSum = 0;
    for (const QString& file : files) {
        const DownstreamComparison one = comparedAlone(spec, samples.filePath(file));
        kept += one.exactTop1.front() == one.approxTop1.front();
        klSum += one.kl.front();
    }

    DownstreamPanel panel;
    QVERIFY(showComparison(panel, spec));
    QSignalSpy finished(&panel, &DownstreamPanel::comparisonFinished);
    auto* images = panel.findChild<QComboBox*>(QStringLiteral("downstreamImages"));
    QVERIFY(images && images->isVisible());
    images->setCurrentIndex(1);
    QVERIFY(finished.wait(kTimeoutMs));
    const DownstreamComparison* shown = panel.comparison();
    QCOMPARE(shown->kl.size(), std::size_t(10));
    QCOMPARE(shown->top1Agreement, kept / 10.0);
    // The forward passes run in float, their products split over however many threads the
    // thread running them uses: the page's worker and this test may round differently.
    QVERIFY2(std::abs(shown->meanKl - klSum / 10) < 1e-6 * (1 + klSum),
             qPrintable(QStringLiteral("%1 against %2").arg(shown->meanKl).arg(klSum / 10)));
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("downstreamTable"));
    QCOMPARE(table->rowCount(), 10);
    QVERIFY2(table->item(3, 0)->text().endsWith(files[3]), qPrintable(table->item(3, 0)->text()));
    QCOMPARE(table->item(3, 1)->text(), QStringLiteral("Dress"));
    QVERIFY2(panel.summaryText().contains(QStringLiteral("of 10 images")),
             qPrintable(panel.summaryText()));
    QCOMPARE(panel.state().value("images").toString(), QStringLiteral("folder"));

    DownstreamPanel restored;
    restored.setState(panel.state());
    QCOMPARE(restored.findChild<QComboBox*>(QStringLiteral("downstreamImages"))->currentIndex(), 1);
    QJsonObject bad = panel.state();
    bad["images"] = QStringLiteral("all");
    try {
        restored.setState(bad);
        QFAIL("a bad images choice was taken");
    } catch (const InputError& error) {
        QVERIFY2(error.message().contains(QStringLiteral("images")), qPrintable(error.message()));
    }
}

// "every image of its folder" skips an image that cannot be read (a corrupt PNG): the others are
// compared, a table row each, and the summary says which file was skipped and why; a folder of
// which no image can be read shows the refusal, naming the folder.
void TestVitWindow::insideTheModelSkipsAFoldersUnreadableImage()
{
    const QString folder = m_dir.filePath(QStringLiteral("one-corrupt"));
    QVERIFY(QDir().mkpath(folder));
    const QString dress = folder + QStringLiteral("/03-dress.png");
    QVERIFY(QFile::copy(kSample, dress));
    const QString corrupt = folder + QStringLiteral("/02-corrupt.png");
    QFile file(corrupt);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("\x89PNG\r\n\x1a\nnot the rest of a PNG");
    file.close();
    ExperimentSpec spec = vitSpec(QStringLiteral("favor-positive"));
    spec.input.imagePath = dress;

    DownstreamPanel panel;
    QVERIFY(showComparison(panel, spec));
    QSignalSpy finished(&panel, &DownstreamPanel::comparisonFinished);
    panel.findChild<QComboBox*>(QStringLiteral("downstreamImages"))->setCurrentIndex(1);
    QVERIFY(finished.wait(kTimeoutMs));
    QCOMPARE(panel.comparison()->kl.size(), std::size_t(1));
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("downstreamTable"));
    QCOMPARE(table->rowCount(), 1);
    QVERIFY2(table->item(0, 0)->text().endsWith(QStringLiteral("03-dress.png")),
             qPrintable(table->item(0, 0)->text()));
    const QString summary = panel.summaryText();
    QVERIFY2(summary.contains(QStringLiteral("(1 image)")) &&
                 summary.contains(corrupt + QStringLiteral(": cannot read the image: ")) &&
                 summary.contains(QStringLiteral("skipped, the folder's other images are read")),
             qPrintable(summary));

    QVERIFY(QFile::remove(dress));
    spec.input.imagePath = corrupt;
    panel.setExperiment(spec);
    auto* message = panel.findChild<QLabel*>(QStringLiteral("downstreamMessage"));
    const QString refusal = QFileInfo(folder).absoluteFilePath() +
                            QStringLiteral(": none of the folder's image files can be read");
    QVERIFY2(
        QTest::qWaitFor([&] { return message->isVisible() && message->text().contains(refusal); },
                        kTimeoutMs),
        qPrintable(message->text()));
}

QTEST_MAIN(TestVitWindow)
#include "test_vit_window.moc"

// The Generate page (ui/generation/generation_page.h) driven as a user drives it, on the tiny
// Llama with grouped-query attention of tests/data/models (2 layers, 4 query heads over 2
// key/value heads, d = 12) and on the built-in model: Generate gives N tokens in both columns,
// exactly the tokens core/generation gives for the same spec, with the first divergence marked
// where core's firstDivergence says; Cancel stops between tokens within a bounded time and the
// page generates again; a method without a recurrent form is refused with the registry's reason;
// input without a language model says what the page needs, and a text model's input gets the
// controls whatever image the spec still names; a character whose bytes span tokens reads whole
// in the running texts; the run exports as `generate` writes it; in the window, the Stepper page
// follows the chosen head and shows the state the generation reported; the page's state comes
// back from a session, and a session that showed a generation generates again; the page grabs
// with its text whole and its charts drawn at 1600 x 1000 and 1280 x 800.

#include "attention/approximation.h"
#include "attention/recurrent_attention.h"
#include "errors.h"
#include "generation/generation.h"
#include "inputs/builtin_models.h"
#include "inputs/model_input.h"
#include "sessions/generation_page_state.h"
#include "ui/generation/continuation_view.h"
#include "ui/generation/generation_page.h"
#include "ui/stepper/stepper_style.h"
#include "ui/stepper/stepper_view.h"
#include "ui/window/main_window.h"
#include "model_support.h"
#include "test_support.h"
#include "widget_support.h"
#include "window_support.h"

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextDocument>
#include <QScrollBar>
#include <QTextEdit>
#include <QTest>
#include <QToolButton>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

constexpr int kTimeoutMs = 60'000;
const QString kTinyLlama = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-llama-gqa-f32");
// The built-in model these tests were measured on (4 layers, 128 positions), named by its id.
const QString kKjvGpt2 = QString::fromLatin1(kBuiltinKjvGpt2);
const QString kPrompt = QStringLiteral("And God said, Let there be light: and there was light.");

// The page given spec as the window gives it (with the input it built).
void showExperiment(GenerationPage& page, const ExperimentSpec& spec)
{
    page.setExperiment(spec, std::make_shared<const AttentionInput>(buildInput(spec.input)));
}

// Clicks Generate and waits for the run to end.
bool clickGenerate(GenerationPage& page)
{
    QSignalSpy finished(&page, &GenerationPage::generationFinished);
    QTest::mouseClick(child<QPushButton>(page, "generateRun"), Qt::LeftButton);
    return finished.wait(kTimeoutMs);
}

// Clicks a check box on its box (the middle of a wide check box is not on it).
void clickCheckBox(QCheckBox* box)
{
    QTest::mouseClick(box, Qt::LeftButton, {}, QPoint(8, box->height() / 2));
}

// What core gives for the page's spec, run here without the page.
GenerationResult coreRun(const ExperimentSpec& spec, int tokens, int followLayer = -1,
                         int followHead = 0)
{
    GenerationSpec generation;
    generation.prompt = spec.input.text;
    generation.tokens = tokens;
    generation.approximation = spec.approximation;
    generation.followLayer = followLayer;
    generation.followHead = followHead;
    Generation run(loadModel(spec.input.modelPath), generation);
    return runGeneration(run);
}

}  // namespace

class TestGeneratePage : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void generateGivesNTokensInBothColumns_data();
    void generateGivesNTokensInBothColumns();
    void cancelStopsBetweenTokensAndThePageGeneratesAgain();
    void aMethodWithoutARecurrentFormIsRefusedWithItsReason();
    void otherInputSaysWhatThePageNeeds();
    void aTextModelAfterAnImageGetsTheControls();
    void aCharacterSplitOverTokensReadsWhole();
    void aRunThatCannotStartSaysWhy();
    void theRunExportsAsTheCommandWritesIt();
    void theStepperFollowsTheChosenHead();
    void theStateComesBackFromASession();
    void thePageGrabsWholeAtTwoSizes_data();
    void thePageGrabsWholeAtTwoSizes();
    void aShortPageGivesEachChartItsHeight();
    void anEmptyChartSaysWhatWillBeThere();

private:
    QTemporaryDir m_dir;
};

void TestGeneratePage::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(m_dir.isValid());
}

void TestGeneratePage::generateGivesNTokensInBothColumns_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("tokens");
    QTest::newRow("tiny llama (GQA)") << kTinyLlama << 20;
    QTest::newRow("built-in") << kKjvGpt2 << 40;
}

// Property: Generate shows N rows, each with the exact and the approximate token as the model's
// labels, and they are the tokens core gives for the same spec; the row marked as the first
// divergence is core's firstDivergence (on the built-in model, FAVOR+ with m = 16 parts from
// softmax within 40 tokens, so that the mark is shown); the charts have N points.
void TestGeneratePage::generateGivesNTokensInBothColumns()
{
    QFETCH(QString, model);
    QFETCH(int, tokens);
    GenerationPage page;
    page.resize(1200, 800);
    page.show();
    const ExperimentSpec spec = modelInputSpec(model, kPrompt);
    showExperiment(page, spec);
    QVERIFY(page.refusal().isEmpty());
    QCOMPARE(child<QPlainTextEdit>(page, "generatePrompt")->toPlainText(), kPrompt);
    child<QSpinBox>(page, "generateTokens")->setValue(tokens);
    QVERIFY(clickGenerate(page));
    QVERIFY2(!page.isBusy(), qPrintable(child<QLabel>(page, "generateStatus")->text()));

    const GenerationResult expected = coreRun(spec, tokens);
    QCOMPARE(int(page.steps().size()), tokens);
    QCOMPARE(page.exactIds(), expected.exactIds);
    QCOMPARE(page.approxIds(), expected.approxIds);
    const ContinuationView* table = page.continuation();
    QCOMPARE(table->rowCount(), tokens);
    const auto loaded = loadModel(model);
    for (const int row : {0, tokens - 1}) {
        QCOMPARE(table->item(row, 1)->text(),
                 loaded->tokenizer().label(expected.exactIds[std::size_t(row)]));
        QCOMPARE(table->item(row, 2)->text(),
                 loaded->tokenizer().label(expected.approxIds[std::size_t(row)]));
    }
    const int divergence = firstDivergence(expected);
    QCOMPARE(page.firstDivergence(), divergence);
    QCOMPARE(table->firstDivergence(), divergence);
    if (model == kKjvGpt2)
        QVERIFY2(divergence > 0, qPrintable(QString::number(divergence)));
    for (int row = 0; row < tokens; ++row)
        QCOMPARE(table->item(row, 0)->text().startsWith(QStringLiteral("\u25b6")),
                 row == divergence);
    // "agree on the first 0 of N tokens" read as if they agreed: a run that parts at once says
    // so.
    if (divergence == 0)
        QVERIFY2(page.summaryText().startsWith(
                     QStringLiteral("The continuations differ from the first of %1 tokens: step 0")
                         .arg(tokens)),
                 qPrintable(page.summaryText()));
    else if (divergence > 0)
        QVERIFY2(page.summaryText().contains(
                     QStringLiteral("first %1 of %2").arg(divergence).arg(tokens)),
                 qPrintable(page.summaryText()));
    // The running texts are the continuations decoded whole.
    for (const auto& [name, ids] : {std::pair{"generateExactText", expected.exactIds},
                                    std::pair{"generateApproxText", expected.approxIds}}) {
        const ContinuationText text = continuationText(loaded->tokenizer(), expected.promptIds, ids,
                                                       divergence < 0 ? tokens : divergence);
        QTextDocument document;
        document.setHtml((text.agreed + text.rest).toHtmlEscaped());  // white space as shown
        QVERIFY(child<QTextEdit>(page, name)->toPlainText().endsWith(document.toPlainText()));
    }
    for (const GenerationChartKind kind :
         {GenerationChartKind::Kl, GenerationChartKind::Cost, GenerationChartKind::Memory})
        QVERIFY(page.chart(kind)->graphCount() > 0 &&
                page.chart(kind)->graph(0)->dataCount() == tokens);
}

// Cancel during a run stops it between tokens within a bounded time (a hang would fail, not a
// slow machine: the bound is generous), keeps the tokens generated so far, says so, and the page
// generates again afterwards.
void TestGeneratePage::cancelStopsBetweenTokensAndThePageGeneratesAgain()
{
    GenerationPage page;
    page.show();
    ExperimentSpec spec = modelInputSpec(kKjvGpt2, kPrompt, "favor-positive", 256);
    spec.input.text = QStringLiteral("In");
    showExperiment(page, spec);
    child<QSpinBox>(page, "generateTokens")->setValue(120);
    QSignalSpy finished(&page, &GenerationPage::generationFinished);
    QTest::mouseClick(child<QPushButton>(page, "generateRun"), Qt::LeftButton);
    QVERIFY(page.isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(page.steps().size() >= 2, kTimeoutMs);
    QElapsedTimer clock;
    clock.start();
    QTest::mouseClick(child<QPushButton>(page, "generateCancel"), Qt::LeftButton);
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(!page.isBusy());
    const int kept = int(page.steps().size());
    QVERIFY(kept >= 2);
    if (kept < 120)
        QVERIFY2(child<QLabel>(page, "generateStatus")->text().contains("Cancelled after"),
                 qPrintable(child<QLabel>(page, "generateStatus")->text()));
    QCOMPARE(page.continuation()->rowCount(), kept);
    QVERIFY(child<QPushButton>(page, "generateRun")->isEnabled());

    child<QSpinBox>(page, "generateTokens")->setValue(5);
    QVERIFY(clickGenerate(page));
    QCOMPARE(int(page.steps().size()), 5);
    QCOMPARE(page.continuation()->rowCount(), 5);
}

// Nyström has no recurrent form and Linformer no causal one: the page says why, with the
// registry's words, and Generate is greyed (clicking it starts nothing).
void TestGeneratePage::aMethodWithoutARecurrentFormIsRefusedWithItsReason()
{
    for (const QString& method : {QStringLiteral("nystrom"), QStringLiteral("linformer")}) {
        GenerationPage page;
        page.show();
        showExperiment(page, modelInputSpec(kTinyLlama, kPrompt, method));
        const Method kind = modelInputSpec(kTinyLlama, kPrompt, method).approximation.kind;
        const QString expected = thrownMessage<InputError>([&] {
            requireCausalForm(kind, true, CausalBecause::LanguageModel);
            requireRecurrentForm(kind);
        });
        QVERIFY(!expected.isEmpty());
        QCOMPARE(page.refusal(), expected);
        auto* reason = child<QLabel>(page, "generateRefusal");
        QVERIFY(reason->isVisible());
        QVERIFY2(reason->text().contains(expected), qPrintable(reason->text()));
        auto* generate = child<QPushButton>(page, "generateRun");
        QVERIFY(!generate->isEnabled());
        QCOMPARE(generate->toolTip(), expected);
        page.generate();
        QVERIFY(!page.isBusy());
    }
}

void TestGeneratePage::otherInputSaysWhatThePageNeeds()
{
    GenerationPage page;
    page.show();
    ExperimentSpec spec;  // the random-embedding text
    showExperiment(page, spec);
    auto* message = child<QLabel>(page, "generateMessage");
    QVERIFY(message->isVisible());
    QVERIFY(message->text().contains(QStringLiteral("trained text model")));
    QVERIFY(!child<QPushButton>(page, "generateRun")->isVisible());
    QVERIFY(!page.refusal().isEmpty());
}

// The QA's steps: the Image tab once (its image stays in the spec), then the Text tab read by the
// built-in model. The page offers its controls: the image path says nothing of the text's model.
void TestGeneratePage::aTextModelAfterAnImageGetsTheControls()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window, QSize(1600, 1000)));
    auto* tabs = child<QTabWidget>(window, "inputTabs");
    tabs->setCurrentIndex(1);  // Image: a sample photo's patches
    QVERIFY(waitForResult(window));
    tabs->setCurrentIndex(0);  // Text, read by the built-in KJV Llama
    QVERIFY(waitForResult(window));
    const InputSpec& input = window.controller().spec().input;
    QCOMPARE(input.kind, InputKind::Model);
    QVERIFY(!input.imagePath.isEmpty());
    window.showPage(MainWindow::GeneratePage);
    GenerationPage& page = *window.generationPage();
    QVERIFY(page.refusal().isEmpty());
    QVERIFY(!child<QLabel>(page, "generateMessage")->isVisible());
    QVERIFY(child<QPushButton>(page, "generateRun")->isVisible());
    QVERIFY(child<QPushButton>(page, "generateRun")->isEnabled());
    child<QSpinBox>(page, "generateTokens")->setValue(3);
    QVERIFY(clickGenerate(page));
    QCOMPARE(page.steps().size(), std::size_t(3));
}

// A byte-level BPE splits a character's UTF-8 bytes over tokens (the built-in GPT-2's "é" and
// "日"): the continuation's text is decoded whole, never a token at a time, so that wherever the
// continuations part, the agreed part and the rest read the text without U+FFFD; a character
// split between the prompt and the continuation belongs to the continuation.
void TestGeneratePage::aCharacterSplitOverTokensReadsWhole()
{
    const auto model = loadModel(kKjvGpt2);
    const TextTokenizer& tokenizer = model->tokenizer();
    const QString added = QStringLiteral(" seven\u00e9 \u65e5 days");
    const std::vector<int> prompt = tokenizer.encode(QStringLiteral("And God said"));
    const std::vector<int> ids = tokenizer.encode(added);
    QCOMPARE(tokenizer.decode(ids), added);
    bool split = false;  // some cut falls inside a character
    for (std::size_t agree = 0; agree <= ids.size(); ++agree) {
        const ContinuationText text = continuationText(tokenizer, prompt, ids, int(agree));
        QCOMPARE(text.agreed + text.rest, added);
        QVERIFY(!text.agreed.contains(QChar(0xfffd)) && !text.rest.contains(QChar(0xfffd)));
        split = split || tokenizer.decode({ids.begin(), ids.begin() + std::ptrdiff_t(agree)})
                             .contains(QChar(0xfffd));
    }
    QVERIFY(split);

    // The prompt ends within "日": its last bytes begin the continuation.
    const std::vector<int> both = tokenizer.encode(QStringLiteral("And God said \u65e5"));
    const std::vector<int> head(both.begin(), both.end() - 1);
    QVERIFY(tokenizer.decode(head).endsWith(QChar(0xfffd)));
    const ContinuationText text = continuationText(tokenizer, head, {both.back()}, 0);
    QCOMPARE(text.agreed, QString());
    QCOMPARE(text.rest, QStringLiteral(" \u65e5").right(text.rest.size()));
    QVERIFY(text.rest.endsWith(QChar(0x65e5)));
}

// More tokens than the model's positions leave after the prompt: the run fails with core's
// message in the status line, nothing is shown, and the page generates again.
void TestGeneratePage::aRunThatCannotStartSaysWhy()
{
    GenerationPage page;
    page.show();
    showExperiment(page, modelInputSpec(kKjvGpt2, kPrompt));
    child<QSpinBox>(page, "generateTokens")->setValue(200);
    QVERIFY(clickGenerate(page));
    const QString status = child<QLabel>(page, "generateStatus")->text();
    QVERIFY2(status.contains("Could not generate") && status.contains("128 positions"),
             qPrintable(status));
    QVERIFY(page.steps().empty());
    QVERIFY(!child<QPushButton>(page, "generateExportRun")->isEnabled());
    child<QSpinBox>(page, "generateTokens")->setValue(3);
    QVERIFY(clickGenerate(page));
    QCOMPARE(int(page.steps().size()), 3);
}

// Export run writes tokens.json exactly as `generate` writes it for the same run (the tokens,
// the method, the first divergence) and steps.csv with its header and a line per token.
void TestGeneratePage::theRunExportsAsTheCommandWritesIt()
{
    GenerationPage page;
    page.show();
    const ExperimentSpec spec = modelInputSpec(kTinyLlama, kPrompt, "elu");
    showExperiment(page, spec);
    child<QSpinBox>(page, "generateTokens")->setValue(12);
    QVERIFY(clickGenerate(page));
    const QString folder = m_dir.filePath(QStringLiteral("run"));
    page.exportRun(folder);

    GenerationSpec generation;
    generation.prompt = kPrompt;
    generation.tokens = 12;
    generation.approximation = spec.approximation;
    const auto model = loadModel(kTinyLlama);
    Generation run(model, generation);
    const GenerationResult expected = runGeneration(run);
    QFile tokens(folder + QStringLiteral("/tokens.json"));
    QVERIFY(tokens.open(QIODevice::ReadOnly));
    QCOMPARE(tokens.readAll(), generationTokensJson(expected, *model, generation));
    QFile steps(folder + QStringLiteral("/steps.csv"));
    QVERIFY(steps.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = steps.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 13);
    QCOMPARE(lines.front(), generationStepsCsv(GenerationResult()).trimmed());
}

// In the window: with "Follow a head" on layer 1, head 2, the Stepper page follows that head of
// the generation: its strip holds every token the approximate run read (P - 1 + N), and at a step
// the numbers on screen are those of the state the generation reported there (|S_i|_F and the
// denominator phi(q_i)^T z_i, run here through core).
void TestGeneratePage::theStepperFollowsTheChosenHead()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window, QSize(1600, 1000)));
    const ExperimentSpec spec = modelInputSpec(kKjvGpt2, kPrompt, "favor-positive", 32);
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    window.showPage(MainWindow::GeneratePage);
    GenerationPage& page = *window.generationPage();
    QVERIFY(page.isVisible());
    child<QSpinBox>(page, "generateTokens")->setValue(10);
    clickCheckBox(child<QCheckBox>(page, "generateFollow"));
    child<QSpinBox>(page, "generateFollowLayer")->setValue(1);
    child<QSpinBox>(page, "generateFollowHead")->setValue(2);
    QVERIFY(clickGenerate(page));
    StepperView* stepper = window.stepperView();
    QVERIFY(stepper->isFollowing());
    QTest::mouseClick(child<QPushButton>(page, "generateShowStepper"), Qt::LeftButton);
    QCOMPARE(window.currentPage(), MainWindow::StepperPage);

    const GenerationResult expected = coreRun(window.controller().spec(), 10, 1, 2);
    const int read = int(expected.promptIds.size()) - 1 + 10;
    QCOMPARE(stepper->length(), read);
    QCOMPARE(stepper->position(), read - 1);           // it kept up with the generation
    const int t = int(expected.promptIds.size()) + 3;  // step 4 of the continuation
    stepper->setPosition(t);
    const FollowedHead& head = *expected.steps[4].followed;
    QCOMPARE(child<QLabel>(*stepper, "stateNorm")->text(),
             stepper::displayNumber(head.state.stableNorm()));
    QCOMPARE(child<QLabel>(*stepper, "denominator")->text(),
             stepper::displayNumber(head.denominator));
    QVERIFY(child<QWidget>(*stepper, "stepperFollowBar")->isVisible());
    QTest::qWait(200);  // the page arranges its panels once shown
    keepGrab(window.grab().toImage(), QStringLiteral("stepper-following.png"));
    QVERIFY(child<QLabel>(*stepper, "agreementLine")->text().contains("layer 1, head 2"));

    // Stop following: the page shows the window's experiment again.
    QTest::mouseClick(child<QToolButton>(*stepper, "stopFollowing"), Qt::LeftButton);
    QVERIFY(!stepper->isFollowing());
    QTRY_VERIFY_WITH_TIMEOUT(stepper->length() == resultOf(window).labels.size(), kTimeoutMs);
}

// The page's controls go into the session and come back; a session that showed a generation
// generates it again when its page is shown.
void TestGeneratePage::theStateComesBackFromASession()
{
    const QString path = m_dir.filePath(QStringLiteral("generate.attnlab"));
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window));
        window.setSpec(modelInputSpec(kKjvGpt2, kPrompt, "elu"));
        QVERIFY(waitForResult(window));
        window.showPage(MainWindow::GeneratePage);
        GenerationPage& page = *window.generationPage();
        child<QPlainTextEdit>(page, "generatePrompt")->setPlainText(QStringLiteral("In the"));
        child<QSpinBox>(page, "generateTokens")->setValue(7);
        for (QAction* action : child<QPushButton>(page, "generateLayers")->menu()->actions())
            if (action->data().isValid() && action->data().toInt() == 2)
                action->trigger();
        clickCheckBox(child<QCheckBox>(page, "generateFollow"));
        child<QSpinBox>(page, "generateFollowLayer")->setValue(2);
        QVERIFY(clickGenerate(page));
        QVERIFY(window.saveSession(path));
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject saved =
        QJsonDocument::fromJson(file.readAll()).object()["view"].toObject()["generate"].toObject();
    QCOMPARE(saved["prompt"].toString(), QStringLiteral("In the"));
    QCOMPARE(saved["layers"].toArray(), QJsonArray{2});
    QVERIFY(saved["generated"].toBool());

    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    QVERIFY(window.openSession(path));
    QVERIFY(waitForResult(window));
    QCOMPARE(window.currentPage(), MainWindow::GeneratePage);
    GenerationPage& page = *window.generationPage();
    const GenerationPageState state = page.state();
    QCOMPARE(state.prompt.value_or(QString()), QStringLiteral("In the"));
    QCOMPARE(state.tokens, 7);
    QCOMPARE(state.replacedLayers, std::vector<int>{2});
    QVERIFY(state.followed && state.followed->first == 2);
    QTRY_VERIFY_WITH_TIMEOUT(page.steps().size() == 7 && !page.isBusy(), kTimeoutMs);
}

void TestGeneratePage::thePageGrabsWholeAtTwoSizes_data()
{
    QTest::addColumn<QSize>("size");
    QTest::newRow("1600x1000") << QSize(1600, 1000);
    QTest::newRow("1280x800") << QSize(1280, 800);
}

// The window on the Generate page after a run: the charts are drawn (many colours), the summary
// is not cut (its label is as tall as its text needs), the continuations' texts are there and
// whole, the window is as large as asked (the page does not widen it) and the page's tab is in
// view.
void TestGeneratePage::thePageGrabsWholeAtTwoSizes()
{
    QFETCH(QSize, size);
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window, size));
    window.setSpec(modelInputSpec(kKjvGpt2, kPrompt, "favor-positive", 64));
    QVERIFY(waitForResult(window));
    window.showPage(MainWindow::GeneratePage);
    GenerationPage& page = *window.generationPage();
    child<QSpinBox>(page, "generateTokens")->setValue(48);
    QVERIFY(clickGenerate(page));
    QTest::qWait(100);
    QCOMPARE(window.size(), size);
    const QImage grab = window.grab().toImage();
    keepGrab(grab, QStringLiteral("generate-%1x%2.png").arg(size.width()).arg(size.height()));
    for (const GenerationChartKind kind :
         {GenerationChartKind::Kl, GenerationChartKind::Cost, GenerationChartKind::Memory}) {
        GenerationChart* chart = page.chart(kind);
        if (auto* tabs = page.findChild<QTabWidget*>(QStringLiteral("generateTabs"));
            tabs->isVisible()) {  // a narrow page: a tab each
            tabs->setCurrentWidget(chart);
            QTest::qWait(50);
        }
        QVERIFY(chart->isVisible());
        QVERIFY2(chart->height() >= 150, qPrintable(QString::number(chart->height())));
        const QImage image = chart->grab().toImage();
        keepGrab(image, QStringLiteral("generate-%1x%2-%3.png")
                            .arg(size.width())
                            .arg(size.height())
                            .arg(chart->objectName()));
        QVERIFY(colourCount(image) > 20);
    }
    auto* summary = child<QLabel>(page, "generateSummary");
    QVERIFY2(summary->height() >= summary->heightForWidth(summary->width()),
             qPrintable(QStringLiteral("the summary is %1 high of %2")
                            .arg(summary->height())
                            .arg(summary->heightForWidth(summary->width()))));
    // The continuations' texts are there, whole: at five lines each they scrolled.
    for (const char* name : {"generateExactText", "generateApproxText"}) {
        const auto* text = child<QTextEdit>(page, name);
        QVERIFY(text->toPlainText().size() > 60);
        QVERIFY2(text->verticalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("%1 scrolls %2 pixels in %3")
                                .arg(name)
                                .arg(text->verticalScrollBar()->maximum())
                                .arg(text->height())));
    }
    auto* pages = window.findChild<QTabWidget*>(QStringLiteral("pages"));
    QVERIFY(pages->tabBar()->rect().contains(pages->tabBar()->tabRect(MainWindow::GeneratePage)));
}

// Property: on a page too short for a column of three charts beside the table (presentation mode
// at 1280 x 720: about 1000 x 560 for the page), each chart shown gets a plot at least 100 pixels
// tall with its title above and its legend below, inside the chart: squeezed into a column, the
// titles ran into the plots and the legends were cut off.
void TestGeneratePage::aShortPageGivesEachChartItsHeight()
{
    GenerationPage page;
    page.resize(1000, 560);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    showExperiment(page, modelInputSpec(kKjvGpt2, kPrompt, "favor-positive", 64));
    child<QSpinBox>(page, "generateTokens")->setValue(8);
    QVERIFY(clickGenerate(page));
    auto* tabs = page.findChild<QTabWidget*>(QStringLiteral("generateTabs"));
    for (const GenerationChartKind kind :
         {GenerationChartKind::Kl, GenerationChartKind::Cost, GenerationChartKind::Memory}) {
        GenerationChart* chart = page.chart(kind);
        if (tabs->isVisible())
            tabs->setCurrentWidget(chart);
        QTest::qWait(50);
        QVERIFY(chart->isVisible());
        chart->replot();
        const QRect plot = chart->axisRect()->rect();
        QVERIFY2(plot.height() >= 100, qPrintable(QStringLiteral("%1: a plot %2 pixels tall")
                                                      .arg(chart->objectName())
                                                      .arg(plot.height())));
        const QRect legend = chart->legend->outerRect();
        QVERIFY2(legend.top() >= plot.bottom() && legend.bottom() <= chart->height(),
                 qPrintable(chart->objectName()));
    }
}

// Property: before any run a chart shows no axes (they had made-up ranges, 0 to 5) but its title
// and, in the plot's place, what will be there; the first steps bring the axes back.
void TestGeneratePage::anEmptyChartSaysWhatWillBeThere()
{
    for (const GenerationChartKind kind :
         {GenerationChartKind::Kl, GenerationChartKind::Cost, GenerationChartKind::Memory}) {
        GenerationChart chart(kind);
        chart.resize(700, 400);
        chart.replot();
        QVERIFY(!chart.xAxis->visible() && !chart.yAxis->visible());
        QVERIFY(!chart.xAxis->grid()->visible() && !chart.yAxis->grid()->visible());
        QVERIFY(!chart.title().isEmpty());
        QString hint;
        for (int i = 0; i < chart.itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(chart.item(i)); text && text->visible())
                hint += text->text();
        QVERIFY2(hint.contains(QStringLiteral("appears here")), qPrintable(hint));

        std::vector<GenerationStep> steps(3);
        for (int i = 0; i < 3; ++i) {
            steps[std::size_t(i)].position = 10 + i;
            steps[std::size_t(i)].index = i;
            steps[std::size_t(i)].kl = 0.1 * (i + 1);
            steps[std::size_t(i)].sameToken = true;
            steps[std::size_t(i)].exactSeconds = steps[std::size_t(i)].approxSeconds = 1e-3;
            steps[std::size_t(i)].cacheBytes = steps[std::size_t(i)].stateBytes = 4096;
        }
        chart.setSteps(steps, Method::FavorPositive);
        QVERIFY(chart.xAxis->visible() && chart.yAxis->visible());
        for (int i = 0; i < chart.itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(chart.item(i)))
                QVERIFY(!text->text().contains(QStringLiteral("appears here")));
    }
}

QTEST_MAIN(TestGeneratePage)
#include "test_generate_page.moc"

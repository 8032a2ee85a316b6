// The Input dock driven in the real window, offscreen: a round trip through another tab comes
// back to the tab's model (its causal mask leaving and returning with it, Inside the model hiding
// its controls meanwhile), an image file that does not decode is refused before it enters the
// image list, and a newer request stops a slow input's build.

#include "inputs/builtin_models.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "model/language_model.h"
#include "model/vit_model.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/experiment/input_panel.h"
#include "ui/window/main_window.h"
#include "ui/model/downstream_panel.h"
#include "model_support.h"
#include "window_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

class TestInputDock : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        startAsFirstRun();
        QVERIFY(m_dir.isValid());
    }
    void aTabRoundTripKeepsTheModel();
    void aBadImageFileLeavesTheImageListAsItWas();
    void greyedFieldsShowTheValuesInForce();
    void aModelThatCannotBeReadIsTakenBack();
    void aModelJoinsTheRecentModelsOnceRead();
    void aTooLongTextNamesTheKeepLastBox();
    void aNewerRequestStopsDrawingTheProjections();

private:
    QTemporaryDir m_dir;
};

// Text (read by the built-in model) -> Random -> Text reads the text with the built-in model
// again, as before the round trip; while the input has no model, Inside the model shows its
// message and none of its controls (no Export CSV... for rows of another input).
void TestInputDock::aTabRoundTripKeepsTheModel()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    QCOMPARE(window.controller().spec().input.kind, InputKind::Model);
    const QString model = window.controller().spec().input.modelPath;
    auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("inputTabs"));
    auto* reader = window.findChild<QComboBox*>(QStringLiteral("reader"));
    QVERIFY(tabs && reader);
    const QString readerText = reader->currentText();

    tabs->setCurrentIndex(int(InputKind::Random));
    QTRY_COMPARE_WITH_TIMEOUT(resultOf(window).spec.input.kind, InputKind::Random,
                              kResultTimeoutMs);
    // The model's causal mask went with the model: random rows (and patches) are not causal.
    QVERIFY(!resultOf(window).spec.causal);
    window.showPage(MainWindow::ModelPage);
    DownstreamPanel* downstream = window.downstreamPanel();
    for (QPushButton* button : downstream->findChildren<QPushButton*>())
        QVERIFY2(!button->isVisibleTo(downstream), qPrintable(button->text()));

    tabs->setCurrentIndex(0);
    QTRY_COMPARE_WITH_TIMEOUT(resultOf(window).spec.input.kind, InputKind::Model, kResultTimeoutMs);
    QCOMPARE(resultOf(window).spec.input.modelPath, model);
    QVERIFY(resultOf(window).spec.causal);
    QCOMPARE(reader->currentText(), readerText);
    for (QPushButton* button : downstream->findChildren<QPushButton*>())
        QVERIFY2(button->isVisibleTo(downstream), qPrintable(button->text()));
}

// Opening an image file that does not decode gives the message naming it and changes neither
// the Image tab's list (which named the bad file while the maps showed the previous image) nor
// the spec.
void TestInputDock::aBadImageFileLeavesTheImageListAsItWas()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    auto* panel = window.findChild<InputPanel*>();
    auto* image = window.findChild<QComboBox*>(QStringLiteral("image"));
    QVERIFY(panel && image);
    const QString shown = image->currentText();
    const int count = image->count();
    const ExperimentSpec before = window.controller().spec();
    const QString path = m_dir.filePath(QStringLiteral("not-an-image.png"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a PNG");
    file.close();
    const QString message = panel->openImage(path);
    QVERIFY2(message.contains(QStringLiteral("not-an-image.png")), qPrintable(message));
    QCOMPARE(image->currentText(), shown);
    QCOMPARE(image->count(), count);
    QVERIFY(window.controller().spec().toJson() == before.toJson());
}

// Property: a field greyed out because the input sets its value shows that value, or a dash where
// only the files know it, never the spec's value of before: d and H of Q, K, V files (16 and 1
// here, the spec saying 64 and 2), the built-in Llama's heads (4, the spec saying 2), the
// built-in ViT's patch and image sizes (4 and 28, the spec saying 16 and 224). A list of choices
// says what decides in its place (the model's tokenizer, the files' Q, K, V), and the model's
// positional encoding is its own (the spec's choices for plain text were shown). The input seed,
// which nothing of a model's or of files draws from, shows a dash (it showed the spec's seed).
void TestInputDock::greyedFieldsShowTheValuesInForce()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    auto* headDim = window.findChild<QSpinBox*>(QStringLiteral("headDim"));
    auto* heads = window.findChild<QSpinBox*>(QStringLiteral("heads"));
    auto* patch = window.findChild<QSpinBox*>(QStringLiteral("patchSize"));
    auto* imageSize = window.findChild<QSpinBox*>(QStringLiteral("imageSize"));
    auto* seed = window.findChild<QSpinBox*>(QStringLiteral("inputSeed"));
    QVERIFY(headDim && heads && patch && imageSize && seed);

    auto* tokens = window.findChild<QComboBox*>(QStringLiteral("tokens"));
    auto* projection = window.findChild<QComboBox*>(QStringLiteral("inputProjection"));
    auto* positional = window.findChild<QCheckBox*>(QStringLiteral("positionalEncoding"));
    QVERIFY(tokens);
    QVERIFY(projection);
    QVERIFY(positional);

    ExperimentSpec spec = window.controller().spec();
    spec.input.heads = 2;
    spec.input.tokenMode = TokenMode::Characters;  // not what the model does: not shown
    spec.input.positionalEncoding = false;
    spec.input.seed = 7;
    window.setSpec(spec);
    QVERIFY(!heads->isEnabled());
    QCOMPARE(heads->value(), languageModelInfo(builtinModelFolder()).heads);
    // The model's tokenizer, positions and weights, not the spec's choices for plain text.
    QVERIFY(!tokens->isEnabled() && tokens->currentIndex() == -1);
    QVERIFY2(tokens->placeholderText().contains(QStringLiteral("tokenizer")),
             qPrintable(tokens->placeholderText()));
    QVERIFY(!positional->isEnabled() && positional->isChecked());
    QVERIFY2(positional->text().contains(QStringLiteral("model's own")),
             qPrintable(positional->text()));
    QVERIFY(!projection->isEnabled() && projection->currentIndex() == -1);
    QVERIFY2(projection->placeholderText().contains(QStringLiteral("model's weights")),
             qPrintable(projection->placeholderText()));
    QVERIFY(!seed->isEnabled());
    QCOMPARE(seed->text(), QStringLiteral("\u2014"));

    const std::vector<double> values(5 * 16, 0.25);
    spec = ExperimentSpec();
    spec.input.kind = InputKind::Files;
    spec.input.queryPath = m_dir.filePath(QStringLiteral("q16.npy"));
    spec.input.keyPath = spec.input.queryPath;
    saveNpy(spec.input.queryPath, values.data(), {5, 16}, NpyDtype::Float64);
    spec.input.headDim = 64;
    spec.input.heads = 2;
    spec.input.seed = 7;
    window.setSpec(spec);
    for (QSpinBox* box : {headDim, heads, seed}) {
        QVERIFY(!box->isEnabled());
        QCOMPARE(box->text(), QStringLiteral("\u2014"));
    }
    QVERIFY(!projection->isEnabled() && projection->currentIndex() == -1);
    QVERIFY2(projection->placeholderText().contains(QStringLiteral("files")),
             qPrintable(projection->placeholderText()));

    spec = ExperimentSpec();
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = QString::fromLatin1(kBuiltinVitModel);
    const QString vitFolder = builtinModelFolder(spec.input.modelPath);
    spec.input.imagePath = QDir(vitFolder + QStringLiteral("/samples"))
                               .entryInfoList({QStringLiteral("*.png")})
                               .value(0)
                               .absoluteFilePath();
    spec.input.patchSize = 16;
    spec.input.imageSize = 224;
    window.setSpec(spec);
    const VitConfig vit = VitConfig::fromJson(vitFolder + QStringLiteral("/config.json"));
    QVERIFY(!patch->isEnabled() && !imageSize->isEnabled());
    QCOMPARE(patch->value(), vit.patchHeight);
    QCOMPARE(imageSize->value(), vit.imageHeight);
    QCOMPARE(headDim->value(), vit.headDim());
    QVERIFY(waitForResult(window));

    // Patch embeddings again: the boxes are the user's, with the spec's values.
    spec.input.kind = InputKind::Image;
    spec.input.seed = 7;
    window.setSpec(spec);
    QVERIFY(patch->isEnabled() && imageSize->isEnabled());
    QCOMPARE(patch->text(), QStringLiteral("16"));
    QCOMPARE(imageSize->value(), 224);
    QVERIFY(projection->isEnabled());
    QCOMPARE(projection->currentIndex(), int(spec.input.projection));
    QVERIFY(positional->isEnabled());
    QCOMPARE(positional->text(), QStringLiteral("Positional encoding"));
    QVERIFY(seed->isEnabled());
    QCOMPARE(seed->value(), 7);
}

// A model chosen in "Read by" that cannot be read (its folder holds a config but no weights) is
// taken back: the list shows the model in force again, no step is left to redo, and the banner
// says which model could not be opened until it is closed.
void TestInputDock::aModelThatCannotBeReadIsTakenBack()
{
    const QString broken = m_dir.filePath(QStringLiteral("no-weights"));
    QVERIFY(QDir().mkpath(broken));
    QVERIFY(QFile::copy(builtinModelFolder() + QStringLiteral("/config.json"),
                        broken + QStringLiteral("/config.json")));
    QSettings().setValue(QStringLiteral("recentModels"), QStringList{broken});
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    auto* reader = window.findChild<QComboBox*>(QStringLiteral("reader"));
    auto* undo = window.findChild<QUndoStack*>();
    QVERIFY(reader && undo);
    const QString inForce = reader->currentData().toString();
    const int steps = undo->count();
    const int index = reader->findData(broken);
    QVERIFY(index >= 0);
    QSignalSpy failed(&window.controller(), &ExperimentController::failed);
    reader->setCurrentIndex(index);
    emit reader->activated(index);  // as a user's choice in the list
    QVERIFY(failed.wait(kResultTimeoutMs));
    QCOMPARE(reader->currentData().toString(), inForce);
    QCOMPARE(window.controller().spec().input.modelPath, inForce);
    QCOMPARE(undo->count(), steps);
    QVERIFY(!undo->canRedo());
    QVERIFY2(window.errorMessage().startsWith(QStringLiteral("Could not open this: ")) &&
                 window.errorMessage().contains(broken),
             qPrintable(window.errorMessage()));
    // The banner stays through the result of the input in force.
    QVERIFY(waitForResult(window));
    QVERIFY2(window.errorMessage().contains(broken), qPrintable(window.errorMessage()));
    QSettings().remove(QStringLiteral("recentModels"));
}

// A model opened through "Open Model..." joins the recent models once the window has read it;
// one that cannot be read (a config without weights) does not, and is not offered again. Both
// were kept as soon as they were chosen in the file dialog.
void TestInputDock::aModelJoinsTheRecentModelsOnceRead()
{
    const QString broken = m_dir.filePath(QStringLiteral("weightless"));
    QVERIFY(QDir().mkpath(broken));
    QVERIFY(QFile::copy(builtinModelFolder() + QStringLiteral("/config.json"),
                        broken + QStringLiteral("/config.json")));
    const QString good = ggufFixture(QStringLiteral("llama-q8_0"));
    QSettings().remove(QStringLiteral("recentModels"));
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    ExperimentSpec spec = window.controller().spec();
    spec.input.text = QStringLiteral("In the beginning");  // the fixture reads 64 tokens
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    auto* reader = window.findChild<QComboBox*>(QStringLiteral("reader"));
    QVERIFY(reader);
    const auto openModel = [reader](const QString& path) {
        acceptFileDialogWith(path);
        const int open = reader->findData(QStringLiteral("open"));
        reader->setCurrentIndex(open);
        emit reader->activated(open);  // as a user's choice in the list
    };
    const auto recent = [] {
        return QSettings().value(QStringLiteral("recentModels")).toStringList();
    };

    QSignalSpy failed(&window.controller(), &ExperimentController::failed);
    openModel(broken + QStringLiteral("/config.json"));
    QVERIFY(failed.count() > 0 || failed.wait(kResultTimeoutMs));
    QVERIFY2(window.errorMessage().contains(broken), qPrintable(window.errorMessage()));
    QVERIFY(waitForResult(window));  // the model in force again
    QVERIFY(!recent().contains(broken));
    QCOMPARE(reader->findData(broken), -1);

    QSignalSpy shown(&window, &MainWindow::resultShown);
    openModel(good);
    QVERIFY2(shown.wait(kResultTimeoutMs), qPrintable(window.errorMessage()));
    QCOMPARE(window.controller().current().result->spec.input.modelPath, good);
    QCOMPARE(recent(), QStringList{good});
    QSettings().remove(QStringLiteral("recentModels"));
}

// A text longer than the model reads is refused naming the window's way around it, the Input
// dock's "Keep the last tokens" box (not the command line's option); ticking it computes the
// text's last tokens, as many as the model reads.
void TestInputDock::aTooLongTextNamesTheKeepLastBox()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    const int positions = languageModelInfo(builtinModelFolder()).positions;
    ExperimentSpec spec = window.controller().spec();
    spec.input.text = QStringLiteral("And God said ").repeated(positions);
    window.setSpec(spec);
    QSignalSpy failed(&window.controller(), &ExperimentController::failed);
    QVERIFY(failed.wait(kResultTimeoutMs));
    const QString message = window.errorMessage();
    QVERIFY2(message.contains(QStringLiteral("Keep the last tokens")) &&
                 !message.contains(QStringLiteral("--keep-last")),
             qPrintable(message));
    auto* keepLast = window.findChild<QCheckBox*>(QStringLiteral("keepLastTokens"));
    QVERIFY(keepLast && keepLast->isEnabled() && !keepLast->isChecked());
    keepLast->setChecked(true);
    QVERIFY(waitForResult(window));
    QVERIFY(resultOf(window).spec.input.keepLastTokens);
    QCOMPARE(int(resultOf(window).labels.size()), positions);
}

// Text of 64 heads of d = 512 draws 3.2 billion projection entries (a minute and more on a
// 2-core machine): a newer request stops the draw, and its result comes at once. The draw could
// not stop, and the window showed nothing new until it ended (it waited for it when closed too).
void TestInputDock::aNewerRequestStopsDrawingTheProjections()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    ExperimentSpec spec = window.controller().spec();
    spec.input.kind = InputKind::Text;
    spec.input.text = QStringLiteral("the cat sat");
    spec.input.heads = 64;
    spec.input.headDim = 512;
    window.setSpec(spec);
    QTest::qWait(300);
    QVERIFY(window.controller().isBusy());
    spec.input.heads = 1;
    spec.input.headDim = 16;
    QSignalSpy shown(&window, &MainWindow::resultShown);
    window.setSpec(spec);
    QVERIFY(shown.wait(10'000));
    QCOMPARE(resultOf(window).spec.input.heads, 1);
}

QTEST_MAIN(TestInputDock)
#include "test_input_dock.moc"

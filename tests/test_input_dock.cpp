// The Input dock driven in the real window, offscreen: a round trip through another tab comes
// back to the tab's model (its causal mask leaving and returning with it, Inside the model hiding
// its controls meanwhile), and an image file that does not decode is refused before it enters the
// image list.

#include "ui/experiment/experiment_controller.h"
#include "ui/experiment/input_panel.h"
#include "ui/window/main_window.h"
#include "ui/model/downstream_panel.h"
#include "window_support.h"

#include <QComboBox>
#include <QFile>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

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

QTEST_MAIN(TestInputDock)
#include "test_input_dock.moc"

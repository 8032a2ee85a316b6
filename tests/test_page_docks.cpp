// The Metrics dock on the Timing page (PageDocks): hidden while it is shown, which it says nothing
// about, and back on the other pages, through presentation mode and a close; the docks at the left
// stay, and the tabs with them.

#include "ui/timing/timing_panel.h"
#include "window_support.h"

#include <QDockWidget>

using namespace attnlab;
using namespace attnlab::ui;

namespace {

// The names of the window's docks that are not hidden, sorted.
QStringList shownDocks(MainWindow& window)
{
    QStringList names;
    for (QDockWidget* dock : window.findChildren<QDockWidget*>())
        if (!dock->isHidden())
            names.append(dock->objectName());
    names.sort();
    return names;
}

const QStringList kAllDocks{QStringLiteral("inputDock"), QStringLiteral("methodDock"),
                            QStringLiteral("metricsDock")};
const QStringList kLeftDocks{QStringLiteral("inputDock"), QStringLiteral("methodDock")};

}  // namespace

class TestPageDocks : public QObject {
    Q_OBJECT

private slots:
    void init() { test::startAsFirstRun(); }
    void theTimingPageHidesTheDocksAndGivesThemBack();
    void presentationModeLeavesThePagesDocksAsThePageWants();
    void aCloseOnTheTimingPageKeepsTheDocksForTheNextStart();
};

// Property: the Timing page hides the Metrics dock and takes its room, the tabs staying where
// they are; another page shows it again, but not once the user closed it; shown by the user on
// the Timing page, it stays there.
void TestPageDocks::theTimingPageHidesTheDocksAndGivesThemBack()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(test::showAndWait(window, QSize(1280, 800)));
    QCOMPARE(shownDocks(window), kAllDocks);
    auto* metrics = window.findChild<QDockWidget*>(QStringLiteral("metricsDock"));
    const int besideDocks = window.timingPanel()->width();

    window.showPage(MainWindow::TimingPage);
    QCOMPARE(shownDocks(window), kLeftDocks);
    QTRY_VERIFY2(window.timingPanel()->width() > besideDocks + metrics->width() * 9 / 10,
                 qPrintable(QString::number(window.timingPanel()->width())));
    window.showPage(MainWindow::MatricesPage);
    QCOMPARE(shownDocks(window), kAllDocks);

    metrics->close();
    window.showPage(MainWindow::TimingPage);
    window.showPage(MainWindow::StepperPage);
    QCOMPARE(shownDocks(window), kLeftDocks);

    window.showPage(MainWindow::TimingPage);
    metrics->show();
    window.showPage(MainWindow::MatricesPage);
    window.showPage(MainWindow::TimingPage);  // shown by the user, hidden for the page again
    QCOMPARE(shownDocks(window), kLeftDocks);
    metrics->show();
    QCOMPARE(shownDocks(window), kAllDocks);  // and shown by the user again: it stays
}

// Property: presentation mode, which hides every dock and restores the layout it found when it
// ends, leaves the page shown then with the docks it wants: no Metrics dock on the Timing page
// (entered there or on another page), all again on the matrices.
void TestPageDocks::presentationModeLeavesThePagesDocksAsThePageWants()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(test::showAndWait(window, QSize(1280, 800)));
    const auto present = [&](bool on) {
        window.setPresentationMode(on, PresentationMode::Placement::KeepGeometry);
    };

    // Entered on the matrices, left on the Timing page: its restored layout had the docks.
    present(true);
    window.showPage(MainWindow::TimingPage);
    QCOMPARE(shownDocks(window), QStringList());
    present(false);
    QCOMPARE(shownDocks(window), kLeftDocks);
    window.showPage(MainWindow::MatricesPage);
    QCOMPARE(shownDocks(window), kAllDocks);

    // Entered on the Timing page, left on the matrices: its restored layout had none.
    window.showPage(MainWindow::TimingPage);
    present(true);
    window.showPage(MainWindow::MatricesPage);
    QCOMPARE(shownDocks(window), QStringList());  // presenting: no dock
    present(false);
    QCOMPARE(shownDocks(window), kAllDocks);
}

// Property: closed on the Timing page, the window saves a layout with its Metrics dock: the next
// start shows it on the matrices.
void TestPageDocks::aCloseOnTheTimingPageKeepsTheDocksForTheNextStart()
{
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(test::showAndWait(window, QSize(1280, 800)));
        window.showPage(MainWindow::TimingPage);
        QCOMPARE(shownDocks(window), kLeftDocks);
        QVERIFY(window.close());
    }
    MainWindow window(MainWindow::Start::OpenFile);
    QVERIFY(test::showAndWait(window, QSize(1280, 800)));
    QCOMPARE(window.currentPage(), MainWindow::MatricesPage);
    QCOMPARE(shownDocks(window), kAllDocks);
}

QTEST_MAIN(TestPageDocks)
#include "test_page_docks.moc"

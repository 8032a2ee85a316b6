// The window on a 1280 x 800 screen (the offscreen platform given one screen of that size, as a
// lecturer's laptop has): a first start and a restart after a larger screen fit it whole, the
// page tabs all show, presentation mode draws each scenario's maps readably, and on a 1280 x 720
// projector fits with every scenario's explanation readable.

#include "ui/window/lecture_controls.h"
#include "ui/window/main_window.h"
#include "ui/errors/error_analysis_panel.h"
#include "ui/errors/error_chart.h"
#include "ui/generation/generation_page.h"
#include "ui/model/downstream_panel.h"
#include "ui/model/head_grid_panel.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/stepper/stepper_view.h"
#include "ui/sweeps/sweep_page.h"
#include "window_support.h"
#include "chart_support.h"
#include "ui/lecture/presentation.h"
#include "ui/timing/timing_chart.h"
#include "ui/timing/timing_panel.h"

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QPushButton>
#include <QResizeEvent>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTest>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

// A timing sweep by hand: exact streaming (c L^2), FAVOR+ positive (both causalities) and elu+1
// (c L) at L = 128 to 16,384, one point an octave.
SweepResult timingResult()
{
    SweepResult result;
    result.spec.methods = {{Method::ExactStreaming, false},
                           {Method::FavorPositive, false},
                           {Method::FavorPositive, true},
                           {Method::Elu, false}};
    result.spec.lengths = logSpacedLengths(128, 16384, 1);
    result.spec.headDim = 64;
    result.spec.features = 256;
    result.spec.repetitions = 1;
    for (const Eigen::Index length : result.spec.lengths) {
        for (const TimedMethod& method : result.spec.methods) {
            const double l = double(length);
            SweepPoint point;
            point.method = method;
            point.length = length;
            point.secondsMedian = point.secondsMin = point.secondsMax =
                isApproximation(method.algorithm) ? (method.causal ? 1.5e-6 : 1e-6) * l
                                                  : 2e-10 * l * l;
            point.workingSetBytes = workingSetBytes(method, length, 64, 256, 2);
            point.peakBytes = 1.1 * point.workingSetBytes;
            result.points.push_back(point);
        }
    }
    return result;
}

// The screen's available area holds the window, its frame included.
bool fitsTheScreen(const MainWindow& window)
{
    return window.screen()->availableGeometry().contains(window.frameGeometry());
}

QString describe(const MainWindow& window)
{
    const QRect frame = window.frameGeometry();
    const QRect available = window.screen()->availableGeometry();
    return QStringLiteral("window (%1, %2) %3 x %4 on a screen of %5 x %6")
        .arg(frame.x())
        .arg(frame.y())
        .arg(frame.width())
        .arg(frame.height())
        .arg(available.width())
        .arg(available.height());
}

// Shows the window and lets the docks follow their panels' layouts (100 ms); false when the window
// is not exposed.
bool showSettled(MainWindow& window)
{
    window.show();
    if (!QTest::qWaitForWindowExposed(&window))
        return false;
    QTest::qWait(100);
    return true;
}

// The widest the window has been since it was watched (its resize events): a page whose least
// width is more than the window's, even for a moment, makes the window wider, and it stays so.
class WidestWindow : public QObject {
public:
    explicit WidestWindow(QWidget* window) : m_widest(window->width())
    {
        window->installEventFilter(this);
    }
    int widest() const { return m_widest; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Resize)
            m_widest = std::max(m_widest, static_cast<QResizeEvent*>(event)->size().width());
        return QObject::eventFilter(watched, event);
    }

private:
    int m_widest;
};

// Whether the window's computation and every page's work (a survey, a comparison, a sweep, a
// generation, the Stepper's states) are done, none waiting to start.
bool allWorkDone(MainWindow& window)
{
    bool busy = window.controller().isBusy();
    for (const HeadGridPanel* page : window.findChildren<HeadGridPanel*>())
        busy = busy || page->isBusy();
    for (const DownstreamPanel* page : window.findChildren<DownstreamPanel*>())
        busy = busy || page->isBusy();
    for (const SweepPage* page : window.findChildren<SweepPage*>())
        busy = busy || page->isRunning();
    for (const GenerationPage* page : window.findChildren<GenerationPage*>())
        busy = busy || page->isBusy();
    for (const StepperView* page : window.findChildren<StepperView*>())
        busy = busy || page->isBusy();
    return !busy;
}

// Shows the window at `size` and waits up to 30 s for the work of its default example to be done;
// false when the window is not exposed or the work not done.
bool showIdle(MainWindow& window, QSize size)
{
    window.resize(size);
    return showSettled(window) &&
           QTest::qWaitFor([&window] { return allWorkDone(window); }, 30'000);
}

// After a session or scenario is opened: whether the work it starts is done within a minute (the
// pages start theirs when the window's result is shown, some after a delay), with the layouts
// following it.
bool allWorkDoneAfterOpening(MainWindow& window)
{
    QTest::qWait(300);
    const bool done = QTest::qWaitFor([&window] { return allWorkDone(window); }, 60'000);
    QTest::qWait(200);
    return done;
}

// A data row per *.attnlab file of `folder` (in the source tree), its path in column "file".
void addRowPerSessionFile(const QString& folder)
{
    QTest::addColumn<QString>("file");
    QDirIterator files(QStringLiteral(ATTNLAB_TEST_DATA "/../../") + folder,
                       {QStringLiteral("*.attnlab")}, QDir::Files);
    while (files.hasNext()) {
        const QString path = files.next();
        QTest::newRow(qPrintable(QFileInfo(path).fileName())) << path;
    }
}

// The first text of `table` (a heading or a cell, with its icon) wider than its column, with the
// widths; empty when every text fits.
QString cutTableText(const QTableWidget& table)
{
    const QHeaderView* header = table.horizontalHeader();
    const int icon = table.iconSize().isValid()
                         ? table.iconSize().width()
                         : table.style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, &table);
    for (int column = 0; column < table.columnCount(); ++column) {
        const int width = header->sectionSize(column);
        QStringList texts{table.horizontalHeaderItem(column)->text()};
        std::vector<int> needed{header->fontMetrics().horizontalAdvance(texts.front())};
        for (int row = 0; row < table.rowCount(); ++row) {
            const QTableWidgetItem* item = table.item(row, column);
            texts.append(item->text());
            needed.push_back(table.fontMetrics().horizontalAdvance(item->text()) +
                             (item->icon().isNull() ? 0 : icon));
        }
        for (int i = 0; i < texts.size(); ++i)
            if (needed[std::size_t(i)] > width)
                return QStringLiteral("\"%1\" needs %2 pixels, its column has %3")
                    .arg(texts[i])
                    .arg(needed[std::size_t(i)])
                    .arg(width);
    }
    return QString();
}

// The menu a push or tool button opens; null for any other button.
QMenu* menuOf(const QAbstractButton* button)
{
    if (const auto* push = qobject_cast<const QPushButton*>(button))
        return push->menu();
    if (const auto* tool = qobject_cast<const QToolButton*>(button))
        return tool->menu();
    return nullptr;
}

// `button` drawn as it is, but with `text` and `menu`.
QImage drawnWith(QAbstractButton* button, const QString& text, QMenu* menu)
{
    const QString shownText = button->text();
    QMenu* shownMenu = menuOf(button);
    const auto setMenu = [button](QMenu* to) {
        if (auto* push = qobject_cast<QPushButton*>(button))
            push->setMenu(to);
        else
            static_cast<QToolButton*>(button)->setMenu(to);
    };
    button->setText(text);
    setMenu(menu);
    QImage image(button->size(), QImage::Format_RGB32);
    button->render(&image);
    button->setText(shownText);
    setMenu(shownMenu);
    return image;
}

// The columns where `a` and `b` differ, as [first, last]; empty (first > last) where they do not.
std::pair<int, int> differingColumns(const QImage& a, const QImage& b)
{
    std::pair<int, int> columns{a.width(), -1};
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            if (a.pixel(x, y) != b.pixel(x, y))
                columns = {std::min(columns.first, x), std::max(columns.second, x)};
    return columns;
}

// Where the arrow of a menu button is drawn on or against its text (the pixels that change when
// the text, or the menu, is taken away), a sentence that says so; empty when the arrow lies right
// of it, at least a space apart.
QString arrowOverText(QAbstractButton* button)
{
    QMenu* menu = menuOf(button);
    const auto text = differingColumns(drawnWith(button, button->text(), menu),
                                       drawnWith(button, QString(), menu));
    const auto arrow =
        differingColumns(drawnWith(button, QString(), menu), drawnWith(button, QString(), nullptr));
    if (text.first <= text.second && arrow.first <= arrow.second &&
        arrow.first > text.second + button->fontMetrics().horizontalAdvance(QLatin1Char(' ')))
        return QString();
    return QStringLiteral("\"%1\": its text at x %2 to %3, its arrow at %4 to %5")
        .arg(button->text())
        .arg(text.first)
        .arg(text.second)
        .arg(arrow.first)
        .arg(arrow.second);
}

// Whether the window, resized to the screen less the offscreen frame (1272 x 764), fits it.
bool fitsWhenResizedToTheScreen(MainWindow& window)
{
    window.resize(1272, 764);
    QTest::qWait(50);
    return fitsTheScreen(window);
}

}  // namespace

class TestSmallScreen : public QObject {
    Q_OBJECT

private slots:
    void timingChartAxisTextFitsSmallSizes();
    void timingChartLegendsReadOnTheDarkTheme();
    void initTestCase()
    {
        startAsFirstRun();
        QCOMPARE(QGuiApplication::primaryScreen()->size(), QSize(1280, 800));
    }

    // A first start (no saved settings) asked for 1400 x 900, past the screen's right and
    // bottom edges; a restart restored the size saved on a larger screen.
    void firstStartAndRestartFitTheScreen()
    {
        {
            MainWindow window(MainWindow::Start::LastSession);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QVERIFY2(fitsTheScreen(window), qPrintable(describe(window)));
            window.setGeometry(0, 0, 1600, 1000);  // as saved on a larger screen
            window.close();
        }
        QVERIFY(QSettings().contains(QStringLiteral("geometry")));
        MainWindow again(MainWindow::Start::LastSession);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY2(fitsTheScreen(again), qPrintable(describe(again)));
    }

    // Every session of the README's screenshots, opened in a window as wide as the screen, leaves
    // it no wider while the pages compute and when they are done, and resized to the screen the
    // window fits it. Pages have held the window wider: a ViT's input, whose Input dock names long
    // samples and models (1286 pixels); the Timing page's sgemm line (52 pixels more); the Inside
    // the model page, its table beside its chart (1465); the Heads page's progress bar while it
    // surveyed (1336).
    void everyDocumentedSessionFitsTheScreen_data()
    {
        addRowPerSessionFile(QStringLiteral("docs/screenshots"));
    }

    void everyDocumentedSessionFitsTheScreen()
    {
        QFETCH(QString, file);
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showIdle(window, QSize(1272, 764)));  // the screen less the offscreen frame
        const WidestWindow watch(&window);
        QVERIFY(window.openSession(file));
        QVERIFY(allWorkDoneAfterOpening(window));
        QVERIFY2(watch.widest() <= 1272,
                 qPrintable(QStringLiteral("the window was %1 pixels wide").arg(watch.widest())));
        QVERIFY2(fitsWhenResizedToTheScreen(window), qPrintable(describe(window)));
    }

    // Presentation mode on a 1280 x 720 projector, every bundled scenario: the window asks for no
    // more height than the projector's, and the explanation's whole text can be read, scrolling
    // where the window is too short for it. The Inside the model page made the window 733 pixels
    // high (the chart under the top tokens), and the ends of the explanations of scenarios 4, 11
    // and 12 were cut off, their formulas unseen.
    void presentationFitsA720LineProjectorWithEveryScenario_data()
    {
        addRowPerSessionFile(QStringLiteral("resources/scenarios"));
    }

    void presentationFitsA720LineProjectorWithEveryScenario()
    {
        QFETCH(QString, file);
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showIdle(window, QSize(1280, 720)));
        QVERIFY(window.lecture().openScenarioFile(file));
        window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
        QVERIFY(allWorkDoneAfterOpening(window));
        QVERIFY2(window.height() <= 720 && window.minimumSizeHint().height() <= 720,
                 qPrintable(QStringLiteral("the window is %1 pixels high, at least %2")
                                .arg(window.height())
                                .arg(window.minimumSizeHint().height())));
        const auto* area =
            window.findChild<QScrollArea*>(QStringLiteral("scenarioExplanationArea"));
        const auto* text = window.findChild<QLabel*>(QStringLiteral("scenarioExplanation"));
        QVERIFY(area && text && area->isVisible());
        QVERIFY2(
            text->height() >= text->heightForWidth(text->width()) &&
                text->height() <= area->viewport()->height() + area->verticalScrollBar()->maximum(),
            qPrintable(QStringLiteral("the text is %1 pixels high of %2, the area shows %3 "
                                      "and scrolls %4")
                           .arg(text->height())
                           .arg(text->heightForWidth(text->width()))
                           .arg(area->viewport()->height())
                           .arg(area->verticalScrollBar()->maximum())));
        // Every tick label of a chart shown lies in its figure: a chart too short for its heading
        // drops it, and its plots reach the top edge, where the Timing chart's 10⁰ was cut off
        // (scenario 8), leaving its time axis one label.
        for (QCustomPlot* chart : window.findChildren<QCustomPlot*>()) {
            if (!chart->isVisible())
                continue;
            chart->replot();
            for (QCPAxisRect* rect : chart->axisRects())
                for (const QPair<double, double>& span :
                     tickLabelSpans(rect->axis(QCPAxis::atLeft)))
                    QVERIFY2(span.first >= 0 && span.second <= chart->height(),
                             qPrintable(QStringLiteral("%1: a label at %2 to %3 of %4 pixels")
                                            .arg(chart->metaObject()->className())
                                            .arg(span.first)
                                            .arg(span.second)
                                            .arg(chart->height())));
        }
        window.setPresentationMode(false);
    }

    // In the window that fits the screen, each sweep page's chart takes more than half of its
    // page: the Error analysis page's controls were 90 pixels wider than its methods (the kernel
    // pair's two boxes side by side), and its chart took 319 of 701 pixels.
    void theSweepPagesGiveTheirChartsMostOfThePage()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showIdle(window, QSize(1272, 764)));
        const std::pair<MainWindow::Page, QWidget*> pages[] = {
            {MainWindow::ErrorsPage, window.errorPanel()->chart()},
            {MainWindow::TimingPage, window.timingPanel()->chart()}};
        for (const auto& [page, chart] : pages) {
            window.showPage(page);
            QTest::qWait(50);
            const QWidget* panel = chart->parentWidget();
            while (panel && !qobject_cast<const SweepPage*>(panel))
                panel = panel->parentWidget();
            QVERIFY(panel);
            QVERIFY2(chart->width() > panel->width() / 2,
                     qPrintable(QStringLiteral("%1: the chart takes %2 of %3 pixels")
                                    .arg(panel->metaObject()->className())
                                    .arg(chart->width())
                                    .arg(panel->width())));
        }
    }

    // The Timing page shows its table under the chart in the window; with scenario 8's
    // explanation open under it on this screen, where the table would leave the chart too short
    // for its title, the chart takes the page's height and keeps its title: under the table its
    // plots were 150 pixels high and the title was given up. Presented (the docks and bars
    // hidden), the page is tall enough for both again.
    void aShortTimingPageGivesTheTablesRoomToTheChart()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showIdle(window, QSize(1272, 764)));
        window.showPage(MainWindow::TimingPage);
        QTest::qWait(50);
        const TimingPanel* page = window.timingPanel();
        QVERIFY(page->table()->isVisible());
        QVERIFY(window.lecture().openScenarioFile(
            QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/scenarios/08-linear-time.attnlab")));
        QVERIFY(allWorkDoneAfterOpening(window));
        const auto headingShown = [&] {
            page->chart()->replot();
            return shownHeading(*page->chart()).contains(QStringLiteral("Attention cost"));
        };
        QVERIFY2(headingShown(), qPrintable(shownHeading(*page->chart())));
        QTRY_VERIFY(!page->table()->isVisible());
        window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
        QTRY_VERIFY(page->table()->isVisible());
        QVERIFY2(headingShown(), qPrintable(shownHeading(*page->chart())));
        window.setPresentationMode(false);
    }

    // The Timing page's table, in the window as wide as this screen, shows each column whole,
    // its heading and every cell, and scrolls sideways where the page is narrower than they
    // need; in a wider window its columns fill it. The crossover column, stretched to the
    // table's width, was cut to "ossover with exa" and "L ≈ 560 (vs".
    void theTimingTableShowsEveryColumnWhole()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showIdle(window, QSize(1272, 764)));
        QVERIFY(window.openSession(
            QStringLiteral(ATTNLAB_TEST_DATA "/../../docs/screenshots/timing.attnlab")));
        QVERIFY(allWorkDoneAfterOpening(window));
        window.showPage(MainWindow::TimingPage);
        const QTableWidget* table = window.timingPanel()->table();
        for (const int width : {1272, 1900}) {
            window.resize(width, 764);
            QTest::qWait(50);
            QVERIFY(table->isVisible() && table->rowCount() > 0);
            const QString cut = cutTableText(*table);
            QVERIFY2(cut.isEmpty(),
                     qPrintable(QStringLiteral("%1 pixels: %2").arg(width).arg(cut)));
            QVERIFY2(table->horizontalHeader()->length() >= table->viewport()->width(),
                     qPrintable(QStringLiteral("%1 pixels: columns of %2 in a table of %3")
                                    .arg(width)
                                    .arg(table->horizontalHeader()->length())
                                    .arg(table->viewport()->width())));
        }
    }

    // On every page, a button that opens a menu (Export, the layers Generate replaces) draws its
    // arrow right of its text and apart from it: tool buttons that popped their menus up drew it
    // against the text's last letter, as if under it ("Export chart", "all layers").
    void everyMenuButtonDrawsItsArrowBesideItsText()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showIdle(window, QSize(1272, 764)));
        int seen = 0;
        for (const MainWindow::Page page : {MainWindow::HeadsPage, MainWindow::ErrorsPage,
                                            MainWindow::TimingPage, MainWindow::GeneratePage}) {
            window.showPage(page);
            QTest::qWait(50);
            for (QAbstractButton* button : window.findChildren<QAbstractButton*>()) {
                if (button->isVisible() && menuOf(button)) {
                    ++seen;
                    const QString overlap = arrowOverText(button);
                    QVERIFY2(overlap.isEmpty(), qPrintable(overlap));
                }
            }
        }
        QVERIFY(seen >= 4);
    }

    // Every page's tab shows in the tab bar: none hides behind scroll arrows (the Stepper did).
    void everyPageTabShows()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showSettled(window));
        auto* pages = window.findChild<QTabWidget*>(QStringLiteral("pages"));
        QVERIFY(pages);
        const QTabBar* bar = pages->tabBar();
        for (int i = 0; i < bar->count(); ++i)
            QVERIFY2(bar->rect().contains(bar->tabRect(i)),
                     qPrintable(QStringLiteral("the tab \"%1\" at x %2 to %3 in a bar of %4")
                                    .arg(bar->tabText(i))
                                    .arg(bar->tabRect(i).left())
                                    .arg(bar->tabRect(i).right())
                                    .arg(bar->width())));
    }

    // The Method dock's combo shows every method's name whole ("Trigonometric (random Fourie"
    // was cut): it is as wide as its longest item needs.
    void theMethodComboShowsEveryNameWhole()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showSettled(window));
        auto* methods = window.findChild<QComboBox*>(QStringLiteral("approximation"));
        QVERIFY(methods);
        int longest = 0;
        for (int i = 0; i < methods->count(); ++i)
            longest =
                std::max(longest, methods->fontMetrics().horizontalAdvance(methods->itemText(i)));
        QStyleOptionComboBox option;
        option.initFrom(methods);
        const int needed =
            methods->style()
                ->sizeFromContents(QStyle::CT_ComboBox, &option,
                                   QSize(longest, methods->fontMetrics().height()), methods)
                .width();
        QVERIFY2(methods->width() >= needed,
                 qPrintable(QStringLiteral("%1 pixels for names that need %2")
                                .arg(methods->width())
                                .arg(needed)));
    }

    // The Metrics dock keeps its width whatever the values it shows, so that the maps beside it
    // do not move: trigonometric features at norm multiplier 3 over four heads give values such
    // as "2.847 × 10⁸" in two columns, which made the dock 40 pixels wider than the default
    // example's. A value too wide for its column breaks after its mantissa and shows whole.
    void theMetricsDockKeepsItsWidthWhateverTheValues()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.resize(1272, 764);  // the screen less the offscreen frame
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(!shown.isEmpty() || shown.wait(30'000));
        shown.clear();
        QTest::qWait(200);  // the docks follow their panels' layouts
        auto* panel = window.findChild<QWidget*>(QStringLiteral("metricsPanel"));
        QVERIFY(panel);
        const int before = panel->width();

        QTemporaryDir folder;
        const QString session = folder.filePath(QStringLiteral("trig.attnlab"));
        QFile file(session);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"format": "attention-lab-session", "version": 1,
                       "spec": {"method": "favor-trig", "input": {"kind": "text", "heads": 4,
                                "norm_multiplier": 3.0, "projection": "random"}},
                       "view": {"head": 0}})");
        file.close();
        QVERIFY(window.openSession(session));
        QVERIFY(shown.wait(30'000));
        QTest::qWait(200);
        QCOMPARE(panel->width(), before);
        const QList<QLabel*> labels = panel->findChildren<QLabel*>();
        bool wide = false;
        for (const QLabel* label : labels) {
            if (!label->isVisible() || label->text().isEmpty())
                continue;
            wide = wide || label->text().contains(QStringLiteral("× 10"));
            const int needed = label->wordWrap() ? label->heightForWidth(label->width())
                                                 : label->sizeHint().height();
            QVERIFY2(
                label->width() >= label->minimumSizeHint().width() && label->height() >= needed,
                qPrintable(QStringLiteral("\"%1\" in %2 x %3")
                               .arg(label->text())
                               .arg(label->width())
                               .arg(label->height())));
        }
        QVERIFY(wide);  // the session gives values in scientific notation
    }

    // The maps page comes to rest once it has laid itself out: presented on a 1152 x 864
    // projector, the maps' labels and colour scales changed with their sizes and their sizes with
    // the labels (HeatmapView::updateTicks), and every layout moved the maps lined up beside them.
    // Scenario 5's page switched between the maps alone and the maps with the query's rows
    // about 200 times a second; scenario 3's error map went round four layouts.
    void theMapsPageComesToRest_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::newRow("scenario 5") << QStringLiteral("05-norms-matter.attnlab");
        QTest::newRow("scenario 3") << QStringLiteral("03-favor-random-features.attnlab");
    }

    void theMapsPageComesToRest()
    {
        QFETCH(QString, scenario);
        MainWindow window(MainWindow::Start::DefaultExample);
        window.resize(1152, 864);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.lecture().openScenarioFile(
            QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/scenarios/") + scenario));
        window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
        window.show();
        QVERIFY(shown.wait(30'000));
        QTest::qWait(1000);  // replots, the page's arrangement, the maps lined up
        int replots = 0;
        for (const char* name : {"exactView", "approxView", "errorView"})
            connect(window.findChild<HeatmapView*>(QLatin1String(name)), &QCustomPlot::afterReplot,
                    this, [&replots] { ++replots; });
        QTest::qWait(500);
        QVERIFY2(replots == 0, qPrintable(QStringLiteral("%1 replots while idle").arg(replots)));
    }

    // Presentation mode at 1280 x 800 under a scenario's explanation: the maps are at least 150
    // pixels a side (they were about 95, squeezed by a strip of query rows; the decorations of
    // three maps in a row still take about 750 of the 1272 pixels), every map's title is
    // whole, in one font size (the approximation's was shrunk and cut: "...P̂ (h..."), and the
    // strip of query rows, where shown, has a plot at least 40 pixels high.
    void presentationModeDrawsEachScenariosMapsReadably()
    {
        const QDir scenarios(QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/scenarios"));
        const QStringList files = scenarios.entryList({QStringLiteral("0*.attnlab")});
        QVERIFY(files.size() >= 5);
        int checked = 0;
        for (const QString& file : files) {
            MainWindow window(MainWindow::Start::DefaultExample);
            window.resize(1280, 800);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QSignalSpy shown(&window, &MainWindow::resultShown);
            QVERIFY(window.lecture().openScenarioFile(scenarios.filePath(file)));
            window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
            QVERIFY(shown.wait(30'000));
            QTest::qWait(200);  // replots, the page's arrangement, replots again
            auto* pages = window.findChild<QTabWidget*>(QStringLiteral("pages"));
            if (pages->currentWidget()->objectName() != QStringLiteral("matricesPage"))
                continue;
            ++checked;
            const auto* exact = window.findChild<HeatmapView*>(QStringLiteral("exactView"));
            // Replots and layouts settle in a few rounds of events, slower on a loaded machine:
            // wait for the size (a page that stays too small fails after the timeout).
            const auto side = [exact] {
                return std::min(exact->axisRect()->width(), exact->axisRect()->height());
            };
            QTRY_VERIFY2_WITH_TIMEOUT(
                side() >= 150,
                qPrintable(
                    QStringLiteral("%1: the maps are %2 pixels a side").arg(file).arg(side())),
                10'000);
            for (const char* name : {"exactView", "approxView", "errorView"}) {
                const auto* view = window.findChild<HeatmapView*>(QLatin1String(name));
                QVERIFY2(!view->shownTitle().contains(QChar(0x2026)),
                         qPrintable(file + QStringLiteral(": ") + view->shownTitle()));
                QCOMPARE(view->shownTitleFont().pointSizeF(), exact->shownTitleFont().pointSizeF());
            }
            // The strip of the query's rows, where shown, keeps a plot: under scenario 1's
            // slanted key labels a strip of 170 pixels left it 16 pixels high.
            const auto* rows = window.findChild<QCustomPlot*>(QStringLiteral("rowView"));
            QVERIFY(rows);
            if (rows->isVisible())
                QTRY_VERIFY2(rows->axisRect()->height() >= 40,
                             qPrintable(QStringLiteral("%1: the rows' plot is %2 pixels high")
                                            .arg(file)
                                            .arg(rows->axisRect()->height())));
        }
        QVERIFY(checked >= 5);  // scenarios 1 to 5 and 7 show the maps
    }
};

// Property: at the sizes the chart has in a small window (1280 x 720 beside the controls, 1280 x
// 800 beside the Timing page's controls, and smaller), no two tick labels of an axis overlap,
// every axis label lies along its axis, and the memory plot's key lies inside the figure with
// room for its entries: the memory plot's "sequence length L (tokens)" ran past the figure's
// right edge, and at 410 pixels its key's "model" did.
void TestSmallScreen::timingChartAxisTextFitsSmallSizes()
{
    TimingChart chart;
    chart.setResult(timingResult());
    for (const QSize size : {QSize(860, 520), QSize(640, 400), QSize(520, 360), QSize(410, 500)}) {
        chart.resize(size);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.replot();
        for (QCPAxisRect* rect : {chart.timeRect(), chart.memoryRect()}) {
            for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
                const QString problem = axisTextProblem(axis, size);
                QVERIFY2(problem.isEmpty(), qPrintable(problem));
                const QPair<double, double> span = axisLabelSpan(axis);
                QVERIFY2(span.first >= 0 && span.second <= (axis->orientation() == Qt::Horizontal
                                                                ? chart.width()
                                                                : chart.height()),
                         qPrintable(axis->label()));
            }
        }
        // The lengths take one line, in full where it fits: at 640 pixels the memory plot's took
        // two, at 520 the time plot's, and the plots lost a line.
        for (QCPAxisRect* rect : {chart.timeRect(), chart.memoryRect()}) {
            const QString lengths = rect->axis(QCPAxis::atBottom)->label();
            QVERIFY2(lengths == QStringLiteral("sequence length L (tokens)") ||
                         lengths == QStringLiteral("L (tokens)"),
                     qPrintable(QStringLiteral("%1 pixels: %2").arg(size.width()).arg(lengths)));
        }
        // Seven octaves read as at least three lengths: at 410 pixels, "1,024" was the only one.
        const QStringList labels =
            QStringList(chart.timeRect()->axis(QCPAxis::atBottom)->tickVectorLabels())
                .filter(QRegularExpression(QStringLiteral("\\S")));
        QVERIFY2(labels.size() >= 3, qPrintable(QStringLiteral("%1 pixels: %2")
                                                    .arg(size.width())
                                                    .arg(labels.join(QStringLiteral(", ")))));
        const auto* key = qobject_cast<QCPLegend*>(chart.memoryRect()->insetLayout()->elementAt(0));
        QVERIFY(key);
        QVERIFY2(key->outerRect().right() < size.width(),
                 qPrintable(QStringLiteral("%1 pixels: the key ends at %2")
                                .arg(size.width())
                                .arg(key->outerRect().right())));
        for (int i = 0; i < key->itemCount(); ++i)
            if (const QCPAbstractLegendItem* entry = key->item(i))
                QVERIFY(entry->minimumOuterSizeHint().width() <= entry->outerRect().width());
    }
}

// Property: in presentation mode's dark theme, the text of every legend of the chart (the methods
// under the plots, the memory plot's key to its line styles) contrasts with what it is drawn on
// (its box over the paper) at least 4.5:1 (WCAG AA): the key's white box stayed white under the
// theme's white ink.
void TestSmallScreen::timingChartLegendsReadOnTheDarkTheme()
{
    QMainWindow window;
    auto* chart = new TimingChart;
    window.setCentralWidget(chart);
    window.resize(1280, 720);
    chart->setResult(timingResult());
    PresentationMode mode(&window);
    mode.setTheme(ProjectorTheme::Dark);
    mode.enter(PresentationMode::Placement::KeepGeometry);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    chart->replot();
    const QColor paper =
        PresentationMode::projectorPalette(ProjectorTheme::Dark).color(QPalette::Window);
    QSet<QCPLegend*> legends;  // the plot layout's, with the axis rects' insets
    for (QCPLayoutElement* element : chart->plotLayout()->elements(true))
        if (auto* legend = qobject_cast<QCPLegend*>(element))
            legends.insert(legend);
    QCOMPARE(legends.size(), 2);
    int items = 0;
    for (const QCPLegend* legend : legends) {
        const QColor box = legend->brush().style() == Qt::NoBrush
                               ? paper
                               : composited(legend->brush().color(), paper);
        for (int i = 0; i < legend->itemCount(); ++i) {
            const QCPAbstractLegendItem* item = legend->item(i);
            if (!item)
                continue;
            ++items;
            const double ratio = contrastRatio(item->textColor(), box);
            QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1 on %2: %3")
                                                  .arg(item->textColor().name(), box.name())
                                                  .arg(ratio)));
        }
    }
    QVERIFY(items >= 6);  // four methods, the two line styles of the memory plot
    mode.leave();
}

int main(int argc, char** argv)
{
    // One screen of 1280 x 800, whatever the platform the test runner names.
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" ATTNLAB_TEST_DATA "/screens/1280x800.json");
    QApplication app(argc, argv);
    TestSmallScreen test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_small_screen.moc"

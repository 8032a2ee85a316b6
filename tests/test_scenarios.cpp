// Lecture mode: the bundled scenarios open in the window, compute without warnings they do not
// explain and render; presentation mode enters and leaves restoring the window; the deck steps
// with PageDown and PageUp; bad scenario files are refused with their name; saved scenarios read
// back; `attention-lab render --scenario` writes the scenario's figures.

#include "app_process.h"
#include "ui/errors/error_analysis_panel.h"
#include "errors.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/generation/generation_page.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/model/downstream_panel.h"
#include "ui/model/model_eval_chart.h"
#include "ui/window/lecture_controls.h"
#include "ui/window/main_window.h"
#include "ui/lecture/presentation.h"
#include "sessions/generation_page_state.h"
#include "sessions/scenario.h"
#include "ui/lecture/scenario_panel.h"
#include "ui/stepper/stepper_view.h"
#include "test_support.h"
#include "ui/timing/timing_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenuBar>
#include <QScreen>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>

#include <cmath>
#include <map>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

constexpr int kResultTimeoutMs = 60'000;

// The bundled deck, read once.
const Deck& bundledDeck()
{
    static const Deck deck = readDeck(QLatin1String(kBundledScenarioFolder));
    return deck;
}

// The height of a check box's indicator, which presentation mode's fonts make larger.
int checkBoxIndicatorHeight(const QCheckBox* box)
{
    QStyleOptionButton option;
    option.initFrom(box);
    return box->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, box).height();
}

// Waits for the window to show a new result; false on timeout.
bool waitForResult(MainWindow& window)
{
    QSignalSpy shown(&window, &MainWindow::resultShown);
    return shown.wait(kResultTimeoutMs);
}

// The number of distinct colours in image, up to `enough`: a blank or one-colour image has few.
int distinctColours(const QImage& image, int enough)
{
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3) {
            colours.insert(image.pixel(x, y));
            if (colours.size() >= enough)
                return enough;
        }
    return int(colours.size());
}

// The WCAG 2 contrast ratio of two opaque colours (1 to 21).
double contrastRatio(const QColor& a, const QColor& b)
{
    const auto luminance = [](const QColor& color) {
        const auto channel = [](double c) {
            return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
        };
        return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) +
               0.0722 * channel(color.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// A scenario file with `fields` over a valid session.
QByteArray scenarioBytes(const QJsonObject& fields)
{
    QJsonObject root{{"format", "attention-lab-session"}, {"version", 1}, {"spec", QJsonObject()}};
    for (auto it = fields.begin(); it != fields.end(); ++it)
        root.insert(it.key(), it.value());
    return QJsonDocument(root).toJson();
}

// Runs attention-lab with arguments for at most 120 s; the exit code (-1 when it did not finish
// or crashed) and stderr.
std::pair<int, QString> runApp(const QStringList& arguments)
{
    const AppRun run = runAttentionLab(arguments, QString(), 120'000);
    return {run.exitCode,
            run.finished ? QString::fromUtf8(run.err) : QStringLiteral("did not finish")};
}

}  // namespace

class TestScenarios : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void theBundledDeckHasTheThirteenScenariosInOrder();
    void everyBundledScenarioOpensComputesAndRenders_data();
    void everyBundledScenarioOpensComputesAndRenders();
    void theStateUnderAScenarioStaysLive();
    void presentationModeEntersAndLeavesRestoringTheWindow();
    void presentationModeScalesPlotsAddedWhilePresenting();
    void presentationFontsFollowTheScreenHeight();
    void theDarkThemeOutlinesUncheckedBoxes();
    void theLaserPointerFollowsOnlyInPresentationMode();
    void theDeckStepsForwardAndBack();
    void badScenarioFilesAreRefusedWithTheirName_data();
    void badScenarioFilesAreRefusedWithTheirName();
    void aDeckLeavesOutTheFilesItCannotRead();
    void aSavedScenarioReadsBackAsItWas();
    void renderScenarioWritesTheFiguresOfItsPage_data();
    void renderScenarioWritesTheFiguresOfItsPage();
    void renderRefusesABadScenarioNamingIt();

private:
    QTemporaryDir m_dir;
};

void TestScenarios::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(m_dir.isValid());
}

// Thirteen scenarios, 01 to 13, each with a title and an explanation that gives a formula.
void TestScenarios::theBundledDeckHasTheThirteenScenariosInOrder()
{
    const Deck& deck = bundledDeck();
    QVERIFY2(deck.problems.isEmpty(), qPrintable(deck.problems.join('\n')));
    QCOMPARE(int(deck.scenarios.size()), 13);
    for (int i = 0; i < 13; ++i) {
        const Scenario& scenario = deck.scenarios[std::size_t(i)];
        QVERIFY2(QFileInfo(scenario.path)
                     .fileName()
                     .startsWith(QStringLiteral("%1-").arg(i + 1, 2, 10, QLatin1Char('0'))),
                 qPrintable(scenario.path));
        QVERIFY(!scenario.title.isEmpty());
        QVERIFY2(scenario.explanation.contains(QLatin1String("<p align=\"center\"")),
                 qPrintable(scenario.path + ": no formula line"));
        // Rich text shows a run of spaces as one: scenario 8's formula line read "4L²d flops
        // FAVOR+: 2Lmd" (its two formulas five spaces apart).
        QVERIFY2(!scenario.explanation.contains(QLatin1String("  ")),
                 qPrintable(scenario.path + ": a run of spaces, shown as one"));
    }
}

void TestScenarios::everyBundledScenarioOpensComputesAndRenders_data()
{
    QTest::addColumn<int>("index");
    for (int i = 0; i < int(bundledDeck().scenarios.size()); ++i)
        QTest::newRow(
            qPrintable(QFileInfo(bundledDeck().scenarios[std::size_t(i)].path).completeBaseName()))
            << i;
}

// The scenario's spec is computed without an error and with no warning its explanation does not
// account for; its page is shown with what it needs (the sweep, the stepper's frame) and the
// window grabs to a picture with content; the panel shows its title and "i / n".
void TestScenarios::everyBundledScenarioOpensComputesAndRenders()
{
    QFETCH(int, index);
    const Scenario& scenario = bundledDeck().scenarios[std::size_t(index)];
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1600, 1000);
    window.show();
    QVERIFY(waitForResult(window));
    QVERIFY(window.lecture().openScenario(bundledDeck(), index));
    QVERIFY(waitForResult(window));
    QVERIFY2(window.errorMessage().isEmpty(), qPrintable(window.errorMessage()));

    const ExperimentResult& result = *window.controller().current().result;
    ExperimentSpec expected = scenario.session.spec;
    expected.exactMethod = false;
    QCOMPARE(result.spec.toJson(), expected.toJson());
    for (const ResultWarning& warning : result.warnings)
        QVERIFY2(
            scenario.explainedWarnings.contains(warning.code),
            qPrintable(
                QStringLiteral("unexplained warning %1: %2").arg(warning.code, warning.message)));

    const QString page = scenario.session.view.value(QLatin1String("page")).toString();
    const QMap<QString, MainWindow::Page> pages = {
        {"matrices", MainWindow::MatricesPage}, {"image", MainWindow::ImagePage},
        {"heads", MainWindow::HeadsPage},       {"model", MainWindow::ModelPage},
        {"errors", MainWindow::ErrorsPage},     {"timing", MainWindow::TimingPage},
        {"stepper", MainWindow::StepperPage},   {"generate", MainWindow::GeneratePage}};
    QVERIFY2(pages.contains(page), qPrintable(page));
    QCOMPARE(window.currentPage(), pages.value(page));
    if (page == QLatin1String("timing"))
        QVERIFY(!window.timingPanel()->result().points.empty());
    if (page == QLatin1String("errors"))
        QVERIFY(!window.errorPanel()->result().rows.empty());
    if (page == QLatin1String("model")) {
        DownstreamPanel* model = window.downstreamPanel();
        QTRY_VERIFY_WITH_TIMEOUT(model->comparison() && !model->isBusy(), kResultTimeoutMs);
        QVERIFY(model->comparison()->top1Agreement < 1.0);  // the cost the scenario shows
        // A sweep the scenario keeps is on the chart, as of the scenario's own input.
        const QJsonArray rows =
            scenario.session.view.value("model").toObject().value("rows").toArray();
        QCOMPARE(int(model->sweepRows().size()), int(rows.size()));
        if (!rows.isEmpty())
            QVERIFY2(!model->chart()->subtitle().contains(QStringLiteral("earlier input")),
                     qPrintable(model->chart()->subtitle()));
    }
    if (page == QLatin1String("generate")) {  // the generation the scenario shows runs again
        const GenerationPage* generation = window.generationPage();
        const int tokens =
            GenerationPageState::fromJson(scenario.session.view.value("generate").toObject())
                .tokens;
        QTRY_VERIFY_WITH_TIMEOUT(int(generation->steps().size()) == tokens && !generation->isBusy(),
                                 kResultTimeoutMs);
        QVERIFY(generation->refusal().isEmpty());
        QVERIFY(generation->firstDivergence() > 0);  // the continuations part, as it says
    }
    if (page == QLatin1String("stepper")) {
        StepperView* stepper = window.stepperView();
        QTRY_VERIFY_WITH_TIMEOUT(stepper->length() > 0 && !stepper->isBusy(), kResultTimeoutMs);
        QVERIFY(stepper->errorMessage().isEmpty());
        QCOMPARE(stepper->position(),
                 scenario.session.view.value("stepper").toObject().value("position").toInt());
    }
    const int query = scenario.session.view.value(QLatin1String("query")).toInt(-1);
    QCOMPARE(window.viewSettings().query, query);

    QCOMPARE(window.scenarioPanel()->titleText(), scenario.title);
    QVERIFY(window.scenarioPanel()->isVisible());
    QCOMPARE(window.scenarioPanel()->positionText(),
             QStringLiteral("%1 / %2").arg(index + 1).arg(bundledDeck().scenarios.size()));
    QTest::qWait(50);
    const QImage picture = window.grab().toImage();
    QCOMPARE(picture.size(), window.size());
    QVERIFY(distinctColours(picture, 200) >= 200);
}

// A scenario is a live state: changing a control recomputes, and undo goes back to the
// scenario's spec.
void TestScenarios::theStateUnderAScenarioStaysLive()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.show();
    QVERIFY(waitForResult(window));
    QVERIFY(window.lecture().openScenario(bundledDeck(), 2));  // FAVOR+ with m = 8
    QVERIFY(waitForResult(window));
    QCOMPARE(window.controller().spec().approximation.features, 8);
    const double before = window.controller().current().result->metrics.relFrobeniusAttention;
    ExperimentSpec spec = window.controller().spec();
    spec.approximation.features = 512;
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    QVERIFY(window.controller().current().result->metrics.relFrobeniusAttention < before);
    QCOMPARE(window.scenarioPanel()->index(), 2);  // still the same scenario on screen
}

// F5 enters: full screen, docks, tool bars, menu bar and status bar hidden, larger fonts in the
// widgets and the plots, thicker lines, the projector palette. Esc leaves, and the window is as
// it was: geometry, state, docks, bars, fonts, palette, plot fonts and pens.
void TestScenarios::presentationModeEntersAndLeavesRestoringTheWindow()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1300, 850);
    window.show();
    QVERIFY(waitForResult(window));
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.selectQuery(2);
    auto* metrics = window.findChild<QDockWidget*>(QStringLiteral("metricsDock"));
    QVERIFY(metrics);
    metrics->hide();  // a layout of the user's own, to come back as it was
    QTest::qWait(20);

    const QRect geometry = window.geometry();
    // The docks and bars: which are shown, and where (restoreState may share a dock area's
    // height between its docks a pixel differently).
    std::map<QWidget*, QRect> placed;
    for (QWidget* bar : window.findChildren<QWidget*>())
        if (qobject_cast<QDockWidget*>(bar) || qobject_cast<QToolBar*>(bar) ||
            bar == window.menuBar() || bar == window.statusBar())
            placed[bar] = bar->isVisible() ? bar->geometry() : QRect();
    const auto nearlySame = [](const QRect& a, const QRect& b) {
        return a.isNull() == b.isNull() && (a.topLeft() - b.topLeft()).manhattanLength() <= 2 &&
               std::abs(a.width() - b.width()) + std::abs(a.height() - b.height()) <= 2;
    };
    const QFont font = window.font();
    const QPalette palette = window.palette();
    HeatmapView* exact = window.exactView();
    const QFont tickFont = exact->xAxis->tickLabelFont();
    const QFont labelFont = exact->yAxis->labelFont();
    const QPen basePen = exact->xAxis->basePen();
    auto* rows = window.findChild<QCustomPlot*>(QStringLiteral("rowView"));
    QVERIFY(rows);
    QCPAbstractPlottable* curve = nullptr;  // a plottable drawn with a pen
    for (int i = 0; i < rows->plottableCount() && !curve; ++i)
        if (rows->plottable(i)->pen().style() != Qt::NoPen)
            curve = rows->plottable(i);
    QVERIFY(curve);
    const QPen curvePen = curve->pen();
    const QFont panelTitleFont =
        window.findChild<QWidget*>(QStringLiteral("scenarioTitle"))->font();
    // A check box's indicator, which the presentation fonts make larger.
    auto* histograms = window.findChild<QCheckBox*>(QStringLiteral("errorDistribution"));
    QVERIFY(histograms);
    const auto indicatorHeight = [histograms] { return checkBoxIndicatorHeight(histograms); };
    const int indicator = indicatorHeight();

    QTest::keyClick(&window, Qt::Key_F5);
    QVERIFY(window.presentation().isActive());
    QTRY_VERIFY(window.isFullScreen());
    for (QDockWidget* dock : window.findChildren<QDockWidget*>())
        QVERIFY2(dock->isHidden(), qPrintable(dock->objectName()));
    for (QToolBar* bar : window.findChildren<QToolBar*>())
        QVERIFY(bar->isHidden());
    QVERIFY(window.menuBar()->isHidden());
    QVERIFY(window.statusBar()->isHidden());
    // The fonts grow with the screen's height (presentationFontsFollowTheScreenHeight).
    const double scale = window.presentation().fontScale();
    QCOMPARE(scale, PresentationMode::fontScaleFor(window.screen()->geometry().height()));
    QCOMPARE(window.font().pointSizeF(), font.pointSizeF() * scale);
    QCOMPARE(exact->xAxis->tickLabelFont().pointSizeF(), tickFont.pointSizeF() * scale);
    QCOMPARE(exact->yAxis->labelFont().pointSizeF(), labelFont.pointSizeF() * scale);
    QVERIFY(exact->xAxis->basePen().widthF() >= 2.0);
    QVERIFY(curve->pen().widthF() >=
            std::max(curvePen.widthF(), 1.0) * PresentationMode::kLineScale);
    QCOMPARE(window.findChild<QWidget*>(QStringLiteral("scenarioTitle"))->font().pointSizeF(),
             panelTitleFont.pointSizeF() * scale);
    QTRY_VERIFY(indicatorHeight() >= histograms->fontMetrics().ascent());
    QCOMPARE(window.palette().color(QPalette::Window), QColor(Qt::white));
    QCOMPARE(window.palette().color(QPalette::WindowText), QColor(Qt::black));

    // The dark theme while presenting, then back to light: plots follow.
    window.presentation().setTheme(ProjectorTheme::Dark);
    QVERIFY(window.palette().color(QPalette::Window).lightness() < 40);
    QVERIFY(exact->xAxis->tickLabelColor().lightness() > 200);
    QCOMPARE(exact->xAxis->tickLabelFont().pointSizeF(), tickFont.pointSizeF() * scale);
    window.presentation().setTheme(ProjectorTheme::Light);

    // A new result while presenting keeps the presentation look.
    ExperimentSpec spec = window.controller().spec();
    spec.approximation.features = 32;
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    exact->replot();
    QCOMPARE(exact->xAxis->tickLabelFont().pointSizeF(), tickFont.pointSizeF() * scale);

    QTest::keyClick(&window, Qt::Key_Escape);
    QVERIFY(!window.presentation().isActive());
    QTRY_VERIFY(!window.isFullScreen());
    QTRY_COMPARE(window.geometry(), geometry);
    for (const auto& [bar, where] : placed)
        QTRY_VERIFY2(nearlySame(bar->isVisible() ? bar->geometry() : QRect(), where),
                     qPrintable(bar->objectName()));
    QVERIFY(metrics->isHidden());
    QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("inputDock"))->isVisible());
    QVERIFY(window.menuBar()->isVisible());
    QVERIFY(window.statusBar()->isVisible());
    QCOMPARE(window.font(), font);
    QCOMPARE(window.palette(), palette);
    QCOMPARE(exact->xAxis->tickLabelFont(), tickFont);
    QCOMPARE(exact->yAxis->labelFont(), labelFont);
    QCOMPARE(exact->xAxis->basePen(), basePen);
    QCOMPARE(curve->pen(), curvePen);
    QCOMPARE(window.findChild<QWidget*>(QStringLiteral("scenarioTitle"))->font(), panelTitleFont);
    QCOMPARE(indicatorHeight(), indicator);
}

// A page first shown while presenting (the Stepper page computes and builds its plots then) gets
// the presentation fonts too.
void TestScenarios::presentationModeScalesPlotsAddedWhilePresenting()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1600, 1000);
    window.show();
    QVERIFY(waitForResult(window));
    auto* chart = window.timingPanel()->findChild<QCustomPlot*>();
    QVERIFY(chart);
    const QFont before = chart->xAxis->tickLabelFont();
    window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
    window.showPage(MainWindow::TimingPage);
    QTest::qWait(50);
    chart->replot();
    QVERIFY(window.presentation().fontScale() > 1);
    QCOMPARE(chart->xAxis->tickLabelFont().pointSizeF(),
             before.pointSizeF() * window.presentation().fontScale());
    window.setPresentationMode(false);
    QCOMPARE(chart->xAxis->tickLabelFont(), before);
}

// Presentation fonts are kFontScale times larger on a screen of 1080 lines or more and grow less
// on a shorter one, in proportion to its height, down to the desktop's size on a projector of 720
// lines: the room sees text as large as at 1080 lines, and the plots keep their share of the
// screen. At 1280 x 720 with the fixed scale of 1.5, scenario 5's explanation took 47% of the
// window's height and left the heatmaps 110 pixels wide. Every font grows by the one scale: at
// 1600 x 1000 the window's 9 points grow to the explanation's own 12.5, and the explanation was
// then taken for a font that follows its parent's and left at 12.5.
void TestScenarios::presentationFontsFollowTheScreenHeight()
{
    QCOMPARE(PresentationMode::fontScaleFor(2160), PresentationMode::kFontScale);
    QCOMPARE(PresentationMode::fontScaleFor(1080), PresentationMode::kFontScale);
    QCOMPARE(PresentationMode::fontScaleFor(900), 1.25);
    QCOMPARE(PresentationMode::fontScaleFor(720), 1.0);
    QCOMPARE(PresentationMode::fontScaleFor(480), 1.0);

    for (const QSize size : {QSize(1920, 1080), QSize(1600, 1000), QSize(1280, 720)}) {
        MainWindow window(MainWindow::Start::DefaultExample);
        window.resize(size);
        window.show();
        QVERIFY(waitForResult(window));
        QVERIFY(window.lecture().openScenario(bundledDeck(), 4));  // norms matter
        QVERIFY(waitForResult(window));
        const QFont font = window.font();
        const QFont tickFont = window.exactView()->xAxis->tickLabelFont();
        auto* explanation = window.findChild<QLabel*>(QStringLiteral("scenarioExplanation"));
        QVERIFY(explanation);
        const QFont explanationFont = explanation->font();
        // A check box's indicator grows with the fonts.
        auto* histograms = window.findChild<QCheckBox*>(QStringLiteral("errorDistribution"));
        QVERIFY(histograms);
        const auto indicatorHeight = [histograms] { return checkBoxIndicatorHeight(histograms); };
        const int indicator = indicatorHeight();

        window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
        QTest::qWait(50);
        const double scale = window.presentation().fontScale();
        QCOMPARE(scale, PresentationMode::fontScaleFor(size.height()));
        QCOMPARE(window.font().pointSizeF(), font.pointSizeF() * scale);
        window.exactView()->replot();
        QCOMPARE(window.exactView()->xAxis->tickLabelFont().pointSizeF(),
                 tickFont.pointSizeF() * scale);
        QCOMPARE(explanation->font().pointSizeF(), explanationFont.pointSizeF() * scale);
        if (scale > 1)
            QTRY_VERIFY2(
                indicatorHeight() > indicator,
                qPrintable(QStringLiteral("%1 against %2").arg(indicatorHeight()).arg(indicator)));
        const ScenarioPanel* panel = window.scenarioPanel();
        QTRY_VERIFY2(panel->height() <= size.height() / 3,
                     qPrintable(QStringLiteral("the explanation takes %1 of %2 pixels")
                                    .arg(panel->height())
                                    .arg(size.height())));
        // The query's rows stay under the maps: the strip takes the height its chart needs and
        // the maps keep a readable size beside it.
        const auto* rows = window.findChild<QCustomPlot*>(QStringLiteral("rowView"));
        QVERIFY(rows);
        QTRY_VERIFY(rows->isVisible());
        // Another theme restyles every widget again, with the same scale.
        window.presentation().setTheme(ProjectorTheme::Dark);
        QCOMPARE(explanation->font().pointSizeF(), explanationFont.pointSizeF() * scale);
        window.presentation().setTheme(ProjectorTheme::Light);
        window.setPresentationMode(false);
        QCOMPARE(explanation->font(), explanationFont);
    }

    // Scenario 1's key labels go on a slant in the strip of query rows under the maps: at 1920 x
    // 1080 the strip kept the height it had before they did, and its plot was 25 pixels high.
    // Presenting before the window is shown, as `--scenario --presentation` does.
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1920, 1080);
    QVERIFY(window.lecture().openScenario(bundledDeck(), 0));
    window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
    window.show();
    QVERIFY(waitForResult(window));
    const auto* rows = window.findChild<QCustomPlot*>(QStringLiteral("rowView"));
    QVERIFY(rows);
    QTRY_VERIFY(rows->isVisible());
    QTRY_VERIFY2(
        rows->axisRect()->height() >= 40,
        qPrintable(
            QStringLiteral("the rows' plot is %1 pixels high").arg(rows->axisRect()->height())));
}

// In the dark projector theme an unchecked box of the Timing page stands out from the window: its
// indicator holds pixels of at least the 3:1 contrast WCAG asks of a control's boundary. Leaving
// presentation mode gives the box the application's style again.
void TestScenarios::theDarkThemeOutlinesUncheckedBoxes()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1600, 1000);
    window.show();
    QVERIFY(waitForResult(window));
    window.showPage(MainWindow::TimingPage);
    window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
    window.presentation().setTheme(ProjectorTheme::Dark);
    QCheckBox* box = nullptr;
    for (QCheckBox* candidate : window.timingPanel()->findChildren<QCheckBox*>())
        if (candidate->isVisible() && !candidate->isChecked() && !box)
            box = candidate;
    QVERIFY(box);
    QTest::qWait(50);

    QStyleOptionButton option;
    option.initFrom(box);
    const QRect indicator =
        box->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, box);
    QVERIFY(!indicator.isEmpty());
    const QImage image =
        window.grab(QRect(box->mapTo(&window, indicator.topLeft()), indicator.size())).toImage();
    const QColor background = window.palette().color(QPalette::Window);
    double highest = 1;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            highest = std::max(highest, contrastRatio(image.pixelColor(x, y), background));
    QVERIFY2(highest >= 3, qPrintable(QStringLiteral("contrast %1:1").arg(highest)));
    window.setPresentationMode(false);
    QCOMPARE(box->style(), QApplication::style());  // leaving gives it the window's style back
}

// The laser pointer shows only in presentation mode with its toggle on, lets the mouse through
// and follows the cursor.
void TestScenarios::theLaserPointerFollowsOnlyInPresentationMode()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1200, 800);
    window.show();
    QVERIFY(waitForResult(window));
    LaserPointer* laser = window.presentation().laserPointer();
    window.presentation().setLaserPointerEnabled(true);
    QVERIFY(laser->isHidden());  // not presenting
    window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
    QVERIFY(laser->isVisible());
    QVERIFY(laser->testAttribute(Qt::WA_TransparentForMouseEvents));
    QCOMPARE(laser->geometry(), window.rect());
    QCursor::setPos(window.mapToGlobal(QPoint(300, 200)));
    QTRY_COMPARE(laser->position(), QPoint(300, 200));
    window.presentation().setLaserPointerEnabled(false);
    QVERIFY(laser->isHidden());
    window.setPresentationMode(false);
}

// PageDown opens the next scenario of the deck, PageUp the previous one; the ends stay put. In
// presentation mode too (the menu bar is hidden then).
void TestScenarios::theDeckStepsForwardAndBack()
{
    MainWindow window(MainWindow::Start::DefaultExample);
    window.show();
    QVERIFY(waitForResult(window));
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const Deck& deck = bundledDeck();
    const auto features = [&](int index) {
        return deck.scenarios[std::size_t(index)].session.spec.approximation.features;
    };
    QTest::keyClick(&window, Qt::Key_PageDown);  // no deck yet: the bundled one, at its start
    QVERIFY(waitForResult(window));
    QCOMPARE(window.scenarioPanel()->index(), 0);
    const qsizetype count = deck.scenarios.size();
    QCOMPARE(window.scenarioPanel()->positionText(), QStringLiteral("1 / %1").arg(count));
    QTest::keyClick(&window, Qt::Key_PageUp);  // at the start: stays
    QCOMPARE(window.scenarioPanel()->index(), 0);

    window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
    QTest::keyClick(&window, Qt::Key_PageDown);
    QVERIFY(waitForResult(window));
    QCOMPARE(window.scenarioPanel()->index(), 1);
    QCOMPARE(window.scenarioPanel()->positionText(), QStringLiteral("2 / %1").arg(count));
    QCOMPARE(window.controller().spec().approximation.features, features(1));
    QTest::keyClick(&window, Qt::Key_PageDown);
    QVERIFY(waitForResult(window));
    QCOMPARE(window.scenarioPanel()->titleText(), deck.scenarios[2].title);
    QCOMPARE(window.controller().spec().approximation.features, features(2));
    QTest::keyClick(&window, Qt::Key_PageUp);
    QVERIFY(waitForResult(window));
    QCOMPARE(window.scenarioPanel()->index(), 1);
    QCOMPARE(window.controller().spec().approximation.features, features(1));
    window.setPresentationMode(false);

    const int last = int(deck.scenarios.size()) - 1;
    QVERIFY(window.lecture().openScenario(deck, last));
    QVERIFY(waitForResult(window));
    window.lecture().stepDeck(1);  // at the end: stays
    QCOMPARE(window.scenarioPanel()->index(), last);
}

void TestScenarios::badScenarioFilesAreRefusedWithTheirName_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not JSON") << QByteArray("{ \"title\": ") << "not valid JSON";
    QTest::newRow("not a session") << QByteArray("{\"title\": \"x\"}") << "not an Attention Lab";
    QTest::newRow("title a number")
        << scenarioBytes({{"title", 3}}) << "\"title\" must be a string";
    QTest::newRow("explanation an array")
        << scenarioBytes({{"explanation", QJsonArray{"a"}}}) << "\"explanation\" must be a string";
    QTest::newRow("title on two lines")
        << scenarioBytes({{"title", "one\ntwo"}}) << "\"title\" must be one line";
    QTest::newRow("explained warnings not strings")
        << scenarioBytes({{"explained_warnings", QJsonArray{1}}})
        << "\"explained_warnings\" must be an array of strings";
    QTest::newRow("explanation too long")
        << scenarioBytes({{"explanation", QString(kLongestScenarioExplanation + 1, 'x')}})
        << "more than 4000";
    QTest::newRow("bad spec") << QJsonDocument(QJsonObject{{"format", "attention-lab-session"},
                                                           {"version", 1},
                                                           {"title", "t"},
                                                           {"spec", QJsonObject{{"features", -4}}}})
                                     .toJson()
                              << "spec: ";
}

// readScenario refuses a bad file with a message that starts with its path and says what is
// wrong; the window shows that message and keeps what it showed.
void TestScenarios::badScenarioFilesAreRefusedWithTheirName()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    const QString path =
        m_dir.filePath(QStringLiteral("bad/%1.attnlab")
                           .arg(QString::fromLatin1(QTest::currentDataTag()).replace(' ', '-')));
    QDir().mkpath(QFileInfo(path).absolutePath());
    writeBytes(path, bytes);
    const QString message = thrownMessage<InputError>([&] { readScenario(path); });
    QVERIFY2(blames(message, path, expected), qPrintable(message));

    MainWindow window(MainWindow::Start::DefaultExample);
    window.show();
    QVERIFY(waitForResult(window));
    const ExperimentSpec before = window.controller().spec();
    QVERIFY(!window.lecture().openScenarioFile(path));
    QVERIFY2(window.errorMessage().contains(path), qPrintable(window.errorMessage()));
    QCOMPARE(window.controller().spec().toJson(), before.toJson());
    QDir(QFileInfo(path).absolutePath()).removeRecursively();
}

// A folder with a bad file among good ones: the deck holds the good ones, in file-name order, and
// names the bad one; a folder without any scenario is refused.
void TestScenarios::aDeckLeavesOutTheFilesItCannotRead()
{
    const QString folder = m_dir.filePath(QStringLiteral("deck"));
    QDir().mkpath(folder);
    writeBytes(folder + "/b-second.attnlab", scenarioBytes({{"title", "Second"}}));
    writeBytes(folder + "/a-first.attnlab", scenarioBytes({}));  // a plain session
    writeBytes(folder + "/c-broken.attnlab", "not json");
    writeBytes(folder + "/notes.txt", "not a scenario");
    const Deck deck = readDeck(folder);
    QCOMPARE(int(deck.scenarios.size()), 2);
    QCOMPARE(deck.scenarios[0].title, QStringLiteral("a-first"));  // titled by its file name
    QCOMPARE(deck.scenarios[1].title, QStringLiteral("Second"));
    QCOMPARE(deck.problems.size(), 1);
    QVERIFY(deck.problems.first().startsWith(folder + "/c-broken.attnlab"));

    const QString empty = m_dir.filePath(QStringLiteral("empty"));
    QDir().mkpath(empty);
    const QString message = thrownMessage<InputError>([&] { readDeck(empty); });
    QVERIFY2(blames(message, empty, "no scenario"), qPrintable(message));
}

// Save Current State as Scenario writes the live state (spec, view, page) with the title and the
// explanation; reopened, it gives the same spec and page.
void TestScenarios::aSavedScenarioReadsBackAsItWas()
{
    const QString path = m_dir.filePath(QStringLiteral("mine/own.attnlab"));
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        window.show();
        QVERIFY(waitForResult(window));
        ExperimentSpec spec = window.controller().spec();
        spec.approximation.features = 24;
        spec.input.normMultiplier = 1.5;
        window.setSpec(spec);
        QVERIFY(waitForResult(window));
        window.selectQuery(3);
        QVERIFY(window.lecture().saveScenario(path, QStringLiteral("My own"),
                                              QStringLiteral("<b>φ(x)</b> with m = 24")));
        QVERIFY(!window.lecture().saveScenario(path, QStringLiteral("  "),
                                               QString()));  // a title needed
    }
    const Scenario scenario = readScenario(path);
    QCOMPARE(scenario.title, QStringLiteral("My own"));
    QCOMPARE(scenario.explanation, QStringLiteral("<b>φ(x)</b> with m = 24"));
    QCOMPARE(scenario.session.spec.approximation.features, 24);
    QCOMPARE(scenario.session.view.value("page").toString(), QStringLiteral("matrices"));

    MainWindow window(MainWindow::Start::DefaultExample);
    window.show();
    QVERIFY(waitForResult(window));
    QVERIFY(window.lecture().openScenarioFile(path));
    QVERIFY(waitForResult(window));
    QCOMPARE(window.controller().spec().input.normMultiplier, 1.5);
    QCOMPARE(window.viewSettings().query, 3);
    QCOMPARE(window.scenarioPanel()->titleText(), QStringLiteral("My own"));
    QCOMPARE(window.scenarioPanel()->positionText(), QStringLiteral("1 / 1"));
}

void TestScenarios::renderScenarioWritesTheFiguresOfItsPage_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QStringList>("files");
    const QStringList matrices = {"attention_exact.png", "attention_approx.png",
                                  "attention_error.png", "explanation.html"};
    QTest::newRow("matrices") << "03-favor-random-features"
                              << matrices + QStringList{"query_row.png"};
    QTest::newRow("errors") << "06-orthogonal-vs-iid"
                            << matrices + QStringList{"query_row.png", "error_chart.png"};
    QTest::newRow("timing") << "08-linear-time" << matrices + QStringList{"timing_chart.png"};
    QTest::newRow("stepper") << "09-causal-rnn"
                             << matrices + QStringList{"query_row.png", "stepper_frame.png"};
    QTest::newRow("image") << "10-image-patches"
                           << matrices + QStringList{"query_row.png", "image_overlay.png"};
}

// render --scenario FILE --out DIR writes the matrices and the figure of the scenario's page as
// PNG files with content, and its explanation.
void TestScenarios::renderScenarioWritesTheFiguresOfItsPage()
{
    QFETCH(QString, scenario);
    QFETCH(QStringList, files);
    const QString out = m_dir.filePath(QStringLiteral("render-") + scenario);
    const auto [status, err] =
        runApp({"render", "--scenario", QStringLiteral(":/scenarios/%1.attnlab").arg(scenario),
                "--out", out, "--size", "600x500"});
    QVERIFY2(status == 0, qPrintable(err));
    QStringList written = QDir(out).entryList(QDir::Files);
    written.sort();
    files.sort();
    QCOMPARE(written, files);
    for (const QString& file : files) {
        if (!file.endsWith(".png"))
            continue;
        const QImage image(QDir(out).filePath(file));
        QVERIFY2(!image.isNull(), qPrintable(file));
        QVERIFY2(distinctColours(image, 50) >= 50, qPrintable(file));
    }
    QFile html(QDir(out).filePath("explanation.html"));
    QVERIFY(html.open(QIODevice::ReadOnly));
    const Scenario read = readScenario(QStringLiteral(":/scenarios/%1.attnlab").arg(scenario));
    QVERIFY(QString::fromUtf8(html.readAll()).contains(read.title.toHtmlEscaped()));
}

// A bad scenario file: exit status 2, its name and the problem on stderr, nothing written; given
// as --session too. Spec options beside --scenario are refused.
void TestScenarios::renderRefusesABadScenarioNamingIt()
{
    const QString bad = m_dir.filePath(QStringLiteral("broken.attnlab"));
    writeBytes(bad, scenarioBytes({{"title", 7}}));
    const QString out = m_dir.filePath(QStringLiteral("render-bad"));
    const auto [status, err] = runApp({"render", "--scenario", bad, "--out", out});
    QCOMPARE(status, 2);
    QVERIFY2(err.contains(bad) && err.contains("\"title\" must be a string"), qPrintable(err));
    QVERIFY(QDir(out).entryList(QDir::Files).isEmpty());

    // --session names the file as --scenario does (Qt's QApplication took it out of argv, and
    // render drew the default example).
    const auto [sessionStatus, sessionErr] = runApp({"render", "--session", bad, "--out", out});
    QCOMPARE(sessionStatus, 2);
    QVERIFY2(sessionErr.contains(bad), qPrintable(sessionErr));

    const auto [mixedStatus, mixedErr] =
        runApp({"render", "--scenario", ":/scenarios/01-scaled-dot-product.attnlab", "--features",
                "32", "--out", out});
    QCOMPARE(mixedStatus, 2);
    QVERIFY2(mixedErr.contains("--features"), qPrintable(mixedErr));
}

QTEST_MAIN(TestScenarios)

#include "test_scenarios.moc"

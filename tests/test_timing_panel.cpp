// The Timing page: the chart of a sweep (from hand-made results, checked against values computed
// here) and the panel that runs sweeps, driven as a user would.
#include "errors.h"
#include "test_support.h"
#include "ui/timing/timing_chart.h"
#include "ui/timing/timing_panel.h"
#include "widget_support.h"

#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QElapsedTimer>
#include <QImage>
#include <QJsonDocument>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <memory>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

constexpr TimedMethod kExact{Method::ExactStreaming, false};
constexpr TimedMethod kExactCausal{Method::ExactStreaming, true};
constexpr TimedMethod kMaterialised{Method::ExactMaterialised, false};
constexpr TimedMethod kFavor{Method::FavorPositive, false};
constexpr TimedMethod kFavorCausal{Method::FavorPositive, true};
constexpr TimedMethod kElu{Method::Elu, false};

// A sweep timeout far above what the tiny sweeps take, for a slow or busy machine.
constexpr int kSweepTimeoutMs = 120'000;

// A point of `method` at `length` taking `seconds` (median; min 8% below, max 12% above).
SweepPoint okPoint(const TimedMethod& method, Eigen::Index length, double seconds)
{
    SweepPoint point;
    point.method = method;
    point.length = length;
    point.secondsMedian = seconds;
    point.secondsMin = 0.92 * seconds;
    point.secondsMax = 1.12 * seconds;
    point.gflops = 1e-9 * methodFlops(method, length, 64, 256) / seconds;
    point.workingSetBytes = workingSetBytes(method, length, 64, 256, 2);
    point.peakBytes = 1.1 * point.workingSetBytes;
    return point;
}

SweepPoint notMeasured(const TimedMethod& method, Eigen::Index length, PointStatus status)
{
    SweepPoint point = okPoint(method, length, 1.0);
    point.secondsMedian = point.secondsMin = point.secondsMax = point.gflops = point.peakBytes =
        std::nan("");
    point.status = status;
    return point;
}

// Power laws with a deterministic wobble of a few percent, so that fitted slopes are not round:
// exact c L^2, linear c L. Lengths 128 to 16,384 (one per octave). Exact materialised is skipped
// for the memory budget at 16,384; elu's last point was cancelled.
SweepResult handMadeResult()
{
    SweepResult result;
    result.spec.methods = {kMaterialised, kExact, kExactCausal, kFavor, kFavorCausal, kElu};
    result.spec.lengths = logSpacedLengths(128, 16384, 1);
    result.spec.headDim = 64;
    result.spec.features = 256;
    result.spec.threads = 2;
    result.spec.repetitions = 3;
    result.spec.budget = MemoryBudget(qint64(512) << 20);
    result.sgemmGflops = 150;
    result.threads = 2;
    int i = 0;
    for (const Eigen::Index length : result.spec.lengths) {
        const double l = double(length);
        for (const TimedMethod& method : result.spec.methods) {
            const double wobble = 1 + 0.04 * std::sin(1.7 * ++i);
            double seconds = 0;
            if (method == kMaterialised)
                seconds = 3e-10 * l * l;
            else if (method == kExact)
                seconds = 2e-10 * l * l;
            else if (method == kExactCausal)
                seconds = 1.3e-10 * l * l;
            else if (method == kFavor)
                seconds = 1e-6 * l;
            else if (method == kFavorCausal)
                seconds = 1.5e-6 * l;
            else
                seconds = 2e-7 * l;
            if (method == kMaterialised && length == 16384)
                result.points.push_back(notMeasured(method, length, PointStatus::SkippedMemory));
            else if (method == kElu && length == 16384)
                result.points.push_back(notMeasured(method, length, PointStatus::Cancelled));
            else
                result.points.push_back(okPoint(method, length, seconds * wobble));
        }
    }
    return result;
}

std::vector<SweepPoint> okPoints(const SweepResult& result, const TimedMethod& method)
{
    std::vector<SweepPoint> points;
    for (const SweepPoint& point : result.points)
        if (point.method == method && point.status == PointStatus::Ok)
            points.push_back(point);
    return points;
}

// The least-squares slope of log(seconds) against log(L), computed here.
double slopeOf(const std::vector<SweepPoint>& points)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = double(points.size());
    for (const SweepPoint& point : points) {
        const double x = std::log(double(point.length));
        const double y = std::log(point.secondsMedian);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// Where `linear` becomes faster than `exact` for good, computed here: the log-log interpolation
// between the last length where it is not faster and the next one.
double crossoverOf(const SweepResult& result, const TimedMethod& linear, const TimedMethod& exact)
{
    std::vector<std::pair<double, double>> gaps;  // log L, log(t_linear / t_exact)
    for (const SweepPoint& a : okPoints(result, linear))
        for (const SweepPoint& b : okPoints(result, exact))
            if (a.length == b.length)
                gaps.emplace_back(std::log(double(a.length)),
                                  std::log(a.secondsMedian / b.secondsMedian));
    std::size_t next = 0;  // the first length of the final run of lengths where linear is faster
    for (std::size_t i = 0; i < gaps.size(); ++i)
        if (gaps[i].second >= 0)
            next = i + 1;
    if (gaps.empty() || next == gaps.size())
        return std::nan("");
    if (next == 0)  // faster at every length
        return std::exp(gaps[0].first);
    const auto [x0, g0] = gaps[next - 1];
    const auto [x1, g1] = gaps[next];
    return std::exp(x0 + g0 / (g0 - g1) * (x1 - x0));
}

// The method as people read it, from the registry: its title, ", causal" for the causal variant
// ("FAVOR+ positive, causal"; not the command line's "favor-positive causal").
QString titleOf(const TimedMethod& method)
{
    const QString title = methodInfo(method.algorithm).title;
    return method.causal ? title + QStringLiteral(", causal") : title;
}

// The (key, value) pairs a graph draws.
QVector<QPointF> graphData(const QCPGraph* graph)
{
    QVector<QPointF> points;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        points.append(QPointF(it->key, it->value));
    return points;
}

// The box a text item covers on screen, as of the latest replot.
QRectF textBox(const QCPItemText* text)
{
    return QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition());
}

void showAndReplot(QWidget* widget)
{
    widget->show();
    QVERIFY(QTest::qWaitForWindowExposed(widget));
    if (auto* plot = qobject_cast<QCustomPlot*>(widget))
        plot->replot();
}

// Sets the panel's controls to `methods` (non-causal only), lengths min..max (one per octave),
// d, m, one repetition.
void chooseSweep(TimingPanel& panel, const std::vector<Method>& methods, int minLength,
                 int maxLength, int d, int m, int repetitions = 1)
{
    for (QCheckBox* box : panel.findChildren<QCheckBox*>()) {
        if (box->objectName().startsWith(QLatin1String("method-"))) {
            Method algorithm;
            QVERIFY(parseMethod(box->objectName().mid(7), &algorithm));
            box->setChecked(std::find(methods.begin(), methods.end(), algorithm) != methods.end());
        }
    }
    child<QCheckBox>(panel, "nonCausal")->setChecked(true);
    child<QCheckBox>(panel, "timingCausal")->setChecked(false);
    child<QSpinBox>(panel, "maxLength")->setValue(maxLength);
    child<QSpinBox>(panel, "minLength")->setValue(minLength);
    child<QSpinBox>(panel, "pointsPerOctave")->setValue(1);
    child<QSpinBox>(panel, "timingHeadDim")->setValue(d);
    child<QSpinBox>(panel, "timingFeatures")->setValue(m);
    child<QSpinBox>(panel, "repetitions")->setValue(repetitions);
}

// The number of measured points the panel's chart draws, over every method.
int chartPointCount(const TimingPanel& panel)
{
    int count = 0;
    for (const TimingChart::MethodCurves& curves : panel.chart()->allCurves())
        count += curves.time->dataCount();
    return count;
}

}  // namespace

class TestTimingPanel : public QObject {
    Q_OBJECT

private slots:
    void chartPlotsTheMediansWithMinMaxBars();
    void chartLegendGivesTheFittedSlope();
    void chartMarksTheCrossover_data();
    void chartMarksTheCrossover();
    void chartAnnotatesPointsSkippedForMemory();
    void chartLeavesCancelledPointsOut();
    void chartLabelsDoNotOverlap();
    void chartClearShowsTheHint();

    void panelControlsHaveTooltips();
    void panelRunsATinySweep();
    void panelWithoutMethodsDoesNotRun();
    void panelCancelStopsPromptlyAndKeepsPoints();
    void panelDestroyedWhileRunningStopsTheSweep();
    void panelStateRoundTripsWithoutRunning();
    void panelRejectsAMalformedState();
    void tableNamesTheCausalityWithoutAnExactCurve();
    void panelExportsTheChart_data();
    void panelExportsTheChart();
    void panelExportsTheCsv();
};

// Property: one graph per method holds exactly the medians of its Ok points at their lengths, its
// error bars reach the min and max, and both plots have log axes with units. Setting the result
// again (points arriving) replaces the curves instead of adding more.
void TestTimingPanel::chartPlotsTheMediansWithMinMaxBars()
{
    const SweepResult result = handMadeResult();
    TimingChart chart;
    chart.resize(1400, 600);
    chart.setResult(result);
    const int plottables = chart.plottableCount();
    chart.setResult(result);
    QCOMPARE(chart.plottableCount(), plottables);

    QCOMPARE(chart.allCurves().size(), result.spec.methods.size());
    for (const TimedMethod& method : result.spec.methods) {
        const TimingChart::MethodCurves* curves = chart.curves(method);
        QVERIFY2(curves, qPrintable(method.label()));
        const std::vector<SweepPoint> points = okPoints(result, method);
        const QVector<QPointF> plotted = graphData(curves->time);
        QCOMPARE(plotted.size(), qsizetype(points.size()));
        const auto bars = curves->errorBars->data();
        QCOMPARE(bars->size(), plotted.size());
        QCOMPARE(curves->errorBars->dataPlottable(), curves->time);
        for (std::size_t i = 0; i < points.size(); ++i) {
            QCOMPARE(plotted[qsizetype(i)],
                     QPointF(double(points[i].length), points[i].secondsMedian));
            const QCPErrorBarsData bar = bars->at(qsizetype(i));
            QVERIFY(qFuzzyCompare(points[i].secondsMedian - bar.errorMinus, points[i].secondsMin));
            QVERIFY(qFuzzyCompare(points[i].secondsMedian + bar.errorPlus, points[i].secondsMax));
        }
        // The memory plot: the model of every point measured or skipped, the peak where measured.
        QCOMPARE(curves->model->dataCount(), method == kElu ? 7 : 8);
        QCOMPARE(curves->peak->dataCount(), int(points.size()));
        QCOMPARE(curves->peak->data()->at(0)->value, points[0].peakBytes / (1024.0 * 1024.0));
    }

    for (QCPAxisRect* rect : {chart.timeRect(), chart.memoryRect()}) {
        for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
            QCOMPARE(axis->scaleType(), QCPAxis::stLogarithmic);
            QVERIFY(qSharedPointerDynamicCast<QCPAxisTickerLog>(axisTicker(axis)));
        }
        QCOMPARE(rect->axis(QCPAxis::atBottom)->label(),
                 QStringLiteral("sequence length L (tokens)"));
    }
    QCOMPARE(chart.timeRect()->axis(QCPAxis::atLeft)->label(), QStringLiteral("time per run (s)"));
    QCOMPARE(chart.memoryRect()->axis(QCPAxis::atLeft)->label(), QStringLiteral("memory (MiB)"));

    // Every point is inside the plot once it is drawn.
    showAndReplot(&chart);
    const QCPRange lengths = chart.timeRect()->axis(QCPAxis::atBottom)->range();
    const QCPRange times = chart.timeRect()->axis(QCPAxis::atLeft)->range();
    for (const SweepPoint& point : result.points) {
        if (point.status != PointStatus::Ok)
            continue;
        QVERIFY(lengths.contains(double(point.length)));
        QVERIFY(times.contains(point.secondsMin) && times.contains(point.secondsMax));
    }
}

// Property: the legend gives each curve's least-squares slope in log-log, computed here: close to
// 2 for exact attention and 1 for linear attention.
void TestTimingPanel::chartLegendGivesTheFittedSlope()
{
    const SweepResult result = handMadeResult();
    TimingChart chart;
    chart.setResult(result);
    for (const TimedMethod& method : result.spec.methods) {
        const double slope = slopeOf(okPoints(result, method));
        QVERIFY(std::abs(slope - (isApproximation(method.algorithm) ? 1.0 : 2.0)) < 0.05);
        const QString expected =
            QStringLiteral("%1  slope\u00a0%2").arg(titleOf(method)).arg(slope, 0, 'f', 2);
        QCOMPARE(chart.legendText(method), expected);
        bool inLegend = false;
        for (int i = 0; i < chart.legend->itemCount(); ++i) {
            auto* item = qobject_cast<QCPPlottableLegendItem*>(chart.legend->item(i));
            inLegend |= item && item->plottable()->name() == expected;
        }
        QVERIFY2(inLegend, qPrintable(expected));
    }
}

void TestTimingPanel::chartMarksTheCrossover_data()
{
    QTest::addColumn<bool>("withStreaming");
    QTest::addColumn<Method>("reference");
    QTest::newRow("against exact streaming") << true << Method::ExactStreaming;
    QTest::newRow("against exact materialised, without streaming")
        << false << Method::ExactMaterialised;
}

// Property: each linear method's crossover is marked at the length computed here, against exact
// streaming of the same causality when the sweep has it, else exact materialised: a vertical line
// at that length (on screen, at its pixel) and a label with the length rounded to two digits.
void TestTimingPanel::chartMarksTheCrossover()
{
    QFETCH(bool, withStreaming);
    QFETCH(Method, reference);
    SweepResult result = handMadeResult();
    if (!withStreaming) {
        std::erase_if(result.points, [](const SweepPoint& point) {
            return point.method.algorithm == Method::ExactStreaming;
        });
        std::erase_if(result.spec.methods, [](const TimedMethod& method) {
            return method.algorithm == Method::ExactStreaming;
        });
    }
    TimingChart chart;
    chart.resize(1400, 600);
    chart.setResult(result);
    showAndReplot(&chart);

    int marked = 0;
    for (const TimedMethod& linear : {kFavor, kFavorCausal, kElu}) {
        const TimedMethod exact{reference, linear.causal};
        const double expected = crossoverOf(result, linear, exact);
        const TimingChart::Crossover* crossover = nullptr;
        for (const TimingChart::Crossover& candidate : chart.crossovers())
            if (candidate.method == linear)
                crossover = &candidate;
        if (!std::isfinite(expected)) {  // no causal materialised curve
            QVERIFY2(!crossover, qPrintable(linear.label()));
            continue;
        }
        ++marked;
        QVERIFY2(crossover, qPrintable(linear.label()));
        QCOMPARE(crossover->reference, exact);
        QVERIFY2(std::abs(crossover->length / expected - 1) < 1e-9,
                 qPrintable(QStringLiteral("%1: %2 vs %3")
                                .arg(linear.label())
                                .arg(crossover->length)
                                .arg(expected)));
        QCOMPARE(crossover->line->point1->key(), expected);
        QCOMPARE(crossover->line->point2->key(), expected);
        QVERIFY(crossover->line->visible());
        QCOMPARE(crossover->line->pen().style(), Qt::DashLine);
        const double x = chart.timeRect()->axis(QCPAxis::atBottom)->coordToPixel(expected);
        QVERIFY(std::abs(crossover->line->point1->pixelPosition().x() - x) < 0.5);
        QVERIFY(x > chart.timeRect()->left() && x < chart.timeRect()->right());
        const double rounded =
            std::round(expected / std::pow(10.0, std::floor(std::log10(expected)) - 1)) *
            std::pow(10.0, std::floor(std::log10(expected)) - 1);
        QCOMPARE(crossover->label->text(),
                 QStringLiteral("%1: L \u2248 %2")
                     .arg(titleOf(linear))
                     .arg(QLocale(QLocale::English).toString(qlonglong(rounded))));
    }
    QCOMPARE(int(chart.crossovers().size()), marked);
    QVERIFY(marked >= 2);
}

// Property: a point skipped for the memory budget is not drawn as a measurement, but a cross at
// its length along the top of the time plot and a note naming the method and the budget say it
// was skipped; its working set still shows in the memory plot, with the budget line.
void TestTimingPanel::chartAnnotatesPointsSkippedForMemory()
{
    const SweepResult result = handMadeResult();
    TimingChart chart;
    chart.resize(1400, 600);
    chart.setResult(result);
    showAndReplot(&chart);

    const TimingChart::MethodCurves* curves = chart.curves(kMaterialised);
    QVERIFY(curves);
    for (const QPointF& point : graphData(curves->time))
        QVERIFY(point.x() < 16384);
    const QVector<QPointF> crosses = graphData(curves->skipped);
    QCOMPARE(crosses.size(), 1);
    QCOMPARE(crosses[0].x(), 16384.0);
    const QCPAxis* timeAxis = chart.timeRect()->axis(QCPAxis::atLeft);
    const double crossY = timeAxis->coordToPixel(crosses[0].y());
    QVERIFY(crossY > chart.timeRect()->top() && crossY < chart.timeRect()->top() + 20);
    QVERIFY(curves->skippedNote && curves->skippedNote->visible());
    QCOMPARE(curves->skippedNote->text(),
             QStringLiteral(u"Exact, materialised skipped for L \u2265 16,384: over the memory "
                            u"budget"));
    QVERIFY(QRectF(chart.timeRect()->rect()).contains(textBox(curves->skippedNote)));
    QCOMPARE(graphData(curves->model).back().x(), 16384.0);

    // Only the skipped method has a note.
    for (const TimingChart::MethodCurves& other : chart.allCurves())
        QCOMPARE(other.skippedNote != nullptr, other.method == kMaterialised);
}

// Property: a cancelled point is simply absent: no data, no cross, no note.
void TestTimingPanel::chartLeavesCancelledPointsOut()
{
    TimingChart chart;
    chart.setResult(handMadeResult());
    const TimingChart::MethodCurves* curves = chart.curves(kElu);
    QVERIFY(curves);
    for (const QCPGraph* graph : {curves->time, curves->model, curves->peak})
        for (const QPointF& point : graphData(graph))
            QVERIFY(point.x() < 16384);
    QCOMPARE(curves->skipped->dataCount(), 0);
    QVERIFY(!curves->skippedNote);
}

// Property: with every linear method crossing exact attention at about the same length, the
// crossover labels are stacked so that no two overlap, all inside the time plot, at the sizes of
// the window and of an export, and as narrow as the chart in a 1280 x 800 window (about 400
// pixels), where a label wider than the plot gives the length alone ("L ≈ 950"; the whole label,
// "Trigonometric: L ≈ 950", was cut at the plot's edge). Ten labels, one a row there, take about
// 200 pixels: the narrow chart is tall enough for them.
void TestTimingPanel::chartLabelsDoNotOverlap()
{
    SweepResult result;
    for (const Method algorithm :
         {Method::ExactStreaming, Method::FavorPositive, Method::FavorHyperbolic, Method::FavorTrig,
          Method::FavorRelu, Method::Elu})
        for (const bool causal : {false, true})
            result.spec.methods.push_back({algorithm, causal});
    result.spec.lengths = logSpacedLengths(256, 8192, 1);
    for (const Eigen::Index length : result.spec.lengths) {
        int k = 0;
        for (const TimedMethod& method : result.spec.methods) {
            const double l = double(length);
            const double seconds =
                isApproximation(method.algorithm) ? (1 + 0.05 * ++k) * 2e-7 * l : 2e-10 * l * l;
            result.points.push_back(okPoint(method, length, seconds));
        }
    }
    TimingChart chart;
    chart.setResult(result);
    QCOMPARE(chart.crossovers().size(), std::size_t(10));
    for (const QSize size : {QSize(1400, 600), QSize(800, 500), QSize(400, 700)}) {
        chart.resize(size);
        showAndReplot(&chart);
        const QRectF plot = chart.timeRect()->rect();
        for (std::size_t i = 0; i < chart.crossovers().size(); ++i) {
            const TimingChart::Crossover& crossover = chart.crossovers()[i];
            QCOMPARE(crossover.label->text(),
                     size.width() > 400 ? crossover.text : crossover.briefText);
            const QRectF box = textBox(crossover.label);
            QVERIFY2(plot.adjusted(-1, -1, 1, 1).contains(box),
                     qPrintable(crossover.label->text()));
            for (std::size_t j = 0; j < i; ++j) {
                QVERIFY2(!box.intersects(textBox(chart.crossovers()[j].label)),
                         qPrintable(crossover.label->text() + QStringLiteral(" / ") +
                                    chart.crossovers()[j].label->text()));
            }
        }
    }
}

// Property: clear() removes every curve and mark and shows the hint alone.
void TestTimingPanel::chartClearShowsTheHint()
{
    TimingChart chart;
    chart.resize(1400, 600);
    chart.setResult(handMadeResult());
    QVERIFY(chart.hasResult());
    QVERIFY(!chart.hint()->visible());
    chart.clear();
    showAndReplot(&chart);
    QVERIFY(!chart.hasResult());
    QVERIFY(chart.allCurves().empty());
    QVERIFY(chart.crossovers().empty());
    QCOMPARE(chart.legend->itemCount(), 0);
    QVERIFY(chart.hint()->visible());
    QVERIFY(!chart.hint()->text().isEmpty());
    for (int i = 0; i < chart.plottableCount(); ++i)
        QCOMPARE(chart.plottable(i)->interface1D()->dataCount(), 0);
    QVERIFY(!chart.timeRect()->axis(QCPAxis::atBottom)->visible());
}

// Property: every control of the panel says what it means in a tooltip.
void TestTimingPanel::panelControlsHaveTooltips()
{
    TimingPanel panel;
    QList<QWidget*> controls;
    for (QAbstractButton* button : panel.findChildren<QAbstractButton*>())
        if (!panel.table()->isAncestorOf(button))  // the table's corner button
            controls.append(button);
    for (QAbstractSpinBox* box : panel.findChildren<QAbstractSpinBox*>())
        controls.append(box);
    QVERIFY(controls.size() >= 7 + 2 + 7 + 3);
    for (QWidget* control : controls)
        QVERIFY2(!control->toolTip().isEmpty(), qPrintable(control->objectName()));
}

// Property: Run measures a tiny sweep (2 methods x 2 lengths) on the worker thread and finishes:
// the chart draws the 4 points with the medians measured, the table has one row per method with
// its slope and rate, the sgemm line gives the rate measured in the run.
void TestTimingPanel::panelRunsATinySweep()
{
    TimingPanel panel;
    panel.resize(1200, 800);
    chooseSweep(panel, {Method::ExactStreaming, Method::Elu}, 64, 128, 16, 16);
    QCOMPARE(panel.spec().methods, (std::vector<TimedMethod>{kExact, kElu}));
    QCOMPARE(panel.spec().lengths, (std::vector<Eigen::Index>{64, 128}));
    showAndReplot(&panel);

    QSignalSpy finished(&panel, &TimingPanel::sweepFinished);
    QSignalSpy running(&panel, &TimingPanel::runningChanged);
    QTest::mouseClick(child<QPushButton>(panel, "run"), Qt::LeftButton);
    QVERIFY(panel.isRunning());
    QVERIFY(!child<QPushButton>(panel, "run")->isEnabled());
    QVERIFY(finished.wait(kSweepTimeoutMs));
    QVERIFY(!panel.isRunning());
    QCOMPARE(running.size(), 2);
    QCOMPARE(running[0][0].toBool(), true);
    QCOMPARE(running[1][0].toBool(), false);

    const SweepResult& result = panel.result();
    QCOMPARE(result.points.size(), std::size_t(4));
    for (const SweepPoint& point : result.points)
        QCOMPARE(point.status, PointStatus::Ok);
    QCOMPARE(chartPointCount(panel), 4);
    for (const TimedMethod& method : {kExact, kElu}) {
        const QVector<QPointF> plotted = graphData(panel.chart()->curves(method)->time);
        const std::vector<SweepPoint> points = okPoints(result, method);
        QCOMPARE(plotted.size(), 2);
        for (int i = 0; i < 2; ++i)
            QCOMPARE(plotted[i], QPointF(double(points[std::size_t(i)].length),
                                         points[std::size_t(i)].secondsMedian));
    }
    QCOMPARE(child<QProgressBar>(panel, "progress")->value(), 4);

    const QTableWidget* table = panel.table();
    QCOMPARE(table->rowCount(), 2);
    // The methods by their titles, as the legend names them (not the command line's ids).
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("Exact, streaming"));
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("elu+1 linear attention"));
    QCOMPARE(table->item(0, 1)->text(), QString::number(fittedSlope(result, kExact), 'f', 2));
    QCOMPARE(table->item(1, 3)->text(), QStringLiteral("128"));
    QCOMPARE(table->item(1, 4)->text(), QString::number(okPoints(result, kElu)[1].gflops, 'f', 1));
    QVERIFY(table->item(1, 5)->text().endsWith(QLatin1Char('%')));
    QVERIFY(result.sgemmGflops > 0);
    QVERIFY2(panel.sgemmText().contains(QString::number(result.sgemmGflops, 'f', 0) +
                                        QStringLiteral(" GFLOP/s")),
             qPrintable(panel.sgemmText()));
    QVERIFY(panel.statusText().startsWith(QStringLiteral("Finished")));
}

// Property: with no method chosen, Run does nothing but say so.
void TestTimingPanel::panelWithoutMethodsDoesNotRun()
{
    TimingPanel panel;
    chooseSweep(panel, {}, 64, 128, 16, 16);
    QSignalSpy running(&panel, &TimingPanel::runningChanged);
    panel.run();
    QVERIFY(!panel.isRunning());
    QCOMPARE(running.size(), 0);
    QVERIFY(panel.statusText().contains(QStringLiteral("method")));
}

// Property: points reach the chart while the sweep runs; cancel() then stops it within a few
// seconds, and every point measured before stays on the chart and in the result, the rest
// marked cancelled.
void TestTimingPanel::panelCancelStopsPromptlyAndKeepsPoints()
{
    TimingPanel panel;
    chooseSweep(panel, {Method::ExactStreaming, Method::FavorPositive, Method::Elu}, 64, 65536, 64,
                64, 3);
    QSignalSpy finished(&panel, &TimingPanel::sweepFinished);
    panel.run();
    QTRY_VERIFY_WITH_TIMEOUT(chartPointCount(panel) >= 2, kSweepTimeoutMs);
    QVERIFY(panel.isRunning());
    const int seen = chartPointCount(panel);

    QElapsedTimer clock;
    clock.start();
    panel.cancel();
    QVERIFY(finished.wait(kSweepTimeoutMs));
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(!panel.isRunning());

    const SweepResult& result = panel.result();
    QCOMPARE(result.points.size(), std::size_t(3 * 11));
    const auto ok = std::count_if(result.points.begin(), result.points.end(),
                                  [](const SweepPoint& p) { return p.status == PointStatus::Ok; });
    const auto cancelled =
        std::count_if(result.points.begin(), result.points.end(),
                      [](const SweepPoint& p) { return p.status == PointStatus::Cancelled; });
    QVERIFY(ok >= seen);
    QVERIFY(cancelled > 0);
    QCOMPARE(chartPointCount(panel), int(ok));
    QVERIFY(panel.statusText().startsWith(QStringLiteral("Cancelled")));
}

// Property: destroying the panel while a long sweep runs stops the worker and returns promptly.
void TestTimingPanel::panelDestroyedWhileRunningStopsTheSweep()
{
    auto panel = std::make_unique<TimingPanel>();
    chooseSweep(*panel, {Method::ExactMaterialised, Method::ExactStreaming}, 1024, 65536, 64, 64,
                5);
    panel->run();
    QTRY_VERIFY_WITH_TIMEOUT(chartPointCount(*panel) >= 1, kSweepTimeoutMs);
    QElapsedTimer clock;
    clock.start();
    panel.reset();
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
}

// Property: state() then setState() on a new panel restores the controls and shows the same
// points without running anything.
void TestTimingPanel::panelStateRoundTripsWithoutRunning()
{
    TimingPanel first;
    chooseSweep(first, {Method::ExactStreaming, Method::Elu}, 64, 128, 16, 16);
    child<QCheckBox>(first, "timingCausal")->setChecked(true);
    child<QSpinBox>(first, "threads")->setValue(1);
    QVERIFY(sweepFinishes(first, kSweepTimeoutMs));
    // Through text, as the session file keeps it.
    const QJsonObject state =
        QJsonDocument::fromJson(QJsonDocument(first.state()).toJson()).object();

    TimingPanel second;
    QSignalSpy running(&second, &TimingPanel::runningChanged);
    second.setState(state);
    QVERIFY(!second.isRunning());
    QCOMPARE(running.size(), 0);
    QCOMPARE(second.spec().toJson(), first.spec().toJson());
    QCOMPARE(child<QSpinBox>(second, "minLength")->value(), 64);
    QCOMPARE(child<QSpinBox>(second, "threads")->value(), 1);
    QVERIFY(child<QCheckBox>(second, "timingCausal")->isChecked());
    QCOMPARE(second.result().toJson(), first.result().toJson());
    QCOMPARE(chartPointCount(second), 8);
    for (const TimingChart::MethodCurves& curves : first.chart()->allCurves())
        QCOMPARE(graphData(second.chart()->curves(curves.method)->time), graphData(curves.time));
    QCOMPARE(second.table()->rowCount(), 4);
    for (int row = 0; row < 4; ++row)
        for (int column = 0; column < second.table()->columnCount(); ++column)
            QCOMPARE(second.table()->item(row, column)->text(),
                     first.table()->item(row, column)->text());
    QCOMPARE(second.sgemmText(), first.sgemmText());
}

// Property: a malformed state is refused with a message naming the field, and the panel keeps
// what it showed.
void TestTimingPanel::panelRejectsAMalformedState()
{
    TimingPanel panel;
    SweepResult result = handMadeResult();
    QJsonObject state = panel.state();
    state[QLatin1String("result")] = result.toJson();
    panel.setState(state);
    QCOMPARE(chartPointCount(panel),
             int(okPoints(result, kMaterialised).size() + okPoints(result, kExact).size() +
                 okPoints(result, kExactCausal).size() + okPoints(result, kFavor).size() +
                 okPoints(result, kFavorCausal).size() + okPoints(result, kElu).size()));
    const QJsonObject before = panel.state();

    QJsonObject bad = state;
    bad[QLatin1String("points_per_octave")] = 9;
    const QString message = test::thrownMessage<InputError>([&] { panel.setState(bad); });
    QVERIFY2(message.contains(QStringLiteral("points_per_octave")), qPrintable(message));
    QCOMPARE(panel.state(), before);
}

void TestTimingPanel::panelExportsTheChart_data()
{
    QTest::addColumn<FigureFormat>("format");
    QTest::newRow("png") << FigureFormat::Png;
    QTest::newRow("svg") << FigureFormat::Svg;
    QTest::newRow("pdf") << FigureFormat::Pdf;
}

// Property: a linear method with no exact curve of its causality gives no crossover, and says which
// causality has none: the non-causal exact curves were on the chart beside "no exact curve".
void TestTimingPanel::tableNamesTheCausalityWithoutAnExactCurve()
{
    SweepResult result = handMadeResult();
    std::erase_if(result.points,
                  [](const SweepPoint& point) { return point.method == kExactCausal; });
    std::erase(result.spec.methods, kExactCausal);
    TimingPanel panel;
    QJsonObject state = panel.state();
    state[QLatin1String("result")] = result.toJson();
    panel.setState(state);
    const QTableWidget* table = panel.table();
    QStringList crossovers;
    for (int row = 0; row < table->rowCount(); ++row)
        crossovers << table->item(row, 0)->text() + QStringLiteral(": ") +
                          table->item(row, 2)->text();
    QVERIFY2(crossovers.contains(titleOf(kFavorCausal) + QStringLiteral(": no causal exact curve")),
             qPrintable(crossovers.join(QStringLiteral("; "))));
    QVERIFY2(crossovers.filter(titleOf(kFavor) + QStringLiteral(": L \u2248")).size() == 1,
             qPrintable(crossovers.join(QStringLiteral("; "))));
}

// Property: the chart exports as a valid file of each format: a PNG at twice the chart's size, an
// SVG that an SVG renderer accepts, a complete PDF.
void TestTimingPanel::panelExportsTheChart()
{
    QFETCH(FigureFormat, format);
    TimingPanel panel;
    panel.resize(1200, 800);
    QJsonObject state = panel.state();
    state[QLatin1String("result")] = handMadeResult().toJson();
    panel.setState(state);
    showAndReplot(&panel);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("timing.") + figureFormatName(format));
    panel.exportChart(path, format);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    switch (format) {
        case FigureFormat::Png: {
            QImage image;
            QVERIFY(image.loadFromData(bytes, "PNG"));
            QCOMPARE(image.size(), 2 * panel.chart()->size());
            // Not blank: the curves' colours are there.
            QSet<QRgb> colours;
            for (int y = 0; y < image.height(); y += 4)
                for (int x = 0; x < image.width(); x += 4)
                    colours.insert(image.pixel(x, y));
            QVERIFY(colours.size() > 50);
            break;
        }
        case FigureFormat::Svg:
            QVERIFY(bytes.contains("<svg"));
            QVERIFY(QSvgRenderer(bytes).isValid());
            QVERIFY(bytes.contains("Attention cost against sequence length"));
            break;
        case FigureFormat::Pdf:
            QVERIFY(bytes.startsWith("%PDF-"));
            QVERIFY(bytes.trimmed().endsWith("%%EOF"));
            break;
    }
}

// Property: the data export is byte for byte sweepCsv of the result shown.
void TestTimingPanel::panelExportsTheCsv()
{
    TimingPanel panel;
    QJsonObject state = panel.state();
    state[QLatin1String("result")] = handMadeResult().toJson();
    panel.setState(state);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("timing.csv"));
    panel.exportCsv(path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), sweepCsv(panel.result()));
    QVERIFY(sweepCsv(panel.result()).startsWith("# sgemm_gflops=150\n"));
    // A folder that does not exist: an error naming the file, and nothing written.
    const QString bad = dir.filePath(QStringLiteral("missing/timing.csv"));
    const QString message = test::thrownMessage<OutputError>([&] { panel.exportCsv(bad); });
    QVERIFY2(message.contains(QStringLiteral("timing.csv")), qPrintable(message));
    QVERIFY(!QFile::exists(bad));
}

QTEST_MAIN(TestTimingPanel)
#include "test_timing_panel.moc"

// The Error analysis page: the chart of an error sweep (from hand-made results, checked against
// statistics and Lemma 2 computed here), the panel that runs sweeps on a worker, driven as a user
// would, and the distribution view of the error map (its counts against a direct count).
#include "ui/errors/error_analysis_panel.h"
#include "ui/errors/error_chart.h"
#include "ui/experiment/error_distribution_view.h"
#include "errors.h"
#include "inputs/inputs.h"
#include "attention/random.h"
#include "test_support.h"
#include "lemma_support.h"
#include "chart_support.h"
#include "widget_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <set>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

constexpr int kSweepTimeoutMs = 60'000;

// A result by hand: FAVOR+ positive (both projections) and elu+1 over m = 16, 32, 64, with
// 5 seeds whose errors are c m^-1/2 (1 + 0.1 k) for seed k (iid 20% above orthogonal), and kernel
// squared errors 2^k / m.
ErrorSweepResult handMadeResult()
{
    ErrorSweepResult result;
    ErrorSweepSpec& spec = result.spec;
    spec.methods = {Method::FavorPositive, Method::Elu};
    spec.values = {16, 32, 64};
    spec.seeds = 5;
    result.inputLength = 20;
    result.headDim = 8;
    result.heads = 1;
    result.scale = 1 / std::sqrt(8.0);
    result.pairQuery = VectorD::Constant(8, 0.3);
    result.pairKey = VectorD::Constant(8, -0.1);
    result.pairKey[0] = 0.5;
    for (const double m : spec.values) {
        for (const ProjectionKind projection : spec.projections) {
            for (std::uint64_t k = 0; k < 5; ++k) {
                ErrorRow row;
                row.method = Method::FavorPositive;
                row.projection = projection;
                row.seed = k;
                row.value = m;
                row.features = int(m);
                row.length = 20;
                const double iid = projection == ProjectionKind::Iid ? 1.2 : 1.0;
                row.metrics.relFrobeniusAttention = iid * 2 / std::sqrt(m) * (1 + 0.1 * double(k));
                row.metrics.meanTotalVariation = 0.5 * row.metrics.relFrobeniusAttention;
                row.metrics.relFrobeniusOutput = 0.8 * row.metrics.relFrobeniusAttention;
                row.kernelSquaredError = iid * std::pow(2.0, double(k)) / m;
                result.rows.push_back(row);
            }
        }
        ErrorRow elu;
        elu.method = Method::Elu;
        elu.value = m;
        elu.length = 20;
        elu.metrics.relFrobeniusAttention = 0.3;
        elu.kernelSquaredError = 0.01;
        result.rows.push_back(elu);
    }
    return result;
}

// A curve as people read it, from the registry: the method's title, and its rows for a method
// that draws W ("FAVOR+ positive, orthogonal rows"; not the command line's "favor-positive
// orthogonal").
QString titleOf(const ErrorCurve& curve)
{
    const QString title = methodInfo(curve.method).title;
    return curve.projection ? title + QStringLiteral(", ") + projectionKindName(*curve.projection) +
                                  QStringLiteral(" rows")
                            : title;
}

QVector<QPointF> graphData(const QCPGraph* graph)
{
    QVector<QPointF> points;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        points.append(QPointF(it->key, it->value));
    return points;
}

// The samples of `metric` for one curve at one value, from the rows.
std::vector<double> samplesOf(const ErrorSweepResult& result, Method method,
                              std::optional<ProjectionKind> projection, double value,
                              ErrorMetric metric)
{
    std::vector<double> samples;
    for (const ErrorRow& row : result.rows)
        if (row.method == method && row.projection == projection && row.value == value)
            samples.push_back(row.metric(metric));
    return samples;
}

// A panel with a random input of L rows of dimension d, FAVOR+ positive and trigonometric, the
// values, the seeds.
void prepare(ErrorAnalysisPanel& panel, int length, int d, const QString& values, int seeds)
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = length;
    spec.input.headDim = d;
    panel.setInput(spec, std::make_shared<const AttentionInput>(buildInput(spec.input)));
    for (const MethodInfo& info : approximationMethods())
        child<QCheckBox>(panel, qPrintable(QStringLiteral("errorsMethod-") + info.name))
            ->setChecked(info.method == Method::FavorPositive || info.method == Method::FavorTrig);
    child<QLineEdit>(panel, "errorsValues")->setText(values);
    child<QSpinBox>(panel, "errorsSeeds")->setValue(seeds);
}

// A row-stochastic L x L matrix with entries of very different sizes, from a seeded generator.
MatrixD randomAttention(int length, std::uint64_t seed, double spread)
{
    Rng rng(seed, RandomStream::RandomInput);
    MatrixD p(length, length);
    for (int i = 0; i < length; ++i) {
        for (int j = 0; j < length; ++j)
            p(i, j) = std::exp(spread * rng.normal());
        p.row(i) /= p.row(i).sum();
    }
    return p;
}

}  // namespace

class TestErrorPanel : public QObject {
    Q_OBJECT

private slots:
    void chartDrawsMeansAndPercentileBands();
    void chartKernelViewDrawsLemma2FromTheFormula();
    void chartNormSweepHasALinearAxis();
    void chartFitsNoSlopeToRoundingNoise();
    void chartAgainstCostDrawsTheParetoFront();
    void chartLegendNamesTheMethodsByTheirTitles();
    void chartAxisTextFitsSmallSizes();
    void chartLegendWrapsToANarrowChart();

    void panelRunsATinySweep();
    void panelWithoutInputDoesNotRun();
    void panelLeavesOutMethodsWithoutACausalForm();
    void panelCancelStopsPromptlyAndKeepsRows();
    void panelExportsPlotAndData();
    void panelStateRoundTripsWithoutComputing();
    void panelRejectsAMalformedState();
    void panelNotesAResultOfAnEarlierInput();

    void distributionCountsMatchADirectCount_data();
    void distributionCountsMatchADirectCount();
    void distributionViewDrawsBothHistograms();
};

// Property: one curve per method and projection (a map without W: one), whose mean graph goes
// through the mean over the seeds and whose band runs from the 10th to the 90th percentile
// (computed here), filled between them; orthogonal solid, iid dashed; log axes with units; the
// legend gives the fitted slope (-1/2 here, by construction).
void TestErrorPanel::chartDrawsMeansAndPercentileBands()
{
    const ErrorSweepResult result = handMadeResult();
    ErrorChart chart;
    chart.resize(1200, 760);
    chart.setResult(result, ErrorMetric::RelFrobeniusAttention);
    const int plottables = chart.plottableCount();
    chart.setResult(result, ErrorMetric::RelFrobeniusAttention);
    QCOMPARE(chart.plottableCount(), plottables);
    QCOMPARE(chart.curves().size(), std::size_t(3));

    for (const ErrorChart::CurvePlot& plot : chart.curves()) {
        const ErrorCurve& curve = plot.curve;
        const QVector<QPointF> means = graphData(plot.mean);
        const QVector<QPointF> lows = graphData(plot.bandLow);
        const QVector<QPointF> highs = graphData(plot.bandHigh);
        QCOMPARE(means.size(), 3);
        for (int i = 0; i < 3; ++i) {
            std::vector<double> samples =
                samplesOf(result, curve.method, curve.projection, result.spec.values[i],
                          ErrorMetric::RelFrobeniusAttention);
            std::sort(samples.begin(), samples.end());
            double mean = 0;
            for (const double x : samples)
                mean += x / double(samples.size());
            QVERIFY(std::abs(means[i].y() - mean) < 1e-12);
            // n = 5: h = 0.4 and 3.6.
            const double p10 =
                samples.size() == 1 ? samples[0] : samples[0] + 0.4 * (samples[1] - samples[0]);
            const double p90 =
                samples.size() == 1 ? samples[0] : samples[3] + 0.6 * (samples[4] - samples[3]);
            QVERIFY(std::abs(lows[i].y() - p10) < 1e-12);
            QVERIFY(std::abs(highs[i].y() - p90) < 1e-12);
            QCOMPARE(means[i].x(), result.spec.values[i]);
        }
        QCOMPARE(plot.bandHigh->channelFillGraph(), plot.bandLow);
        QVERIFY(plot.bandHigh->brush().style() != Qt::NoBrush);
        QVERIFY(!plot.errorBars);
        const bool iid = curve.projection == ProjectionKind::Iid;
        QCOMPARE(plot.mean->pen().style(), iid ? Qt::DashLine : Qt::SolidLine);
        if (curve.method == Method::FavorPositive)
            QCOMPARE(chart.legendText(curve.label()),
                     titleOf(curve) + QStringLiteral("  slope\u00a0-0.50"));
    }
    QCPAxis* x = chart.plotRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = chart.plotRect()->axis(QCPAxis::atLeft);
    QCOMPARE(x->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(y->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(x->label().contains("random features, landmarks"));
    QVERIFY(y->label().contains("(ratio)"));
    QVERIFY(chart.title().startsWith("Relative Frobenius error of P"));
    QVERIFY(chart.subtitle().contains("10th to 90th percentile"));

    // Every value drawn lies inside the axes.
    chart.replot();
    for (const ErrorChart::CurvePlot& plot : chart.curves())
        for (const QCPGraph* graph : {plot.mean, plot.bandLow, plot.bandHigh})
            for (const QPointF& point : graphData(graph))
                QVERIFY(x->range().contains(point.x()) && y->range().contains(point.y()));
    const QImage image = chart.toPixmap(1200, 760).toImage();
    QVERIFY(colourCount(image) > 50);
    keepGrab(image, "error_chart_features.png");
}

// Property: the kernel view draws, for each map Lemma 2 covers, a curve whose every sample is the
// formula of docs/design.md 2.10 at m for the result's pair (recomputed), and the empirical means
// with bars of one standard error (computed here).
void TestErrorPanel::chartKernelViewDrawsLemma2FromTheFormula()
{
    const ErrorSweepResult result = handMadeResult();
    ErrorChart chart;
    chart.resize(1200, 760);
    chart.setResult(result, ErrorMetric::KernelMse);
    QCOMPARE(chart.theoryCurves().size(), std::size_t(1));  // elu+1 has none
    const ErrorChart::TheoryCurve& theory = chart.theoryCurves()[0];
    QCOMPARE(theory.method, Method::FavorPositive);
    const QVector<QPointF> samples = graphData(theory.graph);
    QVERIFY(samples.size() > 50);
    QVERIFY(samples.front().x() < 16 && samples.back().x() > 64);
    for (const QPointF& sample : samples) {
        const double expected =
            designLemma2(Method::FavorPositive, sample.x(), result.pairQuery, result.pairKey);
        QVERIFY(std::abs(sample.y() / expected - 1) < 1e-12);
    }
    for (const ErrorChart::CurvePlot& plot : chart.curves()) {
        QVERIFY(plot.errorBars);
        QVERIFY(!plot.bandLow);
        const QVector<QPointF> means = graphData(plot.mean);
        for (int i = 0; i < means.size(); ++i) {
            const std::vector<double> samples =
                samplesOf(result, plot.curve.method, plot.curve.projection, result.spec.values[i],
                          ErrorMetric::KernelMse);
            const double n = double(samples.size());
            double mean = 0, squares = 0;
            for (const double x : samples)
                mean += x / n;
            for (const double x : samples)
                squares += (x - mean) * (x - mean);
            const double standardError = n > 1 ? std::sqrt(squares / (n - 1) / n) : 0;
            QVERIFY(std::abs(means[i].y() - mean) < 1e-12);
            QVERIFY(std::abs(plot.errorBars->data()->at(i).errorPlus - standardError) < 1e-12);
        }
    }
    QVERIFY(chart.plotRect()->axis(QCPAxis::atLeft)->label().contains("kernel units"));
    QVERIFY(chart.title().contains("Lemma 2"));
    chart.replot();
    const QImage image = chart.toPixmap(1200, 760).toImage();
    QVERIFY(colourCount(image) > 50);
    keepGrab(image, "error_chart_kernel.png");
}

// Property: a norm sweep puts the multiplier on a linear axis; the others stay log.
void TestErrorPanel::chartNormSweepHasALinearAxis()
{
    ErrorSweepResult result = handMadeResult();
    result.spec.sweep = ErrorSweepKind::Norm;
    result.spec.values = {0.5, 1, 2};
    for (ErrorRow& row : result.rows)
        row.value = row.value == 16 ? 0.5 : row.value == 32 ? 1 : 2;
    ErrorChart chart;
    chart.setResult(result, ErrorMetric::MeanTotalVariation);
    QCPAxis* x = chart.plotRect()->axis(QCPAxis::atBottom);
    QCOMPARE(x->scaleType(), QCPAxis::stLinear);
    QVERIFY(x->label().contains("norm multiplier"));
    QVERIFY(chart.plotRect()->axis(QCPAxis::atLeft)->label().contains("(probability)"));
    QCOMPARE(chart.legendText("favor-positive orthogonal"),
             QStringLiteral("FAVOR+ positive, orthogonal rows"));
}

// Property: Run computes a tiny sweep (2 methods x 2 projections x 2 values x 2 seeds) on the
// worker and finishes: the result has every row, the chart a curve per method and projection,
// the progress bar is full and the status says it finished. The metric changes the chart
// without computing again.
// Property: against the flop count the curves are drawn at each point's flops, log-log, and the
// Pareto front is the staircase through the points no cheaper point beats (worked out here by
// hand: elu at 5,000 flops, then FAVOR+ orthogonal at m = 32 and 64); the Lemma 2 curves, which
// are against m, are left out.
void TestErrorPanel::chartAgainstCostDrawsTheParetoFront()
{
    ErrorSweepResult result = handMadeResult();
    for (ErrorRow& row : result.rows) {
        row.flops = row.method == Method::Elu ? 5000 : 1000 * row.value;
        if (row.method == Method::Elu)
            row.metrics.relFrobeniusAttention = 0.5;
    }
    ErrorChart chart;
    chart.resize(1200, 760);
    chart.setResult(result, ErrorMetric::RelFrobeniusAttention, ErrorAxis::Flops);
    QVERIFY(chart.paretoFront());
    // FAVOR+ orthogonal's means are 2 / sqrt(m) times the mean of 1 + 0.1 k over k < 5 (1.2).
    const QVector<QPointF> expected{
        {5000, 0.5}, {32000, 2 / std::sqrt(32.0) * 1.2}, {64000, 2 / std::sqrt(64.0) * 1.2}};
    const QVector<QPointF> front = graphData(chart.paretoFront());
    QCOMPARE(front.size(), expected.size());
    for (int i = 0; i < front.size(); ++i) {
        QCOMPARE(front[i].x(), expected[i].x());
        QVERIFY(std::abs(front[i].y() - expected[i].y()) < 1e-12);
    }
    for (const ErrorChart::CurvePlot& plot : chart.curves())
        for (const QPointF& point : graphData(plot.mean))
            QVERIFY(point.x() == 5000 || point.x() == 16000 || point.x() == 32000 ||
                    point.x() == 64000);
    QCPAxis* x = chart.plotRect()->axis(QCPAxis::atBottom);
    QCOMPARE(x->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(x->label().contains("flops"));
    QVERIFY(chart.title().contains("equal cost"));

    chart.setResult(result, ErrorMetric::KernelMse, ErrorAxis::Flops);
    QVERIFY(chart.theoryCurves().empty());
    chart.setResult(result, ErrorMetric::KernelMse, ErrorAxis::Value);
    QVERIFY(!chart.theoryCurves().empty());
    QVERIFY(!chart.paretoFront());
}

// Property: a curve whose errors are all of float rounding's size (local attention whose window
// covers every pair: 1e-7 against exact) gets no slope in the legend but "(rounding only)"; the
// slope was fitted to the noise ("slope 0.15").
void TestErrorPanel::chartFitsNoSlopeToRoundingNoise()
{
    ErrorSweepResult result = handMadeResult();
    for (ErrorRow& row : result.rows)
        if (row.method == Method::Elu)
            row.metrics.relFrobeniusAttention = 1e-7 * (1 + 0.3 * std::log2(row.value));
    ErrorChart chart;
    chart.resize(1200, 760);
    chart.setResult(result, ErrorMetric::RelFrobeniusAttention);
    const QString elu = methodInfo(Method::Elu).name;
    QCOMPARE(chart.legendText(elu), methodInfo(Method::Elu).title + "  (rounding only)");
}

// Property: every entry of the legend but the bands' names its method by the registry's title, for
// people, in both views (the bands and the kernel MSE with Lemma 2), not by its command-line name;
// with its rows of W when the curves' rows differ, and when they are all alike, the subtitle says
// them once instead.
void TestErrorPanel::chartLegendNamesTheMethodsByTheirTitles()
{
    const ErrorSweepResult result = handMadeResult();
    ErrorChart chart;
    chart.resize(1200, 760);
    for (const ErrorMetric metric : {ErrorMetric::RelFrobeniusAttention, ErrorMetric::KernelMse}) {
        chart.setResult(result, metric);
        QStringList names;
        for (int i = 0; i < chart.legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(chart.legend->item(i)))
                names << item->plottable()->name();
        QVERIFY(names.size() >= 3);
        const QString bands = QStringLiteral("10th\u201390th percentile over the seeds");
        for (const QString& name : names)
            QVERIFY2(
                name == bands || std::any_of(result.spec.methods.begin(), result.spec.methods.end(),
                                             [&](Method method) {
                                                 return name.startsWith(methodInfo(method).title);
                                             }),
                qPrintable(name));
        for (const ErrorCurve& curve : errorCurves(result, metric))
            QVERIFY2(
                std::any_of(names.begin(), names.end(),
                            [&](const QString& name) { return name.startsWith(titleOf(curve)); }),
                qPrintable(titleOf(curve)));
        QVERIFY(!chart.subtitle().contains(QStringLiteral("W of")));
    }
    // With one kind of rows, the subtitle says it once and the legend names the method alone.
    ErrorSweepResult orthogonal = result;
    std::erase_if(orthogonal.rows,
                  [](const ErrorRow& row) { return row.projection == ProjectionKind::Iid; });
    orthogonal.spec.projections = {ProjectionKind::Orthogonal};
    chart.setResult(orthogonal, ErrorMetric::RelFrobeniusAttention);
    QVERIFY2(chart.subtitle().contains(QStringLiteral("W of orthogonal rows")),
             qPrintable(chart.subtitle()));
    QCOMPARE(chart.legendText(QStringLiteral("favor-positive orthogonal")),
             methodInfo(Method::FavorPositive).title + QStringLiteral("  slope\u00a0-0.50"));
}

// Property: at the sizes the chart has in a small window (1280 x 720 beside the controls, 1280 x
// 800 beside both docks, and smaller), no two tick labels overlap and both axis labels lie along
// their axes: "relative Frobenius error ‖P̂ − P‖ / ‖P‖ (ratio)" ran down past the plot into the x
// label, and the x label past the figure's right edge. A label takes two lines at most, the x
// label whole only in one (their brief forms where the whole needs more: four lines took the
// plot's room at 1280 x 800), never broken inside a norm; where it fits, it is whole.
void TestErrorPanel::chartAxisTextFitsSmallSizes()
{
    ErrorChart chart;
    chart.setResult(handMadeResult(), ErrorMetric::RelFrobeniusAttention);
    QCPAxis* x = chart.plotRect()->axis(QCPAxis::atBottom);
    for (const QSize size : {QSize(760, 520), QSize(600, 360), QSize(480, 320), QSize(320, 640)}) {
        chart.resize(size);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.replot();
        for (QCPAxis* axis : {x, chart.plotRect()->axis(QCPAxis::atLeft)}) {
            const QString where =
                QStringLiteral("%1x%2 %3").arg(size.width()).arg(size.height()).arg(axis->label());
            QVERIFY2(crowdedTickLabels(axis).isEmpty(),
                     qPrintable(where + QStringLiteral(": ") +
                                crowdedTickLabels(axis).join(QStringLiteral(", "))));
            QVERIFY2(axisLabelFitsItsAxis(axis), qPrintable(where));
            const QString label = axis->label();
            QVERIFY2(label.count('\n') <= 1, qPrintable(where));
            QVERIFY2(axis != x || !label.contains('\n') ||
                         label.simplified() != sweepAxisLabel(ErrorSweepKind::Features),
                     qPrintable(where));
            for (const QString& line : label.split('\n'))
                QVERIFY2(line.count(QChar(0x2016)) % 2 == 0, qPrintable(where));
        }
        if (size.width() == 760)
            QCOMPARE(x->label().simplified(), sweepAxisLabel(ErrorSweepKind::Features));
    }
}

// Property: every legend entry lies inside the figure, however narrow: an entry wider than the
// figure breaks onto more lines (at 1280 x 800 the Error analysis page's chart is about 320 pixels
// wide, and "FAVOR+ positive, orthogonal rows  slope -0.50" was cut at its right edge), while a
// wide chart keeps every entry on one line; the curves keep their whole names.
void TestErrorPanel::chartLegendWrapsToANarrowChart()
{
    const ErrorSweepResult result = handMadeResult();
    ErrorChart chart;
    chart.setResult(result, ErrorMetric::RelFrobeniusAttention);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const int line = QFontMetrics(chart.legend->font()).height();
    for (const int width : {1000, 420, 300, 240}) {
        chart.resize(width, 640);
        chart.replot();
        int tallest = 0;
        for (int i = 0; i < chart.legend->itemCount(); ++i) {
            const QCPAbstractLegendItem* item = chart.legend->item(i);
            if (!item)
                continue;
            // The entry's box lies in the figure and is as wide as its text (QCustomPlot draws
            // a text wider than its box past the box's edge).
            const QRect box = item->outerRect();
            const int needed = item->minimumOuterSizeHint().width();
            QVERIFY2(box.left() >= 0 && box.right() < width && needed <= box.width(),
                     qPrintable(QStringLiteral("%1 pixels: entry %2 spans %3 to %4, needs %5")
                                    .arg(width)
                                    .arg(i)
                                    .arg(box.left())
                                    .arg(box.right())
                                    .arg(needed)));
            tallest = std::max(tallest, box.height());
        }
        const QString where = QStringLiteral("%1 pixels: %2 high").arg(width).arg(tallest);
        if (width >= 420)  // the longest entry fits 420 pixels less the margins, not 300
            QVERIFY2(tallest < 2 * line, qPrintable(where));
        else
            QVERIFY2(tallest >= 2 * line, qPrintable(where));
    }
    ErrorCurve favor;
    favor.projection = ProjectionKind::Orthogonal;
    QCOMPARE(chart.legendText(favor.label()),
             titleOf(favor) + QStringLiteral("  slope\u00a0-0.50"));
}

void TestErrorPanel::panelRunsATinySweep()
{
    ErrorAnalysisPanel panel;
    panel.resize(1400, 800);
    prepare(panel, 16, 8, "4, 8", 2);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(child<QLabel>(panel, "errorsInput")->text().contains("L = 16"));
    QSignalSpy finished(&panel, &ErrorAnalysisPanel::sweepFinished);
    QSignalSpy running(&panel, &ErrorAnalysisPanel::runningChanged);
    QTest::mouseClick(child<QPushButton>(panel, "errorsRun"), Qt::LeftButton);
    QVERIFY(panel.isRunning() || finished.size() == 1);
    QVERIFY(finished.size() == 1 || finished.wait(kSweepTimeoutMs));
    QCOMPARE(running.size(), 2);
    QCOMPARE(panel.result().rows.size(), std::size_t(16));
    QVERIFY(!panel.result().cancelled);
    QCOMPARE(panel.chart()->curves().size(), std::size_t(4));
    QCOMPARE(child<QProgressBar>(panel, "errorsProgress")->value(), 16);
    QVERIFY2(panel.statusText().startsWith("Finished"), qPrintable(panel.statusText()));

    child<QComboBox>(panel, "errorsMetric")->setCurrentIndex(3);
    QCOMPARE(panel.errorMetric(), ErrorMetric::KernelMse);
    QCOMPARE(panel.chart()->errorMetric(), ErrorMetric::KernelMse);
    QCOMPARE(panel.chart()->theoryCurves().size(), std::size_t(2));
    QCOMPARE(running.size(), 2);
    QCoreApplication::processEvents();  // the chart's queued replot
    QVERIFY(colourCount(panel.chart()->grab().toImage()) > 50);
    keepGrab(panel.grab().toImage(), "error_panel.png");
}

// Property: without an input, or with values that are not numbers, Run only says so.
void TestErrorPanel::panelWithoutInputDoesNotRun()
{
    ErrorAnalysisPanel panel;
    QSignalSpy running(&panel, &ErrorAnalysisPanel::runningChanged);
    panel.run();
    QVERIFY(panel.statusText().contains("No input"));
    prepare(panel, 8, 4, "4, x", 1);
    panel.run();
    QVERIFY2(panel.statusText().startsWith("Values:"), qPrintable(panel.statusText()));
    QCOMPARE(running.size(), 0);
}

// Property: with a causal input, a method without a causal form (Nystrom) is greyed out and left
// out of the sweep, which runs the others instead of failing whole; a non-causal input takes it
// back, ticked as before.
void TestErrorPanel::panelLeavesOutMethodsWithoutACausalForm()
{
    ErrorAnalysisPanel panel;
    prepare(panel, 12, 4, "4", 1);
    auto* nystrom = child<QCheckBox>(panel, "errorsMethod-nystrom");
    nystrom->setChecked(true);
    ExperimentSpec causal;
    causal.input.kind = InputKind::Random;
    causal.input.length = 12;
    causal.input.headDim = 4;
    causal.causal = true;
    panel.setInput(causal, std::make_shared<const AttentionInput>(buildInput(causal.input)));
    QVERIFY(!nystrom->isEnabled());
    QVERIFY(nystrom->isChecked());
    const std::vector<Method> methods = panel.spec().methods;
    QCOMPARE(methods, (std::vector<Method>{Method::FavorPositive, Method::FavorTrig}));
    QVERIFY(sweepFinishes(panel, kSweepTimeoutMs));
    QVERIFY2(panel.statusText().startsWith("Finished"), qPrintable(panel.statusText()));

    causal.causal = false;
    panel.setInput(causal, std::make_shared<const AttentionInput>(buildInput(causal.input)));
    QVERIFY(nystrom->isEnabled());
    QCOMPARE(panel.spec().methods.size(), std::size_t(3));
}

// Property: rows reach the panel while the sweep runs; Cancel stops it within a few seconds,
// and the rows finished stay in the result and on the chart.
void TestErrorPanel::panelCancelStopsPromptlyAndKeepsRows()
{
    ErrorAnalysisPanel panel;
    prepare(panel, 512, 32, "16, 64, 256, 1024", 200);
    QSignalSpy finished(&panel, &ErrorAnalysisPanel::sweepFinished);
    panel.run();
    QTRY_VERIFY_WITH_TIMEOUT(panel.result().rows.size() >= 3, kSweepTimeoutMs);
    QVERIFY(panel.isRunning());
    QElapsedTimer clock;
    clock.start();
    QTest::mouseClick(child<QPushButton>(panel, "errorsCancel"), Qt::LeftButton);
    QVERIFY(finished.wait(kSweepTimeoutMs));
    QVERIFY2(clock.elapsed() < 3000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(panel.result().cancelled);
    const std::size_t kept = panel.result().rows.size();
    QVERIFY(kept >= 3 && int(kept) < panel.result().spec.rowCount());
    QVERIFY(panel.statusText().startsWith("Cancelled"));
    QVERIFY(!panel.chart()->curves().empty());
}

// Property: the chart exports as PNG, SVG and PDF (valid files), the data as the sweep's CSV.
void TestErrorPanel::panelExportsPlotAndData()
{
    QTemporaryDir dir;
    ErrorAnalysisPanel panel;
    prepare(panel, 16, 8, "4, 8", 2);
    QVERIFY(sweepFinishes(panel, kSweepTimeoutMs));
    panel.exportChart(dir.filePath("chart.png"), FigureFormat::Png);
    QVERIFY(!QImage(dir.filePath("chart.png")).isNull());
    panel.exportChart(dir.filePath("chart.svg"), FigureFormat::Svg);
    QVERIFY(QSvgRenderer(dir.filePath("chart.svg")).isValid());
    panel.exportChart(dir.filePath("chart.pdf"), FigureFormat::Pdf);
    QFile pdf(dir.filePath("chart.pdf"));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
    panel.exportCsv(dir.filePath("rows.csv"));
    QFile csv(dir.filePath("rows.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readAll(), errorSweepCsv(panel.result()));
    const QString message = attnlab::test::thrownMessage<OutputError>(
        [&] { panel.exportCsv(dir.filePath("no/such/folder/rows.csv")); });
    QVERIFY(message.contains("rows.csv"));
}

// Property: state() holds the controls and the rows; setState on a new panel restores both and
// shows the result without computing (no runningChanged).
void TestErrorPanel::panelStateRoundTripsWithoutComputing()
{
    ErrorAnalysisPanel panel;
    prepare(panel, 16, 8, "4, 8", 2);
    child<QComboBox>(panel, "errorsSweepKind")->setCurrentIndex(1);  // norm: its own values text
    child<QLineEdit>(panel, "errorsValues")->setText("0.5, 1.5");
    child<QSpinBox>(panel, "errorsFeatures")->setValue(12);
    QVERIFY(sweepFinishes(panel, kSweepTimeoutMs));
    panel.setErrorMetric(ErrorMetric::MeanTotalVariation);
    panel.setAxis(ErrorAxis::Seconds);
    const QJsonObject state = panel.state();

    ErrorAnalysisPanel restored;
    QSignalSpy running(&restored, &ErrorAnalysisPanel::runningChanged);
    restored.setState(state);
    QCOMPARE(running.size(), 0);
    QCOMPARE(restored.state(), state);
    QCOMPARE(restored.result().toJson(), panel.result().toJson());
    QCOMPARE(restored.errorMetric(), ErrorMetric::MeanTotalVariation);
    QCOMPARE(restored.axis(), ErrorAxis::Seconds);
    QCOMPARE(child<QLineEdit>(restored, "errorsValues")->text(), QStringLiteral("0.5, 1.5"));
    QCOMPARE(child<QSpinBox>(restored, "errorsFeatures")->value(), 12);
    QCOMPARE(restored.chart()->curves().size(), panel.chart()->curves().size());
    QVERIFY(restored.statusText().startsWith("Restored"));
    // The features sweep kept its own values text.
    child<QComboBox>(restored, "errorsSweepKind")->setCurrentIndex(0);
    QCOMPARE(child<QLineEdit>(restored, "errorsValues")->text(), QStringLiteral("4, 8"));
}

// Property: the chart's subtitle describes the input the sweep ran on, whatever the window's;
// when the window's input is another (the QA's: a session's sweep on text beside a model's
// input), the chart says that its sweep is of an earlier input, and no longer once the input is
// the sweep's again.
void TestErrorPanel::panelNotesAResultOfAnEarlierInput()
{
    ErrorAnalysisPanel panel;
    prepare(panel, 16, 8, "4, 8", 2);
    QVERIFY(sweepFinishes(panel, kSweepTimeoutMs));
    const QString subtitle = panel.chart()->subtitle();
    QVERIFY(subtitle.startsWith("random input, L = 16, d = 8"));
    const ExperimentSpec swept = panel.result().spec.experiment;
    ExperimentSpec other = swept;
    other.input.length = 25;
    panel.setInput(other, std::make_shared<const AttentionInput>(buildInput(other.input)));
    QVERIFY(child<QLabel>(panel, "errorsInput")->text().contains("L = 25"));
    QVERIFY(panel.chart()->subtitle().startsWith(subtitle));
    QVERIFY(panel.chart()->subtitle().endsWith(
        QStringLiteral("\u2014 from an earlier input: Run to sweep the current one")));

    // Restored from a session beside another input: noted as well.
    ErrorAnalysisPanel restored;
    restored.setState(panel.state());
    restored.setInput(other, std::make_shared<const AttentionInput>(buildInput(other.input)));
    QCOMPARE(restored.chart()->subtitle(), panel.chart()->subtitle());

    panel.setInput(swept, std::make_shared<const AttentionInput>(buildInput(swept.input)));
    QCOMPARE(panel.chart()->subtitle(), subtitle);
}

// Property: a malformed state throws InputError naming the field and changes nothing.
void TestErrorPanel::panelRejectsAMalformedState()
{
    ErrorAnalysisPanel panel;
    const QJsonObject good = panel.state();
    for (const auto& [key, value] :
         {std::pair{"methods", QJsonValue("favor-positive")}, std::pair{"seeds", QJsonValue(0)},
          std::pair{"sweep", QJsonValue("width")}, std::pair{"result", QJsonValue(3)}}) {
        QJsonObject bad = good;
        bad[key] = value;
        const QString message =
            attnlab::test::thrownMessage<InputError>([&] { panel.setState(bad); });
        QVERIFY2(message.startsWith(key), qPrintable(message));
        QCOMPARE(panel.state(), good);
    }
}

void TestErrorPanel::distributionCountsMatchADirectCount_data()
{
    addFullAndCausalRows();
}

// Property: every bin of both histograms holds exactly the entries counted here from the edges
// (edges[k] <= e < edges[k + 1], the last bin closed, positive errors below the first edge in
// the first bin), split at 1/n_i (n_i the keys row i attends to); masked entries are left out;
// zeros are counted apart.
void TestErrorPanel::distributionCountsMatchADirectCount()
{
    QFETCH(bool, causal);
    const int length = 40;
    MatrixD exact = randomAttention(length, 1, 2.0);
    if (causal) {
        for (int i = 0; i < length; ++i) {
            exact.row(i).tail(length - 1 - i).setZero();
            exact.row(i) /= exact.row(i).sum();
        }
    }
    // Every seventh diagonal left exact, the others off by a random factor.
    MatrixD approx = exact;
    Rng rng(2, RandomStream::RandomInput);
    for (int i = 0; i < length; ++i)
        for (int j = 0; j < length; ++j)
            approx(i, j) *= (i + j) % 7 == 0 ? 1.0 : std::exp(0.3 * rng.normal());
    ErrorDistributionView view;
    view.setMatrices(std::make_shared<const MatrixD>(exact),
                     std::make_shared<const MatrixD>(approx), causal);
    const ErrorDistribution& distribution = view.distribution();
    for (const bool relative : {false, true}) {
        const ErrorHistogram& histogram = relative ? distribution.relative : distribution.absolute;
        const std::size_t bins = histogram.small.size();
        QVERIFY(bins > 5);
        QCOMPARE(histogram.edges.size(), bins + 1);
        std::vector<qint64> small(bins, 0), large(bins, 0);
        qint64 zeros[2] = {0, 0}, totals[2] = {0, 0};
        for (int i = 0; i < length; ++i) {
            const int seen = causal ? i + 1 : length;
            for (int j = 0; j < seen; ++j) {
                const bool isSmall = exact(i, j) < 1.0 / seen;
                const double error =
                    std::abs(approx(i, j) - exact(i, j)) / (relative ? exact(i, j) : 1.0);
                totals[isSmall ? 0 : 1] += 1;
                if (error == 0) {
                    zeros[isSmall ? 0 : 1] += 1;
                    continue;
                }
                std::size_t k = 0;
                while (k + 1 < bins && error >= histogram.edges[k + 1])
                    ++k;
                QVERIFY(error <= histogram.edges.back());
                (isSmall ? small : large)[k] += 1;
            }
        }
        QCOMPARE(histogram.small, small);
        QCOMPARE(histogram.large, large);
        QCOMPARE(histogram.smallZeros, zeros[0]);
        QCOMPARE(histogram.largeZeros, zeros[1]);
        QCOMPARE(histogram.smallTotal, totals[0]);
        QCOMPARE(histogram.largeTotal, totals[1]);
        QVERIFY(zeros[0] + zeros[1] > 0);  // the entries left alone
        QVERIFY(totals[0] > 0 && totals[1] > 0);
        QCOMPARE(totals[0] + totals[1],
                 qint64(causal ? length * (length + 1) / 2 : length * length));
    }
}

// Property: the view draws each histogram as two step curves (small and large entries) with
// fills, whose steps are the counts, on log axes with units; clear() leaves the hint alone.
void TestErrorPanel::distributionViewDrawsBothHistograms()
{
    const int length = 64;
    const MatrixD exact = randomAttention(length, 3, 2.0);
    MatrixD approx = exact;
    Rng rng(4, RandomStream::RandomInput);
    for (double& x : approx.reshaped())
        x *= 1 + 0.2 * rng.normal();
    ErrorDistributionView view;
    view.resize(1200, 520);
    view.setMatrices(std::make_shared<const MatrixD>(exact),
                     std::make_shared<const MatrixD>(approx), false);
    const ErrorHistogram& absolute = view.distribution().absolute;
    const QVector<QPointF> steps = graphData(view.absoluteGraph(0));
    QCOMPARE(steps.size(), qsizetype(absolute.small.size() + 1));
    for (std::size_t k = 0; k < absolute.small.size(); ++k) {
        QCOMPARE(steps[qsizetype(k)].x(), absolute.edges[k]);
        QCOMPARE(steps[qsizetype(k)].y(), absolute.small[k] > 0 ? double(absolute.small[k]) : 0.5);
    }
    QCOMPARE(view.relativeGraph(1)->lineStyle(), QCPGraph::lsStepLeft);
    QVERIFY(view.relativeGraph(1)->brush().style() != Qt::NoBrush);
    for (QCPAxisRect* rect : {view.absoluteRect(), view.relativeRect()}) {
        QCOMPARE(rect->axis(QCPAxis::atLeft)->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(rect->axis(QCPAxis::atBottom)->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(rect->axis(QCPAxis::atLeft)->label().contains("(count)"));
    }
    QVERIFY(view.absoluteRect()->axis(QCPAxis::atBottom)->label().contains("(probability)"));
    QVERIFY(view.relativeRect()->axis(QCPAxis::atBottom)->label().contains("(ratio)"));
    QVERIFY(view.absoluteGraph(0)->name().contains("1/L"));
    view.replot();
    const QImage image = view.toPixmap(1200, 520).toImage();
    QVERIFY(colourCount(image) > 50);
    keepGrab(image, "error_distribution.png");

    view.setMatrices(nullptr, nullptr, false);
    QCOMPARE(view.absoluteGraph(0)->dataCount(), 0);
    QVERIFY(view.distribution().absolute.edges.empty());
}

QTEST_MAIN(TestErrorPanel)
#include "test_error_panel.moc"

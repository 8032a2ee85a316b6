#include "ui/errors/error_chart.h"

#include "ui/plotting/log_ticker.h"
#include "ui/plotting/plot_style.h"
#include "sweeps/timing_sweep.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab::ui {

namespace {

// The size of error float rounding alone leaves in a metric of probabilities or relative errors
// (64 ulps of 1 in the precision); 0 for the kernel MSE, whose scale is the kernel's.
double roundingFloor(Precision precision, ErrorMetric metric)
{
    if (metric == ErrorMetric::KernelMse)
        return 0;
    return 64 * (precision == Precision::Float ? double(std::numeric_limits<float>::epsilon())
                                               : std::numeric_limits<double>::epsilon());
}

constexpr double kLinePenWidth = 2.0;
constexpr double kMarkerRadius = 4;  // pixels
// Points of a Lemma 2 curve across the x axis.
constexpr int kTheorySamples = 160;
// The value axis spans at least this many decades.
constexpr double kMinDecades = 1.0;

bool isProjection(const std::optional<ProjectionKind>& projection, ProjectionKind kind)
{
    return projection && *projection == kind;
}

// The rows of W every curve that draws W has, when they all have the same (the legend then leaves
// them out and the subtitle says them once); none when two curves' rows differ or no curve
// draws W.
std::optional<ProjectionKind> sharedProjection(const std::vector<ErrorCurve>& curves)
{
    std::optional<ProjectionKind> shared;
    for (const ErrorCurve& curve : curves) {
        if (!curve.projection)
            continue;
        if (shared && *shared != *curve.projection)
            return std::nullopt;
        shared = curve.projection;
    }
    return shared;
}

// The marker of a map: the registry's shape, filled for orthogonal rows and maps without W, hollow
// (white inside) for iid rows, half-tone (a light fill) for simplex rows, so curves stay apart in
// grey print.
QCPScatterStyle markerStyle(Method method, const std::optional<ProjectionKind>& projection)
{
    const QColor color = methodColor(method);
    QBrush fill(color);
    if (isProjection(projection, ProjectionKind::Iid))
        fill = QBrush(Qt::white);
    else if (isProjection(projection, ProjectionKind::Simplex))
        fill = QBrush(color.lighter(170));
    return QCPScatterStyle(methodMarkerPath(method, kMarkerRadius), QPen(color, 1.6), fill, 6);
}

// Solid for orthogonal rows and maps without W, dashed for iid rows, dash-dotted for simplex rows.
QPen curvePen(Method method, const std::optional<ProjectionKind>& projection, double width)
{
    QPen pen(methodColor(method), width);
    if (isProjection(projection, ProjectionKind::Iid))
        pen.setStyle(Qt::DashLine);
    else if (isProjection(projection, ProjectionKind::Simplex))
        pen.setStyle(Qt::DashDotLine);
    return pen;
}

// The band's fill: translucent for orthogonal rows and maps without W, fainter for iid rows,
// whose band edges are drawn dashed instead (a hatch pattern would not survive SVG export).
QBrush bandBrush(Method method, const std::optional<ProjectionKind>& projection)
{
    QColor color = methodColor(method);
    color.setAlpha(isProjection(projection, ProjectionKind::Iid) ? 22 : 55);
    return QBrush(color);
}

// The pen of a band's edges: none, or thin and dashed for iid rows.
QPen bandEdgePen(Method method, const std::optional<ProjectionKind>& projection)
{
    if (!isProjection(projection, ProjectionKind::Iid))
        return Qt::NoPen;
    QColor color = methodColor(method);
    color.setAlpha(150);
    return QPen(color, 1, Qt::DashLine);
}

// "8 seeds", "1 seed".
QString seedsText(int seeds)
{
    return seeds == 1 ? ErrorChart::tr("1 seed") : ErrorChart::tr("%1 seeds").arg(seeds);
}

// The short name of the swept quantity, for titles: "the number of features m", ...
QString sweptQuantity(ErrorSweepKind sweep)
{
    switch (sweep) {
        case ErrorSweepKind::Features: return ErrorChart::tr("the size m");
        case ErrorSweepKind::Norm: return ErrorChart::tr("the query/key norm multiplier");
        case ErrorSweepKind::Length: return ErrorChart::tr("the sequence length L");
    }
    return QString();
}

QString metricTitle(ErrorMetric metric)
{
    switch (metric) {
        case ErrorMetric::RelFrobeniusAttention:
            return ErrorChart::tr("Relative Frobenius error of P");
        case ErrorMetric::MeanTotalVariation: return ErrorChart::tr("Mean row total variation");
        case ErrorMetric::RelFrobeniusOutput: return ErrorChart::tr("Relative error of the output");
        case ErrorMetric::KernelMse: return ErrorChart::tr("Kernel MSE");
    }
    return QString();
}

// What a narrow chart's axes say where metricAxisLabel would take more than two lines and
// errorAxisLabel more than one (setAxisLabel).
QString briefMetricAxisLabel(ErrorMetric metric)
{
    switch (metric) {
        case ErrorMetric::RelFrobeniusAttention:
            return ErrorChart::tr("\u2016P\u0302 \u2212 P\u2016 / \u2016P\u2016 (ratio)");
        case ErrorMetric::MeanTotalVariation:
            return ErrorChart::tr("row total variation (probability)");
        case ErrorMetric::RelFrobeniusOutput:
            return ErrorChart::tr("\u2016O\u0302 \u2212 O\u2016 / \u2016O\u2016 (ratio)");
        case ErrorMetric::KernelMse:
            return ErrorChart::tr("MSE of exp(x\u2032\u00b7y\u2032) (kernel units\u00b2)");
    }
    return QString();
}

QString briefErrorAxisLabel(ErrorAxis axis, ErrorSweepKind sweep)
{
    switch (axis) {
        case ErrorAxis::Value:
            switch (sweep) {
                case ErrorSweepKind::Features:
                    return ErrorChart::tr("m (features, landmarks, rows; local: w)");
                case ErrorSweepKind::Norm:
                    return ErrorChart::tr("norm multiplier (\u00d7 |q|, |k|)");
                case ErrorSweepKind::Length: return ErrorChart::tr("L (tokens)");
            }
            break;
        case ErrorAxis::Seconds: return ErrorChart::tr("time of the approximation (s, median)");
        case ErrorAxis::Flops: return ErrorChart::tr("flops of the approximation (cost model)");
    }
    return QString();
}

}  // namespace

QString metricAxisLabel(ErrorMetric metric)
{
    switch (metric) {
        case ErrorMetric::RelFrobeniusAttention:
            return ErrorChart::tr("relative Frobenius error \u2016P\u0302 \u2212 P\u2016 / "
                                  "\u2016P\u2016 (ratio)");
        case ErrorMetric::MeanTotalVariation:
            return ErrorChart::tr("mean row total variation of P\u0302 from P (probability)");
        case ErrorMetric::RelFrobeniusOutput:
            return ErrorChart::tr("relative Frobenius error of the output \u2016O\u0302 \u2212 "
                                  "O\u2016 / \u2016O\u2016 (ratio)");
        case ErrorMetric::KernelMse:
            return ErrorChart::tr("MSE of the estimate of exp(x\u2032\u00b7y\u2032) (kernel "
                                  "units\u00b2)");
    }
    return QString();
}

QString sweepAxisLabel(ErrorSweepKind sweep)
{
    switch (sweep) {
        case ErrorSweepKind::Features:
            return ErrorChart::tr("m: random features, landmarks or projected rows (local: the "
                                  "window w)");
        case ErrorSweepKind::Norm:
            return ErrorChart::tr("query/key norm multiplier (\u00d7 the input's |q|, |k|)");
        case ErrorSweepKind::Length: return ErrorChart::tr("sequence length L (tokens)");
    }
    return QString();
}

QString errorAxisLabel(ErrorAxis axis, ErrorSweepKind sweep)
{
    switch (axis) {
        case ErrorAxis::Value: return sweepAxisLabel(sweep);
        case ErrorAxis::Seconds:
            return ErrorChart::tr("measured time of the approximate output (seconds, median over "
                                  "the seeds)");
        case ErrorAxis::Flops:
            return ErrorChart::tr("flops of the approximate output (the cost model's count)");
    }
    return QString();
}

QString curveLabel(Method method, const std::optional<ProjectionKind>& projection)
{
    const QString label = methodLabel(method);
    return projection ? ErrorChart::tr("%1, %2 rows").arg(label, projectionKindName(*projection))
                      : label;
}

ErrorChart::ErrorChart(QWidget* parent) : HeadedChart(parent, 10.5, 36)
{
    QCPAxisRect* rect = axisRect();
    arrangeUnderHeading(rect);
    rect->setMinimumMargins(QMargins(0, 0, 28, 0));

    applyAxisStyle(rect, font(), 10, true);
    QCPAxis* valueAxis = rect->axis(QCPAxis::atLeft);
    setLogAxis(valueAxis, LogTicker::Labels::PlainWhenDense);

    m_bandKey = new QCPGraph(rect->axis(QCPAxis::atBottom), valueAxis);
    m_bandKey->setPen(Qt::NoPen);
    m_bandKey->setBrush(QColor(120, 120, 120, 70));

    m_hint = new FigureHint(this,
                            tr("Choose the methods and a sweep, then Run: the curves grow here "
                               "as the seeds finish."),
                            12);

    clear();
}

void ErrorChart::setResult(const ErrorSweepResult& result, ErrorMetric metric, ErrorAxis axis,
                           const QString& note)
{
    removeResult();
    m_hasResult = true;
    m_metric = metric;
    m_axis = axis;
    const std::vector<ErrorCurve> curves = errorCurves(result, metric);
    m_sharedProjection = sharedProjection(curves);
    if (metric == ErrorMetric::KernelMse)
        addKernelCurves(result, curves);
    else
        addBandCurves(result, curves);
    if (axis != ErrorAxis::Value) {
        QVector<double> costs, errors;
        for (const auto& [cost, error] : attnlab::paretoFront(curves, axis)) {
            costs.append(cost);
            errors.append(error);
        }
        m_front =
            new QCPGraph(axisRect()->axis(QCPAxis::atBottom), axisRect()->axis(QCPAxis::atLeft));
        m_front->setLineStyle(QCPGraph::lsStepLeft);
        m_front->setPen(
            QPen(QColor(90, 90, 90, 120), 7, Qt::SolidLine, Qt::FlatCap, Qt::MiterJoin));
        m_front->setData(costs, errors, true);
        m_front->setName(tr("Pareto front: the lowest error at that cost or less"));
        addToLegend(m_front);
        m_front->setLayer(QStringLiteral("grid"));  // under the curves
    }
    fitAxes(result);

    const ErrorSweepSpec& spec = result.spec;
    const InputSpec& input = spec.experiment.input;
    QString titleText =
        (metric == ErrorMetric::KernelMse
             ? tr("Kernel MSE of the pair (q_%1, k_%2) against %3: measured and "
                  "Lemma 2")
                   .arg(spec.pairQuery)
                   .arg(spec.pairKey)
                   .arg(sweptQuantity(spec.sweep))
             : tr("%1 against %2").arg(metricTitle(metric), sweptQuantity(spec.sweep)));
    if (axis == ErrorAxis::Seconds)
        titleText = tr("%1 at equal cost: against the measured time").arg(metricTitle(metric));
    else if (axis == ErrorAxis::Flops)
        titleText = tr("%1 at equal cost: against the flop count").arg(metricTitle(metric));
    QStringList parts;
    parts << tr("%1 input, L = %2, d = %3")
                 .arg(inputKindName(input.kind))
                 .arg(spec.sweep == ErrorSweepKind::Length
                          ? tr("%1 to %2").arg(spec.values.front()).arg(spec.values.back())
                          : QString::number(result.inputLength))
                 .arg(result.headDim);
    if (result.heads > 1)
        parts << tr("%1 heads").arg(result.heads);
    parts << tr("s = %1").arg(result.scale, 0, 'g', 3);
    if (spec.sweep != ErrorSweepKind::Features)
        parts << tr("m = %1").arg(spec.features);
    if (spec.sweep != ErrorSweepKind::Norm)
        parts << tr("norm multiplier %1").arg(input.normMultiplier);
    if (spec.experiment.causal)
        parts << tr("causal");
    if (m_sharedProjection)
        parts << tr("W of %1 rows").arg(projectionKindName(*m_sharedProjection));
    QString subtitle = parts.join(QStringLiteral(", "));
    if (metric == ErrorMetric::KernelMse) {
        subtitle += tr("; |x\u2032| = %1, |y\u2032| = %2, x\u2032\u00b7y\u2032 = %3; points: mean "
                       "over %4 \u00b1 1 standard error")
                        .arg(result.pairQuery.norm(), 0, 'f', 2)
                        .arg(result.pairKey.norm(), 0, 'f', 2)
                        .arg(result.pairQuery.dot(result.pairKey), 0, 'f', 2)
                        .arg(seedsText(spec.seeds));
    } else {
        subtitle +=
            tr("; curves: mean over %1, bands: 10th to 90th percentile").arg(seedsText(spec.seeds));
    }
    if (result.cancelled)
        subtitle += tr(" (cancelled: the rows finished)");
    subtitle += note;
    setTitle(titleText);
    setSubtitle(subtitle);
    showPlot(true);
    replot(rpQueuedReplot);
}

void ErrorChart::clear()
{
    removeResult();
    m_hasResult = false;
    clearHeading();
    showPlot(false);
    replot(rpQueuedReplot);
}

QString ErrorChart::legendText(const QString& curveLabel) const
{
    for (const CurvePlot& plot : m_curves)
        if (plot.curve.label() == curveLabel)
            return plot.mean->name();
    return QString();
}

void ErrorChart::removeResult()
{
    for (const CurvePlot& plot : m_curves) {
        removePlottable(plot.mean);
        if (plot.errorBars)
            removePlottable(plot.errorBars);
        if (plot.bandHigh)
            removePlottable(plot.bandHigh);
        if (plot.bandLow)
            removePlottable(plot.bandLow);
    }
    for (const TheoryCurve& theory : m_theory)
        removePlottable(theory.graph);
    if (m_front)
        removePlottable(m_front);
    m_front = nullptr;
    m_curves.clear();
    m_theory.clear();
    m_bandKey->removeFromLegend();
}

QString ErrorChart::curveName(const ErrorCurve& curve) const
{
    return curveLabel(curve.method, m_sharedProjection ? std::nullopt : curve.projection);
}

void ErrorChart::addBandCurves(const ErrorSweepResult& result,
                               const std::vector<ErrorCurve>& curves)
{
    QCPAxis* x = axisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = axisRect()->axis(QCPAxis::atLeft);
    const bool logLog = result.spec.sweep != ErrorSweepKind::Norm || m_axis != ErrorAxis::Value;
    for (const ErrorCurve& curve : curves) {
        QVector<double> values, means, lows, highs;
        for (const ErrorCurvePoint& point : curve.points) {
            const double key = axisValue(point, m_axis);
            if (!(point.mean > 0) || !(key > 0) || !std::isfinite(key))
                continue;
            values.append(key);
            means.append(point.mean);
            lows.append(point.percentile10);
            highs.append(point.percentile90);
        }
        CurvePlot plot;
        plot.curve = curve;
        // The band first, so the mean line lies over it.
        plot.bandLow = new QCPGraph(x, y);
        plot.bandLow->setPen(bandEdgePen(curve.method, curve.projection));
        plot.bandLow->setData(values, lows, true);
        plot.bandHigh = new QCPGraph(x, y);
        plot.bandHigh->setPen(bandEdgePen(curve.method, curve.projection));
        plot.bandHigh->setBrush(bandBrush(curve.method, curve.projection));
        plot.bandHigh->setChannelFillGraph(plot.bandLow);
        plot.bandHigh->setData(values, highs, true);
        plot.mean = new QCPGraph(x, y);
        plot.mean->setPen(curvePen(curve.method, curve.projection, kLinePenWidth));
        plot.mean->setScatterStyle(markerStyle(curve.method, curve.projection));
        plot.mean->setData(values, means, true);
        QString name = curveName(curve);
        // The slope is fitted to errors above the float rounding of the sweep's precision: a
        // method that is exact there (local attention whose window covers every pair) has only
        // rounding noise, and no slope. Against cost, a method without a size (elu+1, Taylor)
        // repeats one computation: its points differ by timing noise only, and have no slope.
        std::vector<double> fitValues, fitMeans;
        for (qsizetype i = 0; i < values.size(); ++i)
            if (means[i] > roundingFloor(result.spec.experiment.precision, m_metric)) {
                fitValues.push_back(values[i]);
                fitMeans.push_back(means[i]);
            }
        if (fitValues.empty() && !values.isEmpty()) {
            name += tr("  (rounding only)");
        } else if (logLog && fitValues.size() > 1 &&
                   (methodInfo(curve.method).size || m_axis == ErrorAxis::Value)) {
            name += tr("  slope\u00a0%1").arg(logLogSlope(fitValues, fitMeans), 0, 'f', 2);
        }
        plot.mean->setName(name);
        addToLegend(plot.mean);
        m_curves.push_back(plot);
    }
    m_bandKey->setName(tr("10th\u201390th percentile over the seeds"));
    addToLegend(m_bandKey);
}

void ErrorChart::addKernelCurves(const ErrorSweepResult& result,
                                 const std::vector<ErrorCurve>& curves)
{
    QCPAxis* x = axisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = axisRect()->axis(QCPAxis::atLeft);
    // The Lemma 2 curves under the points; their samples are set by fitAxes, which knows the
    // x range.
    for (const Method method : result.spec.methods) {
        if (!hasLemma2(method) || m_axis != ErrorAxis::Value)
            continue;
        TheoryCurve theory;
        theory.method = method;
        theory.graph = new QCPGraph(x, y);
        QColor color = methodColor(method);
        color.setAlpha(110);
        QPen pen(color, 6);
        pen.setCapStyle(Qt::RoundCap);
        theory.graph->setPen(pen);
        theory.graph->setName(tr("%1: Lemma 2 (iid rows)").arg(methodLabel(method)));
        addToLegend(theory.graph);
        m_theory.push_back(theory);
    }
    for (const ErrorCurve& curve : curves) {
        QVector<double> values, means, below, above;
        for (const ErrorCurvePoint& point : curve.points) {
            const double key = axisValue(point, m_axis);
            if (!(point.mean > 0) || !std::isfinite(point.mean) || !(key > 0) ||
                !std::isfinite(key))
                continue;
            values.append(key);
            means.append(point.mean);
            // On the log axis a bar cannot reach 0: it stops just above.
            below.append(std::min(point.standardError, 0.999 * point.mean));
            above.append(point.standardError);
        }
        CurvePlot plot;
        plot.curve = curve;
        plot.mean = new QCPGraph(x, y);
        plot.mean->setPen(curvePen(curve.method, curve.projection, 1.2));
        plot.mean->setScatterStyle(markerStyle(curve.method, curve.projection));
        plot.mean->setData(values, means, true);
        plot.mean->setName(tr("%1, measured").arg(curveName(curve)));
        addToLegend(plot.mean);
        plot.errorBars = new QCPErrorBars(x, y);
        plot.errorBars->setDataPlottable(plot.mean);
        plot.errorBars->setData(below, above);
        plot.errorBars->setPen(QPen(methodColor(curve.method), 1.3));
        plot.errorBars->setWhiskerWidth(7);
        plot.errorBars->setSymbolGap(2 * kMarkerRadius + 2);
        m_curves.push_back(plot);
    }
}

void ErrorChart::fitAxes(const ErrorSweepResult& result)
{
    const ErrorSweepSpec& spec = result.spec;
    QCPAxis* x = axisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = axisRect()->axis(QCPAxis::atLeft);
    // The x title in one line, brief where the whole one would take two: each line is one the
    // plot loses (at 1280 x 800 the page presented in scenario 6 left the plot 130 pixels high).
    // The y title, along the plot's height, may take two lines of its width.
    setAxisLabel(x, errorAxisLabel(m_axis, spec.sweep), briefErrorAxisLabel(m_axis, spec.sweep), 1);
    setAxisLabel(y, metricAxisLabel(m_metric), briefMetricAxisLabel(m_metric));

    // The x range: the sweep's values, a quarter octave (or 4% of the span) past each end;
    // against the cost, the costs drawn, a tenth of a decade past each end.
    double first = spec.values.empty() ? 1.0 : spec.values.front();
    double last = spec.values.empty() ? 2.0 : spec.values.back();
    QCPRange xRange;
    if (m_axis != ErrorAxis::Value) {
        first = HUGE_VAL;
        last = -HUGE_VAL;
        for (const CurvePlot& plot : m_curves) {
            for (auto it = plot.mean->data()->constBegin(); it != plot.mean->data()->constEnd();
                 ++it) {
                first = std::min(first, it->key);
                last = std::max(last, it->key);
            }
        }
        if (!(first <= last)) {
            first = 1e-6;
            last = 1e-3;
        }
        setLogAxis(x, LogTicker::Labels::PlainWhenDense);
        const double pad = std::pow(10.0, 0.1);
        xRange = QCPRange(first / pad, (last > first ? last : 10 * first) * pad);
    } else if (spec.sweep == ErrorSweepKind::Norm) {
        x->setScaleType(QCPAxis::stLinear);
        x->setTicker(QSharedPointer<QCPAxisTicker>::create());
        x->setNumberFormat(QStringLiteral("g"));
        const double pad = std::max(0.04 * (last - first), 0.05 * last);
        xRange = QCPRange(std::max(0.0, first - pad), last + pad);
    } else {
        x->setScaleType(QCPAxis::stLogarithmic);
        x->setNumberFormat(QStringLiteral("g"));
        auto ticker = QSharedPointer<LogTicker>::create(LogTicker::Labels::Plain);
        ticker->setLogBase(2);
        ticker->setSubTickCount(0);
        ticker->setTickCount(8);
        x->setTicker(ticker);
        const double pad = std::pow(2.0, 0.25);
        xRange = QCPRange(first / pad, (last > first ? last : 2 * first) * pad);
    }
    x->setRange(xRange);

    // Lemma 2 samples across the whole x range.
    for (const TheoryCurve& theory : m_theory) {
        QVector<double> keys, values;
        for (int i = 0; i < kTheorySamples; ++i) {
            const double t = double(i) / (kTheorySamples - 1);
            const double key = spec.sweep == ErrorSweepKind::Norm
                                   ? xRange.lower + t * (xRange.upper - xRange.lower)
                                   : xRange.lower * std::pow(xRange.upper / xRange.lower, t);
            const double value = lemma2MseAt(result, theory.method, key);
            if (value > 0 && std::isfinite(value)) {
                keys.append(key);
                values.append(value);
            }
        }
        theory.graph->setData(keys, values, true);
    }

    // The y range: every value drawn, in decades, at least kMinDecades, with a margin.
    double low = HUGE_VAL, high = -HUGE_VAL;
    const auto include = [&](double value) {
        if (value > 0 && std::isfinite(value)) {
            low = std::min(low, std::log10(value));
            high = std::max(high, std::log10(value));
        }
    };
    for (const CurvePlot& plot : m_curves) {
        for (auto it = plot.mean->data()->constBegin(); it != plot.mean->data()->constEnd(); ++it)
            include(it->value);
        for (QCPGraph* band : {plot.bandLow, plot.bandHigh})
            if (band)
                for (auto it = band->data()->constBegin(); it != band->data()->constEnd(); ++it)
                    include(it->value);
        if (plot.errorBars) {
            for (int i = 0; i < plot.mean->dataCount(); ++i) {
                const double mean = plot.mean->data()->at(i)->value;
                const QCPErrorBarsData bar = plot.errorBars->data()->at(i);
                include(mean + bar.errorPlus);
                // A bar clipped at 0 is left to run off the bottom.
                if (bar.errorMinus < 0.999 * mean)
                    include(mean - bar.errorMinus);
            }
        }
    }
    for (const TheoryCurve& theory : m_theory)
        for (auto it = theory.graph->data()->constBegin(); it != theory.graph->data()->constEnd();
             ++it)
            include(it->value);
    if (!(low <= high)) {
        low = -3;
        high = 0;
    }
    const double missing = kMinDecades - (high - low);
    if (missing > 0) {
        low -= missing / 2;
        high += missing / 2;
    }
    const double margin = 0.06 * (high - low);
    y->setRange(std::pow(10.0, low - margin), std::pow(10.0, high + margin));
}

void ErrorChart::showPlot(bool shown)
{
    setAxesVisible(axisRect(), shown);
    legend->setVisible(shown);
    setHeadingVisible(shown);
    m_hint->setVisible(!shown);
}

void saveErrorChart(const ErrorSweepResult& result, ErrorMetric metric, ErrorAxis axis,
                    const QString& path, FigureFormat format, QSize size)
{
    ErrorChart chart;
    chart.resize(size);
    chart.setResult(result, metric, axis);
    exportFigure(chart, path, format, size);
}

}  // namespace attnlab::ui

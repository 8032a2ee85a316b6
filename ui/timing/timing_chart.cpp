#include "ui/timing/timing_chart.h"

#include "parallel.h"
#include "ui/plotting/log_ticker.h"
#include "ui/plotting/plot_style.h"

#include <QLocale>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

namespace attnlab::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMarkerRadius = 4.5;  // pixels
constexpr double kLinePenWidth = 2.0;
// The length axes reach a quarter octave past the first and last length.
const double kLengthPadding = std::log10(2.0) / 4;
// A value axis spans at least this many decades, so that it always has a labelled power of ten.
constexpr double kMinDecades = 1.2;
// Pixels kept free between the curves and the edges of a plot.
constexpr int kEdgePadding = 10;
// Pixels kept free between two labels in a row.
constexpr double kLabelGap = 8;
const QMargins kLabelPadding(4, 1, 4, 1);
// The properties of the memory key's entries holding their names, in full and short.
constexpr char kKeyName[] = "attnlabKeyName";
constexpr char kShortKeyName[] = "attnlabShortKeyName";

// The method's marker: filled for the non-causal variant, hollow (white inside) for the causal
// one. A custom scatter shape is scaled by size / 6, so size 6 keeps it in pixels.
QCPScatterStyle markerStyle(const TimedMethod& method)
{
    const QColor color = methodColor(method);
    return QCPScatterStyle(methodMarkerPath(method.algorithm, kMarkerRadius), QPen(color, 1.5),
                           method.causal ? QBrush(Qt::white) : QBrush(color), 6);
}

// A colour for text in the hue of `color`, dark enough to read on white.
QColor textColor(const QColor& color)
{
    return QColor::fromHslF(color.hslHueF(), color.hslSaturationF(),
                            std::min(color.lightnessF(), 0.36f));
}

// The engine threads of a result, also while it is partial (before runSweep filled them in).
int threadsOf(const SweepResult& result)
{
    if (result.threads > 0)
        return result.threads;
    return result.spec.threads > 0 ? result.spec.threads : hardwareThreads();
}

bool hasOkPoint(const SweepResult& result, const TimedMethod& method)
{
    return std::any_of(result.points.begin(), result.points.end(), [&](const SweepPoint& point) {
        return point.method == method && point.status == PointStatus::Ok;
    });
}

// The smallest length where both methods have a measured point; 0 when there is none.
double smallestCommonLength(const SweepResult& result, const TimedMethod& a, const TimedMethod& b)
{
    double smallest = 0;
    for (const SweepPoint& point : result.points) {
        if (point.method != a || point.status != PointStatus::Ok)
            continue;
        const bool inBoth =
            std::any_of(result.points.begin(), result.points.end(), [&](const SweepPoint& other) {
                return other.method == b && other.status == PointStatus::Ok &&
                       other.length == point.length;
            });
        if (inBoth && (smallest == 0 || point.length < smallest))
            smallest = double(point.length);
    }
    return smallest;
}

// Widens [lowest, highest] (log10) about its centre to at least `span`; an empty range becomes
// `fallback`.
QCPRange widened(double lowest, double highest, double span, const QCPRange& fallback)
{
    if (!(lowest <= highest))
        return fallback;
    const double missing = span - (highest - lowest);
    if (missing > 0) {
        lowest -= missing / 2;
        highest += missing / 2;
    }
    return QCPRange(lowest, highest);
}

// A text item on the annotations layer: small, in `color`, on a translucent white box so that it
// reads over grid lines and curves; positioned in pixels.
QCPItemText* annotation(QCustomPlot* plot, const QColor& color)
{
    auto* text = new QCPItemText(plot);
    text->setLayer(QStringLiteral("annotations"));
    text->setFont(sizedFont(plot->font(), 9.5));
    text->setColor(color);
    text->setBrush(QColor(255, 255, 255, 215));
    text->setPadding(kLabelPadding);
    text->position->setType(QCPItemPosition::ptAbsolute);  // placed by placeLabels
    return text;
}

// The width of item's box in pixels with `text`.
double labelWidth(const QCPItemText* item, const QString& text)
{
    return QFontMetricsF(item->font()).horizontalAdvance(text) + kLabelPadding.left() +
           kLabelPadding.right();
}

// A label to be put in a row beside its anchor.
struct RowLabel {
    QCPItemText* item;
    double anchor;     // pixels: where the label's line or marker is
    bool preferRight;  // put it right of the anchor when it fits there
    int row = 0;
    double left = 0;  // pixels: where its box begins
};

// Puts each label, in order of its anchor, beside its anchor in the first row where it overlaps no
// label placed before and fits between left and right: on its preferred side, else on the other.
// A label that fits nowhere starts a new row, on the side where it fits, or shifted inside
// [left, right] when it fits on neither side. Returns the number of rows used.
int arrangeInRows(std::vector<RowLabel>& labels, double left, double right)
{
    std::sort(labels.begin(), labels.end(),
              [](const RowLabel& a, const RowLabel& b) { return a.anchor < b.anchor; });
    std::vector<std::vector<QPair<double, double>>> rows;  // taken intervals of each row
    for (RowLabel& label : labels) {
        const double width = labelWidth(label.item, label.item->text());
        const auto begin = [&](bool onRight) {
            return onRight ? label.anchor : label.anchor - width;
        };
        const auto fits = [&](double start) { return start >= left && start + width <= right; };
        const auto isFree = [&](std::size_t row, double start) {
            return std::none_of(rows[row].begin(), rows[row].end(), [&](const auto& taken) {
                return start < taken.second + kLabelGap && taken.first < start + width + kLabelGap;
            });
        };
        const double sides[] = {begin(label.preferRight), begin(!label.preferRight)};
        bool placed = false;
        for (std::size_t row = 0; row < rows.size() && !placed; ++row) {
            for (const double start : sides) {
                if (fits(start) && isFree(row, start)) {
                    label.row = int(row);
                    label.left = start;
                    placed = true;
                    break;
                }
            }
        }
        if (!placed) {
            label.row = int(rows.size());
            label.left = fits(sides[0]) || !fits(sides[1])
                             ? std::clamp(sides[0], left, std::max(left, right - width))
                             : sides[1];
            rows.emplace_back();
        }
        rows[std::size_t(label.row)].push_back({label.left, label.left + width});
    }
    return int(rows.size());
}

// The method as a label inside the plot names it: methodLabel without a closing note in
// parentheses ("Trigonometric, causal" for "Trigonometric (random Fourier), causal"), so that the
// label fits beside its line in a narrow plot; the legend gives the whole label.
QString annotationLabel(const TimedMethod& method)
{
    QString label = methodLabel(method);
    label.remove(QRegularExpression(QStringLiteral(" \\([^()]*\\)")));
    return label;
}

// Gives item `text`, or `brief` where `text` is wider than the plot's `width` pixels: its colour
// still tells the method, which the legend and the table under the chart name in full.
void setFittingText(QCPItemText* item, const QString& text, const QString& brief, double width)
{
    const QString& shown = labelWidth(item, text) <= width ? text : brief;
    if (item->text() != shown)
        item->setText(shown);
}

// The height of one row of labels in pixels: a label's box, as QCPItemText sizes it (its text's
// bounding rectangle, in whole pixels), and 2 pixels between rows.
double labelRowHeight(const QCPItemText* item)
{
    const int line = QFontMetrics(item->font())
                         .boundingRect(0, 0, 0, 0, Qt::TextDontClip, item->text())
                         .height();
    return line + kLabelPadding.top() + kLabelPadding.bottom() + 2;
}

}  // namespace

std::optional<TimedMethod> crossoverReference(const SweepResult& result, const TimedMethod& method)
{
    if (!isApproximation(method.algorithm))
        return std::nullopt;
    for (const Method exact : {Method::ExactStreaming, Method::ExactMaterialised}) {
        const TimedMethod reference{exact, method.causal};
        if (hasOkPoint(result, reference))
            return reference;
    }
    return std::nullopt;
}

QString formatLength(double length, int significantDigits)
{
    double value = length;
    if (significantDigits > 0 && value > 0) {
        const double unit = std::pow(10.0, std::floor(std::log10(value)) - (significantDigits - 1));
        value = std::round(value / unit) * unit;
    }
    return QLocale(QLocale::English, QLocale::UnitedStates)
        .toString(qlonglong(std::llround(value)));
}

QString methodLabel(const TimedMethod& method)
{
    const QString label = methodLabel(method.algorithm);
    return method.causal ? TimingChart::tr("%1, causal").arg(label) : label;
}

QColor methodColor(const TimedMethod& method)
{
    const QColor color = methodColor(method.algorithm);
    if (!method.causal)
        return color;
    return color.lightness() < 40 ? QColor(0x80, 0x80, 0x80) : color.darker(150);
}

TimingChart::TimingChart(QWidget* parent) : HeadedChart(parent, 10.5, 30)
{
    addLayer(QStringLiteral("annotations"), layer(QStringLiteral("main")), limAbove);

    // Title, subtitle, the two plots side by side, the legend centred under them.
    m_timeRect = axisRect();
    m_memoryRect = new QCPAxisRect(this);
    setTitle(tr("Attention cost against sequence length"));
    auto* plots = new QCPLayoutGrid;
    plots->addElement(0, 0, m_timeRect);
    plots->addElement(0, 1, m_memoryRect);
    plots->setColumnStretchFactors({1.35, 1});
    plots->setColumnSpacing(12);
    arrangeUnderHeading(plots);
    auto* margins = new QCPMarginGroup(this);
    for (QCPAxisRect* rect : {m_timeRect, m_memoryRect})
        rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);

    styleAxes();
    buildMemoryKey();

    QCPAxis* memoryAxis = m_memoryRect->axis(QCPAxis::atLeft);
    m_budgetLine = new QCPItemStraightLine(this);
    m_budgetLine->setClipAxisRect(m_memoryRect);
    m_budgetLine->setPen(QPen(QColor(60, 60, 60), 1.2, Qt::DotLine));
    for (QCPItemPosition* point : {m_budgetLine->point1, m_budgetLine->point2})
        point->setAxes(m_memoryRect->axis(QCPAxis::atBottom), memoryAxis);
    m_budgetLabel = annotation(this, QColor(60, 60, 60));
    m_budgetLabel->setClipAxisRect(m_memoryRect);
    m_budgetLabel->position->setAxes(m_memoryRect->axis(QCPAxis::atBottom), memoryAxis);
    m_budgetLabel->position->setAxisRect(m_memoryRect);
    m_budgetLabel->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    m_budgetLabel->position->setTypeY(QCPItemPosition::ptPlotCoords);
    m_budgetLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);

    m_hint = new FigureHint(this,
                            tr("Choose the methods and lengths, then Run: each point appears "
                               "here as it is measured."),
                            12);
    m_hint->setLayer(QStringLiteral("annotations"));

    clear();
}

void TimingChart::styleAxes()
{
    for (QCPAxisRect* rect : {m_timeRect, m_memoryRect}) {
        for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)})
            axis->setScaleType(QCPAxis::stLogarithmic);
        applyAxisStyle(rect, font(), 10, true);
        auto lengthTicker = QSharedPointer<LogTicker>::create(LogTicker::Labels::Plain);
        // Powers of two (or of four, ...); linear sub ticks between them would not fall on
        // powers of two.
        lengthTicker->setLogBase(2);
        lengthTicker->setSubTickCount(0);
        // The count follows the plot's width (fitLengthTicks), so that the labels never touch.
        QCPAxis* lengthAxis = rect->axis(QCPAxis::atBottom);
        lengthAxis->setTicker(lengthTicker);
        // "L (tokens)" where the whole label would take two lines (the title names the sequence
        // length): at 1280 x 800 it ran past the memory plot on three, and took two under the
        // time plot, lines the plots lost.
        setAxisLabel(lengthAxis, tr("sequence length L (tokens)"), tr("L (tokens)"), 1);
        // Room for half the last length label ("65,536"), which reaches past the plot's edge.
        rect->setMinimumMargins(QMargins(0, 0, 24, 0));
    }
    QCPAxis* timeAxis = m_timeRect->axis(QCPAxis::atLeft);
    setLogAxis(timeAxis, LogTicker::Labels::AxisFormat);
    timeAxis->setLabel(tr("time per run (s)"));
    QCPAxis* memoryAxis = m_memoryRect->axis(QCPAxis::atLeft);
    setLogAxis(memoryAxis, LogTicker::Labels::Plain, 5);
    memoryAxis->setLabel(tr("memory (MiB)"));
}

void TimingChart::buildMemoryKey()
{
    QCPAxis* memoryAxis = m_memoryRect->axis(QCPAxis::atLeft);
    // The key to the line styles of the memory plot, in its top left corner (the ranges leave
    // that band free of curves).
    m_memoryLegend = new QCPLegend;
    m_memoryRect->insetLayout()->addElement(m_memoryLegend, Qt::AlignTop | Qt::AlignLeft);
    m_memoryLegend->setLayer(QStringLiteral("legend"));
    m_memoryLegend->setFont(sizedFont(font(), 9.5));
    m_memoryLegend->setBorderPen(Qt::NoPen);  // its box: the paper's colour (updateLayout)
    m_memoryLegend->setIconSize(30, 12);
    m_memoryLegend->setFillOrder(QCPLegend::foColumnsFirst);
    m_memoryLegend->setColumnSpacing(14);
    const auto addKey = [this, memoryAxis](const QString& name, const QString& shortName,
                                           const QPen& pen, const QCPScatterStyle& marker) {
        auto* key = new QCPGraph(m_memoryRect->axis(QCPAxis::atBottom), memoryAxis);
        key->setName(name);
        key->setProperty(kKeyName, name);
        key->setProperty(kShortKeyName, shortName);
        key->setPen(pen);
        key->setScatterStyle(marker);
        key->addToLegend(m_memoryLegend);
    };
    // A grey that reads on white (4:1) and on a projector's dark paper (4.6:1).
    const QColor keyColor(128, 128, 128);
    addKey(tr("working-set model"), tr("model"), QPen(keyColor, 1.6, Qt::DashLine),
           QCPScatterStyle());
    addKey(tr("measured peak"), tr("peak"), QPen(keyColor, kLinePenWidth),
           QCPScatterStyle(QCPScatterStyle::ssDisc, keyColor, 7));
    setToolTip(tr("Right, the memory of a run against L. Working-set model (dashed): Q, K, V, "
                  "O and what the method's cost model needs besides. Measured peak (solid): "
                  "Q, K and V plus the most the runs' own allocations (the output O, the "
                  "method's work matrices, its W) held at once, counted block by block as they "
                  "are allocated and freed; freed blocks the program keeps for the next run do "
                  "not count."));
}

void TimingChart::setResult(const SweepResult& result)
{
    removeResult();
    m_hasResult = true;

    // The methods of the spec in its order, then any other method the points name.
    std::vector<TimedMethod> methods = result.spec.methods;
    for (const SweepPoint& point : result.points)
        if (std::find(methods.begin(), methods.end(), point.method) == methods.end())
            methods.push_back(point.method);
    for (const TimedMethod& method : methods) {
        const bool shown =
            std::any_of(result.points.begin(), result.points.end(), [&](const SweepPoint& p) {
                return p.method == method && p.status != PointStatus::Cancelled;
            });
        if (shown)
            addCurves(result, method);
    }
    addCrossovers(result);

    // The data ranges, in decades: lengths, times with their error bars, memory.
    double lengthLow = HUGE_VAL, lengthHigh = -HUGE_VAL;
    double timeLow = HUGE_VAL, timeHigh = -HUGE_VAL;
    double memoryLow = HUGE_VAL, memoryHigh = -HUGE_VAL;
    const auto include = [](double value, double& low, double& high) {
        if (std::isfinite(value) && value > 0) {
            low = std::min(low, std::log10(value));
            high = std::max(high, std::log10(value));
        }
    };
    for (const Eigen::Index length : result.spec.lengths)  // the axis stays put as points arrive
        include(double(length), lengthLow, lengthHigh);
    bool skipped = false;
    for (const SweepPoint& point : result.points) {
        if (point.status == PointStatus::Cancelled)
            continue;
        include(double(point.length), lengthLow, lengthHigh);
        include(point.workingSetBytes / kMiB, memoryLow, memoryHigh);
        skipped = skipped || point.status == PointStatus::SkippedMemory;
        if (point.status != PointStatus::Ok)
            continue;
        include(point.peakBytes / kMiB, memoryLow, memoryHigh);
        for (const double seconds : {point.secondsMedian, point.secondsMin, point.secondsMax})
            include(seconds, timeLow, timeHigh);
    }
    const double budgetMiB = double(result.spec.budget.bytes()) / kMiB;
    if (skipped)
        include(budgetMiB, memoryLow, memoryHigh);
    m_lengthData = widened(lengthLow, lengthHigh, 2 * std::log10(2.0), QCPRange(2, 4));
    m_timeData = widened(timeLow, timeHigh, kMinDecades, QCPRange(-4, -1));
    m_memoryData = widened(memoryLow, memoryHigh, kMinDecades, QCPRange(-1, 2));
    const QCPRange lengths(std::pow(10.0, m_lengthData.lower - kLengthPadding),
                           std::pow(10.0, m_lengthData.upper + kLengthPadding));
    for (QCPAxisRect* rect : {m_timeRect, m_memoryRect})
        rect->axis(QCPAxis::atBottom)->setRange(lengths);

    m_budgetLine->setVisible(skipped);
    m_budgetLabel->setVisible(skipped);
    if (skipped) {
        m_budgetLine->point1->setCoords(1, budgetMiB);
        m_budgetLine->point2->setCoords(2, budgetMiB);
        m_budgetLabel->position->setCoords(1, budgetMiB);
        m_budgetLabel->setText(
            tr("memory budget %1").arg(formatBytes(double(result.spec.budget.bytes()))));
    }

    const SweepSpec& spec = result.spec;
    const int threads = threadsOf(result);
    QString subtitle =
        tr("d = %1, m = %2, %3, ")
            .arg(spec.headDim)
            .arg(spec.features)
            .arg(threads == 1 ? tr("1 thread") : tr("%1 threads").arg(threads)) +
        (spec.repetitions == 1 ? tr("one run a point")
                               : tr("median of %1 runs (bars: min to max)").arg(spec.repetitions));
    if (std::isfinite(result.sgemmGflops) && result.sgemmGflops > 0)
        subtitle += tr("; this machine's sgemm: %1 GFLOP/s").arg(result.sgemmGflops, 0, 'f', 0);
    setSubtitle(subtitle);
    showPlots(true);
    replot(rpQueuedReplot);
}

void TimingChart::clear()
{
    removeResult();
    m_hasResult = false;
    setSubtitle(QString());
    showPlots(false);
    replot(rpQueuedReplot);
}

const TimingChart::MethodCurves* TimingChart::curves(const TimedMethod& method) const
{
    for (const MethodCurves& curves : m_curves)
        if (curves.method == method)
            return &curves;
    return nullptr;
}

QString TimingChart::legendText(const TimedMethod& method) const
{
    const MethodCurves* found = curves(method);
    return found ? found->time->name() : QString();
}

void TimingChart::removeResult()
{
    for (const MethodCurves& curves : m_curves) {
        for (QCPAbstractPlottable* plottable : std::initializer_list<QCPAbstractPlottable*>{
                 curves.errorBars, curves.time, curves.skipped, curves.model, curves.peak})
            removePlottable(plottable);
        if (curves.skippedNote)
            removeItem(curves.skippedNote);
    }
    for (const Crossover& crossover : m_crossovers) {
        removeItem(crossover.line);
        removeItem(crossover.label);
    }
    m_curves.clear();
    m_crossovers.clear();
    m_budgetLine->setVisible(false);
    m_budgetLabel->setVisible(false);
}

void TimingChart::addCurves(const SweepResult& result, const TimedMethod& method)
{
    std::vector<const SweepPoint*> points;
    for (const SweepPoint& point : result.points)
        if (point.method == method && point.status != PointStatus::Cancelled)
            points.push_back(&point);
    std::sort(points.begin(), points.end(),
              [](const SweepPoint* a, const SweepPoint* b) { return a->length < b->length; });

    QVector<double> lengths, medians, below, above;
    QVector<double> skippedLengths;
    QVector<double> modelLengths, model;
    QVector<double> peakLengths, peak;
    for (const SweepPoint* point : points) {
        const double length = double(point->length);
        if (std::isfinite(point->workingSetBytes) && point->workingSetBytes > 0) {
            modelLengths.append(length);
            model.append(point->workingSetBytes / kMiB);
        }
        if (point->status == PointStatus::SkippedMemory) {
            skippedLengths.append(length);
            continue;
        }
        lengths.append(length);
        medians.append(point->secondsMedian);
        below.append(std::isfinite(point->secondsMin)
                         ? std::max(0.0, point->secondsMedian - point->secondsMin)
                         : 0.0);
        above.append(std::isfinite(point->secondsMax)
                         ? std::max(0.0, point->secondsMax - point->secondsMedian)
                         : 0.0);
        if (std::isfinite(point->peakBytes) && point->peakBytes > 0) {
            peakLengths.append(length);
            peak.append(point->peakBytes / kMiB);
        }
    }

    const QColor color = methodColor(method);
    const QCPScatterStyle marker = markerStyle(method);
    QCPAxis* lengthAxis = m_timeRect->axis(QCPAxis::atBottom);
    QCPAxis* timeAxis = m_timeRect->axis(QCPAxis::atLeft);
    QCPAxis* memoryLengthAxis = m_memoryRect->axis(QCPAxis::atBottom);
    QCPAxis* memoryAxis = m_memoryRect->axis(QCPAxis::atLeft);

    MethodCurves curves;
    curves.method = method;
    curves.time = new QCPGraph(lengthAxis, timeAxis);
    const double slope = fittedSlope(result, method);
    curves.time->setName(
        std::isfinite(slope)
            ? tr("%1  slope\u00a0%2").arg(methodLabel(method)).arg(slope, 0, 'f', 2)
            : methodLabel(method));
    curves.time->setPen(QPen(color, kLinePenWidth));
    curves.time->setScatterStyle(marker);
    curves.time->setData(lengths, medians, true);
    addToLegend(curves.time);

    curves.errorBars = new QCPErrorBars(lengthAxis, timeAxis);
    curves.errorBars->setDataPlottable(curves.time);
    curves.errorBars->setData(below, above);
    curves.errorBars->setPen(QPen(color, 1.2));
    curves.errorBars->setWhiskerWidth(8);
    curves.errorBars->setSymbolGap(2 * kMarkerRadius + 2);

    // The crosses of skipped points sit along the top of the plot: updateLayout gives them their
    // value once the range is known.
    curves.skipped = new QCPGraph(lengthAxis, timeAxis);
    curves.skipped->setLineStyle(QCPGraph::lsNone);
    curves.skipped->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCross, QPen(color, 2), Qt::NoBrush, 9));
    curves.skipped->setData(skippedLengths, QVector<double>(skippedLengths.size(), 1.0), true);

    curves.model = new QCPGraph(memoryLengthAxis, memoryAxis);
    curves.model->setName(tr("%1, working-set model").arg(methodLabel(method)));
    curves.model->setPen(QPen(color, 1.6, Qt::DashLine));
    curves.model->setData(modelLengths, model, true);
    curves.peak = new QCPGraph(memoryLengthAxis, memoryAxis);
    curves.peak->setName(tr("%1, measured peak").arg(methodLabel(method)));
    curves.peak->setPen(QPen(color, kLinePenWidth));
    curves.peak->setScatterStyle(marker);
    curves.peak->setData(peakLengths, peak, true);

    if (!skippedLengths.isEmpty()) {
        curves.skippedNote = annotation(this, textColor(color));
        curves.skippedText =
            tr("%1 skipped for L \u2265 %2: over the memory budget")
                .arg(annotationLabel(method), formatLength(skippedLengths.front()));
        curves.skippedBriefText =
            tr("skipped for L \u2265 %1").arg(formatLength(skippedLengths.front()));
        curves.skippedNote->setText(curves.skippedText);
    }
    m_curves.push_back(curves);
}

void TimingChart::addCrossovers(const SweepResult& result)
{
    for (const MethodCurves& curves : m_curves) {
        const std::optional<TimedMethod> reference = crossoverReference(result, curves.method);
        if (!reference)
            continue;
        const double length = crossoverLength(result, curves.method, *reference);
        if (!std::isfinite(length))
            continue;
        const bool atFirstLength =
            std::abs(length - smallestCommonLength(result, curves.method, *reference)) <
            1e-9 * length;
        const QColor color = methodColor(curves.method);
        Crossover crossover;
        crossover.method = curves.method;
        crossover.reference = *reference;
        crossover.length = length;
        crossover.atFirstLength = atFirstLength;
        crossover.line = new QCPItemStraightLine(this);
        crossover.line->setLayer(QStringLiteral("grid"));
        QColor lineColor = color;
        lineColor.setAlpha(170);  // lighter than the curves it crosses
        crossover.line->setPen(QPen(lineColor, 1.3, Qt::DashLine));
        crossover.line->point1->setCoords(length, 1e-3);
        crossover.line->point2->setCoords(length, 1);
        crossover.label = annotation(this, textColor(color));
        crossover.briefText = atFirstLength ? tr("L \u2264 %1").arg(formatLength(length))
                                            : tr("L \u2248 %1").arg(formatLength(length, 2));
        crossover.text = tr("%1: %2").arg(annotationLabel(curves.method), crossover.briefText);
        crossover.label->setText(crossover.text);
        m_crossovers.push_back(crossover);
    }
}

void TimingChart::showPlots(bool shown)
{
    for (QCPAxisRect* rect : {m_timeRect, m_memoryRect})
        setAxesVisible(rect, shown);
    legend->setVisible(shown && !m_curves.empty());
    m_memoryLegend->setVisible(shown);
    setHeadingVisible(shown);
    m_hint->setVisible(!shown);
}

bool TimingChart::fitLengthTicks()
{
    bool changed = false;
    for (QCPAxisRect* rect : {m_timeRect, m_memoryRect}) {
        QCPAxis* axis = rect->axis(QCPAxis::atBottom);
        // The widest label is the longest length, e.g. "65,536" (or "2¹⁶" in a narrow chart).
        const double longest = axis->range().upper;
        const QString widest = m_narrowChart
                                   ? powerOfTwoLabel(std::exp2(std::floor(std::log2(longest))))
                                   : formatLength(longest);
        const int labelWidth = QFontMetrics(axis->tickLabelFont()).horizontalAdvance(widest);
        const int fit = int(rect->width() / (labelWidth + 2 * kLabelGap));
        // The log ticker rounds its step up or down to whole powers: ask for one fewer.
        const int count = std::clamp(fit - 1, 1, 8);
        if (axis->ticker()->tickCount() != count) {
            axis->ticker()->setTickCount(count);
            changed = true;
        }
    }
    return changed;
}

void TimingChart::updateLayout()
{
    // The memory key's box: the paper's colour, a little translucent, so that its text (in the
    // ink of the theme, which presentation mode sets) reads on it over grid lines.
    QColor box = mBackgroundBrush.color();
    box.setAlpha(215);
    m_memoryLegend->setBrush(box);
    // A chart narrower than this labels its memory axis's powers of ten as such ("10⁵", not
    // "100,000"; the 1, 2, 5 ticks of a short range stay plain numbers) and its lengths as powers
    // of two ("2¹⁰", not "1,024"): at 1280 x 800 the plain numbers left the memory plot 55
    // pixels, too few for its key, and each length axis room for one label ("1,024" of 128 to
    // 32,768).
    constexpr int kNarrowerThan = 560;
    const bool narrow = viewport().width() < kNarrowerThan;
    if (narrow != m_narrowChart) {
        m_narrowChart = narrow;
        setLogAxis(m_memoryRect->axis(QCPAxis::atLeft),
                   narrow ? LogTicker::Labels::PlainWhenDense : LogTicker::Labels::Plain, 5);
        for (QCPAxisRect* rect : {m_timeRect, m_memoryRect})
            static_cast<LogTicker*>(axisTicker(rect->axis(QCPAxis::atBottom)).data())
                ->setLabels(narrow ? LogTicker::Labels::PowersOfTwo : LogTicker::Labels::Plain);
    }
    HeadedChart::updateLayout();
    if (!m_hasResult)
        return;
    if (fitLengthTicks())
        QCustomPlot::updateLayout();

    // The key of the memory plot in one row when that fits its width, else one entry a row, else
    // one a row in short words ("model", "peak": the chart's tooltip says what they are); it
    // ran past the figure's edge in presentation mode's fonts at 1280 x 720.
    constexpr std::pair<int, bool> kKeyLayouts[] = {{0, false}, {1, false}, {1, true}};
    for (const auto& [wrap, shortNames] : kKeyLayouts) {
        for (int i = 0; i < m_memoryLegend->itemCount(); ++i)
            if (auto* key = qobject_cast<QCPPlottableLegendItem*>(m_memoryLegend->item(i)))
                key->plottable()->setName(
                    key->plottable()->property(shortNames ? kShortKeyName : kKeyName).toString());
        m_memoryLegend->setWrap(wrap);
        m_memoryLegend->setFillOrder(QCPLegend::foColumnsFirst, true);
        if (m_memoryLegend->minimumOuterSizeHint().width() <= m_memoryRect->width())
            break;
    }

    // The labels' rows depend on the pixel positions of their lengths, and the value ranges on
    // the rows; the tick labels of the ranges move the plots: settle them in a few passes.
    const int memoryLegendBand = m_memoryLegend->minimumOuterSizeHint().height() + 4;
    for (int pass = 0; pass < 3; ++pass) {
        const QRect timeBefore = m_timeRect->rect();
        const QRect memoryBefore = m_memoryRect->rect();
        const QMargins reserved = placeLabels();
        fitLogRange(m_timeRect->axis(QCPAxis::atLeft), m_timeData.lower, m_timeData.upper,
                    {reserved.bottom(), reserved.top()});
        fitLogRange(m_memoryRect->axis(QCPAxis::atLeft), m_memoryData.lower, m_memoryData.upper,
                    {0, memoryLegendBand});
        QCustomPlot::updateLayout();
        if (m_timeRect->rect() == timeBefore && m_memoryRect->rect() == memoryBefore)
            break;
    }
    placeLabels();

    // The crosses of skipped points, just under the top edge.
    const double crossValue =
        m_timeRect->axis(QCPAxis::atLeft)->pixelToCoord(m_timeRect->top() + kEdgePadding);
    for (const MethodCurves& curves : m_curves)
        for (auto it = curves.skipped->data()->begin(); it != curves.skipped->data()->end(); ++it)
            it->value = crossValue;
}

QMargins TimingChart::placeLabels()
{
    const QRect rect = m_timeRect->rect();
    const QCPAxis* lengthAxis = m_timeRect->axis(QCPAxis::atBottom);

    // Crossover labels prefer the left of their line, so that the label of the next line, a few
    // pixels to the right, can take the right in the same row.
    std::vector<RowLabel> crossovers;
    for (const Crossover& crossover : m_crossovers) {
        setFittingText(crossover.label, crossover.text, crossover.briefText, rect.width());
        crossovers.push_back({crossover.label, lengthAxis->coordToPixel(crossover.length), false});
    }
    // A note ends at the first cross of its method, leaving the others to its right.
    std::vector<RowLabel> notes;
    for (const MethodCurves& curves : m_curves) {
        if (curves.skippedNote) {
            setFittingText(curves.skippedNote, curves.skippedText, curves.skippedBriefText,
                           rect.width());
            const double firstSkipped = curves.skipped->data()->constBegin()->key;
            notes.push_back({curves.skippedNote,
                             lengthAxis->coordToPixel(firstSkipped) + kMarkerRadius, false});
        }
    }
    const int crossoverRows = arrangeInRows(crossovers, rect.left(), rect.right());
    const int noteRows = arrangeInRows(notes, rect.left(), rect.right());

    // Labels take at most these shares of the plot's height from the data; more rows of them
    // lie over the curves (on their translucent boxes).
    constexpr double kMaxCrossoverShare = 0.4;
    constexpr double kMaxNoteShare = 0.3;
    QMargins reserved;
    if (!crossovers.empty()) {
        // Rows closer together (down to touching boxes) where they would rise past the top.
        const double boxHeight = labelRowHeight(crossovers.front().item) - 2;
        const double rowHeight = std::max(
            boxHeight, std::min(labelRowHeight(crossovers.front().item),
                                (rect.height() - 8 - boxHeight) / std::max(crossoverRows - 1, 1)));
        for (const RowLabel& label : crossovers) {
            label.item->position->setCoords(label.left, rect.bottom() - 4 - label.row * rowHeight);
            label.item->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        }
        reserved.setBottom(int(std::ceil(
            std::min(crossoverRows * rowHeight + 4, kMaxCrossoverShare * rect.height()))));
    }
    if (!notes.empty()) {
        // Below the row of crosses.
        const double top = rect.top() + kEdgePadding + kMarkerRadius + 6;
        const double rowHeight = labelRowHeight(notes.front().item);
        for (const RowLabel& label : notes) {
            label.item->position->setCoords(label.left, top + label.row * rowHeight);
            label.item->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        }
        reserved.setTop(int(std::ceil(
            std::min(top - rect.top() + noteRows * rowHeight, kMaxNoteShare * rect.height()))));
    }
    return reserved;
}

void TimingChart::fitLogRange(QCPAxis* axis, double lowest, double highest,
                              QPair<int, int> reserved)
{
    const double pixels = axis->axisRect()->height();
    const double bottom = reserved.first + kEdgePadding;
    const double top = reserved.second + kEdgePadding;
    const double available = std::max(pixels - bottom - top, 0.3 * pixels);
    const double decadesPerPixel = (highest - lowest) / std::max(available, 1.0);
    axis->setRange(std::pow(10.0, lowest - bottom * decadesPerPixel),
                   std::pow(10.0, highest + top * decadesPerPixel));
}

void saveTimingChart(const SweepResult& result, const QString& path, FigureFormat format,
                     QSize size)
{
    TimingChart chart;
    chart.resize(size);
    chart.setResult(result);
    exportFigure(chart, path, format, size);
}

}  // namespace attnlab::ui

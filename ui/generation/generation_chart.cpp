#include "ui/generation/generation_chart.h"

#include "ui/plotting/log_ticker.h"
#include "ui/plotting/plot_style.h"

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// A KL below this (0, float rounding) is drawn here instead of falling off the log axis, and the
// chart says so.
constexpr double kKlFloor = 1e-6;
// Curves of fewer steps than this mark each step (one step draws a point, not a line).
constexpr std::size_t kMarkedSteps = 48;
const QColor kExactColor(40, 40, 40);
constexpr double kPenWidth = 2.0;

// The unit memory is drawn in: the largest power of 1024 not above `bytes` (bytes to GiB).
std::pair<double, QString> memoryUnit(double bytes)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        return {1024.0 * 1024 * 1024, QStringLiteral("GiB")};
    if (bytes >= 1024.0 * 1024)
        return {1024.0 * 1024, QStringLiteral("MiB")};
    if (bytes >= 1024.0)
        return {1024.0, QStringLiteral("KiB")};
    return {1.0, QStringLiteral("bytes")};
}

QString chartTitle(GenerationChartKind kind, bool compact)
{
    if (compact) {
        switch (kind) {
            case GenerationChartKind::Kl:
                return GenerationChart::tr("Next-token KL, teacher-forced");
            case GenerationChartKind::Cost:
                return GenerationChart::tr("Time per token: whole step (solid), attention "
                                           "(dashed)");
            case GenerationChartKind::Memory: return GenerationChart::tr("Memory held");
        }
    }
    switch (kind) {
        case GenerationChartKind::Kl:
            return GenerationChart::tr("Next-token KL divergence, approximate against exact "
                                       "(teacher-forced)");
        case GenerationChartKind::Cost: return GenerationChart::tr("Cost per generated token");
        case GenerationChartKind::Memory:
            return GenerationChart::tr("Memory held from token to token");
    }
    return {};
}

// What the chart of `kind` will show, said in its place before any step.
QString emptyHint(GenerationChartKind kind)
{
    switch (kind) {
        case GenerationChartKind::Kl:
            return GenerationChart::tr("Generate: the KL between the exact and the approximate "
                                       "next-token distributions appears here, token by token.");
        case GenerationChartKind::Cost:
            return GenerationChart::tr("Generate: the time each run takes per token appears "
                                       "here.");
        case GenerationChartKind::Memory:
            return GenerationChart::tr("Generate: the memory each run holds (the key/value cache "
                                       "against the state) appears here.");
    }
    return {};
}

}  // namespace

GenerationChart::GenerationChart(GenerationChartKind kind, QWidget* parent)
    : HeadedChart(parent, 10.5, 36), m_kind(kind)
{
    setTitle(chartTitle(kind, false));
    QCPAxisRect* plot = axisRect();
    arrangeUnderHeading(plot);
    legend->setVisible(true);
    for (QCPAxis* axis : {xAxis, yAxis}) {
        axis->setTickLabelFont(sizedFont(font(), 10));
        axis->setLabelFont(sizedFont(font(), 11));
        axis->grid()->setPen(QPen(QColor(215, 215, 215), 0));
        axis->grid()->setSubGridPen(QPen(QColor(238, 238, 238), 0));
    }
    xAxis->setLabel(tr("position of the token read (prompt and generated tokens, 0-based)"));
    xAxis->setLabelPadding(2);
    xAxis->setTicker(integerTicker());
    if (kind == GenerationChartKind::Kl) {
        yAxis->setLabel(tr("KL(p \u2016 q) (nats)"));
        setLogAxis(yAxis, LogTicker::Labels::AxisFormat);
    } else if (kind == GenerationChartKind::Cost) {
        // Logarithmic: attention alone takes a tenth to a hundredth of the whole step, and a
        // cost that climbs with the position reads as a slope beside a flat one.
        yAxis->setLabel(tr("time per token (ms, logarithmic)"));
        setLogAxis(yAxis, LogTicker::Labels::Plain);
    }
    rebuild();
}

void GenerationChart::setSteps(const std::vector<GenerationStep>& steps, Method method,
                               const QString& subtitle)
{
    m_steps = steps;
    m_method = method;
    setSubtitle(subtitle);
    rebuild();
}

void GenerationChart::setCompact(bool compact)
{
    m_compact = compact;
    setSubtitleRowShown(!compact);
    setTitle(chartTitle(m_kind, compact));
    xAxis->setLabel(compact ? tr("position of the token read")
                            : tr("position of the token read (prompt and generated tokens, "
                                 "0-based)"));
    if (m_kind == GenerationChartKind::Cost)
        yAxis->setLabel(compact ? tr("ms per token (log)")
                                : tr("time per token (ms, logarithmic)"));
    rebuild();
}

QCPGraph* GenerationChart::addCurve(const QString& name, const QColor& color, Qt::PenStyle style)
{
    QCPGraph* graph = addGraph();
    graph->setPen(QPen(color, kPenWidth, style));
    if (m_steps.size() < kMarkedSteps)
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 6));
    graph->setName(name);
    addToLegend(graph);
    return graph;
}

namespace {

// The value of each step, in step order.
template <typename Value>
QVector<double> stepValues(const std::vector<GenerationStep>& steps, Value value)
{
    QVector<double> ys;
    for (const GenerationStep& step : steps)
        ys.append(value(step));
    return ys;
}

}  // namespace

void GenerationChart::rebuild()
{
    clearPlottables();
    clearItems();
    legend->clearItems();
    const QVector<double> positions =
        stepValues(m_steps, [](const GenerationStep& s) { return double(s.position); });
    // Before any step: what will be here, in the plot's place, and no axes of made-up ranges.
    const bool empty = m_steps.empty();
    setAxesVisible(axisRect(), !empty);
    if (empty) {
        new FigureHint(this, emptyHint(m_kind), m_compact ? 10 : 12);
        replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const QCPRange range = m_kind == GenerationChartKind::Kl     ? plotKl(positions)
                           : m_kind == GenerationChartKind::Cost ? plotCost(positions)
                                                                 : plotMemory(positions);
    yAxis->setRange(range);
    xAxis->setRange(positions.front() - 0.5, positions.back() + 0.5);
    replot(QCustomPlot::rpQueuedReplot);
}

QCPRange GenerationChart::plotKl(const QVector<double>& positions)
{
    const QColor approx = methodColor(m_method);
    const QString method = methodInfo(m_method).title;
    QCPGraph* kl =
        addCurve(m_compact ? tr("KL(exact \u2016 %1)").arg(method)
                           : tr("KL(exact \u2016 %1), both fed the exact tokens").arg(method),
                 approx, Qt::SolidLine);
    kl->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, approx, approx, 5));
    kl->setData(positions,
                stepValues(m_steps,
                           [](const GenerationStep& s) {
                               return std::isfinite(s.kl) ? std::max(s.kl, kKlFloor) : qQNaN();
                           }),
                true);
    // From a third of the smallest KL drawn to three times the largest finite one.
    double high = 10 * kKlFloor;
    double low = 1e300;
    for (const GenerationStep& step : m_steps)
        if (std::isfinite(step.kl)) {
            high = std::max(high, step.kl);
            low = std::min(low, std::max(step.kl, kKlFloor));
        }
    low = std::min(low, high / 10) / 3;
    high *= 3;
    const bool floored = std::any_of(m_steps.begin(), m_steps.end(), [](const GenerationStep& s) {
        return std::isfinite(s.kl) && s.kl < kKlFloor;
    });
    if (floored) {
        auto* note = new QCPItemText(this);
        note->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        note->position->setType(QCPItemPosition::ptAxisRectRatio);
        note->position->setCoords(0.99, 0.97);
        note->setFont(sizedFont(font(), 10));
        note->setColor(QColor(80, 80, 80));
        note->setText(m_compact ? tr("KL < 1e-6 drawn at 1e-6")
                                : tr("KL below 1e-6 (0 or float rounding) drawn at 1e-6"));
    }
    QCPGraph* infinite = addCurve(tr("no distribution (infinite KL)"), approx, Qt::NoPen);
    infinite->setLineStyle(QCPGraph::lsNone);
    infinite->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, approx, 9));
    QVector<double> xs, ys;
    for (const GenerationStep& step : m_steps)
        if (!std::isfinite(step.kl)) {
            xs.append(double(step.position));
            ys.append(high / 1.5);
        }
    infinite->setData(xs, ys, true);
    if (xs.isEmpty())
        infinite->removeFromLegend();
    const auto divergence = std::find_if(m_steps.begin(), m_steps.end(),
                                         [](const GenerationStep& s) { return !s.sameToken; });
    if (divergence != m_steps.end()) {
        auto* line = new QCPItemStraightLine(this);
        line->setPen(QPen(QColor(120, 120, 120), 1.4, Qt::DashLine));
        line->point1->setCoords(double(divergence->position), 1);
        line->point2->setCoords(double(divergence->position), 2);
        auto* label = new QCPItemText(this);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(double(divergence->position), 0.02);
        label->setPadding(QMargins(6, 0, 0, 0));
        label->setFont(sizedFont(font(), 10));
        label->setColor(QColor(80, 80, 80));
        label->setText(
            m_compact ? tr("differ from token %1").arg(divergence->index)
                      : tr("continuations differ from here (token %1)").arg(divergence->index));
    }
    return QCPRange(low, high);
}

QCPRange GenerationChart::plotCost(const QVector<double>& positions)
{
    const QColor approx = methodColor(m_method);
    const QString method = methodInfo(m_method).title;
    const auto ms = [](double seconds) { return seconds * 1e3; };
    // Compact: the runs' colours in the legend, the line styles in the title.
    addCurve(m_compact ? tr("exact") : tr("exact, whole step"), kExactColor, Qt::SolidLine)
        ->setData(positions,
                  stepValues(m_steps, [&](const GenerationStep& s) { return ms(s.exactSeconds); }),
                  true);
    addCurve(m_compact ? method : tr("%1, whole step").arg(method), approx, Qt::SolidLine)
        ->setData(positions,
                  stepValues(m_steps, [&](const GenerationStep& s) { return ms(s.approxSeconds); }),
                  true);
    QCPGraph* exactAttention =
        addCurve(tr("exact attention (key/value cache)"), kExactColor, Qt::DashLine);
    exactAttention->setData(
        positions,
        stepValues(m_steps, [&](const GenerationStep& s) { return ms(s.exactAttentionSeconds); }),
        true);
    QCPGraph* approxAttention =
        addCurve(tr("%1 attention (recurrent state)").arg(method), approx, Qt::DashLine);
    approxAttention->setData(
        positions,
        stepValues(m_steps, [&](const GenerationStep& s) { return ms(s.approxAttentionSeconds); }),
        true);
    if (m_compact) {
        exactAttention->removeFromLegend();
        approxAttention->removeFromLegend();
    }
    // From two thirds of the shortest time to 1.5 times the longest.
    double low = 1e300;
    double high = 0;
    for (const GenerationStep& step : m_steps)
        for (double seconds : {step.exactSeconds, step.approxSeconds, step.exactAttentionSeconds,
                               step.approxAttentionSeconds})
            if (seconds > 0) {
                low = std::min(low, ms(seconds));
                high = std::max(high, ms(seconds));
            }
    if (high == 0)
        low = high = 1;
    return QCPRange(low / 1.5, high * 1.5);
}

QCPRange GenerationChart::plotMemory(const QVector<double>& positions)
{
    const QColor approx = methodColor(m_method);
    const QString method = methodInfo(m_method).title;
    double largest = 1;
    for (const GenerationStep& step : m_steps)
        largest = std::max({largest, step.cacheBytes, step.stateBytes});
    const std::pair<double, QString> memory = memoryUnit(largest);
    const double unit = memory.first;
    yAxis->setLabel(tr("memory (%1)").arg(memory.second));
    addCurve(m_compact ? tr("exact: key/value cache")
                       : tr("exact: key/value cache, 2 L d floats per key/value head and layer"),
             kExactColor, Qt::SolidLine)
        ->setData(positions,
                  stepValues(m_steps, [&](const GenerationStep& s) { return s.cacheBytes / unit; }),
                  true);
    addCurve((m_compact ? tr("%1: its state")
                        : tr("%1: its state (and the cache of layers it leaves exact)"))
                 .arg(method),
             approx, Qt::SolidLine)
        ->setData(positions,
                  stepValues(m_steps, [&](const GenerationStep& s) { return s.stateBytes / unit; }),
                  true);
    return QCPRange(0, largest / unit * 1.08);
}

void saveGenerationChart(GenerationChartKind kind, const std::vector<GenerationStep>& steps,
                         Method method, const QString& subtitle, const QString& path,
                         FigureFormat format, QSize size)
{
    GenerationChart chart(kind);
    chart.resize(size);
    chart.setSteps(steps, method, subtitle);
    exportFigure(chart, path, format, size);
}

}  // namespace attnlab::ui

#include "ui/experiment/error_distribution_view.h"

#include "ui/plotting/log_ticker.h"
#include "ui/plotting/plot_style.h"

#include <QLocale>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// The narrowest the two histograms are drawn side by side at; narrower, they stack.
constexpr int kMinPlotWidth = 340;
// Pixels of plot width per label of the log error axis.
constexpr int kErrorLabelSpacing = 70;

// The histogram spans at most this many decades below its largest error.
constexpr int kMaxDecades = 12;
// A count axis ends half a count below 1, so that empty bins lie on its floor.
constexpr double kFloorCount = 0.5;

// The colours of the small and the large exact entries.
const QColor kSmallColor(0xd5, 0x5e, 0x00);  // vermillion
const QColor kLargeColor(0x00, 0x72, 0xb2);  // blue

// Collects the errors of one kind, then bins them.
class Binner {
public:
    explicit Binner(int binsPerDecade) : m_binsPerDecade(binsPerDecade) {}

    // Notes an error of the small (or large) entries for the range; counts zeros and totals.
    void note(double error, bool small)
    {
        (small ? m_histogram.smallTotal : m_histogram.largeTotal) += 1;
        if (error == 0) {
            (small ? m_histogram.smallZeros : m_histogram.largeZeros) += 1;
            return;
        }
        m_smallest = std::min(m_smallest, error);
        m_largest = std::max(m_largest, error);
    }

    // Makes the edges from the range of the errors noted.
    void makeEdges()
    {
        if (!(m_largest > 0))
            return;
        const int top = int(std::floor(std::log10(m_largest))) + 1;
        const int bottom = std::max(int(std::floor(std::log10(m_smallest))), top - kMaxDecades);
        const int bins = (top - bottom) * m_binsPerDecade;
        for (int k = 0; k <= bins; ++k)
            m_histogram.edges.push_back(std::pow(10.0, bottom + double(k) / m_binsPerDecade));
        m_histogram.small.assign(std::size_t(bins), 0);
        m_histogram.large.assign(std::size_t(bins), 0);
        m_logBottom = bottom;
    }

    // Counts a positive error in its bin: edges[k] <= error < edges[k + 1].
    void count(double error, bool small)
    {
        if (error == 0 || m_histogram.edges.empty())
            return;
        const auto bins = qsizetype(m_histogram.small.size());
        qsizetype k = qsizetype(std::floor((std::log10(error) - m_logBottom) * m_binsPerDecade));
        k = std::clamp<qsizetype>(k, 0, bins - 1);
        // The logarithm may round across an edge: the edges decide.
        while (k > 0 && error < m_histogram.edges[std::size_t(k)])
            --k;
        while (k < bins - 1 && error >= m_histogram.edges[std::size_t(k + 1)])
            ++k;
        (small ? m_histogram.small : m_histogram.large)[std::size_t(k)] += 1;
    }

    const ErrorHistogram& histogram() const { return m_histogram; }

private:
    int m_binsPerDecade;
    double m_smallest = HUGE_VAL;
    double m_largest = 0;
    double m_logBottom = 0;
    ErrorHistogram m_histogram;
};

// Calls visit(absolute, relative (NaN where P_ij = 0), small) for every entry of the
// distribution: unmasked, with a finite error.
template <typename Visit>
void forEachEntry(const ResultMatrix& exact, const ResultMatrix& approx, bool causal, Visit&& visit)
{
    const Eigen::Index columns = exact.cols();
    std::vector<double> exactRow(static_cast<std::size_t>(columns));
    std::vector<double> approxRow(static_cast<std::size_t>(columns));
    for (Eigen::Index i = 0; i < exact.rows(); ++i) {
        const Eigen::Index seen = causal ? std::min(i + 1, columns) : columns;
        const double threshold = 1.0 / double(seen);
        exact.readRow(i, 0, seen, exactRow.data());
        approx.readRow(i, 0, seen, approxRow.data());
        for (Eigen::Index j = 0; j < seen; ++j) {
            const double p = exactRow[std::size_t(j)];
            const double error = std::abs(approxRow[std::size_t(j)] - p);
            if (!std::isfinite(error))
                continue;
            visit(error, p > 0 ? error / p : std::nan(""), p < threshold);
        }
    }
}

// "1,234".
QString grouped(qint64 count)
{
    return QLocale(QLocale::English).toString(count);
}

}  // namespace

ErrorDistribution errorDistribution(const ResultMatrix& exact, const ResultMatrix& approx,
                                    bool causal, int binsPerDecade)
{
    Binner absolute(binsPerDecade), relative(binsPerDecade);
    forEachEntry(exact, approx, causal, [&](double error, double ratio, bool small) {
        absolute.note(error, small);
        if (!std::isnan(ratio))
            relative.note(ratio, small);
    });
    absolute.makeEdges();
    relative.makeEdges();
    forEachEntry(exact, approx, causal, [&](double error, double ratio, bool small) {
        absolute.count(error, small);
        if (!std::isnan(ratio))
            relative.count(ratio, small);
    });
    return {absolute.histogram(), relative.histogram()};
}

ErrorDistributionView::ErrorDistributionView(QWidget* parent) : HeadedChart(parent, 10, 30, 12)
{
    setTitle(tr("Where the error lies: entry errors by the size of the exact entry"));
    m_absoluteRect = axisRect();
    m_relativeRect = new QCPAxisRect(this);
    m_plots = new QCPLayoutGrid;
    m_plots->addElement(0, 0, m_absoluteRect);
    m_plots->addElement(0, 1, m_relativeRect);
    m_plots->setColumnSpacing(14);
    m_plots->setRowSpacing(10);
    arrangeUnderHeading(m_plots);
    auto* margins = new QCPMarginGroup(this);
    for (QCPAxisRect* rect : {m_absoluteRect, m_relativeRect})
        rect->setMarginGroup(QCP::msAll, margins);

    for (QCPAxisRect* rect : {m_absoluteRect, m_relativeRect}) {
        for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)})
            setLogAxis(axis, LogTicker::Labels::AxisFormat);
        applyAxisStyle(rect, font(), 9.5, true);
        rect->axis(QCPAxis::atLeft)->setLabel(tr("entries (count)"));
        rect->setMinimumMargins(QMargins(0, 0, 16, 0));
    }
    m_absoluteRect->axis(QCPAxis::atBottom)
        ->setLabel(tr("absolute error |P\u0302_ij \u2212 P_ij| (probability)"));
    m_relativeRect->axis(QCPAxis::atBottom)
        ->setLabel(tr("relative error |P\u0302_ij \u2212 P_ij| / P_ij (ratio)"));

    const auto makeGraphs = [](QCPAxisRect* rect, QCPGraph* graphs[2]) {
        for (int split = 0; split < 2; ++split) {
            QColor color = split == 0 ? kSmallColor : kLargeColor;
            auto* graph = new QCPGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            graph->setLineStyle(QCPGraph::lsStepLeft);
            graph->setPen(QPen(color, 1.8));
            color.setAlpha(60);
            graph->setBrush(color);
            graphs[split] = graph;
        }
    };
    makeGraphs(m_absoluteRect, m_absoluteGraphs);
    makeGraphs(m_relativeRect, m_relativeGraphs);
    // One legend for both plots: the curves of the left one stand for both.
    for (QCPGraph* graph : m_absoluteGraphs)
        addToLegend(graph);

    m_hint = new FigureHint(this,
                            tr("The distribution of the errors shows here once an approximation "
                               "is computed."),
                            11);

    clear();
}

void ErrorDistributionView::setMatrices(const std::shared_ptr<const MatrixD>& exact,
                                        const std::shared_ptr<const MatrixD>& approx, bool causal)
{
    if (!exact || !approx || exact->size() == 0 || exact->rows() != approx->rows() ||
        exact->cols() != approx->cols()) {
        clear();
        return;
    }
    setDistribution(errorDistribution(ResultMatrix(exact), ResultMatrix(approx), causal),
                    exact->rows(), exact->cols(), causal);
}

void ErrorDistributionView::setDistribution(const ErrorDistribution& distribution,
                                            Eigen::Index rows, Eigen::Index cols, bool causal)
{
    m_distribution = distribution;
    showHistogram(m_distribution.absolute, m_absoluteRect, m_absoluteGraphs);
    showHistogram(m_distribution.relative, m_relativeRect, m_relativeGraphs);

    const ErrorHistogram& absolute = m_distribution.absolute;
    const QString threshold = causal ? tr("1/(i + 1)") : tr("1/L");
    m_absoluteGraphs[0]->setName(
        tr("small entries: P_ij < %1 (%2)").arg(threshold, grouped(absolute.smallTotal)));
    m_absoluteGraphs[1]->setName(
        tr("large entries: P_ij \u2265 %1 (%2)").arg(threshold, grouped(absolute.largeTotal)));
    QString subtitle = tr("%1 \u00d7 %2 entries%3; %4 is the weight of uniform attention")
                           .arg(rows)
                           .arg(cols)
                           .arg(causal ? tr(" (causal: j \u2264 i)") : QString(), threshold);
    const qint64 zeros = absolute.smallZeros + absolute.largeZeros;
    if (zeros > 0)
        subtitle += zeros == 1
                        ? tr("; 1 exact (zero) error, not on the log axis")
                        : tr("; %1 exact (zero) errors, not on the log axis").arg(grouped(zeros));
    setSubtitle(subtitle);
    showPlots(true);
    replot(rpQueuedReplot);
}

void ErrorDistributionView::clear()
{
    m_distribution = ErrorDistribution();
    for (QCPGraph* graph :
         {m_absoluteGraphs[0], m_absoluteGraphs[1], m_relativeGraphs[0], m_relativeGraphs[1]})
        graph->data()->clear();
    setSubtitle(QString());
    showPlots(false);
    replot(rpQueuedReplot);
}

void ErrorDistributionView::updateLayout()
{
    // Side by side when each plot gets kMinPlotWidth, else one above the other.
    const int width = viewport().width();
    const bool stacked = width < 2 * kMinPlotWidth;
    if (stacked != (m_plots->rowCount() == 2)) {
        m_plots->take(m_relativeRect);
        m_plots->simplify();
        m_plots->addElement(stacked ? 1 : 0, stacked ? 0 : 1, m_relativeRect);
    }
    // About one error label ("10⁻⁵") per kErrorLabelSpacing pixels of a plot.
    const int plotWidth = stacked ? width : width / 2;
    for (QCPAxisRect* rect : {m_absoluteRect, m_relativeRect})
        rect->axis(QCPAxis::atBottom)
            ->ticker()
            ->setTickCount(std::clamp(plotWidth / kErrorLabelSpacing, 2, 6));
    // Titles wrap rather than run past the edges of a narrow figure; the legend's two entries
    // side by side when they fit, else one a row.
    HeadedChart::updateLayout();
}

void ErrorDistributionView::showHistogram(const ErrorHistogram& histogram, QCPAxisRect* rect,
                                          QCPGraph* graphs[2])
{
    qint64 largestCount = 1;
    for (int split = 0; split < 2; ++split) {
        const std::vector<qint64>& counts = split == 0 ? histogram.small : histogram.large;
        // A step from each bin's left edge at its count, closed at the last edge; empty bins lie
        // on the axis floor.
        QVector<double> keys, values;
        for (std::size_t k = 0; k < counts.size(); ++k) {
            keys.append(histogram.edges[k]);
            values.append(counts[k] > 0 ? double(counts[k]) : kFloorCount);
            largestCount = std::max(largestCount, counts[k]);
        }
        if (!counts.empty()) {
            keys.append(histogram.edges.back());
            values.append(values.back());
        }
        graphs[split]->setData(keys, values, true);
    }
    if (!histogram.edges.empty())
        rect->axis(QCPAxis::atBottom)->setRange(histogram.edges.front(), histogram.edges.back());
    rect->axis(QCPAxis::atLeft)
        ->setRange(kFloorCount, std::pow(10.0, std::ceil(std::log10(2.0 * double(largestCount)))));
}

void ErrorDistributionView::showPlots(bool shown)
{
    for (QCPAxisRect* rect : {m_absoluteRect, m_relativeRect})
        setAxesVisible(rect, shown);
    legend->setVisible(shown);
    setHeadingVisible(shown);
    m_hint->setVisible(!shown);
}

}  // namespace attnlab::ui

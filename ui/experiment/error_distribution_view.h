#pragma once

#include "attention/result_matrix.h"
#include "types.h"

#include "ui/plotting/headed_chart.h"
#include "ui/plotting/plot_style.h"

#include <qcustomplot.h>

#include <memory>
#include <vector>

namespace attnlab::ui {

// Counts of entry errors in log-spaced bins, split by the size of the exact entry.
struct ErrorHistogram {
    // Bin k holds the errors e with edges[k] <= e < edges[k + 1] (the last bin also its upper
    // edge; the first bin also the positive errors below edges[0]). Edges are powers of
    // 10^(1 / binsPerDecade), from the decade of the smallest positive error (at most 12 decades
    // below the largest) to the decade above the largest. Empty when no error is positive.
    std::vector<double> edges;
    std::vector<qint64> small;  // entries whose exact value is below the row's threshold
    std::vector<qint64> large;  // the others
    qint64 smallZeros = 0;      // errors exactly 0 (a log axis has no place for them)
    qint64 largeZeros = 0;
    qint64 smallTotal = 0;  // every entry counted, zeros included
    qint64 largeTotal = 0;
};

// The errors of P^ against P entry by entry: absolute |P^_ij - P_ij| and relative
// |P^_ij - P_ij| / P_ij, each split into small exact entries, P_ij < 1/n_i, and large ones,
// P_ij >= 1/n_i, where n_i is the number of keys row i attends to (L; i + 1 when causal), so 1/n_i
// is the weight of uniform attention. Masked entries (j > i when causal) and non-finite errors are
// left out; the relative errors leave out entries with P_ij = 0 too.
struct ErrorDistribution {
    ErrorHistogram absolute;
    ErrorHistogram relative;
};

// Bins the errors of approx against exact (both R x C, R <= C) as ErrorDistribution describes,
// reading them row by row in the precision they are kept in (no double copies of a result's P).
ErrorDistribution errorDistribution(const ResultMatrix& exact, const ResultMatrix& approx,
                                    bool causal, int binsPerDecade = 5);

// The "distribution" view of the error map: two histograms side by side, the absolute errors
// |P^_ij - P_ij| (left) and the relative errors |P^_ij - P_ij| / P_ij (right), each as two filled
// step curves, one for the small exact entries (P_ij below uniform attention, 1/L) and one for
// the large ones, on a log error axis and a log count axis. It shows where the approximation's
// error lies: positive random features keep the relative error of small entries low, where
// trigonometric features blow it up. Takes the same shared matrices as the heatmaps (no copy is
// kept).
class ErrorDistributionView : public HeadedChart {
    Q_OBJECT

public:
    explicit ErrorDistributionView(QWidget* parent = nullptr);

    // Bins the errors of approx against exact (the result's P and P^ of one head) and redraws
    // (queued). A null or empty matrix, or two of different sizes, clears the view.
    void setMatrices(const std::shared_ptr<const MatrixD>& exact,
                     const std::shared_ptr<const MatrixD>& approx, bool causal);
    // Shows `distribution`, the errors of two rows x cols matrices as errorDistribution bins
    // them (on a worker thread, for a large L), and redraws (queued).
    void setDistribution(const ErrorDistribution& distribution, Eigen::Index rows,
                         Eigen::Index cols, bool causal);
    // Shows nothing but a hint.
    void clear();

    // The histograms shown (empty after clear()).
    const ErrorDistribution& distribution() const { return m_distribution; }

    QCPAxisRect* absoluteRect() const { return m_absoluteRect; }
    QCPAxisRect* relativeRect() const { return m_relativeRect; }
    // The step curves: [0] small entries, [1] large entries, for the absolute and relative plots.
    QCPGraph* absoluteGraph(int split) const { return m_absoluteGraphs[split]; }
    QCPGraph* relativeGraph(int split) const { return m_relativeGraphs[split]; }

protected:
    // QCustomPlot's layout, after the plots' arrangement, the titles and the legend's columns
    // for the width.
    void updateLayout() override;

private:
    // Draws one histogram into its rect's two graphs and fits the rect's axes.
    void showHistogram(const ErrorHistogram& histogram, QCPAxisRect* rect, QCPGraph* graphs[2]);
    void showPlots(bool shown);

    ErrorDistribution m_distribution;
    QCPLayoutGrid* m_plots;  // the two histograms: side by side, or stacked when narrow
    QCPAxisRect* m_absoluteRect;
    QCPAxisRect* m_relativeRect;
    QCPGraph* m_absoluteGraphs[2];
    QCPGraph* m_relativeGraphs[2];
    FigureHint* m_hint;
};

}  // namespace attnlab::ui

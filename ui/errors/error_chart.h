#pragma once

#include "sweeps/error_sweep.h"

#include "ui/plotting/figure_export.h"
#include "ui/plotting/headed_chart.h"
#include "ui/plotting/plot_style.h"

#include <QColor>

#include <qcustomplot.h>

#include <vector>

namespace attnlab::ui {

// The y axis title of a metric, with its unit: "relative Frobenius error ‖P^ − P‖ / ‖P‖ (ratio)",
// "mean row total variation of P^ from P (probability)", "relative Frobenius error of the output
// ‖O^ − O‖ / ‖O‖ (ratio)", "MSE of the estimate of exp(x'·y') (kernel units²)".
QString metricAxisLabel(ErrorMetric metric);
// The x axis title of a sweep, with its unit: "number of features m (random projections)",
// "query/key norm multiplier (× the input's |q|, |k|)", "sequence length L (tokens)".
QString sweepAxisLabel(ErrorSweepKind sweep);
// The x axis title of an axis: the sweep's for ErrorAxis::Value, else "measured time of the
// approximate output (seconds)" or "flops of the approximate output (the cost model's count)".
QString errorAxisLabel(ErrorAxis axis, ErrorSweepKind sweep);

// A curve (or a row of it) as the window names it, in the legend and the progress: the method's
// label (the registry's title) and, for a method that draws W, its rows ("FAVOR+ positive,
// orthogonal rows", "elu+1").
QString curveLabel(Method method, const std::optional<ProjectionKind>& projection);

// The errors of an error sweep against the swept value, one figure (exported as one): a title, a
// line under it giving the input, d, s and the seeds, one plot, and a legend under the plot.
// Curves are named by curveLabel; when every curve that draws W has the same rows, the subtitle
// says them once ("W of orthogonal rows") and the legend leaves them out.
//
// For the attention metrics (relative Frobenius error of P or of the output, mean row total
// variation): one curve per method and projection through the mean over the seeds at each value,
// with a translucent band from the 10th to the 90th percentile over the seeds; orthogonal rows
// solid, iid rows dashed with a fainter band between dashed edges, maps without W solid. The y axis
// is logarithmic; the x axis is logarithmic (base 2) for m and L, linear for the norm multiplier.
// For m and L the legend gives each curve's fitted log-log slope (about -1/2 for the relative
// Frobenius error against m).
//
// For the kernel MSE (the chosen (query, key) pair): each method and projection's empirical MSE
// as points with bars of one standard error, and for each map Lemma 2 covers its closed-form MSE
// for iid rows (lemma2MseAt), drawn as a broad light line from the formula at many values across
// the axis, so the measurement and the theory appear on one plot.
//
// Against the cost (ErrorAxis::Seconds or Flops, log-log) the same curves are drawn at each
// point's median time or flop count instead of its value, with the Pareto front across every
// curve (paretoFront) as a broad grey staircase: the lowest error any method reached at that cost
// or less. The Lemma 2 curves, drawn against m, are left out there.
class ErrorChart : public HeadedChart {
    Q_OBJECT

public:
    // The plottables drawn for one method and projection.
    struct CurvePlot {
        ErrorCurve curve;
        QCPGraph* mean = nullptr;           // the mean over the seeds at each value
        QCPGraph* bandLow = nullptr;        // 10th percentile (the band's lower edge); null in
                                            // the kernel view
        QCPGraph* bandHigh = nullptr;       // 90th percentile, filled down to bandLow
        QCPErrorBars* errorBars = nullptr;  // kernel view: mean ± standard error; null otherwise
    };

    // The Lemma 2 curve of one map (kernel view only).
    struct TheoryCurve {
        Method method = Method::FavorPositive;
        QCPGraph* graph = nullptr;
    };

    explicit ErrorChart(QWidget* parent = nullptr);

    // Shows `metric` of `result`, the subtitle (which describes the result's input) followed by
    // `note`. May be called again as rows arrive (a partial result), or with another metric;
    // redraws (queued).
    void setResult(const ErrorSweepResult& result, ErrorMetric metric,
                   ErrorAxis axis = ErrorAxis::Value, const QString& note = QString());
    // Shows no result: the plot's place holds a hint to run a sweep.
    void clear();
    bool hasResult() const { return m_hasResult; }
    ErrorMetric errorMetric() const { return m_metric; }
    ErrorAxis axis() const { return m_axis; }
    // The Pareto front drawn against the cost; null against the swept value.
    const QCPGraph* paretoFront() const { return m_front; }

    const std::vector<CurvePlot>& curves() const { return m_curves; }
    const std::vector<TheoryCurve>& theoryCurves() const { return m_theory; }
    // The legend text of the curve of ErrorCurve::label() curveLabel ("FAVOR+ positive, orthogonal
    // rows  slope -0.51", or "FAVOR+ positive  slope -0.51" when its rows are every curve's);
    // empty when absent.
    QString legendText(const QString& curveLabel) const;

    QCPAxisRect* plotRect() const { return axisRect(); }
    const QCPItemText* hint() const { return m_hint; }

private:
    // Removes every curve of the result shown.
    void removeResult();
    // A curve's name in the legend: curveLabel, without the rows of W when every curve has the
    // same (m_sharedProjection; the subtitle says them).
    QString curveName(const ErrorCurve& curve) const;
    // The curves of the attention metrics (result's curves of the metric shown): mean and band.
    void addBandCurves(const ErrorSweepResult& result, const std::vector<ErrorCurve>& curves);
    // The kernel view: empirical points with standard-error bars, and the Lemma 2 curves.
    void addKernelCurves(const ErrorSweepResult& result, const std::vector<ErrorCurve>& curves);
    // Sets the axis scales, ranges and labels for the result's sweep and the values drawn.
    void fitAxes(const ErrorSweepResult& result);
    void showPlot(bool shown);

    FigureHint* m_hint;
    QCPGraph* m_bandKey;  // a legend entry for the bands
    bool m_hasResult = false;
    ErrorMetric m_metric = ErrorMetric::RelFrobeniusAttention;
    ErrorAxis m_axis = ErrorAxis::Value;
    std::optional<ProjectionKind> m_sharedProjection;  // the rows of W of every curve, if one
    QCPGraph* m_front = nullptr;
    std::vector<CurvePlot> m_curves;
    std::vector<TheoryCurve> m_theory;
};

// Draws result's `metric` against `axis` as the Error analysis page's chart does, offscreen, into
// path at `size` logical pixels (PNG at twice that, SVG or PDF), for `attention-lab errors
// --plot`. Throws OutputError naming the path.
void saveErrorChart(const ErrorSweepResult& result, ErrorMetric metric, ErrorAxis axis,
                    const QString& path, FigureFormat format, QSize size);

}  // namespace attnlab::ui

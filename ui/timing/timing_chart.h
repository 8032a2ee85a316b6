#pragma once

#include "sweeps/timing_sweep.h"

#include "ui/plotting/figure_export.h"
#include "ui/plotting/headed_chart.h"
#include "ui/plotting/plot_style.h"

#include <QColor>

#include <qcustomplot.h>

#include <optional>
#include <vector>

namespace attnlab::ui {

// The exact method a linear method's crossover is measured against: exact streaming of the same
// causality when the result has measured points of it, else exact materialised of the same
// causality when it has those; none otherwise (and none for an exact method).
std::optional<TimedMethod> crossoverReference(const SweepResult& result, const TimedMethod& method);

// A sequence length with thousands separators ("65,536"). With significantDigits > 0 it is
// rounded to that many significant digits first ("1,900" for 1,873.4 and 2).
QString formatLength(double length, int significantDigits = 0);

// An algorithm as the chart names it: the method's label (the registry's title), with ", causal"
// for the causal variant ("FAVOR+ positive, causal").
QString methodLabel(const TimedMethod& method);

// The colour of an algorithm's curves in both plots (Okabe-Ito hues, which stay apart for the
// common colour-vision deficiencies and on a projector; no yellow, which fades on white); the
// causal variant takes a darker shade of the same hue (exact streaming: grey for black).
QColor methodColor(const TimedMethod& method);

// The cost of attention against the sequence length L, measured by a timing sweep: one figure
// (exported as one) with two log-log plots side by side under a title and a subtitle that gives
// d, m, threads and repetitions, and one legend under both.
//
// Left, the time per run: one curve per method through the medians of its repetitions, with
// min-max error bars; the legend gives each curve's fitted slope (about 2 for exact attention,
// 1 for linear). A vertical dashed line marks where each linear method becomes faster than exact
// attention (crossoverReference), labelled "FAVOR+ positive: L ≈ 1,900". Points skipped for the
// memory budget are drawn as crosses along the top of the plot, with a note per method; cancelled
// points are left out.
// Right, the memory: the working-set model of every point that was measured or skipped (dashed)
// and the measured peak where it was measured (solid: SweepPoint::peakBytes, Q, K, V and the
// most the runs' own allocations held at once; the chart's tooltip says so), with the memory
// budget as a dotted line when it made the sweep skip points.
//
// Each algorithm has its colour and marker shape in both plots; causal variants have a darker
// shade and hollow markers. Labels and notes are laid out for the size the figure is drawn at
// (on screen and for exports), never overlapping one another.
class TimingChart : public HeadedChart {
    Q_OBJECT

public:
    // The plottables drawn for one method.
    struct MethodCurves {
        TimedMethod method;
        QCPGraph* time = nullptr;            // medians of the Ok points, seconds against L
        QCPErrorBars* errorBars = nullptr;   // on `time`: down to the min, up to the max
        QCPGraph* skipped = nullptr;         // crosses at the lengths skipped for memory
        QCPGraph* model = nullptr;           // working-set model, MiB against L
        QCPGraph* peak = nullptr;            // measured peak, MiB against L
        QCPItemText* skippedNote = nullptr;  // null when no point was skipped
        // The note's text, and the brief one a plot too narrow for it shows.
        QString skippedText;
        QString skippedBriefText;
    };

    // A crossover marked on the time plot.
    struct Crossover {
        TimedMethod method;          // the linear method
        TimedMethod reference;       // the exact method it overtakes
        double length = 0;           // crossoverLength
        bool atFirstLength = false;  // faster already at the first length both were measured at:
                                     // the crossover is there or below
        QCPItemStraightLine* line = nullptr;
        QCPItemText* label = nullptr;
        // The label's text ("FAVOR+ positive: L ≈ 950"), and the brief one ("L ≈ 950") a plot
        // too narrow for it shows.
        QString text;
        QString briefText;
    };

    explicit TimingChart(QWidget* parent = nullptr);

    // Shows `result`: every method with a measured or skipped point, in the order of
    // result.spec.methods, over the lengths of result.spec.lengths (and of its points). May be
    // called again as points arrive (a partial result); redraws (queued).
    void setResult(const SweepResult& result);
    // Shows no result: the plots' place holds a hint to run a sweep.
    void clear();
    // True between setResult and clear.
    bool hasResult() const { return m_hasResult; }

    // The curves of `method`, or null when the result shown has none.
    const MethodCurves* curves(const TimedMethod& method) const;
    // The curves of every method shown, in legend order.
    const std::vector<MethodCurves>& allCurves() const { return m_curves; }
    // The crossovers marked, in the order of the methods.
    const std::vector<Crossover>& crossovers() const { return m_crossovers; }
    // The legend text of a method ("FAVOR+ positive  slope 1.02"), empty when it is not shown.
    QString legendText(const TimedMethod& method) const;

    QCPAxisRect* timeRect() const { return m_timeRect; }
    QCPAxisRect* memoryRect() const { return m_memoryRect; }
    // The hint shown instead of the plots when there is no result (visible or not).
    const QCPItemText* hint() const { return m_hint; }

protected:
    // The memory key's box in the paper's colour (white, or presentation mode's), the memory
    // plot's brief axis labels in a narrow chart, QCustomPlot's layout, then the legend's columns
    // for the width, the rows of the crossover labels and skipped notes (no two overlapping, each
    // brief where the plot is too narrow for it) and the value ranges that leave them room above
    // and below the curves, laid out again until they agree. Runs for every replot and every
    // export size.
    void updateLayout() override;

private:
    // Log-log axes with their tickers and labels: length against time per run, and against
    // memory.
    void styleAxes();
    // The key to the memory plot's line styles (working-set model, measured peak), and the
    // chart's tooltip that explains them.
    void buildMemoryKey();
    // Sets the tick count of each length axis to the labels its plot's width has room for;
    // true when a count changed (the layout must then be redone).
    bool fitLengthTicks();
    // Removes every curve, mark and note of the result shown.
    void removeResult();
    // Adds the curves of one method from its points.
    void addCurves(const SweepResult& result, const TimedMethod& method);
    // Adds the crossover mark of every linear method that overtakes exact attention in range.
    void addCrossovers(const SweepResult& result);
    // Shows or hides everything but the hint.
    void showPlots(bool shown);
    // Places the crossover labels (from the bottom up) and skipped notes (from the top down) in
    // rows where they do not overlap; returns the pixels they take at the bottom and the top of
    // the time plot.
    QMargins placeLabels();
    // Sets the value range of `axis` so that [lowest, highest] (log10 of the data) fills its rect
    // but for `reserved` pixels at the bottom (left) and top (right).
    static void fitLogRange(QCPAxis* axis, double lowest, double highest, QPair<int, int> reserved);

    QCPAxisRect* m_timeRect;
    QCPAxisRect* m_memoryRect;
    QCPLegend* m_memoryLegend;   // line styles of the memory plot: model and measured
    bool m_narrowChart = false;  // its axes labelled briefly (updateLayout)
    FigureHint* m_hint;
    QCPItemStraightLine* m_budgetLine;
    QCPItemText* m_budgetLabel;

    bool m_hasResult = false;
    std::vector<MethodCurves> m_curves;
    std::vector<Crossover> m_crossovers;
    // log10 of the data ranges: times in seconds, memory in MiB, lengths L.
    QCPRange m_timeData;
    QCPRange m_memoryData;
    QCPRange m_lengthData;
};

// Draws result as the Timing page's chart does, offscreen, into path at `size` logical pixels
// (PNG at twice that, SVG or PDF), for `attention-lab bench --plot`. Throws OutputError naming
// the path.
void saveTimingChart(const SweepResult& result, const QString& path, FigureFormat format,
                     QSize size);

}  // namespace attnlab::ui

#pragma once

#include "memory_budget.h"
#include "ui/sweeps/sweep_page.h"
#include "sweeps/timing_sweep.h"

#include <QJsonObject>

#include <map>
#include <memory>

class QCheckBox;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace attnlab::ui {

class TimingChart;
struct ShownPoints;

// The Timing page: how the cost of exact attention and its linear-time approximations grows with
// the sequence length L on this machine. The controls on the left choose the sweep (methods and
// their causal variants, a log-spaced length range, d, m, threads, repetitions); Run measures it
// on a worker thread, and each point appears on the chart (TimingChart) as soon as it is
// measured. Under the chart, a table gives each method's fitted slope, its crossover with exact
// attention and its GFLOP/s at the largest length measured, against the machine's sgemm rate
// measured in the same run. The chart exports as PNG, SVG or PDF and the data as CSV; state()
// and setState() keep the sweep in the session.
class TimingPanel : public SweepPage {
    Q_OBJECT

public:
    explicit TimingPanel(QWidget* parent = nullptr);

    // The sweep the controls describe: every checked algorithm in every checked variant
    // (algorithms in the order of the controls, non-causal before causal), the lengths
    // logSpacedLengths(min, max, points per octave), d, m, threads, repetitions and the memory
    // budget.
    SweepSpec spec() const;

    // The memory budget of the sweeps run from now on (points over it are skipped); the default
    // is MemoryBudget().
    void setMemoryBudget(const MemoryBudget& budget) { m_budget = budget; }

    // The result shown: the points measured so far while a sweep runs, else the last sweep run
    // or restored (empty before the first).
    const SweepResult& result() const { return m_result; }

    // The controls (the spec, with the length range as entered) and the result shown, as JSON
    // for the session file (TimingPageState).
    QJsonObject state() const;
    // Restores what state() saved: sets the controls and shows the result without running
    // anything (a running sweep is dropped first, without waiting for it). Throws InputError
    // naming the field when the state is malformed, leaving the panel as it was.
    void setState(const QJsonObject& state);
    TimingChart* chart() const { return m_chart; }
    QTableWidget* table() const { return m_table; }
    // The line above the table that gives the machine's sgemm rate.
    QString sgemmText() const;

public slots:
    // Starts the sweep of spec() on the worker thread; does nothing while one runs. When the
    // controls choose no method, no variant or no length, says so in the status line instead.
    // Cancel stops it inside the run in progress; the points measured are kept.
    void run() override;

protected:
    void sweepFailed() override;
    // sweepCsv(result()), what Export > Data as CSV writes.
    QByteArray csv() const override;
    // Shows the sgemm line and the table under the chart only while the chart keeps
    // kLeastChartHeight above them.
    void resizeEvent(QResizeEvent* event) override;
    // Fits the table's columns again when its width or font changes.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // Makes the controls, the chart, the table and their layout.
    void buildControls();
    // The Methods box (each method, the variants), the lengths box, the sizes box; the chart over
    // the sgemm line and the table, in a splitter.
    QWidget* buildMethodsBox();
    QWidget* buildLengthsBox();
    QWidget* buildSizesBox();
    QWidget* buildResults();
    // Shows one point the worker measured (posted by the worker).
    void addPoint(const SweepPoint& point, int done, int total);
    // The sweep returned (finished or cancelled): shows all its points.
    void finishSweep(SweepResult result);
    // Lets the worker go on past `count` points once the GUI thread has drawn what is queued now.
    void releaseWorker(int count);
    // Shows m_result on the chart, in the table and in the sgemm line.
    void showResult();
    // One row per method the chart shows: slope, crossover, largest L, GFLOP/s and its share of
    // the sgemm rate.
    void updateTable();
    // Each column of the table as wide as its heading and cells need, and what the table's width
    // has to spare to the crossover column: a page too narrow for them all scrolls the table
    // sideways, where a stretched crossover column was cut to "ossover with exa".
    void fitTableColumns();
    // The lengths line under the length controls: how many lengths and points the sweep has
    // (and, before the first sweep, the progress bar's count of points).
    void updateLengthsPreview();

    MemoryBudget m_budget;
    SweepResult m_result;
    std::shared_ptr<ShownPoints> m_shown;  // shared with the worker of the latest sweep

    std::map<Method, QCheckBox*> m_methods;
    QCheckBox* m_nonCausal;
    QCheckBox* m_causal;
    QSpinBox* m_minLength;
    QSpinBox* m_maxLength;
    QSpinBox* m_pointsPerOctave;
    QLabel* m_lengthsPreview;
    QSpinBox* m_headDim;
    QSpinBox* m_features;
    QSpinBox* m_threads;
    QSpinBox* m_repetitions;
    TimingChart* m_chart;
    QLabel* m_sgemm;
    QTableWidget* m_table;
    QWidget* m_belowChart;  // the sgemm line and the table
};

}  // namespace attnlab::ui

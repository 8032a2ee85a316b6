#pragma once

#include "plotting/figure_export.h"
#include "memory_budget.h"
#include "sweeps/timing_sweep.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QJsonObject>
#include <QThreadPool>
#include <QWidget>

#include <map>
#include <memory>

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QToolButton;

namespace attnlab::ui {

class TimingChart;
struct SweepShared;

// The Timing page: how the cost of exact attention and its linear-time approximations grows with
// the sequence length L on this machine. The controls on the left choose the sweep (methods and
// their causal variants, a log-spaced length range, d, m, threads, repetitions); Run measures it
// on a worker thread, and each point appears on the chart (TimingChart) as soon as it is
// measured. Under the chart, a table gives each method's fitted slope, its crossover with exact
// attention and its GFLOP/s at the largest length measured, against the machine's sgemm rate
// measured in the same run. The chart exports as PNG, SVG or PDF and the data as CSV; state()
// and setState() keep the sweep in the session.
class TimingPanel : public QWidget {
    Q_OBJECT

public:
    explicit TimingPanel(QWidget* parent = nullptr);
    // Cancels a running sweep and waits for it to stop.
    ~TimingPanel() override;

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
    bool isRunning() const { return m_running; }

    // The controls (the spec, with the length range as entered) and the result shown, as JSON
    // for the session file.
    QJsonObject state() const;
    // Restores what state() saved: sets the controls and shows the result without running
    // anything (a running sweep is cancelled first). Throws InputError naming the field when the
    // state is malformed, leaving the panel as it was.
    void setState(const QJsonObject& state);
    // The state of a panel that shows `result` with its controls set to the result's sweep (the
    // length range from its shortest to its longest length, clamped to the controls' range):
    // what `attention-lab bench --session` writes, so that a sweep measured headless opens here.
    static QJsonObject stateOf(const SweepResult& result);

    // Writes the chart to path as it is shown (exportFigure). Throws OutputError naming the path.
    void exportChart(const QString& path, FigureFormat format);
    // Writes sweepCsv(result()) to path through a QSaveFile. Throws OutputError naming the path.
    void exportCsv(const QString& path) const;

    TimingChart* chart() const { return m_chart; }
    QTableWidget* table() const { return m_table; }
    // The line above the table that gives the machine's sgemm rate.
    QString sgemmText() const;
    // The line under the buttons that says what the panel is doing or last did.
    QString statusText() const;

public slots:
    // Starts the sweep of spec() on the worker thread; does nothing while one runs. When the
    // controls choose no method, no variant or no length, says so in the status line instead.
    void run();
    // Asks the running sweep to stop after the run it is in; the points measured are kept.
    // sweepFinished() follows when it has stopped.
    void cancel();

signals:
    // A sweep ended: finished, cancelled or failed (the status line says which).
    void sweepFinished();
    void runningChanged(bool running);

protected:
    // Cancels a running sweep and waits for it before the panel closes.
    void closeEvent(QCloseEvent* event) override;

private:
    // Makes the controls, the chart, the table and their layout.
    void buildControls();
    // Shows one point the worker measured (a queued call from the worker); points of an earlier
    // sweep (serial) are dropped.
    void addPoint(int serial, const SweepPoint& point, int done, int total);
    // Lets the worker go on past `count` points once the GUI thread has drawn what is queued now.
    void releaseWorker(int count);
    // The worker returned: takes its result, or reports its error.
    void finishSweep();
    // Cancels a running sweep, waits for the worker and finishes it now.
    void stopAndWait();
    // Shows m_result on the chart, in the table and in the sgemm line.
    void showResult();
    // One row per method the chart shows: slope, crossover, largest L, GFLOP/s and its share of
    // the sgemm rate.
    void updateTable();
    // The lengths line under the length controls: how many lengths and points the sweep has
    // (and, before the first sweep, the progress bar's count of points).
    void updateLengthsPreview();
    // Enables Run or Cancel, and emits runningChanged when it changes.
    void setRunning(bool running);
    // Asks for a file name and exports the chart in `format`, or the data as CSV.
    void exportChartDialog(FigureFormat format);
    void exportCsvDialog();

    MemoryBudget m_budget;
    SweepResult m_result;
    bool m_running = false;
    int m_serial = 0;  // counts the sweeps started, to drop late points of an earlier one
    QElapsedTimer m_clock;
    QThreadPool m_pool;
    QFutureWatcher<void> m_watcher;
    std::shared_ptr<SweepShared> m_sweep;  // shared with the worker of the latest sweep

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
    QPushButton* m_runButton;
    QPushButton* m_cancelButton;
    QToolButton* m_exportButton;
    QProgressBar* m_progress;
    QLabel* m_status;
    TimingChart* m_chart;
    QLabel* m_sgemm;
    QTableWidget* m_table;
};

}  // namespace attnlab::ui

#pragma once

#include "ui/common/background_job.h"
#include "ui/plotting/figure_export.h"

#include <QElapsedTimer>
#include <QWidget>

#include <utility>

class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace attnlab::ui {

// What every sweep page shares (the Timing and Error analysis pages): Run and Cancel, the
// progress bar and the status line, the Export menu (the chart as PNG, SVG or PDF, the data as
// CSV), the sweep's BackgroundJob, the running state, and stopping the sweep when the page
// closes (and waiting for it when the page is destroyed), and what a failed sweep says. A page
// builds its controls and chart, puts sweepControls() in its column, gives its chart to
// setChart, and implements run() (through startSweep), what it shows when a sweep fails
// (sweepFailed) and its CSV.
class SweepPage : public QWidget {
    Q_OBJECT

public:
    bool isRunning() const { return m_running; }
    // The line under the buttons that says what the page is doing or last did.
    QString statusText() const;

    // Writes the chart setChart gave as shown (exportFigure). Throws OutputError naming the path.
    void exportChart(const QString& path, FigureFormat format);
    // Writes csv() to path through a QSaveFile. Throws OutputError naming the path.
    void exportCsv(const QString& path) const;

public slots:
    // Starts the sweep the controls describe on the worker thread; does nothing while one runs.
    // When the controls cannot make a sweep, says why in the status line instead.
    virtual void run() = 0;
    // Asks the running sweep to stop and says so in the status line; what was computed is kept.
    // sweepFinished() follows when it has stopped.
    void cancel();

signals:
    // A sweep ended: finished, cancelled or failed (the status line says which).
    void sweepFinished();
    void runningChanged(bool running);

protected:
    // The page's own words for the shared controls.
    struct Words {
        QString runTip;
        QString cancelTip;
        QString cancelling;  // the status line after Cancel
        QString progressTip;
        QString progressFormat;  // "%v of %m points"
        QString exportTip;
        QString fileName;      // the exported files' suggested base name: "timing"
        QString objectPrefix;  // the controls' object names: "" gives "run", "errors" "errorsRun"
    };

    SweepPage(const Words& words, QWidget* parent);

    // Run and Cancel, the progress bar, the status line and the Export button, in a column.
    QWidget* sweepControls() const { return m_sweepControls; }
    QLabel* statusLabel() const { return m_status; }
    // The progress bar at done out of total (a range of at least 1: an empty one would make it a
    // busy indicator).
    void setProgress(int done, int total);
    // The chart the Export menu and exportChart write.
    void setChart(QCustomPlot* chart) { m_chart = chart; }

    // Runs work(JobContext&) on the page's worker (BackgroundJob::start) and starts the clock;
    // done(result) follows on the GUI thread when it returns, even after Cancel (a sweep keeps
    // what it finished), then the page stops running and emits sweepFinished. work never touches
    // a widget; it hands rows to the page through JobContext::post, which drops them once the
    // sweep has been delivered.
    template <typename Work, typename Done>
    void startSweep(Work work, Done done);
    // Stops a running sweep, waits for the worker and finishes it now (the page closes).
    void stopAndWait();
    // Drops a running sweep at once (a session's state replaces the page's): the page is idle
    // and nothing of the sweep arrives; the worker, cancelled, stops the run it is in (within a
    // block of rows of the engine's loops) in the background, before a new sweep starts.
    void abandonSweep();
    // Cancel was pressed during the sweep that runs.
    bool isCancelling() const { return m_cancelling; }
    // Enables Run or Cancel, and emits runningChanged when it changes.
    void setRunning(bool running);
    // Export is enabled only while there is something to export.
    void setExportEnabled(bool enabled);
    void closeEvent(QCloseEvent* event) override;

    // The sweep failed (the worker threw; the status line gives its message): the page shows
    // what it kept.
    virtual void sweepFailed() = 0;
    virtual QByteArray csv() const = 0;

    QElapsedTimer m_clock;

private:
    // The sweep has been delivered or has failed: the page stops running.
    void endSweep();
    // Asks for a file name and exports the chart in `format`, or the data as CSV.
    void exportChartDialog(FigureFormat format);
    void exportCsvDialog();

    Words m_words;
    bool m_running = false;
    bool m_cancelling = false;
    BackgroundJob m_job;
    QWidget* m_sweepControls;
    QPushButton* m_runButton;
    QPushButton* m_cancelButton;
    QPushButton* m_exportButton;
    QProgressBar* m_progress;
    QLabel* m_status;
    QCustomPlot* m_chart = nullptr;
};

// A spin box for the sweep controls: the range, the value, group separators and a tooltip; box
// when given (a QSpinBox of another kind), else a new QSpinBox.
QSpinBox* sweepSpinBox(int minimum, int maximum, int value, const QString& tip,
                       QSpinBox* box = nullptr);

template <typename Work, typename Done>
void SweepPage::startSweep(Work work, Done done)
{
    m_clock.start();
    m_cancelling = false;
    m_job.start(std::move(work), [this, done = std::move(done)](auto result) mutable {
        done(std::move(result));
        endSweep();
    });
    setRunning(true);
}

}  // namespace attnlab::ui

#pragma once

#include "plotting/figure_export.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QThreadPool>
#include <QWidget>

#include <functional>

class QCustomPlot;
class QJsonObject;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace attnlab::ui {

// What every sweep page shares (the Timing and Error analysis pages): Run and Cancel, the
// progress bar and the status line, the Export menu (the chart as PNG, SVG or PDF, the data as
// CSV), one worker thread with its watcher, the running state, and stopping the worker when the
// page closes. A page builds its controls and chart, puts sweepControls() in its column, and
// implements run(), how to stop its worker (requestStop), what the worker's end means
// (finishSweep), its chart and its CSV.
class SweepPage : public QWidget {
    Q_OBJECT

public:
    bool isRunning() const { return m_running; }
    // The line under the buttons that says what the page is doing or last did.
    QString statusText() const;

    // Writes the chart as shown (exportFigure). Throws OutputError naming the path.
    void exportChart(const QString& path, FigureFormat format);
    // Writes csv() to path through a QSaveFile. Throws OutputError naming the path.
    void exportCsv(const QString& path) const;

public slots:
    // Starts the sweep the controls describe on the worker thread; does nothing while one runs.
    // When the controls cannot make a sweep, says why in the status line instead.
    virtual void run() = 0;
    // Asks the running sweep to stop (requestStop) and says so in the status line; what was
    // computed is kept. sweepFinished() follows when it has stopped.
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
        QString cancelling;      // the status line after Cancel
        QString progressTip;
        QString progressFormat;  // "%v of %m points"
        QString exportTip;
        QString fileName;        // the exported files' suggested base name: "timing"
        QString objectPrefix;    // the controls' object names: "" gives "run", "errors" "errorsRun"
    };

    SweepPage(const Words& words, QWidget* parent);

    // Run and Cancel, the progress bar, the status line and the Export button, in a column.
    QWidget* sweepControls() const { return m_sweepControls; }
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* statusLabel() const { return m_status; }

    // Runs work on the page's worker thread and starts the clock; finishSweep() follows on the
    // GUI thread when it returns. work never touches a widget.
    void startWorker(std::function<void()> work);
    // True once the worker has returned (or before any started).
    bool workerFinished() const { return m_watcher.isFinished(); }
    // Asks a running sweep to stop and waits for the worker; for the page's destructor.
    void stopWorker();
    // Stops a running sweep, waits for the worker and finishes it now.
    void stopAndWait();
    // Enables Run or Cancel, and emits runningChanged when it changes.
    void setRunning(bool running);
    // Export is enabled only while there is something to export.
    void setExportEnabled(bool enabled);
    void closeEvent(QCloseEvent* event) override;

    // Tells the worker to stop at its next check.
    virtual void requestStop() = 0;
    // The worker returned, or stopAndWait stopped it: takes its result, or reports its error.
    virtual void finishSweep() = 0;
    virtual QCustomPlot& chartFigure() const = 0;
    virtual QByteArray csv() const = 0;

    int m_serial = 0;  // counts the sweeps started, to drop late results of an earlier one
    QElapsedTimer m_clock;

private:
    // Asks for a file name and exports the chart in `format`, or the data as CSV.
    void exportChartDialog(FigureFormat format);
    void exportCsvDialog();

    Words m_words;
    bool m_running = false;
    QThreadPool m_pool;
    QFutureWatcher<void> m_watcher;
    QWidget* m_sweepControls;
    QPushButton* m_runButton;
    QPushButton* m_cancelButton;
    QToolButton* m_exportButton;
    QProgressBar* m_progress;
    QLabel* m_status;
};

// A spin box for the sweep controls: the range, the value, group separators and a tooltip.
QSpinBox* sweepSpinBox(int minimum, int maximum, int value, const QString& tip);

// "12 s", "2 min 5 s".
QString elapsedText(qint64 milliseconds);

// The integer `key` of a page's saved state, which must lie in [minimum, maximum]. Throws
// InputError naming it.
int boundedInteger(const QJsonObject& json, const char* key, int minimum, int maximum);

}  // namespace attnlab::ui

#pragma once

#include "ui/common/background_job.h"
#include "experiment.h"
#include "memory_budget.h"
#include "ui/plotting/figure_export.h"
#include "sweeps/downstream.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QTimer>
#include <QWidget>

#include <vector>

class QComboBox;
class QLabel;
class QLayout;
class QProgressBar;
class QSpinBox;
class QStackedWidget;

namespace attnlab::ui {

class HeadGridView;
class HeadNormsChart;
struct HeadSurvey;

// The Heads page: every head of the trained model the main window reads, at a glance. A top bar
// (show exact P or the approximation P^; order by model layout or worst error first; highlight
// the N worst; what was surveyed: model, text length in tokens, method and m), the HeadGridView,
// and under it the selected head's norms and error beside a HeadNormsChart of every head.
//
// setExperiment runs surveyHeads on a worker thread (a BackgroundJob) when the input is a model;
// other inputs show a message instead of the grid. Destroying the panel cancels a running survey
// and waits for it to stop.
class HeadGridPanel : public QWidget {
    Q_OBJECT

public:
    explicit HeadGridPanel(QWidget* parent = nullptr);

    // The experiment of the main window. For model input, surveys every head of spec's model on
    // spec's text under spec's method (surveyHeads) on a worker thread, about 100 ms after the
    // last of a burst of calls; a newer request cancels the running survey and stale results are
    // dropped; a spec that differs from the one surveyed only in its layer (which the survey
    // ignores) surveys nothing. The grid stays until the new survey replaces it; a progress bar
    // shows the layers done. surveyFinished follows when the result (or a failure) is shown.
    // Other inputs: cancels any survey and shows a message saying how to choose a model.
    void setExperiment(const ExperimentSpec& spec);
    // Shows heads surveyed elsewhere (a session, a test), described by `description` (model,
    // tokens, method), as if a survey had returned them; cancels a running survey.
    void setEntries(std::vector<HeadSurveyEntry> entries, const QString& description);
    // The memory budget of the surveys started from now on.
    void setMemoryBudget(const MemoryBudget& budget) { m_budget = budget; }
    // Selects the head in the grid and the chart without emitting headActivated.
    void setCurrentHead(int layer, int head);

    // What is shown, as JSON for the session file: {"show": "exact" | "approximation",
    // "order": "model" | "worst-first" | "lowest-entropy-first" | "least-monotonic-first",
    // "highlight_worst": N}.
    QJsonObject state() const;
    // Restores what state() saved (missing fields keep their values). Throws InputError naming
    // the field when a field has the wrong type or value, leaving the panel as it was.
    void setState(const QJsonObject& state);

    // Writes the grid as shown, with a title saying what was surveyed: PNG at twice the widget's
    // resolution, SVG or PDF (vector, text as text), through a QSaveFile. Throws OutputError
    // naming the path when nothing has been surveyed or writing fails (leaving no file behind).
    void exportFigure(const QString& path, FigureFormat format);
    // The grid as exportFigure writes it (writeFigure); the panel must outlive it.
    PaintedFigure gridFigure() const;

    // A survey is waiting for its debounce or running.
    bool isBusy() const;
    // The message shown instead of the grid (no model input, the survey failed); empty while the
    // grid is shown.
    QString message() const;
    // The line over the grid saying what was surveyed.
    QString surveyText() const;
    HeadGridView* view() const { return m_view; }
    HeadNormsChart* normsChart() const { return m_chart; }

signals:
    // A click in the grid or the chart chose (layer, head): the main window shows that head.
    void headActivated(int layer, int head);
    // A survey's result, or its failure, is shown.
    void surveyFinished();
    void busyChanged(bool busy);

private:
    // The bars over the grid: what the cells show, the order, the highlight and Export; under
    // them, what was surveyed, with the survey's progress.
    QLayout* buildTopBar();
    // "<title> · <L> layers × <H> heads", the grid's shape after what was surveyed.
    QString surveyLine(const QString& title) const;
    void startSurvey();
    void showProgress(int done, int total);
    // The survey returned, or failed: shows the grid, or the message.
    void showSurvey(HeadSurvey survey);
    void surveyFailed(const QString& message);
    void showMessage(const QString& text);
    void showGrid();
    void updateSelectedText();
    // Sets the controls from the view (when the view was changed directly).
    void syncControls();
    // Emits busyChanged when isBusy() changed since the last call.
    void updateBusy();
    void exportDialog(FigureFormat format);

    MemoryBudget m_budget;
    ExperimentSpec m_pending;  // the spec the debounce timer will survey
    QString m_surveyKey;       // what the running or shown survey is of; empty: none
    QString m_surveyTitle;     // model, tokens, method of the survey shown
    bool m_busy = false;       // isBusy() as busyChanged last reported it
    QTimer m_debounce;
    QElapsedTimer m_clock;  // since the survey shown started
    BackgroundJob m_job;

    QComboBox* m_show;
    QComboBox* m_order;
    QSpinBox* m_highlight;
    QLabel* m_surveyLabel;
    QProgressBar* m_progress;
    QStackedWidget* m_stack;
    QLabel* m_message;
    HeadGridView* m_view;
    HeadNormsChart* m_chart;
    QLabel* m_selected;
};

}  // namespace attnlab::ui

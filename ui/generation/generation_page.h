#pragma once

#include "experiment.h"
#include "generation/followed_steps.h"
#include "generation/generation.h"
#include "inputs/inputs.h"
#include "memory_budget.h"
#include "model/language_model.h"
#include "sessions/generation_page_state.h"
#include "ui/common/background_job.h"
#include "ui/generation/generation_chart.h"
#include "ui/generation/generation_job.h"

#include <QTimer>
#include <QWidget>

#include <array>
#include <memory>
#include <vector>

class QLabel;
class QSplitter;
class QTabWidget;
class QTextEdit;

namespace attnlab::ui {

class ContinuationView;
class GenerationControls;

// The "Generate" page: the window's language model continues a prompt for N tokens twice, token
// by token (core/generation, docs/design.md section 2.11): with its own softmax attention over a
// key/value cache, and with the window's approximation (the Method dock's method, m, seed and
// parameters) in the replaced layers run as a recurrent network ("Transformers are RNNs": per
// query head S_i = S_{i-1} + phi(k_i) v_i^T, z_i = z_{i-1} + phi(k_i), constant memory). Both
// choose each token with the same uniform draw (greedy, or sampled with a temperature, top-k and
// a sampling seed apart from W's seed), so where the continuations part, the distributions
// differ.
//
// The controls on the left (GenerationControls): the prompt (the Input dock's text until one is
// typed), N, the replaced layers, greedy or sampling, the head the Stepper page follows, Generate
// and Cancel with progress, the exports (tokens.json and steps.csv as `generate` writes them; a
// chart as `generate --plot` draws it). On the right, live as the tokens arrive: the two
// continuations as text and side by side token by token with the first divergence marked
// (ContinuationView), and the three charts of GenerationChart: the teacher-forced KL per step, the
// cost per token against position (each run's whole step and its attention), the memory each run
// holds. The run goes on a BackgroundJob: Cancel stops it between tokens, and a new Generate
// supersedes it; what it produced so far stays on the page. For input without a language model the
// page says that it needs one; a method without a causal or a recurrent form is refused in the page
// with the registry's reason (Generate greyed).
class GenerationPage : public QWidget {
    Q_OBJECT

public:
    explicit GenerationPage(QWidget* parent = nullptr);

    // The window's experiment: the model and text of its input (the prompt until one is typed;
    // the model's layers, heads and positions set the controls' ranges) and its approximation.
    // A shown generation stays; the status says when it no longer matches.
    void setExperiment(const ExperimentSpec& spec, std::shared_ptr<const AttentionInput> input);
    void setMemoryBudget(const MemoryBudget& budget) { m_budget = budget; }

    // Why the page cannot generate for the current experiment (no language model, a method
    // without a recurrent form), empty when it can.
    QString refusal() const { return m_refusal; }
    // A generation runs (or waits to run).
    bool isBusy() const { return m_job.isRunning(); }

    // What the page shows: the steps received so far (without their followed head), the
    // continuations' ids and the first step where they differ (-1 when none).
    const std::vector<GenerationStep>& steps() const { return m_steps; }
    std::vector<int> exactIds() const;
    std::vector<int> approxIds() const;
    int firstDivergence() const;
    const ContinuationView* continuation() const { return m_table; }
    GenerationChart* chart(GenerationChartKind kind) const;
    // The head the Stepper page follows in the generation shown (null when none).
    std::shared_ptr<const FollowedSteps> followed() const { return m_followed; }
    QString summaryText() const;

    // The controls and whether a generation is shown, for the session (GenerationPageState).
    GenerationPageState state() const;
    // Sets the controls; with state.generated the page generates once it has a model and is
    // shown. Cancels a running generation first.
    void setState(const GenerationPageState& state);

    // Writes tokens.json and steps.csv of the generation shown (as `attention-lab generate`
    // does, all or none) into folder. Throws OutputError naming the file, InputError when
    // nothing has been generated.
    void exportRun(const QString& folder) const;
    // Writes the chart of `kind` for the generation shown as `generate --plot` draws it (the
    // page shows a compact one). Throws OutputError naming the path.
    void exportChart(GenerationChartKind kind, const QString& path, FigureFormat format);

public slots:
    // Starts the generation the controls describe (the newest request wins); when it cannot,
    // says why in the status line.
    void generate();
    // Stops the running generation between tokens; the tokens generated stay.
    void cancel();

signals:
    // The generation ended: finished, cancelled or failed (the status line says which).
    void generationFinished();
    // The followed head changed (a new generation, or tokens added to it).
    void followedChanged();
    // "Show in the Stepper" was pressed.
    void stepperRequested();
    // A control changed (for the session's autosave).
    void edited();

protected:
    void showEvent(QShowEvent* event) override;
    // Arranges the content for its width (arrange).
    void resizeEvent(QResizeEvent* event) override;

private:
    QWidget* buildContent();
    // How the table and the charts share the content: the table beside the column of charts,
    // beside a row of them (a wide and short page: presentation mode), or a tab each (a narrow
    // page: a 1280-pixel window with both docks; or one too short for the charts beside the
    // table: presentation mode at 1280 x 720).
    enum class Arrangement { Column, Row, Tabs };
    void arrange(Arrangement arrangement);
    // Gives the continuations' texts the height of the longer one, at least five lines (they
    // scroll when longer) and at most a third of the content under the summary.
    void fitTexts();
    GenerationSpec generationSpec() const;
    // The controls' state for a run going on or not, and the status line.
    void updateControls();
    // Empties what the page shows; with `unfollow` a Stepper following its head stops.
    void clearShown(bool unfollow);

    // The run's outcome, on the GUI thread.
    void started(GenerationStart start);
    void addStep(GenerationStep step, qint64 nonPositive);
    void finished();
    void failed(const QString& message);
    // The summary, the texts and the charts for the steps so far (at most every kRefreshMs
    // while tokens arrive).
    void refresh();
    QString subtitle() const;
    QString tokenLabel(int id) const;
    void exportRunDialog();
    void exportChartDialog(GenerationChartKind kind);

    ExperimentSpec m_spec;
    std::shared_ptr<const AttentionInput> m_input;
    bool m_haveModel = false;
    QString m_refusal;
    MemoryBudget m_budget;
    bool m_runPending = false;  // a session asked to generate once the page can
    BackgroundJob m_job;
    QTimer m_refresh;

    // The generation shown.
    GenerationSpec m_runSpec;
    ExperimentSpec m_runExperiment;
    std::shared_ptr<const LanguageModel> m_model;
    std::vector<int> m_promptIds;
    std::vector<int> m_replaced;
    std::vector<GenerationStep> m_steps;
    qint64 m_nonPositive = 0;
    std::shared_ptr<FollowedSteps> m_followed;
    QString m_followNote;
    QString m_outcome;  // how the last run ended, for the status line

    GenerationControls* m_controls;
    QWidget* m_column;             // the controls in their scrolling column
    QLabel* m_message;             // in place of everything, without a language model
    QWidget* m_content = nullptr;  // null while it is being built
    QLabel* m_summary;
    QTextEdit* m_exactText;  // the continuations as text, the part after they differ in red
    QTextEdit* m_approxText;
    ContinuationView* m_table;
    std::array<GenerationChart*, 3> m_charts;
    QSplitter* m_split;        // the table beside the column of charts
    QSplitter* m_chartColumn;  // the charts, one above the other or in a row
    QTabWidget* m_tabs;        // or the table and the charts, a tab each
    Arrangement m_arrangement = Arrangement::Tabs;
};

}  // namespace attnlab::ui

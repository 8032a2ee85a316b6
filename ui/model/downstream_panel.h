#pragma once

#include "ui/common/background_job.h"
#include "experiment.h"
#include "ui/plotting/figure_export.h"
#include "memory_budget.h"
#include "sweeps/downstream.h"
#include "ui/model/downstream_job.h"
#include "ui/model/model_eval_chart.h"
#include "ui/model/model_page_state.h"

#include <QJsonObject>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QTableWidget;

namespace attnlab::ui {

class TopTokensChart;

// The "Inside the model" page: the window's approximation (method, m, seed) put in place of softmax
// attention in one layer or in all layers of the trained model, and what that does to the model's
// next-token predictions (core/sweeps/downstream.h). The comparison for the window's spec runs by
// itself on a worker thread (a BackgroundJob) whenever the spec or the replaced layers change (the
// newest request wins); it shows a summary line (top-1 agreement, mean and largest KL, the replaced
// heads' attention error), a table of every position (the token, the exact and the approximate
// likeliest next token, mismatches marked, the KL shaded by its share of the largest), and for the
// selected position the five likeliest next tokens exact beside approximate. "Sweep m" runs the
// comparison for each m of a list and seed, "Per layer" for each single layer and for all at the
// current m; their rows are drawn by ModelEvalChart and kept in the session. With a second
// checkpoint of the model in the approximation's place (the Method dock's), the page compares the
// two checkpoints' predictions in every layer (model-eval's "checkpoint" row), and that row joins
// the chart as a reference line beside a sweep's.
class DownstreamPanel : public QWidget {
    Q_OBJECT

public:
    explicit DownstreamPanel(QWidget* parent = nullptr);

    // The experiment from now on. For model input the comparison runs (debounced); for any
    // other input the page says that it needs a trained model.
    void setExperiment(const ExperimentSpec& spec);
    void setMemoryBudget(const MemoryBudget& budget) { m_budget = budget; }
    void setSelectedPosition(int position);
    int selectedPosition() const { return m_selected; }

    // The comparison shown (null before the first one, or for other input).
    const DownstreamComparison* comparison() const;
    const std::vector<ModelEvalRow>& sweepRows() const { return m_rows; }
    bool isBusy() const { return m_busy; }
    QString summaryText() const;

    // The replaced layers, the m values, seeds, selected position and the sweep's rows with the
    // input they were computed on, as JSON for the session. setState throws InputError naming
    // the field, changing nothing; fields it lacks keep their controls, except the rows: a state
    // without rows has no sweep. Rows without their input (an older session's) are of
    // sessionSpec's input when a model reads it (until its comparison finds another length than
    // theirs), else of an unknown earlier input.
    QJsonObject state() const;
    void setState(const QJsonObject& state, const ExperimentSpec& sessionSpec = {});

    // Writes the chart (exportFigure) or the sweep's rows (modelEvalCsv), atomically. Throw
    // OutputError naming the path.
    void exportChart(const QString& path, FigureFormat format);
    void exportCsv(const QString& path) const;
    ModelEvalChart* chart() const { return m_chart; }

protected:
    // Arranges the content for its width (arrange).
    void resizeEvent(QResizeEvent* event) override;

public slots:
    // The sweeps; each does nothing while work is under way or without model input.
    void sweepFeatures();
    void sweepLayers();
    void cancel();

signals:
    void comparisonFinished();
    void sweepFinished();

private:
    // The two bars of controls (what is replaced, by what; the sweeps), and what they show: the
    // summary over the table, the top tokens and the sweep's chart.
    void buildControls();
    void buildContent();
    // How the content stands: the table beside the top tokens over the chart (a page wide and
    // tall enough), else the tokens and the chart a tab each, the top tokens beside the table
    // (a wide page too short for the chart under the top tokens: presentation mode on a 720-line
    // projector) or under it (a narrow page).
    enum class Arrangement { SideBySide, TokensBesideTable, TokensUnderTable };
    void arrange(Arrangement arrangement);
    // The arrangement for a page of `size`.
    Arrangement arrangementFor(QSize size) const;
    // Scrolls the table to its selected row once the layouts pending have given it its size.
    void keepSelectedInView();
    // What the controls, the selected position, the axis and the rows are now.
    ModelPageState pageState() const;
    // The replaced layers the controls choose, for a model of `layers` layers.
    std::vector<int> replacedLayers(int layers) const;
    void scheduleComparison();
    void startComparison();
    // Runs the specs on the worker; a single spec is the automatic comparison.
    void startJob(std::vector<std::pair<ExperimentSpec, std::vector<int>>> cases, bool sweep,
                  ModelEvalAxis axis);
    // The worker's outcome: the comparison or the sweep's rows, a failure, or a cancelled sweep.
    void showOutcome(DownstreamOutcome outcome);
    void jobFailed(const QString& message);
    void jobCancelled();
    void showComparison();
    // The table's column titles: a text's tokens and next tokens, or an image's classes.
    void setTableHeaders();
    void showSelected();
    void setBusy(bool busy);
    void updateChart();
    // The input the outcome's rows were computed on.
    static ModelEvalRowsInput outcomeSource(const DownstreamOutcome& outcome);
    // The chart's subtitle: the model and length of the rows' input, and a note when the
    // window's input is another.
    QString subtitle() const;

    ExperimentSpec m_spec;
    bool m_haveModel = false;
    QComboBox* m_images;  // a ViT's: this image, or every image of its folder
    QLabel* m_imagesLabel;
    QLabel* m_sweepLabel;  // "Sweep over m:" (or the method's own size)
    MemoryBudget m_budget;
    int m_layerCount = 0;
    QStringList m_labels;  // the model's tokens of the text
    std::shared_ptr<const DownstreamComparison> m_comparison;
    std::vector<ModelEvalRow> m_rows;
    ModelEvalRowsInput m_rowsSource;  // the input of m_rows
    QString m_inputKey;               // the window's model input (sweepInputKey)
    bool m_rowsGuessed = false;       // m_rowsSource is an older session's input, unchecked
    ModelEvalAxis m_axis = ModelEvalAxis::Features;
    int m_selected = 0;
    bool m_busy = false;
    BackgroundJob m_job;
    bool m_sweeping = false;  // the latest job started is a sweep
    QTimer m_delay;
    QString m_modelFolder;                      // the model the layers list is of
    std::function<QString(int)> m_outcomeName;  // a token or class id as the page shows it
    bool m_classes = false;                     // a ViT: the predictions are the image's classes

    QComboBox* m_layers;
    QLabel* m_replaceLabel;  // "Replace softmax in" (the layers), or "Compare the model in"
    QLabel* m_byLabel;       // "by" (the method), or "with" (the second checkpoint)
    QLabel* m_method;
    QLineEdit* m_features;
    QSpinBox* m_seeds;
    QPushButton* m_sweepButton;
    QPushButton* m_layerButton;
    QPushButton* m_cancelButton;
    QPushButton* m_csvButton;
    QProgressBar* m_progress;
    QLabel* m_summary;
    QLabel* m_message;
    QWidget* m_controls;  // the two bars of controls above the content
    QWidget* m_content;
    QTableWidget* m_table;
    TopTokensChart* m_top;
    ModelEvalChart* m_chart;
    QSplitter* m_split;        // side by side: the table, and the top tokens over the chart
    QSplitter* m_tokens;       // the table, and beside or under it the top tokens in a tab
    QSplitter* m_chartColumn;  // side by side: the top tokens over the chart
    QTabWidget* m_tabs;        // or the tokens and the chart, a tab each
    std::optional<Arrangement> m_arrangement;  // the one shown; none before the first
};

}  // namespace attnlab::ui

#pragma once

#include "common/background_job.h"
#include "plotting/figure_export.h"
#include "memory_budget.h"
#include "sweeps/downstream.h"

#include <QColor>
#include <QElapsedTimer>
#include <QImage>
#include <QJsonObject>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QProgressBar;
class QSpinBox;
class QStackedWidget;

namespace attnlab::ui {

// How the head grid places the heads: layers down and heads across as in the model, or as a
// ranked list, the head with the largest approximation error first.
enum class HeadOrder { Model, WorstFirst };

QString headOrderName(HeadOrder order);  // "model", "worst-first"
bool parseHeadOrder(const QString& name, HeadOrder* order);

// The colour scale of the heads' approximation error e = |P^ - P|_F / |P|_F (the relative
// Frobenius error of P), shared by the grid's cell frames and the norms chart: sequential, light
// yellow (the smallest error of the survey, or 0) through orange to dark red (the largest), on a
// log scale when the errors span a factor of 10 or more, else linear from 0. Heads without an
// error (the exact method) are grey.
class HeadErrorScale {
public:
    HeadErrorScale() = default;
    explicit HeadErrorScale(const std::vector<HeadSurveyEntry>& entries);

    bool isValid() const { return m_valid; }  // some head has a finite error
    bool isLogarithmic() const { return m_log; }
    double lower() const { return m_lower; }
    double upper() const { return m_upper; }
    // Where e falls on the scale, in [0, 1] (clamped); NaN for a NaN e or an invalid scale.
    double position(double error) const;
    // The colour of e; grey for NaN.
    QColor color(double error) const;
    // The colour at position t in [0, 1].
    static QColor colorAt(double t);
    // The values of the ticks the legend labels: the ends and a middle value.
    std::vector<double> ticks() const;

private:
    bool m_valid = false;
    bool m_log = false;
    double m_lower = 0;
    double m_upper = 1;
};

// Every head of a model at a glance, as bertviz's model view: a grid of small heatmaps, layers
// down and heads across, each the head's exact attention P (or, by setShowApproximation, its
// approximation P^) as thumbnailed by surveyHeads (rows are queries, top to bottom; columns are
// keys), in viridis from 0 to the largest entry of the head's exact thumbnail (so that P and P^ of
// a head share a scale). Each cell is framed by the colour of its approximation error on
// HeadErrorScale, explained by a legend bar under the grid. setOrder(WorstFirst) lays the heads
// out as a ranked list, worst first, each labelled with its rank, layer and head;
// setHighlightCount(N) marks the N worst heads with their rank in either layout.
//
// Cells are square and as large as the widget allows. Painting draws one pre-rendered image per
// head (they are made by setEntries and the P/P^ switch), so 144 heads repaint at once.
//
// Mouse: hover shows a tooltip with the head's metrics and the norms of its queries and keys;
// a left click selects the head (a blue outline, its layer and head labels in bold) and emits
// headActivated. Keys: the arrows move the selection (emitting headActivated).
class HeadGridView : public QWidget {
    Q_OBJECT

public:
    explicit HeadGridView(QWidget* parent = nullptr);

    // The heads to show (any order; one per (layer, head)); the grid has max layer + 1 rows and
    // max head + 1 columns. Keeps the selection when that head exists.
    void setEntries(std::vector<HeadSurveyEntry> entries);
    void clear() { setEntries({}); }
    const std::vector<HeadSurveyEntry>& entries() const { return m_entries; }
    int layerCount() const { return m_layers; }
    int headCount() const { return m_heads; }
    // The entry of (layer, head), or nullptr.
    const HeadSurveyEntry* entry(int layer, int head) const;

    // Cells show P^ instead of P. Heads without P^ (the exact method) show P, and the legend
    // says so.
    void setShowApproximation(bool approximation);
    bool showsApproximation() const { return m_showApprox; }
    // Some head has a P^ thumbnail.
    bool hasApproximation() const;

    void setOrder(HeadOrder order);
    HeadOrder order() const { return m_order; }

    // Marks the N worst heads (largest error) with their rank; 0 marks none.
    void setHighlightCount(int count);
    int highlightCount() const { return m_highlightCount; }

    // Selects (layer, head) without emitting headActivated; (-1, -1) selects none.
    void setCurrentHead(int layer, int head);
    int currentLayer() const { return m_currentLayer; }
    int currentHead() const { return m_currentHead; }

    // The indices of entries() in the order the grid shows them: layer-major for Model, by
    // decreasing error for WorstFirst (heads without an error last, in model order).
    const std::vector<int>& displayOrder() const { return m_displayOrder; }
    // The rank of (layer, head) by decreasing error, 1 for the worst; 0 when it has no error.
    int errorRank(int layer, int head) const;
    const HeadErrorScale& errorScale() const { return m_scale; }

    // The thumbnail of (layer, head) in widget coordinates (inside its error frame), as laid
    // out for the current size; an empty rectangle when the grid has no such head.
    QRect cellRect(int layer, int head) const;
    // The head under widget position pos as (layer, head), or (-1, -1).
    std::pair<int, int> headAt(const QPoint& pos) const;

    // The tooltip of (layer, head): layer, head, the error metrics, the mean and max |q'| and
    // |k'|, the rank.
    QString headToolTip(int layer, int head) const;

    // Paints the grid as the widget shows it, laid out for `size` logical pixels, on a white
    // background, with `title` above it (none when empty): for figure export.
    void paintFigure(QPainter& painter, QSize size, const QString& title) const;

    QSize sizeHint() const override { return QSize(900, 640); }
    QSize minimumSizeHint() const override { return QSize(240, 200); }

signals:
    // A click (or an arrow key) selected (layer, head).
    void headActivated(int layer, int head);
    // What the grid shows changed: entries, P or P^, order, marks or selection (the norms chart
    // follows it).
    void changed();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    // Shows the tooltip of the head under the mouse.
    bool event(QEvent* event) override;

private:
    struct Layout;

    // The positions of everything for `size` with `font` measured on `device`.
    Layout layoutFor(QSizeF size, const QFont& font, const QPaintDevice* device,
                     bool title) const;
    void paintGrid(QPainter& painter, const Layout& layout, const QFont& font, bool onScreen,
                   const QString& title) const;
    void rebuildImages();
    void rebuildOrder();
    void relayout();
    int indexOf(int layer, int head) const;
    void select(int index, bool emitActivated);

    std::vector<HeadSurveyEntry> m_entries;
    std::vector<int> m_index;  // layer * m_heads + head -> index in m_entries, or -1
    std::vector<QImage> m_images;  // per entry, P or P^ as shown
    std::vector<int> m_ranks;      // per entry, 1 = worst, 0 = no error
    std::vector<int> m_displayOrder;
    HeadErrorScale m_scale;
    int m_layers = 0;
    int m_heads = 0;
    bool m_showApprox = false;
    HeadOrder m_order = HeadOrder::Model;
    int m_highlightCount = 0;
    int m_currentLayer = -1;
    int m_currentHead = -1;
    int m_hovered = -1;  // index in m_entries
    std::shared_ptr<const Layout> m_layout;  // for the widget's size
};

// The mean |q'| of every head as a bar, in the order of a HeadGridView (layer by layer, or worst
// error first), coloured by the head's error on the view's HeadErrorScale: tall bars are red when
// error grows with the norms. The view's selected head is outlined; hover gives the view's
// tooltip and a click selects the head (headActivated).
class HeadNormsChart : public QWidget {
    Q_OBJECT

public:
    explicit HeadNormsChart(const HeadGridView* view, QWidget* parent = nullptr);

    // The bar of the head at position i of the view's display order, in widget coordinates.
    QRect barRect(int i) const;

    QSize sizeHint() const override { return QSize(600, 150); }
    QSize minimumSizeHint() const override { return QSize(200, 110); }

signals:
    void headActivated(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    // The plot area (bars) and the largest value of the y axis.
    QRectF plotArea() const;
    double axisMaximum() const;
    int barAt(const QPoint& pos) const;  // position in the display order, or -1

    const HeadGridView* m_view;
};

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
    // "order": "model" | "worst-first", "highlight_worst": N}.
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
    ExperimentSpec m_pending;   // the spec the debounce timer will survey
    QString m_surveyKey;        // what the running or shown survey is of; empty: none
    QString m_surveyTitle;      // model, tokens, method of the survey shown
    bool m_busy = false;     // isBusy() as busyChanged last reported it
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

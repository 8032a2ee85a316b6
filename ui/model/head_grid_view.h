#pragma once

#include "ui/model/head_error_scale.h"
#include "sweeps/downstream.h"

#include <QImage>
#include <QWidget>

#include <memory>
#include <vector>

class QFontMetricsF;

namespace attnlab::ui {

// How the head grid places the heads: layers down and heads across as in the model, or as a
// ranked list: the head with the largest approximation error first, the spikiest exact rows
// (lowest mean row entropy of P) first, or the approximation least monotonic in q.k first
// (row_properties.h).
enum class HeadOrder { Model, WorstFirst, LowestEntropyFirst, LeastMonotonicFirst };

// "model", "worst-first", "lowest-entropy-first", "least-monotonic-first"
QString headOrderName(HeadOrder order);
bool parseHeadOrder(const QString& name, HeadOrder* order);

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
    Layout layoutFor(QSizeF size, const QFont& font, const QPaintDevice* device, bool title) const;
    // The cells of layoutFor in `area`, layers down and heads across with their labels, or as a
    // ranked list with a label under each cell; the block they fill, the gap between cells in
    // *gap.
    QRectF layoutModelOrder(Layout& layout, const QRectF& area, const QFont& font,
                            const QPaintDevice* device, double* gap) const;
    QRectF layoutRanked(Layout& layout, const QRectF& area, const QFontMetricsF& metrics,
                        double* gap) const;
    void paintGrid(QPainter& painter, const Layout& layout, const QFont& font, bool onScreen,
                   const QString& title) const;
    // The parts of paintGrid: the layer and head labels and the key/value groups' lines; the
    // error frames, thumbnails and (worst first) the cells' labels; the ranks of the N worst; the
    // hover and selection outlines; the legend under the grid.
    void paintLabels(QPainter& painter, const Layout& layout, const QFont& font,
                     const QColor& ink) const;
    void paintCells(QPainter& painter, const Layout& layout, const QFont& font,
                    const QColor& ink) const;
    void paintBadges(QPainter& painter, const Layout& layout, const QFont& font) const;
    void paintOutlines(QPainter& painter, const Layout& layout, bool onScreen) const;
    void paintLegend(QPainter& painter, const Layout& layout, const QFontMetricsF& metrics,
                     const QColor& ink) const;
    // The legend's texts: what the frames' colour shows (and the key/value groups' lines), and
    // what the cells show, P or P^ (approximation), with the badges of the `highlighted` worst.
    std::pair<QString, QString> legendTexts(bool approximation, int highlighted) const;
    void rebuildImages();
    void rebuildOrder();
    void relayout();
    int indexOf(int layer, int head) const;
    void select(int index, bool emitActivated);

    std::vector<HeadSurveyEntry> m_entries;
    std::vector<int> m_index;      // layer * m_heads + head -> index in m_entries, or -1
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
    int m_hovered = -1;                      // index in m_entries
    std::shared_ptr<const Layout> m_layout;  // for the widget's size
};

}  // namespace attnlab::ui

#pragma once

#include "types.h"

#include <QImage>
#include "ui/plotting/plot_style.h"

#include <qcustomplot.h>

#include <array>

namespace attnlab::ui {

// One patch's attention row drawn over the image, in three panels of one figure under one title
// (which row): the exact row P_i, the approximation P^_i (one colour scale for both) and the error
// P^_i - P_i (a diverging scale centred at 0). The query patch i is outlined on each panel;
// clicking a patch on any panel picks it. Each patch's colour is laid over a greyed copy of the
// image with an opacity that grows with the value, so the image shows through where attention is
// small and the colour dominates where it is large.
class ImageOverlayView : public QCustomPlot {
    Q_OBJECT

public:
    enum Panel { ExactPanel = 0, ApproxPanel = 1, ErrorPanel = 2 };
    static constexpr int kPanels = 3;

    explicit ImageOverlayView(QWidget* parent = nullptr);

    // The image, already cut to gridRows x gridCols square patches (gridRows * p x gridCols * p
    // pixels); patches are numbered in raster order. Drops the attention shown before.
    void setImage(const QImage& image, int gridRows, int gridCols);
    // The attention row of patch selectedPatch (-1: a query that is not a patch, such as a ViT's
    // [CLS] token; nothing is outlined) over all patches, exact and approximate, each with
    // gridRows * gridCols values in raster order.
    void setAttention(const VectorD& exact, const VectorD& approx, int selectedPatch);
    // Holds the error panel's colour range at [-a, a] for the rows set from now on, errors beyond
    // taking the end colours and full opacity; 0 (the default): each row's largest error.
    void setErrorScale(double a);
    // The title over the whole figure (the row shown; by default none) and those over the three
    // panels (by default "exact", "approximation", "error").
    void setTitles(const QString& figure, const QString& exact, const QString& approx,
                   const QString& error);
    // Removes the image and the attention; shows a hint instead.
    void clear();

    // The widget position of the centre of patch on panel, as of the last layout (for tests and
    // tools); (0, 0) when no image is shown.
    QPoint patchCenter(int panel, int patch) const;
    // The patch under the widget position pos on any panel, or -1.
    int patchAt(const QPointF& pos) const;
    // The rectangle drawn around the selected patch on panel.
    const QCPItemRect* selectionOutline(int panel) const { return m_panels[panel].outline; }

signals:
    // The user clicked patch (raster index) on one of the panels.
    void patchClicked(int patch);

protected:
    // Emits patchClicked for a left click on a patch.
    void mousePressEvent(QMouseEvent* event) override;
    // Outlines the patch under the mouse and shows its values in a tooltip.
    void mouseMoveEvent(QMouseEvent* event) override;
    // Removes the hover outline.
    void leaveEvent(QEvent* event) override;
    // Lays out the figure so that each panel has the image's aspect ratio (on screen and for
    // exports at any size), in the arrangement that draws the image largest.
    void updateLayout() override;

private:
    struct PanelItems {
        QCPAxisRect* rect = nullptr;
        QCPTextElement* title = nullptr;
        QCPItemPixmap* image = nullptr;
        QCPColorMap* map = nullptr;
        QCPItemRect* outline = nullptr;
        QCPItemRect* outlineHalo = nullptr;
        QCPItemRect* hover = nullptr;
    };

    // The three panels side by side, or exact and approximation above and the error below:
    // whichever draws the image larger in the figure's size.
    enum class Arrangement { OneRow, TwoRows };

    // Puts the panels' titles, the panels and the scales into the cells of m_panelGrid for
    // `arrangement`.
    void arrange(Arrangement arrangement);
    // The arrangement for the figure's current size (kept unless the other is clearly better).
    Arrangement bestArrangement() const;

    // Lays the figure out again if the last layout was for another viewport: an export at
    // another size (savePng, savePdf) leaves the layout of that size behind until the next
    // replot, and clicks and hovers must use the one on screen.
    void ensureScreenLayout();
    // Shows the panels' titles and frames, or hides them and shows the hint of the empty view.
    void showPanels(bool shown);
    // The panel whose axis rect contains pos, or -1.
    int panelAt(const QPointF& pos) const;

    QCPTextElement* m_figureTitle;  // the plot layout's first row
    QCPLayoutGrid* m_panelGrid;     // its second row: the panels, their titles and scales
    std::array<PanelItems, kPanels> m_panels;
    QCPColorScale* m_attentionScale;
    QCPColorScale* m_errorScale;
    FigureHint* m_hint;
    QRect m_layoutViewport;                 // the viewport the last layout was made for
    QString m_figureTitleText;              // as given to setTitles, before wrapping
    std::array<QString, kPanels> m_titles;  // likewise
    QCPMarginGroup* m_margins;              // the panels' and the standing scales' tops and bottoms
    Arrangement m_arrangement = Arrangement::OneRow;
    int m_gridRows = 0;
    int m_gridCols = 0;
    int m_hoveredPatch = -1;
    VectorD m_exact;
    VectorD m_approx;
    double m_heldErrorExtent = 0;  // setErrorScale's a
};

}  // namespace attnlab::ui

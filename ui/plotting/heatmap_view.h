#pragma once

#include "ui/plotting/color_maps.h"
#include "attention/detail_pyramid.h"
#include "attention/metrics.h"
#include "attention/result_matrix.h"
#include "types.h"

#include <QPoint>
#include <QStringList>
#include <qcustomplot.h>

#include <functional>
#include <memory>
#include <vector>

namespace attnlab::ui {

// A heatmap of an R x C matrix: attention P (rows are queries, row 0 on top; columns are keys),
// its approximation P^, or the error between them, with a colour scale at the right. The main
// window shows three side by side; `attention-lab render` draws them offscreen for figures.
//
// The matrix is drawn as one image rendered for the pixels it covers, at the paint device's
// resolution (device pixel ratio on screen, 2x for PNG export, finer for SVG/PDF). Level of
// detail: when more than one cell falls on a pixel, the pixel shows the entry of largest
// magnitude among them, with its sign (for attention, >= 0, the block maximum). A block mean would
// fade a one-cell-wide diagonal or a single attention-sink column by the block size, and hide an
// isolated large error; the extreme keeps every such structure visible at any zoom, and every
// pixel has the colour of one of the cells it covers. A pyramid of 2 x 2 extremes (DetailPyramid,
// built by the engine for a result's matrices, by setMatrix otherwise) bounds the work of a
// redraw by about four reads per pixel whatever the zoom, so zooming, panning and resizing stay
// fast at 4096 x 4096. value(), hovering and clicking always use the full matrix.
//
// Mouse: wheel zooms, drag pans, Shift+drag draws a rectangle and zooms to the cells under it
// (all clamped to the matrix, never closer than 2 cells), double click shows the whole matrix
// again. Hover and click are reported as cells; the view draws no hover mark by itself:
// the owner connects cellHovered to setHighlightedCell of every view that should show it, so
// the three views mark the same cell. Marks live on the "overlay" layer, which is replotted alone.
class HeatmapView : public QCustomPlot {
    Q_OBJECT

public:
    explicit HeatmapView(QWidget* parent = nullptr);

    // Shows `matrix` (a copy is kept, so value() answers exactly) and redraws (queued). Keeps the
    // zoom when the size is unchanged, shows the whole matrix otherwise; re-fits the colour range
    // unless setColorRange fixed it. Builds the level-of-detail pyramid (DetailPyramid): about a
    // sixth of the matrix's memory more.
    void setMatrix(const MatrixD& matrix);
    // The same, taking the matrix over instead of copying it.
    void setMatrix(MatrixD&& matrix);
    // The same, sharing a matrix someone else keeps (no copy).
    void setMatrix(std::shared_ptr<const MatrixD> matrix);
    // The same for a result's P or P^ with the pyramid the engine built in its row pass: no copy
    // and no pass over the matrix here (at L = 4096 that pass would cost the GUI thread tens of
    // milliseconds). Without a pyramid the view builds one.
    void setMatrix(const ResultMatrix& matrix, std::shared_ptr<const DetailPyramid> pyramid);
    // The error map of approx against exact, entry by entry as attentionErrorOf gives it, without
    // forming the L x L error matrix. signedError is the engine's pyramid of P^ - P: it serves the
    // signed error as it is and the absolute error as its magnitudes (the signed extreme of a
    // block is the entry of largest magnitude); the relative error's pyramid is built here.
    // Without an approximation (approx empty) the view is empty.
    void setErrorMatrix(const ResultMatrix& exact, const ResultMatrix& approx, ErrorKind kind,
                        std::shared_ptr<const DetailPyramid> signedError);

    // Token labels for the rows (y axis) and the columns (x axis), shown where they fit: all of
    // them when the cells leave room at a readable size, otherwise every k-th (k = 1, 2, 5, 10, 20,
    // ...), never overlapping; x labels turn vertical when they do not fit side by side. Labels
    // longer than 12 characters are cut with an ellipsis. A list whose length differs from the
    // matching matrix dimension (for example empty) gives numeric ticks: the row or column index.
    void setAxisLabels(const QStringList& rowLabels, const QStringList& columnLabels);

    // The title above the map (bold, 1.2x the axis titles); an empty title takes no space.
    void setTitle(const QString& title);
    QString title() const;
    // The title as drawn (fitTitle: on two lines, smaller or elided when the figure is narrow),
    // and its font.
    QString shownTitle() const;
    QFont shownTitleFont() const;

    // The axis titles: x (keys, below) and y (queries, left). Defaults "key" and "query".
    void setAxisTitles(const QString& x, const QString& y);

    // The label of the colour scale, beside it.
    void setColorScaleLabel(const QString& label);

    // The colour map of the map and the colour scale. With Diverging and the automatic colour
    // range, the range becomes symmetric about 0 (see dataRange).
    void setColorMap(ColorMap map);
    ColorMap colorMap() const;

    // Fixes the values mapped to the ends of the colour map (values outside take the end
    // colours), for example to give P and P^ the same scale; setMatrix then keeps it.
    void setColorRange(const QCPRange& range);
    QCPRange colorRange() const;

    // The range of the matrix's values: [min, max], NaN ignored; for the Diverging map [-a, a]
    // with a = max |value|. An empty or all-NaN matrix gives [0, 1]; a constant one is widened
    // by half its magnitude on each side (by 1 if it is 0) so that the range is never empty.
    QCPRange dataRange() const;

    // Makes the colour range follow dataRange(), now and at every setMatrix (the default).
    void setAutoColorRange();

    // Outlines cell (row, col) on the overlay layer, replotting only that layer; (-1, -1), or
    // any cell outside the matrix, hides it. The outline is at least 7 pixels wide, so that it
    // shows on cells smaller than a pixel.
    void setHighlightedCell(int row, int col);

    // Outlines row `row` across the whole matrix, on the overlay layer like the cell; -1 (or a
    // row outside the matrix) hides it.
    void setSelectedRow(int row);

    // The outlined cell as (column, row), (-1, -1) for none; the outlined row, -1 for none.
    QPoint highlightedCell() const { return QPoint(m_highlightedCell.col, m_highlightedCell.row); }
    int selectedRow() const { return m_selectedRow; }

    // The matrix entry (row, col), from the full matrix whatever is drawn.
    double value(int row, int col) const;
    int rowCount() const;
    int columnCount() const;

    // The room the figure takes besides the map itself, as of the latest layout: title, tick
    // labels, axis titles and colour scale (not the margins that keep the cells square). A
    // figure w x h pixels draws a map of at most (w, h) minus this. Before the first layout, a
    // typical value for the current fonts.
    QSize decorationSize() const;
    // The widget's size less the margins that keep the cells square: the figure an export
    // draws, with no white bands beside or above and below the map.
    QSize tightSize() const;

    // Where the map's top edge would be, in widget pixels, centred in the room the figure leaves
    // it (as of the latest layout): maps side by side whose titles take different lines differ.
    int centredMapTop() const { return m_centredMapTop; }
    // Lays the figure out now, for its size and content, as its next replot will: a page lines
    // maps up before they are drawn.
    void layOut() { updateLayout(); }
    // Puts the map's top edge at `top` (widget pixels) where the room above and below it allows,
    // so that maps side by side line up; -1 centres it. Only the window's layout moves: an
    // export draws the figure without the room (tightSize), and is the same either way.
    void setMapTop(int top);

    // The centre of cell (row, col) in widget coordinates, as of the latest replot.
    QPoint cellCenter(int row, int col) const;

    // Shows the whole matrix (undoes zoom and pan) and replots (queued).
    void resetView();
    // Whether the whole matrix is in view (not zoomed in or panned), as resetView leaves it.
    bool showsWholeMatrix() const;

    // Every how many columns (x) and rows (y) the map would label its cells by itself, for its
    // size, as of the latest layout (0 before the first).
    QPoint ownLabelSteps() const { return {m_xStep, m_yStep}; }
    // Labels at least every floor.x() columns and floor.y() rows (0: no floor), so that maps of
    // the same tokens shown together label them alike (labelMapsAlike); replots when it changes.
    void setLabelStepFloor(QPoint floor);

signals:
    // The mouse moved onto cell (row, col); (-1, -1) when it left the matrix or the widget.
    void cellHovered(int row, int col);
    // Left click (press and release without dragging) on cell (row, col).
    void cellClicked(int row, int col);

protected:
    // QCustomPlot's layout, then the tick labels for the axis lengths and ranges it produced and
    // outer margins that make the cells square (the map's aspect ratio C:R, limited to 1:4 ..
    // 4:1), laid out again until they agree. Runs for every replot and every export size.
    void updateLayout() override;

    // QCustomPlot's handling (drag to pan; with Shift, a rectangle to zoom to), and the press
    // position, to tell a click from a drag.
    void mousePressEvent(QMouseEvent* event) override;
    // QCustomPlot's handling, then cellHovered when the cell under the mouse changed.
    void mouseMoveEvent(QMouseEvent* event) override;
    // QCustomPlot's handling, then cellClicked for a left click that did not drag.
    void mouseReleaseEvent(QMouseEvent* event) override;
    // QCustomPlot's handling, then resetView.
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    // Zooms to the part of `rect` (widget pixels, from a Shift+drag) over the map, clamped as
    // the wheel's zoom is.
    void processRectZoom(QRect rect, QMouseEvent* event) override;
    // cellHovered(-1, -1) if a cell was hovered.
    void leaveEvent(QEvent* event) override;
    // Takes the device pixel ratio of the screen the view is shown on.
    void showEvent(QShowEvent* event) override;
    // Takes the new screen's device pixel ratio when the window moves to another screen.
    bool event(QEvent* event) override;

private:
    class MapLayer;
    class MapImage;
    class CellMarks;

    // A cell of the matrix; row = col = -1: none.
    struct Cell {
        int row = -1;
        int col = -1;
        bool operator==(const Cell&) const = default;
    };

    // Reads entries [first, first + count) of row `row` of the shown matrix, as double.
    using CellReader =
        std::function<void(Eigen::Index row, Eigen::Index first, Eigen::Index count, double* out)>;

    // Shows the rows x cols matrix that cells reads, drawn from pyramid (built here from cells
    // when null); magnitudes: the pyramid holds signed extremes of which the view shows the
    // magnitudes. Then fits the view and the colour range as documented at setMatrix, and
    // replots (queued).
    void showCells(Eigen::Index rows, Eigen::Index cols, CellReader cells,
                   std::shared_ptr<const DetailPyramid> pyramid, bool magnitudes = false);

    // Applies m_colorRange to the colour scale and the map.
    void applyColorRange();

    // Redraws the "overlay" layer alone (the marks), or queues a full replot before the first.
    void replotOverlay();

    // The image of the matrix region whose cell-edge coordinates are [u0, u1) (columns, cell c
    // spans [c, c + 1)) and [v0, v1) (rows, v0 at the top), at width x height pixels: a pixel
    // shows the signed extreme of the cells whose centres fall on it, or the cell under its
    // centre when it covers no centre.
    QImage renderImage(double u0, double u1, double v0, double v1, QSize pixels);

    // The tick labels for the current axis lengths and ranges, as documented at setAxisLabels,
    // and the number of ticks of the colour scale for its length. Returns whether anything
    // changed. More labels (a smaller step, another colour-scale tick) are taken only with
    // kLabelHeadroom of room to spare: each change moves the labels' margins and with them the
    // lengths it was decided on, and a map on the boundary went round four layouts for ever
    // (the error map of scenario 3 presented at 1152 x 864, its cells not square in two).
    bool updateTicks();
    // Fits the title to the width of the figure: on two lines at a natural break (titleLines),
    // then in a smaller font (down to 3/4 of its size), then elided, so a narrow view never cuts
    // it at both ends. True when the title changed.
    bool fitTitle();

    // Sets the outer margins of the plot layout that give the map square cells, as documented
    // at updateLayout, the map centred in the room they leave or at setMapTop's top. Returns
    // whether they changed.
    bool updateAspectMargins();

    // The cell under widget position `pos`, or Cell{} outside the matrix.
    Cell cellAt(const QPointF& pos) const;

    // Emits cellHovered when `cell` differs from the cell hovered before.
    void setHoveredCell(Cell cell);

    // Sets the buffers' device pixel ratio to the widget's (after a move to another screen).
    void syncDevicePixelRatio();

    Eigen::Index m_rows = 0;
    Eigen::Index m_cols = 0;
    CellReader m_cells;                              // level 0
    std::shared_ptr<const DetailPyramid> m_pyramid;  // levels 1 and up, and the bounds
    bool m_magnitudes = false;                       // draw the magnitudes of the pyramid's levels
    QCPRange m_minMax{0.0, 1.0};                     // min and max of the shown values, NaN ignored
    bool m_hasValues = false;                        // the matrix has a non-NaN entry

    ColorMap m_colorMap = ColorMap::Viridis;
    QCPColorGradient m_gradient;
    QCPRange m_colorRange{0.0, 1.0};
    bool m_autoColorRange = true;

    QStringList m_rowLabels;       // shortened; used when their count is rowCount()
    QStringList m_columnLabels;    // shortened; used when their count is columnCount()
    QStringList m_rowLabelSource;  // the labels as given
    QStringList m_columnLabelSource;
    int m_xStep = 0;  // every how many columns and rows a label is written, as last laid out
    int m_yStep = 0;
    QPoint m_labelStepFloor;         // setLabelStepFloor()
    double m_columnLabelWidth = -1;  // widest column label in m_columnLabelWidthFont, pixels
    QFont m_columnLabelWidthFont;    // the tick label font it was measured in

    QCPLayoutGrid* m_body = nullptr;  // the map and its colour scale, below the title
    int m_centredMapTop = 0;          // centredMapTop()
    int m_mapTop = -1;                // setMapTop()
    QCPTextElement* m_title = nullptr;
    QString m_titleText;  // the whole title; m_title may show it smaller or elided to fit
    QCPColorScale* m_colorScale = nullptr;
    QSharedPointer<QCPAxisTickerText> m_xTicker;
    QSharedPointer<QCPAxisTickerText> m_yTicker;
    MapImage* m_mapImage = nullptr;

    Cell m_highlightedCell;
    int m_selectedRow = -1;
    // Replots queued in a row because the layout had not settled (updateLayout); bounded by
    // kMaxUnsettledReplots so that labels that never settle cannot replot for ever.
    int m_unsettledReplots = 0;
    static constexpr int kMaxUnsettledReplots = 4;
    Cell m_hoveredCell;
    QPointF m_pressPosition;
};

// Lines up the top edges of maps shown side by side: each gets the lowest of their centred tops
// (centredMapTop). Null maps and those hidden themselves are passed over; a map on a page not
// shown, or in a figure drawn offscreen, counts.
void lineUpMapTops(const std::vector<HeatmapView*>& maps);

// Labels the cells of maps of the same tokens shown together alike: each map that shows its whole
// matrix labels them at the coarsest of their own steps (ownLabelSteps), so that one map does
// not label every second row beside another that labels every fifth (each keeps the step it
// laid out last until a finer one has room to spare, and maps laid out at other sizes before
// differ); a map zoomed in keeps its own. Null maps and those hidden themselves are passed over.
void labelMapsAlike(const std::vector<HeatmapView*>& maps);

}  // namespace attnlab::ui

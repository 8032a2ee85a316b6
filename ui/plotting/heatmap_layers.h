#pragma once

// The layers a HeatmapView draws itself (private to ui/plotting): the map's image at the level
// of detail the view shows, and the marks of the selected row and the highlighted cell. Their
// drawing, and HeatmapView::renderImage which makes the image, are in heatmap_layers.cpp.

#include "ui/plotting/heatmap_view.h"

#include <QImage>

namespace attnlab::ui {

// What both layers share: drawn on one of the view's layers without antialiasing (cells are whole
// device pixels), clipped to the map's axis rect.
class HeatmapView::MapLayer : public QCPLayerable {
public:
    MapLayer(HeatmapView* view, const QString& layer) : QCPLayerable(view, layer), m_view(view) {}

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override
    {
        painter->setAntialiasing(false);
    }

    QRect clipRect() const override { return m_view->axisRect()->rect(); }

    HeatmapView* m_view;
};

// Draws the matrix on the "main" layer: the image from renderImage for the part of the matrix
// inside the axis rect, at the paint device's resolution, placed on whole device pixels so that
// it is drawn 1:1. The image is kept until the region, the resolution, the data or the colours
// change, so replots that change none of them (the overlay, a title) cost a blit.
class HeatmapView::MapImage : public MapLayer {
public:
    explicit MapImage(HeatmapView* view) : MapLayer(view, QStringLiteral("main")) {}

    // Forgets the image: the data or the colours changed.
    void invalidate() { m_image = QImage(); }

protected:
    void draw(QCPPainter* painter) override;

private:
    QImage m_image;
    QRectF m_region;  // the cell-edge region [u0, u1) x [v0, v1) that m_image shows
};

// Draws the marks on the "overlay" layer: the selected row and the highlighted cell, each as a
// white outline inside a dark one, visible on every colour of every map.
class HeatmapView::CellMarks : public MapLayer {
public:
    explicit CellMarks(HeatmapView* view) : MapLayer(view, QStringLiteral("overlay")) {}

protected:
    void draw(QCPPainter* painter) override;

private:
    // The pixel rectangle of rows [firstRow, lastRow] x columns [firstCol, lastCol], grown about
    // its centre to at least minimumSide on each side.
    QRect cellsRect(int firstRow, int lastRow, int firstCol, int lastCol, int minimumSide) const;
};

}  // namespace attnlab::ui

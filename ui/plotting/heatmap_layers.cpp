#include "ui/plotting/heatmap_layers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace attnlab::ui {

namespace {

// Vector exports embed the map at no more than this many pixels on a side.
constexpr double kMaxVectorImageSide = 4096.0;

// For each of `pixels` equal pixels spanning cell-edge coordinates [from, to): the first and
// last cell whose centre falls on the pixel, or the cell under the pixel's centre when none
// does, clamped to [0, cells), then divided by 2^level (the cells of pyramid level `level`).
void pixelSpans(double from, double to, int pixels, int cells, int level, std::vector<int>& first,
                std::vector<int>& last)
{
    first.resize(pixels);
    last.resize(pixels);
    const double width = (to - from) / pixels;
    for (int i = 0; i < pixels; ++i) {
        const double a = from + i * width;
        const double b = a + width;
        int lo = int(std::ceil(a - 0.5));
        int hi = int(std::ceil(b - 0.5)) - 1;
        if (lo > hi)
            lo = hi = int(std::floor((a + b) / 2));
        first[i] = std::clamp(lo, 0, cells - 1) >> level;
        last[i] = std::clamp(hi, 0, cells - 1) >> level;
    }
}

// Image pixels per logical pixel along one axis for a vector export (SVG, PDF), whose viewers
// scale embedded images, often smoothly: with fewer cells than twice the logical pixels, each
// cell gets the same whole number of image pixels, at least 4 per logical pixel, so that cell
// edges stay sharp; with more, twice the logical resolution.
double vectorImageScale(double cells, double logicalPixels)
{
    if (cells >= 2 * logicalPixels)
        return 2.0;
    const double wanted = std::ceil(4 * logicalPixels / cells);
    const double perCell = std::max(1.0, std::min(wanted, std::floor(kMaxVectorImageSide / cells)));
    return perCell * cells / logicalPixels;
}

}  // namespace

void HeatmapView::MapImage::draw(QCPPainter* painter)
{
    const QCPAxis* x = m_view->xAxis;
    const QCPAxis* y = m_view->yAxis;
    const int rows = m_view->rowCount();
    const int cols = m_view->columnCount();
    // An axis rect narrower than its margins has a negative width in QCustomPlot, which maps
    // pixels to cells backwards: nothing to draw until the layout settles.
    if (rows == 0 || cols == 0 || x->axisRect()->width() <= 0 || y->axisRect()->height() <= 0)
        return;
    // The visible part of the matrix in cell-edge coordinates (axis coordinate + 0.5) and in
    // logical pixels; the y axis is reversed, so row coordinate v0 is at the top.
    const double u0 = std::max(x->range().lower + 0.5, 0.0);
    const double u1 = std::min(x->range().upper + 0.5, double(cols));
    const double v0 = std::max(y->range().lower + 0.5, 0.0);
    const double v1 = std::min(y->range().upper + 0.5, double(rows));
    if (u1 <= u0 || v1 <= v0)
        return;
    const QRectF target = QRectF(QPointF(x->coordToPixel(u0 - 0.5), y->coordToPixel(v0 - 0.5)),
                                 QPointF(x->coordToPixel(u1 - 0.5), y->coordToPixel(v1 - 0.5)))
                              .normalized();
    // Device pixels per logical pixel: the buffer's device pixel ratio on screen, the export
    // scale for PNG; vector exports choose their own (vectorImageScale).
    double scaleX = painter->transform().m11() * painter->device()->devicePixelRatioF();
    double scaleY = painter->transform().m22() * painter->device()->devicePixelRatioF();
    if (painter->modes().testFlag(QCPPainter::pmVectorized)) {
        scaleX = vectorImageScale(u1 - u0, target.width());
        scaleY = vectorImageScale(v1 - v0, target.height());
    }
    const int left = int(std::lround(target.left() * scaleX));
    const int right = int(std::lround(target.right() * scaleX));
    const int top = int(std::lround(target.top() * scaleY));
    const int bottom = int(std::lround(target.bottom() * scaleY));
    const QSize pixels(right - left, bottom - top);
    if (pixels.isEmpty())
        return;
    // The cells under those whole device pixels.
    const double imageU0 = x->pixelToCoord(left / scaleX) + 0.5;
    const double imageU1 = x->pixelToCoord(right / scaleX) + 0.5;
    const double imageV0 = y->pixelToCoord(top / scaleY) + 0.5;
    const double imageV1 = y->pixelToCoord(bottom / scaleY) + 0.5;
    const QRectF region(imageU0, imageV0, imageU1 - imageU0, imageV1 - imageV0);
    if (m_image.size() != pixels || m_region != region) {
        m_image = m_view->renderImage(imageU0, imageU1, imageV0, imageV1, pixels);
        m_region = region;
    }
    painter->drawImage(
        QRectF(left / scaleX, top / scaleY, pixels.width() / scaleX, pixels.height() / scaleY),
        m_image);
}

QRect HeatmapView::CellMarks::cellsRect(int firstRow, int lastRow, int firstCol, int lastCol,
                                        int minimumSide) const
{
    QRectF rect(QPointF(m_view->xAxis->coordToPixel(firstCol - 0.5),
                        m_view->yAxis->coordToPixel(firstRow - 0.5)),
                QPointF(m_view->xAxis->coordToPixel(lastCol + 0.5),
                        m_view->yAxis->coordToPixel(lastRow + 0.5)));
    rect = rect.normalized();
    const QPointF centre = rect.center();
    rect.setWidth(std::max(rect.width(), double(minimumSide)));
    rect.setHeight(std::max(rect.height(), double(minimumSide)));
    rect.moveCenter(centre);
    return rect.toRect();
}

void HeatmapView::CellMarks::draw(QCPPainter* painter)
{
    QList<QRect> outlines;
    if (m_view->m_selectedRow >= 0)
        outlines.append(cellsRect(m_view->m_selectedRow, m_view->m_selectedRow, 0,
                                  m_view->columnCount() - 1, 5));
    if (m_view->m_highlightedCell.row >= 0)
        outlines.append(cellsRect(m_view->m_highlightedCell.row, m_view->m_highlightedCell.row,
                                  m_view->m_highlightedCell.col, m_view->m_highlightedCell.col, 7));
    painter->setBrush(Qt::NoBrush);
    for (const QRect& outline : outlines) {
        painter->setPen(QPen(QColor(0, 0, 0, 210), 3));
        painter->drawRect(outline);
        painter->setPen(QPen(Qt::white, 1));
        painter->drawRect(outline);
    }
}

QImage HeatmapView::renderImage(double u0, double u1, double v0, double v1, QSize pixels)
{
    const int width = pixels.width();
    const int height = pixels.height();
    // The finest pyramid level that still has at least one cell per pixel on both axes.
    const double cellsPerPixel = std::min((u1 - u0) / width, (v1 - v0) / height);
    int level = 0;
    while (level < m_pyramid->levelCount() && double(2 << level) <= cellsPerPixel)
        ++level;
    // Reads cells [first, first + count) of row `row` of that level.
    const auto readCells = [&](int row, int first, int count, double* out) {
        if (level == 0) {
            m_cells(row, first, count, out);
            return;
        }
        const Matrix<float>& cells = m_pyramid->level(level);
        const float* in = cells.data() + Eigen::Index(row) * cells.cols() + first;
        if (m_magnitudes) {
            for (int i = 0; i < count; ++i)
                out[i] = std::abs(double(in[i]));
        } else {
            for (int i = 0; i < count; ++i)
                out[i] = double(in[i]);
        }
    };

    std::vector<int> firstCol, lastCol, firstRow, lastRow;
    pixelSpans(u0, u1, width, columnCount(), level, firstCol, lastCol);
    pixelSpans(v0, v1, height, rowCount(), level, firstRow, lastRow);
    const int bandStart = firstCol.front();
    const int bandSize = lastCol.back() - bandStart + 1;
    std::vector<double> band(bandSize);   // one pixel row's cells, reduced over its rows
    std::vector<double> cells(bandSize);  // one row of cells
    std::vector<double> line(width);      // one pixel row's values

    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    for (int py = 0; py < height; ++py) {
        auto* scanLine = reinterpret_cast<QRgb*>(image.scanLine(py));
        if (py > 0 && firstRow[py] == firstRow[py - 1] && lastRow[py] == lastRow[py - 1]) {
            std::memcpy(scanLine, image.scanLine(py - 1), std::size_t(width) * sizeof(QRgb));
            continue;
        }
        readCells(firstRow[py], bandStart, bandSize, band.data());
        for (int row = firstRow[py] + 1; row <= lastRow[py]; ++row) {
            readCells(row, bandStart, bandSize, cells.data());
#pragma omp simd
            for (int i = 0; i < bandSize; ++i)
                band[i] = signedExtreme(band[i], cells[i]);
        }
        for (int px = 0; px < width; ++px) {
            double v = band[firstCol[px] - bandStart];
            for (int col = firstCol[px] + 1; col <= lastCol[px]; ++col)
                v = signedExtreme(v, band[col - bandStart]);
            line[px] = v;
        }
        m_gradient.colorize(line.data(), m_colorRange, scanLine, width);
    }
    return image;
}

}  // namespace attnlab::ui

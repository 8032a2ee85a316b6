#include "ui/plotting/heatmap_view.h"

#include "ui/plotting/cell_labels.h"
#include "ui/plotting/heatmap_layers.h"
#include "ui/plotting/plot_style.h"

#include <QFontInfo>
#include <QFontMetricsF>
#include <QMouseEvent>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnlab::ui {

namespace {

// The fewest cells one axis can be zoomed in to.
constexpr double kMinVisibleCells = 2.0;

// The size of a title when it fits, with axis titles of kAxisTitlePointSize (the title follows
// when they are given another size: presentation mode enlarges them); narrow figures shrink it to
// three quarters of this.
constexpr double kTitlePointSize = 12.0;
constexpr double kAxisTitlePointSize = 10.0;
const QColor kInkColor(40, 40, 40);  // text, ticks and axis lines
const QColor kFrameColor(90, 90, 90);

// A title too wide for one line, as two: broken after ", " or ": ", or before " (", where the
// longer line is shortest (the title as one line when it has no such place).
QStringList titleLines(const QString& title, const QFontMetricsF& metrics)
{
    QStringList best{title};
    double bestWidth = metrics.horizontalAdvance(title);
    for (int i = 1; i + 1 < title.size(); ++i) {
        const bool after = title[i] == QLatin1Char(' ') &&
                           (title[i - 1] == QLatin1Char(',') || title[i - 1] == QLatin1Char(':'));
        const bool before = title[i] == QLatin1Char(' ') && title[i + 1] == QLatin1Char('(');
        if (!after && !before)
            continue;
        const QStringList lines{title.left(i), title.mid(i + 1)};
        const double width =
            std::max(metrics.horizontalAdvance(lines[0]), metrics.horizontalAdvance(lines[1]));
        if (width < bestWidth) {
            best = lines;
            bestWidth = width;
        }
    }
    return best;
}

// [lower, upper], widened when empty: by half the magnitude on each side, or by 1 around 0.
QCPRange nonEmptyRange(double lower, double upper)
{
    if (lower > upper)
        std::swap(lower, upper);
    if (lower < upper)
        return QCPRange(lower, upper);
    const double pad = lower != 0.0 ? std::abs(lower) / 2 : 1.0;
    return QCPRange(lower - pad, upper + pad);
}

// `range` moved and shrunk as needed to lie inside the cells [-0.5, cells - 0.5] of an axis,
// and grown to at least kMinVisibleCells cells (or all of them, when fewer).
QCPRange clampedRange(const QCPRange& range, int cells)
{
    const double full = std::max(cells, 1);
    const double size = std::clamp(range.size(), std::min(full, kMinVisibleCells), full);
    const double lower = std::clamp(range.center() - size / 2, -0.5, full - 0.5 - size);
    return QCPRange(lower, lower + size);
}

// The range that shows every one of an axis's `cells`: resetView's, as clampedRange leaves it.
QCPRange wholeRange(int cells)
{
    return clampedRange(QCPRange(-0.5, cells - 0.5), cells);
}

// The look of every axis: thin dark lines, ticks outward, no grid, no sub-ticks.
void styleAxis(QCPAxis* axis, const QFont& tickFont, const QFont& labelFont)
{
    const QPen pen(kFrameColor, 1);
    axis->setBasePen(pen);
    axis->setTickPen(pen);
    axis->setSubTicks(false);
    axis->setTickLength(0, 4);
    axis->setTickLabelFont(tickFont);
    axis->setTickLabelColor(kInkColor);
    axis->setLabelFont(labelFont);
    axis->setLabelColor(kInkColor);
    axis->grid()->setVisible(false);
}

}  // namespace

HeatmapView::HeatmapView(QWidget* parent)
    : QCustomPlot(parent),
      m_cells([](Eigen::Index, Eigen::Index, Eigen::Index, double*) {}),
      m_pyramid(std::make_shared<const DetailPyramid>(0, 0))
{
    setBackground(Qt::white);
    paintWithTheWindow(this);
    setMouseTracking(true);
    setMinimumSize(160, 140);

    // The family the default font resolves to, named, so that SVG and PDF exports name a real
    // font rather than an alias such as "Sans Serif" that viewers do not know.
    QFont tickFont(QFontInfo(font()).family());
    tickFont.setPointSizeF(9);
    QFont labelFont = tickFont;
    labelFont.setPointSizeF(kAxisTitlePointSize);
    QFont titleFont = tickFont;
    titleFont.setPointSizeF(kTitlePointSize);
    titleFont.setBold(true);

    for (QCPAxis* axis : {xAxis, yAxis, xAxis2, yAxis2})
        styleAxis(axis, tickFont, labelFont);
    // The top and right axes only close the frame around the map.
    for (QCPAxis* axis : {xAxis2, yAxis2}) {
        axis->setVisible(true);
        axis->setTicks(false);
        axis->setTickLabels(false);
    }
    m_xTicker = QSharedPointer<QCPAxisTickerText>::create();
    m_yTicker = QSharedPointer<QCPAxisTickerText>::create();
    xAxis->setTicker(m_xTicker);
    yAxis->setTicker(m_yTicker);
    yAxis->setRangeReversed(true);
    setAxisTitles(QStringLiteral("key"), QStringLiteral("query"));

    m_title = new QCPTextElement(this, QString(), titleFont);
    m_title->setTextColor(kInkColor);
    m_title->setVisible(false);

    // The layout: the title (when there is one) in a row of its own, over the whole width, and
    // below it the body, the map and its colour scale side by side.
    m_body = new QCPLayoutGrid;
    QCPAxisRect* map = axisRect();
    plotLayout()->take(map);
    plotLayout()->simplify();
    plotLayout()->addElement(0, 0, m_body);
    m_body->addElement(0, 0, map);
    m_colorScale = new QCPColorScale(this);
    m_body->addElement(0, 1, m_colorScale);
    m_colorScale->setType(QCPAxis::atRight);
    m_colorScale->setBarWidth(12);
    // However narrow the view, the bar keeps its width: the map gives up the space instead.
    m_colorScale->setMinimumSize(QSize(12, 0));
    m_colorScale->setRangeDrag(false);
    m_colorScale->setRangeZoom(false);
    styleAxis(m_colorScale->axis(), tickFont, labelFont);
    m_colorScale->axis()->setPadding(10);  // room between the scale's label and the edge
    auto* marginGroup = new QCPMarginGroup(this);
    axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, marginGroup);
    m_colorScale->setMarginGroup(QCP::msTop | QCP::msBottom, marginGroup);
    // Set by updateAspectMargins.
    m_body->setAutoMargins(QCP::msNone);
    m_body->setMargins(QMargins());

    // Both are owned by the plot, their QObject parent.
    m_mapImage = new MapImage(this);
    new CellMarks(this);
    layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmBuffered);

    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    axisRect()->setRangeZoomFactor(0.85);
    // The rectangle of a Shift+drag (mousePressEvent): a dark edge over a light veil shows on
    // every colour map, dark or bright cells.
    selectionRect()->setPen(QPen(kInkColor, 1.5));
    selectionRect()->setBrush(QColor(255, 255, 255, 90));
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& range) {
                const QCPRange clamped = clampedRange(range, columnCount());
                if (clamped != range)
                    xAxis->setRange(clamped);
            });
    connect(yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& range) {
                const QCPRange clamped = clampedRange(range, rowCount());
                if (clamped != range)
                    yAxis->setRange(clamped);
            });

    setColorMap(ColorMap::Viridis);
    resetView();
}

void HeatmapView::setMatrix(const MatrixD& matrix)
{
    setMatrix(std::make_shared<const MatrixD>(matrix));
}

void HeatmapView::setMatrix(MatrixD&& matrix)
{
    setMatrix(std::make_shared<const MatrixD>(std::move(matrix)));
}

void HeatmapView::setMatrix(std::shared_ptr<const MatrixD> matrix)
{
    const MatrixD& m = *matrix;
    showCells(
        m.rows(), m.cols(),
        [matrix](Eigen::Index row, Eigen::Index first, Eigen::Index count, double* out) {
            const double* in = matrix->data() + row * matrix->cols() + first;
            std::copy(in, in + count, out);
        },
        std::make_shared<const DetailPyramid>(DetailPyramid::of(m)));
}

void HeatmapView::setMatrix(const ResultMatrix& matrix,
                            std::shared_ptr<const DetailPyramid> pyramid)
{
    showCells(
        matrix.rows(), matrix.cols(),
        [matrix](Eigen::Index row, Eigen::Index first, Eigen::Index count, double* out) {
            matrix.readRow(row, first, count, out);
        },
        std::move(pyramid));
}

void HeatmapView::setErrorMatrix(const ResultMatrix& exact, const ResultMatrix& approx,
                                 ErrorKind kind, std::shared_ptr<const DetailPyramid> signedError)
{
    if (approx.rows() != exact.rows() || approx.cols() != exact.cols()) {  // no approximation
        setMatrix(MatrixD());
        return;
    }
    CellReader cells = [exact, approx, kind](Eigen::Index row, Eigen::Index first,
                                             Eigen::Index count, double* out) {
        std::vector<double> exactRow(static_cast<std::size_t>(count));
        exact.readRow(row, first, count, exactRow.data());
        approx.readRow(row, first, count, out);
        for (Eigen::Index j = 0; j < count; ++j)
            out[j] = attentionErrorOf(exactRow[std::size_t(j)], out[j], kind);
    };
    if (kind == ErrorKind::Relative)
        signedError.reset();
    showCells(exact.rows(), exact.cols(), std::move(cells), std::move(signedError),
              kind == ErrorKind::Absolute);
}

void HeatmapView::showCells(Eigen::Index rows, Eigen::Index cols, CellReader cells,
                            std::shared_ptr<const DetailPyramid> pyramid, bool magnitudes)
{
    if (!pyramid) {
        pyramid = std::make_shared<const DetailPyramid>(DetailPyramid::of(
            rows, cols, [&cells, cols](Eigen::Index begin, Eigen::Index count, MatrixD& scratch) {
                scratch.resize(count, cols);
                for (Eigen::Index r = 0; r < count; ++r)
                    cells(begin + r, 0, cols, scratch.data() + r * cols);
                return static_cast<const double*>(scratch.data());
            }));
    }
    const bool sizeChanged = rows != m_rows || cols != m_cols;
    m_rows = rows;
    m_cols = cols;
    m_cells = std::move(cells);
    m_pyramid = std::move(pyramid);
    m_magnitudes = magnitudes;
    m_hasValues = m_pyramid->hasValues();
    if (m_hasValues) {
        m_minMax =
            magnitudes
                ? QCPRange(m_pyramid->smallestMagnitude(),
                           std::max(std::abs(m_pyramid->lower()), std::abs(m_pyramid->upper())))
                : QCPRange(m_pyramid->lower(), m_pyramid->upper());
    }
    m_mapImage->invalidate();
    if (sizeChanged) {
        m_highlightedCell = Cell{};
        m_selectedRow = -1;
        resetView();
    }
    if (m_autoColorRange)
        m_colorRange = dataRange();
    applyColorRange();
    replot(rpQueuedReplot);
}

void HeatmapView::setAxisLabels(const QStringList& rowLabels, const QStringList& columnLabels)
{
    // The same labels again (a new seed, m or method on the same input: 4096 of them at
    // L = 4096) need no shortening and no measuring.
    if (rowLabels == m_rowLabelSource && columnLabels == m_columnLabelSource)
        return;
    m_rowLabelSource = rowLabels;
    m_columnLabelSource = columnLabels;
    m_rowLabels = shortLabels(rowLabels);
    m_columnLabels = shortLabels(columnLabels);
    m_columnLabelWidthFont = QFont();  // measured again at the next layout
    m_columnLabelWidth = -1;
    replot(rpQueuedReplot);
}

void HeatmapView::setTitle(const QString& title)
{
    m_titleText = title;
    m_title->setText(title);
    const bool shown = m_title->layout() != nullptr;
    if (!title.isEmpty() && !shown) {
        plotLayout()->insertRow(0);
        plotLayout()->addElement(0, 0, m_title);
    } else if (title.isEmpty() && shown) {
        plotLayout()->take(m_title);
        plotLayout()->simplify();
    }
    m_title->setVisible(!title.isEmpty());
    replot(rpQueuedReplot);
}

QString HeatmapView::title() const
{
    return m_titleText;
}

QString HeatmapView::shownTitle() const
{
    return m_title->text();
}

QFont HeatmapView::shownTitleFont() const
{
    return m_title->font();
}

bool HeatmapView::fitTitle()
{
    if (m_titleText.isEmpty())
        return false;
    const double available = viewport().width() - 12.0;
    const double size = kTitlePointSize * yAxis->labelFont().pointSizeF() / kAxisTitlePointSize;
    QFont font = m_title->font();
    font.setPointSizeF(size);
    QFontMetricsF metrics(font);
    QStringList lines{m_titleText};
    if (metrics.horizontalAdvance(m_titleText) > available)
        lines = titleLines(m_titleText, metrics);
    const auto widest = [&] {
        double width = 0;
        for (const QString& line : lines)
            width = std::max(width, metrics.horizontalAdvance(line));
        return width;
    };
    while (widest() > available && font.pointSizeF() > 0.75 * size) {
        font.setPointSizeF(font.pointSizeF() - 0.5);
        metrics = QFontMetricsF(font);
    }
    for (QString& line : lines)
        line = metrics.elidedText(line, Qt::ElideRight, available);
    const QString text = lines.join(QLatin1Char('\n'));
    if (font == m_title->font() && text == m_title->text())
        return false;
    m_title->setFont(font);
    m_title->setText(text);
    return true;
}

void HeatmapView::setAxisTitles(const QString& x, const QString& y)
{
    xAxis->setLabel(x);
    yAxis->setLabel(y);
    replot(rpQueuedReplot);
}

void HeatmapView::setColorScaleLabel(const QString& label)
{
    m_colorScale->setLabel(label);
    replot(rpQueuedReplot);
}

void HeatmapView::setColorMap(ColorMap map)
{
    m_colorMap = map;
    m_gradient = colorGradient(map);
    m_colorScale->setGradient(m_gradient);
    if (m_autoColorRange)
        m_colorRange = dataRange();
    applyColorRange();
    replot(rpQueuedReplot);
}

ColorMap HeatmapView::colorMap() const
{
    return m_colorMap;
}

void HeatmapView::setColorRange(const QCPRange& range)
{
    m_autoColorRange = false;
    m_colorRange = nonEmptyRange(range.lower, range.upper);
    applyColorRange();
    replot(rpQueuedReplot);
}

QCPRange HeatmapView::colorRange() const
{
    return m_colorRange;
}

QCPRange HeatmapView::dataRange() const
{
    if (!m_hasValues)
        return QCPRange(0.0, 1.0);
    if (m_colorMap == ColorMap::Diverging) {
        const double a = std::max(std::abs(m_minMax.lower), std::abs(m_minMax.upper));
        return nonEmptyRange(-a, a);
    }
    return nonEmptyRange(m_minMax.lower, m_minMax.upper);
}

void HeatmapView::setAutoColorRange()
{
    m_autoColorRange = true;
    m_colorRange = dataRange();
    applyColorRange();
    replot(rpQueuedReplot);
}

void HeatmapView::applyColorRange()
{
    m_colorScale->setDataRange(m_colorRange);
    m_mapImage->invalidate();
}

void HeatmapView::setHighlightedCell(int row, int col)
{
    const Cell cell =
        (row >= 0 && row < rowCount() && col >= 0 && col < columnCount()) ? Cell{row, col} : Cell{};
    if (cell == m_highlightedCell)
        return;
    m_highlightedCell = cell;
    replotOverlay();
}

void HeatmapView::setSelectedRow(int row)
{
    const int selected = row >= 0 && row < rowCount() ? row : -1;
    if (selected == m_selectedRow)
        return;
    m_selectedRow = selected;
    replotOverlay();
}

void HeatmapView::replotOverlay()
{
    // Before the first replot there are no paint buffers to draw the layer into.
    if (mPaintBuffers.isEmpty())
        replot(rpQueuedReplot);
    else
        layer(QStringLiteral("overlay"))->replot();
}

double HeatmapView::value(int row, int col) const
{
    double value = 0.0;
    m_cells(row, col, 1, &value);
    return value;
}

int HeatmapView::rowCount() const
{
    return int(m_rows);
}

int HeatmapView::columnCount() const
{
    return int(m_cols);
}

QPoint HeatmapView::cellCenter(int row, int col) const
{
    return QPoint(int(std::lround(xAxis->coordToPixel(col))),
                  int(std::lround(yAxis->coordToPixel(row))));
}

void HeatmapView::resetView()
{
    xAxis->setRange(wholeRange(columnCount()));
    yAxis->setRange(wholeRange(rowCount()));
    replot(rpQueuedReplot);
}

bool HeatmapView::showsWholeMatrix() const
{
    return xAxis->range() == wholeRange(columnCount()) && yAxis->range() == wholeRange(rowCount());
}

void HeatmapView::setLabelStepFloor(QPoint floor)
{
    if (floor == m_labelStepFloor)
        return;
    m_labelStepFloor = floor;
    replot(rpQueuedReplot);
}

void HeatmapView::updateLayout()
{
    QCustomPlot::updateLayout();
    if (fitTitle())
        QCustomPlot::updateLayout();
    // Tick labels depend on the axis lengths, the axis lengths on the labels' margins and on the
    // aspect margins; one or two more layouts settle them, the bound is a guard.
    bool settled = false;
    for (int pass = 0; pass < 3 && !settled; ++pass) {
        const bool ticksChanged = updateTicks();
        const bool marginsChanged = updateAspectMargins();
        settled = !ticksChanged && !marginsChanged;
        if (!settled)
            QCustomPlot::updateLayout();
    }
    // A large jump in size (a page changing its arrangement) can need more passes than that: the
    // next replot goes on from here, a few times at most, rather than leaving the map squeezed
    // by labels laid out for the old size until something else replots it.
    if (settled) {
        m_unsettledReplots = 0;
    } else if (m_unsettledReplots < kMaxUnsettledReplots) {
        ++m_unsettledReplots;
        QMetaObject::invokeMethod(
            this, [this] { replot(rpQueuedReplot); }, Qt::QueuedConnection);
    }
}

bool HeatmapView::updateTicks()
{
    const QRect rect = axisRect()->rect();
    if (rect.width() <= 0 || rect.height() <= 0)
        return false;
    const QFontMetricsF metrics(xAxis->tickLabelFont());
    const double lineSpacing = metrics.height() + 2;
    const double gap = metrics.horizontalAdvance(QStringLiteral("  "));
    const int cols = columnCount();
    const int rows = rowCount();

    // x: side by side when the widest label fits a cell (numbers always are: they thin well),
    // otherwise vertical, one line of text per label.
    const double pixelsPerColumn = rect.width() / xAxis->range().size();
    const bool namedColumns = m_columnLabels.size() == cols;
    if (m_columnLabelWidth < 0 || m_columnLabelWidthFont != xAxis->tickLabelFont()) {
        m_columnLabelWidthFont = xAxis->tickLabelFont();
        m_columnLabelWidth = widestLabel(m_columnLabels, m_columnLabelWidthFont);
    }
    const double widestColumn =
        namedColumns ? m_columnLabelWidth
                     : metrics.horizontalAdvance(QString::number(std::max(cols - 1, 0)));
    const bool sideBySide = !namedColumns || widestColumn + gap <= pixelsPerColumn;
    const double rotation = sideBySide ? 0.0 : -90.0;
    m_xStep = steadyStep(sideBySide ? widestColumn + gap : lineSpacing, pixelsPerColumn, m_xStep);
    const int xStep = std::max(m_xStep, m_labelStepFloor.x());

    const double pixelsPerRow = rect.height() / yAxis->range().size();
    m_yStep = steadyStep(lineSpacing, pixelsPerRow, m_yStep);
    const int yStep = std::max(m_yStep, m_labelStepFloor.y());

    bool changed = false;
    const QMap<double, QString> xTicks = tickLabels(xAxis->range(), cols, xStep, m_columnLabels);
    if (xTicks != m_xTicker->ticks()) {
        m_xTicker->setTicks(xTicks);
        changed = true;
    }
    const QMap<double, QString> yTicks = tickLabels(yAxis->range(), rows, yStep, m_rowLabels);
    if (yTicks != m_yTicker->ticks()) {
        m_yTicker->setTicks(yTicks);
        changed = true;
    }
    if (xAxis->tickLabelRotation() != rotation) {
        xAxis->setTickLabelRotation(rotation);
        changed = true;
    }

    // The colour scale's own ticker rounds its step to 1, 2, 2.5 or 5 times a power of ten,
    // which gives up to 1.5 times the ticks asked for: asking one per 2.5 lines keeps the numbers
    // more than a line and a half apart on short scales.
    const QSharedPointer<QCPAxisTicker> scaleTicker = m_colorScale->axis()->ticker();
    const int scaleLength = m_colorScale->rect().height();
    const int scaleTicks =
        steadyTickCount(scaleLength / (2.5 * lineSpacing), scaleTicker->tickCount());
    if (scaleTicker->tickCount() != scaleTicks) {
        scaleTicker->setTickCount(scaleTicks);
        changed = true;
    }
    return changed;
}

bool HeatmapView::updateAspectMargins()
{
    const QRect rect = axisRect()->rect();
    const QMargins old = m_body->margins();
    QMargins margins;
    if (rect.width() > 0 && rect.height() > 0 && rowCount() > 0 && columnCount() > 0) {
        // The map's width : height, and the size the axis rect had without these margins.
        const double aspect = std::clamp(double(columnCount()) / rowCount(), 0.25, 4.0);
        const int width = rect.width() + old.left() + old.right();
        const int height = rect.height() + old.top() + old.bottom();
        int extraWidth = 0;
        int extraHeight = 0;
        if (width > height * aspect)
            extraWidth = width - int(std::lround(height * aspect));
        else
            extraHeight = height - int(std::lround(width / aspect));
        // The map's top edge with no room above it, and centred.
        const int topWithoutRoom = rect.top() - old.top();
        m_centredMapTop = topWithoutRoom + extraHeight / 2;
        int above = extraHeight / 2;
        // Lined up with the maps beside it, in the window's layout only (not an export's).
        if (m_mapTop >= 0 && viewport().size() == size())
            above = std::clamp(m_mapTop - topWithoutRoom, 0, extraHeight);
        margins = QMargins(extraWidth / 2, above, extraWidth - extraWidth / 2, extraHeight - above);
    }
    if (margins == old)
        return false;
    m_body->setMargins(margins);
    return true;
}

QSize HeatmapView::decorationSize() const
{
    const QRect map = axisRect()->rect();
    if (map.width() <= 0 || map.height() <= 0) {
        const QFontMetrics metrics(xAxis->tickLabelFont());
        return QSize(metrics.horizontalAdvance(QStringLiteral("0000000")) * 3,
                     metrics.height() * 9);
    }
    const QMargins aspect = m_body->margins();
    return QSize(width() - map.width() - aspect.left() - aspect.right(),
                 height() - map.height() - aspect.top() - aspect.bottom());
}

void HeatmapView::setMapTop(int top)
{
    if (top == m_mapTop)
        return;
    m_mapTop = top;
    replot(rpQueuedReplot);
}

void lineUpMapTops(const std::vector<HeatmapView*>& maps)
{
    int top = -1;
    for (const HeatmapView* map : maps)
        if (map && !map->isHidden())
            top = std::max(top, map->centredMapTop());
    for (HeatmapView* map : maps)
        if (map)
            map->setMapTop(top);
}

void labelMapsAlike(const std::vector<HeatmapView*>& maps)
{
    const auto alike = [](const HeatmapView* map) {
        return map && !map->isHidden() && map->showsWholeMatrix();
    };
    QPoint coarsest;
    for (const HeatmapView* map : maps)
        if (alike(map))
            coarsest = QPoint(std::max(coarsest.x(), map->ownLabelSteps().x()),
                              std::max(coarsest.y(), map->ownLabelSteps().y()));
    for (HeatmapView* map : maps)
        if (map)
            map->setLabelStepFloor(alike(map) ? coarsest : QPoint());
}

QSize HeatmapView::tightSize() const
{
    const QMargins aspect = m_body->margins();
    return size().shrunkBy(QMargins(aspect.left(), aspect.top(), aspect.right(), aspect.bottom()));
}

HeatmapView::Cell HeatmapView::cellAt(const QPointF& pos) const
{
    if (!axisRect()->rect().contains(pos.toPoint()))
        return Cell{};
    const int col = int(std::floor(xAxis->pixelToCoord(pos.x()) + 0.5));
    const int row = int(std::floor(yAxis->pixelToCoord(pos.y()) + 0.5));
    if (row < 0 || row >= rowCount() || col < 0 || col >= columnCount())
        return Cell{};
    return Cell{row, col};
}

void HeatmapView::setHoveredCell(Cell cell)
{
    if (cell == m_hoveredCell)
        return;
    m_hoveredCell = cell;
    emit cellHovered(cell.row, cell.col);
}

void HeatmapView::mousePressEvent(QMouseEvent* event)
{
    m_pressPosition = event->position();
    const bool rectangle =
        event->button() == Qt::LeftButton && event->modifiers().testFlag(Qt::ShiftModifier);
    setSelectionRectMode(rectangle ? QCP::srmZoom : QCP::srmNone);
    QCustomPlot::mousePressEvent(event);
}

void HeatmapView::mouseMoveEvent(QMouseEvent* event)
{
    QCustomPlot::mouseMoveEvent(event);
    setHoveredCell(cellAt(event->position()));
}

void HeatmapView::mouseReleaseEvent(QMouseEvent* event)
{
    const bool click = event->button() == Qt::LeftButton &&
                       (event->position() - m_pressPosition).manhattanLength() <= 3;
    QCustomPlot::mouseReleaseEvent(event);
    if (!click)
        return;
    const Cell cell = cellAt(event->position());
    if (cell.row >= 0)
        emit cellClicked(cell.row, cell.col);
}

void HeatmapView::mouseDoubleClickEvent(QMouseEvent* event)
{
    QCustomPlot::mouseDoubleClickEvent(event);
    resetView();
}

void HeatmapView::processRectZoom(QRect rect, QMouseEvent* event)
{
    const QRect overMap = rect.intersected(axisRect()->rect());
    if (overMap.isEmpty()) {
        replot(rpQueuedReplot);  // takes the rectangle away
        return;
    }
    QCustomPlot::processRectZoom(overMap, event);
}

void HeatmapView::leaveEvent(QEvent* event)
{
    QCustomPlot::leaveEvent(event);
    setHoveredCell(Cell{});
}

void HeatmapView::showEvent(QShowEvent* event)
{
    syncDevicePixelRatio();
    QCustomPlot::showEvent(event);
}

bool HeatmapView::event(QEvent* event)
{
    if (event->type() == QEvent::ScreenChangeInternal)
        syncDevicePixelRatio();
    return QCustomPlot::event(event);
}

void HeatmapView::syncDevicePixelRatio()
{
    if (bufferDevicePixelRatio() == devicePixelRatioF())
        return;
    setBufferDevicePixelRatio(devicePixelRatioF());
    replot(rpQueuedReplot);
}

}  // namespace attnlab::ui

#include "model/head_grid_view.h"

#include "plotting/color_maps.h"
#include "errors.h"
#include "attention/feature_maps.h"
#include "inputs/model_input.h"
#include "plotting/plot_style.h"
#include "worker_outcome.h"

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QProgressBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <numeric>

namespace attnlab::ui {

namespace {

// ColorBrewer's sequential YlOrRd (9 classes, Cynthia Brewer, Apache 2.0) without its palest
// class, so that the smallest error still frames a cell visibly on a light background.
constexpr std::array<QRgb, 8> kErrorColors{0xffffeda0, 0xfffed976, 0xfffeb24c, 0xfffd8d3c,
                                           0xfffc4e2a, 0xffe31a1c, 0xffbd0026, 0xff800026};
const QColor kNoErrorColor(170, 170, 170);
const QColor kInk(40, 40, 40);
// The selected head's outline: a saturated blue, apart from the error colours and viridis.
const QColor kSelection(0, 98, 255);

// Thumbnails surveyHeads makes: at most this many cells on a side.
constexpr int kThumbnailSize = 48;
// setExperiment waits this long for the last of a burst of calls.
constexpr int kDebounceMs = 100;
// The most heads the highlight spin box marks.
constexpr int kMaxHighlight = 9999;

QString number(double value)
{
    if (!std::isfinite(value))
        return QStringLiteral("n/a");
    return QString::number(value, 'g', 3);
}

// "P" or "P̂" (P with a circumflex, as the papers write the approximation).
QString approxSymbol()
{
    return QStringLiteral("P\u0302");
}

QFont scaledFont(const QFont& base, double factor, bool bold = false)
{
    QFont font = base;
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else
        font.setPixelSize(std::max(1, int(std::lround(font.pixelSize() * factor))));
    font.setBold(bold);
    return font;
}

double clamp(double value, double low, double high)
{
    return std::max(low, std::min(high, value));
}

// A rectangle with integer corners, so that images and frames land on whole pixels.
QRectF snapped(double x, double y, double side)
{
    const double left = std::round(x);
    const double top = std::round(y);
    const double size = std::max(1.0, std::floor(side));
    return QRectF(left, top, size, size);
}

// The text of the help event's head, for the tooltip; hides the tooltip when there is none.
bool showHeadToolTip(QWidget* widget, QHelpEvent* help, const QString& text, const QRect& area)
{
    if (text.isEmpty()) {
        QToolTip::hideText();
        help->ignore();
        return true;
    }
    QToolTip::showText(help->globalPos(), text, widget, area);
    return true;
}

}  // namespace

QString headOrderName(HeadOrder order)
{
    switch (order) {
    case HeadOrder::Model:
        return QStringLiteral("model");
    case HeadOrder::WorstFirst:
        return QStringLiteral("worst-first");
    }
    return {};
}

bool parseHeadOrder(const QString& name, HeadOrder* order)
{
    for (const HeadOrder candidate : {HeadOrder::Model, HeadOrder::WorstFirst}) {
        if (name == headOrderName(candidate)) {
            *order = candidate;
            return true;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// HeadErrorScale

HeadErrorScale::HeadErrorScale(const std::vector<HeadSurveyEntry>& entries)
{
    double lower = std::numeric_limits<double>::infinity();
    double upper = -std::numeric_limits<double>::infinity();
    for (const HeadSurveyEntry& entry : entries) {
        const double error = entry.metrics.relFrobeniusAttention;
        if (!std::isfinite(error))
            continue;
        lower = std::min(lower, error);
        upper = std::max(upper, error);
    }
    if (!(upper >= lower))
        return;
    m_valid = true;
    if (lower > 0 && upper >= 10 * lower) {
        m_log = true;
        m_lower = lower;
        m_upper = upper;
    } else {
        m_lower = 0;
        m_upper = upper > 0 ? upper : 1;
    }
}

double HeadErrorScale::position(double error) const
{
    if (!m_valid || !std::isfinite(error))
        return std::numeric_limits<double>::quiet_NaN();
    if (m_log) {
        if (error <= 0)
            return 0;
        return clamp(std::log(error / m_lower) / std::log(m_upper / m_lower), 0, 1);
    }
    return clamp((error - m_lower) / (m_upper - m_lower), 0, 1);
}

QColor HeadErrorScale::color(double error) const
{
    const double t = position(error);
    return std::isnan(t) ? kNoErrorColor : colorAt(t);
}

QColor HeadErrorScale::colorAt(double t)
{
    const double x = clamp(t, 0, 1) * double(kErrorColors.size() - 1);
    const int i = std::min(int(x), int(kErrorColors.size()) - 2);
    const double f = x - i;
    const QColor a = QColor::fromRgb(kErrorColors[std::size_t(i)]);
    const QColor b = QColor::fromRgb(kErrorColors[std::size_t(i) + 1]);
    return QColor::fromRgbF(float(a.redF() + f * (b.redF() - a.redF())),
                            float(a.greenF() + f * (b.greenF() - a.greenF())),
                            float(a.blueF() + f * (b.blueF() - a.blueF())));
}

std::vector<double> HeadErrorScale::ticks() const
{
    if (!m_valid)
        return {};
    const double middle =
        m_log ? std::sqrt(m_lower * m_upper) : 0.5 * (m_lower + m_upper);
    return {m_lower, middle, m_upper};
}

// ---------------------------------------------------------------------------------------------
// HeadGridView

// Where everything goes, for one size and font.
struct HeadGridView::Layout {
    QSizeF size;
    double cell = 0;   // side of a thumbnail
    double frame = 0;  // width of the error frame around it
    double outline = 0;  // width of the selection outline around the frame
    int columns = 0;
    std::vector<QRectF> cells;  // per entry: its thumbnail
    // WorstFirst: per entry, the label under the cell and its text.
    std::vector<QRectF> labels;
    std::vector<QString> labelTexts;
    // Model: the layer labels at the left and the head labels on top.
    std::vector<std::pair<QRectF, int>> layerLabels;
    std::vector<std::pair<QRectF, int>> headLabels;
    bool shortHeadLabels = false;  // the head labels are numbers, "head" stands before them
    QRectF headWordRect;
    QRectF titleRect;
    QRectF legendRect;
};

HeadGridView::HeadGridView(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    relayout();
}

void HeadGridView::setEntries(std::vector<HeadSurveyEntry> entries)
{
    m_entries = std::move(entries);
    m_layers = 0;
    m_heads = 0;
    for (const HeadSurveyEntry& entry : m_entries) {
        m_layers = std::max(m_layers, entry.layer + 1);
        m_heads = std::max(m_heads, entry.head + 1);
    }
    m_index.assign(std::size_t(m_layers) * std::size_t(m_heads), -1);
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        const HeadSurveyEntry& entry = m_entries[i];
        if (entry.layer >= 0 && entry.head >= 0)
            m_index[std::size_t(entry.layer) * std::size_t(m_heads) + std::size_t(entry.head)] =
                int(i);
    }
    m_scale = HeadErrorScale(m_entries);
    m_hovered = -1;
    rebuildImages();
    rebuildOrder();
    relayout();
    emit changed();
}

const HeadSurveyEntry* HeadGridView::entry(int layer, int head) const
{
    const int index = indexOf(layer, head);
    return index < 0 ? nullptr : &m_entries[std::size_t(index)];
}

int HeadGridView::indexOf(int layer, int head) const
{
    if (layer < 0 || head < 0 || layer >= m_layers || head >= m_heads)
        return -1;
    return m_index[std::size_t(layer) * std::size_t(m_heads) + std::size_t(head)];
}

void HeadGridView::setShowApproximation(bool approximation)
{
    if (approximation == m_showApprox)
        return;
    m_showApprox = approximation;
    rebuildImages();
    update();
    emit changed();
}

bool HeadGridView::hasApproximation() const
{
    return std::any_of(m_entries.begin(), m_entries.end(), [](const HeadSurveyEntry& entry) {
        return entry.thumbnailApprox.size() > 0;
    });
}

void HeadGridView::setOrder(HeadOrder order)
{
    if (order == m_order)
        return;
    m_order = order;
    rebuildOrder();
    relayout();
    emit changed();
}

void HeadGridView::setHighlightCount(int count)
{
    count = std::max(0, count);
    if (count == m_highlightCount)
        return;
    m_highlightCount = count;
    update();
    emit changed();
}

void HeadGridView::setCurrentHead(int layer, int head)
{
    if (layer == m_currentLayer && head == m_currentHead)
        return;
    m_currentLayer = layer;
    m_currentHead = head;
    update();
    emit changed();
}

int HeadGridView::errorRank(int layer, int head) const
{
    const int index = indexOf(layer, head);
    return index < 0 ? 0 : m_ranks[std::size_t(index)];
}

// Each thumbnail in viridis from 0 to the largest entry of the head's exact thumbnail.
void HeadGridView::rebuildImages()
{
    QCPColorGradient gradient = colorGradient(ColorMap::Viridis);
    m_images.clear();
    m_images.reserve(m_entries.size());
    for (const HeadSurveyEntry& entry : m_entries) {
        const MatrixD& exact = entry.thumbnailExact;
        const bool approx = m_showApprox && entry.thumbnailApprox.size() > 0;
        const MatrixD& matrix = approx ? entry.thumbnailApprox : exact;
        double top = exact.size() > 0 ? exact.maxCoeff() : 1.0;
        if (!(top > 0) || !std::isfinite(top))
            top = 1.0;
        const QCPRange range(0.0, top);
        QImage image(int(matrix.cols()), int(matrix.rows()), QImage::Format_RGB32);
        for (int row = 0; row < image.height(); ++row) {
            auto* line = reinterpret_cast<QRgb*>(image.scanLine(row));
            for (int col = 0; col < image.width(); ++col)
                line[col] = gradient.color(matrix(row, col), range);
        }
        m_images.push_back(std::move(image));
    }
}

void HeadGridView::rebuildOrder()
{
    const int count = int(m_entries.size());
    std::vector<int> model(static_cast<std::size_t>(count));
    std::iota(model.begin(), model.end(), 0);
    std::sort(model.begin(), model.end(), [this](int a, int b) {
        const HeadSurveyEntry& x = m_entries[std::size_t(a)];
        const HeadSurveyEntry& y = m_entries[std::size_t(b)];
        return std::pair(x.layer, x.head) < std::pair(y.layer, y.head);
    });
    std::vector<int> ranked;
    for (const int i : model)
        if (std::isfinite(m_entries[std::size_t(i)].metrics.relFrobeniusAttention))
            ranked.push_back(i);
    std::stable_sort(ranked.begin(), ranked.end(), [this](int a, int b) {
        return m_entries[std::size_t(a)].metrics.relFrobeniusAttention >
               m_entries[std::size_t(b)].metrics.relFrobeniusAttention;
    });
    m_ranks.assign(std::size_t(count), 0);
    for (std::size_t r = 0; r < ranked.size(); ++r)
        m_ranks[std::size_t(ranked[r])] = int(r) + 1;
    if (m_order == HeadOrder::Model) {
        m_displayOrder = model;
    } else {
        m_displayOrder = ranked;
        for (const int i : model)
            if (m_ranks[std::size_t(i)] == 0)
                m_displayOrder.push_back(i);
    }
}

HeadGridView::Layout HeadGridView::layoutFor(QSizeF size, const QFont& font,
                                             const QPaintDevice* device, bool title) const
{
    Layout layout;
    layout.size = size;
    const int count = int(m_entries.size());
    layout.cells.assign(std::size_t(count), QRectF());
    if (count == 0)
        return layout;

    const QFontMetricsF metrics(font, device);
    const QFontMetricsF titleMetrics(scaledFont(font, 1.2, true), device);
    const double line = metrics.height();
    const double margin = 8;
    const double titleHeight = title ? titleMetrics.height() + 8 : 0;
    const double legendHeight = 2 * line + 14;
    const double top = margin + titleHeight;
    const double available = size.height() - top - legendHeight - margin;
    const double width = size.width() - 2 * margin;
    if (title)
        layout.titleRect = QRectF(margin, margin, width, titleMetrics.height());

    // The gap between cells holds the error frame and the selection outline.
    const auto gapFor = [](double pitch) { return clamp(pitch * 0.16, 6, 16); };
    double blockLeft = margin;
    double blockTop = top;
    double blockWidth = 0;
    double blockHeight = 0;
    double gap = 0;

    if (m_order == HeadOrder::Model) {
        const int lastLayer = m_layers - 1;
        const int lastHead = m_heads - 1;
        // Measured in bold: the selected head's layer label is drawn bold.
        QFont bold = font;
        bold.setBold(true);
        const double layerWidth =
            QFontMetricsF(bold, device).horizontalAdvance(tr("layer %1").arg(lastLayer)) + 10;
        const double headerHeight = line + 4;
        const double gridWidth = width - layerWidth;
        const double gridHeight = available - headerHeight;
        const double pitch =
            std::max(4.0, std::min(gridWidth / m_heads, gridHeight / m_layers));
        gap = gapFor(pitch);
        layout.cell = std::max(2.0, pitch - gap);
        layout.columns = m_heads;
        blockWidth = layerWidth + pitch * m_heads;
        blockHeight = headerHeight + pitch * m_layers;
        blockLeft = margin + std::max(0.0, (width - blockWidth) / 2);
        blockTop = top + std::max(0.0, (available - blockHeight) / 2);
        const double gridLeft = blockLeft + layerWidth;
        const double gridTop = blockTop + headerHeight;
        for (int i = 0; i < count; ++i) {
            const HeadSurveyEntry& entry = m_entries[std::size_t(i)];
            layout.cells[std::size_t(i)] = snapped(gridLeft + entry.head * pitch + gap / 2,
                                                   gridTop + entry.layer * pitch + gap / 2,
                                                   layout.cell);
        }
        // Layer labels, every k-th when the rows are lower than a line.
        const int layerStride = niceStep(line / pitch);
        for (int layer = 0; layer < m_layers; layer += layerStride)
            layout.layerLabels.push_back(
                {QRectF(blockLeft, gridTop + layer * pitch, layerWidth - 8, pitch), layer});
        // Head labels: "head k" when they fit over a column, else numbers after "head".
        layout.shortHeadLabels =
            metrics.horizontalAdvance(tr("head %1").arg(lastHead)) + 4 > pitch;
        const double numberWidth = metrics.horizontalAdvance(QString::number(lastHead)) + 6;
        const int headStride = layout.shortHeadLabels ? niceStep(numberWidth / pitch) : 1;
        for (int head = 0; head < m_heads; head += headStride)
            layout.headLabels.push_back(
                {QRectF(gridLeft + head * pitch, blockTop, pitch, headerHeight), head});
        if (layout.shortHeadLabels)
            layout.headWordRect = QRectF(blockLeft, blockTop, layerWidth - 4, headerHeight);
    } else {
        // A ranked list: as many columns as give the largest cells, a label under each.
        const double labelHeight = line + 2;
        double best = -1;
        int bestColumns = 1;
        for (int columns = 1; columns <= count; ++columns) {
            const int rows = (count + columns - 1) / columns;
            const double pitchX = width / columns;
            const double pitchY = available / rows;
            const double g = gapFor(std::min(pitchX, pitchY));
            const double cell = std::min(pitchX - g, pitchY - g - labelHeight);
            if (cell > best) {
                best = cell;
                bestColumns = columns;
            }
        }
        const int columns = bestColumns;
        const int rows = (count + columns - 1) / columns;
        gap = gapFor(std::min(width / columns, available / rows));
        layout.cell = std::max(2.0, best);
        layout.columns = columns;
        const double pitchX = layout.cell + gap;
        const double pitchY = layout.cell + gap + labelHeight;
        blockWidth = pitchX * columns;
        blockHeight = pitchY * rows;
        blockLeft = margin + std::max(0.0, (width - blockWidth) / 2);
        blockTop = top + std::max(0.0, (available - blockHeight) / 2);
        layout.labels.assign(std::size_t(count), QRectF());
        layout.labelTexts.assign(std::size_t(count), QString());
        for (int position = 0; position < count; ++position) {
            const int i = m_displayOrder[std::size_t(position)];
            const int column = position % columns;
            const int row = position / columns;
            const QRectF cell = snapped(blockLeft + column * pitchX + gap / 2,
                                        blockTop + row * pitchY + gap / 2, layout.cell);
            layout.cells[std::size_t(i)] = cell;
            const HeadSurveyEntry& entry = m_entries[std::size_t(i)];
            const int rank = m_ranks[std::size_t(i)];
            const QString place = tr("L%1 H%2").arg(entry.layer).arg(entry.head);
            QString text = rank > 0 ? tr("#%1  %2").arg(rank).arg(place) : place;
            if (metrics.horizontalAdvance(text) > pitchX - 2)
                text = place;
            if (metrics.horizontalAdvance(text) > pitchX - 2)
                text = tr("%1.%2").arg(entry.layer).arg(entry.head);
            if (metrics.horizontalAdvance(text) > pitchX - 2)
                text.clear();
            layout.labels[std::size_t(i)] =
                QRectF(cell.left() - gap / 2, cell.bottom() + gap / 2, pitchX, labelHeight);
            layout.labelTexts[std::size_t(i)] = text;
        }
    }
    layout.frame = std::max(1.5, std::round(gap * 0.28));
    layout.outline = std::max(2.0, std::round(gap * 0.3));
    const double legendTop = std::min(blockTop + blockHeight + 6, size.height() - legendHeight);
    layout.legendRect = QRectF(margin, legendTop, width, legendHeight - 6);
    return layout;
}

void HeadGridView::relayout()
{
    m_layout = std::make_shared<Layout>(layoutFor(QSizeF(size()), font(), this, false));
    update();
}

QRect HeadGridView::cellRect(int layer, int head) const
{
    const int index = indexOf(layer, head);
    if (index < 0 || !m_layout)
        return QRect();
    return m_layout->cells[std::size_t(index)].toRect();
}

std::pair<int, int> HeadGridView::headAt(const QPoint& pos) const
{
    if (!m_layout)
        return {-1, -1};
    // The cell with its frame and half the gap around it, so a click on the frame counts.
    const double reach = m_layout->frame + 1;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        if (m_layout->cells[i].adjusted(-reach, -reach, reach, reach).contains(pos))
            return {m_entries[i].layer, m_entries[i].head};
    }
    return {-1, -1};
}

QString HeadGridView::headToolTip(int layer, int head) const
{
    const HeadSurveyEntry* e = entry(layer, head);
    if (!e)
        return {};
    const AttentionMetrics& m = e->metrics;
    QStringList lines;
    lines << tr("Layer %1, head %2").arg(layer).arg(head);
    const int rank = errorRank(layer, head);
    if (rank > 0)
        lines << tr("error rank %1 of %2 (1 = worst)")
                     .arg(rank)
                     .arg(*std::max_element(m_ranks.begin(), m_ranks.end()));
    lines << tr("relative Frobenius error of P: %1").arg(number(m.relFrobeniusAttention));
    lines << tr("mean row total variation: %1").arg(number(m.meanTotalVariation));
    lines << tr("max |%1 - P|: %2").arg(approxSymbol(), number(m.maxAbsError));
    lines << tr("mean KL(P || %1): %2").arg(approxSymbol(), number(m.meanKl));
    lines << tr("output relative error: %1").arg(number(m.relFrobeniusOutput));
    if (m.nonPositiveRows > 0)
        lines << tr("rows with a non-positive denominator: %1").arg(m.nonPositiveRows);
    lines << tr("|q'|: mean %1, max %2").arg(number(e->meanQueryNorm), number(e->maxQueryNorm));
    lines << tr("|k'|: mean %1, max %2").arg(number(e->meanKeyNorm), number(e->maxKeyNorm));
    return lines.join(QLatin1Char('\n'));
}

void HeadGridView::paintFigure(QPainter& painter, QSize size, const QString& title) const
{
    const Layout layout = layoutFor(QSizeF(size), font(), painter.device(), !title.isEmpty());
    painter.fillRect(QRectF(QPointF(0, 0), QSizeF(size)), Qt::white);
    paintGrid(painter, layout, font(), false, title);
}

void HeadGridView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Window));
    if (!m_layout || m_layout->size != QSizeF(size()))
        m_layout = std::make_shared<Layout>(layoutFor(QSizeF(size()), font(), this, false));
    paintGrid(painter, *m_layout, font(), true, QString());
}

void HeadGridView::paintGrid(QPainter& painter, const Layout& layout, const QFont& font,
                             bool onScreen, const QString& title) const
{
    const QColor ink = onScreen ? palette().color(QPalette::WindowText) : kInk;
    const QFontMetricsF metrics(font, painter.device());
    painter.setFont(font);
    if (m_entries.empty()) {
        painter.setPen(ink);
        painter.drawText(QRectF(QPointF(0, 0), layout.size), Qt::AlignCenter,
                         tr("No heads to show."));
        return;
    }
    if (!title.isEmpty()) {
        painter.setFont(scaledFont(font, 1.2, true));
        painter.setPen(ink);
        painter.drawText(layout.titleRect, Qt::AlignLeft | Qt::AlignVCenter,
                         QFontMetricsF(painter.font(), painter.device())
                             .elidedText(title, Qt::ElideRight, layout.titleRect.width()));
        painter.setFont(font);
    }

    // Labels of the model layout; the selected layer and head in bold.
    const QFont bold = scaledFont(font, 1.0, true);
    painter.setPen(ink);
    for (const auto& [rect, layer] : layout.layerLabels) {
        painter.setFont(layer == m_currentLayer ? bold : font);
        painter.drawText(rect, Qt::AlignRight | Qt::AlignVCenter, tr("layer %1").arg(layer));
    }
    for (const auto& [rect, head] : layout.headLabels) {
        painter.setFont(head == m_currentHead ? bold : font);
        painter.drawText(rect, Qt::AlignHCenter | Qt::AlignBottom,
                         layout.shortHeadLabels ? QString::number(head)
                                                : tr("head %1").arg(head));
    }
    painter.setFont(font);
    if (layout.shortHeadLabels)
        painter.drawText(layout.headWordRect, Qt::AlignRight | Qt::AlignBottom, tr("head"));

    // The cells: error frame, thumbnail, marks.
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter.setRenderHint(QPainter::Antialiasing, false);
    const double f = layout.frame;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        const QRectF& cell = layout.cells[i];
        painter.fillRect(cell.adjusted(-f, -f, f, f),
                         m_scale.color(m_entries[i].metrics.relFrobeniusAttention));
        painter.drawImage(cell, m_images[i]);
    }
    if (m_order == HeadOrder::WorstFirst) {
        for (std::size_t i = 0; i < m_entries.size(); ++i) {
            const bool marked = m_ranks[i] > 0 && m_ranks[i] <= m_highlightCount;
            const bool current =
                m_entries[i].layer == m_currentLayer && m_entries[i].head == m_currentHead;
            painter.setFont(marked || current ? bold : font);
            painter.setPen(ink);
            painter.drawText(layout.labels[i], Qt::AlignHCenter | Qt::AlignTop,
                             layout.labelTexts[i]);
        }
        painter.setFont(font);
    }

    // The N worst: their rank in a white badge at the top left corner of the cell.
    const QFont badgeFont = scaledFont(font, 0.85, true);
    const QFontMetricsF badgeMetrics(badgeFont, painter.device());
    painter.setFont(badgeFont);
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        const int rank = m_ranks[i];
        if (rank == 0 || rank > m_highlightCount)
            continue;
        const QRectF& cell = layout.cells[i];
        const QString text = QString::number(rank);
        const double height = badgeMetrics.height() + 1;
        const double width = std::max(height, badgeMetrics.horizontalAdvance(text) + 6);
        painter.setRenderHint(QPainter::Antialiasing, true);
        if (height <= 0.6 * cell.height() && width <= 0.8 * cell.width()) {
            const QRectF badge(cell.left() + 1, cell.top() + 1, width, height);
            painter.setPen(QPen(kInk, 1));
            painter.setBrush(Qt::white);
            painter.drawRoundedRect(badge, 3, 3);
            painter.setPen(Qt::black);
            painter.drawText(badge, Qt::AlignCenter, text);
        } else {
            const double side = std::max(4.0, 0.45 * cell.width());
            QPainterPath corner;
            corner.moveTo(cell.topLeft());
            corner.lineTo(cell.left() + side, cell.top());
            corner.lineTo(cell.left(), cell.top() + side);
            corner.closeSubpath();
            painter.fillPath(corner, Qt::white);
        }
        painter.setRenderHint(QPainter::Antialiasing, false);
    }
    painter.setFont(font);
    painter.setBrush(Qt::NoBrush);

    // Hover (screen only) and selection outlines, outside the frame.
    if (onScreen && m_hovered >= 0 && std::size_t(m_hovered) < m_entries.size()) {
        const double r = f + 1;
        painter.setPen(QPen(palette().color(QPalette::Dark), 1));
        painter.drawRect(layout.cells[std::size_t(m_hovered)].adjusted(-r, -r, r - 1, r - 1));
    }
    const int current = indexOf(m_currentLayer, m_currentHead);
    if (current >= 0) {
        const double w = layout.outline;
        const double r = f + w / 2;
        QPen pen(kSelection, w);
        pen.setJoinStyle(Qt::MiterJoin);
        painter.setPen(pen);
        painter.drawRect(layout.cells[std::size_t(current)].adjusted(-r, -r, r, r));
    }

    // The legend: the error bar with its range, and what the cells show.
    const QRectF legend = layout.legendRect;
    const double line = metrics.height();
    const double barWidth = std::min(200.0, std::max(80.0, legend.width() * 0.22));
    const QRectF bar(legend.left(), legend.top() + 2, barWidth, std::max(8.0, line - 4));
    if (m_scale.isValid()) {
        const int steps = int(barWidth);
        for (int s = 0; s < steps; ++s)
            painter.fillRect(QRectF(bar.left() + s, bar.top(), 1.0, bar.height()),
                             HeadErrorScale::colorAt((s + 0.5) / steps));
    } else {
        painter.fillRect(bar, kNoErrorColor);
    }
    painter.setPen(QPen(ink, 1));
    painter.drawRect(bar);
    // Tick labels under the bar: the ends and the middle.
    const std::vector<double> ticks = m_scale.ticks();
    for (std::size_t t = 0; t < ticks.size(); ++t) {
        const double x = bar.left() + bar.width() * m_scale.position(ticks[t]);
        const QString text = number(ticks[t]);
        const double w = metrics.horizontalAdvance(text);
        const double left = t == 0 ? x : (t + 1 == ticks.size() ? x - w : x - w / 2);
        painter.drawLine(QPointF(x, bar.bottom()), QPointF(x, bar.bottom() + 3));
        painter.drawText(QRectF(left, bar.bottom() + 3, w + 1, line), Qt::AlignLeft, text);
    }
    const double textLeft = bar.right() + 12;
    const double textWidth = legend.right() - textLeft;
    const bool approxShown = m_showApprox && hasApproximation();
    const QString errorText =
        m_scale.isValid()
            ? tr("frame colour: relative Frobenius error of P, \u2016%1 \u2212 P\u2016_F / "
                 "\u2016P\u2016_F%2")
                  .arg(approxSymbol(),
                       m_scale.isLogarithmic() ? tr(" (log scale)") : QString())
            : tr("frame colour: no approximation error (the exact method)");
    QString cellText =
        approxShown
            ? tr("cells: approximation %1 of each head (rows: queries, columns: keys), viridis "
                 "from 0 to the largest entry of the head's exact P")
                  .arg(approxSymbol())
            : tr("cells: exact P of each head (rows: queries, columns: keys), viridis from 0 to "
                 "its largest entry");
    if (m_showApprox && !hasApproximation())
        cellText += tr(" (the exact method has no %1)").arg(approxSymbol());
    if (m_highlightCount > 0)
        cellText += tr("; white badges: rank of the %1 worst").arg(m_highlightCount);
    painter.drawText(QRectF(textLeft, legend.top(), textWidth, line),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     metrics.elidedText(errorText, Qt::ElideRight, textWidth));
    painter.drawText(QRectF(textLeft, legend.top() + line + 2, textWidth, line),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     metrics.elidedText(cellText, Qt::ElideRight, textWidth));
}

void HeadGridView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    relayout();
}

void HeadGridView::mouseMoveEvent(QMouseEvent* event)
{
    const auto [layer, head] = headAt(event->position().toPoint());
    const int hovered = indexOf(layer, head);
    if (hovered != m_hovered) {
        m_hovered = hovered;
        setCursor(hovered >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
        update();
    }
    QWidget::mouseMoveEvent(event);
}

void HeadGridView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) {
        QWidget::mousePressEvent(event);
        return;
    }
    const auto [layer, head] = headAt(event->position().toPoint());
    const int index = indexOf(layer, head);
    if (index >= 0)
        select(index, true);
    event->accept();
}

void HeadGridView::leaveEvent(QEvent* event)
{
    if (m_hovered >= 0) {
        m_hovered = -1;
        update();
    }
    QWidget::leaveEvent(event);
}

void HeadGridView::keyPressEvent(QKeyEvent* event)
{
    if (m_entries.empty()) {
        QWidget::keyPressEvent(event);
        return;
    }
    int current = indexOf(m_currentLayer, m_currentHead);
    if (current < 0)
        current = m_displayOrder.front();
    int next = -1;
    if (m_order == HeadOrder::Model) {
        const HeadSurveyEntry& e = m_entries[std::size_t(current)];
        int layer = e.layer;
        int head = e.head;
        switch (event->key()) {
        case Qt::Key_Left: --head; break;
        case Qt::Key_Right: ++head; break;
        case Qt::Key_Up: --layer; break;
        case Qt::Key_Down: ++layer; break;
        default: QWidget::keyPressEvent(event); return;
        }
        next = indexOf(layer, head);
    } else {
        const auto found = std::find(m_displayOrder.begin(), m_displayOrder.end(), current);
        const int position = int(found - m_displayOrder.begin());
        const int columns = std::max(1, m_layout ? m_layout->columns : 1);
        int step = 0;
        switch (event->key()) {
        case Qt::Key_Left: step = -1; break;
        case Qt::Key_Right: step = 1; break;
        case Qt::Key_Up: step = -columns; break;
        case Qt::Key_Down: step = columns; break;
        default: QWidget::keyPressEvent(event); return;
        }
        const int target = position + step;
        if (target >= 0 && target < int(m_displayOrder.size()))
            next = m_displayOrder[std::size_t(target)];
    }
    if (next >= 0)
        select(next, true);
    event->accept();
}

void HeadGridView::select(int index, bool emitActivated)
{
    const HeadSurveyEntry& e = m_entries[std::size_t(index)];
    setCurrentHead(e.layer, e.head);
    if (emitActivated)
        emit headActivated(e.layer, e.head);
}

bool HeadGridView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const auto [layer, head] = headAt(help->pos());
        return showHeadToolTip(this, help, headToolTip(layer, head), cellRect(layer, head));
    }
    return QWidget::event(event);
}

// ---------------------------------------------------------------------------------------------
// HeadNormsChart

HeadNormsChart::HeadNormsChart(const HeadGridView* view, QWidget* parent)
    : QWidget(parent), m_view(view)
{
    setMouseTracking(true);
    connect(view, &HeadGridView::changed, this, qOverload<>(&QWidget::update));
}

QRectF HeadNormsChart::plotArea() const
{
    const QFontMetricsF metrics(font(), this);
    const double line = metrics.height();
    const double left = metrics.horizontalAdvance(QStringLiteral("00.0")) + 12;
    return QRectF(left, line + 8, std::max(10.0, width() - left - 10),
                  std::max(10.0, height() - 2 * line - 14));
}

double HeadNormsChart::axisMaximum() const
{
    double top = 0;
    for (const HeadSurveyEntry& e : m_view->entries())
        if (std::isfinite(e.meanQueryNorm))
            top = std::max(top, e.meanQueryNorm);
    if (!(top > 0))
        return 1;
    // 1, 2 or 5 times a power of ten, for readable ticks at 0, half and the top.
    const double decade = std::pow(10.0, std::floor(std::log10(top)));
    for (const double factor : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (factor * decade >= top)
            return factor * decade;
    return 10 * decade;
}

QRect HeadNormsChart::barRect(int i) const
{
    const std::vector<int>& order = m_view->displayOrder();
    if (i < 0 || i >= int(order.size()))
        return QRect();
    const QRectF area = plotArea();
    const double pitch = area.width() / double(order.size());
    const double gap = pitch >= 4 ? 1 : 0;
    const HeadSurveyEntry& e = m_view->entries()[std::size_t(order[std::size_t(i)])];
    const double value = std::isfinite(e.meanQueryNorm) ? e.meanQueryNorm : 0;
    const double height = area.height() * std::min(1.0, value / axisMaximum());
    const double left = std::round(area.left() + i * pitch);
    const double right = std::round(area.left() + (i + 1) * pitch - gap);
    return QRectF(left, area.bottom() - height, std::max(1.0, right - left), height).toRect();
}

int HeadNormsChart::barAt(const QPoint& pos) const
{
    const std::vector<int>& order = m_view->displayOrder();
    const QRectF area = plotArea();
    if (order.empty() || pos.x() < area.left() || pos.x() >= area.right() ||
        pos.y() < area.top() - 4 || pos.y() > area.bottom() + 4)
        return -1;
    const int i = int((pos.x() - area.left()) / area.width() * double(order.size()));
    return i >= 0 && i < int(order.size()) ? i : -1;
}

void HeadNormsChart::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Window));
    const QColor ink = palette().color(QPalette::WindowText);
    const QFontMetricsF metrics(font(), this);
    const double line = metrics.height();
    const std::vector<int>& order = m_view->displayOrder();
    const std::vector<HeadSurveyEntry>& entries = m_view->entries();
    painter.setPen(ink);
    const QRectF area = plotArea();
    const QString title =
        m_view->order() == HeadOrder::Model
            ? tr("mean |q'| of each head, layer by layer; bar colour: its error, as the frames")
            : tr("mean |q'| of each head, worst error first; bar colour: its error, as the "
                 "frames");
    painter.drawText(QRectF(area.left(), 2, width() - area.left() - 4, line),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     metrics.elidedText(title, Qt::ElideRight, width() - area.left() - 4));
    if (order.empty())
        return;

    // The y axis: 0, half and the top, with light grid lines.
    const double top = axisMaximum();
    for (const double value : {0.0, top / 2, top}) {
        const double y = std::round(area.bottom() - area.height() * value / top) + 0.5;
        painter.setPen(QPen(palette().color(QPalette::Midlight), 1));
        painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
        painter.setPen(ink);
        painter.drawText(QRectF(0, y - line / 2, area.left() - 6, line),
                         Qt::AlignRight | Qt::AlignVCenter, QString::number(value, 'g', 3));
    }

    const HeadErrorScale& scale = m_view->errorScale();
    for (int i = 0; i < int(order.size()); ++i) {
        const HeadSurveyEntry& e = entries[std::size_t(order[std::size_t(i)])];
        painter.fillRect(barRect(i), scale.color(e.metrics.relFrobeniusAttention));
    }
    painter.setPen(QPen(ink, 1));
    painter.drawLine(area.bottomLeft(), area.bottomRight());

    // The x axis: layer groups (model order) or ranks (worst first).
    const double pitch = area.width() / double(order.size());
    const double labelTop = area.bottom() + 3;
    if (m_view->order() == HeadOrder::Model) {
        const int heads = std::max(1, m_view->headCount());
        const int layers = m_view->layerCount();
        const double groupWidth = pitch * heads;
        const double labelWidth = metrics.horizontalAdvance(tr("L%1").arg(layers - 1)) + 6;
        const int stride = niceStep(labelWidth / groupWidth);
        for (int layer = 0; layer < layers; ++layer) {
            const double x = area.left() + layer * groupWidth;
            if (layer > 0) {
                painter.setPen(QPen(palette().color(QPalette::Mid), 1));
                painter.drawLine(QPointF(std::round(x) - 0.5, area.top()),
                                 QPointF(std::round(x) - 0.5, area.bottom() + 3));
            }
            if (layer % stride == 0) {
                painter.setPen(ink);
                painter.drawText(QRectF(x, labelTop, groupWidth * stride, line),
                                 Qt::AlignLeft | Qt::AlignTop,
                                 groupWidth >= metrics.horizontalAdvance(tr("layer 00")) + 4
                                     ? tr("layer %1").arg(layer)
                                     : tr("L%1").arg(layer));
            }
        }
    } else {
        const double labelWidth = metrics.horizontalAdvance(tr("#%1").arg(order.size())) + 8;
        const int stride = niceStep(labelWidth / pitch);
        painter.setPen(ink);
        for (int rank = 1; rank <= int(order.size()); rank = rank == 1 && stride > 1 ? stride : rank + stride) {
            const double x = area.left() + (rank - 0.5) * pitch;
            painter.drawLine(QPointF(x, area.bottom()), QPointF(x, area.bottom() + 3));
            painter.drawText(QRectF(x - labelWidth / 2, labelTop, labelWidth, line),
                             Qt::AlignHCenter | Qt::AlignTop, tr("#%1").arg(rank));
        }
    }

    // The selected head: outlined, with a mark under its bar.
    const int current = [&] {
        for (int i = 0; i < int(order.size()); ++i) {
            const HeadSurveyEntry& e = entries[std::size_t(order[std::size_t(i)])];
            if (e.layer == m_view->currentLayer() && e.head == m_view->currentHead())
                return i;
        }
        return -1;
    }();
    if (current >= 0) {
        QRectF bar = barRect(current);
        bar.setTop(std::min(bar.top(), area.bottom() - 3));
        painter.setPen(QPen(kSelection, 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(bar.adjusted(-1, -1, 1, 1));
    }
}

void HeadNormsChart::mousePressEvent(QMouseEvent* event)
{
    const int i = barAt(event->position().toPoint());
    if (event->button() == Qt::LeftButton && i >= 0) {
        const HeadSurveyEntry& e =
            m_view->entries()[std::size_t(m_view->displayOrder()[std::size_t(i)])];
        emit headActivated(e.layer, e.head);
        event->accept();
        return;
    }
    QWidget::mousePressEvent(event);
}

bool HeadNormsChart::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int i = barAt(help->pos());
        if (i < 0)
            return showHeadToolTip(this, help, QString(), QRect());
        const HeadSurveyEntry& e =
            m_view->entries()[std::size_t(m_view->displayOrder()[std::size_t(i)])];
        return showHeadToolTip(this, help, m_view->headToolTip(e.layer, e.head), barRect(i));
    }
    return QWidget::event(event);
}

// ---------------------------------------------------------------------------------------------
// HeadGridPanel

// What the GUI thread and the worker of one survey share.
struct HeadSurveyJob {
    std::atomic<bool> cancel{false};
    // Written by the worker, read once the watcher says it is done.
    std::vector<HeadSurveyEntry> entries;
    int tokens = 0;
    bool cancelled = false;
    QString error;
    QElapsedTimer clock;
};

namespace {

// What a survey is of: the spec without the layer (the survey covers every layer) and the
// budget. Equal keys give the same survey.
QString surveyKey(const ExperimentSpec& spec, const MemoryBudget& budget)
{
    ExperimentSpec normalised = spec;
    normalised.input.layer = 0;
    normalised.causal = true;
    normalised.threads = 0;
    return QString::fromUtf8(QJsonDocument(normalised.toJson()).toJson(QJsonDocument::Compact)) +
           QString::number(budget.bytes());
}

QString methodText(const ExperimentSpec& spec)
{
    if (spec.exactMethod)
        return HeadGridPanel::tr("exact (streaming)");
    const MethodInfo& info = methodInfo(spec.featureMap.kind);
    if (!info.drawsProjection)
        return info.title;
    return HeadGridPanel::tr("%1, m = %2").arg(info.title).arg(spec.featureMap.features);
}

QLabel* caption(const QString& text)
{
    auto* label = new QLabel(text);
    label->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
    return label;
}

}  // namespace

HeadGridPanel::HeadGridPanel(QWidget* parent) : QWidget(parent)
{
    m_pool.setMaxThreadCount(1);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(kDebounceMs);
    connect(&m_debounce, &QTimer::timeout, this, &HeadGridPanel::startSurvey);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &HeadGridPanel::finishSurvey);

    m_show = new QComboBox;
    m_show->setObjectName(QStringLiteral("headsShow"));
    m_show->addItem(tr("exact P"), QStringLiteral("exact"));
    m_show->addItem(tr("approximation %1").arg(approxSymbol()), QStringLiteral("approximation"));
    m_show->setToolTip(tr("What each cell shows: the head's exact attention P or the "
                          "approximation %1 of the method.")
                           .arg(approxSymbol()));
    m_order = new QComboBox;
    m_order->setObjectName(QStringLiteral("headsOrder"));
    m_order->addItem(tr("model layout"), headOrderName(HeadOrder::Model));
    m_order->addItem(tr("worst error first"), headOrderName(HeadOrder::WorstFirst));
    m_order->setToolTip(tr("Layers down and heads across, or a ranked list with the largest "
                           "relative Frobenius error of P first."));
    m_highlight = new QSpinBox;
    m_highlight->setObjectName(QStringLiteral("headsHighlight"));
    m_highlight->setRange(0, kMaxHighlight);
    m_highlight->setSpecialValueText(tr("none"));
    m_highlight->setToolTip(tr("Marks this many heads with the largest error with their rank."));
    auto* exportButton = new QToolButton;
    exportButton->setText(tr("Export"));
    exportButton->setPopupMode(QToolButton::InstantPopup);
    auto* exportMenu = new QMenu(exportButton);
    for (const FigureFormat format : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf})
        exportMenu->addAction(tr("Grid as %1...").arg(figureFormatName(format).toUpper()), this,
                              [this, format] { exportDialog(format); });
    exportButton->setMenu(exportMenu);
    m_surveyLabel = new QLabel;
    m_surveyLabel->setObjectName(QStringLiteral("headsSurvey"));
    m_surveyLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_surveyLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_surveyLabel->setWordWrap(true);  // a narrow page wraps the summary instead of cutting it
    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(160);
    m_progress->setTextVisible(true);
    m_progress->setFormat(tr("layer %v of %m"));
    m_progress->hide();

    auto* bar = new QHBoxLayout;
    bar->addWidget(caption(tr("Show:")));
    bar->addWidget(m_show);
    bar->addSpacing(12);
    bar->addWidget(caption(tr("Order:")));
    bar->addWidget(m_order);
    bar->addSpacing(12);
    bar->addWidget(caption(tr("Highlight worst:")));
    bar->addWidget(m_highlight);
    bar->addSpacing(12);
    bar->addWidget(exportButton);
    bar->addSpacing(16);
    bar->addWidget(m_surveyLabel, 1);
    bar->addWidget(m_progress);

    m_view = new HeadGridView;
    m_view->setObjectName(QStringLiteral("headGrid"));
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("headsMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setMargin(40);
    m_message->setFont(scaledFont(font(), 1.15));
    m_stack = new QStackedWidget;
    m_stack->addWidget(m_message);
    m_stack->addWidget(m_view);

    m_chart = new HeadNormsChart(m_view);
    m_chart->setObjectName(QStringLiteral("headNorms"));
    m_selected = new QLabel;
    m_selected->setObjectName(QStringLiteral("headsSelected"));
    m_selected->setTextFormat(Qt::RichText);
    m_selected->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_selected->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_selected->setMinimumWidth(250);
    auto* bottom = new QWidget;
    auto* bottomLayout = new QHBoxLayout(bottom);
    bottomLayout->setContentsMargins(8, 0, 0, 0);
    bottomLayout->addWidget(m_selected);
    bottomLayout->addWidget(m_chart, 1);

    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(m_stack);
    splitter->addWidget(bottom);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);
    splitter->setSizes({600, 150});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(bar);
    layout->addWidget(splitter, 1);

    connect(m_show, &QComboBox::currentIndexChanged, this, [this] {
        m_view->setShowApproximation(m_show->currentData().toString() ==
                                     QLatin1String("approximation"));
    });
    connect(m_order, &QComboBox::currentIndexChanged, this, [this] {
        HeadOrder order = HeadOrder::Model;
        parseHeadOrder(m_order->currentData().toString(), &order);
        m_view->setOrder(order);
    });
    connect(m_highlight, &QSpinBox::valueChanged, m_view, &HeadGridView::setHighlightCount);
    connect(m_view, &HeadGridView::headActivated, this, &HeadGridPanel::headActivated);
    connect(m_chart, &HeadNormsChart::headActivated, this, [this](int layer, int head) {
        m_view->setCurrentHead(layer, head);
        emit headActivated(layer, head);
    });
    connect(m_view, &HeadGridView::changed, this, &HeadGridPanel::updateSelectedText);
    connect(m_view, &HeadGridView::changed, this, &HeadGridPanel::syncControls);

    showMessage(tr("The head grid shows a trained model's heads: choose the built-in model or "
                   "Open Model... on the Input dock's Text page."));
    updateSelectedText();
}

HeadGridPanel::~HeadGridPanel()
{
    if (m_job)
        m_job->cancel = true;
    m_pool.waitForDone();
}

void HeadGridPanel::setExperiment(const ExperimentSpec& spec)
{
    if (spec.input.kind != InputKind::Model) {
        m_debounce.stop();
        if (m_job)
            m_job->cancel = true;
        ++m_serial;  // whatever still runs is stale
        m_surveyKey.clear();
        m_surveyTitle.clear();
        m_view->clear();
        m_progress->hide();
        m_surveyLabel->clear();
        showMessage(tr("The head grid shows a trained model's heads: choose the built-in model "
                       "or Open Model... on the Input dock's Text page."));
        updateBusy();
        return;
    }
    const QString key = surveyKey(spec, m_budget);
    if (key == m_surveyKey && !m_debounce.isActive())
        return;  // surveyed or being surveyed; the layer is all that changed
    m_pending = spec;
    m_surveyKey = key;
    m_debounce.start();
    updateBusy();
}

void HeadGridPanel::setEntries(std::vector<HeadSurveyEntry> entries, const QString& description)
{
    m_debounce.stop();
    if (m_job)
        m_job->cancel = true;
    ++m_serial;
    m_surveyKey.clear();
    m_surveyTitle = description;
    m_view->setEntries(std::move(entries));
    m_surveyLabel->setText(tr("%1 \u00b7 %2 layers \u00d7 %3 heads")
                               .arg(description)
                               .arg(m_view->layerCount())
                               .arg(m_view->headCount()));
    showGrid();
    updateBusy();
}

void HeadGridPanel::startSurvey()
{
    if (m_job)
        m_job->cancel = true;  // its result is stale
    const int serial = ++m_serial;
    const ExperimentSpec spec = m_pending;
    const MemoryBudget budget = m_budget;
    m_job = std::make_shared<HeadSurveyJob>();
    m_job->clock.start();
    m_surveyTitle = tr("%1 \u00b7 %2").arg(modelDisplayName(spec.input.modelPath),
                                          methodText(spec));
    m_progress->setRange(0, 0);
    m_progress->setValue(0);
    m_progress->show();
    m_surveyLabel->setText(tr("Surveying every head: %1...").arg(m_surveyTitle));
    // The worker hands progress to the GUI thread through queued calls and never touches a
    // widget; the destructor waits for it.
    m_watcher.setFuture(QtConcurrent::run(&m_pool, [this, serial, spec, budget, job = m_job] {
        const WorkerOutcome outcome = runOnWorker([&] {
            const std::shared_ptr<const Gpt2Model> model = loadModel(spec.input.modelPath);
            job->tokens = int(
                modelTokens(*model, spec.input.text, spec.input.keepLastTokens).ids.size());
            ComputeOptions options;
            options.budget = budget;
            options.cancelled = [job] { return job->cancel.load(); };
            job->entries = surveyHeads(spec, options, kThumbnailSize, [&](int done, int total) {
                QMetaObject::invokeMethod(
                    this, [this, serial, done, total] { showProgress(serial, done, total); },
                    Qt::QueuedConnection);
            });
        });
        job->cancelled = outcome.cancelled;
        job->error = outcome.error;
    }));
    setRunning(true);
}

void HeadGridPanel::showProgress(int serial, int done, int total)
{
    if (serial != m_serial)
        return;
    m_progress->setRange(0, total);
    m_progress->setValue(done);
}

void HeadGridPanel::finishSurvey()
{
    const std::shared_ptr<HeadSurveyJob> job = m_job;
    setRunning(false);
    if (!job || job->cancel || job->cancelled || m_debounce.isActive())
        return;  // stale: a newer request replaces it (or no survey is wanted any more)
    m_progress->hide();
    if (!job->error.isEmpty()) {
        m_view->clear();
        m_surveyKey.clear();  // the same spec may be tried again (after a new budget)
        m_surveyLabel->setText(tr("The survey failed: %1").arg(m_surveyTitle));
        showMessage(tr("The head survey failed: %1").arg(job->error));
    } else {
        m_surveyTitle = tr("%1 \u00b7 %2 tokens \u00b7 %3").arg(
            modelDisplayName(m_pending.input.modelPath))
                            .arg(job->tokens)
                            .arg(methodText(m_pending));
        m_view->setEntries(std::move(job->entries));
        const bool approx = m_view->hasApproximation();
        m_surveyLabel->setText(tr("%1 \u00b7 %2 layers \u00d7 %3 heads \u00b7 %4 s")
                                   .arg(m_surveyTitle)
                                   .arg(m_view->layerCount())
                                   .arg(m_view->headCount())
                                   .arg(double(job->clock.elapsed()) / 1000, 0, 'f', 1));
        m_surveyLabel->setToolTip(approx ? QString()
                                         : tr("The exact method has no approximation: every "
                                              "cell shows P."));
        showGrid();
    }
    emit surveyFinished();
}

void HeadGridPanel::setRunning(bool running)
{
    m_running = running;
    updateBusy();
}

bool HeadGridPanel::isBusy() const
{
    return m_debounce.isActive() || m_running;
}

void HeadGridPanel::updateBusy()
{
    const bool busy = isBusy();
    if (!busy)
        m_progress->hide();
    if (busy != m_busy) {
        m_busy = busy;
        emit busyChanged(busy);
    }
}

void HeadGridPanel::showMessage(const QString& text)
{
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void HeadGridPanel::showGrid()
{
    m_message->clear();
    m_stack->setCurrentWidget(m_view);
}

void HeadGridPanel::syncControls()
{
    const QSignalBlocker showBlocker(m_show);
    const QSignalBlocker orderBlocker(m_order);
    const QSignalBlocker highlightBlocker(m_highlight);
    m_show->setCurrentIndex(m_show->findData(m_view->showsApproximation()
                                                 ? QStringLiteral("approximation")
                                                 : QStringLiteral("exact")));
    m_order->setCurrentIndex(m_order->findData(headOrderName(m_view->order())));
    m_highlight->setValue(m_view->highlightCount());
}

QString HeadGridPanel::message() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

QString HeadGridPanel::surveyText() const
{
    return m_surveyLabel->text();
}

void HeadGridPanel::setCurrentHead(int layer, int head)
{
    m_view->setCurrentHead(layer, head);
}

void HeadGridPanel::updateSelectedText()
{
    const HeadSurveyEntry* e = m_view->entry(m_view->currentLayer(), m_view->currentHead());
    if (!e) {
        m_selected->setText(m_view->entries().empty()
                                ? QString()
                                : tr("Click a head (or a bar) to see its norms and errors."));
        return;
    }
    const int rank = m_view->errorRank(e->layer, e->head);
    const QString cell = QStringLiteral("<td align=\"right\">%1</td>");
    m_selected->setText(
        tr("<b>Layer %1, head %2</b>%3"
           "<table cellspacing=\"0\" cellpadding=\"2\">"
           "<tr><td></td><td align=\"right\"><i>mean</i></td><td align=\"right\"><i>max</i></td>"
           "</tr>"
           "<tr><td>|q'|</td>%4%5</tr><tr><td>|k'|</td>%6%7</tr></table>"
           "relative Frobenius error of P: <b>%8</b><br>mean row total variation: %9")
            .arg(e->layer)
            .arg(e->head)
            .arg(rank > 0 ? tr(" &nbsp; (error rank %1 of %2)")
                                .arg(rank)
                                .arg(m_view->entries().size())
                          : QString())
            .arg(cell.arg(number(e->meanQueryNorm)), cell.arg(number(e->maxQueryNorm)),
                 cell.arg(number(e->meanKeyNorm)), cell.arg(number(e->maxKeyNorm)),
                 number(e->metrics.relFrobeniusAttention),
                 number(e->metrics.meanTotalVariation)));
}

QJsonObject HeadGridPanel::state() const
{
    QJsonObject state;
    state[QLatin1String("show")] = m_show->currentData().toString();
    state[QLatin1String("order")] = m_order->currentData().toString();
    state[QLatin1String("highlight_worst")] = m_highlight->value();
    return state;
}

void HeadGridPanel::setState(const QJsonObject& state)
{
    // Read everything first, so that a malformed state changes nothing.
    int show = m_show->currentIndex();
    if (state.contains(QLatin1String("show"))) {
        const QJsonValue value = state.value(QLatin1String("show"));
        show = value.isString() ? m_show->findData(value.toString()) : -1;
        if (show < 0)
            throw InputError(tr("show must be \"exact\" or \"approximation\""));
    }
    int order = m_order->currentIndex();
    if (state.contains(QLatin1String("order"))) {
        const QJsonValue value = state.value(QLatin1String("order"));
        order = value.isString() ? m_order->findData(value.toString()) : -1;
        if (order < 0)
            throw InputError(tr("order must be \"model\" or \"worst-first\""));
    }
    int highlight = m_highlight->value();
    if (state.contains(QLatin1String("highlight_worst"))) {
        const QJsonValue value = state.value(QLatin1String("highlight_worst"));
        const double number = value.toDouble(std::nan(""));
        if (!value.isDouble() || number != std::floor(number) || number < 0 ||
            number > kMaxHighlight)
            throw InputError(
                tr("highlight_worst must be an integer from 0 to %1").arg(kMaxHighlight));
        highlight = int(number);
    }
    m_show->setCurrentIndex(show);
    m_order->setCurrentIndex(order);
    m_highlight->setValue(highlight);
}

void HeadGridPanel::exportFigure(const QString& path, FigureFormat format)
{
    if (m_view->entries().empty())
        throw OutputError(tr("cannot write the figure %1: no heads have been surveyed (the head "
                             "grid needs model input)")
                              .arg(QDir::toNativeSeparators(path)));
    const QSize size = m_view->isVisible() && m_view->width() >= 200 && m_view->height() >= 150
                           ? m_view->size()
                           : QSize(1200, 800);
    const QString title =
        tr("Every head: %1 \u2014 %2")
            .arg(m_surveyTitle, m_view->showsApproximation() && m_view->hasApproximation()
                                    ? tr("approximation %1").arg(approxSymbol())
                                    : tr("exact P"));
    PaintedFigure figure;
    figure.size = size;
    figure.dpi = logicalDpiX();
    figure.title = title;
    figure.description = QStringLiteral("Attention Lab figure");
    figure.what = QStringLiteral("figure");
    figure.png = [&] {
        QImage image(size * kPngExportScale, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(kPngExportScale);
        {
            QPainter painter(&image);
            m_view->paintFigure(painter, size, title);
        }
        tagExportResolution(image, kPngExportScale);
        return image;
    };
    figure.paintVector = [&](QPaintDevice& device, bool pdf) {
        QPainter painter;
        if (!painter.begin(&device))
            return false;
        if (pdf)  // the page is size points wide: map the figure's pixels onto it
            painter.setWindow(QRect(QPoint(0, 0), size));
        m_view->paintFigure(painter, size, title);
        return painter.end();
    };
    exportPaintedFigure(path, format, figure);
}

void HeadGridPanel::exportDialog(FigureFormat format)
{
    const QString path =
        askSavePath(this, tr("Export head grid"), QStringLiteral("heads"), figureFormatName(format));
    if (path.isEmpty())
        return;
    try {
        exportFigure(path, format);
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Export head grid"), e.message());
    }
}

}  // namespace attnlab::ui

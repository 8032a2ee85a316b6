#include "ui/model/head_grid_view.h"

#include "ui/model/head_grid_style.h"

#include "ui/plotting/color_maps.h"
#include "ui/plotting/plot_style.h"

#include <QFontMetricsF>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <map>
#include <array>
#include <cmath>

namespace attnlab::ui {

using namespace heads;

namespace {

// The gap between cells of this pitch: it holds the error frame and the selection outline.
double gapFor(double pitch)
{
    return clamp(pitch * 0.16, 6, 16);
}

// A rectangle with integer corners, so that images and frames land on whole pixels.
QRectF snapped(double x, double y, double side)
{
    const double left = std::round(x);
    const double top = std::round(y);
    const double size = std::max(1.0, std::floor(side));
    return QRectF(left, top, size, size);
}

}  // namespace

QString headOrderName(HeadOrder order)
{
    switch (order) {
        case HeadOrder::Model: return QStringLiteral("model");
        case HeadOrder::WorstFirst: return QStringLiteral("worst-first");
        case HeadOrder::LowestEntropyFirst: return QStringLiteral("lowest-entropy-first");
        case HeadOrder::LeastMonotonicFirst: return QStringLiteral("least-monotonic-first");
    }
    return {};
}

bool parseHeadOrder(const QString& name, HeadOrder* order)
{
    for (const HeadOrder candidate :
         {HeadOrder::Model, HeadOrder::WorstFirst, HeadOrder::LowestEntropyFirst,
          HeadOrder::LeastMonotonicFirst}) {
        if (name == headOrderName(candidate)) {
            *order = candidate;
            return true;
        }
    }
    return false;
}

// Where everything goes, for one size and font.
struct HeadGridView::Layout {
    QSizeF size;
    double cell = 0;     // side of a thumbnail
    double frame = 0;    // width of the error frame around it
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
    // The legend's two texts (legendTexts()) beside its error bar, word-wrapped to their width.
    QRectF barRect;
    QRectF errorTextRect;
    QRectF cellTextRect;
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
    // The ranking key, largest first: the error (the model layout's and the highlight's), or
    // the negated entropy or monotonicity.
    const auto key = [this](int i) {
        const AttentionMetrics& metrics = m_entries[std::size_t(i)].metrics;
        switch (m_order) {
            case HeadOrder::LowestEntropyFirst: return -metrics.properties.entropyExact;
            case HeadOrder::LeastMonotonicFirst: return -metrics.properties.monotonicity;
            case HeadOrder::Model:
            case HeadOrder::WorstFirst: break;
        }
        return metrics.relFrobeniusAttention;
    };
    std::vector<int> ranked;
    for (const int i : model)
        if (std::isfinite(key(i)))
            ranked.push_back(i);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&key](int a, int b) { return key(a) > key(b); });
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
    const double width = size.width() - 2 * margin;
    // The legend: the error bar, and beside it its two texts wrapped to the width they have
    // (elided to one line each, they lost their ends in a 1280-pixel window).
    const double barWidth = std::min(200.0, std::max(80.0, width * 0.22));
    const double textWidth = std::max(1.0, width - barWidth - 12);
    // The cells' text has the height of its longest form (P or P^, every head marked), so that
    // the grid does not move when the highlight or what the cells show changes.
    const auto wrappedHeight = [&](const QString& text) {
        return metrics.boundingRect(QRectF(0, 0, textWidth, 1e6), Qt::TextWordWrap, text).height();
    };
    const double errorHeight = wrappedHeight(legendTexts(false, 0).first);
    const double cellHeight = std::max(wrappedHeight(legendTexts(false, count).second),
                                       wrappedHeight(legendTexts(true, count).second));
    const double legendHeight = std::max(2 * line, errorHeight + 2 + cellHeight) + 14;
    const double top = margin + titleHeight;
    const double available = size.height() - top - legendHeight - margin;
    if (title)
        layout.titleRect = QRectF(margin, margin, width, titleMetrics.height());

    const QRectF area(margin, top, width, available);
    double gap = 0;
    const QRectF block = m_order == HeadOrder::Model
                             ? layoutModelOrder(layout, area, font, device, &gap)
                             : layoutRanked(layout, area, metrics, &gap);
    layout.frame = std::max(1.5, std::round(gap * 0.28));
    layout.outline = std::max(2.0, std::round(gap * 0.3));
    const double legendTop = std::min(block.bottom() + 6, size.height() - legendHeight);
    layout.barRect = QRectF(margin, legendTop + 2, barWidth, std::max(8.0, line - 4));
    const double textLeft = margin + barWidth + 12;
    layout.errorTextRect = QRectF(textLeft, legendTop, textWidth, errorHeight);
    layout.cellTextRect = QRectF(textLeft, legendTop + errorHeight + 2, textWidth, cellHeight);
    return layout;
}

QRectF HeadGridView::layoutModelOrder(Layout& layout, const QRectF& area, const QFont& font,
                                      const QPaintDevice* device, double* gap) const
{
    const QFontMetricsF metrics(font, device);
    const double line = metrics.height();
    const int count = int(m_entries.size());
    const int lastLayer = m_layers - 1;
    const int lastHead = m_heads - 1;
    // Measured in bold: the selected head's layer label is drawn bold.
    QFont bold = font;
    bold.setBold(true);
    const double layerWidth =
        QFontMetricsF(bold, device).horizontalAdvance(tr("layer %1").arg(lastLayer)) + 10;
    const double headerHeight = line + 4;
    const double gridWidth = area.width() - layerWidth;
    const double gridHeight = area.height() - headerHeight;
    const double pitch = std::max(4.0, std::min(gridWidth / m_heads, gridHeight / m_layers));
    *gap = gapFor(pitch);
    layout.cell = std::max(2.0, pitch - *gap);
    layout.columns = m_heads;
    const double blockWidth = layerWidth + pitch * m_heads;
    const double blockHeight = headerHeight + pitch * m_layers;
    const double blockLeft = area.left() + std::max(0.0, (area.width() - blockWidth) / 2);
    const double blockTop = area.top() + std::max(0.0, (area.height() - blockHeight) / 2);
    const double gridLeft = blockLeft + layerWidth;
    const double gridTop = blockTop + headerHeight;
    for (int i = 0; i < count; ++i) {
        const HeadSurveyEntry& entry = m_entries[std::size_t(i)];
        layout.cells[std::size_t(i)] =
            snapped(gridLeft + entry.head * pitch + *gap / 2,
                    gridTop + entry.layer * pitch + *gap / 2, layout.cell);
    }
    // Layer labels, every k-th when the rows are lower than a line.
    const int layerStride = niceStep(line / pitch);
    for (int layer = 0; layer < m_layers; layer += layerStride)
        layout.layerLabels.push_back(
            {QRectF(blockLeft, gridTop + layer * pitch, layerWidth - 8, pitch), layer});
    // Head labels: "head k" when they fit over a column, else numbers after "head".
    layout.shortHeadLabels = metrics.horizontalAdvance(tr("head %1").arg(lastHead)) + 4 > pitch;
    const double numberWidth = metrics.horizontalAdvance(QString::number(lastHead)) + 6;
    const int headStride = layout.shortHeadLabels ? niceStep(numberWidth / pitch) : 1;
    for (int head = 0; head < m_heads; head += headStride)
        layout.headLabels.push_back(
            {QRectF(gridLeft + head * pitch, blockTop, pitch, headerHeight), head});
    if (layout.shortHeadLabels)
        layout.headWordRect = QRectF(blockLeft, blockTop, layerWidth - 4, headerHeight);
    return QRectF(blockLeft, blockTop, blockWidth, blockHeight);
}

QRectF HeadGridView::layoutRanked(Layout& layout, const QRectF& area, const QFontMetricsF& metrics,
                                  double* gap) const
{
    const int count = int(m_entries.size());
    const double line = metrics.height();
    // A ranked list: as many columns as give the largest cells, a label under each.
    const double labelHeight = line + 2;
    double best = -1;
    int bestColumns = 1;
    for (int columns = 1; columns <= count; ++columns) {
        const int rows = (count + columns - 1) / columns;
        const double pitchX = area.width() / columns;
        const double pitchY = area.height() / rows;
        const double g = gapFor(std::min(pitchX, pitchY));
        const double cell = std::min(pitchX - g, pitchY - g - labelHeight);
        if (cell > best) {
            best = cell;
            bestColumns = columns;
        }
    }
    const int columns = bestColumns;
    const int rows = (count + columns - 1) / columns;
    *gap = gapFor(std::min(area.width() / columns, area.height() / rows));
    layout.cell = std::max(2.0, best);
    layout.columns = columns;
    const double pitchX = layout.cell + *gap;
    const double pitchY = layout.cell + *gap + labelHeight;
    const double blockWidth = pitchX * columns;
    const double blockHeight = pitchY * rows;
    const double blockLeft = area.left() + std::max(0.0, (area.width() - blockWidth) / 2);
    const double blockTop = area.top() + std::max(0.0, (area.height() - blockHeight) / 2);
    layout.labels.assign(std::size_t(count), QRectF());
    layout.labelTexts.assign(std::size_t(count), QString());
    for (int position = 0; position < count; ++position) {
        const int i = m_displayOrder[std::size_t(position)];
        const int column = position % columns;
        const int row = position / columns;
        const QRectF cell = snapped(blockLeft + column * pitchX + *gap / 2,
                                    blockTop + row * pitchY + *gap / 2, layout.cell);
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
            QRectF(cell.left() - *gap / 2, cell.bottom() + *gap / 2, pitchX, labelHeight);
        layout.labelTexts[std::size_t(i)] = text;
    }
    return QRectF(blockLeft, blockTop, blockWidth, blockHeight);
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
    if (e->role) {
        lines.last() += QStringLiteral(": ") + e->role->name;
        if (!e->role->evidence.isEmpty())
            lines << e->role->evidence;
    }
    if (e->keyValueHead >= 0)
        lines << tr("key/value head %1, shared with the other heads of its group")
                     .arg(e->keyValueHead);
    const int rank = errorRank(layer, head);
    if (rank > 0)
        lines << tr("%1 rank %2 of %3 (1 = %4)")
                     .arg(m_order == HeadOrder::LowestEntropyFirst    ? tr("entropy")
                          : m_order == HeadOrder::LeastMonotonicFirst ? tr("monotonicity")
                                                                      : tr("error"))
                     .arg(rank)
                     .arg(*std::max_element(m_ranks.begin(), m_ranks.end()))
                     .arg(m_order == HeadOrder::LowestEntropyFirst    ? tr("spikiest")
                          : m_order == HeadOrder::LeastMonotonicFirst ? tr("least monotonic")
                                                                      : tr("worst"));
    lines << tr("relative Frobenius error of P: %1").arg(number(m.relFrobeniusAttention));
    lines << tr("mean row total variation: %1").arg(number(m.meanTotalVariation));
    lines << tr("max |%1 \u2212 P|: %2").arg(approxSymbol(), number(m.maxAbsError));
    lines << tr("mean KL(P \u2016 %1): %2").arg(approxSymbol(), number(m.meanKl));
    lines << tr("output relative error: %1").arg(number(m.relFrobeniusOutput));
    lines << tr("mean row entropy: P %1, %2 %3 nats")
                 .arg(number(m.properties.entropyExact), approxSymbol(),
                      number(m.properties.entropyApprox));
    lines << tr("monotonicity of %1 in q\u00b7k: %2")
                 .arg(approxSymbol(), number(m.properties.monotonicity));
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

    paintLabels(painter, layout, font, ink);
    paintCells(painter, layout, font, ink);
    paintBadges(painter, layout, font);
    paintOutlines(painter, layout, onScreen);
    paintLegend(painter, layout, metrics, ink);
}

void HeadGridView::paintLabels(QPainter& painter, const Layout& layout, const QFont& font,
                               const QColor& ink) const
{
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
                         layout.shortHeadLabels ? QString::number(head) : tr("head %1").arg(head));
    }
    painter.setFont(font);
    if (layout.shortHeadLabels)
        painter.drawText(layout.headWordRect, Qt::AlignRight | Qt::AlignBottom, tr("head"));
    // Query heads that share a key/value head (grouped-query attention): a line over the
    // columns of each group, between the head labels and the cells.
    if (!layout.headLabels.empty()) {
        std::map<int, QRectF> groups;  // key/value head -> its query heads' first-layer cells
        for (std::size_t i = 0; i < m_entries.size(); ++i)
            if (m_entries[i].keyValueHead >= 0 && m_entries[i].layer == 0)
                groups[m_entries[i].keyValueHead] |= layout.cells[i];
        painter.setPen(QPen(ink, 2));
        for (const auto& [group, span] : groups) {
            const double y = span.top() - layout.frame - 2;
            painter.drawLine(QPointF(span.left(), y), QPointF(span.right(), y));
        }
    }
}

void HeadGridView::paintCells(QPainter& painter, const Layout& layout, const QFont& font,
                              const QColor& ink) const
{
    const QFont bold = scaledFont(font, 1.0, true);
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
    if (m_order != HeadOrder::Model) {
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
}

void HeadGridView::paintBadges(QPainter& painter, const Layout& layout, const QFont& font) const
{
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
}

void HeadGridView::paintOutlines(QPainter& painter, const Layout& layout, bool onScreen) const
{
    const double f = layout.frame;
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
}

void HeadGridView::paintLegend(QPainter& painter, const Layout& layout,
                               const QFontMetricsF& metrics, const QColor& ink) const
{
    // The legend: the error bar with its range, and what the frames and the cells show.
    const double line = metrics.height();
    const QRectF bar = layout.barRect;
    if (m_scale.isValid()) {
        const int steps = int(bar.width());
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
    const auto [errorText, cellText] = legendTexts(m_showApprox, m_highlightCount);
    painter.drawText(layout.errorTextRect, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                     errorText);
    painter.drawText(layout.cellTextRect, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                     cellText);
}

std::pair<QString, QString> HeadGridView::legendTexts(bool approximation, int highlighted) const
{
    const bool approxShown = approximation && hasApproximation();
    QString errorText =
        m_scale.isValid()
            ? tr("frame colour: relative Frobenius error of P, \u2016%1 \u2212 P\u2016 / "
                 "\u2016P\u2016%2")
                  .arg(approxSymbol(), m_scale.isLogarithmic() ? tr(" (log scale)") : QString())
            : tr("frame colour: no approximation error (the exact method)");
    if (std::any_of(m_entries.begin(), m_entries.end(),
                    [](const auto& entry) { return entry.keyValueHead >= 0; }))
        errorText += tr("; a line over heads: they share a key/value head");
    QString cellText =
        approxShown
            ? tr("cells: approximation %1 of each head (rows: queries, columns: keys), viridis "
                 "from 0 to the largest entry of the head's exact P")
                  .arg(approxSymbol())
            : tr("cells: exact P of each head (rows: queries, columns: keys), viridis from 0 to "
                 "its largest entry");
    if (approximation && !hasApproximation())
        cellText += tr(" (the exact method has no %1)").arg(approxSymbol());
    if (highlighted > 0)
        cellText += tr("; white badges: rank of the %1 worst").arg(highlighted);
    return {errorText, cellText};
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

}  // namespace attnlab::ui

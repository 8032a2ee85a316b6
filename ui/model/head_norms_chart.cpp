// The Heads page's norms chart (HeadNormsChart): each head's largest query and key norms against
// the error of its approximation, one bar pair per head, in the grid's order.

#include "ui/model/head_norms_chart.h"

#include "ui/model/head_grid_style.h"
#include "ui/model/head_grid_view.h"
#include "ui/plotting/plot_style.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

using namespace heads;

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
    // The title, in its short form where the long one does not fit (in a 1280-pixel window).
    const double titleWidth = width() - area.left() - 4;
    QString title =
        m_view->order() == HeadOrder::Model
            ? tr("mean |q'| of each head, layer by layer; bar colour: its error, as the frames")
            : tr("mean |q'| of each head, worst error first; bar colour: its error, as the "
                 "frames");
    if (metrics.horizontalAdvance(title) > titleWidth)
        title = tr("mean |q'| of each head; colour: its error");
    painter.drawText(QRectF(area.left(), 2, titleWidth, line), Qt::AlignLeft | Qt::AlignVCenter,
                     metrics.elidedText(title, Qt::ElideRight, titleWidth));
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
        for (int rank = 1; rank <= int(order.size());
             rank = rank == 1 && stride > 1 ? stride : rank + stride) {
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

}  // namespace attnlab::ui

#include "ui/model/top_tokens_chart.h"

#include <QPainter>

#include <algorithm>

namespace attnlab::ui {

TopTokensChart::TopTokensChart(QWidget* parent) : QWidget(parent)
{
    setMinimumSize(280, 150);
}

QSize TopTokensChart::sizeHint() const
{
    return QSize(600, 8 * (fontMetrics().height() + 6));
}

void TopTokensChart::setTokens(QString title, std::vector<std::pair<QString, double>> exact,
                               std::vector<std::pair<QString, double>> approx)
{
    m_title = std::move(title);
    m_exact = std::move(exact);
    m_approx = std::move(approx);
    update();
}

void TopTokensChart::setHeadings(QString left, QString right)
{
    m_leftHeading = std::move(left);
    m_rightHeading = std::move(right);
    update();
}

void TopTokensChart::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), palette().base());
    painter.setPen(palette().text().color());
    const QFontMetrics metrics(font());
    const int line = metrics.height();
    painter.drawText(QRect(8, 4, width() - 16, line), Qt::AlignLeft | Qt::AlignVCenter, m_title);
    const int half = (width() - 24) / 2;
    drawColumn(painter, QRect(8, 8 + line, half, height() - 12 - line), m_leftHeading, m_exact,
               QColor(60, 60, 60));
    drawColumn(painter, QRect(16 + half, 8 + line, half, height() - 12 - line), m_rightHeading,
               m_approx, QColor(214, 96, 77));
}

void TopTokensChart::drawColumn(QPainter& painter, QRect area, const QString& heading,
                                const std::vector<std::pair<QString, double>>& tokens,
                                QColor color) const
{
    const QFontMetrics metrics(font());
    const int line = metrics.height();
    QFont bold = font();
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(palette().text().color());
    painter.drawText(QRect(area.left(), area.top(), area.width(), line), Qt::AlignLeft, heading);
    painter.setFont(font());
    if (tokens.empty()) {
        painter.drawText(QRect(area.left(), area.top() + line + 4, area.width(), line),
                         Qt::AlignLeft, tr("no distribution"));
        return;
    }
    const int labelWidth =
        std::min(area.width() / 3, metrics.horizontalAdvance(QStringLiteral("MMMMMMMMM")));
    const int valueWidth = metrics.horizontalAdvance(QStringLiteral("100.0%")) + 6;
    const int barWidth = std::max(10, area.width() - labelWidth - valueWidth - 8);
    const int rowHeight = std::clamp((area.height() - line - 4) / 5, line + 4, 2 * line);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const int y = area.top() + line + 4 + int(i) * rowHeight;
        const QRect labelRect(area.left(), y, labelWidth, line);
        painter.setPen(palette().text().color());
        painter.drawText(labelRect, Qt::AlignRight | Qt::AlignVCenter,
                         metrics.elidedText(tokens[i].first, Qt::ElideRight, labelWidth));
        const double p = std::clamp(tokens[i].second, 0.0, 1.0);
        const QRectF bar(area.left() + labelWidth + 6, y + 2, std::max(1.0, p * barWidth),
                         line - 4);
        painter.fillRect(bar, color);
        painter.drawText(QRectF(bar.right() + 4, y, valueWidth, line),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         QString::number(100.0 * p, 'f', 1) + QLatin1Char('%'));
    }
}

}  // namespace attnlab::ui

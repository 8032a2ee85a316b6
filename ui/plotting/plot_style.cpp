#include "ui/plotting/plot_style.h"

#include <QTransform>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attnlab::ui {

QColor methodColor(Method method)
{
    return QColor::fromRgb(QRgb(methodInfo(method).color));
}

QPainterPath methodMarkerPath(Method method, double radius)
{
    const double r = radius;
    QPainterPath path;
    QPolygonF polygon;
    // A plus of arms 2a wide and 2b long.
    const auto plus = [&polygon](double a, double b) {
        polygon << QPointF(-a, -b) << QPointF(a, -b) << QPointF(a, -a) << QPointF(b, -a)
                << QPointF(b, a) << QPointF(a, a) << QPointF(a, b) << QPointF(-a, b)
                << QPointF(-a, a) << QPointF(-b, a) << QPointF(-b, -a) << QPointF(-a, -a);
    };
    // A polygon of n corners, the first pointing up, alternating between two reaches (equal
    // reaches: a regular polygon; unequal: a star of n / 2 points).
    const auto regular = [&polygon](int n, double reach, double otherReach) {
        for (int k = 0; k < n; ++k) {
            const double angle = -std::numbers::pi / 2 + 2 * k * std::numbers::pi / n;
            const double rho = k % 2 == 0 ? reach : otherReach;
            polygon << QPointF(rho * std::cos(angle), rho * std::sin(angle));
        }
    };
    switch (methodInfo(method).marker) {
        case MarkerShape::Square:
            path.addRect(QRectF(-0.85 * r, -0.85 * r, 1.7 * r, 1.7 * r));
            return path;
        case MarkerShape::Circle: path.addEllipse(QPointF(0, 0), r, r); return path;
        case MarkerShape::Diamond:
            polygon << QPointF(0, -1.25 * r) << QPointF(1.05 * r, 0) << QPointF(0, 1.25 * r)
                    << QPointF(-1.05 * r, 0);
            break;
        case MarkerShape::Triangle:
            polygon << QPointF(0, -1.2 * r) << QPointF(1.1 * r, 0.8 * r)
                    << QPointF(-1.1 * r, 0.8 * r);
            break;
        case MarkerShape::TriangleDown:
            polygon << QPointF(0, 1.2 * r) << QPointF(1.1 * r, -0.8 * r)
                    << QPointF(-1.1 * r, -0.8 * r);
            break;
        case MarkerShape::Plus: plus(0.42 * r, 1.1 * r); break;
        case MarkerShape::Cross:
            plus(0.36 * r, 1.25 * r);
            polygon = QTransform().rotate(45).map(polygon);
            break;
        case MarkerShape::Star:
            for (int k = 0; k < 10; ++k) {  // a five-pointed star
                const double reach = (k % 2 == 0 ? 1.35 : 0.6) * r;
                const double angle = -std::numbers::pi / 2 + k * std::numbers::pi / 5;
                polygon << QPointF(reach * std::cos(angle), reach * std::sin(angle));
            }
            break;
        case MarkerShape::Pentagon: regular(5, 1.15 * r, 1.15 * r); break;
        case MarkerShape::Hexagon: regular(6, 1.1 * r, 1.1 * r); break;
        case MarkerShape::Bowtie:
            polygon << QPointF(-1.1 * r, -r) << QPointF(1.1 * r, r) << QPointF(1.1 * r, -r)
                    << QPointF(-1.1 * r, r);
            break;
        case MarkerShape::Hourglass:
            polygon << QPointF(-r, -1.1 * r) << QPointF(r, -1.1 * r) << QPointF(-r, 1.1 * r)
                    << QPointF(r, 1.1 * r);
            break;
        case MarkerShape::SixPointStar: regular(12, 1.35 * r, 0.7 * r); break;
        case MarkerShape::FourPointStar: regular(8, 1.45 * r, 0.55 * r); break;
        case MarkerShape::EightPointStar: regular(16, 1.4 * r, 0.75 * r); break;
        case MarkerShape::Octagon: regular(8, 1.1 * r, 1.1 * r); break;
    }
    path.addPolygon(polygon);
    path.closeSubpath();
    return path;
}

namespace {

class IntegerTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override
    {
        return std::max(1.0, std::round(QCPAxisTicker::getTickStep(range)));
    }
};

}  // namespace

QSharedPointer<QCPAxisTicker> integerTicker()
{
    return QSharedPointer<QCPAxisTicker>(new IntegerTicker);
}

int niceStep(double minimum)
{
    constexpr int kLargest = 100'000'000;
    for (int decade = 1; decade < kLargest; decade *= 10)
        for (const int factor : {1, 2, 5})
            if (factor * decade >= minimum)
                return factor * decade;
    return kLargest;
}

QCPLayoutGrid* centredLegendRow(QCustomPlot* plot)
{
    if (QCPLayout* owner = plot->legend->layout())
        owner->take(plot->legend);
    auto* row = new QCPLayoutGrid;
    row->addElement(0, 0, new QCPLayoutElement(plot));
    row->addElement(0, 1, plot->legend);
    row->addElement(0, 2, new QCPLayoutElement(plot));
    row->setColumnStretchFactors({1, 0.001, 1});
    return row;
}

void fitLegendColumns(QCPLegend* legend, int width)
{
    int entries = 0;
    int widest = 0;
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (const QCPAbstractLegendItem* item = legend->item(i)) {
            ++entries;
            widest = std::max(widest, item->minimumOuterSizeHint().width());
        }
    }
    if (entries == 0)
        return;
    const int fit = std::clamp(width / (widest + legend->columnSpacing()), 1, entries);
    const int rows = (entries + fit - 1) / fit;
    const int columns = (entries + rows - 1) / rows;
    if (legend->wrap() != columns || legend->columnCount() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    }
}

namespace {

// The pieces a line may break between: its words, with a parenthesised group ("(1, 3)") and an
// equation ("m = 64") kept whole unless the piece alone is wider than width.
QStringList lineUnits(const QString& line, const QFontMetrics& metrics, int width)
{
    QStringList groups;
    int depth = 0;
    for (const QString& word : line.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const bool glued = !groups.isEmpty() && (depth > 0 || word == QLatin1String("=") ||
                                                 groups.back().endsWith(QLatin1Char('=')));
        if (glued)
            groups.back() += QLatin1Char(' ') + word;
        else
            groups.append(word);
        depth = std::max<int>(
            0, depth + int(word.count(QLatin1Char('('))) - int(word.count(QLatin1Char(')'))));
    }
    QStringList units;
    for (const QString& group : groups)
        units += metrics.horizontalAdvance(group) > width
                     ? group.split(QLatin1Char(' '), Qt::SkipEmptyParts)
                     : QStringList{group};
    return units;
}

}  // namespace

QString wrappedText(const QString& text, const QFont& font, int width)
{
    const QFontMetrics metrics(font);
    QStringList lines;
    for (const QString& given : text.split(QLatin1Char('\n'))) {
        QString line;
        for (const QString& unit : lineUnits(given, metrics, width)) {
            const QString longer = line.isEmpty() ? unit : line + QLatin1Char(' ') + unit;
            if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
                lines.append(line);
                line = unit;
            } else {
                line = longer;
            }
        }
        if (!line.isEmpty())
            lines.append(line);
    }
    return lines.join(QLatin1Char('\n'));
}

void setWrappedText(QCPTextElement* element, const QString& text, int width)
{
    const QString wrapped = wrappedText(text, element->font(), width);
    if (element->text() != wrapped)
        element->setText(wrapped);
}

FigureHint::FigureHint(QCustomPlot* plot, const QString& text, double points)
    : QCPItemText(plot), m_hint(text)
{
    setClipToAxisRect(false);
    position->setType(QCPItemPosition::ptViewportRatio);
    position->setCoords(0.5, 0.5);
    setFont(sizedFont(plot->font(), points));
    setColor(QColor(120, 120, 120));
    setTextAlignment(Qt::AlignCenter);
    setText(text);
}

void FigureHint::draw(QCPPainter* painter)
{
    const int margin = QFontMetrics(font()).height() * 2;
    setText(
        wrappedText(m_hint, font(), std::max(margin, mParentPlot->viewport().width() - margin)));
    QCPItemText::draw(painter);
}

void applyAxisStyle(QCPAxisRect* rect, const QFont& base, double tickPoints, bool subGrid)
{
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setTickLabelFont(sizedFont(base, tickPoints));
        axis->setLabelFont(sizedFont(base, tickPoints + 1));
        axis->grid()->setPen(QPen(QColor(215, 215, 215), 0));
        axis->grid()->setSubGridPen(QPen(QColor(238, 238, 238), 0));
        axis->grid()->setSubGridVisible(subGrid);
    }
}

void setAxesVisible(QCPAxisRect* rect, bool shown)
{
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setVisible(shown);
        axis->grid()->setVisible(shown);
    }
}

QFont sizedFont(const QFont& base, double points, bool bold)
{
    QFont font = base;
    font.setPointSizeF(points);
    font.setBold(bold);
    return font;
}

}  // namespace attnlab::ui

#include "plotting/plot_style.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

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

QString wrappedText(const QString& text, const QFont& font, int width)
{
    const QFontMetrics metrics(font);
    QStringList lines;
    QString line;
    for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
        if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
            lines.append(line);
            line = word;
        } else {
            line = longer;
        }
    }
    if (!line.isEmpty())
        lines.append(line);
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
    setText(wrappedText(m_hint, font(), std::max(margin, mParentPlot->viewport().width() - margin)));
    QCPItemText::draw(painter);
}

QFont sizedFont(const QFont& base, double points, bool bold)
{
    QFont font = base;
    font.setPointSizeF(points);
    font.setBold(bold);
    return font;
}

}  // namespace attnlab::ui

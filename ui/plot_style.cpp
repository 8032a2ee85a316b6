#include "plot_style.h"

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

void setWrappedText(QCPTextElement* element, const QString& text, int width)
{
    const QFontMetrics metrics(element->font());
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
    const QString wrapped = lines.join(QLatin1Char('\n'));
    if (element->text() != wrapped)
        element->setText(wrapped);
}

QFont sizedFont(const QFont& base, double points, bool bold)
{
    QFont font = base;
    font.setPointSizeF(points);
    font.setBold(bold);
    return font;
}

}  // namespace attnlab::ui

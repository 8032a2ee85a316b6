#pragma once

// What the tests of the charts' drawing share: the geometry of tick labels and axis labels as
// QCustomPlot draws them, the heading drawn, and the WCAG contrast of two colours.

#include <QColor>
#include <QFontMetricsF>
#include <QSize>
#include <QStringList>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace attnlab::test {

// The rectangles of the tick labels drawn on axis (ticks inside its range, non-empty labels) along
// the axis, in pixels: [start, end] of each label's width (horizontal axis) or height (vertical).
inline QList<QPair<double, double>> tickLabelSpans(const QCPAxis* axis)
{
    const QFontMetricsF metrics(axis->tickLabelFont());
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const QVector<double> ticks = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    QList<QPair<double, double>> spans;
    for (int i = 0; i < std::min(ticks.size(), labels.size()); ++i) {
        if (!axis->range().contains(ticks[i]) || labels[i].isEmpty())
            continue;
        const double extent =
            horizontal ? metrics.boundingRect(labels[i]).width() : metrics.ascent();
        const double centre = axis->coordToPixel(ticks[i]);
        spans.append({centre - extent / 2, centre + extent / 2});
    }
    std::sort(spans.begin(), spans.end());
    return spans;
}

// The labels of axis whose rectangles intersect a neighbour's, "a/b" for each such pair: empty
// when every label stands apart.
inline QStringList crowdedTickLabels(const QCPAxis* axis)
{
    const QList<QPair<double, double>> spans = tickLabelSpans(axis);
    QStringList crowded;
    for (int i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].second)
            crowded << QStringLiteral("%1..%2 and %3..%4")
                           .arg(spans[i - 1].first)
                           .arg(spans[i - 1].second)
                           .arg(spans[i].first)
                           .arg(spans[i].second);
    return crowded;
}

// The extent of axis's label along the axis, in pixels: its longest line, centred on the axis
// rect as QCustomPlot draws it (x for a horizontal axis, y for a vertical one).
inline QPair<double, double> axisLabelSpan(const QCPAxis* axis)
{
    const QFontMetricsF metrics(axis->labelFont());
    double longest = 0;
    for (const QString& line : axis->label().split(QLatin1Char('\n')))
        longest = std::max(longest, metrics.horizontalAdvance(line));
    const QRect rect = axis->axisRect()->rect();
    const double centre =
        axis->orientation() == Qt::Horizontal ? rect.center().x() + 0.5 : rect.center().y() + 0.5;
    return {centre - longest / 2, centre + longest / 2};
}

// Whether axis's label lies along its axis, within its axis rect's extent (it runs neither into
// the other axis's label nor past the figure's edge).
inline bool axisLabelFitsItsAxis(const QCPAxis* axis)
{
    const QPair<double, double> span = axisLabelSpan(axis);
    const QRect rect = axis->axisRect()->rect();
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const double low = horizontal ? rect.left() : rect.top();
    const double high = horizontal ? rect.left() + rect.width() : rect.top() + rect.height();
    return span.first >= low - 1 && span.second <= high + 1;
}

// What is wrong with axis's text in a chart drawn at `size`: tick labels that overlap, or a label
// that does not lie along its axis; empty where the text fits. Each problem starts with the size
// and the axis's label.
inline QString axisTextProblem(const QCPAxis* axis, QSize size)
{
    const QString where =
        QStringLiteral("%1x%2 %3: ").arg(size.width()).arg(size.height()).arg(axis->label());
    const QStringList crowded = crowdedTickLabels(axis);
    if (!crowded.isEmpty())
        return where + QStringLiteral("tick labels overlap: ") + crowded.join(QStringLiteral(", "));
    if (!axisLabelFitsItsAxis(axis))
        return where + QStringLiteral("the label runs past its axis");
    return QString();
}

// The WCAG 2 relative luminance of an opaque colour.
inline double relativeLuminance(const QColor& color)
{
    const auto channel = [](double c) {
        return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) +
           0.0722 * channel(color.blueF());
}

// The WCAG 2 contrast ratio of two opaque colours, from 1 (the same) to 21 (black on white).
inline double contrastRatio(const QColor& a, const QColor& b)
{
    const double la = relativeLuminance(a);
    const double lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// `over` (with its alpha) painted on the opaque `under`.
inline QColor composited(const QColor& over, const QColor& under)
{
    const double a = over.alphaF();
    return QColor::fromRgbF(float(a * over.redF() + (1 - a) * under.redF()),
                            float(a * over.greenF() + (1 - a) * under.greenF()),
                            float(a * over.blueF() + (1 - a) * under.blueF()));
}

// The text of a chart's title and subtitle as drawn (empty when left out: a HeadedChart too short
// for its plots gives its heading's rows to them).
inline QString shownHeading(const QCustomPlot& chart)
{
    QString shown;
    for (QCPLayoutElement* element : chart.plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(element))
            shown += text->text();
    return shown;
}

}  // namespace attnlab::test

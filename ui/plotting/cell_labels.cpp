#include "ui/plotting/cell_labels.h"

#include "ui/plotting/plot_style.h"

#include <QFontMetricsF>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// Labels longer than this many characters are cut.
constexpr int kMaxLabelLength = 12;

// A token as a tick label: whitespace simplified, cut to kMaxLabelLength characters.
QString shortLabel(const QString& token)
{
    const QString label = token.simplified();
    if (label.size() <= kMaxLabelLength)
        return label;
    return label.left(kMaxLabelLength - 1) + QChar(0x2026);
}

}  // namespace

int steadyStep(double needed, double pitch, int current)
{
    const int step = niceStep(needed / pitch);
    if (current > 0 && step < current)
        return std::min(current, niceStep(kLabelHeadroom * needed / pitch));
    return step;
}

int steadyTickCount(double room, int current)
{
    const int count = std::clamp(int(room), 2, 5);
    if (count > current)
        return std::max(current, std::clamp(int(room / kLabelHeadroom), 2, 5));
    return count;
}

QMap<double, QString> tickLabels(const QCPRange& range, int cells, int step,
                                 const QStringList& labels)
{
    QMap<double, QString> ticks;
    const int first = std::max(0, int(std::ceil(range.lower / step)) * step);
    const int last = std::min(cells - 1, int(std::floor(range.upper)));
    const bool named = labels.size() == cells;
    for (int i = first; i <= last; i += step)
        ticks.insert(i, named ? labels.at(i) : QString::number(i));
    return ticks;
}

QStringList shortLabels(const QStringList& tokens)
{
    QStringList labels;
    labels.reserve(tokens.size());
    for (const QString& token : tokens)
        labels.append(shortLabel(token));
    return labels;
}

double widestLabel(const QStringList& labels, const QFont& font)
{
    const QFontMetricsF metrics(font);
    double widest = 0;
    for (const QString& label : labels)
        widest = std::max(widest, metrics.horizontalAdvance(label));
    return widest;
}

}  // namespace attnlab::ui

#include "ui/plotting/plot_style.h"

#include <QRegularExpression>
#include <QTransform>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

namespace attnlab::ui {

QString methodLabel(Method method)
{
    return methodInfo(method).title;
}

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

// The pieces a line may break between: its words, with a parenthesised group ("(1, 3)"), a norm
// or an absolute value ("‖P̂ − P‖", "|P̂ − P|"), an equation ("m = 64") and a ratio
// ("‖P̂ − P‖ / ‖P‖") kept whole unless the piece alone is wider than width.
QStringList lineUnits(const QString& line, const QFontMetrics& metrics, int width)
{
    constexpr QChar kNormBar(0x2016);
    const auto isOperator = [](const QString& word) {
        return word == QLatin1String("=") || word == QLatin1String("/");
    };
    QStringList groups;
    int depth = 0;
    bool inNorm = false;
    for (const QString& word : line.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const bool glued = !groups.isEmpty() && (depth > 0 || inNorm || isOperator(word) ||
                                                 groups.back().endsWith(QLatin1Char('=')) ||
                                                 groups.back().endsWith(QLatin1String(" /")));
        if (glued)
            groups.back() += QLatin1Char(' ') + word;
        else
            groups.append(word);
        // A bar opens or closes a norm outside parentheses ("KL(p ‖ q)" is no norm).
        if (depth == 0 && (word.count(kNormBar) + word.count(QLatin1Char('|'))) % 2 == 1)
            inNorm = !inNorm;
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

// `piece` broken at spaces into lines no wider than `width` (wrappedText, within a gap).
QStringList wrappedLines(const QString& piece, const QFontMetrics& metrics, int width)
{
    QStringList lines;
    QString line;
    for (const QString& unit : lineUnits(piece, metrics, width)) {
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
    return lines;
}

}  // namespace

QString wrappedText(const QString& text, const QFont& font, int width)
{
    const QFontMetrics metrics(font);
    const QString gap(2, QLatin1Char(' '));
    static const QRegularExpression gaps(QStringLiteral(" {2,}"));
    QStringList lines;
    for (const QString& given : text.split(QLatin1Char('\n'))) {
        bool lineStarted = false;
        for (const QString& piece : given.split(gaps, Qt::SkipEmptyParts)) {
            QStringList wrapped = wrappedLines(piece, metrics, width);
            if (wrapped.isEmpty())
                continue;
            if (lineStarted &&
                metrics.horizontalAdvance(lines.back() + gap + wrapped.front()) <= width)
                lines.back() += gap + wrapped.takeFirst();
            lines += wrapped;
            lineStarted = true;
        }
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

namespace {

// The pixels axis spans: its rect's width or height.
int axisLength(const QCPAxis* axis)
{
    return axis->orientation() == Qt::Horizontal ? axis->axisRect()->width()
                                                 : axis->axisRect()->height();
}

// Where the label of each tick drawn lies along axis, in pixels: [centre - half its extent,
// centre + half] (its width on a horizontal axis, its height on a vertical one, a power of ten
// with its raised exponent taller), widened by half the gap two labels keep on each side. Ticks
// outside the range and empty labels are left out (not drawn).
std::vector<std::pair<double, double>> labelSpans(const QCPAxis* axis, const QCPRange& range,
                                                  const QVector<double>& ticks,
                                                  const QVector<QString>& labels,
                                                  std::vector<int>* indices = nullptr)
{
    const QFontMetricsF metrics(axis->tickLabelFont());
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const bool powers = axis->numberFormat().contains(QLatin1Char('b'));
    const double gap = metrics.height() / 2;
    std::vector<std::pair<double, double>> spans;
    for (int i = 0; i < std::min(ticks.size(), labels.size()); ++i) {
        if (!range.contains(ticks[i]) || labels[i].isEmpty())
            continue;
        const bool raised = powers && labels[i].contains(QLatin1Char('e'));
        const double extent = horizontal ? metrics.horizontalAdvance(labels[i])
                                         : metrics.height() * (raised ? 1.4 : 1.0);
        const double centre = axis->coordToPixel(ticks[i]);
        spans.emplace_back(centre - (extent + gap) / 2, centre + (extent + gap) / 2);
        if (indices)
            indices->push_back(i);
    }
    return spans;
}

bool overlaps(const std::pair<double, double>& a, const std::pair<double, double>& b)
{
    return a.first < b.second && b.first < a.second;
}

// Whether two labels drawn on axis would come closer than their gap.
bool crowded(const QCPAxis* axis, const QCPRange& range, const QVector<double>& ticks,
             const QVector<QString>& labels)
{
    std::vector<std::pair<double, double>> spans = labelSpans(axis, range, ticks, labels);
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i)
        if (overlaps(spans[i - 1], spans[i]))
            return true;
    return false;
}

// Leaves blank each label that would crowd one kept before it: on a log axis the powers of ten
// are kept first, then the others, each from the lowest tick up.
void blankCrowdedLabels(const QCPAxis* axis, const QCPRange& range, const QVector<double>& ticks,
                        QVector<QString>& labels)
{
    std::vector<int> indices;
    const std::vector<std::pair<double, double>> spans =
        labelSpans(axis, range, ticks, labels, &indices);
    std::vector<std::size_t> order(spans.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    if (axis->scaleType() == QCPAxis::stLogarithmic) {
        const auto powerOfTen = [&](std::size_t k) {
            const double exponent = std::log10(ticks[indices[k]]);
            return std::abs(exponent - std::round(exponent)) < 1e-9;
        };
        std::stable_partition(order.begin(), order.end(), powerOfTen);
    }
    std::vector<std::pair<double, double>> kept;
    for (const std::size_t k : order) {
        if (std::any_of(kept.begin(), kept.end(),
                        [&](const auto& span) { return overlaps(span, spans[k]); }))
            labels[indices[k]].clear();
        else
            kept.push_back(spans[k]);
    }
}

// Whether two of the sub ticks (and their grid lines) would lie closer than kSubTickPixels on
// axis: a log axis squeezed to a few pixels a decade drew its sub grid as a solid band.
bool subTicksCrowded(const QCPAxis* axis, const QVector<double>& subTicks)
{
    constexpr double kSubTickPixels = 4;
    for (int i = 1; i < subTicks.size(); ++i)
        if (std::abs(axis->coordToPixel(subTicks[i]) - axis->coordToPixel(subTicks[i - 1])) <
            kSubTickPixels)
            return true;
    return false;
}

// The ticker fitAxisText puts around an axis's own: it asks the axis's ticker for tickCount()
// ticks, and for fewer while their labels crowd at the axis's length; the labels that still crowd
// are left blank, and sub ticks closer than a few pixels are left out.
class SpacedTicker : public QCPAxisTicker {
public:
    SpacedTicker(const QCPAxis* axis, QSharedPointer<QCPAxisTicker> own)
        : m_axis(axis), m_own(std::move(own))
    {
        setTickCount(m_own->tickCount());
    }

    const QSharedPointer<QCPAxisTicker>& own() const { return m_own; }
    // The axis's length when the labels were last chosen (-1 before).
    int chosenAt() const { return m_length; }

    void generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision,
                  QVector<double>& ticks, QVector<double>* subTicks,
                  QVector<QString>* tickLabels) override
    {
        m_length = axisLength(m_axis);
        int count = std::max(tickCount(), 1);
        for (; count >= 1; --count) {
            m_own->setTickCount(count);
            m_own->generate(range, locale, formatChar, precision, ticks, subTicks, tickLabels);
            if (!tickLabels || !crowded(m_axis, range, ticks, *tickLabels))
                break;
        }
        // A step so coarse that one label is left ("0" alone on a short axis from -0.4 to 0.4)
        // says nothing of the scale: the finer step, every other label left blank, instead.
        if (tickLabels && count < tickCount() &&
            labelSpans(m_axis, range, ticks, *tickLabels).size() < 2) {
            m_own->setTickCount(count + 1);
            m_own->generate(range, locale, formatChar, precision, ticks, subTicks, tickLabels);
        }
        if (tickLabels && crowded(m_axis, range, ticks, *tickLabels))
            blankCrowdedLabels(m_axis, range, ticks, *tickLabels);
        if (subTicks && subTicksCrowded(m_axis, *subTicks))
            subTicks->clear();
    }

private:
    const QCPAxis* m_axis;
    QSharedPointer<QCPAxisTicker> m_own;
    int m_length = -1;
};

constexpr char kAxisTextHooked[] = "attnlabAxisTextHooked";
// The axis label as its chart gave it, and as fitAxisText last broke it into lines.
constexpr char kGivenLabel[] = "attnlabGivenLabel";
constexpr char kShownLabel[] = "attnlabShownLabel";
// The brief form of a label (setAxisLabel), the label it is the brief form of, and the most lines
// that label may take before the brief form is drawn.
constexpr char kBriefLabel[] = "attnlabBriefLabel";
constexpr char kBriefOf[] = "attnlabBriefOf";
constexpr char kBriefPast[] = "attnlabBriefPast";

// Breaks the label of axis at spaces into lines no longer than the axis (a label set since it was
// last broken is the new one to break), or its brief form where the label takes more lines than
// setAxisLabel allowed it; true when the label drawn changed.
bool wrapAxisLabel(QCPAxis* axis)
{
    if (!axis->property(kGivenLabel).isValid() ||
        axis->label() != axis->property(kShownLabel).toString())
        axis->setProperty(kGivenLabel, axis->label());
    const QString given = axis->property(kGivenLabel).toString();
    const int length = axisLength(axis);
    QString shown = length > 0 ? wrappedText(given, axis->labelFont(), length) : given;
    if (axis->property(kBriefOf).toString() == given &&
        shown.count(QLatin1Char('\n')) >= axis->property(kBriefPast).toInt())
        shown = wrappedText(axis->property(kBriefLabel).toString(), axis->labelFont(), length);
    axis->setProperty(kShownLabel, shown);
    if (shown == axis->label())
        return false;
    axis->setLabel(shown);
    return true;
}

// Fits the axis labels to the axes' lengths after a layout, and lays plot out again while a label
// changed or an axis's tick labels were chosen at another length than it has now (at most twice:
// the labels' margins move the axes a little).
void relayoutForAxisText(QCustomPlot* plot)
{
    for (int pass = 0; pass < 2; ++pass) {
        bool stale = false;
        for (QCPAxisRect* rect : plot->axisRects()) {
            for (QCPAxis* axis : rect->axes()) {
                if (!axis->visible())
                    continue;
                stale = wrapAxisLabel(axis) || stale;
                if (const auto* spaced = dynamic_cast<const SpacedTicker*>(axis->ticker().data()))
                    stale = stale || spaced->chosenAt() != axisLength(axis);
            }
        }
        if (!stale)
            return;
        for (const auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins,
                                 QCPLayoutElement::upLayout})
            plot->plotLayout()->update(phase);
    }
}

}  // namespace

void fitAxisText(QCustomPlot* plot)
{
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes())
            if (!dynamic_cast<const SpacedTicker*>(axis->ticker().data()))
                axis->setTicker(QSharedPointer<SpacedTicker>::create(axis, axis->ticker()));
    if (!plot->property(kAxisTextHooked).toBool()) {
        plot->setProperty(kAxisTextHooked, true);
        QObject::connect(plot, &QCustomPlot::afterLayout, plot,
                         [plot] { relayoutForAxisText(plot); });
    }
}

void setAxisLabel(QCPAxis* axis, const QString& label, const QString& brief, int lines)
{
    axis->setLabel(label);
    axis->setProperty(kBriefLabel, brief);
    axis->setProperty(kBriefOf, label);
    axis->setProperty(kBriefPast, lines);
}

QSharedPointer<QCPAxisTicker> axisTicker(const QCPAxis* axis)
{
    if (const auto* spaced = dynamic_cast<const SpacedTicker*>(axis->ticker().data()))
        return spaced->own();
    return axis->ticker();
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

void paintWithTheWindow(QCustomPlot* plot)
{
    plot->setPlottingHint(QCP::phImmediateRefresh, false);
}

}  // namespace attnlab::ui

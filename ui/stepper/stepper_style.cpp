#include "ui/stepper/stepper_style.h"

#include "ui/common/reserved_height_label.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/plotting/plot_style.h"

#include <QVBoxLayout>

#include <limits>

namespace attnlab::ui::stepper {

// x with 4 significant digits, as people write it: a true minus sign, "∞" beyond the double
// range, "undefined" for NaN (never "nan" on screen).
QString displayNumber(double x)
{
    if (std::isnan(x))
        return QStringLiteral("undefined");
    if (std::isinf(x))
        return x > 0 ? QStringLiteral("\u221e") : QStringLiteral("\u2212\u221e");
    return QString::number(x, 'g', 4).replace(QLatin1Char('-'), QChar(0x2212));
}

// A short exponent form for tiny differences ("3.1e-08"), with the same care as displayNumber.
QString displayDifference(double x)
{
    if (!std::isfinite(x))
        return displayNumber(x);
    return x == 0 ? QStringLiteral("0") : QString::number(x, 'e', 1);
}

// The first kPreviewEntries entries of a row, "(0.1234, −0.5678, 0.9012, …)".
QString vectorPreview(const Eigen::Ref<const Eigen::RowVectorXd>& row)
{
    QStringList entries;
    for (Eigen::Index c = 0; c < std::min<Eigen::Index>(row.size(), kPreviewEntries); ++c)
        entries.append(displayNumber(row[c]));
    if (row.size() > kPreviewEntries)
        entries.append(QStringLiteral("\u2026"));
    return QLatin1Char('(') + entries.join(QStringLiteral(", ")) + QLatin1Char(')');
}

// values with every entry that is not finite replaced by NaN (drawn as a gap or grey cell).
MatrixD finiteOrNaN(MatrixD values)
{
    values = values.unaryExpr(
        [](double x) { return std::isfinite(x) ? x : std::numeric_limits<double>::quiet_NaN(); });
    return values;
}

// [min(0, smallest), max(0, largest)] of the finite entries of the given vectors, with 8% room
// at the ends that are not 0; [0, 1] when all are 0.
QCPRange barRange(std::initializer_list<const VectorD*> vectors)
{
    double lowest = 0;
    double highest = 0;
    for (const VectorD* values : vectors)
        for (const double x : *values)
            if (std::isfinite(x)) {
                lowest = std::min(lowest, x);
                highest = std::max(highest, x);
            }
    if (lowest == highest)
        return QCPRange(0, 1);
    const double room = 0.08 * (highest - lowest);
    return QCPRange(lowest < 0 ? lowest - room : 0.0, highest > 0 ? highest + room : 0.0);
}

// Shows values as bars at keys 0..n-1; entries that are not finite are left out.
void setBars(QCPBars* bars, const VectorD& values)
{
    QVector<double> keys;
    QVector<double> heights;
    for (Eigen::Index i = 0; i < values.size(); ++i) {
        if (std::isfinite(values[i])) {
            keys.append(double(i));
            heights.append(values[i]);
        }
    }
    bars->setData(keys, heights, true);
}

// The look of one axis rect of the bar plots: thin dark axes, a light value grid with a dark
// zero line, about four ticks on the value axis (fonts: scalePlotFonts).
void styleAxisRect(QCPAxisRect* rect, const QString& keyLabel)
{
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setTickLabelColor(kInkColor);
        axis->setLabelColor(kInkColor);
        axis->setBasePen(QPen(kFrameColor, 1));
        axis->setTickPen(QPen(kFrameColor, 1));
        axis->setSubTicks(false);
        axis->setTickLength(0, 4);
        axis->ticker()->setTickCount(4);
        axis->grid()->setPen(QPen(QColor(228, 228, 228), 0));
        axis->grid()->setZeroLinePen(QPen(kFrameColor, 1));
    }
    rect->axis(QCPAxis::atBottom)->grid()->setVisible(false);
    rect->axis(QCPAxis::atBottom)->setLabel(keyLabel);
    rect->axis(QCPAxis::atLeft)->setNumberFormat(QStringLiteral("g"));
    rect->axis(QCPAxis::atLeft)->setNumberPrecision(3);
}

// Replaces the plot's layout by axis rects stacked top to bottom, each under its title (none for
// an empty title), with their left edges aligned and whole-number ticks along the bottom (the
// keys are features, dimensions and steps), their axis text fitted to their size (fitAxisText);
// returns them.
QList<QCPAxisRect*> stackedAxisRects(QCustomPlot* plot, const QStringList& titles,
                                     const QStringList& keyLabels)
{
    plot->setBackground(Qt::white);
    plot->setAutoAddPlottableToLegend(false);
    plot->plotLayout()->clear();
    auto* group = new QCPMarginGroup(plot);
    QList<QCPAxisRect*> rects;
    QList<double> stretch;
    for (int r = 0; r < titles.size(); ++r) {
        const int row = plot->plotLayout()->rowCount();
        if (!titles[r].isEmpty()) {
            auto* title = new QCPTextElement(plot, titles[r]);
            title->setTextColor(kInkColor);
            plot->plotLayout()->addElement(row, 0, title);
            stretch << 0.001;
        }
        auto* rect = new QCPAxisRect(plot);
        plot->plotLayout()->addElement(plot->plotLayout()->rowCount(), 0, rect);
        styleAxisRect(rect, keyLabels.value(r));
        rect->axis(QCPAxis::atBottom)->setTicker(integerTicker());  // features, dims, steps
        rect->setMarginGroup(QCP::msLeft | QCP::msRight, group);
        rects.append(rect);
        stretch << 1.0;
    }
    plot->plotLayout()->setRowStretchFactors(stretch);
    plot->plotLayout()->setRowSpacing(0);
    fitAxisText(plot);  // the plots are small, and their fonts grow with the page
    return rects;
}

// Bars in rect's axes, outlined in their own colour.
QCPBars* addBars(QCPAxisRect* rect, const QString& name, const QColor& color, double width)
{
    auto* bars = new QCPBars(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    bars->setName(name);
    bars->setPen(QPen(color, 0));  // a bar narrower than a pixel still shows as a line
    bars->setBrush(color);
    bars->setWidth(width);
    return bars;
}

// Puts a legend of `entries` in a row of its own above `rect` (below its title), centred, so
// that it never covers a bar; the plot's axis rects keep all the stretch.
void addLegend(QCustomPlot* plot, QCPAxisRect* rect, const QList<QCPAbstractPlottable*>& entries)
{
    QCPLayoutGrid* layout = plot->plotLayout();
    int row = 0;
    while (row < layout->rowCount() && layout->element(row, 0) != rect)
        ++row;
    layout->insertRow(row);
    auto* centred = new QCPLayoutGrid;
    layout->addElement(row, 0, centred);
    auto* legend = new QCPLegend;
    centred->addElement(0, 0, new QCPLayoutElement(plot));
    centred->addElement(0, 1, legend);
    centred->addElement(0, 2, new QCPLayoutElement(plot));
    centred->setColumnStretchFactors({1, 0.001, 1});
    legend->setLayer(QStringLiteral("legend"));
    legend->setBrush(Qt::NoBrush);
    legend->setBorderPen(Qt::NoPen);
    legend->setIconSize(18, 12);
    legend->setColumnSpacing(14);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setMargins(QMargins(2, 0, 2, 0));
    for (QCPAbstractPlottable* plottable : entries)
        plottable->addToLegend(legend);
    plot->legend = legend;  // addToLegend() and removeFromLegend() act on it
    QList<double> stretch;
    for (int r = 0; r < layout->rowCount(); ++r)
        stretch.append(qobject_cast<QCPAxisRect*>(layout->element(r, 0)) ? 1.0 : 0.001);
    layout->setRowStretchFactors(stretch);
}

double textScaleFor(QSize size)
{
    const double fit = std::min(size.width() / double(kDesignSize.width()),
                                size.height() / double(kDesignSize.height()));
    return std::clamp(std::round(fit / kTextScaleStep) * kTextScaleStep, kMinTextScale,
                      kMaxTextScale);
}

void scaleMarkedFonts(QWidget& root, double scale)
{
    QList<QWidget*> widgets = root.findChildren<QWidget*>();
    widgets.prepend(&root);
    for (QWidget* widget : widgets) {
        const QVariant points = widget->property(kPointsProperty);
        if (points.isValid())
            widget->setFont(sizedFont(widget->font(), points.toDouble() * scale,
                                      widget->property(kBoldProperty).toBool()));
    }
}

// The fonts of a plot's axes, titles, legends and colour scales at `scale` times the sizes the
// page is designed with (kTickPoints, ...); HeatmapView's own title is not used here.
void scalePlotFonts(QCustomPlot* plot, double scale)
{
    // A named family rather than an alias such as "Sans Serif", which SVG viewers do not know.
    const QFont base(QFontInfo(plot->font()).family());
    const QFont tickFont = sizedFont(base, kTickPoints * scale);
    const QFont labelFont = sizedFont(base, kAxisLabelPoints * scale);
    QList<QCPAxis*> axes;
    for (QCPAxisRect* rect : plot->axisRects())
        axes += rect->axes();
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* title = qobject_cast<QCPTextElement*>(element))
            title->setFont(sizedFont(base, kPlotTitlePoints * scale, true));
        else if (auto* legend = qobject_cast<QCPLegend*>(element))
            legend->setFont(tickFont);
        else if (auto* colorScale = qobject_cast<QCPColorScale*>(element))
            axes.append(colorScale->axis());
    }
    for (QCPAxis* axis : axes) {
        axis->setTickLabelFont(tickFont);
        axis->setLabelFont(labelFont);
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

// Outlines cells of `view` (row, column), reusing the rectangles in `marks` (two per cell: a
// dark outline with a white one inside, visible on every colour of the map) and hiding the rest.
// An outline is at least kMarkPixels wide, so that it shows on cells of a few pixels.
void markCells(HeatmapView* view, std::vector<QCPItemRect*>& marks,
               const std::vector<std::pair<int, int>>& cells)
{
    while (marks.size() < 2 * cells.size()) {
        for (const bool outer : {true, false}) {
            auto* mark = new QCPItemRect(view);
            mark->setLayer(QStringLiteral("overlay"));
            mark->setPen(outer ? QPen(QColor(0, 0, 0, 230), 3) : QPen(Qt::white, 1.5));
            mark->setBrush(Qt::NoBrush);
            mark->setClipToAxisRect(true);
            marks.push_back(mark);
        }
    }
    const double cellPixels =
        std::max(1e-3, std::abs(view->xAxis->coordToPixel(1) - view->xAxis->coordToPixel(0)));
    const double outerPad = std::max(0.1, (kMarkPixels / cellPixels - 1) / 2);
    const double innerPad = outerPad - 2.0 / cellPixels;
    for (std::size_t m = 0; m < marks.size(); ++m) {
        const std::size_t cell = m / 2;
        marks[m]->setVisible(cell < cells.size());
        if (cell >= cells.size())
            continue;
        const auto [row, col] = cells[cell];
        const double pad = m % 2 == 0 ? outerPad : innerPad;
        marks[m]->topLeft->setCoords(col - 0.5 - pad, row - 0.5 - pad);
        marks[m]->bottomRight->setCoords(col + 0.5 + pad, row + 0.5 + pad);
    }
}

// The cells of `change` of largest magnitude: at most kMarkedCells, each at least kMarkedShare of
// the largest, largest first.
std::vector<std::pair<int, int>> largestCells(const MatrixD& change)
{
    const double largest = largestMagnitude(change);
    std::vector<Eigen::Index> order;
    for (Eigen::Index i = 0; i < change.size(); ++i)
        if (largest > 0 && std::abs(change.data()[i]) >= kMarkedShare * largest)
            order.push_back(i);
    const std::size_t kept = std::min<std::size_t>(order.size(), kMarkedCells);
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(kept), order.end(),
                      [&](Eigen::Index a, Eigen::Index b) {
                          return std::abs(change.data()[a]) > std::abs(change.data()[b]);
                      });
    std::vector<std::pair<int, int>> cells;
    for (std::size_t k = 0; k < kept; ++k)
        cells.emplace_back(int(order[k] / change.cols()), int(order[k] % change.cols()));
    return cells;
}

// Gives widget a font of `points` (times the page's text scale, see applyTextScale).
void setTextPoints(QWidget* widget, double points, bool bold)
{
    widget->setProperty(kPointsProperty, points);
    widget->setProperty(kBoldProperty, bold);
    widget->setFont(sizedFont(widget->font(), points, bold));
}

namespace {

// label given a font of `points` and the text colour.
template <typename Label>
Label* styled(Label* label, double points, bool bold, const QColor& color)
{
    setTextPoints(label, points, bold);
    QPalette palette = label->palette();
    palette.setColor(QPalette::WindowText, color);
    label->setPalette(palette);
    return label;
}

}  // namespace

// A label of `points` in the given colour; rich text when the text has tags.
QLabel* makeLabel(const QString& text, double points, bool bold, const QColor& color)
{
    return styled(new QLabel(text), points, bold, color);
}

// A word-wrapped line of `points` that keeps the height of the reserved text it is given.
ReservedHeightLabel* makeReservedLine(double points)
{
    return styled(new ReservedHeightLabel, points, false, kInkColor);
}

// A panel of the frame: a large title (rich text) over content.
QWidget* makePanel(QLabel* title, QWidget* content)
{
    auto* panel = new QWidget;
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    title->setAlignment(Qt::AlignHCenter);
    title->setWordWrap(true);
    layout->addWidget(title);
    layout->addWidget(content, 1);
    return panel;
}

}  // namespace attnlab::ui::stepper

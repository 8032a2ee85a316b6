#include "ui/experiment/row_comparison_view.h"

#include "ui/plotting/plot_style.h"

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// Okabe-Ito-like pair: a dark blue and an orange differ in hue for every common colour-vision
// deficiency and in lightness too, so they also read on a washed-out projector or in grey.
const QColor kExactColor(0x1f, 0x4e, 0x8c);
const QColor kApproxColor(0xe6, 0x8a, 0x00);

constexpr double kLabelAngle = -45.0;  // degrees; the label's right end sits under its key
constexpr int kMaxLabelCharacters = 14;

}  // namespace

RowComparisonView::RowComparisonView(QWidget* parent)
    : QCustomPlot(parent), m_keyTicker(new QCPAxisTickerText)
{
    setBackground(Qt::white);
    paintWithTheWindow(this);

    plotLayout()->insertRow(0);
    m_title = new QCPTextElement(this, QString(), sizedFont(font(), 13, true));
    plotLayout()->addElement(0, 0, m_title);

    // The legend sits centred under the title, between two empty stretching cells, so that it
    // never covers a bar.
    plotLayout()->insertRow(1);
    plotLayout()->addElement(1, 0, centredLegendRow(this));
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setFont(sizedFont(font(), 10.5));
    legend->setIconSize(22, 12);
    legend->setColumnSpacing(18);
    legend->setVisible(true);
    plotLayout()->setRowStretchFactors({0.001, 0.001, 1});

    const QFont tickFont = sizedFont(font(), 10);
    const QFont labelFont = sizedFont(font(), 11);
    xAxis->setTicker(m_keyTicker);
    xAxis->setTickLabelFont(tickFont);
    xAxis->setLabelFont(labelFont);
    xAxis->setSubTicks(false);
    xAxis->setTickLengthIn(0);
    xAxis->setTickLengthOut(4);
    xAxis->grid()->setVisible(false);
    yAxis->setTickLabelFont(tickFont);
    yAxis->setLabelFont(labelFont);
    yAxis->setLabel(QStringLiteral("attention weight"));
    yAxis->setNumberFormat(QStringLiteral("gb"));
    yAxis->grid()->setPen(QPen(QColor(225, 225, 225), 0));
    yAxis->grid()->setZeroLinePen(QPen(QColor(90, 90, 90), 1));

    m_barsGroup = new QCPBarsGroup(this);
    m_barsGroup->setSpacingType(QCPBarsGroup::stAbsolute);
    m_barsGroup->setSpacing(1);
    const auto makeBars = [&](const QString& name, const QColor& color) {
        auto* bars = new QCPBars(xAxis, yAxis);
        bars->setName(name);
        bars->setPen(Qt::NoPen);
        bars->setBrush(color);
        bars->setWidth(0.4);
        bars->setBarsGroup(m_barsGroup);
        return bars;
    };
    m_exactBars = makeBars(QStringLiteral("exact P"), kExactColor);
    m_approxBars = makeBars(QStringLiteral("approximation P\u0302"), kApproxColor);

    // Long rows: step lines, the exact one drawn over the approximation. Pens 1 px wide and no
    // fill keep a replot of 2000 keys near 10 ms (a 1.5 px pen or a fill under the steps costs
    // about 400 ms in the raster engine).
    m_approxGraph = addGraph();
    m_approxGraph->setName(QStringLiteral("approximation P\u0302"));
    m_approxGraph->setLineStyle(QCPGraph::lsStepCenter);
    m_approxGraph->setPen(QPen(kApproxColor, 1));
    m_exactGraph = addGraph();
    m_exactGraph->setName(QStringLiteral("exact P"));
    m_exactGraph->setLineStyle(QCPGraph::lsStepCenter);
    m_exactGraph->setPen(QPen(kExactColor, 1));

    m_hint = new FigureHint(
        this, QStringLiteral("Click a query row in a heatmap to compare its rows"), 12);

    clear();
}

void RowComparisonView::setRows(const VectorD& exact, const VectorD& approx,
                                const QStringList& keyLabels, const QString& title,
                                const QString& approxName)
{
    for (QCPAbstractPlottable* plottable :
         std::initializer_list<QCPAbstractPlottable*>{m_approxBars, m_approxGraph})
        plottable->setName(approxName + QStringLiteral(" P\u0302"));
    Q_ASSERT(exact.size() == approx.size());
    const int keys = int(exact.size());
    QVector<double> positions(keys);
    QVector<double> exactValues(keys);
    QVector<double> approxValues(keys);
    double lowest = 0;
    double highest = 0;
    for (int j = 0; j < keys; ++j) {
        positions[j] = j;
        exactValues[j] = exact[j];
        approxValues[j] = approx[j];
        for (const double value : {exact[j], approx[j]}) {
            if (std::isfinite(value)) {
                lowest = std::min(lowest, value);
                highest = std::max(highest, value);
            }
        }
    }
    showAsBars(keys <= kMaxBarKeys);
    if (m_bars) {
        m_exactBars->setData(positions, exactValues, true);
        m_approxBars->setData(positions, approxValues, true);
    } else {
        m_exactGraph->setData(positions, exactValues, true);
        m_approxGraph->setData(positions, approxValues, true);
    }

    m_keyLabels.clear();
    for (int j = 0; j < keys; ++j)
        m_keyLabels.append(keyLabels.value(j, QString::number(j)));
    m_title->setText(title);
    m_hint->setVisible(false);
    xAxis->setVisible(true);
    yAxis->setVisible(true);
    legend->setVisible(true);

    // Bars stand on the x axis unless some weight is negative; then the zero line shows.
    const double span = highest > lowest ? highest - lowest : 1.0;
    const double padding = 0.06 * span;
    xAxis->setRange(-0.6, keys - 0.4);
    yAxis->setRange(lowest < 0 ? lowest - padding : 0.0, highest + padding);
    replot(rpQueuedReplot);
    setHasRows(true);
}

void RowComparisonView::clear()
{
    for (QCPBars* bars : {m_exactBars, m_approxBars})
        bars->data()->clear();
    for (QCPGraph* graph : {m_exactGraph, m_approxGraph})
        graph->data()->clear();
    m_keyLabels.clear();
    m_keyTicker->clear();
    m_labelStride = 1;
    m_title->setText(QString());
    xAxis->setVisible(false);
    yAxis->setVisible(false);
    legend->setVisible(false);
    m_hint->setVisible(true);
    replot(rpQueuedReplot);
    setHasRows(false);
}

void RowComparisonView::setHasRows(bool hasRows)
{
    if (hasRows == m_hasRows)
        return;
    m_hasRows = hasRows;
    emit hasRowsChanged(hasRows);
}

QCPAbstractPlottable* RowComparisonView::exactPlottable() const
{
    return m_bars ? static_cast<QCPAbstractPlottable*>(m_exactBars) : m_exactGraph;
}

QCPAbstractPlottable* RowComparisonView::approxPlottable() const
{
    return m_bars ? static_cast<QCPAbstractPlottable*>(m_approxBars) : m_approxGraph;
}

void RowComparisonView::updateLayout()
{
    updateKeyLabels();
    // As many value ticks as the axis' height leaves room for, so that a short strip (the rows
    // below a row of maps) does not stack its tick labels on one another.
    const double lineSpacing = QFontMetricsF(yAxis->tickLabelFont()).height();
    const int ticks = std::clamp(int(axisRect()->height() / (2.5 * lineSpacing)), 2, 5);
    if (yAxis->ticker()->tickCount() != ticks) {
        yAxis->ticker()->setTickCount(ticks);
        QCustomPlot::updateLayout();
    }
}

void RowComparisonView::showAsBars(bool bars)
{
    m_bars = bars;
    m_exactBars->setVisible(bars);
    m_approxBars->setVisible(bars);
    m_exactGraph->setVisible(!bars);
    m_approxGraph->setVisible(!bars);
    legend->clearItems();
    exactPlottable()->addToLegend();
    approxPlottable()->addToLegend();
}

void RowComparisonView::updateKeyLabels()
{
    m_keyTicker->clear();
    const int keys = int(m_keyLabels.size());
    if (keys == 0) {
        axisRect()->setMinimumMargins(QMargins());
        QCustomPlot::updateLayout();
        return;
    }
    const QFontMetricsF metrics(xAxis->tickLabelFont());
    const double maxWidth = metrics.averageCharWidth() * kMaxLabelCharacters;
    QStringList texts;
    QVector<double> widths;
    for (const QString& label : m_keyLabels) {
        texts.append(metrics.elidedText(label.simplified(), Qt::ElideRight, maxWidth));
        widths.append(metrics.horizontalAdvance(texts.back()));
    }
    const double gap = 0.6 * metrics.height();
    const double radians = qDegreesToRadians(std::abs(kLabelAngle));

    // The keys' pitch depends on the margins the labels need, so settle both in a few passes;
    // the stride always matches the layout the last pass made.
    QMargins margins(0, 0, 0, 0);
    double rotation = 0;
    for (int pass = 0;; ++pass) {
        axisRect()->setMinimumMargins(margins);
        QCustomPlot::updateLayout();
        const double pitch = std::abs(xAxis->coordToPixel(1) - xAxis->coordToPixel(0));
        bool upright = true;
        for (int j = 0; j + 1 < keys && upright; ++j)
            upright = pitch >= (widths[j] + widths[j + 1]) / 2 + gap;
        m_labelStride = 1;
        if (!upright) {
            // Rotated labels are parallel strips: neighbours clear each other when the distance
            // between their baselines, pitch * stride * sin(angle), exceeds the text height.
            const int rotatedStride =
                niceStep((metrics.height() + gap) / (pitch * std::sin(radians)));
            // Once labels are thinned anyway, upright ones read better if they need not be
            // thinned much further (short labels, such as indices).
            const double widest = *std::max_element(widths.begin(), widths.end());
            const int uprightStride = niceStep((widest + gap) / pitch);
            upright = rotatedStride > 1 && uprightStride <= 2 * rotatedStride;
            m_labelStride = upright ? uprightStride : rotatedStride;
        }
        rotation = upright ? 0.0 : kLabelAngle;

        // Labels reach out of the axis rect at the ends; widen its margins to keep them inside.
        const double left = axisRect()->left();
        const double right = axisRect()->right();
        double overLeft = 0;
        double overRight = 0;
        for (int j = 0; j < keys; j += m_labelStride) {
            const double x = xAxis->coordToPixel(j);
            const double reachLeft =
                upright ? widths[j] / 2 : widths[j] * std::cos(radians) + metrics.height();
            const double reachRight = upright ? widths[j] / 2 : metrics.height();
            overLeft = std::max(overLeft, reachLeft - (x - left));
            overRight = std::max(overRight, reachRight - (right - x));
        }
        const QMargins needed(int(std::ceil(overLeft)) + 4, 0, int(std::ceil(overRight)) + 4, 0);
        const bool inside = needed.left() <= axisRect()->margins().left() &&
                            needed.right() <= axisRect()->margins().right();
        if (inside || pass == 3)
            break;
        margins = QMargins(std::max(needed.left(), margins.left()), 0,
                           std::max(needed.right(), margins.right()), 0);
    }

    for (int j = 0; j < keys; j += m_labelStride)
        m_keyTicker->addTick(j, texts[j]);
    xAxis->setTickLabelRotation(rotation);
    xAxis->setLabel(m_labelStride > 1
                        ? QStringLiteral("key (labels every %1 keys)").arg(m_labelStride)
                        : QStringLiteral("key"));
    QCustomPlot::updateLayout();
}

}  // namespace attnlab::ui

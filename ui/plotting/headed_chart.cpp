#include "ui/plotting/headed_chart.h"

#include "ui/plotting/plot_style.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace attnlab::ui {

namespace {

// An entry of a HeadedChart's legend whose name breaks at spaces onto lines of at most
// textWidth pixels (0: one line, as QCustomPlot draws it). The plottable keeps its whole name:
// the wrapped one stands in for it only while QCustomPlot measures and draws the entry.
class WrappedLegendItem final : public QCPPlottableLegendItem {
public:
    using QCPPlottableLegendItem::QCPPlottableLegendItem;

    void setTextWidth(int width) { m_textWidth = width; }

protected:
    QSize minimumOuterSizeHint() const override
    {
        const ShownName shown(mPlottable, wrappedName());
        return QCPPlottableLegendItem::minimumOuterSizeHint();
    }

    void draw(QCPPainter* painter) override
    {
        const ShownName shown(mPlottable, wrappedName());
        QCPPlottableLegendItem::draw(painter);
    }

private:
    // The plottable named `shown` for as long as it lives, then its own name again.
    class ShownName {
    public:
        ShownName(QCPAbstractPlottable* plottable, const QString& shown)
            : m_plottable(plottable), m_name(plottable->name())
        {
            plottable->setName(shown);
        }
        ~ShownName() { m_plottable->setName(m_name); }
        ShownName(const ShownName&) = delete;
        ShownName& operator=(const ShownName&) = delete;

    private:
        QCPAbstractPlottable* m_plottable;
        QString m_name;
    };

    QString wrappedName() const
    {
        const QString& name = mPlottable->name();
        if (m_textWidth <= 0 || QFontMetrics(getFont()).horizontalAdvance(name) <= m_textWidth)
            return name;
        return wrappedText(name, getFont(), m_textWidth);
    }

    int m_textWidth = 0;
};

}  // namespace

HeadedChart::HeadedChart(QWidget* parent, double legendPoints, int iconWidth, double titlePoints)
    : QCustomPlot(parent),
      m_title(new QCPTextElement(this, QString(), sizedFont(font(), titlePoints, true))),
      m_subtitle(new QCPTextElement(this, QString(), sizedFont(font(), titlePoints - 3)))
{
    paintWithTheWindow(this);
    m_subtitle->setTextColor(QColor(70, 70, 70));
    // The margins updateLayout sets, none but above plots without their heading (an automatic
    // margin never shrinks below the last one set).
    plotLayout()->setAutoMargins(QCP::msNone);
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setFont(sizedFont(font(), legendPoints));
    legend->setIconSize(iconWidth, 14);
    legend->setColumnSpacing(22);
    legend->setRowSpacing(0);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    setBackground(Qt::white);
    setAutoAddPlottableToLegend(false);
}

void HeadedChart::arrangeUnderHeading(QCPLayoutElement* plots)
{
    QCPLayoutGrid* layout = plotLayout();
    QCPLayoutGrid* legendRow = centredLegendRow(this);
    // First: the default axis rect leaves the top-left cell it starts in, which the title takes.
    layout->addElement(2, 0, plots);
    layout->addElement(0, 0, m_title);
    layout->addElement(1, 0, m_subtitle);
    layout->addElement(3, 0, legendRow);
    layout->setRowStretchFactors({0.001, 0.001, 1, 0.001});
    layout->setRowSpacing(2);
}

void HeadedChart::addToLegend(QCPAbstractPlottable* plottable)
{
    if (!legend->hasItemWithPlottable(plottable))
        legend->addItem(new WrappedLegendItem(legend, plottable));
}

void HeadedChart::clearHeading()
{
    m_titleText.clear();
    m_subtitleText.clear();
    m_title->setText(QString());
    m_subtitle->setText(QString());
}

void HeadedChart::setHeadingVisible(bool shown)
{
    m_headingShown = shown;
    const QList<QCPLayoutElement*> placed = plotLayout()->elements(false);
    m_title->setVisible(shown && placed.contains(m_title));
    m_subtitle->setVisible(shown && placed.contains(m_subtitle));
}

void HeadedChart::setSubtitleRowShown(bool shown)
{
    m_subtitleRowShown = shown;
    placeHeading(true, shown);
}

void HeadedChart::placeHeading(bool title, bool subtitle)
{
    QCPLayoutGrid* layout = plotLayout();
    const QList<QCPLayoutElement*> placed = layout->elements(false);
    if (placed.contains(m_title) == title && placed.contains(m_subtitle) == subtitle)
        return;
    // An element taken out of the layout still draws where it was: hidden too.
    for (QCPTextElement* element : {m_title, m_subtitle}) {
        if (placed.contains(element))
            layout->take(element);
        element->setVisible(false);
    }
    layout->simplify();
    int row = 0;
    const std::pair<QCPTextElement*, bool> rows[] = {{m_title, title}, {m_subtitle, subtitle}};
    for (const auto& [element, wanted] : rows) {
        if (!wanted)
            continue;
        layout->insertRow(row);
        layout->addElement(row++, 0, element);
        element->setVisible(m_headingShown);
    }
    QList<double> stretch(layout->rowCount(), 0.001);
    stretch[row] = 1;  // the plots' row
    layout->setRowStretchFactors(stretch);
}

void HeadedChart::updateLayout()
{
    fitAxisText(this);
    const int width = viewport().width();
    fitLegend(width - 40);
    setWrappedText(m_title, m_titleText, width - 16);
    setWrappedText(m_subtitle, m_subtitleText, width - 16);
    placeHeading(true, m_subtitleRowShown);
    plotLayout()->setMargins(QMargins());
    QCustomPlot::updateLayout();
    if (plotsSqueezed()) {
        placeHeading(false, false);
        // Without the heading the plots reach the figure's top edge: room above them for the
        // upper half of a top tick label, which was cut off there and left a log axis one label
        // (presented on a 720-line projector). A power of ten, its exponent raised, is 1.4 lines.
        int room = 0;
        for (const QCPAxisRect* rect : axisRects()) {
            const QFontMetricsF metrics(rect->axis(QCPAxis::atLeft)->tickLabelFont());
            room = std::max(room, int(std::ceil(0.7 * metrics.height())));
        }
        plotLayout()->setMargins(QMargins(0, room, 0, 0));
        QCustomPlot::updateLayout();
    }
}

void HeadedChart::fitLegend(int width)
{
    std::vector<WrappedLegendItem*> entries;
    int widest = 0;
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (auto* entry = dynamic_cast<WrappedLegendItem*>(legend->item(i))) {
            entry->setTextWidth(0);
            widest = std::max(
                widest, static_cast<QCPLayoutElement*>(entry)->minimumOuterSizeHint().width());
            entries.push_back(entry);
        }
    }
    if (widest > width) {
        const QMargins margins = entries.front()->margins();
        const int textWidth = width - legend->iconSize().width() - legend->iconTextPadding() -
                              margins.left() - margins.right();
        for (WrappedLegendItem* entry : entries)
            entry->setTextWidth(std::max(textWidth, 1));
    }
    fitLegendColumns(legend, width);
}

bool HeadedChart::plotsSqueezed() const
{
    // Four lines of tick labels: a log axis over several decades keeps two labels apart.
    constexpr int kLeastLines = 4;
    for (const QCPAxisRect* rect : axisRects()) {
        const QCPAxis* left = rect->axis(QCPAxis::atLeft);
        if (rect->visible() && left->visible() &&
            rect->height() < kLeastLines * QFontMetrics(left->tickLabelFont()).height())
            return true;
    }
    return false;
}

}  // namespace attnlab::ui

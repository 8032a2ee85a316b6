#include "ui/plotting/headed_chart.h"

#include "ui/plotting/plot_style.h"

namespace attnlab::ui {

HeadedChart::HeadedChart(QWidget* parent, double legendPoints, int iconWidth, double titlePoints)
    : QCustomPlot(parent),
      m_title(new QCPTextElement(this, QString(), sizedFont(font(), titlePoints, true))),
      m_subtitle(new QCPTextElement(this, QString(), sizedFont(font(), titlePoints - 3)))
{
    m_subtitle->setTextColor(QColor(70, 70, 70));
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

void HeadedChart::clearHeading()
{
    m_titleText.clear();
    m_subtitleText.clear();
    m_title->setText(QString());
    m_subtitle->setText(QString());
}

void HeadedChart::setHeadingVisible(bool shown)
{
    m_title->setVisible(shown);
    m_subtitle->setVisible(shown && m_subtitleRowShown);
}

void HeadedChart::setSubtitleRowShown(bool shown)
{
    if (shown == m_subtitleRowShown)
        return;
    QCPLayoutGrid* layout = plotLayout();
    if (shown) {
        layout->insertRow(1);
        layout->addElement(1, 0, m_subtitle);
    } else {  // an element taken out of the layout still draws where it was: hidden too
        layout->take(m_subtitle);
        layout->simplify();
    }
    m_subtitle->setVisible(shown && m_title->visible());
    QList<double> stretch(layout->rowCount(), 0.001);
    stretch[shown ? 2 : 1] = 1;  // the plots' row
    layout->setRowStretchFactors(stretch);
    m_subtitleRowShown = shown;
}

void HeadedChart::updateLayout()
{
    fitAxisText(this);
    const int width = viewport().width();
    setWrappedText(m_title, m_titleText, width - 16);
    setWrappedText(m_subtitle, m_subtitleText, width - 16);
    fitLegendColumns(legend, width - 40);
    QCustomPlot::updateLayout();
}

}  // namespace attnlab::ui

#include "ui/plotting/chart_heading.h"

#include "ui/plotting/plot_style.h"

namespace attnlab::ui {

ChartHeading::ChartHeading(QCustomPlot* plot, double legendPoints, int iconWidth,
                           double titlePoints)
    : m_plot(plot),
      m_title(new QCPTextElement(plot, QString(), sizedFont(plot->font(), titlePoints, true))),
      m_subtitle(new QCPTextElement(plot, QString(), sizedFont(plot->font(), titlePoints - 3)))
{
    m_subtitle->setTextColor(QColor(70, 70, 70));
    QCPLegend* legend = plot->legend;
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setFont(sizedFont(plot->font(), legendPoints));
    legend->setIconSize(iconWidth, 14);
    legend->setColumnSpacing(22);
    legend->setRowSpacing(0);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
}

void ChartHeading::arrange(QCPLayoutElement* plots)
{
    QCPLayoutGrid* layout = m_plot->plotLayout();
    QCPLayoutGrid* legendRow = centredLegendRow(m_plot);
    layout->addElement(0, 0, m_title);
    layout->addElement(1, 0, m_subtitle);
    layout->addElement(2, 0, plots);
    layout->addElement(3, 0, legendRow);
    layout->setRowStretchFactors({0.001, 0.001, 1, 0.001});
    layout->setRowSpacing(2);
}

void ChartHeading::clear()
{
    m_titleText.clear();
    m_subtitleText.clear();
    m_title->setText(QString());
    m_subtitle->setText(QString());
}

void ChartHeading::setVisible(bool shown)
{
    m_title->setVisible(shown);
    m_subtitle->setVisible(shown && m_subtitleRowShown);
}

void ChartHeading::setSubtitleRowShown(bool shown)
{
    if (shown == m_subtitleRowShown)
        return;
    QCPLayoutGrid* layout = m_plot->plotLayout();
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

void ChartHeading::fitWidth()
{
    const int width = m_plot->viewport().width();
    setWrappedText(m_title, m_titleText, width - 16);
    setWrappedText(m_subtitle, m_subtitleText, width - 16);
    fitLegendColumns(m_plot->legend, width - 40);
}

}  // namespace attnlab::ui

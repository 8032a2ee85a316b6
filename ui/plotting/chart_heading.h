#pragma once

#include <QString>
#include <qcustomplot.h>

namespace attnlab::ui {

// What the sweep, model-eval, generation and error-distribution charts share around their plots:
// a title (13 pt, bold) and a subtitle (10 pt, grey) above them and the main legend centred in a
// row below them, each wrapped to the figure's width at every layout pass (on screen, in
// presentation mode and in exports).
class ChartHeading {
public:
    // Makes the titles of plot and styles its legend: no frame or fill, legendPoints, icons
    // iconWidth x 14 pixels, columns 22 pixels apart, filled a column at a time. The title is
    // titlePoints (13, or smaller for a chart inside a page), the subtitle 3 points less.
    ChartHeading(QCustomPlot* plot, double legendPoints, int iconWidth, double titlePoints = 13);

    // Lays out plot's main layout in four rows: the title, the subtitle, `plots` (an axis rect or
    // a grid of them, which takes the height) and the legend row.
    void arrange(QCPLayoutElement* plots);

    const QString& title() const { return m_titleText; }
    const QString& subtitle() const { return m_subtitleText; }
    void setTitle(const QString& text) { m_titleText = text; }
    void setSubtitle(const QString& text) { m_subtitleText = text; }
    // No title and subtitle, on screen too (before the next layout pass).
    void clear();
    void setVisible(bool shown);
    // Gives the subtitle its row, or takes the row out and hides the subtitle (a compact chart:
    // even an empty subtitle would take a line). After arrange().
    void setSubtitleRowShown(bool shown);

    // Breaks the titles at spaces to fit the figure's width and gives the legend as many columns
    // as fit: call it from the chart's updateLayout, before QCustomPlot's.
    void fitWidth();

private:
    QCustomPlot* m_plot;
    QCPTextElement* m_title;  // shows m_titleText, wrapped to the width
    QCPTextElement* m_subtitle;
    QString m_titleText;
    QString m_subtitleText;
    bool m_subtitleRowShown = true;
};

}  // namespace attnlab::ui

#pragma once

#include <QString>
#include <qcustomplot.h>

namespace attnlab::ui {

// A chart on white whose plots stand under a title (13 pt, bold) and a subtitle (10 pt, grey),
// with the main legend centred in a row below them; the titles are wrapped and the legend given
// as many columns as fit the figure's width at every layout pass (on screen, in presentation
// mode and in exports), its entries wrapped too where one is wider than the figure.
// Plottables join the legend only when the chart adds them (addToLegend). The sweep,
// model-eval, generation and error-distribution charts derive from it.
class HeadedChart : public QCustomPlot {
    Q_OBJECT

public:
    // The title above the plots and the line under it, as set (before wrapping).
    const QString& title() const { return m_titleText; }
    const QString& subtitle() const { return m_subtitleText; }

protected:
    // Makes the titles and styles the legend: no frame or fill, legendPoints, icons
    // iconWidth x 14 pixels, columns 22 pixels apart, filled a column at a time. The title is
    // titlePoints (13, or smaller for a chart inside a page), the subtitle 3 points less.
    HeadedChart(QWidget* parent, double legendPoints, int iconWidth, double titlePoints = 13);

    // Lays out the main layout in four rows: the title, the subtitle, `plots` (the default axis
    // rect, or a grid holding it and others, which takes the height) and the legend row.
    void arrangeUnderHeading(QCPLayoutElement* plots);

    // Adds plottable's entry to the main legend (once): its name, broken at spaces onto more
    // lines whenever the widest entry is wider than the figure, rather than cut at its edge.
    void addToLegend(QCPAbstractPlottable* plottable);

    void setTitle(const QString& text) { m_titleText = text; }
    void setSubtitle(const QString& text) { m_subtitleText = text; }
    // No title and subtitle, on screen too (before the next layout pass).
    void clearHeading();
    void setHeadingVisible(bool shown);
    // Gives the subtitle its row, or takes the row out and hides the subtitle (a compact chart:
    // even an empty subtitle would take a line). After arrangeUnderHeading().
    void setSubtitleRowShown(bool shown);

    // Breaks the titles at spaces to fit the figure's width, wraps the legend's entries where the
    // widest does not fit it and gives the legend as many columns as fit, and fits the axes'
    // labels and tick labels (fitAxisText), then QCustomPlot's layout. A
    // chart too short for its plots (plotsSqueezed: a page in presentation mode on a 720-line
    // projector) lays out again without the title and subtitle rows, while it is that short.
    // A chart that lays out more calls it from its own.
    void updateLayout() override;

private:
    // Puts the title and the subtitle each in its row above the plots or takes it out (hidden).
    void placeHeading(bool title, bool subtitle);
    // Wraps every entry of the legend to `width` less its icon when the widest is wider than
    // that, else none, then fits the legend's columns to `width`.
    void fitLegend(int width);
    // Whether a plot shown is shorter than four lines of its tick labels.
    bool plotsSqueezed() const;

    QCPTextElement* m_title;  // shows m_titleText, wrapped to the width
    QCPTextElement* m_subtitle;
    QString m_titleText;
    QString m_subtitleText;
    bool m_subtitleRowShown = true;
    bool m_headingShown = true;  // setHeadingVisible's
};

}  // namespace attnlab::ui

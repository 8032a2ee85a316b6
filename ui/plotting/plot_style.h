#pragma once

#include "attention/methods.h"

#include <QColor>
#include <QFont>
#include <QPainterPath>
#include <QSharedPointer>
#include <qcustomplot.h>

namespace attnlab::ui {

// The dynamic property of a page that sizes its text itself, with the page's size (the Stepper
// page): presentation mode leaves the fonts of its descendants alone.
inline constexpr char kScalesOwnTextProperty[] = "attnlabScalesOwnText";

// The smallest step of the 1, 2, 5, 10, 20, 50, ... sequence that is at least `minimum`: label
// strides that read well.
int niceStep(double minimum);

// An axis ticker for counts and indices (steps, features, dimensions): QCustomPlot's own choice
// of ticks, with the step rounded to a whole number, at least 1, so that no tick reads "2.5".
QSharedPointer<QCPAxisTicker> integerTicker();

// The method as the charts' legends and labels name it: the registry's title ("FAVOR+
// positive"), for people, not its command-line name ("favor-positive").
QString methodLabel(Method method);

// The method's colour on every chart: the registry's.
QColor methodColor(Method method);

// The method's marker (the registry's shape), centred on (0, 0), about 2 radius pixels across:
// the same in every chart and legend, so that curves stay apart in grey print too. A custom
// QCPScatterStyle is scaled by size / 6, so size 6 keeps the path in pixels.
QPainterPath methodMarkerPath(Method method, double radius);

// base at the given size in points (and bold).
QFont sizedFont(const QFont& base, double points, bool bold = false);

// Makes plot's replots paint it with the window's next paint, with every other widget that
// changed, rather than at once (QCustomPlot's default): the three maps and the query rows of a new
// result, or the Stepper's plots at each step, are painted and flushed in one pass, not one each.
void paintWithTheWindow(QCustomPlot* plot);

// The bottom and left axes of rect in the figures' style: tick labels at tickPoints, axis labels a
// point larger, light grey grid lines, and the sub grid too when subGrid (log axes).
void applyAxisStyle(QCPAxisRect* rect, const QFont& base, double tickPoints, bool subGrid);

// Fits the text of every axis of plot to the size it is drawn at (on screen, in presentation
// mode's larger fonts, in exports):
// - the tick labels stay apart: each axis's ticker is asked for fewer ticks while two
//   neighbouring labels would come closer than half a line of their font, and where the ticks are
//   fixed (a text ticker: the values swept) the labels that still crowd one kept are left blank
//   (on a log axis the powers of ten are kept first); sub ticks (and their grid lines) a few
//   pixels apart are left out rather than drawn as a solid band;
// - an axis label longer than its axis is broken at spaces onto more lines (wrappedText) rather
//   than run past the plot and the figure's edges; where it would take more lines than its
//   brief form allows (setAxisLabel), the brief one is drawn, broken so too.
// An axis given another ticker or label since is taken in at the next call. After each layout the
// plot lays itself out again while an axis's length differs from the one its labels were fitted
// to, so that they and the margins they take fit the final size. Charts call it at every layout
// pass (HeadedChart does); calling it again is cheap.
void fitAxisText(QCustomPlot* plot);

// Sets axis's label, with the brief form fitAxisText draws where the label would take more than
// `lines` lines along the axis (a narrow chart): "time of the approximate output (s, median)" for
// "measured time of the approximate output (seconds, median over the seeds)".
void setAxisLabel(QCPAxis* axis, const QString& label, const QString& brief, int lines = 2);

// The ticker that chooses axis's ticks: its own, also when fitAxisText wraps it.
QSharedPointer<QCPAxisTicker> axisTicker(const QCPAxis* axis);

// Shows or hides the bottom and left axes of rect with their grids.
void setAxesVisible(QCPAxisRect* rect, bool shown);

// A row for the plot's main legend, centred under the plots: the legend between two stretching
// empty cells. The legend is taken from where it was (an axis rect's inset layout).
QCPLayoutGrid* centredLegendRow(QCustomPlot* plot);

// Lays the legend's entries out in as many columns as fit `width` pixels, spread evenly over the
// rows (a wrapped legend's grid may keep empty cells after its last entry).
void fitLegendColumns(QCPLegend* legend, int width);

// `text` broken at spaces into lines no wider than `width` pixels in `font`, each of its own lines
// on its own; a parenthesised group ("(1, 3)") or an equation ("m = 64") is not broken unless it
// is wider than that alone, and a word wider than that keeps a line of its own. A gap of two
// spaces (a legend's "iid rows  slope -0.45") breaks first, the pieces between gaps wrapped on
// their own, and stays two spaces where the line goes on.
QString wrappedText(const QString& text, const QFont& font, int width);

// Sets the element's text to wrappedText in the element's font: a title or subtitle that would
// be cut off at the figure's edges wraps instead. Call it from the figure's layout pass, with the
// width the figure has.
void setWrappedText(QCPTextElement* element, const QString& text, int width);

// The grey hint an empty figure shows in its middle ("Click a query row ..."): its text wraps to
// the figure's width, less a margin, whenever it is drawn (on screen at any size, in presentation
// mode's larger font, in exports), instead of being cut off at both ends.
class FigureHint : public QCPItemText {
public:
    explicit FigureHint(QCustomPlot* plot, const QString& text, double points);

    void setHint(const QString& text) { m_hint = text; }
    QString hint() const { return m_hint; }

protected:
    void draw(QCPPainter* painter) override;

private:
    QString m_hint;
};

}  // namespace attnlab::ui

#pragma once

// What the Stepper page's files share (private to ui/stepper): the page's sizes and colours, and
// the small helpers that format numbers, style the plots and build labels and panels.

#include "types.h"

#include <QColor>
#include <QLabel>
#include <QSize>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

namespace attnlab::ui {

class HeatmapView;
class ReservedHeightLabel;

namespace stepper {

// Sizes in points. The page is read off a projector from the back of a room.
inline constexpr double kTokenPoints = 15;
inline constexpr double kTokenIndexPoints = 10;
inline constexpr double kPanelTitlePoints = 14;
inline constexpr double kPlotTitlePoints = 13;
inline constexpr double kTickPoints = 11;
inline constexpr double kAxisLabelPoints = 12;
inline constexpr double kStepTitlePoints = 19;
inline constexpr double kEquationPoints = 19;
inline constexpr double kValuePoints = 17;
inline constexpr double kLinePoints = 13;
inline constexpr double kControlPoints = 12;
inline constexpr double kStatePoints = 14;

// Token boxes of the strip, in pixels.
inline constexpr int kTokenPadding = 9;
inline constexpr int kTokenGap = 5;
inline constexpr int kStripMargin = 4;
inline constexpr int kMaxTokenCharacters = 16;

// The most cells of phi(k_i) v_i^T outlined as "changed most", and the share of the largest change
// a cell needs to be among them.
inline constexpr int kMarkedCells = 8;
inline constexpr double kMarkedShare = 0.5;
inline constexpr double kMarkPixels = 11;
// The first entries of y_i and o_i written in the formula panel.
inline constexpr int kPreviewEntries = 3;

// The smallest panels: below them the body scrolls.
inline constexpr QSize kMinimumHeatmapSize(200, 180);
inline constexpr QSize kMinimumPlotSize(180, 180);

// The page is designed for this size (a full-screen window on a 1920 x 1080 projector); its text
// scales with the page's size, within these bounds, in steps of kTextScaleStep.
inline constexpr QSize kDesignSize(1900, 980);
inline constexpr double kMinTextScale = 0.65;
inline constexpr double kMaxTextScale = 1.5;
inline constexpr double kTextScaleStep = 0.05;
// The dynamic properties that hold a widget's designed font size and weight.
inline constexpr char kPointsProperty[] = "attnlabPoints";
inline constexpr char kBoldProperty[] = "attnlabBold";

inline constexpr double kMinSpeed = 0.25;
inline constexpr double kMaxSpeed = 30.0;

// Okabe-Ito-like colours, distinct for every common colour-vision deficiency and in grey: exact
// results blue and approximations orange as on the other pages; what step i adds vermilion.
inline const QColor kExactColor(0x1f, 0x4e, 0x8c);
inline const QColor kApproxColor(0xe6, 0x8a, 0x00);
inline const QColor kAddedColor(0xd5, 0x5e, 0x00);
inline const QColor kStateColor(0x9d, 0xb3, 0xd1);
inline const QColor kQueryColor(0x5b, 0x3a, 0x8c);
inline const QColor kDifferenceColor(0x55, 0x55, 0x55);
inline const QColor kInkColor(40, 40, 40);
inline const QColor kFrameColor(90, 90, 90);
inline const QColor kWarningColor(0xb0, 0x1c, 0x1c);

// x with 4 significant digits, as people write it: a true minus sign, "∞" beyond the double
// range, "undefined" for NaN (never "nan" on screen).
QString displayNumber(double x);

// A short exponent form for tiny differences ("3.1e-08"), with the same care as displayNumber.
QString displayDifference(double x);

// The first kPreviewEntries entries of a row, "(0.1234, −0.5678, 0.9012, …)".
QString vectorPreview(const Eigen::Ref<const Eigen::RowVectorXd>& row);

// values with every entry that is not finite replaced by NaN (drawn as a gap or grey cell).
MatrixD finiteOrNaN(MatrixD values);

// The largest finite |entry| of values, 0 when none is.
template <typename Derived>
double largestMagnitude(const Eigen::DenseBase<Derived>& values)
{
    double largest = 0;
    for (Eigen::Index r = 0; r < values.rows(); ++r)
        for (Eigen::Index c = 0; c < values.cols(); ++c)
            if (const double x = values(r, c); std::isfinite(x))
                largest = std::max(largest, std::abs(x));
    return largest;
}

// [min(0, smallest), max(0, largest)] of the finite entries of the given vectors, with 8% room
// at the ends that are not 0; [0, 1] when all are 0.
QCPRange barRange(std::initializer_list<const VectorD*> vectors);

// Shows values as bars at keys 0..n-1; entries that are not finite are left out.
void setBars(QCPBars* bars, const VectorD& values);

// The look of one axis rect of the bar plots: thin dark axes, a light value grid with a dark
// zero line, about four ticks on the value axis (fonts: scalePlotFonts).
void styleAxisRect(QCPAxisRect* rect, const QString& keyLabel);

// Replaces the plot's layout by axis rects stacked top to bottom, each under its title (none for
// an empty title), with their left edges aligned and whole-number ticks along the bottom (the
// keys are features, dimensions and steps), their axis text fitted to their size (fitAxisText);
// returns them.
QList<QCPAxisRect*> stackedAxisRects(QCustomPlot* plot, const QStringList& titles,
                                     const QStringList& keyLabels);

// Bars in rect's axes, outlined in their own colour.
QCPBars* addBars(QCPAxisRect* rect, const QString& name, const QColor& color, double width = 0.8);

// Puts a legend of `entries` in a row of its own above `rect` (below its title), centred, so
// that it never covers a bar; the plot's axis rects keep all the stretch.
void addLegend(QCustomPlot* plot, QCPAxisRect* rect, const QList<QCPAbstractPlottable*>& entries);

// The fonts of a plot's axes, titles, legends and colour scales at `scale` times the sizes the
// page is designed with (kTickPoints, ...); HeatmapView's own title is not used here.
void scalePlotFonts(QCustomPlot* plot, double scale);

// The text scale of a page of `size`: size / kDesignSize (the smaller ratio), rounded to
// kTextScaleStep and kept within kMinTextScale and kMaxTextScale.
double textScaleFor(QSize size);
// The font of every widget under `root` (and root) marked with kPointsProperty (and
// kBoldProperty): its designed size times `scale`.
void scaleMarkedFonts(QWidget& root, double scale);

// Outlines cells of `view` (row, column), reusing the rectangles in `marks` (two per cell: a
// dark outline with a white one inside, visible on every colour of the map) and hiding the rest.
// An outline is at least kMarkPixels wide, so that it shows on cells of a few pixels.
void markCells(HeatmapView* view, std::vector<QCPItemRect*>& marks,
               const std::vector<std::pair<int, int>>& cells);

// The cells of `change` of largest magnitude: at most kMarkedCells, each at least kMarkedShare of
// the largest, largest first.
std::vector<std::pair<int, int>> largestCells(const MatrixD& change);

// Gives widget a font of `points` (times the page's text scale, see applyTextScale).
void setTextPoints(QWidget* widget, double points, bool bold = false);

// A label of `points` in the given colour; rich text when the text has tags.
QLabel* makeLabel(const QString& text, double points, bool bold = false,
                  const QColor& color = kInkColor);

// A word-wrapped line of `points` that keeps the height of the reserved text it is given.
ReservedHeightLabel* makeReservedLine(double points);

// A panel of the frame: a large title (rich text) over content.
QWidget* makePanel(QLabel* title, QWidget* content);

}  // namespace stepper

}  // namespace attnlab::ui

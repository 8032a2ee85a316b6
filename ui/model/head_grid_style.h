#pragma once

// What the Heads page's files share (private to ui/model): the error colours, ink and selection
// colour, and the small helpers that format numbers, scale fonts and show a head's tooltip.

#include <QColor>
#include <QFont>
#include <QString>

#include <algorithm>
#include <array>

class QHelpEvent;
class QRect;
class QWidget;

namespace attnlab::ui::heads {

// ColorBrewer's sequential YlOrRd (9 classes, Cynthia Brewer, Apache 2.0) without its palest
// class, so that the smallest error still frames a cell visibly on a light background.
inline constexpr std::array<QRgb, 8> kErrorColors{0xffffeda0, 0xfffed976, 0xfffeb24c, 0xfffd8d3c,
                                                  0xfffc4e2a, 0xffe31a1c, 0xffbd0026, 0xff800026};
inline const QColor kNoErrorColor(170, 170, 170);
inline const QColor kInk(40, 40, 40);
// The selected head's outline: a saturated blue, apart from the error colours and viridis.
inline const QColor kSelection(0, 98, 255);

// value with 3 significant digits, "n/a" when it is not finite.
QString number(double value);

// value within [low, high] (high for a NaN value).
inline double clamp(double value, double low, double high)
{
    return std::max(low, std::min(high, value));
}

// "P̂" (P with a circumflex, as the papers write the approximation).
QString approxSymbol();

// base scaled by factor (points or pixels, whichever it has), and bold.
QFont scaledFont(const QFont& base, double factor, bool bold = false);

// The text of the help event's head, for the tooltip; hides the tooltip when there is none.
bool showHeadToolTip(QWidget* widget, QHelpEvent* help, const QString& text, const QRect& area);

}  // namespace attnlab::ui::heads

#pragma once

#include <QString>
#include <qcustomplot.h>

namespace attnlab::ui {

// The colour maps of the heatmaps. Viridis and Magma are sequential (lightness rises with the
// value): for attention weights. Diverging is blue - light grey - red: for signed values such as
// the error P^ - P, with 0 at the centre colour when the colour range is symmetric about 0.
enum class ColorMap { Viridis, Magma, Diverging };

// The name of a colour map as the command line and session files spell it: "viridis", "magma",
// "diverging".
QString colorMapName(ColorMap map);

// Sets *map to the colour map called `name` (as colorMapName spells it, case-insensitive) and
// returns true; returns false and leaves *map alone when no colour map has that name.
bool parseColorMap(const QString& name, ColorMap* map);

// The gradient of a colour map: 256 levels (257 for Diverging, so that one level sits exactly at
// the centre), not periodic, NaN drawn in a neutral grey.
QCPColorGradient colorGradient(ColorMap map);

}  // namespace attnlab::ui

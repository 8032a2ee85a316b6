#pragma once

#include <QFont>

namespace attnlab::ui {

// The smallest step of the 1, 2, 5, 10, 20, 50, ... sequence that is at least `minimum`: label
// strides that read well.
int niceStep(double minimum);

// base at the given size in points (and bold).
QFont sizedFont(const QFont& base, double points, bool bold = false);

}  // namespace attnlab::ui

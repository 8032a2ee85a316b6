#pragma once

#include <QString>

namespace attnlab::ui {

// How long a page's work took, as its status line says it, with a non-breaking space before the
// unit: "40 ms" under a second, "2.4 s" under ten seconds, "12 s" under a minute, "2 min 5 s"
// after. A survey of a small model takes tens of milliseconds, which "0.0 s" hid.
QString durationText(qint64 milliseconds);

// The exponent written in superscript digits, with a real minus sign ("⁻⁵"): the axes' powers
// ("2¹⁰") and the metrics' scientific notation ("3.2·10⁻⁵").
QString superscript(int exponent);

}  // namespace attnlab::ui

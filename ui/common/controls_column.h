#pragma once

#include <QString>

#include <optional>

class QComboBox;
class QDoubleSpinBox;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QWidget;

namespace attnlab::ui {

// The column of controls beside a page's chart (Error analysis, Timing): a frameless area that
// scrolls vertically when the page is short and is exactly as wide as the controls need, whatever
// their fonts: when they grow (presentation mode enlarges them) the column widens with them
// instead of cutting them off. Takes ownership of controls.
QScrollArea* controlsColumn(QWidget* controls);

// The contents of a dock (the Input, Method and Metrics panels): a frameless area that scrolls
// vertically and is at least as wide as the panel's layout needs, refitted whenever that changes
// (a metric such as 1.484 x 10^6 needs a wider value column than 0.7): the dock widens instead of
// cutting the values off at its right edge. Takes ownership of panel.
QScrollArea* dockContents(QWidget* panel);

// A number box of a dock (the Input and Method panels): its range and tooltip, and no keyboard
// tracking, so that a value typed is taken once it is complete (typing 128 does not compute with
// 1 and 12 first).
QSpinBox* dockSpinBox(int minimum, int maximum, const QString& toolTip = QString());
// The same for a real number: `decimals` decimals, the arrows step by `step`.
QDoubleSpinBox* dockDoubleSpinBox(double minimum, double maximum, int decimals, double step,
                                  const QString& toolTip = QString());

// Set a dock's number box to `value`, or its range to [minimum, maximum], only where it differs
// from what the box has: a spin box redraws its text at every setValue and lays its window out
// again at every setRange, changed or not, and the docks take the spec with every result.
void showValue(QSpinBox* box, int value);
void showValue(QDoubleSpinBox* box, double value);
void showRange(QSpinBox* box, int minimum, int maximum);

// Sets a dock's number box to what is in force: editable, it shows `value` for the user to change;
// not editable (the input sets it: a model's d and heads, a ViT's patch size), it is greyed out
// and shows the input's value, or a dash when that is not known here (Q, K, V files set it), never
// the spec's value of before. `value` is the box's minimum or more when it is known.
void showValueInForce(QSpinBox* box, bool editable, std::optional<int> value);

// The same for a dock's list of choices: editable, it shows item `index`; not editable, it is
// greyed out with no item chosen and shows `inForce`, what decides in its place ("the model's
// tokenizer"), never the spec's choice of before.
void showChoiceInForce(QComboBox* box, bool editable, int index, const QString& inForce);

// A button that opens a menu (a page's Export, the layers Generate replaces), its menu owned by
// it and empty for the caller to fill: a push button, whose arrow has room of its own right of the
// text; a tool button that pops its menu up at once drew its arrow over the text's last letter.
QPushButton* menuButton(const QString& text, const QString& toolTip);

}  // namespace attnlab::ui

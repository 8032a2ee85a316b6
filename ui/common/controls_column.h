#pragma once

class QScrollArea;
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

}  // namespace attnlab::ui

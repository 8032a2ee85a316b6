#pragma once

class QScrollArea;
class QWidget;

namespace attnlab::ui {

// The column of controls beside a page's chart (Error analysis, Timing): a frameless area that
// scrolls vertically when the page is short and is exactly as wide as the controls need, whatever
// their fonts: when they grow (presentation mode enlarges them) the column widens with them
// instead of cutting them off. Takes ownership of controls.
QScrollArea* controlsColumn(QWidget* controls);

}  // namespace attnlab::ui

#pragma once

#include <QList>
#include <QObject>

class QDockWidget;
class QMainWindow;
class QTabWidget;

namespace attnlab::ui {

class PresentationMode;

// The docks at the window's right (the Metrics dock: the experiment's numbers) give their room to
// a page that has no use for them while it is shown: the Timing page, which measures inputs and
// methods of its own (at 1280 x 800 its chart was about 400 pixels wide and its table showed three
// columns). The docks at the left stay, so that the tabs stay in place from page to page. The
// docks hidden are shown again when a page that uses them is, when presentation mode (which
// hides every dock and restores the layout it found) ends, and before the window saves its
// layout. A dock the user shows on such a page stays.
class PageDocks : public QObject {
    Q_OBJECT

public:
    // Hides the docks at the right while page `unused` of `pages` is shown.
    PageDocks(QMainWindow& window, PresentationMode& presentation, QTabWidget& pages, int unused);

    // Shows the docks hidden for the page (before the window saves its layout); they are hidden
    // again at the next change of page, if it is to that page.
    void showHidden();

private:
    // Hides the window's visible docks at the right, or shows those it hid: what the page shown
    // needs.
    void apply();

    QMainWindow& m_window;
    PresentationMode& m_presentation;
    QTabWidget& m_pages;
    int m_unused;                  // the page that has no use for the docks at the right
    QList<QDockWidget*> m_hidden;  // hidden for the page, to be shown again
};

}  // namespace attnlab::ui

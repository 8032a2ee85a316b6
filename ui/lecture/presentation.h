#pragma once

#include <QByteArray>
#include <QFont>
#include <QObject>
#include <QPalette>
#include <QPointer>
#include <QWidget>

class QCustomPlot;
class QMainWindow;
class QStyle;
class QTimer;

namespace attnlab::ui {

// The two projector themes of presentation mode: black on white, and white on near-black. Both
// use full-contrast text and axes; the data colours (colour maps, curves) stay as they are.
enum class ProjectorTheme { Light, Dark };

// A laser-pointer highlight: a red translucent dot that follows the mouse over its parent. A
// child widget on top of everything in the parent, transparent for the mouse (clicks and hovers
// reach the widgets under it), resized with the parent. It follows the cursor by polling its
// position at display rate while shown (the widgets under it take the mouse events).
class LaserPointer : public QWidget {
    Q_OBJECT

public:
    explicit LaserPointer(QWidget* parent);

    // Moves the dot to `position` (parent coordinates); a point outside the parent hides the dot.
    void setPosition(const QPoint& position);
    QPoint position() const { return m_position; }
    // The dot's diameter in pixels.
    int diameter() const;

protected:
    // Paints the dot: a soft red halo around a bright core.
    void paintEvent(QPaintEvent* event) override;
    // Follows the parent's size.
    bool eventFilter(QObject* watched, QEvent* event) override;
    // Starts following the cursor when shown, stops when hidden.
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;

private:
    // Takes the cursor's position, repainting where the dot was and where it goes.
    void followCursor();

    QPoint m_position{-1, -1};
    QTimer* m_follow;
};

// Presentation mode for a main window, for a room and a projector: full screen, docks, toolbars,
// the menu bar and the status bar hidden, every font of every widget and plot larger, lines
// thicker, and a high-contrast projector theme (light or dark) for the window's palette and the
// plots, with the indicators of check boxes and radio buttons outlined in the theme's ink. Leaving
// restores exactly what was before: the window's state and geometry, which docks and bars were
// shown, the fonts, the palette and every plot's fonts, pens and colours.
//
// Fonts: the window's font is scaled by fontScale() (the widgets that inherit it follow), and so
// is the font of every widget that sets its own. Plots (QCustomPlot): the fonts of axes, text
// elements, legends and text items are scaled by fontScale(), the pens of axes, grids, graphs,
// bars and items made kLineScale times thicker (at least 1 pixel before), scatter markers and
// colour-scale bars larger. What the mode sets is remembered per object with the value it
// replaced, and re-applied before every replot of a plot: a view that rebuilds a curve or resets a
// font (a new result arrives while presenting) gets the presentation look again, and leaving
// restores only what the mode set (a value the view changed itself since is kept). Widgets and
// plots created while presenting get the look when they are first shown. The Stepper page keeps
// its own fonts: it sizes its text with the page (full screen makes it larger already).
class PresentationMode : public QObject {
    Q_OBJECT

public:
    // How entering places the window: full screen (what a lecture wants), or as it is (for
    // screenshots and tests of a given size: the look of presentation mode without the screen).
    enum class Placement { FullScreen, KeepGeometry };

    // The font scale on a screen kReferenceHeight pixels high or higher; and how much thicker
    // lines are drawn on any screen.
    static constexpr double kFontScale = 1.5;
    static constexpr double kReferenceHeight = 1080;
    static constexpr double kLineScale = 2.5;

    // The font scale for a screen (or, for Placement::KeepGeometry, a window) `height` pixels
    // high: kFontScale from kReferenceHeight up, and below it kFontScale height /
    // kReferenceHeight, at least 1. The room then sees the text as large as on the reference
    // screen: a projector of 720 lines shows the desktop's fonts (scale 1) as large as one of
    // 1080 lines shows them at 1.5, and the plots keep the share of the screen they have there.
    static double fontScaleFor(int height);
    // The scale the last entering chose (fontScaleFor the screen's or the window's height); 1
    // before the mode is first entered.
    double fontScale() const { return m_fontScale; }

    // The mode of `window` (its parent); inactive until enter().
    explicit PresentationMode(QMainWindow* window);
    ~PresentationMode() override;

    bool isActive() const { return m_active; }
    // Remembers the window's state and enters the mode; does nothing when active.
    void enter(Placement placement = Placement::FullScreen);
    // Restores what enter() remembered; does nothing when inactive.
    void leave();

    // The projector theme (Light by default); applied at once when active.
    void setTheme(ProjectorTheme theme);
    ProjectorTheme theme() const { return m_theme; }

    // The laser pointer, shown while the mode is active and it is on (off by default).
    void setLaserPointerEnabled(bool enabled);
    bool laserPointerEnabled() const { return m_laserEnabled; }
    LaserPointer* laserPointer() const { return m_laser; }

    // The window palette of a projector theme: full-contrast text, window and base colours.
    static QPalette projectorPalette(ProjectorTheme theme);

signals:
    void activeChanged(bool active);

protected:
    // Plots and widgets polished while active get the presentation look.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // Gives every widget and plot of the window the presentation look (or restores them).
    void styleWidgets(bool apply);
    // The presentation look for one widget (its own font; its text colours in the dark theme;
    // the outlined indicator of a check box or radio button), or its restoration.
    void styleWidget(QWidget* widget, bool apply);
    // The presentation look for one plot (fonts, pens, colours), or its restoration; the caller
    // replots.
    void stylePlot(QCustomPlot* plot, bool apply);
    // Shows the laser pointer when active and enabled, raised above the central widget.
    void updateLaserPointer();

    QMainWindow* m_window;
    ProjectorTheme m_theme = ProjectorTheme::Light;
    bool m_active = false;
    double m_fontScale = 1.0;
    bool m_laserEnabled = false;
    LaserPointer* m_laser;
    QStyle* m_indicatorStyle;  // the style of check boxes and radio buttons while presenting

    // What enter() found, for leave().
    struct SavedWindow {
        QByteArray geometry;  // saveGeometry(): the normal geometry of a maximized window too
        QRect rect;           // the window's geometry (client area)
        QByteArray state;     // docks and toolbars
        Qt::WindowStates windowState;
        bool menuBarShown = true;
        bool statusBarShown = true;
        bool ownFont = false;  // the window set its font (else it inherits the application's)
        QFont font;
        bool ownPalette = false;
        QPalette palette;
    } m_saved;
};

}  // namespace attnlab::ui

#pragma once

// What the tests of the widgets share: finding a named child, running a panel's sweep to its end,
// counting the colours of a grab (a blank figure has a handful), keeping a grab to look at.

#include <QImage>
#include <QSignalSpy>
#include <QString>
#include <QWidget>

#include <set>

namespace attnlab::test {

// The child of `parent` named `name`; the test stops when there is none.
template <typename T>
T* child(const QWidget& parent, const char* name)
{
    T* found = parent.findChild<T*>(QLatin1String(name));
    if (!found)
        qFatal("no child %s", name);
    return found;
}

// Runs the sweep of `panel` (a panel with run() and a sweepFinished signal: timing, errors) and
// waits at most timeoutMs for it to finish, whether it finishes within run() or later; false when
// it did not finish.
template <typename Panel>
bool sweepFinishes(Panel& panel, int timeoutMs)
{
    QSignalSpy finished(&panel, &Panel::sweepFinished);
    panel.run();
    return !finished.isEmpty() || finished.wait(timeoutMs);
}

// The number of distinct colours in an image: a blank figure or widget has a handful.
inline int colourCount(const QImage& image)
{
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            colours.insert(image.pixel(x, y));
    return int(colours.size());
}

// Saves `image` into $ATTNLAB_GRAB_DIR (when set), to look at.
inline void keepGrab(const QImage& image, const QString& name)
{
    const QString folder = qEnvironmentVariable("ATTNLAB_GRAB_DIR");
    if (!folder.isEmpty())
        image.save(folder + QLatin1Char('/') + name);
}

}  // namespace attnlab::test

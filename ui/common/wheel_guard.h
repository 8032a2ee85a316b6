#pragma once

#include <QObject>

class QApplication;

namespace attnlab::ui {

// Fields that turn with the mouse wheel (spin boxes, combo boxes) take it only once clicked or
// tabbed into: a wheel over one that does not have the focus scrolls what holds it (the docks'
// scroll areas) and leaves its value alone. Qt's default turns any field under the pointer, so
// scrolling the Input dock changed the model's layer.
class WheelGuard : public QObject {
    Q_OBJECT

public:
    using QObject::QObject;

    // Installs one guard on app for all its widgets (a second call does nothing).
    static void install(QApplication* app);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace attnlab::ui

#include "ui/common/wheel_guard.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>

namespace attnlab::ui {

namespace {

bool turnsWithTheWheel(const QObject* object)
{
    return qobject_cast<const QAbstractSpinBox*>(object) || qobject_cast<const QComboBox*>(object);
}

}  // namespace

void WheelGuard::install(QApplication* app)
{
    if (!app || app->findChild<WheelGuard*>(QString(), Qt::FindDirectChildrenOnly))
        return;
    app->installEventFilter(new WheelGuard(app));
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event)
{
    if (!turnsWithTheWheel(watched))
        return false;
    auto* field = static_cast<QWidget*>(watched);
    // The wheel gives Qt::WheelFocus fields the focus before they see it: only a click or Tab.
    if (event->type() == QEvent::Polish && field->focusPolicy() == Qt::WheelFocus)
        field->setFocusPolicy(Qt::StrongFocus);
    if (event->type() != QEvent::Wheel || field->hasFocus())
        return false;
    event->ignore();  // not taken: QApplication passes the wheel on to the field's parents
    return true;
}

}  // namespace attnlab::ui

// ui/common/wheel_guard.h: a spin box or combo box in a scrolled column turns with the wheel only
// once it has the focus; before, the wheel scrolls the column and the value stays.

#include "ui/common/wheel_guard.h"

#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QScrollArea>
#include <QSpinBox>
#include <QTest>
#include <QVBoxLayout>
#include <QWheelEvent>

using namespace attnlab::ui;

namespace {

// One notch of the wheel, up, over the middle of widget. Whether the widget took it: a wheel
// event from the window system that is not taken goes on to the widget's parents (QApplication's
// notify; one sent from here goes no further, so the column's scrolling is not tested here).
bool wheelUp(QWidget* widget)
{
    const QPointF centre = QRectF(widget->rect()).center();
    QWheelEvent event(centre, widget->mapToGlobal(centre), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &event);
    return event.isAccepted();
}

}  // namespace

class TestWheelGuard : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { WheelGuard::install(qobject_cast<QApplication*>(qApp)); }
    void unfocusedFieldsLetTheColumnScroll();
    void focusedFieldTurns();
};

// Property: a wheel over a spin box or combo box without the focus leaves its value, and the
// field does not take it, so that it scrolls the column that holds it (the Input dock's Layer
// changed as the dock was scrolled); nor does it give the field the focus.
void TestWheelGuard::unfocusedFieldsLetTheColumnScroll()
{
    QScrollArea area;
    auto* column = new QWidget;
    auto* layout = new QVBoxLayout(column);
    auto* typed = new QLineEdit;  // where the focus is: the fields are only under the pointer
    layout->addWidget(typed);
    auto* spin = new QSpinBox;
    spin->setRange(0, 11);
    auto* combo = new QComboBox;
    combo->addItems({QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")});
    combo->setCurrentIndex(1);
    layout->addSpacing(600);
    layout->addWidget(spin);
    layout->addWidget(combo);
    layout->addSpacing(600);
    area.setWidget(column);
    area.resize(200, 300);
    area.show();
    QVERIFY(QTest::qWaitForWindowExposed(&area));
    area.activateWindow();
    typed->setFocus();
    QTRY_VERIFY(typed->hasFocus());
    area.ensureWidgetVisible(spin);

    QVERIFY(!wheelUp(spin));
    QCOMPARE(spin->value(), 0);
    QVERIFY(!spin->hasFocus());
    area.ensureWidgetVisible(combo);
    QVERIFY(!wheelUp(combo));
    QCOMPARE(combo->currentIndex(), 1);
}

// Property: once clicked or tabbed into, the field turns with the wheel as Qt's do.
void TestWheelGuard::focusedFieldTurns()
{
    QSpinBox spin;
    spin.setRange(0, 11);
    spin.show();
    QVERIFY(QTest::qWaitForWindowExposed(&spin));
    spin.activateWindow();
    spin.setFocus();
    QTRY_VERIFY(spin.hasFocus());
    QVERIFY(wheelUp(&spin));
    QCOMPARE(spin.value(), 1);
}

QTEST_MAIN(TestWheelGuard)
#include "test_wheel_guard.moc"

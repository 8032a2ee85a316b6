// Placeholder while the stepper_view tests are being written.
#include <QTest>
class TestStepperView : public QObject {
    Q_OBJECT
};
QTEST_GUILESS_MAIN(TestStepperView)
#include "test_stepper_view.moc"

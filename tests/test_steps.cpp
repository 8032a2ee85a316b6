// Placeholder while the steps tests are being written.
#include <QTest>
class TestSteps : public QObject {
    Q_OBJECT
};
QTEST_GUILESS_MAIN(TestSteps)
#include "test_steps.moc"

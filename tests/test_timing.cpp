// Placeholder while the timing tests are being written.
#include <QTest>
class TestTiming : public QObject {
    Q_OBJECT
};
QTEST_GUILESS_MAIN(TestTiming)
#include "test_timing.moc"

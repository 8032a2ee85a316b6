// Placeholder while the timing_panel tests are being written.
#include <QTest>
class TestTimingPanel : public QObject {
    Q_OBJECT
};
QTEST_GUILESS_MAIN(TestTimingPanel)
#include "test_timing_panel.moc"

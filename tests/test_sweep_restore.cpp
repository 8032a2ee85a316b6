// A sweep page's state restored while its sweep runs, as opening a session or a scenario does:
// the page takes the state at once and is idle, without waiting for the run in progress. It
// waited, and a Timing sweep at long lengths froze the window for seconds (4.5 to 6.8 s opening
// scenario 8 during a sweep of exact streaming attention).

#include "ui/timing/timing_panel.h"

#include <QCheckBox>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>

using namespace attnlab;
using namespace attnlab::ui;

namespace {

// A sweep's longest run ends within this; it bounds a broken one.
constexpr int kSweepTimeoutMs = 300'000;

// Sets the Timing page to measure exact streaming attention, non-causal, at `length` only.
void measureStreamingAt(TimingPanel& panel, int length)
{
    for (QCheckBox* box : panel.findChildren<QCheckBox*>())
        if (box->objectName().startsWith(QStringLiteral("method-")))
            box->setChecked(box->objectName() == QStringLiteral("method-exact-streaming"));
    panel.findChild<QCheckBox*>(QStringLiteral("nonCausal"))->setChecked(true);
    panel.findChild<QCheckBox*>(QStringLiteral("timingCausal"))->setChecked(false);
    panel.findChild<QSpinBox*>(QStringLiteral("maxLength"))->setValue(length);
    panel.findChild<QSpinBox*>(QStringLiteral("minLength"))->setValue(length);
}

}  // namespace

class TestSweepRestore : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void timingStateDoesNotWaitForTheRunInProgress();
};

void TestSweepRestore::timingStateDoesNotWaitForTheRunInProgress()
{
    // A sweep of exact streaming attention at L = 40,960: each of its runs (a warm-up and the
    // repetitions) takes seconds (3 s on a 2-core machine). A second and a half in, past the
    // sweep's sgemm measure and into its first run, the page's first state is restored; then a
    // sweep at L = 16 is asked for, which starts only when the abandoned run has ended.
    // Restoring must take a small part of that wait (ratios measured in one run: waiting for the
    // run, the restore took nearly all of it, before runs stopped inside when cancelled).
    TimingPanel panel;
    const QJsonObject first = panel.state();
    measureStreamingAt(panel, 40960);
    QSignalSpy finished(&panel, &TimingPanel::sweepFinished);
    panel.run();
    QVERIFY(panel.isRunning());
    QTest::qWait(1500);
    QVERIFY(panel.isRunning());

    QElapsedTimer clock;
    clock.start();
    panel.setState(first);
    const qint64 restoreMs = clock.elapsed();
    QVERIFY(!panel.isRunning());
    QCOMPARE(panel.state(), first);

    measureStreamingAt(panel, 16);
    finished.clear();
    panel.run();
    QVERIFY(finished.wait(kSweepTimeoutMs));
    const qint64 runEndedMs = clock.elapsed();
    QVERIFY2(restoreMs * 4 < runEndedMs,
             qPrintable(QStringLiteral("restoring took %1 ms; the abandoned run ended after %2 ms")
                            .arg(restoreMs)
                            .arg(runEndedMs)));
}

QTEST_MAIN(TestSweepRestore)
#include "test_sweep_restore.moc"

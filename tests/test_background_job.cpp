// BackgroundJob (ui/common/background_job.h), the one way the pages run work off the GUI thread:
// what work returns reaches done on the GUI thread; the newest request wins and what the
// superseded work returns is dropped; cancel() keeps what work returns while discard() keeps
// nothing; what work throws becomes failed() with the page's message, which says where the window
// changes the settings that get past a refusal; posted calls of a stale run are dropped; progress
// arrives; the destructor waits for the work. And durationText, how long the work took as the
// pages' status lines say it.

#include "ui/common/background_job.h"
#include "ui/common/number_text.h"
#include "attention/approximation.h"
#include "errors.h"
#include "experiment.h"
#include "inputs/inputs.h"
#include "memory_budget.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>
#include <new>
#include <stdexcept>

using namespace attnlab;
using namespace attnlab::ui;

namespace {

// Work that runs until it is cancelled (at most 10 s), then returns `value`.
auto untilCancelled(int value, std::atomic<int>* started = nullptr)
{
    return [value, started](JobContext& context) {
        if (started)
            ++*started;
        for (int i = 0; i < 10'000 && !context.isCancelled(); ++i)
            QThread::msleep(1);
        return value;
    };
}

}  // namespace

class TestBackgroundJob : public QObject {
    Q_OBJECT

private slots:
    void deliversWhatTheWorkReturnsOnTheGuiThread()
    {
        BackgroundJob job;
        QSignalSpy running(&job, &BackgroundJob::runningChanged);
        int delivered = 0;
        QThread* deliveredOn = nullptr;
        QThread* workedOn = nullptr;
        job.start(
            [&workedOn](JobContext&) {
                workedOn = QThread::currentThread();
                return 42;
            },
            [&](int value) {
                delivered = value;
                deliveredOn = QThread::currentThread();
            });
        QVERIFY(job.isRunning());
        QTRY_COMPARE(delivered, 42);
        QCOMPARE(deliveredOn, QThread::currentThread());
        QVERIFY(workedOn != QThread::currentThread());
        QTRY_COMPARE(running.count(), 2);
        QCOMPARE(running.at(0).at(0).toBool(), true);
        QCOMPARE(running.at(1).at(0).toBool(), false);
        QVERIFY(!job.isRunning());
    }

    void theNewestRequestWins()
    {
        BackgroundJob job;
        std::atomic<int> started{0};
        QList<int> delivered;
        const auto done = [&](int value) { delivered.append(value); };
        job.start(untilCancelled(1, &started), done);
        QTRY_COMPARE(started.load(), 1);
        job.start(untilCancelled(2, &started), done);  // waits behind the first, then dropped
        job.start([](JobContext&) { return 3; }, done);
        QTRY_VERIFY(!job.isRunning());
        QCOMPARE(delivered, QList<int>{3});
        QCOMPARE(started.load(), 1);  // the second request never ran
    }

    void cancelKeepsWhatTheWorkReturns()
    {
        BackgroundJob job;
        QSignalSpy cancelled(&job, &BackgroundJob::cancelled);
        std::atomic<int> started{0};
        int delivered = 0;
        job.start(untilCancelled(7, &started), [&](int value) { delivered = value; });
        QTRY_COMPARE(started.load(), 1);
        job.cancel();
        QTRY_COMPARE(delivered, 7);
        QCOMPARE(cancelled.count(), 0);
    }

    void workThatThrowsCancelledEndsWithCancelled()
    {
        BackgroundJob job;
        QSignalSpy cancelled(&job, &BackgroundJob::cancelled);
        QSignalSpy failed(&job, &BackgroundJob::failed);
        bool delivered = false;
        job.start(
            [](JobContext& context) {
                while (!context.isCancelled())
                    QThread::msleep(1);
                throw Cancelled();
            },
            [&] { delivered = true; });
        job.cancel();
        QTRY_COMPARE(cancelled.count(), 1);
        QVERIFY(!delivered);
        QCOMPARE(failed.count(), 0);
    }

    void whatTheWorkThrowsBecomesFailed_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("message");
        QTest::newRow("input") << 0 << "bad.npy: not a NumPy file";
        QTest::newRow("resource") << 1 << "P needs 64 GiB, over the memory budget";
        QTest::newRow("memory") << 2 << "out of memory: lower the memory budget";
        QTest::newRow("other") << 3 << "boom";
    }

    void whatTheWorkThrowsBecomesFailed()
    {
        QFETCH(int, kind);
        QFETCH(QString, message);
        BackgroundJob job;
        QSignalSpy failed(&job, &BackgroundJob::failed);
        bool delivered = false;
        job.start(
            [kind, message](JobContext&) {
                switch (kind) {
                    case 0: throw InputError(message);
                    case 1: throw ResourceError(message);
                    case 2: throw std::bad_alloc();
                    default: throw std::runtime_error(message.toStdString());
                }
            },
            [&] { delivered = true; });
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY2(failed.at(0).at(0).toString().startsWith(message),
                 qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(!delivered);
        QTRY_VERIFY(!job.isRunning());
    }

    // The engine's refusals name what to change in its words and list those settings; failed()
    // adds where the window changes each (the Method dock, the Random tab, Edit > Memory Budget),
    // and no command-line option. The engine named --norm-multiplier, --causal, --features.
    void refusalsSayWhereTheWindowChangesTheirSettings_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("ending");
        QTest::newRow("overflow")
            << 0
            << "Lower the norm multiplier, the scale or the norm of the input. Settings: the "
               "Method dock's Norm multiplier; the Method dock's Scale s; the Random tab's Row "
               "norm.";
        QTest::newRow("no causal form")
            << 1
            << "Turn the causal mask off, or choose a method with one. Settings: the Method "
               "dock's Causal mask.";
        QTest::newRow("budget")
            << 2
            << "Use fewer features, or raise the memory budget. Settings: the Method dock's "
               "Features m; Edit > Memory Budget.";
        // The Stepper chooses the states it keeps itself: that setting has no place to name.
        QTest::newRow("kept states")
            << 3
            << "keep fewer states, or raise the memory budget. Settings: Edit > Memory Budget.";
    }

    void refusalsSayWhereTheWindowChangesTheirSettings()
    {
        QFETCH(int, kind);
        QFETCH(QString, ending);
        BackgroundJob job;
        QSignalSpy failed(&job, &BackgroundJob::failed);
        job.start(
            [kind](JobContext&) {
                const MemoryBudget budget(1000);
                ExperimentSpec spec;
                switch (kind) {
                    case 0:
                        spec.precision = Precision::Float;
                        spec.input.normMultiplier = 1e9;
                        compute(spec, buildInput(spec.input));
                        break;
                    case 1: requireCausalForm(Method::Nystrom, true); break;
                    case 2:
                        budget.require(2000, QStringLiteral("P"),
                                       QStringLiteral("Use fewer features, or raise the memory "
                                                      "budget."),
                                       {Remedy::FewerFeatures});
                        break;
                    default:
                        budget.require(2000, QStringLiteral("S"),
                                       QStringLiteral("keep fewer states, or raise the memory "
                                                      "budget."),
                                       {Remedy::FewerKeptStates});
                }
            },
            [] {});
        QTRY_COMPARE(failed.count(), 1);
        const QString message = failed.at(0).at(0).toString();
        QVERIFY2(message.endsWith(ending), qPrintable(message));
        QVERIFY2(!message.contains(QStringLiteral("--")), qPrintable(message));
    }

    void discardDropsTheRunningAndTheWaitingWork()
    {
        BackgroundJob job;
        QSignalSpy running(&job, &BackgroundJob::runningChanged);
        QSignalSpy cancelled(&job, &BackgroundJob::cancelled);
        std::atomic<int> started{0};
        int delivered = 0;
        const auto done = [&](int value) { delivered = value; };
        job.start(untilCancelled(1, &started), done);
        QTRY_COMPARE(started.load(), 1);
        job.start(untilCancelled(2, &started), done);
        job.discard();
        QTRY_VERIFY(!job.isRunning());
        QTest::qWait(50);
        QCOMPARE(delivered, 0);
        QCOMPARE(started.load(), 1);
        QCOMPARE(cancelled.count(), 0);
        QCOMPARE(running.count(), 2);
    }

    void postedCallsArriveInOrderBeforeTheResult()
    {
        BackgroundJob job;
        QList<int> seen;
        job.start(
            [&seen](JobContext& context) {
                for (int i = 0; i < 5; ++i)
                    context.post([&seen, i] { seen.append(i); });
                return 5;
            },
            [&seen](int value) { seen.append(value); });
        QTRY_VERIFY(!job.isRunning());
        QCOMPARE(seen, (QList<int>{0, 1, 2, 3, 4, 5}));
    }

    void postedCallsOfAStaleRunAreDropped()
    {
        // Delivered by finishNow() before the event loop ran: the calls it posted are stale.
        BackgroundJob job;
        int posted = 0;
        int delivered = 0;
        job.start(
            [&posted](JobContext& context) {
                for (int i = 0; i < 5; ++i)
                    context.post([&posted] { ++posted; });
                return 1;
            },
            [&delivered](int value) { delivered = value; });
        job.finishNow();
        QCOMPARE(delivered, 1);
        QVERIFY(!job.isRunning());
        QTest::qWait(50);
        QCOMPARE(posted, 0);

        // Discarded: what it posts after that is dropped too.
        std::atomic<bool> discarded{false};
        job.start(
            [&](JobContext& context) {
                while (!discarded)
                    QThread::msleep(1);
                context.post([&posted] { ++posted; });
                return 2;
            },
            [&delivered](int value) { delivered = value; });
        job.discard();
        discarded = true;
        QTRY_VERIFY(!job.isRunning());
        QTest::qWait(50);
        QCOMPARE(posted, 0);
        QCOMPARE(delivered, 1);
    }

    void progressArrives()
    {
        BackgroundJob job;
        QSignalSpy progress(&job, &BackgroundJob::progressChanged);
        job.start(
            [](JobContext& context) {
                for (int i = 1; i <= 10; ++i) {
                    QThread::msleep(5);
                    context.setProgress(i, 10);
                }
            },
            [] {});
        QTRY_VERIFY(!job.isRunning());
        QVERIFY(!progress.isEmpty());
        int last = 0;
        for (const QList<QVariant>& arguments : progress) {
            QCOMPARE(arguments.at(1).toInt(), 10);
            QVERIFY(arguments.at(0).toInt() >= last);
            last = arguments.at(0).toInt();
        }
        QCOMPARE(last, 10);  // Qt always sends the last value
    }

    void theDestructorStopsAndWaitsForTheWork()
    {
        auto stopped = std::make_shared<std::atomic<bool>>(false);
        std::atomic<int> started{0};
        {
            BackgroundJob job;
            job.start(
                [stopped, &started](JobContext& context) {
                    ++started;
                    while (!context.isCancelled())
                        QThread::msleep(1);
                    *stopped = true;
                },
                [] { QFAIL("a job destroyed delivers nothing"); });
            QTRY_COMPARE(started.load(), 1);
        }
        QVERIFY(stopped->load());
    }

    // Property: the digits that matter at each scale and a unit that never wraps away from its
    // number; the boundaries round as a reader would (9.95 s is "10 s", never "10.0 s").
    void durationTextKeepsTheDigitsThatMatter_data()
    {
        QTest::addColumn<qint64>("milliseconds");
        QTest::addColumn<QString>("text");
        QTest::newRow("nothing") << qint64(0) << QStringLiteral("0\u00a0ms");
        QTest::newRow("a small survey") << qint64(43) << QStringLiteral("43\u00a0ms");
        QTest::newRow("just under a second") << qint64(999) << QStringLiteral("999\u00a0ms");
        QTest::newRow("one second") << qint64(1000) << QStringLiteral("1.0\u00a0s");
        QTest::newRow("rounds down") << qint64(2449) << QStringLiteral("2.4\u00a0s");
        QTest::newRow("last decimal") << qint64(9949) << QStringLiteral("9.9\u00a0s");
        QTest::newRow("whole seconds") << qint64(9950) << QStringLiteral("10\u00a0s");
        QTest::newRow("under a minute") << qint64(59'499) << QStringLiteral("59\u00a0s");
        QTest::newRow("a minute") << qint64(59'500) << QStringLiteral("1\u00a0min 0\u00a0s");
        QTest::newRow("minutes") << qint64(125'000) << QStringLiteral("2\u00a0min 5\u00a0s");
    }

    void durationTextKeepsTheDigitsThatMatter()
    {
        QFETCH(qint64, milliseconds);
        QFETCH(QString, text);
        QCOMPARE(durationText(milliseconds), text);
    }
};

QTEST_GUILESS_MAIN(TestBackgroundJob)
#include "test_background_job.moc"

// The engine's parallel loop, forEachRowBlock: every block once, and how it stops under a
// CancellationScope.

#include "cancellation.h"
#include "errors.h"
#include "parallel.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace attnlab;

class TestParallel : public QObject {
    Q_OBJECT

private slots:
    void everyRowIsInExactlyOneBlock();
    void aCancelledScopeSkipsTheBlocksNotBegun();
    void aLoopInsideABodyRunsWhole();
    void cleanupTestCase() { setEngineThreads(0); }
};

// Property: without a scope, or under one that never says cancel, the blocks cover [0, n) once
// each, at most blockRows long, on two threads.
void TestParallel::everyRowIsInExactlyOneBlock()
{
    setEngineThreads(2);
    for (const bool scoped : {false, true}) {
        const CancellationScope scope(scoped ? std::function<bool()>([] { return false; })
                                             : std::function<bool()>());
        std::vector<std::atomic<int>> visits(1000);
        std::atomic<bool> tooLong = false;
        forEachRowBlock(1000, 7, [&](Eigen::Index begin, Eigen::Index end) {
            tooLong = tooLong || end - begin > 7 || end <= begin;
            for (Eigen::Index i = begin; i < end; ++i)
                ++visits[std::size_t(i)];
        });
        QVERIFY(!tooLong);
        for (std::size_t i = 0; i < visits.size(); ++i)
            QVERIFY2(
                visits[i] == 1,
                qPrintable(QStringLiteral("row %1 visited %2 times").arg(i).arg(visits[i].load())));
    }
}

// Property: when the scope says cancel at a block's start, the blocks not yet begun are skipped
// and the loop throws Cancelled. The check is called on the calling thread only (it need not be
// thread-safe: this one counts with a plain int) and never again once it said cancel.
void TestParallel::aCancelledScopeSkipsTheBlocksNotBegun()
{
    setEngineThreads(2);
    const std::thread::id caller = std::this_thread::get_id();
    int polls = 0;
    bool otherThread = false;
    std::atomic<int> blocksRun = 0;
    {
        const CancellationScope scope([&] {
            otherThread = otherThread || std::this_thread::get_id() != caller;
            return ++polls == 3;
        });
        QVERIFY_THROWS_EXCEPTION(Cancelled,
                                 forEachRowBlock(1000, 1, [&](Eigen::Index, Eigen::Index) {
                                     ++blocksRun;
                                     std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                 }));
    }
    QVERIFY(!otherThread);
    QCOMPARE(polls, 3);
    // Two blocks on the calling thread before its third poll, and what the other thread began
    // in that time (a few of 1 ms each), not all 1000.
    QVERIFY2(blocksRun >= 2 && blocksRun < 1000, qPrintable(QString::number(blocksRun)));
}

// Property: a loop inside another loop's body neither polls nor throws (an exception leaving an
// OpenMP region ends the program): on one thread, with a scope that says cancel at its second
// poll, the outer loop's first block runs its inner loop of 10 blocks whole, and the outer loop
// stops at its second block.
void TestParallel::aLoopInsideABodyRunsWhole()
{
    setEngineThreads(1);
    int polls = 0;
    int innerBlocks = 0;
    const CancellationScope scope([&polls] { return ++polls == 2; });
    QVERIFY_THROWS_EXCEPTION(Cancelled, forEachRowBlock(4, 1, [&](Eigen::Index, Eigen::Index) {
                                 forEachRowBlock(
                                     10, 1, [&](Eigen::Index, Eigen::Index) { ++innerBlocks; });
                             }));
    QCOMPARE(polls, 2);
    QCOMPARE(innerBlocks, 10);
}

QTEST_GUILESS_MAIN(TestParallel)
#include "test_parallel.moc"

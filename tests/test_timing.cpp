// The timing sweep (core/sweeps/timing_sweep.h): the slope fit and the crossover on synthetic
// curves, the log-spaced lengths, the flop and working-set models, a short real sweep,
// cancellation and the memory budget.

#include "allocation_peak.h"
#include "timing_support.h"

#include <thread>

using namespace attnlab;
using namespace attnlab::test;

class TestTiming : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void logLogSlopeRecoversExponents_data();
    void logLogSlopeRecoversExponents();
    void logLogSlopeNeedsTwoUsablePoints();
    void fittedSlopeUsesTheOkPointsOfOneMethod();
    void crossoverOfPowerLaws();
    void crossoverInterpolatesInLogLog();
    void crossoverNeverOrEverywhere();
    void crossoverTakesTheLastCrossing();
    void logSpacedLengths_data();
    void logSpacedLengths();
    void logSpacedLengthsRefusals();
    void flopsAndWorkingSetModels();
    void shortRealSweep();
    void cancelStopsPromptlyAndKeepsFinishedPoints();
    void cancelStopsTheRunInProgress();
    void cancelledBeforeStartRunsNothing();
    void memoryBudgetSkipsPoints();
    void allocationPeakCountsTheBlocksHeldAtOnce();
    void measuredPeakHoldsInputsAndOutputAndGrowsWithLength();
    void invalidSpecIsRefused();

private:
    QTemporaryDir m_dir;
};

// ---------------------------------------------------------------------------------------------
// Fits

// Property: on t = c L^k (L = 64 .. 65536, doubling) the log-log least-squares slope is k, to
// rounding without noise; with multiplicative noise exp(0.05 N(0, 1)) (fixed seed) within 4
// standard errors of the slope, 4 * 0.05 / sqrt(sum (log L - mean)^2) = 0.028.
void TestTiming::logLogSlopeRecoversExponents_data()
{
    QTest::addColumn<double>("exponent");
    QTest::addColumn<double>("noise");
    for (const double k : {1.0, 2.0, 1.5}) {
        QTest::addRow("k=%g", k) << k << 0.0;
        QTest::addRow("k=%g noisy", k) << k << 0.05;
    }
}

void TestTiming::logLogSlopeRecoversExponents()
{
    QFETCH(double, exponent);
    QFETCH(double, noise);
    Rng rng(7, RandomStream::RandomInput);
    std::vector<double> lengths, seconds;
    double meanLog = 0;
    for (double length = 64; length <= 65536; length *= 2) {
        lengths.push_back(length);
        seconds.push_back(3e-9 * std::pow(length, exponent) * std::exp(noise * rng.normal()));
        meanLog += std::log(length);
    }
    meanLog /= double(lengths.size());
    double spread = 0;
    for (const double length : lengths)
        spread += (std::log(length) - meanLog) * (std::log(length) - meanLog);
    const double tolerance = noise == 0 ? 1e-9 : 4 * noise / std::sqrt(spread);
    QVERIFY(tolerance <= 0.03);
    const double slope = logLogSlope(lengths, seconds);
    QVERIFY2(std::abs(slope - exponent) <= tolerance,
             qPrintable(QStringLiteral("slope %1, exponent %2").arg(slope).arg(exponent)));
}

// Property: fewer than two points with a logarithm (positive, finite) give NaN; such points are
// left out of the fit.
void TestTiming::logLogSlopeNeedsTwoUsablePoints()
{
    QVERIFY(std::isnan(logLogSlope({}, {})));
    QVERIFY(std::isnan(logLogSlope({128}, {1e-3})));
    QVERIFY(std::isnan(logLogSlope({128, 256}, {1e-3, kNaN})));
    QVERIFY(std::isnan(logLogSlope({128, 128}, {1e-3, 2e-3})));  // no spread in L
    const double slope = logLogSlope({128, 256, 512, 1024}, {1e-3, kNaN, 4e-3, 0});
    QVERIFY(std::abs(slope - 1) <= 1e-12);
}

// Property: fittedSlope fits the Ok points of the method asked for only: skipped and cancelled
// points (NaN times), other methods and the causal variant do not count.
void TestTiming::fittedSlopeUsesTheOkPointsOfOneMethod()
{
    const TimedMethod causal{Method::FavorPositive, true};
    SweepResult result;
    result.spec.methods = {kExact, kFavor, causal};
    for (const Eigen::Index length : {256, 512, 1024, 2048}) {
        const double l = double(length);
        result.points.push_back(point(kExact, length, 1e-10 * l * l));
        result.points.push_back(point(kFavor, length, 1e-7 * l));
        result.points.push_back(point(causal, length, 1e-9 * std::pow(l, 1.5)));
    }
    result.points.push_back(point(kExact, 4096, kNaN, PointStatus::SkippedMemory));
    result.points.push_back(point(kFavor, 4096, kNaN, PointStatus::Cancelled));
    QVERIFY(std::abs(fittedSlope(result, kExact) - 2) <= 1e-12);
    QVERIFY(std::abs(fittedSlope(result, kFavor) - 1) <= 1e-12);
    QVERIFY(std::abs(fittedSlope(result, causal) - 1.5) <= 1e-12);
    QVERIFY(std::isnan(fittedSlope(result, {Method::Elu, false})));
}

// Property: exact t = 1e-9 L^2 and linear t = 1e-6 L are equal at L = 1000, between the
// measured 512 and 1024; both are straight lines in log-log, so the interpolation is exact.
void TestTiming::crossoverOfPowerLaws()
{
    const SweepResult result = twoCurves(
        {256, 512, 1024, 2048, 4096}, [](double l) { return 1e-9 * l * l; },
        [](double l) { return 1e-6 * l; });
    const double crossover = crossoverLength(result, kFavor, kExact);
    QVERIFY2(std::abs(crossover - 1000) <= 1e-9, qPrintable(QString::number(crossover)));
}

// Property: between the two measured lengths L0 < L1 where the sign of
// f = log t_linear - log t_exact changes, the crossover is
// exp(log L0 + (log L1 - log L0) f0 / (f0 - f1)), recomputed here from the curves.
void TestTiming::crossoverInterpolatesInLogLog()
{
    const std::vector<Eigen::Index> lengths = {128, 256, 512, 1024};
    const std::vector<double> exact = {1e-4, 3e-4, 1.1e-3, 5e-3};
    const std::vector<double> linear = {4e-4, 6e-4, 9e-4, 1.5e-3};
    SweepResult result;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        result.points.push_back(point(kExact, lengths[i], exact[i]));
        result.points.push_back(point(kFavor, lengths[i], linear[i]));
    }
    const double f0 = std::log(linear[1] / exact[1]);  // at 256: slower
    const double f1 = std::log(linear[2] / exact[2]);  // at 512: faster
    QVERIFY(f0 > 0 && f1 < 0);
    const double x0 = std::log(256.0), x1 = std::log(512.0);
    const double expected = std::exp(x0 + (x1 - x0) * f0 / (f0 - f1));
    QVERIFY(expected > 256 && expected < 512);
    QVERIFY(std::abs(crossoverLength(result, kFavor, kExact) - expected) <= 1e-9 * expected);
}

// Property: a linear curve slower at every length gives NaN; faster at every length gives the
// smallest length; a missing curve, or no length where both are Ok, gives NaN.
void TestTiming::crossoverNeverOrEverywhere()
{
    const std::vector<Eigen::Index> lengths = {128, 256, 512};
    const SweepResult never = twoCurves(
        lengths, [](double l) { return 1e-6 * l; }, [](double l) { return 2e-6 * l; });
    QVERIFY(std::isnan(crossoverLength(never, kFavor, kExact)));
    const SweepResult everywhere = twoCurves(
        lengths, [](double l) { return 1e-9 * l * l; }, [](double l) { return 1e-9 * l; });
    QCOMPARE(crossoverLength(everywhere, kFavor, kExact), 128.0);
    QVERIFY(std::isnan(crossoverLength(everywhere, {Method::Elu, false}, kExact)));
    SweepResult disjoint;
    disjoint.points = {point(kExact, 128, 1), point(kFavor, 256, 0.1),
                       point(kExact, 256, kNaN, PointStatus::SkippedMemory)};
    QVERIFY(std::isnan(crossoverLength(disjoint, kFavor, kExact)));
}

// Property: when noise makes the curves cross more than once, the crossover is the last one,
// after which the linear method stays faster; if it is slower at the largest length, NaN.
void TestTiming::crossoverTakesTheLastCrossing()
{
    SweepResult result;
    // (t_exact, t_linear): faster at 128 (noise), slower at 256 and 512, faster from 1024 on.
    const std::vector<std::pair<double, double>> times = {
        {2e-4, 1e-4}, {2e-4, 3e-4}, {4e-4, 5e-4}, {2e-3, 1e-3}, {8e-3, 2e-3}};
    Eigen::Index length = 128;
    for (const auto& [exact, linear] : times) {
        result.points.push_back(point(kExact, length, exact));
        result.points.push_back(point(kFavor, length, linear));
        length *= 2;
    }
    const double f0 = std::log(5e-4 / 4e-4), f1 = std::log(1e-3 / 2e-3);
    const double expected = std::exp(std::log(512.0) + std::log(2.0) * f0 / (f0 - f1));
    QVERIFY(std::abs(crossoverLength(result, kFavor, kExact) - expected) <= 1e-9 * expected);
    result.points.push_back(point(kExact, 4096, 1e-2));
    result.points.push_back(point(kFavor, 4096, 2e-2));
    QVERIFY(std::isnan(crossoverLength(result, kFavor, kExact)));
}

// ---------------------------------------------------------------------------------------------
// Lengths

// Property: the lengths run from the rounded minimum to the rounded maximum, strictly
// ascending, each a multiple of 16 (at least 16); from one power of two to another, there are
// pointsPerOctave lengths per doubling, pointsPerOctave * octaves + 1 in all (after rounding
// duplicates away, at most that many).
namespace {

// A call logSpacedLengths(minimum, maximum, perOctave) and the first and last lengths and the
// count it must give (count -1: at most the count of the octaves).
struct LengthsCase {
    qint64 minimum;
    qint64 maximum;
    int perOctave;
    qint64 first;
    qint64 last;
    int count;
};

}  // namespace

Q_DECLARE_METATYPE(LengthsCase)

void TestTiming::logSpacedLengths_data()
{
    QTest::addColumn<LengthsCase>("request");
    QTest::newRow("128:65536") << LengthsCase{
        .minimum = 128, .maximum = 65536, .perOctave = 1, .first = 128, .last = 65536, .count = 10};
    QTest::newRow("256:4096, 2 per octave") << LengthsCase{
        .minimum = 256, .maximum = 4096, .perOctave = 2, .first = 256, .last = 4096, .count = 9};
    QTest::newRow("1024:1048576, 3 per octave") << LengthsCase{.minimum = 1024,
                                                               .maximum = 1048576,
                                                               .perOctave = 3,
                                                               .first = 1024,
                                                               .last = 1048576,
                                                               .count = 31};
    QTest::newRow("100:1000 rounds") << LengthsCase{
        .minimum = 100, .maximum = 1000, .perOctave = 1, .first = 96, .last = 1008, .count = 5};
    QTest::newRow("16:64, 8 per octave: duplicates dropped") << LengthsCase{
        .minimum = 16, .maximum = 64, .perOctave = 8, .first = 16, .last = 64, .count = -1};
    QTest::newRow("1:1") << LengthsCase{
        .minimum = 1, .maximum = 1, .perOctave = 1, .first = 16, .last = 16, .count = 1};
    QTest::newRow("4096:4096") << LengthsCase{
        .minimum = 4096, .maximum = 4096, .perOctave = 4, .first = 4096, .last = 4096, .count = 1};
}

void TestTiming::logSpacedLengths()
{
    QFETCH(LengthsCase, request);
    const std::vector<Eigen::Index> lengths =
        attnlab::logSpacedLengths(request.minimum, request.maximum, request.perOctave);
    QVERIFY(!lengths.empty());
    QCOMPARE(qint64(lengths.front()), request.first);
    QCOMPARE(qint64(lengths.back()), request.last);
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        QVERIFY(lengths[i] >= 16 && lengths[i] % 16 == 0);
        if (i > 0)
            QVERIFY(lengths[i] > lengths[i - 1]);
    }
    if (request.count >= 0) {
        QCOMPARE(int(lengths.size()), request.count);
    } else {
        QVERIFY(int(lengths.size()) <= request.perOctave * 2 + 1);
        QVERIFY(lengths == (std::vector<Eigen::Index>{16, 32, 48, 64}));
    }
    // Consecutive lengths are about 2^(1 / perOctave) apart (up to the rounding to 16).
    for (std::size_t i = 1; i + 1 < lengths.size(); ++i) {
        const double ratio = double(lengths[i]) / double(lengths[i - 1]);
        if (lengths[i - 1] >= 1024)
            QVERIFY(std::abs(ratio - std::exp2(1.0 / request.perOctave)) <= 0.02);
    }
}

// Property: a minimum below 1, a maximum below the minimum or no points per octave give no
// lengths.
void TestTiming::logSpacedLengthsRefusals()
{
    QVERIFY(attnlab::logSpacedLengths(0, 100).empty());
    QVERIFY(attnlab::logSpacedLengths(10, 5).empty());
    QVERIFY(attnlab::logSpacedLengths(16, 64, 0).empty());
}

// ---------------------------------------------------------------------------------------------
// Sweeps

// Property: the flops follow docs/design.md 5.1 (exact 4 L^2 d, half when causal; random
// features 2 L m d per side plus 4 L C d_v, C = m, 2m for hyperbolic and trig, d for elu+1), and
// the working set grows as L^2 for materialised exact and as L for the others, always above the
// inputs and output (4 L d floats).
void TestTiming::flopsAndWorkingSetModels()
{
    const double l = 4096, d = 64, m = 256;
    QCOMPARE(methodFlops({Method::ExactStreaming, false}, 4096, 64, 256), 4 * l * l * d);
    QCOMPARE(methodFlops({Method::ExactMaterialised, true}, 4096, 64, 256), 2 * l * l * d);
    QCOMPARE(methodFlops({Method::FavorPositive, false}, 4096, 64, 256),
             4 * l * m * d + 4 * l * m * d);
    QCOMPARE(methodFlops({Method::FavorHyperbolic, true}, 4096, 64, 256),
             4 * l * m * d + 4 * l * 2 * m * d);
    QCOMPARE(methodFlops({Method::FavorTrig, false}, 4096, 64, 256),
             4 * l * m * d + 4 * l * 2 * m * d);
    QCOMPARE(methodFlops({Method::Elu, false}, 4096, 64, 256), 4 * l * d * d);
    for (const MethodInfo& info : methodRegistry()) {
        const Method algorithm = info.method;
        for (const bool causal : {false, true}) {
            const TimedMethod method{algorithm, causal};
            const double small = workingSetBytes(method, 1 << 18, 64, 256, 2);
            const double large = workingSetBytes(method, 1 << 20, 64, 256, 2);
            const double growth = algorithm == Method::ExactMaterialised ? 16 : 4;
            QVERIFY2(std::abs(large / small - growth) <= 0.05 * growth,
                     qPrintable(QStringLiteral("%1: %2").arg(method.label()).arg(large / small)));
            QVERIFY(small > 4.0 * (1 << 18) * 64 * sizeof(float));
        }
    }
}

// Property: a short real sweep (lengths 64, 128; five methods; d 16, m 32, 2 repetitions) gives
// Ok points in order (lengths ascending, every method at each) with positive finite times,
// min <= median <= max, gflops = methodFlops / median, a positive working set and a peak >= 0
// (NaN where it cannot be measured); progress reports every point once, in order; the CSV is
// well-formed.
void TestTiming::shortRealSweep()
{
    SweepSpec spec;
    spec.methods = {{Method::ExactStreaming, false},
                    {Method::ExactMaterialised, false},
                    {Method::FavorPositive, false},
                    {Method::Elu, false},
                    {Method::FavorPositive, true}};
    spec.lengths = {64, 128};
    spec.headDim = 16;
    spec.features = 32;
    spec.repetitions = 2;
    int calls = 0;
    const SweepResult result = runSweep(spec, [&](const SweepPoint& p, int done, int total) {
        ++calls;
        QCOMPARE(done, calls);
        QCOMPARE(total, 10);
        QCOMPARE(p.status, PointStatus::Ok);
    });
    QCOMPARE(calls, 10);
    QVERIFY(result.sgemmGflops > 0 && std::isfinite(result.sgemmGflops));
    QVERIFY(result.threads >= 1);
    QCOMPARE(result.points.size(), std::size_t(10));
    for (std::size_t i = 0; i < result.points.size(); ++i) {
        const SweepPoint& p = result.points[i];
        const QString where = QStringLiteral("%1 L=%2").arg(p.method.label()).arg(p.length);
        QVERIFY2(p.method == spec.methods[i % 5], qPrintable(where));
        QCOMPARE(p.length, spec.lengths[i / 5]);
        QCOMPARE(p.status, PointStatus::Ok);
        QVERIFY2(p.secondsMin > 0 && std::isfinite(p.secondsMax), qPrintable(where));
        QVERIFY2(p.secondsMin <= p.secondsMedian && p.secondsMedian <= p.secondsMax,
                 qPrintable(where));
        const double flops = methodFlops(p.method, p.length, 16, 32);
        QVERIFY2(std::abs(p.gflops - flops / p.secondsMedian * 1e-9) <= 1e-12 * p.gflops,
                 qPrintable(where));
        QVERIFY(p.workingSetBytes > 0);
        if (allocationsCounted())
            QVERIFY2(p.peakBytes >= 0, qPrintable(where));
        else
            QVERIFY2(std::isnan(p.peakBytes) || p.peakBytes >= 0, qPrintable(where));
    }
    const QString problem = csvProblem(sweepCsv(result), 10);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    // The causal flag and m (empty for the maps that draw no W) as documented.
    const QList<QByteArray> lines = sweepCsv(result).split('\n');
    QVERIFY(lines[2].startsWith("exact-streaming,0,64,16,,"));
    QVERIFY(lines[4].startsWith("favor-positive,0,64,16,32,"));
    QVERIFY(lines[5].startsWith("elu,0,64,16,,"));
    QVERIFY(lines[6].startsWith("favor-positive,1,64,16,32,"));
}

// Property: when cancelled() turns true (here at its first poll after two points were reported)
// the sweep returns before another run starts: within a tenth of the time the points left would
// take even at the machine's sgemm rate; cancelled() is not polled again; the points finished
// before stay Ok, the others are Cancelled with NaN times, and progress still reports every
// point.
void TestTiming::cancelStopsPromptlyAndKeepsFinishedPoints()
{
    SweepSpec spec;
    spec.methods = {{Method::ExactStreaming, false}, {Method::ExactMaterialised, false}};
    spec.lengths = {128, 256, 4096, 8192};
    spec.headDim = 64;
    spec.repetitions = 2;
    int reported = 0;
    int pollsAfter = 0;
    QElapsedTimer sinceCancel;
    const auto cancelled = [&] {
        if (reported < 2)
            return false;
        if (sinceCancel.isValid())
            ++pollsAfter;
        else
            sinceCancel.start();
        return true;
    };
    const SweepResult result = runSweep(
        spec, [&](const SweepPoint&, int done, int) { reported = done; }, cancelled);
    const double lateSeconds = double(sinceCancel.nsecsElapsed()) * 1e-9;
    QVERIFY(sinceCancel.isValid());
    QCOMPARE(pollsAfter, 0);
    QCOMPARE(reported, 8);
    QCOMPARE(result.points.size(), std::size_t(8));
    double flopsLeft = 0;
    for (std::size_t i = 0; i < result.points.size(); ++i) {
        const SweepPoint& p = result.points[i];
        if (i < 2) {
            QCOMPARE(p.status, PointStatus::Ok);
            QVERIFY(p.secondsMedian > 0);
        } else {
            QCOMPARE(p.status, PointStatus::Cancelled);
            QVERIFY(std::isnan(p.secondsMedian) && std::isnan(p.secondsMin) &&
                    std::isnan(p.secondsMax) && std::isnan(p.gflops) && std::isnan(p.peakBytes));
            flopsLeft += 3 * methodFlops(p.method, p.length, spec.headDim, spec.features);
        }
    }
    const double secondsLeft = flopsLeft / (result.sgemmGflops * 1e9);
    QVERIFY2(lateSeconds < 0.1 * secondsLeft,
             qPrintable(QStringLiteral("returned %1 s after the cancel; the points left take at "
                                       "least %2 s")
                            .arg(lateSeconds)
                            .arg(secondsLeft)));
    const QList<QByteArray> lines = sweepCsv(result).split('\n');
    QVERIFY(lines[4].endsWith(",,,,,,cancelled"));
}

// Property: a cancel that arrives inside a run stops it, not only the runs after it: exact
// streaming attention at L = 16,384 (128 blocks of 128 queries) is cancelled at the second poll
// inside its warm-up run and the sweep returns within a quarter of the time that run takes
// uncancelled (measured first, in the same test; it returned only when the run ended before the
// engine's loops polled). cancelled() is polled on the calling thread only.
void TestTiming::cancelStopsTheRunInProgress()
{
    SweepSpec spec;
    spec.methods = {{Method::ExactStreaming, false}};
    spec.lengths = {16384};
    spec.headDim = 64;
    spec.repetitions = 1;
    const SweepResult whole = runSweep(spec);
    QCOMPARE(whole.points[0].status, PointStatus::Ok);
    const double runSeconds = whole.points[0].secondsMedian;

    // Polls: 1 before the sgemm measurement, 2 the inputs, 3 before the warm-up run, then the
    // engine's loops inside it.
    const std::thread::id caller = std::this_thread::get_id();
    bool otherThread = false;
    int polls = 0;
    QElapsedTimer sinceCancel;
    const SweepResult result = runSweep(spec, {}, [&] {
        otherThread = otherThread || std::this_thread::get_id() != caller;
        if (++polls == 5)
            sinceCancel.start();
        return polls >= 5;
    });
    const double lateSeconds = double(sinceCancel.nsecsElapsed()) * 1e-9;
    QVERIFY(!otherThread);
    QCOMPARE(polls, 5);
    QCOMPARE(result.points[0].status, PointStatus::Cancelled);
    QVERIFY(std::isfinite(result.sgemmGflops));
    QVERIFY2(lateSeconds < 0.25 * runSeconds,
             qPrintable(QStringLiteral("returned %1 s after the cancel; a run takes %2 s")
                            .arg(lateSeconds)
                            .arg(runSeconds)));
}

// Property: a sweep cancelled before it starts measures nothing: sgemm is NaN and every point
// is Cancelled.
void TestTiming::cancelledBeforeStartRunsNothing()
{
    SweepSpec spec;
    spec.methods = {{Method::ExactMaterialised, false}};
    spec.lengths = {1 << 20};
    QElapsedTimer timer;
    timer.start();
    const SweepResult result = runSweep(spec, {}, [] { return true; });
    QVERIFY(timer.elapsed() < 1000);
    QVERIFY(std::isnan(result.sgemmGflops));
    QCOMPARE(result.points.size(), std::size_t(1));
    QCOMPARE(result.points[0].status, PointStatus::Cancelled);
}

// Property: a point whose working-set model exceeds the budget is SkippedMemory with NaN times
// and is not run; the others run. With a 64 MiB budget at L = 8192, d = 16, materialised exact
// (P alone is 256 MiB) is skipped and streaming exact (about 2 MiB) is Ok; with a 1 MiB budget
// both are skipped. At L = 2^20 materialised exact (4 TiB) is skipped under the default budget,
// without making the inputs: the sweep never holds their 192 MiB (Q, K, V of 2^20 x 16 floats;
// it holds the sgemm yardstick's 27 MiB).
void TestTiming::memoryBudgetSkipsPoints()
{
    SweepSpec spec;
    spec.methods = {{Method::ExactMaterialised, false}, {Method::ExactStreaming, true}};
    spec.lengths = {8192};
    spec.headDim = 16;
    spec.repetitions = 1;
    for (const qint64 budget : {qint64(64) << 20, qint64(1) << 20}) {
        spec.budget = MemoryBudget(budget);
        const SweepResult result = runSweep(spec);
        QCOMPARE(result.points.size(), std::size_t(2));
        for (const SweepPoint& p : result.points) {
            const bool over = p.workingSetBytes > double(budget);
            QCOMPARE(p.status, over ? PointStatus::SkippedMemory : PointStatus::Ok);
            QCOMPARE(std::isnan(p.secondsMedian), over);
            QCOMPARE(std::isnan(p.gflops), over);
        }
        QCOMPARE(result.points[0].status, PointStatus::SkippedMemory);
        QCOMPARE(result.points[1].status,
                 budget > (qint64(32) << 20) ? PointStatus::Ok : PointStatus::SkippedMemory);
        const QString problem = csvProblem(sweepCsv(result), 2);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QVERIFY(sweepCsv(result).contains(",skipped-memory\n"));
    }

    spec.budget = MemoryBudget();
    spec.lengths = {1 << 20};
    spec.methods = {{Method::ExactMaterialised, false}};
    const AllocationPeak peak;
    const SweepResult huge = runSweep(spec);
    QCOMPARE(huge.points[0].status, PointStatus::SkippedMemory);
    if (allocationsCounted())
        QVERIFY2(peak.bytes() < double(64 << 20), qPrintable(QString::number(peak.bytes())));
}

// Property: AllocationPeak gives the most bytes held at once since it started, above what was
// held then: blocks of 1 and 2 MiB held together, then freed, then one of 2.5 MiB give 3 MiB
// (plus the C library's few bytes of rounding per block); a block of 8 MiB freed before it
// started (which the C library keeps for reuse) does not count, and neither do blocks held
// across it.
void TestTiming::allocationPeakCountsTheBlocksHeldAtOnce()
{
    if (!allocationsCounted())
        QSKIP("this build does not count allocations");
    reuseFreedWorkingMemory();
    constexpr Eigen::Index kMiBFloats = (1 << 20) / sizeof(float);
    double sum = Eigen::VectorXf::Ones(8 * kMiBFloats).sum();
    const Eigen::VectorXf heldAcross = Eigen::VectorXf::Ones(4 * kMiBFloats);
    double peak = 0;
    {
        const AllocationPeak allocations;
        {
            const Eigen::VectorXf first = Eigen::VectorXf::Ones(kMiBFloats);
            const Eigen::VectorXf second = Eigen::VectorXf::Ones(2 * kMiBFloats);
            sum += first.sum() + second.sum();
        }
        const Eigen::VectorXf third = Eigen::VectorXf::Ones(5 * kMiBFloats / 2);
        sum += third.sum();
        peak = allocations.bytes();
    }
    QCOMPARE(sum, double(8 + 1 + 2 + 2.5) * kMiBFloats);
    QVERIFY(heldAcross.sum() > 0);
    const double expected = 3.0 * (1 << 20);
    QVERIFY2(peak >= expected && peak <= expected + 4096,
             qPrintable(QStringLiteral("peak %1 bytes, expected %2").arg(peak).arg(expected)));
}

// Property: the measured peak of a run is its own working set: at least its inputs and output
// (Q, K, V and O, 4 L d floats), within twice the working-set model, and so growing with L as the
// model does: exact streaming at L = 512 and 4096 (d = 64, where Q, K, V and O are 0.5 and
// 4 MiB). The blocks the program keeps for reuse (reuseFreedWorkingMemory) from the first length
// do not count at the second. (The resident-memory probe it replaces measured 0.15-0.8 MiB,
// falling with L.)
void TestTiming::measuredPeakHoldsInputsAndOutputAndGrowsWithLength()
{
    if (!allocationsCounted())
        QSKIP("this build does not count allocations");
    reuseFreedWorkingMemory();
    SweepSpec spec;
    spec.methods = {{Method::ExactStreaming, false}};
    spec.lengths = {512, 4096};
    spec.headDim = 64;
    spec.repetitions = 1;
    const SweepResult result = runSweep(spec);
    QCOMPARE(result.points.size(), std::size_t(2));
    for (const SweepPoint& p : result.points) {
        QCOMPARE(p.status, PointStatus::Ok);
        const double inputsAndOutput = 4.0 * double(p.length) * spec.headDim * sizeof(float);
        const QString where = QStringLiteral("L = %1: peak %2, Q K V O %3, model %4")
                                  .arg(p.length)
                                  .arg(formatBytes(p.peakBytes), formatBytes(inputsAndOutput),
                                       formatBytes(p.workingSetBytes));
        QVERIFY2(p.peakBytes >= inputsAndOutput, qPrintable(where));
        QVERIFY2(p.peakBytes <= 2 * p.workingSetBytes, qPrintable(where));
    }
    QVERIFY2(result.points[1].peakBytes > 4 * result.points[0].peakBytes,
             qPrintable(QStringLiteral("%1 at L = 512, %2 at L = 4096")
                            .arg(formatBytes(result.points[0].peakBytes),
                                 formatBytes(result.points[1].peakBytes))));
}

// Property: a spec that cannot run (d, m, repetitions below 1, lengths not ascending) is refused
// with InputError naming the field, before anything is measured.
void TestTiming::invalidSpecIsRefused()
{
    const auto refusal = [](const std::function<void(SweepSpec&)>& change) {
        SweepSpec spec;
        spec.methods = {kExact};
        spec.lengths = {64};
        change(spec);
        return thrownMessage<InputError>([&] { runSweep(spec); });
    };
    QVERIFY(refusal([](SweepSpec& s) { s.headDim = 0; }).startsWith("d "));
    QVERIFY(refusal([](SweepSpec& s) { s.features = 0; }).startsWith("features "));
    QVERIFY(refusal([](SweepSpec& s) { s.repetitions = 0; }).startsWith("repetitions "));
    QVERIFY(refusal([](SweepSpec& s) { s.lengths = {128, 64}; }).startsWith("lengths "));
    QVERIFY(refusal([](SweepSpec& s) { s.lengths = {0}; }).startsWith("lengths[0] "));
}

QTEST_GUILESS_MAIN(TestTiming)
#include "test_timing.moc"

// The timing sweep (core/sweeps/timing_sweep.h) and `attention-lab bench`: the slope fit and the
// crossover on synthetic curves, the log-spaced lengths, a short real sweep and its CSV,
// cancellation, the memory budget, JSON round trips, and the command line run as a process.

#include "app_process.h"
#include "errors.h"
#include "attention/random.h"
#include "sessions/session.h"
#include "test_support.h"
#include "sweeps/timing_sweep.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

using namespace attnlab;
using namespace attnlab::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const QByteArray kHeader =
    "method,causal,L,d,m,threads,reps,seconds_median,seconds_min,seconds_max,gflops,peak_bytes,"
    "status";

// Runs `attention-lab bench` with `arguments` for at most 60 s.
AppRun bench(const QStringList& arguments)
{
    return runAttentionLab(QStringList{"bench"} + arguments, QString(), 60000);
}

QByteArray readBytes(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool sameNumber(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// A point of a hand-made result: Ok with the given median time, or NaN times with another status.
SweepPoint point(TimedMethod method, Eigen::Index length, double seconds,
                 PointStatus status = PointStatus::Ok)
{
    SweepPoint p;
    p.method = method;
    p.length = length;
    const double time = status == PointStatus::Ok ? seconds : kNaN;
    p.secondsMedian = p.secondsMin = p.secondsMax = time;
    p.gflops = status == PointStatus::Ok ? 1.0 : kNaN;
    p.workingSetBytes = 1000;
    p.peakBytes = kNaN;
    p.status = status;
    return p;
}

const TimedMethod kExact{Method::ExactStreaming, false};
const TimedMethod kFavor{Method::FavorPositive, false};

// A result with the two curves t_exact(L) and t_linear(L) at the given lengths.
SweepResult twoCurves(const std::vector<Eigen::Index>& lengths,
                      const std::function<double(double)>& exact,
                      const std::function<double(double)>& linear)
{
    SweepResult result;
    result.spec.methods = {kExact, kFavor};
    result.spec.lengths = lengths;
    for (const Eigen::Index length : lengths) {
        result.points.push_back(point(kExact, length, exact(double(length))));
        result.points.push_back(point(kFavor, length, linear(double(length))));
    }
    return result;
}

// What is wrong with a sweep CSV (empty when nothing): a first line "# sgemm_gflops=<positive
// number>", the documented header, `rows` rows of 13 fields: a method name, causal 0/1, integer
// L, d, threads, reps, m integer or empty, times and GFLOP/s positive numbers (min <= median <=
// max) for ok rows and empty otherwise, peak bytes an integer or empty, a documented status.
QString csvProblem(const QByteArray& csv, int rows)
{
    if (!csv.endsWith('\n'))
        return QStringLiteral("no final newline");
    const QList<QByteArray> lines = csv.chopped(1).split('\n');
    static const QRegularExpression rate(QStringLiteral("^# sgemm_gflops=([-+0-9.eE]+)$"));
    const QRegularExpressionMatch match = rate.match(QString::fromLatin1(lines.value(0)));
    bool ok = false;
    if (!match.hasMatch() || !(match.captured(1).toDouble(&ok) > 0) || !ok)
        return QStringLiteral("first line: %1").arg(QString::fromLatin1(lines.value(0)));
    if (lines.value(1) != kHeader)
        return QStringLiteral("header: %1").arg(QString::fromLatin1(lines.value(1)));
    if (lines.size() != rows + 2)
        return QStringLiteral("%1 rows instead of %2").arg(lines.size() - 2).arg(rows);
    const auto isInteger = [](const QByteArray& field) {
        bool ok = false;
        return field.toLongLong(&ok) >= 0 && ok;
    };
    const auto positive = [](const QByteArray& field) {
        bool ok = false;
        const double value = field.toDouble(&ok);
        return ok && value > 0 && std::isfinite(value);
    };
    for (int r = 2; r < lines.size(); ++r) {
        const QList<QByteArray> f = lines[r].split(',');
        const QString where = QStringLiteral("row %1 \"%2\": ").arg(r - 1).arg(lines[r]);
        if (f.size() != 13)
            return where + QStringLiteral("%1 fields").arg(f.size());
        Method algorithm;
        if (!parseMethod(QString::fromLatin1(f[0]), &algorithm))
            return where + QStringLiteral("method");
        if (f[1] != "0" && f[1] != "1")
            return where + QStringLiteral("causal");
        for (const int i : {2, 3, 5, 6})
            if (!isInteger(f[i]) || f[i].toLongLong() < 1)
                return where + QStringLiteral("field %1 is not a positive integer").arg(i + 1);
        if (!f[4].isEmpty() && !isInteger(f[4]))
            return where + QStringLiteral("m");
        PointStatus status;
        if (!parsePointStatus(QString::fromLatin1(f[12]), &status))
            return where + QStringLiteral("status");
        if (status == PointStatus::Ok) {
            for (const int i : {7, 8, 9, 10})
                if (!positive(f[i]))
                    return where + QStringLiteral("field %1 is not a positive number").arg(i + 1);
            if (!(f[8].toDouble() <= f[7].toDouble() && f[7].toDouble() <= f[9].toDouble()))
                return where + QStringLiteral("not min <= median <= max");
            if (!f[11].isEmpty() && !isInteger(f[11]))
                return where + QStringLiteral("peak_bytes");
        } else {
            for (const int i : {7, 8, 9, 10, 11})
                if (!f[i].isEmpty())
                    return where + QStringLiteral("field %1 should be empty").arg(i + 1);
        }
    }
    return QString();
}

// Whether this process can reset its peak resident set (Linux with /proc).
bool canMeasurePeak()
{
#ifdef __linux__
    return QFileInfo(QStringLiteral("/proc/self/clear_refs")).isWritable();
#else
    return false;
#endif
}

}  // namespace

class TestTiming : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

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
    void cancelledBeforeStartRunsNothing();
    void memoryBudgetSkipsPoints();
    void invalidSpecIsRefused();

    void jsonRoundTrip();
    void jsonRefusalsNameTheField_data();
    void jsonRefusalsNameTheField();

    void cliWritesCsv();
    void cliCausalAndAll();
    void cliWritesPlotAndSession();
    void cliBadArguments_data();
    void cliBadArguments();
    void cliWithoutOut();
    void cliOutInADirectoryInTheWay();

private:
    QTemporaryDir m_dir;
};

void TestTiming::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

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
void TestTiming::logSpacedLengths_data()
{
    QTest::addColumn<qint64>("minimum");
    QTest::addColumn<qint64>("maximum");
    QTest::addColumn<int>("perOctave");
    QTest::addColumn<qint64>("first");
    QTest::addColumn<qint64>("last");
    QTest::addColumn<int>("count");  // -1: at most the count of the octaves
    QTest::newRow("128:65536") << qint64(128) << qint64(65536) << 1 << qint64(128) << qint64(65536)
                               << 10;
    QTest::newRow("256:4096, 2 per octave") << qint64(256) << qint64(4096) << 2 << qint64(256)
                                            << qint64(4096) << 9;
    QTest::newRow("1024:1048576, 3 per octave") << qint64(1024) << qint64(1048576) << 3
                                                << qint64(1024) << qint64(1048576) << 31;
    QTest::newRow("100:1000 rounds") << qint64(100) << qint64(1000) << 1 << qint64(96)
                                     << qint64(1008) << 5;
    QTest::newRow("16:64, 8 per octave: duplicates dropped")
        << qint64(16) << qint64(64) << 8 << qint64(16) << qint64(64) << -1;
    QTest::newRow("1:1") << qint64(1) << qint64(1) << 1 << qint64(16) << qint64(16) << 1;
    QTest::newRow("4096:4096") << qint64(4096) << qint64(4096) << 4 << qint64(4096)
                               << qint64(4096) << 1;
}

void TestTiming::logSpacedLengths()
{
    QFETCH(qint64, minimum);
    QFETCH(qint64, maximum);
    QFETCH(int, perOctave);
    QFETCH(qint64, first);
    QFETCH(qint64, last);
    QFETCH(int, count);
    const std::vector<Eigen::Index> lengths =
        attnlab::logSpacedLengths(minimum, maximum, perOctave);
    QVERIFY(!lengths.empty());
    QCOMPARE(qint64(lengths.front()), first);
    QCOMPARE(qint64(lengths.back()), last);
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        QVERIFY(lengths[i] >= 16 && lengths[i] % 16 == 0);
        if (i > 0)
            QVERIFY(lengths[i] > lengths[i - 1]);
    }
    if (count >= 0) {
        QCOMPARE(int(lengths.size()), count);
    } else {
        QVERIFY(int(lengths.size()) <= perOctave * 2 + 1);
        QVERIFY(lengths == (std::vector<Eigen::Index>{16, 32, 48, 64}));
    }
    // Consecutive lengths are about 2^(1 / perOctave) apart (up to the rounding to 16).
    for (std::size_t i = 1; i + 1 < lengths.size(); ++i) {
        const double ratio = double(lengths[i]) / double(lengths[i - 1]);
        if (lengths[i - 1] >= 1024)
            QVERIFY(std::abs(ratio - std::exp2(1.0 / perOctave)) <= 0.02);
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

// Property: the flops follow DESIGN.md section 5 (exact 4 L^2 d, half when causal; random
// features 2 L m d per side plus 4 L C d_v, C = m, 2m for hyperbolic and trig, d for elu+1), and
// the working set grows as L^2 for materialised exact and as L for the others, always above the
// inputs and output (4 L d floats).
void TestTiming::flopsAndWorkingSetModels()
{
    const double l = 4096, d = 64, m = 256;
    QCOMPARE(methodFlops({Method::ExactStreaming, false}, 4096, 64, 256), 4 * l * l * d);
    QCOMPARE(methodFlops({Method::ExactMaterialised, true}, 4096, 64, 256),
             2 * l * l * d);
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
    const SweepResult result =
        runSweep(spec, [&](const SweepPoint& p, int done, int total) {
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
        if (canMeasurePeak())
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

// Property: when cancelled() turns true (here at its 10th poll) the sweep returns before another
// run starts: within a tenth of the time the points left would take even at the machine's sgemm
// rate; the points finished before stay Ok, the others are Cancelled with NaN times, and
// progress still reports every point.
void TestTiming::cancelStopsPromptlyAndKeepsFinishedPoints()
{
    SweepSpec spec;
    spec.methods = {{Method::ExactStreaming, false},
                    {Method::ExactMaterialised, false}};
    spec.lengths = {128, 256, 4096, 8192};
    spec.headDim = 64;
    spec.repetitions = 2;
    int polls = 0;
    QElapsedTimer sinceCancel;
    const auto cancelled = [&] {
        if (++polls == 10)
            sinceCancel.start();
        return polls >= 10;
    };
    int reported = 0;
    const SweepResult result = runSweep(
        spec, [&](const SweepPoint&, int done, int) { reported = done; }, cancelled);
    const double lateSeconds = double(sinceCancel.nsecsElapsed()) * 1e-9;
    QVERIFY(sinceCancel.isValid());
    QCOMPARE(polls, 10);  // not polled again after it turned
    QCOMPARE(reported, 8);
    QCOMPARE(result.points.size(), std::size_t(8));
    // Polls: 1 before the sgemm measurement, 2 the inputs of L = 128, 3-5 and 6-8 the warm-up and
    // two runs of its two points, 9 the inputs of 256, 10 the warm-up of its first point.
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
// without making the inputs: the sweep ends within a second or two.
void TestTiming::memoryBudgetSkipsPoints()
{
    SweepSpec spec;
    spec.methods = {{Method::ExactMaterialised, false},
                    {Method::ExactStreaming, true}};
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
    QElapsedTimer timer;
    timer.start();
    const SweepResult huge = runSweep(spec);
    QCOMPARE(huge.points[0].status, PointStatus::SkippedMemory);
#ifdef __SANITIZE_ADDRESS__
    const qint64 bound = 30000;  // AddressSanitizer (scripts/sanitize) slows allocation ~10 times
#else
    const qint64 bound = 3000;
#endif
    QVERIFY2(timer.elapsed() < bound, qPrintable(QString::number(timer.elapsed())));
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

// ---------------------------------------------------------------------------------------------
// JSON

// Property: SweepSpec and SweepResult survive toJson/fromJson unchanged, NaN numbers included
// (written as null).
void TestTiming::jsonRoundTrip()
{
    SweepSpec spec;
    spec.methods = {{Method::FavorTrig, true}, {Method::ExactMaterialised, false}};
    spec.lengths = {128, 4096, 65536};
    spec.headDim = 32;
    spec.features = 128;
    spec.threads = 2;
    spec.repetitions = 5;
    spec.budget = MemoryBudget(qint64(3) << 30);
    const SweepSpec specBack = SweepSpec::fromJson(spec.toJson());
    QVERIFY(specBack.methods == spec.methods);
    QVERIFY(specBack.lengths == spec.lengths);
    QCOMPARE(specBack.headDim, 32);
    QCOMPARE(specBack.features, 128);
    QCOMPARE(specBack.threads, 2);
    QCOMPARE(specBack.repetitions, 5);
    QCOMPARE(specBack.budget.bytes(), qint64(3) << 30);

    SweepResult result;
    result.spec = spec;
    result.sgemmGflops = 87.5;
    result.threads = 2;
    SweepPoint ok = point(spec.methods[0], 128, 1.5e-3);
    ok.secondsMin = 1.25e-3;
    ok.secondsMax = 2e-3;
    ok.gflops = 12.3;
    ok.peakBytes = 4096;
    result.points = {ok, point(spec.methods[1], 65536, kNaN, PointStatus::SkippedMemory),
                     point(spec.methods[0], 65536, kNaN, PointStatus::Cancelled)};
    const SweepResult back = SweepResult::fromJson(result.toJson());
    QCOMPARE(back.sgemmGflops, 87.5);
    QCOMPARE(back.threads, 2);
    QVERIFY(back.spec.lengths == spec.lengths);
    QCOMPARE(back.points.size(), result.points.size());
    for (std::size_t i = 0; i < back.points.size(); ++i) {
        const SweepPoint& a = result.points[i];
        const SweepPoint& b = back.points[i];
        QVERIFY(a.method == b.method);
        QCOMPARE(a.length, b.length);
        QCOMPARE(a.status, b.status);
        for (const auto& [x, y] : {std::pair{a.secondsMedian, b.secondsMedian},
                                   {a.secondsMin, b.secondsMin}, {a.secondsMax, b.secondsMax},
                                   {a.gflops, b.gflops}, {a.workingSetBytes, b.workingSetBytes},
                                   {a.peakBytes, b.peakBytes}})
            QVERIFY2(sameNumber(x, y), qPrintable(QStringLiteral("%1 vs %2").arg(x).arg(y)));
    }
    QVERIFY(result.toJson().value("points").toArray().at(1).toObject().value("seconds_median")
                .isNull());
    result.sgemmGflops = kNaN;
    QVERIFY(std::isnan(SweepResult::fromJson(result.toJson()).sgemmGflops));
}

// Property: fromJson refuses a wrong type or value with InputError, and the message starts with
// the field's path.
void TestTiming::jsonRefusalsNameTheField_data()
{
    QTest::addColumn<QString>("path");  // "spec.<key>" or "points.<key>" to change, or ""
    QTest::addColumn<QJsonValue>("value");
    QTest::addColumn<QString>("named");
    QTest::newRow("d text") << "spec.d" << QJsonValue("64") << "spec.d";
    QTest::newRow("d zero") << "spec.d" << QJsonValue(0) << "spec.d";
    QTest::newRow("features fraction") << "spec.features" << QJsonValue(2.5) << "spec.features";
    QTest::newRow("repetitions zero") << "spec.repetitions" << QJsonValue(0)
                                      << "spec.repetitions";
    QTest::newRow("threads negative") << "spec.threads" << QJsonValue(-1) << "spec.threads";
    QTest::newRow("lengths not array") << "spec.lengths" << QJsonValue(5) << "spec.lengths";
    QTest::newRow("lengths descending") << "spec.lengths" << QJsonValue(QJsonArray{256, 128})
                                        << "spec.lengths[1]";
    QTest::newRow("length text") << "spec.lengths" << QJsonValue(QJsonArray{"x"})
                                 << "spec.lengths[0]";
    QTest::newRow("method unknown")
        << "spec.methods" << QJsonValue(QJsonArray{QJsonObject{{"algorithm", "fast"}}})
        << "spec.methods[0].algorithm";
    QTest::newRow("method causal text")
        << "spec.methods"
        << QJsonValue(QJsonArray{QJsonObject{{"algorithm", "elu"}, {"causal", "yes"}}})
        << "spec.methods[0].causal";
    QTest::newRow("budget zero") << "spec.memory_budget_bytes" << QJsonValue(0)
                                 << "spec.memory_budget_bytes";
    QTest::newRow("sgemm text") << "sgemm_gflops" << QJsonValue("fast") << "sgemm_gflops";
    QTest::newRow("status unknown") << "points.status" << QJsonValue("done")
                                    << "points[0].status";
    QTest::newRow("seconds text") << "points.seconds_median" << QJsonValue("1 ms")
                                  << "points[0].seconds_median";
    QTest::newRow("length zero") << "points.length" << QJsonValue(0) << "points[0].length";
    QTest::newRow("algorithm missing") << "points.algorithm" << QJsonValue(QJsonValue::Undefined)
                                       << "points[0].algorithm";
}

void TestTiming::jsonRefusalsNameTheField()
{
    QFETCH(QString, path);
    QFETCH(QJsonValue, value);
    QFETCH(QString, named);
    SweepResult result;
    result.spec.methods = {kFavor};
    result.spec.lengths = {128};
    result.sgemmGflops = 50;
    result.points = {point(kFavor, 128, 1e-3)};
    QJsonObject json = result.toJson();
    const auto set = [&](QJsonObject& object, const QString& key) {
        if (value.isUndefined())
            object.remove(key);
        else
            object[key] = value;
    };
    if (path.startsWith("spec.")) {
        QJsonObject spec = json.value("spec").toObject();
        set(spec, path.mid(5));
        json["spec"] = spec;
    } else if (path.startsWith("points.")) {
        QJsonObject first = json.value("points").toArray().at(0).toObject();
        set(first, path.mid(7));
        json["points"] = QJsonArray{first};
    } else {
        set(json, path);
    }
    const QString message = thrownMessage<InputError>([&] { SweepResult::fromJson(json); });
    const auto names = [](const QString& text, const QString& field) {
        return text.startsWith(field + ' ') || text.startsWith(field + ':');
    };
    QVERIFY2(names(message, named), qPrintable(message));
    if (path.startsWith("spec.")) {
        // The spec alone names the field without the prefix.
        const QString alone = thrownMessage<InputError>(
            [&] { SweepSpec::fromJson(json.value("spec").toObject()); });
        QVERIFY2(names(alone, named.mid(5)), qPrintable(alone));
    }
}

// ---------------------------------------------------------------------------------------------
// The command line

// Property: a short `bench` exits 0, writes a well-formed CSV (into a folder that did not exist),
// reports every point on stderr and a summary on stdout (the sgemm rate, a slope per method, the
// crossover against exact streaming).
void TestTiming::cliWritesCsv()
{
    const QString out = m_dir.filePath("new/folder/sweep.csv");
    const AppRun run = bench({"--methods", "exact-streaming,favor-positive,elu", "--lengths",
                           "64:256", "--d", "16", "--features", "32", "--reps", "2", "--out",
                           out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QByteArray csv = readBytes(out);
    const QString problem = csvProblem(csv, 9);
    QVERIFY2(problem.isEmpty(), qPrintable(problem + "\n" + csv));
    QVERIFY(csv.contains("\nexact-streaming,0,64,16,,"));
    QVERIFY(csv.contains("\nfavor-positive,0,256,16,32,"));
    QCOMPARE(run.err.count("(median of 2)"), 9);
    QVERIFY2(run.err.contains("favor-positive L=128: "), run.err.constData());
    QVERIFY2(run.out.contains("sgemm: "), run.out.constData());
    QVERIFY2(run.out.contains("favor-positive: slope "), run.out.constData());
    QVERIFY2(run.out.contains("than exact-streaming"), run.out.constData());
    // Nothing but the CSV in its folder: no temporary file left.
    QCOMPARE(QDir(QFileInfo(out).absolutePath()).entryList(QDir::Files | QDir::Hidden),
             QStringList{"sweep.csv"});
}

// Property: --causal makes every method causal, NAME:causal one method, duplicates are
// dropped, and "all" gives every algorithm.
void TestTiming::cliCausalAndAll()
{
    const QString out = m_dir.filePath("causal.csv");
    AppRun run = bench({"--methods", "favor-positive,elu:causal,favor-positive:causal", "--causal",
                     "--lengths", "32", "--d", "8", "--features", "8", "--reps", "1", "--out",
                     out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QByteArray csv = readBytes(out);
    QVERIFY2(csvProblem(csv, 2).isEmpty(), csv.constData());
    QVERIFY(csv.contains("\nfavor-positive,1,32,"));
    QVERIFY(csv.contains("\nelu,1,32,"));

    run = bench({"--methods", "all,elu:causal", "--lengths", "32", "--d", "8", "--features", "8",
                 "--reps", "1", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    csv = readBytes(out);
    const int algorithms = int(methodRegistry().size());
    QVERIFY2(csvProblem(csv, algorithms + 1).isEmpty(), csv.constData());
    for (const MethodInfo& info : methodRegistry())
        QVERIFY(csv.contains("\n" + info.name.toLatin1() + ",0,32,"));
    QVERIFY(csv.contains("\nelu,1,32,"));
}

// Property: --plot draws the chart in the format of its suffix, and --save-session writes a session
// that opens on the Timing page with the very points of the CSV.
void TestTiming::cliWritesPlotAndSession()
{
    const QString out = m_dir.filePath("plotted/sweep.csv");
    const QString png = m_dir.filePath("plotted/sweep.png");
    const QString svg = m_dir.filePath("plotted/sweep.svg");
    const QString session = m_dir.filePath("plotted/sweep.attnlab");
    const QStringList sweep{"--methods", "exact-streaming,elu:causal", "--lengths", "64,128",
                            "--d",       "8",                          "--reps",    "1"};
    AppRun run = bench(sweep + QStringList{"--out", out, "--plot", png, "--save-session", session});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(3200, 1400));  // 1600 x 700 at twice the resolution

    const Session opened = readSession(session);
    QCOMPARE(opened.view.value("page").toString(), QStringLiteral("timing"));
    const QJsonObject timing = opened.view.value("timing").toObject();
    QCOMPARE(timing.value("min_length").toInt(), 64);
    QCOMPARE(timing.value("max_length").toInt(), 128);
    QVERIFY(timing.value("non_causal").toBool());
    QVERIFY(timing.value("causal").toBool());
    const SweepResult result = SweepResult::fromJson(timing.value("result").toObject());
    // The CSV rows (after the sgemm line and the header) are the session's points, in order;
    // the CSV prints 6 significant digits.
    const QList<QByteArray> lines = readBytes(out).trimmed().split('\n');
    QCOMPARE(lines.size(), 2 + 4);
    QCOMPARE(result.points.size(), std::size_t(4));
    for (int i = 0; i < 4; ++i) {
        const QList<QByteArray> fields = lines[2 + i].split(',');
        const SweepPoint& point = result.points[std::size_t(i)];
        QCOMPARE(fields[2].toLongLong(), qlonglong(point.length));
        QCOMPARE(fields[1] == "1", point.method.causal);
        QVERIFY(std::abs(fields[7].toDouble() / point.secondsMedian - 1) < 1e-5);
    }

    run = bench(sweep + QStringList{"--out", out, "--plot", svg});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(readBytes(svg).contains("<svg"));
}

// Property: a bad value exits 2, before anything is measured, with one line on stderr naming
// the option, and writes no CSV.
void TestTiming::cliBadArguments_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("plot suffix") << QStringList{"--plot", "chart.gif"} << "--plot";
    QTest::newRow("plot without suffix") << QStringList{"--plot", "chart"} << "--plot";
    QTest::newRow("unknown method") << QStringList{"--methods", "favor-fast"} << "--methods";
    QTest::newRow("empty method") << QStringList{"--methods", "elu,,favor-trig"} << "--methods";
    QTest::newRow("bad causal suffix") << QStringList{"--methods", "elu:acausal"} << "--methods";
    QTest::newRow("range reversed") << QStringList{"--lengths", "10:5"} << "--lengths";
    QTest::newRow("lengths text") << QStringList{"--lengths", "abc"} << "--lengths";
    QTest::newRow("length zero") << QStringList{"--lengths", "0,128"} << "--lengths";
    QTest::newRow("range of three") << QStringList{"--lengths", "1:2:3"} << "--lengths";
    QTest::newRow("reps 0") << QStringList{"--reps", "0"} << "--reps";
    QTest::newRow("d 0") << QStringList{"--d", "0"} << "--d";
    QTest::newRow("features 0") << QStringList{"--features", "0"} << "--features";
    QTest::newRow("threads -1") << QStringList{"--threads", "-1"} << "--threads";
    QTest::newRow("points per octave 0")
        << QStringList{"--points-per-octave", "0"} << "--points-per-octave";
    QTest::newRow("points per octave with a list")
        << QStringList{"--lengths", "64,128", "--points-per-octave", "2"} << "--points-per-octave";
    QTest::newRow("memory budget") << QStringList{"--memory-budget", "lots"} << "--memory-budget";
    QTest::newRow("session folder") << QStringList{"--save-session", "folder/"} << "--save-session";
}

void TestTiming::cliBadArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString folder = m_dir.filePath(QStringLiteral("bad_%1").arg(QTest::currentDataTag()));
    const QString out = folder + "/sweep.csv";
    const AppRun run = bench(arguments + QStringList{"--out", out});
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(run.describe()));
    const QString err = QString::fromUtf8(run.err).trimmed();
    QVERIFY2(err.contains(named), qPrintable(err));
    QCOMPARE(err.count('\n'), 0);
    QVERIFY(!QFile::exists(out));
}

// Property: without --out, bench exits 2 naming --out, before measuring anything.
void TestTiming::cliWithoutOut()
{
    const AppRun run = bench({"--lengths", "64", "--d", "8"});
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(run.describe()));
    QVERIFY2(run.err.contains("--out"), run.err.constData());
}

// Property: when a directory stands where the CSV should go, bench exits 1 naming the path
// (before the sweep runs), and the directory is left alone.
void TestTiming::cliOutInADirectoryInTheWay()
{
    const QString out = m_dir.filePath("taken.csv");
    QVERIFY(QDir().mkpath(out + "/inside"));
    QElapsedTimer timer;
    timer.start();
    const AppRun run = bench({"--lengths", "64", "--d", "8", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 1, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(out.toUtf8()), run.err.constData());
    QVERIFY(QFileInfo(out).isDir());
    QVERIFY(QFileInfo::exists(out + "/inside"));
    QVERIFY(timer.elapsed() < 5000);
}

QTEST_GUILESS_MAIN(TestTiming)
#include "test_timing.moc"

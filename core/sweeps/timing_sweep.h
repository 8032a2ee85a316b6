#pragma once

#include "attention/methods.h"
#include "memory_budget.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <Eigen/Core>

#include <functional>
#include <vector>

namespace attnlab {

// An algorithm with or without the causal mask: one curve of the sweep.
struct TimedMethod {
    Method algorithm = Method::ExactStreaming;
    bool causal = false;

    // "favor-positive", or "favor-positive causal".
    QString label() const;
    bool operator==(const TimedMethod&) const = default;
};

// What a sweep measures: every method at every length, float, on random Q, K, V (L x d) with
// |x'| about 1.
struct SweepSpec {
    std::vector<TimedMethod> methods;
    std::vector<Eigen::Index> lengths;  // ascending
    int headDim = 64;                   // d (and d_v)
    int features = 256;                 // m
    int threads = 0;                    // engine threads; 0 = every hardware thread
    int repetitions = 3;                // timed runs per point, after one warm-up run
    static constexpr int maxRepetitions = 1'000'000;
    MemoryBudget budget;  // points whose working set exceeds it are skipped

    QJsonObject toJson() const;
    // Throws InputError naming the field.
    static SweepSpec fromJson(const QJsonObject& json);
};

// Lengths from minimum to maximum (both included), log-spaced with pointsPerOctave points per
// doubling, each rounded to a multiple of 16 (at least 16), without duplicates. Empty when
// minimum < 1, maximum < minimum or pointsPerOctave < 1.
std::vector<Eigen::Index> logSpacedLengths(Eigen::Index minimum, Eigen::Index maximum,
                                           int pointsPerOctave = 1);

enum class PointStatus {
    Ok,
    SkippedMemory,  // its working set exceeds the memory budget
    Cancelled,      // the sweep stopped before this point
};
QString pointStatusName(PointStatus status);  // "ok", "skipped-memory", "cancelled"
bool parsePointStatus(const QString& name, PointStatus* status);

// One method at one length.
struct SweepPoint {
    TimedMethod method;
    Eigen::Index length = 0;
    double secondsMedian = 0;  // of the repetitions; NaN unless Ok
    double secondsMin = 0;
    double secondsMax = 0;
    double gflops = 0;           // methodFlops / secondsMedian; NaN unless Ok
    double workingSetBytes = 0;  // the memory the method needs (the model below)
    double peakBytes = 0;        // measured: the bytes of Q, K and V plus the most the runs'
                                 // own allocations (O, work matrices, W) held at once
                                 // (AllocationPeak); NaN where allocations are not counted
    PointStatus status = PointStatus::Ok;
};

struct SweepResult {
    SweepSpec spec;
    double sgemmGflops = 0;  // the machine's float GEMM rate, measured in the same run (NaN if
                             // the sweep was cancelled before it was measured)
    int threads = 0;         // the engine threads the sweep ran with (spec.threads resolved)
    std::vector<SweepPoint> points;

    QJsonObject toJson() const;
    static SweepResult fromJson(const QJsonObject& json);
};

// Flops of one run, counted as in docs/design.md 5.1 by the registry's cost model (exact 4 L^2 d,
// 2 L^2 d when causal; feature maps 2 L m d per side for W x' plus 4 L C d_v; the other methods
// as their classes say), with d_v = d and the method's size (m, or local attention's window) m.
double methodFlops(const TimedMethod& method, Eigen::Index length, int d, int m);

// The memory a run needs: its inputs and output (Q, K, V, O: 4 L d floats) and the registry's
// working-set model (materialised exact L^2 floats; streaming exact the tiles of each thread;
// linear attention the feature blocks and key sums of each thread, causal the window of chunks;
// the other methods as their classes say).
double workingSetBytes(const TimedMethod& method, Eigen::Index length, int d, int m, int threads);

// The machine's float GEMM rate in GFLOP/s with `threads` engine threads (0 = all): Eigen,
// n = 1536, best of ten runs, or of those begun within a second (a sanitized build).
double measureSgemmGflops(int threads);

// The machine's memory copy bandwidth in GB/s (bytes read plus bytes written, 10^9 a second):
// one thread copying a 256 MiB float buffer, best of five. Memory-bound timings differ between
// machines of one kind by this more than by their sgemm rate.
double measureCopyGigabytesPerSecond();

// Runs the sweep: lengths in ascending order, for each every method: one warm-up run, then
// spec.repetitions timed runs (inputs, feature maps and W made before the timing starts), their
// peak memory counted around them (SweepPoint::peakBytes).
// After each point progress(point, done, total) is called on the calling thread. When
// cancelled() returns true the sweep stops; the point being measured and those after it are
// returned with status Cancelled. Points over the budget are SkippedMemory, not run.
// cancelled() is polled on the calling thread: before the sgemm measurement, once per 65,536
// rows while the inputs of a length are made, before each run, and inside a run between the
// blocks of rows of the engine's loops (a run of exact attention at L = 10^6 takes half an hour;
// it stops within about one block). Throws InputError naming the field for a spec that cannot run
// (d, m or repetitions < 1, lengths not ascending or < 1, a causal curve of a method without a
// causal form).
SweepResult runSweep(
    const SweepSpec& spec,
    const std::function<void(const SweepPoint&, int done, int total)>& progress = {},
    const std::function<bool()>& cancelled = {});

// The least-squares slope of log(seconds) against log(length): the exponent of the cost.
// NaN with fewer than two points.
double logLogSlope(const std::vector<double>& lengths, const std::vector<double>& seconds);

// The slope over the Ok points of one method.
double fittedSlope(const SweepResult& result, const TimedMethod& method);

// The length where `linear` becomes faster than `exact`: interpolated in log-log between the
// two measured lengths where the sign of the time difference changes; the smallest measured
// length if it is faster everywhere; NaN if it never is in the range (or a curve is missing).
// Only lengths where both curves are Ok count. When the curves cross more than once (noise at
// short lengths), the crossing after which `linear` stays faster up to the largest length is
// taken; when it is not faster at the largest length, NaN.
double crossoverLength(const SweepResult& result, const TimedMethod& linear,
                       const TimedMethod& exact);

// The CSV of a sweep: a first line "# sgemm_gflops=<rate>", the header
// method,causal,L,d,m,threads,reps,seconds_median,seconds_min,seconds_max,gflops,peak_bytes,status
// and one row per point (method as timedAlgorithmName, causal 0/1, numbers that do not apply
// empty).
QByteArray sweepCsv(const SweepResult& result);

}  // namespace attnlab

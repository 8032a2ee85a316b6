#include "sweeps/timing_sweep.h"

#include "named_values.h"
#include "allocation_peak.h"
#include "cancellation.h"
#include "errors.h"
#include "attention/exact_attention.h"
#include "experiment.h"
#include "attention/approximation.h"
#include "attention/fitted_feature_maps.h"
#include "attention/linear_attention.h"
#include "parallel.h"
#include "attention/random.h"

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <new>

namespace attnlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kFloatBytes = sizeof(float);

// Rows of Q, K, V drawn from one random sub-stream: blocks are independent, so they are drawn in
// parallel and the inputs do not depend on the number of threads.
constexpr Eigen::Index kInputBlockRows = 1024;
// Rows made between two polls of cancelled().
constexpr Eigen::Index kInputPollRows = 64 * 1024;

// The approximation a sweep times: the method with its size (m, or local attention's window)
// set to the sweep's m and its other parameters at their defaults; orthogonal W, seed 0; a
// method fitted to a model runs on maps of d_f = d at their initial values (its cost is that of
// fitted ones).
ApproximationSpec approximationOf(Method algorithm, int m, int d)
{
    ApproximationSpec spec;
    spec.kind = algorithm;
    spec.features = m;
    const MethodInfo& info = methodInfo(algorithm);
    if (const MethodParameter* size = info.size)
        spec.setValue(*size, m);
    if (info.needsFittedMaps)
        spec.fittedMaps = initialFeatureMaps(QStringLiteral("timing"), 1, 1, d, d);
    spec.projection = ProjectionKind::Orthogonal;
    spec.seed = 0;
    return spec;
}

// The cost model's shape of one point.
CostShape costShapeOf(const TimedMethod& method, Eigen::Index length, int d, int m, int threads)
{
    const ApproximationSpec approximation = approximationOf(method.algorithm, m, d);
    CostShape shape;
    shape.length = double(length);
    shape.d = d;
    shape.dv = d;
    shape.m = m;
    shape.window = approximation.value(windowParameter());
    shape.causal = method.causal;
    shape.threads = threads;
    return shape;
}

int resolvedThreads(int threads)
{
    return threads > 0 ? threads : hardwareThreads();
}

// ---------------------------------------------------------------------------------------------
// Inputs

// Q, K, V (L x d) for one length, as bench/bench_attention.cpp makes them: Q, K entries
// N(0, 1/sqrt(d)), so |x'|^2 = s |x|^2 is about 1 at s = 1/sqrt(d); V entries N(0, 1/d), unit rows.
struct SweepInputs {
    Matrix<float> q, k, v;
};

// Fills rows [begin, end) of m with N(0, sd^2) entries; block b of kInputBlockRows rows comes from
// the sub-stream b of `seed`.
void fillGaussianRows(Matrix<float>& m, Eigen::Index begin, Eigen::Index end, double sd,
                      std::uint64_t seed)
{
    // begin is a multiple of kInputBlockRows.
    forEachRowBlock(end - begin, kInputBlockRows, [&](Eigen::Index b0, Eigen::Index b1) {
        const Eigen::Index first = begin + b0;
        Rng rng(seed, RandomStream::RandomInput, std::uint64_t(first / kInputBlockRows));
        for (Eigen::Index i = first; i < begin + b1; ++i)
            for (Eigen::Index j = 0; j < m.cols(); ++j)
                m(i, j) = float(sd * rng.normal());
    });
}

// The inputs of length L, or false when cancelled() turned true while they were made (it is
// polled once per kInputPollRows rows).
bool makeInputs(Eigen::Index length, int d, const std::function<bool()>& cancelled,
                SweepInputs* inputs)
{
    const double keySd = std::pow(double(d), -0.25);
    const double valueSd = 1 / std::sqrt(double(d));
    inputs->q.resize(length, d);
    inputs->k.resize(length, d);
    inputs->v.resize(length, d);
    for (Eigen::Index begin = 0; begin < length; begin += kInputPollRows) {
        if (cancelled && cancelled())
            return false;
        const Eigen::Index end = std::min(length, begin + kInputPollRows);
        fillGaussianRows(inputs->q, begin, end, keySd, 1);
        fillGaussianRows(inputs->k, begin, end, keySd, 2);
        fillGaussianRows(inputs->v, begin, end, valueSd, 3);
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Timing

// One warm-up call and seconds.size() timed calls of call() (returning a Result), each timed with
// steady_clock around the call only; the calling thread's CancellationScope is polled before
// every call (throwIfCancelled). The result of the previous call is released before the clock
// starts, so the timed region allocates only what the method itself allocates.
template <typename Result, typename Call>
void timeRuns(const Call& call, std::vector<double>& seconds)
{
    using Clock = std::chrono::steady_clock;
    Result result;
    for (std::size_t run = 0; run <= seconds.size(); ++run) {
        throwIfCancelled();
        result = Result();
        const Clock::time_point start = Clock::now();
        result = call();
        const Clock::time_point stop = Clock::now();
        if (run > 0)
            seconds[run - 1] = std::chrono::duration<double>(stop - start).count();
    }
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void markNotMeasured(SweepPoint& point, PointStatus status)
{
    point.status = status;
    point.secondsMedian = point.secondsMin = point.secondsMax = kNaN;
    point.gflops = kNaN;
    point.peakBytes = kNaN;
}

// Throws InputError "name must be an integer from minimum to maximum (got value)" unless value
// lies in that range.
void requireIn(const QString& name, qint64 value, qint64 minimum, qint64 maximum)
{
    if (value < minimum || value > maximum)
        throw InputError(QStringLiteral("%1 must be an integer from %2 to %3 (got %4)")
                             .arg(name)
                             .arg(minimum)
                             .arg(maximum)
                             .arg(value));
}

void validate(const SweepSpec& spec)
{
    requireIn(QStringLiteral("d"), spec.headDim, 1, SpecLimits::headDim);
    requireIn(QStringLiteral("features"), spec.features, 1, SpecLimits::features);
    requireIn(QStringLiteral("repetitions"), spec.repetitions, 1, SweepSpec::maxRepetitions);
    requireIn(QStringLiteral("threads"), spec.threads, 0, SpecLimits::threads);
    for (const TimedMethod& method : spec.methods)
        requireCausalForm(method.algorithm, method.causal);
    for (std::size_t i = 0; i < spec.lengths.size(); ++i) {
        requireIn(QStringLiteral("lengths[%1]").arg(i), spec.lengths[i], 1, SpecLimits::length);
        if (i > 0 && spec.lengths[i] <= spec.lengths[i - 1])
            throw InputError(QStringLiteral("lengths must be ascending (lengths[%1] = %2 follows "
                                            "%3)")
                                 .arg(i)
                                 .arg(spec.lengths[i])
                                 .arg(spec.lengths[i - 1]));
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names

QString TimedMethod::label() const
{
    return causal ? methodInfo(algorithm).name + QStringLiteral(" causal")
                  : methodInfo(algorithm).name;
}

QString pointStatusName(PointStatus status)
{
    switch (status) {
        case PointStatus::Ok: return QStringLiteral("ok");
        case PointStatus::SkippedMemory: return QStringLiteral("skipped-memory");
        case PointStatus::Cancelled: return QStringLiteral("cancelled");
    }
    return QStringLiteral("ok");
}

bool parsePointStatus(const QString& name, PointStatus* status)
{
    return parseName(name, {PointStatus::Ok, PointStatus::SkippedMemory, PointStatus::Cancelled},
                     pointStatusName, status);
}

// ---------------------------------------------------------------------------------------------
// Lengths, flops, memory

std::vector<Eigen::Index> logSpacedLengths(Eigen::Index minimum, Eigen::Index maximum,
                                           int pointsPerOctave)
{
    std::vector<Eigen::Index> lengths;
    if (minimum < 1 || maximum < minimum || pointsPerOctave < 1)
        return lengths;
    const auto rounded = [](double length) {
        return std::max<Eigen::Index>(16, Eigen::Index(std::llround(length / 16)) * 16);
    };
    // minimum 2^(k / pointsPerOctave) for k = 0 .. steps - 1, all below maximum, then maximum.
    const double octaves = std::log2(double(maximum) / double(minimum));
    const auto steps = Eigen::Index(std::ceil(octaves * pointsPerOctave - 1e-9));
    for (Eigen::Index k = 0; k < steps; ++k)
        lengths.push_back(rounded(double(minimum) * std::exp2(double(k) / pointsPerOctave)));
    lengths.push_back(rounded(double(maximum)));
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    return lengths;
}

double methodFlops(const TimedMethod& method, Eigen::Index length, int d, int m)
{
    return methodInfo(method.algorithm).flops(costShapeOf(method, length, d, m, 1));
}

double workingSetBytes(const TimedMethod& method, Eigen::Index length, int d, int m, int threads)
{
    const CostShape shape = costShapeOf(method, length, d, m, resolvedThreads(threads));
    const double io = 4.0 * double(length) * d;  // Q, K, V and O
    return (io + methodInfo(method.algorithm).workingSetFloats(shape)) * kFloatBytes;
}

double measureSgemmGflops(int threads)
{
    constexpr Eigen::Index n = 1536;
    setEngineThreads(threads);
    // Values in [-0.5, 0.5): no zeros or denormals to shortcut, no shared state (std::rand).
    const auto pattern = [](Eigen::Index i, Eigen::Index j) {
        return float((i * 31 + j * 17) % 101) / 101.0f - 0.5f;
    };
    const Eigen::MatrixXf a = Eigen::MatrixXf::NullaryExpr(n, n, pattern);
    const Eigen::MatrixXf b = Eigen::MatrixXf::NullaryExpr(
        n, n, [&](Eigen::Index i, Eigen::Index j) { return pattern(j, i + 1); });
    Eigen::MatrixXf c(n, n);
    c.noalias() = a * b;  // warm-up
    // Ten runs (0.4 s): on a shared machine the best of three often fell 20% short of the rate.
    // A build that runs the product 20 times slower (sanitizers) stops after a second: every
    // timing sweep begins here.
    double best = std::numeric_limits<double>::infinity();
    const auto first = std::chrono::steady_clock::now();
    for (int run = 0;
         run < 10 && std::chrono::steady_clock::now() - first < std::chrono::seconds(1); ++run) {
        const auto start = std::chrono::steady_clock::now();
        c.noalias() = a * b;
        const auto stop = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(stop - start).count());
    }
    // Keep c alive and used, so the products are not optimised away.
    volatile float sink = c(0, 0);
    (void)sink;
    return 2.0 * double(n) * double(n) * double(n) / best * 1e-9;
}

double measureCopyGigabytesPerSecond()
{
    constexpr Eigen::Index n = Eigen::Index(64) << 20;  // 256 MiB of floats
    const Eigen::VectorXf source = Eigen::VectorXf::LinSpaced(n, -1.0f, 1.0f);
    Eigen::VectorXf target(n);
    target = source;  // warm-up: the pages of target are mapped
    double best = std::numeric_limits<double>::infinity();
    for (int run = 0; run < 5; ++run) {
        const auto start = std::chrono::steady_clock::now();
        target = source;
        const auto stop = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(stop - start).count());
    }
    volatile float sink = target(n / 2);
    (void)sink;
    return 2.0 * double(n) * double(sizeof(float)) / best * 1e-9;
}

// ---------------------------------------------------------------------------------------------
// The sweep

namespace {

// Times the warm-up and spec.repetitions runs of `method` on inputs into `seconds` (timeRuns).
// An approximation is made (W, E, F drawn) before the timing; fitting to the data is timed.
// Throws Cancelled when cancelled() says so, before a run or inside one (the engine's loops poll
// it through a CancellationScope, so a run of minutes stops within about a block of rows), and
// std::bad_alloc when the machine cannot give the memory.
void timeMethod(const TimedMethod& method, const SweepInputs& inputs, const SweepSpec& spec,
                Eigen::Index length, double scale, const std::function<bool()>& cancelled,
                std::vector<double>& seconds)
{
    const CancellationScope cancellation(cancelled);
    const Matrix<float>& q = inputs.q;
    const Matrix<float>& k = inputs.k;
    const Matrix<float>& v = inputs.v;
    switch (method.algorithm) {
        case Method::ExactMaterialised:
            timeRuns<MaterialisedAttention<float>>(
                [&] { return materialisedAttention(q, k, v, scale, method.causal); }, seconds);
            return;
        case Method::ExactStreaming:
            timeRuns<Matrix<float>>(
                [&] { return streamingAttention(q, k, v, scale, method.causal); }, seconds);
            return;
        default: {
            const auto approximation = makeApproximation<float>(
                approximationOf(method.algorithm, spec.features, spec.headDim), spec.headDim,
                length, scale);
            timeRuns<ApproximateOutput<float>>(
                [&] {
                    approximation->fit(q, k, method.causal);
                    return approximation->output(q, k, v, method.causal, kDefaultCausalChunk);
                },
                seconds);
        }
    }
}

}  // namespace

SweepResult runSweep(const SweepSpec& spec,
                     const std::function<void(const SweepPoint&, int done, int total)>& progress,
                     const std::function<bool()>& cancelled)
{
    validate(spec);
    setEngineThreads(spec.threads);

    SweepResult result;
    result.spec = spec;
    result.threads = engineThreads();
    const int total = int(spec.methods.size() * spec.lengths.size());
    result.points.reserve(std::size_t(total));

    // Every point, in order (lengths ascending, for each every method), with its working set.
    for (const Eigen::Index length : spec.lengths) {
        for (const TimedMethod& method : spec.methods) {
            SweepPoint point;
            point.method = method;
            point.length = length;
            point.workingSetBytes =
                workingSetBytes(method, length, spec.headDim, spec.features, spec.threads);
            markNotMeasured(point, PointStatus::Cancelled);
            result.points.push_back(point);
        }
    }

    int done = 0;
    // Marks the points from `first` on Cancelled (as they are) and reports them.
    const auto cancelFrom = [&](std::size_t first) {
        for (std::size_t i = first; i < result.points.size(); ++i)
            if (progress)
                progress(result.points[i], ++done, total);
        return result;
    };

    if (cancelled && cancelled()) {
        result.sgemmGflops = kNaN;
        return cancelFrom(0);
    }
    result.sgemmGflops = measureSgemmGflops(spec.threads);

    const double scale = 1 / std::sqrt(double(spec.headDim));

    const double budget = double(spec.budget.bytes());
    std::vector<double> seconds(std::size_t(spec.repetitions));
    std::size_t index = 0;
    for (const Eigen::Index length : spec.lengths) {
        const std::size_t first = index;
        const std::size_t end = first + spec.methods.size();
        bool anyFits = false;
        for (std::size_t i = first; i < end; ++i)
            anyFits = anyFits || result.points[i].workingSetBytes <= budget;
        SweepInputs inputs;
        if (anyFits && !makeInputs(length, spec.headDim, cancelled, &inputs))
            return cancelFrom(first);

        for (; index < end; ++index) {
            SweepPoint& point = result.points[index];
            if (point.workingSetBytes > budget) {
                markNotMeasured(point, PointStatus::SkippedMemory);
                if (progress)
                    progress(point, ++done, total);
                continue;
            }
            const TimedMethod method = point.method;
            // The run's peak: Q, K, V, held throughout, and the most the method's runs (its
            // output, its work matrices, its drawn W) hold at once on top of them.
            const double inputBytes =
                double(inputs.q.size() + inputs.k.size() + inputs.v.size()) * kFloatBytes;
            const AllocationPeak allocations;
            try {
                timeMethod(method, inputs, spec, length, scale, cancelled, seconds);
            } catch (const Cancelled&) {
                return cancelFrom(index);
            } catch (const std::bad_alloc&) {
                // Within the budget by the model, but the machine could not give the memory:
                // skipped as over the budget, not a failed sweep.
                markNotMeasured(point, PointStatus::SkippedMemory);
                if (progress)
                    progress(point, ++done, total);
                continue;
            }
            point.peakBytes = inputBytes + allocations.bytes();
            point.secondsMedian = median(seconds);
            point.secondsMin = *std::min_element(seconds.begin(), seconds.end());
            point.secondsMax = *std::max_element(seconds.begin(), seconds.end());
            point.gflops = methodFlops(method, length, spec.headDim, spec.features) /
                           point.secondsMedian * 1e-9;
            point.status = PointStatus::Ok;
            if (progress)
                progress(point, ++done, total);
        }
    }
    return result;
}

// ---------------------------------------------------------------------------------------------
// Fits

double logLogSlope(const std::vector<double>& lengths, const std::vector<double>& seconds)
{
    // Points with a length or time that has no logarithm are left out.
    std::vector<double> x, y;
    for (std::size_t i = 0; i < std::min(lengths.size(), seconds.size()); ++i) {
        if (lengths[i] > 0 && seconds[i] > 0 && std::isfinite(lengths[i]) &&
            std::isfinite(seconds[i])) {
            x.push_back(std::log(lengths[i]));
            y.push_back(std::log(seconds[i]));
        }
    }
    if (x.size() < 2)
        return kNaN;
    const double n = double(x.size());
    double meanX = 0, meanY = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        meanX += x[i] / n;
        meanY += y[i] / n;
    }
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - meanX) * (y[i] - meanY);
        sxx += (x[i] - meanX) * (x[i] - meanX);
    }
    return sxx > 0 ? sxy / sxx : kNaN;
}

double fittedSlope(const SweepResult& result, const TimedMethod& method)
{
    std::vector<double> lengths, seconds;
    for (const SweepPoint& point : result.points) {
        if (point.method == method && point.status == PointStatus::Ok) {
            lengths.push_back(double(point.length));
            seconds.push_back(point.secondsMedian);
        }
    }
    return logLogSlope(lengths, seconds);
}

double crossoverLength(const SweepResult& result, const TimedMethod& linear,
                       const TimedMethod& exact)
{
    // log(t_linear / t_exact) at each length where both are measured, ascending.
    std::map<Eigen::Index, double> linearTimes, exactTimes;
    for (const SweepPoint& point : result.points) {
        if (point.status != PointStatus::Ok || !(point.secondsMedian > 0))
            continue;
        if (point.method == linear)
            linearTimes[point.length] = point.secondsMedian;
        else if (point.method == exact)
            exactTimes[point.length] = point.secondsMedian;
    }
    std::vector<Eigen::Index> lengths;
    std::vector<std::pair<double, double>> curve;  // (log L, log t_linear - log t_exact)
    for (const auto& [length, time] : linearTimes) {
        if (const auto other = exactTimes.find(length); other != exactTimes.end()) {
            lengths.push_back(length);
            curve.emplace_back(std::log(double(length)), std::log(time) - std::log(other->second));
        }
    }
    if (curve.empty() || curve.back().second >= 0)
        return kNaN;
    // The last length where linear is not faster; it is faster at every length after it.
    std::size_t last = curve.size();
    for (std::size_t i = curve.size(); i-- > 0;) {
        if (curve[i].second >= 0) {
            last = i;
            break;
        }
    }
    if (last == curve.size())
        return double(lengths.front());
    const auto [x0, f0] = curve[last];
    const auto [x1, f1] = curve[last + 1];
    return std::exp(x0 + (x1 - x0) * f0 / (f0 - f1));
}

}  // namespace attnlab

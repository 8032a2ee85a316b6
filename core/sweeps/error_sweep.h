#pragma once

#include "experiment.h"
#include "attention/feature_maps.h"
#include "memory_budget.h"
#include "attention/metrics.h"
#include "attention/projection.h"
#include "types.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace attnlab {

// What an error sweep varies; everything else stays as the base experiment has it.
enum class ErrorSweepKind {
    Features,  // m, the number of random features
    Norm,      // the query/key norm multiplier: Q and K multiplied by it
    Length,    // L: the first L positions of the input
};
QString errorSweepKindName(ErrorSweepKind kind);  // "features", "norm", "length"
bool parseErrorSweepKind(const QString& name, ErrorSweepKind* kind);

// The error an error chart plots.
enum class ErrorMetric {
    RelFrobeniusAttention,  // |P^ - P|_F / |P|_F
    MeanTotalVariation,     // mean_i 1/2 sum_j |P^_ij - P_ij|
    RelFrobeniusOutput,     // |O^ - O|_F / |O|_F
    KernelMse,              // E (phi(x).phi(y) - exp(x'.y'))^2 for the chosen (query, key) pair
};
// "rel-frobenius-attention", "mean-tv", "rel-frobenius-output", "kernel-mse".
QString errorMetricName(ErrorMetric metric);
bool parseErrorMetric(const QString& name, ErrorMetric* metric);
// Every metric, in the order menus list them.
const std::vector<ErrorMetric>& errorMetrics();

// What a sweep computes: every method, every projection (for the maps that draw W) and every
// sweep value, each with `seeds` seeds of W (approximation.seed, approximation.seed + 1, ...), on
// the base experiment's input. One row per (method, projection, value, seed); a map that draws no W
// (elu+1, Taylor2) has one row per value.
struct ErrorSweepSpec {
    // The input (its spec says how it was made), s, causal, precision, threads, chunk size, the
    // row norm of W, the ReLU epsilon and the first seed (approximation.seed). The method, m and
    // the projection of the base are not used: the sweep sets them.
    ExperimentSpec experiment;
    std::vector<Method> methods;
    std::vector<ProjectionKind> projections{ProjectionKind::Orthogonal, ProjectionKind::Iid};
    ErrorSweepKind sweep = ErrorSweepKind::Features;
    // Ascending: m (integers >= 1), norm multipliers (> 0, replacing the input's own) or lengths
    // (integers >= 1, at most the input's length; random input is drawn as long as needed).
    std::vector<double> values;
    int features = 64;  // m at every point of a norm or length sweep
    int seeds = 8;
    // The (query, key) pair of the kernel MSE: rows q_a and k_b of head 0.
    int pairQuery = 0;
    int pairKey = 1;
    MemoryBudget budget;
    static constexpr int maxSeeds = 1'000'000;

    // The values in the units of the sweep: integers >= 1 for m and L, finite numbers > 0 (at most
    // 1e6) for norms, ascending. Throws InputError naming "values".
    void validateValues() const;

    // The rows the sweep has: values x (projections x seeds for a map that draws W, else 1),
    // summed over the methods.
    int rowCount() const;

    QJsonObject toJson() const;
    // Throws InputError naming the field (with `prefix`).
    static ErrorSweepSpec fromJson(const QJsonObject& json, const QString& prefix = QString());
};

// One method with one projection, one sweep value and one seed.
struct ErrorRow {
    Method method = Method::FavorPositive;
    std::optional<ProjectionKind> projection;  // none for a map that draws no W
    std::optional<std::uint64_t> seed;         // none for a map that draws no W
    double value = 0;                          // the sweep value of the row
    int features = 0;  // the method's size: m, or local attention's window; 0 without one
    double norm = 1;   // the norm multiplier of Q and K
    Eigen::Index length = 0;
    AttentionMetrics metrics;  // of P^, O^ against P, O over every head
    // (phi(q_a).phi(k_b) - exp(q'_a.k'_b))^2 for the pair of head 0 under this row's W: one
    // sample of the kernel MSE, whose mean over the seeds is the empirical MSE of Lemma 2.
    double kernelSquaredError = 0;
    // The parameter of the map's closed-form kernel MSE as the row's map fitted it (FAVOR++'s A;
    // 0 for the others).
    double closedFormParameter = 0;
    // The cost of the row's approximate output: measured (the engine's secondsApprox, every head)
    // and counted (the registry's cost model, every head). NaN where not known (older files).
    double seconds = std::numeric_limits<double>::quiet_NaN();
    double flops = std::numeric_limits<double>::quiet_NaN();

    // The row's value of `metric` (for KernelMse, kernelSquaredError).
    double metric(ErrorMetric metric) const;
    // "favor-positive orthogonal", "elu".
    QString curveLabel() const;
};

struct ErrorSweepResult {
    ErrorSweepSpec spec;
    // The input as the sweep saw it (for a length sweep, the input it took prefixes of).
    Eigen::Index inputLength = 0;
    int headDim = 0;
    int heads = 0;
    double scale = 0;  // s
    // x' = sqrt(s) q_a and y' = sqrt(s) k_b of the pair at the input's own norm multiplier
    // (spec.experiment.input.normMultiplier).
    VectorD pairQuery;
    VectorD pairKey;
    std::vector<ErrorRow> rows;  // in the order they were computed
    bool cancelled = false;      // the sweep stopped before its last row

    QJsonObject toJson() const;
    // Throws InputError naming the field.
    static ErrorSweepResult fromJson(const QJsonObject& json);
};

// One curve of a chart: one method with one projection, summarised over the seeds at each value.
struct ErrorCurvePoint {
    double value = 0;
    double mean = 0;
    double percentile10 = 0;
    double percentile90 = 0;
    double standardError = 0;  // sample standard deviation / sqrt(n); 0 for n = 1
    int samples = 0;           // the rows with a finite value of the metric
    double secondsMedian = 0;  // the median time of those rows (NaN when none was measured)
    double flops = 0;          // their flop count
};

struct ErrorCurve {
    Method method = Method::FavorPositive;
    std::optional<ProjectionKind> projection;
    std::vector<ErrorCurvePoint>
        points;  // ascending values; values without a finite sample left out

    QString label() const;  // "favor-positive orthogonal", "elu"
};

// The curves of `metric`, one per (method, projection) in the order of the spec (methods, then
// projections): at each value the mean, the 10th and 90th percentiles (linear interpolation
// between order statistics) and the standard error of the mean over the seeds. Rows whose value of
// the metric is not finite (KL undefined, an overflowed kernel) are left out.
std::vector<ErrorCurve> errorCurves(const ErrorSweepResult& result, ErrorMetric metric);

// What an error chart's x axis shows: the swept value, or the cost of the approximate output,
// measured (seconds) or counted (flops), so methods whose work per feature differs are compared
// at equal cost.
enum class ErrorAxis { Value, Seconds, Flops };
QString errorAxisName(ErrorAxis axis);  // "value", "time", "flops"
bool parseErrorAxis(const QString& name, ErrorAxis* axis);

// A curve point's x on `axis`: its value, median seconds or flops.
double axisValue(const ErrorCurvePoint& point, ErrorAxis axis);

// The Pareto front of the curves' points against `axis`: every point (x, mean) with a positive,
// finite x that no other point beats, none with x no larger and a strictly lower mean (or the
// same mean at a strictly lower x); ascending in x and so descending in the mean error.
std::vector<std::pair<double, double>> paretoFront(const std::vector<ErrorCurve>& curves,
                                                   ErrorAxis axis);

// The q-th quantile (0 <= q <= 1) of `samples` (sorted or not), by linear interpolation between
// order statistics: with x_(0) <= ... <= x_(n-1) and h = q (n - 1), x_(floor h) + (h - floor h)
// (x_(floor h + 1) - x_(floor h)). NaN when empty.
double quantile(std::vector<double> samples, double q);

// The registry's closed-form kernel MSE of the method (Lemma 2 of Choromanski et al. 2021, iid
// Gaussian rows, with z = x' + y' and SM = exp(x'.y'): positive 1/m exp(|z|^2) SM^2
// (1 - exp(-|z|^2)); hyperbolic 1/2 (1 - exp(-|z|^2)) times the positive MSE; trigonometric
// 1/(2m) exp(|z|^2) SM^-2 (1 - exp(-|x' - y'|^2))^2). NaN for the methods it does not cover.
// For FAVOR++, (1/m) SM^2 expm1(d log(1 - 4A) - d/2 log(1 - 8A) + 2 (1 - 4A) |z|^2 / (1 - 8A) -
// |x'|^2 - |y'|^2 - 2 x'.y') with its A as `parameter` (Lemma 2's positive MSE at A = 0).
double lemma2Mse(Method kind, double m, const VectorD& x, const VectorD& y, double parameter = 0);

// True for the methods whose registry entry has a closed-form kernel MSE.
bool hasLemma2(Method kind);

// lemma2Mse of `kind` at sweep value `value` of a result: for a features sweep at m = value with
// the pair as is; for a norm sweep at m = spec.features with the pair scaled by value / (the
// input's norm multiplier); for a length sweep at m = spec.features with the pair as is.
double lemma2MseAt(const ErrorSweepResult& result, Method kind, double value);

// The memory one row at length L with C features needs besides the input: the scaled or
// shortened copy of Q, K, V (double) and, in the engine's precision, the key and query features
// (L x C each) and each engine thread's blocks of 32 rows of P, P^, A and A^ (32 x L x 4 doubles).
double errorRowBytes(const ErrorSweepSpec& spec, Eigen::Index length, Eigen::Index features, int d,
                     int dv, int heads);

// Runs the sweep on `input` (made from spec.experiment.input; random input shorter than the
// longest length of a length sweep is drawn again, as long as that, and its prefixes used).
// Values in ascending order; for each, every method, projection and seed. Before anything is
// computed every row's memory (errorRowBytes) is checked against spec.budget (ResourceError
// naming the row); compute() checks again. After each row progress(result, total) is called on
// the calling thread with the result so far, the new row last (the fields besides the rows are
// set before the first row). cancelled() is polled between rows and, through compute(), between
// blocks of rows of P; when it returns true the sweep stops and returns the rows finished, with
// `cancelled` set. Throws InputError naming the field for a spec that cannot run (no method, no
// value, values not ascending or out of range, seeds < 1, the pair outside the input, a length
// above a non-random input's), and what compute() throws.
ErrorSweepResult runErrorSweep(
    const ErrorSweepSpec& spec, const AttentionInput& input,
    const std::function<void(const ErrorSweepResult& sofar, int total)>& progress = {},
    const std::function<bool()>& cancelled = {});

// The CSV of a sweep: the header
// method,projection,sweep,value,seed,m,norm,L,rel_frobenius_attention,rel_frobenius_output,
// max_abs,mean_abs,mean_tv,mean_kl,kernel_mse,nonpositive_rows,seconds,flops
// and one row per ErrorRow (kernel_mse is its kernelSquaredError). Fields that do not apply
// (projection, seed and m of a map without W; KL where undefined; a non-finite value) are empty.
QByteArray errorSweepCsv(const ErrorSweepResult& result);

}  // namespace attnlab

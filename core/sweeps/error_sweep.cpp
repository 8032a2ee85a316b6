#include "sweeps/error_sweep.h"

#include "named_values.h"
#include "io/csv.h"
#include "errors.h"
#include "parallel.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Seeds are JSON numbers: integers up to 2^53 are exact there.
constexpr double kLargestSeed = 9007199254740991.0;
// The largest norm multiplier a sweep may have.
constexpr double kMaxNorm = 1e6;
// Rows of P, P^, A and A^ one engine thread holds at a time (experiment.cpp's row block).
constexpr double kRowBlock = 32;

QString featureMapName(Method kind)
{
    return methodInfo(kind).name;
}

bool drawsProjection(Method kind)
{
    return methodInfo(kind).drawsProjection;
}

bool isRandom(Method kind)
{
    return methodInfo(kind).isRandom;
}

// "favor-positive orthogonal", "elu".
QString curveLabelOf(Method method, const std::optional<ProjectionKind>& projection)
{
    return projection ? featureMapName(method) + QLatin1Char(' ') + projectionKindName(*projection)
                      : featureMapName(method);
}

// The input of one sweep value: for a norm sweep Q and K multiplied by value / (the input's own
// multiplier); for a length sweep the first `value` positions; for a features sweep the input.
AttentionInput pointInput(const ErrorSweepSpec& spec, const AttentionInput& input, double value)
{
    AttentionInput point;
    if (spec.sweep == ErrorSweepKind::Norm) {
        const double factor = value / spec.experiment.input.normMultiplier;
        point = input;
        for (HeadTensors& head : point.heads) {
            head.q *= factor;
            head.k *= factor;
        }
    } else {
        const auto length = Eigen::Index(value);
        for (const HeadTensors& head : input.heads)
            point.heads.push_back(
                {head.q.topRows(length), head.k.topRows(length), head.v.topRows(length)});
        point.labels = input.labels.mid(0, qsizetype(length));
    }
    return point;
}

}  // namespace

void ErrorSweepSpec::validateValues() const
{
    const ErrorSweepSpec& spec = *this;
    require(!spec.values.empty(), QStringLiteral("values: the sweep has no value"));
    for (std::size_t i = 0; i < spec.values.size(); ++i) {
        const double value = spec.values[i];
        switch (spec.sweep) {
            case ErrorSweepKind::Features:
                require(value == std::floor(value) && value >= 1 && value <= SpecLimits::features,
                        QStringLiteral("values: m must be an integer from 1 to %1 (got %2)")
                            .arg(SpecLimits::features)
                            .arg(value));
                break;
            case ErrorSweepKind::Norm:
                require(std::isfinite(value) && value > 0 && value <= kMaxNorm,
                        QStringLiteral("values: a norm multiplier must be a number above 0 and "
                                       "at most %1 (got %2)")
                            .arg(kMaxNorm)
                            .arg(value));
                break;
            case ErrorSweepKind::Length:
                require(value == std::floor(value) && value >= 1 && value <= SpecLimits::length,
                        QStringLiteral("values: a length must be an integer from 1 to %1 (got %2)")
                            .arg(SpecLimits::length)
                            .arg(value));
                break;
        }
        require(i == 0 || value > spec.values[i - 1],
                QStringLiteral("values: %1 must be larger than the value before it (ascending, "
                               "no repeats)")
                    .arg(value));
    }
}

namespace {

void validate(const ErrorSweepSpec& spec)
{
    require(!spec.methods.empty(), QStringLiteral("methods: the sweep has no method"));
    require(std::any_of(spec.methods.begin(), spec.methods.end(),
                        [](Method kind) { return !drawsProjection(kind); }) ||
                !spec.projections.empty(),
            QStringLiteral("projections: the sweep has no projection"));
    spec.validateValues();
    for (const Method method : spec.methods)
        requireCausalForm(method, spec.experiment.causal, causalReason(spec.experiment.input));
    require(spec.features >= 1 && spec.features <= SpecLimits::features,
            QStringLiteral("features: m must be from 1 to %1 (got %2)")
                .arg(SpecLimits::features)
                .arg(spec.features));
    require(spec.seeds >= 1 && spec.seeds <= ErrorSweepSpec::maxSeeds,
            QStringLiteral("seeds: must be from 1 to %1 (got %2)")
                .arg(ErrorSweepSpec::maxSeeds)
                .arg(spec.seeds));
    require(double(spec.experiment.approximation.seed) + spec.seeds - 1 <= kLargestSeed,
            QStringLiteral("seeds: the last seed %1 + %2 - 1 is above 2^53 - 1")
                .arg(spec.experiment.approximation.seed)
                .arg(spec.seeds));
    require(spec.pairQuery >= 0 && spec.pairKey >= 0,
            QStringLiteral("pair: the query and key indices must be >= 0 (got %1, %2)")
                .arg(spec.pairQuery)
                .arg(spec.pairKey));
    require(std::isfinite(spec.experiment.input.normMultiplier) &&
                spec.experiment.input.normMultiplier > 0,
            QStringLiteral("input.norm_multiplier must be a number above 0"));
}

// The size of a method (its m, or the window of local attention) at `value`: the value itself in
// a features sweep, else spec.features. 0 for a method without a size.
int sizeAt(const ErrorSweepSpec& spec, Method method, double value)
{
    if (!methodInfo(method).size)
        return 0;
    return spec.sweep == ErrorSweepKind::Features ? int(value) : spec.features;
}

// The approximation of `method` at `value`: the base's parameters with the method's size set.
ApproximationSpec approximationAt(const ErrorSweepSpec& spec, Method method, double value)
{
    ApproximationSpec approximation = spec.experiment.approximation;
    approximation.kind = method;
    if (const MethodParameter* size = methodInfo(method).size)
        approximation.setValue(*size, sizeAt(spec, method, value));
    return approximation;
}

// (A^_ab - exp(s q_a.k_b))^2 for the method of `experiment` on rows q_a, k_b of head 0, in double;
// NaN where the method has no entry-wise A^, or the pair is masked. A feature map returns phi(x) =
// Phi exp(c), so with r = exp(c_a + c_b - s q_a.k_b) Phi_a.Phi_b, the estimate over the exact
// kernel, the squared error is exp(2 s q_a.k_b) (r - 1)^2: finite wherever the error itself is.
// The other methods' A^_ab comes from their row of A^.
// parameter receives the map's closed-form parameter as fitted (FAVOR++'s A), else 0.
double pairSquaredError(const ExperimentSpec& experiment, const HeadTensors& head, int a, int b,
                        double scale, double* parameter)
{
    *parameter = 0;
    const auto d = int(head.q.cols());
    const MethodInfo& info = methodInfo(experiment.approximation.kind);
    const double logExact = scale * head.q.row(a).dot(head.k.row(b));
    if (!info.hasKernel || (experiment.causal && b > a))
        return kNaN;
    if (!info.hasFeatures()) {
        const auto approximation = makeApproximation<double>(
            experiment.approximation, d, head.k.rows(), scale, HeadSite{experiment.input.layer, 0});
        approximation->fit(head.q, head.k, experiment.causal);
        MatrixD row(1, head.k.rows()), kernel;
        approximation->rows(head.q, head.k, experiment.causal)->rows(a, row, &kernel);
        const double error = kernel(0, b) - std::exp(logExact);
        return error * error;
    }
    const auto phi = makeFeatureMap<double>(experiment.approximation, d, scale,
                                            HeadSite{experiment.input.layer, 0});
    phi->fit(head.q, head.k, experiment.causal);
    *parameter = phi->closedFormParameter();
    MatrixD features(2, phi->featureCount());
    VectorD logScale(2);
    phi->mapQueries(head.q.row(a), features.topRows(1), logScale.head(1));
    phi->mapKeys(head.k.row(b), features.bottomRows(1), logScale.tail(1));
    const double ratio =
        std::exp(logScale[0] + logScale[1] - logExact) * features.row(0).dot(features.row(1));
    return std::exp(2 * logExact) * (ratio - 1) * (ratio - 1);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names

QString errorSweepKindName(ErrorSweepKind kind)
{
    switch (kind) {
        case ErrorSweepKind::Features: return QStringLiteral("features");
        case ErrorSweepKind::Norm: return QStringLiteral("norm");
        case ErrorSweepKind::Length: return QStringLiteral("length");
    }
    return QString();
}

bool parseErrorSweepKind(const QString& name, ErrorSweepKind* kind)
{
    return parseName(name, {ErrorSweepKind::Features, ErrorSweepKind::Norm, ErrorSweepKind::Length},
                     errorSweepKindName, kind);
}

QString errorMetricName(ErrorMetric metric)
{
    switch (metric) {
        case ErrorMetric::RelFrobeniusAttention: return QStringLiteral("rel-frobenius-attention");
        case ErrorMetric::MeanTotalVariation: return QStringLiteral("mean-tv");
        case ErrorMetric::RelFrobeniusOutput: return QStringLiteral("rel-frobenius-output");
        case ErrorMetric::KernelMse: return QStringLiteral("kernel-mse");
    }
    return QString();
}

bool parseErrorMetric(const QString& name, ErrorMetric* metric)
{
    return parseName(name, errorMetrics(), errorMetricName, metric);
}

const std::vector<ErrorMetric>& errorMetrics()
{
    static const std::vector<ErrorMetric> metrics = {
        ErrorMetric::RelFrobeniusAttention, ErrorMetric::MeanTotalVariation,
        ErrorMetric::RelFrobeniusOutput, ErrorMetric::KernelMse};
    return metrics;
}

// ---------------------------------------------------------------------------------------------
// Spec and rows

int ErrorSweepSpec::rowCount() const
{
    int perValue = 0;
    for (const Method method : methods)
        perValue += (drawsProjection(method) ? int(projections.size()) : 1) *
                    (isRandom(method) ? seeds : 1);
    return perValue * int(values.size());
}

double ErrorRow::metric(ErrorMetric which) const
{
    switch (which) {
        case ErrorMetric::RelFrobeniusAttention: return metrics.relFrobeniusAttention;
        case ErrorMetric::MeanTotalVariation: return metrics.meanTotalVariation;
        case ErrorMetric::RelFrobeniusOutput: return metrics.relFrobeniusOutput;
        case ErrorMetric::KernelMse: return kernelSquaredError;
    }
    return kNaN;
}

QString ErrorRow::curveLabel() const
{
    return curveLabelOf(method, projection);
}

QString ErrorCurve::label() const
{
    return curveLabelOf(method, projection);
}

// ---------------------------------------------------------------------------------------------
// Statistics and formulas

QString errorAxisName(ErrorAxis axis)
{
    switch (axis) {
        case ErrorAxis::Value: return QStringLiteral("value");
        case ErrorAxis::Seconds: return QStringLiteral("time");
        case ErrorAxis::Flops: return QStringLiteral("flops");
    }
    return QString();
}

bool parseErrorAxis(const QString& name, ErrorAxis* axis)
{
    return parseName(name, {ErrorAxis::Value, ErrorAxis::Seconds, ErrorAxis::Flops}, errorAxisName,
                     axis);
}

double axisValue(const ErrorCurvePoint& point, ErrorAxis axis)
{
    switch (axis) {
        case ErrorAxis::Value: return point.value;
        case ErrorAxis::Seconds: return point.secondsMedian;
        case ErrorAxis::Flops: return point.flops;
    }
    return kNaN;
}

std::vector<std::pair<double, double>> paretoFront(const std::vector<ErrorCurve>& curves,
                                                   ErrorAxis axis)
{
    std::vector<std::pair<double, double>> points;
    for (const ErrorCurve& curve : curves) {
        for (const ErrorCurvePoint& point : curve.points) {
            const double x = axisValue(point, axis);
            if (x > 0 && std::isfinite(x) && std::isfinite(point.mean))
                points.emplace_back(x, point.mean);
        }
    }
    std::sort(points.begin(), points.end());
    std::vector<std::pair<double, double>> front;
    for (const auto& point : points)
        if (front.empty() || point.second < front.back().second)
            front.push_back(point);
    return front;
}

double quantile(std::vector<double> samples, double q)
{
    if (samples.empty())
        return kNaN;
    std::sort(samples.begin(), samples.end());
    const double h = q * double(samples.size() - 1);
    const auto below = std::size_t(std::floor(h));
    const std::size_t above = std::min(below + 1, samples.size() - 1);
    return samples[below] + (h - double(below)) * (samples[above] - samples[below]);
}

std::vector<ErrorCurve> errorCurves(const ErrorSweepResult& result, ErrorMetric metric)
{
    std::vector<ErrorCurve> curves;
    for (const Method method : result.spec.methods) {
        std::vector<std::optional<ProjectionKind>> projections;
        if (drawsProjection(method))
            projections.assign(result.spec.projections.begin(), result.spec.projections.end());
        else
            projections.push_back(std::nullopt);
        for (const std::optional<ProjectionKind>& projection : projections) {
            ErrorCurve curve;
            curve.method = method;
            curve.projection = projection;
            for (const double value : result.spec.values) {
                std::vector<double> samples, seconds;
                double flops = kNaN;
                for (const ErrorRow& row : result.rows) {
                    const double x = row.metric(metric);
                    if (row.method == method && row.projection == projection &&
                        row.value == value && std::isfinite(x)) {
                        samples.push_back(x);
                        if (std::isfinite(row.seconds))
                            seconds.push_back(row.seconds);
                        flops = row.flops;
                    }
                }
                if (samples.empty())
                    continue;
                ErrorCurvePoint point;
                point.value = value;
                point.secondsMedian = quantile(seconds, 0.5);
                point.flops = flops;
                point.samples = int(samples.size());
                const double n = double(samples.size());
                for (const double x : samples)
                    point.mean += x / n;
                double squares = 0;
                for (const double x : samples)
                    squares += (x - point.mean) * (x - point.mean);
                point.standardError = n > 1 ? std::sqrt(squares / (n - 1) / n) : 0.0;
                point.percentile10 = quantile(samples, 0.1);
                point.percentile90 = quantile(samples, 0.9);
                curve.points.push_back(point);
            }
            curves.push_back(curve);
        }
    }
    return curves;
}

double lemma2Mse(Method kind, double m, const VectorD& x, const VectorD& y, double parameter)
{
    const auto mse = methodInfo(kind).kernelMse;
    return mse ? mse(m, x, y, parameter) : kNaN;
}

bool hasLemma2(Method kind)
{
    return methodInfo(kind).kernelMse != nullptr;
}

double lemma2MseAt(const ErrorSweepResult& result, Method kind, double value)
{
    const ErrorSweepSpec& spec = result.spec;
    // The map's parameter as its rows at this value fitted it (the same for every seed).
    double parameter = 0;
    for (const ErrorRow& row : result.rows)
        if (row.method == kind && row.value == value)
            parameter = row.closedFormParameter;
    switch (spec.sweep) {
        case ErrorSweepKind::Features:
            return lemma2Mse(kind, value, result.pairQuery, result.pairKey, parameter);
        case ErrorSweepKind::Norm: {
            const double factor = value / spec.experiment.input.normMultiplier;
            return lemma2Mse(kind, spec.features, factor * result.pairQuery,
                             factor * result.pairKey, parameter);
        }
        case ErrorSweepKind::Length:
            return lemma2Mse(kind, spec.features, result.pairQuery, result.pairKey, parameter);
    }
    return kNaN;
}

double errorRowBytes(const ErrorSweepSpec& spec, Eigen::Index length, Eigen::Index features, int d,
                     int dv, int heads)
{
    const double l = double(length);
    const double scalarBytes = spec.experiment.precision == Precision::Float ? 4.0 : 8.0;
    const int threads = spec.experiment.threads > 0 ? spec.experiment.threads : hardwareThreads();
    const double copy =
        spec.sweep == ErrorSweepKind::Features ? 0.0 : 8.0 * double(heads) * l * (2.0 * d + dv);
    return copy + 2.0 * scalarBytes * l * double(features) + threads * kRowBlock * l * 4 * 8.0;
}

// ---------------------------------------------------------------------------------------------
// The sweep

namespace {

// Refuses the sweep (ResourceError) when a row's memory, reckoned for every row before any is
// computed, is over the budget.
void requireRowsFit(const ErrorSweepSpec& spec, const AttentionInput& source, int headDim,
                    int heads)
{
    for (const double value : spec.values) {
        const Eigen::Index length =
            spec.sweep == ErrorSweepKind::Length ? Eigen::Index(value) : source.length();
        for (const Method method : spec.methods) {
            const ApproximationSpec map = approximationAt(spec, method, value);
            // The features of a map, else the method's m or window (its L x m matrices).
            const Eigen::Index features = methodInfo(method).hasFeatures()
                                              ? featureCountOf(map, headDim)
                                              : sizeAt(spec, method, value);
            spec.budget.require(
                errorRowBytes(spec, length, features, headDim, int(source.valueDim()), heads),
                QStringLiteral("The sweep's rows of %1 at %2 = %3 (L = %4, size %5)")
                    .arg(featureMapName(method), errorSweepKindName(spec.sweep))
                    .arg(value)
                    .arg(length)
                    .arg(features),
                QStringLiteral(
                    "Use fewer features or shorter lengths, or raise the memory budget."));
        }
    }
}

}  // namespace

ErrorSweepResult runErrorSweep(
    const ErrorSweepSpec& spec, const AttentionInput& input,
    const std::function<void(const ErrorSweepResult& sofar, int total)>& progress,
    const std::function<bool()>& cancelled)
{
    validate(spec);
    require(!input.heads.empty() && input.length() >= 1, QStringLiteral("the input is empty"));

    // A length sweep takes prefixes: random input is drawn again as long as the longest length.
    const AttentionInput* source = &input;
    AttentionInput longer;
    if (spec.sweep == ErrorSweepKind::Length) {
        const auto longest = Eigen::Index(spec.values.back());
        if (longest > input.length()) {
            require(spec.experiment.input.kind == InputKind::Random,
                    QStringLiteral("values: the length %1 is longer than the input (%2 "
                                   "positions); a length sweep takes the first L positions")
                        .arg(longest)
                        .arg(input.length()));
            InputSpec longerSpec = spec.experiment.input;
            longerSpec.length = int(longest);
            longer = buildInput(longerSpec, nullptr, spec.budget);
            source = &longer;
        }
    }
    const Eigen::Index shortest =
        spec.sweep == ErrorSweepKind::Length ? Eigen::Index(spec.values.front()) : input.length();
    require(spec.pairQuery < shortest && spec.pairKey < shortest,
            QStringLiteral("pair: the query %1 and key %2 must lie among the first %3 positions "
                           "(the shortest input of the sweep)")
                .arg(spec.pairQuery)
                .arg(spec.pairKey)
                .arg(shortest));

    ErrorSweepResult result;
    result.spec = spec;
    result.inputLength = source->length();
    result.headDim = int(source->headDim());
    result.heads = int(source->heads.size());
    result.scale = spec.experiment.resolvedScale(source->headDim());
    const double rootScale = std::sqrt(result.scale);
    result.pairQuery = rootScale * source->heads.front().q.row(spec.pairQuery).transpose();
    result.pairKey = rootScale * source->heads.front().k.row(spec.pairKey).transpose();

    requireRowsFit(spec, *source, result.headDim, result.heads);

    ComputeOptions options;
    options.matrices = false;
    options.kernels = false;
    options.features = false;
    options.budget = spec.budget;
    options.cancelled = cancelled;
    const int total = spec.rowCount();
    const std::uint64_t firstSeed = spec.experiment.approximation.seed;
    try {
        for (const double value : spec.values) {
            const AttentionInput shaped = spec.sweep == ErrorSweepKind::Features
                                              ? AttentionInput()
                                              : pointInput(spec, *source, value);
            const AttentionInput& point = spec.sweep == ErrorSweepKind::Features ? *source : shaped;
            for (const Method method : spec.methods) {
                const bool random = isRandom(method);
                std::vector<std::optional<ProjectionKind>> projections;
                if (drawsProjection(method))
                    projections.assign(spec.projections.begin(), spec.projections.end());
                else
                    projections.push_back(std::nullopt);
                const MethodInfo& info = methodInfo(method);
                for (const std::optional<ProjectionKind>& projection : projections) {
                    for (int k = 0; k < (random ? spec.seeds : 1); ++k) {
                        if (cancelled && cancelled())
                            throw Cancelled();
                        ExperimentSpec experiment = spec.experiment;
                        experiment.exactMethod = false;
                        experiment.approximation = approximationAt(spec, method, value);
                        if (projection)
                            experiment.approximation.projection = *projection;
                        experiment.approximation.seed = firstSeed + std::uint64_t(k);
                        experiment.input.normMultiplier =
                            spec.sweep == ErrorSweepKind::Norm
                                ? value
                                : spec.experiment.input.normMultiplier;

                        ErrorRow row;
                        row.method = method;
                        row.projection = projection;
                        if (random)
                            row.seed = experiment.approximation.seed;
                        row.value = value;
                        row.features = sizeAt(spec, method, value);
                        row.norm = experiment.input.normMultiplier;
                        row.length = point.length();
                        const ExperimentResult computed = compute(experiment, point, options);
                        row.metrics = computed.metrics;
                        row.seconds = computed.secondsApprox;
                        row.flops =
                            double(point.heads.size()) * info.flops(costShapeOf(experiment, point));
                        row.kernelSquaredError =
                            pairSquaredError(experiment, point.heads.front(), spec.pairQuery,
                                             spec.pairKey, result.scale, &row.closedFormParameter);
                        result.rows.push_back(row);
                        if (progress)
                            progress(result, total);
                    }
                }
            }
        }
    } catch (const Cancelled&) {
        result.cancelled = true;
    }
    return result;
}

}  // namespace attnlab

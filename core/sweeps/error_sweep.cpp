#include "sweeps/error_sweep.h"

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
// Significant digits of the CSV numbers (%.9g: a float round-trips).
constexpr int kCsvDigits = 9;
// Seeds are JSON numbers: integers up to 2^53 are exact there.
constexpr double kLargestSeed = 9007199254740991.0;
// The most seeds and values a sweep may have.
constexpr int kMaxSeeds = 1'000'000;
constexpr double kMaxNorm = 1e6;
// Rows of P, P^, A and A^ one engine thread holds at a time (experiment.cpp's row block).
constexpr double kRowBlock = 32;

void require(bool condition, const QString& message)
{
    if (!condition)
        throw InputError(message);
}

QJsonValue numberOrNull(double value)
{
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

// The number at `key` of `object`, NaN for null or absent; anything else throws naming it.
double numberOrNaN(const QJsonObject& object, const char* key, const QString& where)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull())
        return kNaN;
    require(value.isDouble(),
            QStringLiteral("%1%2 must be a number or null").arg(where, QLatin1String(key)));
    return value.toDouble();
}

// The integer at `key`, which must lie in [minimum, maximum]; absent gives `fallback`.
double integerField(const QJsonObject& object, const char* key, const QString& where,
                    double minimum, double maximum, double fallback)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined())
        return fallback;
    const double number = value.toDouble(kNaN);
    require(value.isDouble() && number == std::floor(number) && number >= minimum &&
                number <= maximum,
            QStringLiteral("%1%2 must be an integer from %3 to %4")
                .arg(where, QLatin1String(key))
                .arg(minimum, 0, 'f', 0)
                .arg(maximum, 0, 'f', 0));
    return number;
}

// The array at `key` (empty when absent); anything else throws naming it.
QJsonArray arrayField(const QJsonObject& object, const char* key, const QString& where)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined())
        return {};
    require(value.isArray(), QStringLiteral("%1%2 must be an array").arg(where, QLatin1String(key)));
    return value.toArray();
}

// The name at `key`, parsed by parse(); `required` names must be present.
template <typename Enum, typename Parser>
void nameField(const QJsonObject& object, const char* key, const QString& where, Enum* out,
               Parser parse, bool required)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined()) {
        require(!required, QStringLiteral("%1%2 is missing").arg(where, QLatin1String(key)));
        return;
    }
    require(value.isString() && parse(value.toString(), out),
            QStringLiteral("%1%2: unknown value \"%3\"")
                .arg(where, QLatin1String(key), value.toVariant().toString()));
}

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

VectorD vectorFromJson(const QJsonArray& array, const QString& name)
{
    VectorD vector(array.size());
    for (qsizetype i = 0; i < array.size(); ++i) {
        require(array.at(i).isDouble(), QStringLiteral("%1[%2] must be a number").arg(name).arg(i));
        vector[i] = array.at(i).toDouble();
    }
    return vector;
}

QJsonArray vectorToJson(const VectorD& vector)
{
    QJsonArray array;
    for (const double x : vector)
        array.append(x);
    return array;
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

// The sweep's values in the units of its kind: integers >= 1 for m and L, finite > 0 for norms,
// ascending. Throws InputError naming "values".
void validateValues(const ErrorSweepSpec& spec)
{
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

void validate(const ErrorSweepSpec& spec)
{
    require(!spec.methods.empty(), QStringLiteral("methods: the sweep has no method"));
    require(std::any_of(spec.methods.begin(), spec.methods.end(), [](Method kind) {
                return !drawsProjection(kind);
            }) || !spec.projections.empty(),
            QStringLiteral("projections: the sweep has no projection"));
    validateValues(spec);
    for (const Method method : spec.methods)
        requireCausalForm(method, spec.experiment.causal);
    require(spec.features >= 1 && spec.features <= SpecLimits::features,
            QStringLiteral("features: m must be from 1 to %1 (got %2)")
                .arg(SpecLimits::features)
                .arg(spec.features));
    require(spec.seeds >= 1 && spec.seeds <= kMaxSeeds,
            QStringLiteral("seeds: must be from 1 to %1 (got %2)").arg(kMaxSeeds).arg(spec.seeds));
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
        const auto approximation =
            makeApproximation<double>(experiment.approximation, d, head.k.rows(), scale, 0);
        approximation->fit(head.q, head.k, experiment.causal);
        MatrixD row(1, head.k.rows()), kernel;
        approximation->rows(head.q, head.k, experiment.causal)->rows(a, row, &kernel);
        const double error = kernel(0, b) - std::exp(logExact);
        return error * error;
    }
    const auto phi = makeFeatureMap<double>(experiment.approximation, d, scale, 0);
    phi->fit(head.q, head.k, experiment.causal);
    *parameter = phi->closedFormParameter();
    MatrixD rows(2, d);
    rows.row(0) = head.q.row(a);
    rows.row(1) = head.k.row(b);
    MatrixD features(2, phi->featureCount());
    VectorD logScale(2);
    phi->map(rows, features, logScale);
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
    for (const ErrorSweepKind candidate :
         {ErrorSweepKind::Features, ErrorSweepKind::Norm, ErrorSweepKind::Length}) {
        if (name == errorSweepKindName(candidate)) {
            *kind = candidate;
            return true;
        }
    }
    return false;
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
    for (const ErrorMetric candidate : errorMetrics()) {
        if (name == errorMetricName(candidate)) {
            *metric = candidate;
            return true;
        }
    }
    return false;
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

QJsonObject ErrorSweepSpec::toJson() const
{
    QJsonArray methodArray;
    for (const Method method : methods)
        methodArray.append(featureMapName(method));
    QJsonArray projectionArray;
    for (const ProjectionKind projection : projections)
        projectionArray.append(projectionKindName(projection));
    QJsonArray valueArray;
    for (const double value : values)
        valueArray.append(value);
    QJsonObject json;
    json[QLatin1String("version")] = 1;
    json[QLatin1String("experiment")] = experiment.toJson();
    json[QLatin1String("methods")] = methodArray;
    json[QLatin1String("projections")] = projectionArray;
    json[QLatin1String("sweep")] = errorSweepKindName(sweep);
    json[QLatin1String("values")] = valueArray;
    json[QLatin1String("features")] = features;
    json[QLatin1String("seeds")] = seeds;
    json[QLatin1String("pair_query")] = pairQuery;
    json[QLatin1String("pair_key")] = pairKey;
    json[QLatin1String("memory_budget_bytes")] = double(budget.bytes());
    return json;
}

ErrorSweepSpec ErrorSweepSpec::fromJson(const QJsonObject& json, const QString& prefix)
{
    ErrorSweepSpec spec;
    const int version = int(integerField(json, "version", prefix, 1, 1e9, 1));
    require(version == 1, QStringLiteral("%1version %2 is not known to this Attention Lab (it "
                                         "reads version 1)")
                              .arg(prefix)
                              .arg(version));
    const QJsonValue experiment = json.value(QLatin1String("experiment"));
    if (!experiment.isUndefined()) {
        require(experiment.isObject(), prefix + QStringLiteral("experiment must be an object"));
        try {
            spec.experiment = ExperimentSpec::fromJson(experiment.toObject());
        } catch (const InputError& e) {
            throw InputError(prefix + QStringLiteral("experiment.") + e.message());
        }
    }
    if (json.contains(QLatin1String("methods"))) {
        spec.methods.clear();
        const QJsonArray methods = arrayField(json, "methods", prefix);
        for (qsizetype i = 0; i < methods.size(); ++i) {
            Method kind;
            require(methods.at(i).isString() && parseApproximation(methods.at(i).toString(), &kind),
                    QStringLiteral("%1methods[%2]: unknown method").arg(prefix).arg(i));
            spec.methods.push_back(kind);
        }
    }
    if (json.contains(QLatin1String("projections"))) {
        spec.projections.clear();
        const QJsonArray projections = arrayField(json, "projections", prefix);
        for (qsizetype i = 0; i < projections.size(); ++i) {
            ProjectionKind kind;
            require(projections.at(i).isString() &&
                        parseProjectionKind(projections.at(i).toString(), &kind),
                    QStringLiteral("%1projections[%2]: unknown projection").arg(prefix).arg(i));
            spec.projections.push_back(kind);
        }
    }
    nameField(json, "sweep", prefix, &spec.sweep, parseErrorSweepKind, false);
    const QJsonArray values = arrayField(json, "values", prefix);
    for (qsizetype i = 0; i < values.size(); ++i) {
        require(values.at(i).isDouble(),
                QStringLiteral("%1values[%2] must be a number").arg(prefix).arg(i));
        spec.values.push_back(values.at(i).toDouble());
    }
    if (!spec.values.empty()) {
        try {
            validateValues(spec);
        } catch (const InputError& e) {
            throw InputError(prefix + e.message());
        }
    }
    spec.features = int(integerField(json, "features", prefix, 1, SpecLimits::features, 64));
    spec.seeds = int(integerField(json, "seeds", prefix, 1, kMaxSeeds, 8));
    spec.pairQuery = int(integerField(json, "pair_query", prefix, 0, SpecLimits::length, 0));
    spec.pairKey = int(integerField(json, "pair_key", prefix, 0, SpecLimits::length, 1));
    spec.budget = MemoryBudget(qint64(integerField(json, "memory_budget_bytes", prefix, 1, 9e15,
                                                   double(spec.budget.bytes()))));
    return spec;
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
// Results as JSON

QJsonObject ErrorSweepResult::toJson() const
{
    QJsonArray rowArray;
    for (const ErrorRow& row : rows) {
        QJsonObject json;
        json[QLatin1String("method")] = featureMapName(row.method);
        json[QLatin1String("projection")] = row.projection
                                                ? QJsonValue(projectionKindName(*row.projection))
                                                : QJsonValue(QJsonValue::Null);
        json[QLatin1String("seed")] =
            row.seed ? QJsonValue(double(*row.seed)) : QJsonValue(QJsonValue::Null);
        json[QLatin1String("value")] = row.value;
        json[QLatin1String("m")] = row.features;
        json[QLatin1String("norm")] = row.norm;
        json[QLatin1String("L")] = double(row.length);
        const AttentionMetrics& m = row.metrics;
        json[QLatin1String("rel_frobenius_attention")] = numberOrNull(m.relFrobeniusAttention);
        json[QLatin1String("rel_frobenius_output")] = numberOrNull(m.relFrobeniusOutput);
        json[QLatin1String("max_abs")] = numberOrNull(m.maxAbsError);
        json[QLatin1String("mean_abs")] = numberOrNull(m.meanAbsError);
        json[QLatin1String("mean_tv")] = numberOrNull(m.meanTotalVariation);
        json[QLatin1String("mean_kl")] = numberOrNull(m.meanKl);
        json[QLatin1String("kernel_mse")] = numberOrNull(row.kernelSquaredError);
        json[QLatin1String("nonpositive_rows")] = double(m.nonPositiveRows);
        json[QLatin1String("seconds")] = numberOrNull(row.seconds);
        json[QLatin1String("closed_form_parameter")] = row.closedFormParameter;
        json[QLatin1String("flops")] = numberOrNull(row.flops);
        rowArray.append(json);
    }
    QJsonObject json;
    json[QLatin1String("spec")] = spec.toJson();
    json[QLatin1String("input_length")] = double(inputLength);
    json[QLatin1String("d")] = headDim;
    json[QLatin1String("heads")] = heads;
    json[QLatin1String("scale")] = scale;
    json[QLatin1String("pair_query_vector")] = vectorToJson(pairQuery);
    json[QLatin1String("pair_key_vector")] = vectorToJson(pairKey);
    json[QLatin1String("cancelled")] = cancelled;
    json[QLatin1String("rows")] = rowArray;
    return json;
}

ErrorSweepResult ErrorSweepResult::fromJson(const QJsonObject& json)
{
    ErrorSweepResult result;
    const QJsonValue spec = json.value(QLatin1String("spec"));
    require(spec.isObject(), QStringLiteral("spec must be an object"));
    result.spec = ErrorSweepSpec::fromJson(spec.toObject(), QStringLiteral("spec."));
    const QString top;
    result.inputLength =
        Eigen::Index(integerField(json, "input_length", top, 0, SpecLimits::length, 0));
    result.headDim = int(integerField(json, "d", top, 0, SpecLimits::headDim, 0));
    result.heads = int(integerField(json, "heads", top, 0, SpecLimits::heads, 0));
    result.scale = numberOrNaN(json, "scale", top);
    result.pairQuery = vectorFromJson(arrayField(json, "pair_query_vector", top),
                                      QStringLiteral("pair_query_vector"));
    result.pairKey =
        vectorFromJson(arrayField(json, "pair_key_vector", top), QStringLiteral("pair_key_vector"));
    require(result.pairQuery.size() == result.pairKey.size(),
            QStringLiteral("pair_key_vector must have as many numbers as pair_query_vector"));
    const QJsonValue cancelled = json.value(QLatin1String("cancelled"));
    require(cancelled.isUndefined() || cancelled.isBool(),
            QStringLiteral("cancelled must be a boolean"));
    result.cancelled = cancelled.toBool(false);
    const QJsonArray rows = arrayField(json, "rows", top);
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const QString where = QStringLiteral("rows[%1].").arg(i);
        require(rows.at(i).isObject(), QStringLiteral("rows[%1] must be an object").arg(i));
        const QJsonObject object = rows.at(i).toObject();
        ErrorRow row;
        nameField(object, "method", where, &row.method, parseApproximation, true);
        if (const QJsonValue projection = object.value(QLatin1String("projection"));
            !projection.isNull() && !projection.isUndefined()) {
            ProjectionKind kind;
            nameField(object, "projection", where, &kind, parseProjectionKind, true);
            row.projection = kind;
        }
        if (const QJsonValue seed = object.value(QLatin1String("seed"));
            !seed.isNull() && !seed.isUndefined())
            row.seed = std::uint64_t(integerField(object, "seed", where, 0, kLargestSeed, 0));
        row.value = numberOrNaN(object, "value", where);
        require(std::isfinite(row.value), where + QStringLiteral("value must be a number"));
        row.features = int(integerField(object, "m", where, 0, SpecLimits::features, 0));
        row.norm = numberOrNaN(object, "norm", where);
        row.length = Eigen::Index(integerField(object, "L", where, 0, SpecLimits::length, 0));
        AttentionMetrics& m = row.metrics;
        m.relFrobeniusAttention = numberOrNaN(object, "rel_frobenius_attention", where);
        m.relFrobeniusOutput = numberOrNaN(object, "rel_frobenius_output", where);
        m.maxAbsError = numberOrNaN(object, "max_abs", where);
        m.meanAbsError = numberOrNaN(object, "mean_abs", where);
        m.meanTotalVariation = numberOrNaN(object, "mean_tv", where);
        m.meanKl = numberOrNaN(object, "mean_kl", where);
        row.kernelSquaredError = numberOrNaN(object, "kernel_mse", where);
        m.nonPositiveRows =
            qint64(integerField(object, "nonpositive_rows", where, 0, SpecLimits::length, 0));
        row.seconds = numberOrNaN(object, "seconds", where);
        row.closedFormParameter = numberOrNaN(object, "closed_form_parameter", where);
        if (!std::isfinite(row.closedFormParameter))
            row.closedFormParameter = 0;
        row.flops = numberOrNaN(object, "flops", where);
        result.rows.push_back(row);
    }
    return result;
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
    for (const ErrorAxis candidate : {ErrorAxis::Value, ErrorAxis::Seconds, ErrorAxis::Flops}) {
        if (name == errorAxisName(candidate)) {
            *axis = candidate;
            return true;
        }
    }
    return false;
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

double errorRowBytes(const ErrorSweepSpec& spec, Eigen::Index length, Eigen::Index features,
                     int d, int dv, int heads)
{
    const double l = double(length);
    const double scalarBytes = spec.experiment.precision == Precision::Float ? 4.0 : 8.0;
    const int threads =
        spec.experiment.threads > 0 ? spec.experiment.threads : hardwareThreads();
    const double copy = spec.sweep == ErrorSweepKind::Features
                            ? 0.0
                            : 8.0 * double(heads) * l * (2.0 * d + dv);
    return copy + 2.0 * scalarBytes * l * double(features) + threads * kRowBlock * l * 4 * 8.0;
}

// ---------------------------------------------------------------------------------------------
// The sweep

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

    // Every row's memory, before any is computed.
    for (const double value : spec.values) {
        const Eigen::Index length =
            spec.sweep == ErrorSweepKind::Length ? Eigen::Index(value) : source->length();
        for (const Method method : spec.methods) {
            const ApproximationSpec map = approximationAt(spec, method, value);
            // The features of a map, else the method's m or window (its L x m matrices).
            const Eigen::Index features = methodInfo(method).hasFeatures()
                                              ? featureCountOf(map, result.headDim)
                                              : sizeAt(spec, method, value);
            spec.budget.require(
                errorRowBytes(spec, length, features, result.headDim,
                              int(source->valueDim()), result.heads),
                QStringLiteral("The sweep's rows of %1 at %2 = %3 (L = %4, size %5)")
                    .arg(featureMapName(method), errorSweepKindName(spec.sweep))
                    .arg(value)
                    .arg(length)
                    .arg(features),
                QStringLiteral("Use fewer features or shorter lengths, or raise the memory budget "
                               "(--memory-budget)."));
        }
    }

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
                        row.flops = double(point.heads.size()) *
                                    info.flops(costShapeOf(experiment, point));
                        row.kernelSquaredError = pairSquaredError(
                            experiment, point.heads.front(), spec.pairQuery, spec.pairKey,
                            result.scale, &row.closedFormParameter);
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

QByteArray errorSweepCsv(const ErrorSweepResult& result)
{
    QByteArray csv(
        "method,projection,sweep,value,seed,m,norm,L,rel_frobenius_attention,"
        "rel_frobenius_output,max_abs,mean_abs,mean_tv,mean_kl,kernel_mse,nonpositive_rows,"
        "seconds,flops\n");
    const QByteArray sweep = errorSweepKindName(result.spec.sweep).toLatin1();
    for (const ErrorRow& row : result.rows) {
        QByteArray line = featureMapName(row.method).toLatin1();
        line.append(',');
        if (row.projection)
            line.append(projectionKindName(*row.projection).toLatin1());
        line.append(',').append(sweep).append(',');
        appendCsvNumber(line, row.value, kCsvDigits);
        line.append(',');
        if (row.seed)
            line.append(QByteArray::number(quint64(*row.seed)));
        line.append(',');
        if (row.features > 0)
            line.append(QByteArray::number(row.features));
        appendCsvField(line, row.norm, kCsvDigits);
        line.append(',').append(QByteArray::number(qint64(row.length)));
        const AttentionMetrics& m = row.metrics;
        for (const double value : {m.relFrobeniusAttention, m.relFrobeniusOutput, m.maxAbsError,
                                   m.meanAbsError, m.meanTotalVariation, m.meanKl,
                                   row.kernelSquaredError})
            appendCsvField(line, value, kCsvDigits);
        line.append(',').append(QByteArray::number(m.nonPositiveRows));
        appendCsvField(line, row.seconds, kCsvDigits);
        appendCsvField(line, row.flops, kCsvDigits);
        line.append('\n');
        csv.append(line);
    }
    return csv;
}

}  // namespace attnlab

// The error sweep's files: the spec and result as JSON (sessions, the Error analysis page's
// state) and the rows as CSV (attention-lab errors --out).

#include "sweeps/error_sweep.h"

#include "errors.h"
#include "io/csv.h"
#include "io/json_fields.h"

#include <QJsonArray>

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// Significant digits of the CSV numbers (%.9g: a float round-trips).
constexpr int kCsvDigits = 9;

QJsonArray vectorToJson(const VectorD& vector)
{
    QJsonArray array;
    for (const double x : vector)
        array.append(x);
    return array;
}

VectorD vectorFromJson(const JsonFields& fields, const char* key)
{
    const std::vector<double> numbers = fields.numbers(key);
    return Eigen::Map<const VectorD>(numbers.data(), Eigen::Index(numbers.size()));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The spec

QJsonObject ErrorSweepSpec::toJson() const
{
    QJsonArray valueArray;
    for (const double value : values)
        valueArray.append(value);
    QJsonObject json;
    json[QLatin1String("version")] = 1;
    json[QLatin1String("experiment")] = experiment.toJson();
    json[QLatin1String("methods")] =
        namesArray(methods, [](Method method) { return methodInfo(method).name; });
    json[QLatin1String("projections")] = namesArray(projections, projectionKindName);
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
    const JsonFields fields(json, prefix);
    fields.requireVersion(1);
    if (fields.has("experiment")) {
        const QJsonObject experiment = fields.object("experiment");
        try {
            spec.experiment = ExperimentSpec::fromJson(experiment);
        } catch (const InputError& e) {
            throw InputError(prefix + QStringLiteral("experiment.") + e.message());
        }
    }
    if (fields.has("methods"))
        spec.methods = fields.readNames<Method>("methods", parseApproximation);
    if (fields.has("projections"))
        spec.projections = fields.readNames<ProjectionKind>("projections", parseProjectionKind);
    fields.readName("sweep", &spec.sweep, parseErrorSweepKind);
    spec.values = fields.numbers("values");
    if (!spec.values.empty()) {
        try {
            spec.validateValues();
        } catch (const InputError& e) {
            throw InputError(prefix + e.message());
        }
    }
    fields.read("features", &spec.features, 1, SpecLimits::features);
    fields.read("seeds", &spec.seeds, 1, maxSeeds);
    fields.read("pair_query", &spec.pairQuery, 0, SpecLimits::length);
    fields.read("pair_key", &spec.pairKey, 0, SpecLimits::length);
    fields.read("memory_budget_bytes", &spec.budget);
    return spec;
}

// ---------------------------------------------------------------------------------------------
// The result

QJsonObject ErrorSweepResult::toJson() const
{
    QJsonArray rowArray;
    for (const ErrorRow& row : rows) {
        QJsonObject json;
        json[QLatin1String("method")] = methodInfo(row.method).name;
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

namespace {

ErrorRow rowFromJson(const JsonFields& fields)
{
    ErrorRow row;
    fields.readName("method", &row.method, parseApproximation, true);
    if (!fields.isNull("projection")) {
        ProjectionKind kind;
        fields.readName("projection", &kind, parseProjectionKind, true);
        row.projection = kind;
    }
    if (!fields.isNull("seed")) {
        std::uint64_t value = 0;
        fields.readSeed("seed", &value);
        row.seed = value;
    }
    row.value = fields.numberOrNaN("value");
    JsonFields::require(std::isfinite(row.value),
                        fields.name("value") + QStringLiteral(" must be a number"));
    fields.read("m", &row.features, 0, SpecLimits::features);
    row.norm = fields.numberOrNaN("norm");
    fields.read("L", &row.length, 0, SpecLimits::length);
    AttentionMetrics& m = row.metrics;
    m.relFrobeniusAttention = fields.numberOrNaN("rel_frobenius_attention");
    m.relFrobeniusOutput = fields.numberOrNaN("rel_frobenius_output");
    m.maxAbsError = fields.numberOrNaN("max_abs");
    m.meanAbsError = fields.numberOrNaN("mean_abs");
    m.meanTotalVariation = fields.numberOrNaN("mean_tv");
    m.meanKl = fields.numberOrNaN("mean_kl");
    row.kernelSquaredError = fields.numberOrNaN("kernel_mse");
    fields.read("nonpositive_rows", &m.nonPositiveRows, 0, SpecLimits::length);
    row.seconds = fields.numberOrNaN("seconds");
    row.flops = fields.numberOrNaN("flops");
    const double parameter = fields.numberOrNaN("closed_form_parameter");
    row.closedFormParameter = std::isfinite(parameter) ? parameter : 0.0;
    return row;
}

}  // namespace

ErrorSweepResult ErrorSweepResult::fromJson(const QJsonObject& json)
{
    ErrorSweepResult result;
    const JsonFields fields(json, QString());
    JsonFields::require(json.value(QLatin1String("spec")).isObject(),
                        QStringLiteral("spec must be an object"));
    result.spec = ErrorSweepSpec::fromJson(fields.object("spec"), QStringLiteral("spec."));
    fields.read("input_length", &result.inputLength, 0, SpecLimits::length);
    fields.read("d", &result.headDim, 0, SpecLimits::headDim);
    fields.read("heads", &result.heads, 0, SpecLimits::heads);
    result.scale = fields.numberOrNaN("scale");
    result.pairQuery = vectorFromJson(fields, "pair_query_vector");
    result.pairKey = vectorFromJson(fields, "pair_key_vector");
    JsonFields::require(result.pairQuery.size() == result.pairKey.size(),
                        QStringLiteral("pair_key_vector must have as many numbers as "
                                       "pair_query_vector"));
    fields.read("cancelled", &result.cancelled);
    fields.forEachObject("rows",
                         [&](const JsonFields& row) { result.rows.push_back(rowFromJson(row)); });
    return result;
}

// ---------------------------------------------------------------------------------------------
// CSV

QByteArray errorSweepCsv(const ErrorSweepResult& result)
{
    QByteArray csv(
        "method,projection,sweep,value,seed,m,norm,L,rel_frobenius_attention,"
        "rel_frobenius_output,max_abs,mean_abs,mean_tv,mean_kl,kernel_mse,nonpositive_rows,"
        "seconds,flops\n");
    const QByteArray sweep = errorSweepKindName(result.spec.sweep).toLatin1();
    for (const ErrorRow& row : result.rows) {
        QByteArray line = methodInfo(row.method).name.toLatin1();
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
        for (const double value :
             {m.relFrobeniusAttention, m.relFrobeniusOutput, m.maxAbsError, m.meanAbsError,
              m.meanTotalVariation, m.meanKl, row.kernelSquaredError})
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

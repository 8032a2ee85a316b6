// The timing sweep's files: the spec and result as JSON (sessions, the Timing page's state) and
// the result as CSV (attention-lab bench --out).

#include "sweeps/timing_sweep.h"

#include "errors.h"
#include "experiment.h"
#include "io/csv.h"
#include "io/json_fields.h"

#include <QJsonArray>

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// Significant digits of the CSV numbers (%.6g: timings are not more precise).
constexpr int kCsvDigits = 6;

QJsonObject methodToJson(const TimedMethod& method)
{
    QJsonObject json;
    json[QLatin1String("algorithm")] = methodInfo(method.algorithm).name;
    json[QLatin1String("causal")] = method.causal;
    return json;
}

// The method in fields "algorithm" (required) and "causal" of a reader's object.
TimedMethod methodFromJson(const JsonFields& reader)
{
    TimedMethod method;
    reader.readName("algorithm", &method.algorithm, parseMethod, true);
    reader.read("causal", &method.causal);
    return method;
}

SweepSpec specFromJson(const QJsonObject& json, const QString& prefix)
{
    SweepSpec spec;
    const JsonFields top(json, prefix);
    top.requireVersion(1);
    top.forEachObject("methods", [&](const JsonFields& method) {
        spec.methods.push_back(methodFromJson(method));
    });
    const std::vector<double> lengths = top.numbers("lengths");
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        const QString name = QStringLiteral("%1[%2]").arg(top.name("lengths")).arg(i);
        const auto length =
            Eigen::Index(JsonFields::checkedInteger(name, lengths[i], 1, SpecLimits::length));
        JsonFields::require(spec.lengths.empty() || length > spec.lengths.back(),
                            QStringLiteral("%1 (%2) must be larger than the length before it: "
                                           "lengths are ascending")
                                .arg(name)
                                .arg(length));
        spec.lengths.push_back(length);
    }
    top.read("d", &spec.headDim, 1, SpecLimits::headDim);
    top.read("features", &spec.features, 1, SpecLimits::features);
    top.read("threads", &spec.threads, 0, SpecLimits::threads);
    top.read("repetitions", &spec.repetitions, 1, SweepSpec::maxRepetitions);
    top.read("memory_budget_bytes", &spec.budget);
    return spec;
}

}  // namespace

QJsonObject SweepSpec::toJson() const
{
    QJsonArray methodArray;
    for (const TimedMethod& method : methods)
        methodArray.append(methodToJson(method));
    QJsonArray lengthArray;
    for (const Eigen::Index length : lengths)
        lengthArray.append(double(length));
    QJsonObject json;
    json[QLatin1String("version")] = 1;
    json[QLatin1String("methods")] = methodArray;
    json[QLatin1String("lengths")] = lengthArray;
    json[QLatin1String("d")] = headDim;
    json[QLatin1String("features")] = features;
    json[QLatin1String("threads")] = threads;
    json[QLatin1String("repetitions")] = repetitions;
    json[QLatin1String("memory_budget_bytes")] = double(budget.bytes());
    return json;
}

SweepSpec SweepSpec::fromJson(const QJsonObject& json)
{
    return specFromJson(json, QString());
}

QJsonObject SweepResult::toJson() const
{
    QJsonArray pointArray;
    for (const SweepPoint& point : points) {
        QJsonObject json = methodToJson(point.method);
        json[QLatin1String("length")] = double(point.length);
        json[QLatin1String("seconds_median")] = numberOrNull(point.secondsMedian);
        json[QLatin1String("seconds_min")] = numberOrNull(point.secondsMin);
        json[QLatin1String("seconds_max")] = numberOrNull(point.secondsMax);
        json[QLatin1String("gflops")] = numberOrNull(point.gflops);
        json[QLatin1String("working_set_bytes")] = numberOrNull(point.workingSetBytes);
        json[QLatin1String("peak_bytes")] = numberOrNull(point.peakBytes);
        json[QLatin1String("status")] = pointStatusName(point.status);
        pointArray.append(json);
    }
    QJsonObject json;
    json[QLatin1String("spec")] = spec.toJson();
    json[QLatin1String("sgemm_gflops")] = numberOrNull(sgemmGflops);
    json[QLatin1String("threads")] = threads;
    json[QLatin1String("points")] = pointArray;
    return json;
}

SweepResult SweepResult::fromJson(const QJsonObject& json)
{
    SweepResult result;
    const JsonFields top(json, QString());
    if (top.has("spec"))
        result.spec = specFromJson(top.object("spec"), QStringLiteral("spec."));
    result.sgemmGflops = top.numberOrNaN("sgemm_gflops");
    top.read("threads", &result.threads, 0, SpecLimits::threads);
    top.forEachObject("points", [&](const JsonFields& reader) {
        SweepPoint point;
        point.method = methodFromJson(reader);
        JsonFields::require(reader.has("length"),
                            QStringLiteral("%1 is missing").arg(reader.name("length")));
        reader.read("length", &point.length, 1, SpecLimits::length);
        point.secondsMedian = reader.numberOrNaN("seconds_median");
        point.secondsMin = reader.numberOrNaN("seconds_min");
        point.secondsMax = reader.numberOrNaN("seconds_max");
        point.gflops = reader.numberOrNaN("gflops");
        point.workingSetBytes = reader.numberOrNaN("working_set_bytes");
        point.peakBytes = reader.numberOrNaN("peak_bytes");
        reader.readName("status", &point.status, parsePointStatus, true);
        result.points.push_back(point);
    });
    return result;
}

QByteArray sweepCsv(const SweepResult& result)
{
    const SweepSpec& spec = result.spec;
    QByteArray csv("# sgemm_gflops=");
    if (std::isfinite(result.sgemmGflops))
        appendCsvNumber(csv, result.sgemmGflops, kCsvDigits);
    else
        csv.append("nan");
    csv.append("\nmethod,causal,L,d,m,threads,reps,seconds_median,seconds_min,seconds_max,gflops,"
               "peak_bytes,status\n");
    const int threads = result.threads > 0 ? result.threads : spec.threads;
    for (const SweepPoint& point : result.points) {
        const Method algorithm = point.method.algorithm;
        // m applies to the methods with a size (m, or local attention's window).
        const bool usesFeatures = methodInfo(algorithm).size != nullptr;
        QByteArray line = methodInfo(algorithm).name.toLatin1();
        line.append(point.method.causal ? ",1," : ",0,");
        line.append(QByteArray::number(qint64(point.length)));
        line.append(',').append(QByteArray::number(spec.headDim));
        line.append(',');
        if (usesFeatures)
            line.append(QByteArray::number(spec.features));
        line.append(',').append(QByteArray::number(threads));
        line.append(',').append(QByteArray::number(spec.repetitions));
        appendCsvField(line, point.secondsMedian, kCsvDigits);
        appendCsvField(line, point.secondsMin, kCsvDigits);
        appendCsvField(line, point.secondsMax, kCsvDigits);
        appendCsvField(line, point.gflops, kCsvDigits);
        line.append(',');
        if (std::isfinite(point.peakBytes))
            line.append(QByteArray::number(qint64(std::llround(point.peakBytes))));
        line.append(',').append(pointStatusName(point.status).toLatin1());
        line.append('\n');
        csv.append(line);
    }
    return csv;
}

}  // namespace attnlab

// The timing sweep's files: the spec and result as JSON (sessions, the Timing page's state) and
// the result as CSV (attention-lab bench --out).

#include "sweeps/timing_sweep.h"

#include "errors.h"
#include "experiment.h"
#include "io/csv.h"

#include <QJsonArray>

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Significant digits of the CSV numbers (%.6g: timings are not more precise).
constexpr int kCsvDigits = 6;


QJsonValue numberOrNull(double value)
{
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

// Readers of the fields of one JSON object; a wrong type or value throws InputError naming the
// field (with its path, e.g. "points[3].status").
class JsonReader {
public:
    JsonReader(const QJsonObject& object, const QString& prefix)
        : m_object(object), m_prefix(prefix)
    {
    }

    QString name(const char* key) const { return m_prefix + QLatin1String(key); }
    bool has(const char* key) const { return m_object.contains(QLatin1String(key)); }

    // An integer in [minimum, maximum]; absent leaves *out.
    template <typename Int>
    void integer(const char* key, Int* out, double minimum, double maximum) const
    {
        const QJsonValue value = typed(key, QJsonValue::Double);
        if (value.isUndefined())
            return;
        *out = Int(checkedInteger(name(key), value.toDouble(), minimum, maximum));
    }

    void boolean(const char* key, bool* out) const
    {
        const QJsonValue value = typed(key, QJsonValue::Bool);
        if (!value.isUndefined())
            *out = value.toBool();
    }

    // A number, or null for NaN ("not measured"); absent is NaN too.
    double numberOrNaN(const char* key) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined() || value.isNull())
            return kNaN;
        require(value.isDouble(), QStringLiteral("%1 must be a number or null").arg(name(key)));
        return value.toDouble();
    }

    // A name parse() accepts; `required` fields must be present.
    template <typename Enum, typename Parser>
    void enumName(const char* key, Enum* out, Parser parse, bool required = false) const
    {
        const QJsonValue value = typed(key, QJsonValue::String);
        if (value.isUndefined()) {
            require(!required, QStringLiteral("%1 is missing").arg(name(key)));
            return;
        }
        require(parse(value.toString(), out),
                QStringLiteral("%1: unknown value \"%2\"").arg(name(key), value.toString()));
    }

    QJsonArray array(const char* key) const
    {
        return typed(key, QJsonValue::Array).toArray();
    }

    QJsonObject object(const char* key) const
    {
        return typed(key, QJsonValue::Object).toObject();
    }

    static void require(bool condition, const QString& message)
    {
        if (!condition)
            throw InputError(message);
    }

    static double checkedInteger(const QString& name, double number, double minimum,
                                 double maximum)
    {
        require(std::isfinite(number) && number == std::floor(number) && number >= minimum &&
                    number <= maximum,
                QStringLiteral("%1 must be an integer from %2 to %3 (got %4)")
                    .arg(name)
                    .arg(minimum, 0, 'f', 0)
                    .arg(maximum, 0, 'f', 0)
                    .arg(number));
        return number;
    }

private:
    QJsonValue typed(const char* key, QJsonValue::Type type) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined())
            return value;
        static const char* const typeNames[] = {"null", "a boolean", "a number", "a string",
                                                "an array", "an object"};
        require(value.type() == type,
                QStringLiteral("%1 must be %2").arg(name(key), typeNames[int(type)]));
        return value;
    }

    const QJsonObject& m_object;
    QString m_prefix;
};

QJsonObject methodToJson(const TimedMethod& method)
{
    QJsonObject json;
    json[QLatin1String("algorithm")] = methodInfo(method.algorithm).name;
    json[QLatin1String("causal")] = method.causal;
    return json;
}

// The method in fields "algorithm" (required) and "causal" of a reader's object.
TimedMethod methodFromJson(const JsonReader& reader)
{
    TimedMethod method;
    reader.enumName("algorithm", &method.algorithm, parseMethod, true);
    reader.boolean("causal", &method.causal);
    return method;
}

SweepSpec specFromJson(const QJsonObject& json, const QString& prefix)
{
    SweepSpec spec;
    const JsonReader top(json, prefix);
    int version = 1;
    top.integer("version", &version, 1, std::numeric_limits<int>::max());
    JsonReader::require(version == 1, QStringLiteral("%1 %2 is not known to this Attention Lab "
                                                     "(it reads version 1)")
                                          .arg(top.name("version"))
                                          .arg(version));
    if (top.has("methods")) {
        const QJsonArray methods = top.array("methods");
        for (qsizetype i = 0; i < methods.size(); ++i) {
            const QString name = QStringLiteral("%1methods[%2]").arg(prefix).arg(i);
            JsonReader::require(methods.at(i).isObject(),
                                QStringLiteral("%1 must be an object").arg(name));
            const QJsonObject object = methods.at(i).toObject();
            spec.methods.push_back(methodFromJson(JsonReader(object, name + QLatin1Char('.'))));
        }
    }
    if (top.has("lengths")) {
        const QJsonArray lengths = top.array("lengths");
        for (qsizetype i = 0; i < lengths.size(); ++i) {
            const QString name = QStringLiteral("%1lengths[%2]").arg(prefix).arg(i);
            JsonReader::require(lengths.at(i).isDouble(),
                                QStringLiteral("%1 must be a number").arg(name));
            const auto length = Eigen::Index(
                JsonReader::checkedInteger(name, lengths.at(i).toDouble(), 1, SpecLimits::length));
            JsonReader::require(spec.lengths.empty() || length > spec.lengths.back(),
                                QStringLiteral("%1 (%2) must be larger than the length before it: "
                                               "lengths are ascending")
                                    .arg(name)
                                    .arg(length));
            spec.lengths.push_back(length);
        }
    }
    top.integer("d", &spec.headDim, 1, SpecLimits::headDim);
    top.integer("features", &spec.features, 1, SpecLimits::features);
    top.integer("threads", &spec.threads, 0, SpecLimits::threads);
    top.integer("repetitions", &spec.repetitions, 1, SweepSpec::maxRepetitions);
    qint64 budget = spec.budget.bytes();
    top.integer("memory_budget_bytes", &budget, 1, 9.0e15);
    spec.budget = MemoryBudget(budget);
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
    const JsonReader top(json, QString());
    if (top.has("spec"))
        result.spec = specFromJson(top.object("spec"), QStringLiteral("spec."));
    result.sgemmGflops = top.numberOrNaN("sgemm_gflops");
    top.integer("threads", &result.threads, 0, SpecLimits::threads);
    if (top.has("points")) {
        const QJsonArray points = top.array("points");
        for (qsizetype i = 0; i < points.size(); ++i) {
            const QString name = QStringLiteral("points[%1]").arg(i);
            JsonReader::require(points.at(i).isObject(),
                                QStringLiteral("%1 must be an object").arg(name));
            const QJsonObject object = points.at(i).toObject();
            const JsonReader reader(object, name + QLatin1Char('.'));
            SweepPoint point;
            point.method = methodFromJson(reader);
            JsonReader::require(reader.has("length"),
                                QStringLiteral("%1.length is missing").arg(name));
            reader.integer("length", &point.length, 1, SpecLimits::length);
            point.secondsMedian = reader.numberOrNaN("seconds_median");
            point.secondsMin = reader.numberOrNaN("seconds_min");
            point.secondsMax = reader.numberOrNaN("seconds_max");
            point.gflops = reader.numberOrNaN("gflops");
            point.workingSetBytes = reader.numberOrNaN("working_set_bytes");
            point.peakBytes = reader.numberOrNaN("peak_bytes");
            reader.enumName("status", &point.status, parsePointStatus, true);
            result.points.push_back(point);
        }
    }
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
        // m applies to the maps that draw a random projection W.
        const bool usesFeatures =
            isApproximation(algorithm) && methodInfo(algorithm).drawsProjection;
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

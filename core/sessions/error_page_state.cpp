#include "sessions/error_page_state.h"

#include "errors.h"
#include "io/json_fields.h"

#include <QJsonArray>
#include <QStringList>

namespace attnlab {

const std::vector<ErrorSweepKind>& errorSweepKinds()
{
    static const std::vector<ErrorSweepKind> kinds{ErrorSweepKind::Features, ErrorSweepKind::Norm,
                                                   ErrorSweepKind::Length};
    return kinds;
}

QString ErrorPageState::defaultValues(ErrorSweepKind kind)
{
    switch (kind) {
        case ErrorSweepKind::Features: return QStringLiteral("8, 16, 32, 64, 128, 256");
        case ErrorSweepKind::Norm: return QStringLiteral("0.25, 0.5, 0.75, 1, 1.25, 1.5, 2");
        case ErrorSweepKind::Length: return QStringLiteral("8, 16, 32, 64, 128, 256");
    }
    return QString();
}

ErrorPageState ErrorPageState::showing(const ErrorSweepResult& result, ErrorMetric metric,
                                       ErrorAxis axis)
{
    const ErrorSweepSpec& spec = result.spec;
    QStringList swept;
    for (const double value : spec.values)
        swept.append(QString::number(value, 'g', 6));
    ErrorPageState state;
    state.methods = spec.methods;
    state.projections = spec.projections;
    state.sweep = spec.sweep;
    for (const ErrorSweepKind kind : errorSweepKinds())
        state.values[kind] =
            kind == spec.sweep ? swept.join(QStringLiteral(", ")) : defaultValues(kind);
    state.features = spec.features;
    state.seeds = spec.seeds;
    state.pairQuery = spec.pairQuery;
    state.pairKey = spec.pairKey;
    state.metric = metric;
    state.axis = axis;
    state.result = result;
    return state;
}

QJsonObject ErrorPageState::toJson() const
{
    QJsonObject valuesJson;
    for (const ErrorSweepKind kind : errorSweepKinds()) {
        const auto text = values.find(kind);
        valuesJson[errorSweepKindName(kind)] =
            text != values.end() ? text->second : defaultValues(kind);
    }
    QJsonObject json;
    json[QLatin1String("methods")] =
        namesArray(methods, [](Method method) { return methodInfo(method).name; });
    json[QLatin1String("projections")] = namesArray(projections, projectionKindName);
    json[QLatin1String("sweep")] = errorSweepKindName(sweep);
    json[QLatin1String("values")] = valuesJson;
    json[QLatin1String("features")] = features;
    json[QLatin1String("seeds")] = seeds;
    json[QLatin1String("pair_query")] = pairQuery;
    json[QLatin1String("pair_key")] = pairKey;
    json[QLatin1String("metric")] = errorMetricName(metric);
    json[QLatin1String("axis")] = errorAxisName(axis);
    if (!result.rows.empty())
        json[QLatin1String("result")] = result.toJson();
    return json;
}

ErrorPageState ErrorPageState::fromJson(const QJsonObject& json)
{
    ErrorPageState state;
    for (const char* key : {"methods", "projections"})  // the page's lists are never absent
        if (!json.value(QLatin1String(key)).isArray())
            throw InputError(QStringLiteral("%1 must be an array").arg(QLatin1String(key)));
    const JsonFields fields(json, QString());
    state.methods = fields.readNames<Method>("methods", parseApproximation);
    state.projections = fields.readNames<ProjectionKind>("projections", parseProjectionKind);
    if (!parseErrorSweepKind(json.value(QLatin1String("sweep")).toString(), &state.sweep))
        throw InputError(QStringLiteral("sweep must be features, norm or length"));
    if (!parseErrorMetric(json.value(QLatin1String("metric")).toString(), &state.metric))
        throw InputError(QStringLiteral("metric: unknown metric"));
    if (json.contains(QLatin1String("axis")) &&
        !parseErrorAxis(json.value(QLatin1String("axis")).toString(), &state.axis))
        throw InputError(QStringLiteral("axis: unknown axis (value, time or flops)"));
    const QJsonValue valuesValue = json.value(QLatin1String("values"));
    if (!valuesValue.isObject())
        throw InputError(QStringLiteral("values must be an object"));
    for (const ErrorSweepKind kind : errorSweepKinds()) {
        const QJsonValue text = valuesValue.toObject().value(errorSweepKindName(kind));
        if (!text.isString())
            throw InputError(
                QStringLiteral("values.%1 must be a string").arg(errorSweepKindName(kind)));
        state.values[kind] = text.toString();
    }
    state.features = boundedInteger(json, "features", 1, maxFeatures);
    state.seeds = boundedInteger(json, "seeds", 1, maxSeeds);
    state.pairQuery = boundedInteger(json, "pair_query", 0, maxPairIndex);
    state.pairKey = boundedInteger(json, "pair_key", 0, maxPairIndex);
    if (json.contains(QLatin1String("result"))) {
        if (!json.value(QLatin1String("result")).isObject())
            throw InputError(QStringLiteral("result must be an object"));
        try {
            state.result =
                ErrorSweepResult::fromJson(json.value(QLatin1String("result")).toObject());
        } catch (const InputError& e) {
            throw InputError(QStringLiteral("result.") + e.message());
        }
    }
    return state;
}

}  // namespace attnlab

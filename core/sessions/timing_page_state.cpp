#include "sessions/timing_page_state.h"

#include "errors.h"
#include "io/json_fields.h"

#include <algorithm>

namespace attnlab {

TimingPageState TimingPageState::showing(const SweepResult& result)
{
    const std::vector<Eigen::Index>& lengths = result.spec.lengths;
    const auto clampLength = [](Eigen::Index length) {
        return int(std::clamp<Eigen::Index>(length, minLength, maxLength));
    };
    const auto hasVariant = [&](bool causal) {
        return std::any_of(result.spec.methods.begin(), result.spec.methods.end(),
                           [&](const TimedMethod& m) { return m.causal == causal; });
    };
    TimingPageState state;
    state.spec = result.spec;
    state.fromLength = lengths.empty() ? minLength : clampLength(lengths.front());
    state.toLength = lengths.empty() ? minLength : clampLength(lengths.back());
    state.pointsPerOctave = 1;
    state.nonCausal = hasVariant(false);
    state.causal = hasVariant(true);
    state.result = result;
    return state;
}

QJsonObject TimingPageState::toJson() const
{
    QJsonObject json;
    json[QLatin1String("spec")] = spec.toJson();
    json[QLatin1String("min_length")] = fromLength;
    json[QLatin1String("max_length")] = toLength;
    json[QLatin1String("points_per_octave")] = pointsPerOctave;
    json[QLatin1String("non_causal")] = nonCausal;
    json[QLatin1String("causal")] = causal;
    if (!result.points.empty())
        json[QLatin1String("result")] = result.toJson();
    return json;
}

TimingPageState TimingPageState::fromJson(const QJsonObject& json)
{
    TimingPageState state;
    if (!json.value(QLatin1String("spec")).isObject())
        throw InputError(QStringLiteral("spec must be an object"));
    state.spec = SweepSpec::fromJson(json.value(QLatin1String("spec")).toObject());
    state.fromLength = boundedInteger(json, "min_length", minLength, maxLength);
    state.toLength = boundedInteger(json, "max_length", state.fromLength, maxLength);
    state.pointsPerOctave = boundedInteger(json, "points_per_octave", 1, 4);
    if (json.contains(QLatin1String("result"))) {
        if (!json.value(QLatin1String("result")).isObject())
            throw InputError(QStringLiteral("result must be an object"));
        state.result = SweepResult::fromJson(json.value(QLatin1String("result")).toObject());
    }
    state.nonCausal = json.value(QLatin1String("non_causal")).toBool(true);
    state.causal = json.value(QLatin1String("causal")).toBool(false);
    return state;
}

}  // namespace attnlab

#include "sessions/generation_page_state.h"

#include "errors.h"
#include "experiment_spec.h"
#include "io/json_fields.h"

#include <QJsonArray>

#include <algorithm>

namespace attnlab {

QJsonObject GenerationPageState::toJson() const
{
    QJsonObject json;
    if (prompt)
        json[QLatin1String("prompt")] = *prompt;
    json[QLatin1String("tokens")] = tokens;
    if (replacedLayers.empty()) {
        json[QLatin1String("layers")] = QStringLiteral("all");
    } else {
        QJsonArray layers;
        for (const int layer : replacedLayers)
            layers.append(layer);
        json[QLatin1String("layers")] = layers;
    }
    QJsonObject draws{{QStringLiteral("greedy"), sampling.greedy}};
    if (!sampling.greedy) {
        draws[QLatin1String("temperature")] = sampling.temperature;
        draws[QLatin1String("top_k")] = sampling.topK;
        draws[QLatin1String("seed")] = double(sampling.seed);
    }
    json[QLatin1String("sampling")] = draws;
    if (followed)
        json[QLatin1String("follow")] = QJsonObject{{QStringLiteral("layer"), followed->first},
                                                    {QStringLiteral("head"), followed->second}};
    json[QLatin1String("generated")] = generated;
    return json;
}

GenerationPageState GenerationPageState::fromJson(const QJsonObject& json)
{
    GenerationPageState state;
    const JsonFields fields(json, QString());
    if (fields.has("prompt")) {
        QString prompt;
        fields.read("prompt", &prompt);
        state.prompt = prompt;
    }
    fields.read("tokens", &state.tokens, 1, maxTokens);

    const QJsonValue layers = json.value(QLatin1String("layers"));
    if (layers.isArray()) {
        const QJsonArray items = layers.toArray();
        JsonFields::require(!items.isEmpty(),
                            QStringLiteral("layers must be \"all\" or a non-empty array"));
        for (qsizetype i = 0; i < items.size(); ++i)
            state.replacedLayers.push_back(int(
                JsonFields::checkedInteger(QStringLiteral("layers[%1]").arg(i),
                                           items.at(i).toDouble(-1), 0, SpecLimits::layers - 1)));
        std::sort(state.replacedLayers.begin(), state.replacedLayers.end());
        state.replacedLayers.erase(
            std::unique(state.replacedLayers.begin(), state.replacedLayers.end()),
            state.replacedLayers.end());
    } else {
        JsonFields::require(layers.isUndefined() || layers.toString() == QLatin1String("all"),
                            QStringLiteral("layers must be \"all\" or an array of layer numbers"));
    }

    const QJsonObject draws = fields.object("sampling");  // JsonFields keeps a reference
    const JsonFields sampling(draws, QStringLiteral("sampling."));
    sampling.read("greedy", &state.sampling.greedy);
    sampling.read("temperature", &state.sampling.temperature, false);
    sampling.read("top_k", &state.sampling.topK, 0, maxTokens);
    sampling.readSeed("seed", &state.sampling.seed);

    if (fields.has("follow")) {
        const QJsonObject head = fields.object("follow");
        const JsonFields follow(head, QStringLiteral("follow."));
        JsonFields::require(follow.has("layer") && follow.has("head"),
                            QStringLiteral("follow must have a layer and a head"));
        std::pair<int, int> followed{0, 0};
        follow.read("layer", &followed.first, 0, SpecLimits::layers - 1);
        follow.read("head", &followed.second, 0, SpecLimits::heads - 1);
        state.followed = followed;
    }
    fields.read("generated", &state.generated);
    return state;
}

}  // namespace attnlab

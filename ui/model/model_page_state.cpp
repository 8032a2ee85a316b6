#include "ui/model/model_page_state.h"

#include "errors.h"
#include "inputs/model_input.h"

#include <cmath>

namespace attnlab::ui {

namespace {

QString axisName(ModelEvalAxis axis)
{
    return axis == ModelEvalAxis::Layer ? QStringLiteral("layer") : QStringLiteral("features");
}

[[noreturn]] void refuseField(const char* field, const QString& what)
{
    throw InputError(QStringLiteral("model page: \"%1\" %2").arg(QLatin1String(field), what));
}

}  // namespace

QJsonObject ModelPageState::toJson() const
{
    const QJsonValue layers =
        replacedLayer < 0 ? QJsonValue(QStringLiteral("all")) : QJsonValue(replacedLayer);
    QJsonObject json{{"replaced_layers", layers},      {"sweep_m", sweepFeatures},
                     {"sweep_seeds", sweepSeeds},      {"position", position},
                     {"axis", axisName(axis)},         {"images", imageFolder ? "folder" : "image"},
                     {"rows", modelEvalRowsJson(rows)}};
    if (!rows.empty())
        json.insert(QStringLiteral("rows_input"), rowsInput.toJson());
    return json;
}

ModelPageState ModelPageState::fromJson(const QJsonObject& json, const ModelPageState& current,
                                        const ExperimentSpec& sessionSpec)
{
    ModelPageState state = current;
    if (json.contains("replaced_layers")) {
        const QJsonValue v = json["replaced_layers"];
        if (v.isString() && v.toString() == QLatin1String("all"))
            state.replacedLayer = -1;
        else if (v.isDouble() && v.toDouble() >= 0 && v.toDouble() < SpecLimits::layers &&
                 v.toDouble() == std::floor(v.toDouble()))
            state.replacedLayer = v.toInt();
        else
            refuseField("replaced_layers", QStringLiteral("must be \"all\" or a layer number"));
    }
    if (json.contains("sweep_m")) {
        state.sweepFeatures = json["sweep_m"].toString();
        if (sweepFeatureList(state.sweepFeatures).empty())
            refuseField("sweep_m",
                        QStringLiteral("must list m values from 1 to %1 separated by commas")
                            .arg(SpecLimits::features));
    }
    if (json.contains("sweep_seeds")) {
        state.sweepSeeds = json["sweep_seeds"].toInt(-1);
        if (state.sweepSeeds < 1 || state.sweepSeeds > maxSweepSeeds)
            refuseField("sweep_seeds", QStringLiteral("must be from 1 to %1").arg(maxSweepSeeds));
    }
    if (json.contains("position")) {
        state.position = json["position"].toInt(-1);
        if (state.position < 0 || state.position >= SpecLimits::length)
            refuseField("position", QStringLiteral("must be a token position"));
    }
    if (json.contains("axis")) {
        const QString name = json["axis"].toString();
        if (name == QLatin1String("layer"))
            state.axis = ModelEvalAxis::Layer;
        else if (name == QLatin1String("features"))
            state.axis = ModelEvalAxis::Features;
        else
            refuseField("axis", QStringLiteral("must be \"features\" or \"layer\""));
    }
    if (json.contains("images")) {
        const QString name = json["images"].toString();
        if (name != QLatin1String("image") && name != QLatin1String("folder"))
            refuseField("images", QStringLiteral("must be \"image\" or \"folder\""));
        state.imageFolder = name == QLatin1String("folder");
    }
    state.rows.clear();
    if (json.contains("rows")) {
        if (!json["rows"].isArray())
            refuseField("rows", QStringLiteral("must be an array"));
        if (!readModelEvalRows(json["rows"].toArray(), &state.rows))
            refuseField("rows", QStringLiteral("holds a row without its method, m, layers, seed, "
                                               "tokens or a metric in range"));
    }
    state.rowsInput = {};
    if (json.contains("rows_input")) {
        if (!ModelEvalRowsInput::fromJson(json["rows_input"], &state.rowsInput))
            refuseField("rows_input", QStringLiteral("must be an object giving the rows' key, "
                                                     "model and count"));
    } else if (!state.rows.empty()) {
        // An older session's rows, without their input: the session's own when a model reads it.
        const bool model = sessionSpec.input.kind == InputKind::Model;
        bool vit = false;
        try {
            vit =
                model && modelArchitectureOf(sessionSpec.input.modelPath) == ModelArchitecture::Vit;
        } catch (const InputError&) {
            // A model that cannot be read has no rows: its comparison says why.
        }
        if (model) {
            state.rowsInput.key = sweepInputKey(sessionSpec, vit, state.imageFolder);
            state.rowsInput.model = sessionSpec.input.modelPath;
        }
        state.rowsInput.count = state.rows.front().tokens;
    }
    state.rowsInputGuessed = !state.rows.empty() && !json.contains("rows_input");
    return state;
}

std::vector<int> sweepFeatureList(const QString& text)
{
    std::vector<int> values;
    for (const QString& item : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int m = item.trimmed().toInt(&ok);
        if (!ok || m < 1 || m > SpecLimits::features)
            return {};
        values.push_back(m);
    }
    return values;
}

}  // namespace attnlab::ui

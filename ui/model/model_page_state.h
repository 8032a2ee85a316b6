#pragma once

#include "experiment.h"
#include "ui/model/downstream_job.h"
#include "ui/model/model_eval_chart.h"

#include <QJsonObject>
#include <QString>

#include <vector>

namespace attnlab::ui {

// The Inside the model page in a session (the view's "model" object): the replaced layers, the
// sweep's m values and seeds, the selected position, the chart's axis, one image or its folder,
// and the sweep's rows with the input they were computed on.
struct ModelPageState {
    // The most seeds a sweep takes per point.
    static constexpr int maxSweepSeeds = 20;

    int replacedLayer = -1;  // -1: every layer
    QString sweepFeatures = QStringLiteral("16,32,64,128,256");
    int sweepSeeds = 1;
    int position = 0;
    ModelEvalAxis axis = ModelEvalAxis::Features;
    bool imageFolder = false;  // a ViT's: every image of the folder, not the image alone
    std::vector<ModelEvalRow> rows;
    ModelEvalRowsInput rowsInput;
    // The rows are an older session's, saved without their input: rowsInput is guessed from the
    // session's own input.
    bool rowsInputGuessed = false;

    // {"replaced_layers": "all" or a layer, "sweep_m", "sweep_seeds", "position", "axis":
    // "features" or "layer", "images": "image" or "folder", "rows" (modelEvalRowsJson), and
    // "rows_input" when there are rows}.
    QJsonObject toJson() const;
    // Fields json lacks keep current's, except the rows: a state without rows has no sweep. Rows
    // without their input are of sessionSpec's input when a model reads it, else of an unknown
    // one. Throws InputError naming the field when one is malformed.
    static ModelPageState fromJson(const QJsonObject& json, const ModelPageState& current,
                                   const ExperimentSpec& sessionSpec);
};

// The m values of a list such as "16,32,64"; empty when an item is not an m from 1 to the limit.
std::vector<int> sweepFeatureList(const QString& text);

}  // namespace attnlab::ui

#pragma once

#include "ui/common/background_job.h"
#include "experiment.h"
#include "memory_budget.h"
#include "ui/model/model_eval_chart.h"
#include "sweeps/downstream.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace attnlab::ui {

// The most images of a folder one comparison reads (the first ones by name).
constexpr int kMaxFolderImages = 64;

// What the Inside the model page asks of its worker: the cases (a method spec and the layers it
// replaces) and how to read them.
struct DownstreamRequest {
    std::vector<std::pair<ExperimentSpec, std::vector<int>>> cases;
    bool sweep = false;
    ModelEvalAxis axis = ModelEvalAxis::Features;
    bool imageFolder = false;  // a ViT: every image of the image's folder, not the image alone
    // Every layer of the model is replaced, in a single comparison (the model's size is known
    // only once it is loaded).
    bool replaceAll = false;
    MemoryBudget budget;
};

// What the worker gives back for a request.
struct DownstreamOutcome {
    DownstreamRequest request;  // with the replaced layers filled in
    QString modelFolder;        // the model's folder, to see whether the model changed
    int layerCount = 0;
    bool classes = false;  // a ViT: the predictions are the image's classes, not next tokens
    QStringList labels;    // what each prediction follows: the tokens, or the images' names
    QStringList notes;
    std::function<QString(int)> outcomeName;  // a token or class id as the page shows it
    std::shared_ptr<const DownstreamComparison> comparison;  // of the last case
    std::vector<ModelEvalRow> rows;
};

// Runs the request's cases on the model of its first case (on the worker of a BackgroundJob): a
// language model reading the text (next-token predictions at every position) or a ViT reading
// the image, or the images of its folder (a class each, their comparisons combined:
// combinedComparison). A language model's input with a second checkpoint compares the two
// checkpoints instead (compareCheckpoints: every layer, the row "checkpoint"). Reports progress
// (inputs x cases) and throws Cancelled when cancelled.
DownstreamOutcome runDownstream(DownstreamRequest request, JobContext& context);

// The page's rows as the session keeps them: an object per row with the fields of model-eval's
// CSV (method, m, layers, seed as a string, tokens, top1_agreement, mean_kl, max_kl,
// rel_frobenius_attention_mean).
QJsonArray modelEvalRowsJson(const std::vector<ModelEvalRow>& rows);
// Reads them back into *rows; false when a row lacks its method, m, layers, seed or tokens, or
// has a metric out of range (*rows then unchanged).
bool readModelEvalRows(const QJsonArray& json, std::vector<ModelEvalRow>* rows);

// The input a sweep's rows were computed on, as the chart's subtitle names it and the session
// keeps it beside them ("rows_input": key, model, count, images, and experiment and image_folder
// when the input is known).
struct ModelEvalRowsInput {
    QString key;    // sweepInputKey of the input; empty: unknown (an older session's rows)
    QString model;  // the model's path or id; empty: unknown
    int count = 0;  // the text's tokens, or the images
    bool images = false;
    // A spec holding the input the rows read (its other fields are the defaults), and whether a
    // ViT read the image's folder: what key is made from. The session keeps it as an experiment
    // (rows_input.experiment), whose files move with the session's folder like the spec's
    // (sessions/session.h), so key is made again from them when read back. Unset for an older
    // session's rows, which have only their key.
    std::optional<ExperimentSpec> experiment;
    bool imageFolder = false;

    // The input of rows computed on spec's input (vit: a ViT read it, count images; else a
    // language model, count tokens).
    static ModelEvalRowsInput of(const ExperimentSpec& spec, bool vit, bool imageFolder, int count);

    QJsonObject toJson() const;
    // Reads it back, making key from the experiment when there is one; false (*input unchanged)
    // when a field is missing or out of range.
    static bool fromJson(const QJsonValue& json, ModelEvalRowsInput* input);
};
// What a sweep's rows depend on besides the method: the model and the text a language model
// reads, or the image a ViT (vit: the spec's model is one) reads and whether the other images of
// its folder are read too, as the hexadecimal SHA-1 of them.
QString sweepInputKey(const ExperimentSpec& spec, bool vit, bool imageFolder);

}  // namespace attnlab::ui

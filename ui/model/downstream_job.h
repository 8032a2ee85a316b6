#pragma once

#include "experiment.h"
#include "memory_budget.h"
#include "model/model_eval_chart.h"
#include "sweeps/downstream.h"

#include <QPromise>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace attnlab::ui {

// The most images of a folder one comparison reads (the first ones by name).
constexpr int kMaxFolderImages = 64;

// One run of the Inside the model page on the worker: the cases (a method spec and the layers it
// replaces), and what came back. The GUI thread owns it before and after; the worker writes the
// results and reads `cancel`.
struct DownstreamJob {
    std::vector<std::pair<ExperimentSpec, std::vector<int>>> cases;
    bool sweep = false;
    ModelEvalAxis axis = ModelEvalAxis::Features;
    bool imageFolder = false;  // a ViT: every image of the image's folder, not the image alone
    MemoryBudget budget;
    std::atomic<bool> cancel = false;

    // Written by the worker.
    QString modelFolder;  // the model's folder, to see whether the model changed
    int layerCount = 0;
    bool classes = false;  // a ViT: the predictions are the image's classes, not next tokens
    QStringList labels;    // what each prediction follows: the tokens, or the images' names
    QStringList notes;
    std::function<QString(int)> outcomeName;  // a token or class id as the page shows it
    std::shared_ptr<const DownstreamComparison> comparison;  // of the last case
    std::vector<ModelEvalRow> rows;
    QString error;
    bool cancelled = false;
};

// Runs the job's cases on the model of its first case: a GPT-2 reading the text (next-token
// predictions at every position) or a ViT reading the image, or the images of its folder (a
// class each, their comparisons combined: combinedComparison). replaceAll replaces every layer
// of the model in a single comparison (its size is known only once it is loaded).
void runDownstreamJob(DownstreamJob& job, bool replaceAll, QPromise<void>& promise);

}  // namespace attnlab::ui

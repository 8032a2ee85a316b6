#pragma once

#include "attention/fitted_feature_maps.h"
#include "fitting/distillation.h"
#include "memory_budget.h"
#include "model/language_model.h"

#include <QString>

#include <functional>
#include <memory>
#include <vector>

namespace attnlab {

// Hedgehog's maps fitted to every head of chosen layers of a language model on a training text
// (`fit-features`, the window's Fit to this model; docs/design.md section 2.12): the text is cut
// into windows of the model's context (at most kFitWindowTokens tokens), the model reads each
// once, and every query head h of a fitted layer gets its own query map and key map (with
// grouped-query attention, on its key/value head's keys), fitted by distillation (distillation.h)
// against its exact causal rows on those windows, then hedgehog-window's gamma for `window`.

// Tokens per training window, at most (the model's positions when fewer).
inline constexpr int kFitWindowTokens = 256;
// The fewest tokens a training text may have.
inline constexpr int kMinimumFitTokens = 512;

struct FeatureMapFitSpec {
    std::vector<int> layers;  // 0-based; empty: every layer
    // Only these heads of those layers (the window's "this head"); empty: every head.
    std::vector<HeadSite> heads;
    int featureDim = 0;  // d_f; 0: d (C = 2d features)
    int window = 32;     // hedgehog-window's w, for gamma
    DistillationSettings distillation;
    QString trainingText;  // what the text is (its file name), recorded in the maps
};

// One head's fit: its KL after every step on the step's batch (the loss curve), and its mean row
// KL(P || P^) over the whole training text before and after the fit.
struct HeadFitRecord {
    int layer = 0;
    int head = 0;
    std::vector<float> curve;
    double initialKl = 0;
    double finalKl = 0;
};

struct FeatureMapFit {
    std::shared_ptr<FittedFeatureMaps> maps;
    std::vector<HeadFitRecord> heads;  // by layer, then head
    int tokens = 0;                    // of the training text
    int windows = 0;
    double seconds = 0;  // the fit itself (after the model has read the text)
};

// The fit's progress: Adam steps done over every head, of total; the mean KL of the heads' latest
// steps (a head not yet begun at its starting KL).
struct FeatureMapFitProgress {
    qint64 done = 0;
    qint64 total = 0;
    double meanKl = 0;
};

// The training windows of a text's token ids (as the model's tokenizer encodes the text): its
// sequenceWindows of the model's context, at most kFitWindowTokens tokens, each beginning with
// the BOS a Llama's tokenizer puts first.
std::vector<std::vector<int>> fitWindows(const LanguageModel& model, const std::vector<int>& ids);

// Fits the maps of spec's layers of `model` on the text's token ids (as the tokenizer encodes the
// text), read in fitWindows. progress is called after
// steps, from one engine thread at a time (any of them); cancelled is polled between steps, from
// the engine threads (Cancelled is thrown, nothing is returned). The heads are fitted in parallel
// on the engine threads, one head to a thread (Eigen's products inside each run on that thread).
// Throws InputError for a text under kMinimumFitTokens tokens, a layer or head the model does not
// have, d_f out of [1, 4096], a loss that is not a number (naming the layer and head);
// ResourceError when the windows' rows would not fit in budget.
FeatureMapFit fitFeatureMaps(const LanguageModel& model, const std::vector<int>& ids,
                             const FeatureMapFitSpec& spec, const MemoryBudget& budget = {},
                             const std::function<void(const FeatureMapFitProgress&)>& progress = {},
                             const std::function<bool()>& cancelled = {});

// Throws InputError, naming maps.file, when the maps were fitted to another model than the one in
// folder (another name, or another number of layers, heads or head dimension): requireMapsOfModel
// with the model's shape.
void requireFeatureMapsFit(const FittedFeatureMaps& maps, const QString& folder,
                           const LanguageModelInfo& info);

}  // namespace attnlab

#pragma once

#include "attention/approximation_spec.h"
#include "types.h"

#include <QString>

#include <map>
#include <utility>

namespace attnlab {

// One query head's fitted feature maps (Hedgehog, docs/design.md section 2.4): the query map
// phi_q(x) = [exp(W_q x' + b_q), exp(-(W_q x' + b_q))] and the key map phi_k with its own W_k,
// b_k (W of d_f x d, b of d_f, applied to x' = sqrt(s) x), and the window variant's weight
// gamma = exp(windowLogWeight) of the features outside the window (hedgehog-window).
struct FittedHeadMaps {
    MatrixD queryWeight;  // W_q, d_f x d
    VectorD queryBias;    // b_q, d_f
    MatrixD keyWeight;    // W_k, d_f x d
    VectorD keyBias;      // b_k, d_f
    double windowLogWeight = 0;

    int featureDim() const { return int(queryWeight.rows()); }
    int headDim() const { return int(queryWeight.cols()); }
    // The maps at the start of a fit: W = the first d_f rows of the identity (the identity when
    // d_f = d), rows past d drawn N(0, 1/d) from seed (so that they differ), b = 0, gamma = 1.
    static FittedHeadMaps initial(int featureDim, int headDim, std::uint64_t seed);
};

// The fitted maps of a model's query heads, by layer and head, with what they were fitted to:
// the model's name and shape and the head dimension d. A plain value, shared (read-only) by the
// specs that use it.
struct FittedFeatureMaps {
    QString model;   // the model's name ("kjv-gpt2": its folder or file name)
    int layers = 0;  // the model's layers and query heads
    int heads = 0;
    int headDim = 0;       // d
    int featureDim = 0;    // d_f; C = 2 d_f features a side
    int window = 0;        // w the window weights were fitted for; 0 when none were
    QString trainingText;  // what they were fitted on (a file name), for people
    int steps = 0;         // the fit's steps
    QString file;          // the file they were read from or saved to; empty while unsaved
    std::map<std::pair<int, int>, FittedHeadMaps> fitted;  // by (layer, head)

    // The maps of (layer, head), or null when that head was not fitted.
    const FittedHeadMaps* find(int layer, int head) const;
    // "kjv-gpt2, layers 0-3 (16 heads), d_f = 64": what they are, for messages and the window.
    QString description() const;
};

// Maps for every head of a model of `layers` layers and `heads` heads of dimension d at their
// initial values (FittedHeadMaps::initial, head h of layer l from seed + l * heads + h): what a
// fit starts from, and what the timing sweep times (the cost does not depend on the values).
std::shared_ptr<const FittedFeatureMaps> initialFeatureMaps(const QString& model, int layers,
                                                            int heads, int headDim, int featureDim,
                                                            std::uint64_t seed = 0);

// fresh's heads added to kept's (a head fitted again replaces its maps) when both were fitted to
// the same model with the same d and d_f; otherwise fresh alone. The result names no file (it is
// not saved as it is) and keeps fresh's fit settings.
std::shared_ptr<const FittedFeatureMaps> mergedFeatureMaps(const FittedFeatureMaps* kept,
                                                           const FittedFeatureMaps& fresh);

// The name fitted maps record for the model in `folder` (a folder or a .gguf file): its file
// name ("kjv-gpt2").
QString fittedModelName(const QString& folder);

// Throws InputError, naming maps.file, when the maps were fitted to another model than the one in
// folder (another name; its remedy: FitMaps), or to one of another shape (layers, query heads,
// head dimension d).
void requireMapsOfModel(const FittedFeatureMaps& maps, const QString& folder, int layers, int heads,
                        int headDim);

// The fitted maps spec's method runs at `site` for heads of dimension d. Throws InputError, naming
// the method (and the file), when none are loaded ("fit them first": the command and the
// option), when they were fitted to heads of another dimension, or when they hold no maps for
// the site (its remedy: FitLayers).
const FittedHeadMaps& fittedHeadMaps(const ApproximationSpec& spec, int d, HeadSite site);

}  // namespace attnlab

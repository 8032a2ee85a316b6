#pragma once

#include "attention/approximation.h"
#include "attention/feature_maps.h"
#include "attention/linear_attention.h"
#include "inputs/inputs.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace attnlab {

// The largest values a spec may hold: the command line and session files refuse larger ones
// (whether a given machine can compute a request is the memory budget's business).
struct SpecLimits {
    static constexpr int features = kMaxFeatures;
    static constexpr int headDim = 1 << 16;
    static constexpr int heads = 1024;
    static constexpr int layers = 1024;
    static constexpr int patchSize = 4096;
    static constexpr int imageSize = 8192;
    static constexpr int length = 1'000'000'000;
    static constexpr int clusters = 1 << 20;
    static constexpr int chunkSize = 1 << 16;
    static constexpr int threads = 1024;
};

// Everything that decides a result: the input, the method and its parameters, the seeds. A plain
// value; JSON-serialisable, so a session or a command line reproduces a view exactly.
struct ExperimentSpec {
    InputSpec input;
    // The method "exact" compares the streaming (tiled, online-softmax) exact output with the
    // materialised one; any other method is a feature map.
    bool exactMethod = false;
    ApproximationSpec approximation;
    std::optional<double> scale;  // s, the temperature; 1/sqrt(d) when not set
    bool causal = false;
    Precision precision = Precision::Float;
    int threads = 0;                           // engine threads; 0 = one per hardware thread
    int chunkSize = int(kDefaultCausalChunk);  // rows per chunk of the causal linear form
    // The file of the fitted feature maps (hedgehog, hedgehog-window), which whoever reads a spec
    // loads into approximation.fittedMaps (fitting/feature_map_file.h); empty when there is none
    // or the maps were fitted in the window and not saved.
    QString featureMapFile;

    // "exact" or the feature map's name ("favor-positive", ...).
    QString methodName() const;
    // Sets exactMethod and approximation.kind from a method name; false if the name is unknown.
    bool setMethod(const QString& name);
    // What stands in the approximation's place, as titles name it: the second checkpoint
    // ("Checkpoint model-q4_k_m.gguf", its file's name) when input.comparisonModelPath is set,
    // else the method with its size ("FAVOR+ positive, m = 64").
    QString methodTitle() const;
    // s for head dimension d.
    double resolvedScale(Eigen::Index d) const;

    QJsonObject toJson() const;
    // Throws InputError naming the field when a field has the wrong type or value or the version
    // is unknown. Missing fields keep their defaults.
    static ExperimentSpec fromJson(const QJsonObject& json);
};

// Why attention on this input is causal when it is: a model's (a language model's; a ViT's is
// not causal) as it was trained, or else the mask the user turned on.
inline CausalBecause causalReason(const InputSpec& input)
{
    return input.kind == InputKind::Model ? CausalBecause::LanguageModel : CausalBecause::Mask;
}

QString precisionName(Precision precision);  // "float", "double"
bool parsePrecision(const QString& name, Precision* precision);

// The spec of the built-in example (builtinExample() in inputs/builtin_models.h): the default
// built-in text model on its sentence, its layer, causal, FAVOR+ positive with the default m (the
// window's first view and `compute` without input).
ExperimentSpec exampleSpec();

}  // namespace attnlab

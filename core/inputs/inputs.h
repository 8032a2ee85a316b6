#pragma once

#include "image_pixels.h"
#include "memory_budget.h"
#include "inputs/builtin_models.h"
#include "inputs/text.h"
#include "model/image_preprocessing.h"
#include "model/language_model.h"
#include "model/transformer_blocks.h"
#include "types.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace attnlab {

enum class InputKind { Text, Image, Random, Files, Model };

// How each head's Q, K and V come from the token (or patch) vectors X (L x d_model, d_model = H d).
enum class HeadProjection {
    Random,    // Q_h = X Wq_h, K_h = X Wk_h, V_h = X Wv_h with seeded N(0, 1/d) weights
    Tied,      // as Random but Wk_h = Wq_h: a token attends to tokens like itself
    Identity,  // Q_h = K_h = V_h = sqrt(H) X_h, X_h the h-th block of d columns of X
};

// The sentence a new user sees first.
QString defaultText();

struct InputSpec {
    InputKind kind = InputKind::Text;

    // Text (random embeddings) and model input
    QString text = defaultText();
    TokenMode tokenMode = TokenMode::Words;
    bool positionalEncoding = true;

    // Model: a trained transformer reads the input; its own Q, K, V of one layer (all its heads)
    // are the input. config.json's model_type says which: a language model reads the text (a
    // folder of config.json, the .safetensors weights and the tokenizer files, a .gguf file, or
    // a built-in text model's id, builtin_models.h); a ViT
    // reads the image at imagePath (a folder of config.json, preprocessor_config.json and the
    // weights, or kBuiltinVitModel), which it resizes itself (patchSize and imageSize are not
    // read).
    QString modelPath = QString::fromLatin1(kDefaultTextModel);
    int layer = 0;                // 0-based
    bool keepLastTokens = false;  // a text longer than the model reads: keep its last tokens
    // A second checkpoint of the same language model (a folder, a .gguf file), or empty: its
    // exact attention on the same tokens, layer and heads takes the approximation's place
    // (compute's P^ and metrics, the error maps, model-eval's predictions), so that a quantized
    // file is compared with the original as an approximation is.
    QString comparisonModelPath;

    // Image (and a ViT's input): decoded outside the engine (core has no QtGui) into ImagePixels.
    QString imagePath;
    int patchSize = 16;   // p: patches are p x p pixels
    int imageSize = 224;  // the longest side is scaled to this many pixels before patching

    // Random
    int length = 128;  // L
    std::optional<double>
        rowNorm;       // |q_i| = |k_i|; default d^(1/4), so |x'| = 1 when s = 1/sqrt(d)
    int clusters = 0;  // > 0: rows gather around this many directions

    // Files (.npy): 2-D L x d or 3-D H x L x d. Without a value file, V = K.
    QString queryPath;
    QString keyPath;
    QString valuePath;

    // Text, image and random input
    int headDim = 64;                                  // d (and d_v)
    int heads = 1;                                     // H
    HeadProjection projection = HeadProjection::Tied;  // a token attends to tokens like itself
    std::uint64_t seed = 0;  // embeddings, projections Wq, Wk, Wv, random Q, K, V

    // Every input: Q and K are multiplied by this. Approximation error grows quickly with |x'|.
    double normMultiplier = 1.0;
};

struct HeadTensors {
    MatrixD q;  // L x d
    MatrixD k;  // L x d
    MatrixD v;  // L x d_v
};

// What attention runs on: per head Q, K, V, and a label for each position.
struct AttentionInput {
    std::vector<HeadTensors> heads;
    QStringList labels;  // the token text, the patch "(row, col)", or the index
    QStringList notes;   // what the input changed on the way, in plain words (tokens dropped)
    int gridRows = 0;    // image input: the patch grid
    int gridCols = 0;
    // A language model's input: which model, its key/value groups and positional encoding.
    std::optional<LanguageModelInfo> model;
    // With InputSpec::comparisonModelPath: the second checkpoint's heads, shaped as `heads`.
    std::vector<HeadTensors> comparison;

    Eigen::Index length() const { return heads.front().q.rows(); }
    Eigen::Index headDim() const { return heads.front().q.cols(); }
    Eigen::Index valueDim() const { return heads.front().v.cols(); }
};

// What a trained model computed to give its model input (buildInput's `run`).
struct ModelRun {
    std::shared_ptr<const ForwardResult> forward;            // every layer's Q, K, V and the logits
    std::shared_ptr<const ForwardResult> comparisonForward;  // the second checkpoint's, if any
    PixelTensor pixels;                                      // a ViT's: the image as it read it
};

// Builds Q, K, V for every head (see docs/design.md 3.1). Text and image inputs are scaled so that
// E|q_i|^2 = E|k_i|^2 = sqrt(d): then |x'| is about 1 at the default scale s = 1/sqrt(d), where
// FAVOR+ is close to exact but visibly not equal. Image input needs the decoded pixels.
// Throws InputError (no tokens, image smaller than a patch, unreadable or inconsistent .npy
// files, NaN or Inf values, parameters out of range) and ResourceError (over the budget).
// With `run`, model input also gives what the model computed on the way: its forward pass of
// every layer and, for a ViT, the image as it read it (the preprocessed pixels).
AttentionInput buildInput(const InputSpec& spec, const ImagePixels* image = nullptr,
                          const MemoryBudget& budget = MemoryBudget(), ModelRun* run = nullptr);

QString inputKindName(InputKind kind);  // "text", "image", "random", "files", "model"
bool parseInputKind(const QString& name, InputKind* kind);
QString headProjectionName(HeadProjection projection);  // "random", "tied", "identity"
bool parseHeadProjection(const QString& name, HeadProjection* projection);

}  // namespace attnlab

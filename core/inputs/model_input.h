#pragma once

#include "inputs/builtin_models.h"
#include "inputs/inputs.h"
#include "memory_budget.h"
#include "model/checkpoint_files.h"
#include "model/language_model.h"
#include "model/vit_model.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace attnlab {

// The folder of a built-in model (builtinFolderName: kjv-llama, kjv-gpt2, fashion-vit):
// $ATTNLAB_MODELS/<folder> when that variable is set, else the installed
// share/attention-lab/models/<folder> beside the program, else the source tree's
// resources/models/<folder>. Empty when none of them holds config.json.
QString builtinModelFolder(const QString& builtinName = QString::fromLatin1(kBuiltinModel));

// The folder a model path names: builtinModelFolder() for a built-in name, else the path itself.
// Throws InputError when the built-in model cannot be found.
QString modelFolder(const QString& modelPath);

// A readable name: builtinDisplayName for a built-in model ("built-in KJV GPT-2"), else the
// folder's or file's name.
QString modelDisplayName(const QString& modelPath);

// The architecture of the model a path names (config.json's model_type, or a .gguf file's
// general.architecture). Throws InputError as modelArchitecture(folder) or ggufArchitecture do.
ModelArchitecture modelArchitectureOf(const QString& modelPath);

// The model a path names (a folder, a .gguf file or a built-in name), loaded once and kept (the
// last few models, by canonical path and the weights' modification time, so a changed checkpoint
// is read again). Thread-safe. Throws
// InputError as loadLanguageModel (or VitModel::load) does, and when the folder holds a model of
// the other kind (a ViT for loadModel, a language model for loadVitModel); ResourceError when a
// language model's float weights would not fit in budget.
std::shared_ptr<const LanguageModel> loadModel(const QString& modelPath,
                                               const MemoryBudget& budget = MemoryBudget());
std::shared_ptr<const VitModel> loadVitModel(const QString& modelPath);

// The token ids of text for model, and their labels (TextTokenizer::label). A text with no
// tokens of its own (an empty one, a Llama's BOS alone) is refused with InputError; white space
// is a text, as the tokenizer encodes it. A text with more tokens than the model reads (its
// positions) is refused with InputError, or, with keepLast, cut to the model's positions with a
// note saying how many were dropped: the special ids the tokenizer adds (a Llama's BOS first)
// stay, and the text keeps its last tokens.
struct ModelTokens {
    std::vector<int> ids;
    QStringList labels;
    QStringList notes;
};
ModelTokens modelTokens(const LanguageModel& model, const QString& text, bool keepLast);

// The forward pass of model on ids (or on an image's pixels) with every layer's Q, K, V and the
// logits, computed once and kept for the last few (model, input) pairs asked for: a new seed, m
// or method reuses it.
std::shared_ptr<const ForwardResult> cachedForward(
    const std::shared_ptr<const LanguageModel>& model, const std::vector<int>& ids);
std::shared_ptr<const ForwardResult> cachedForward(const std::shared_ptr<const VitModel>& model,
                                                   const PixelTensor& pixels);
// A forward pass of model on ids that holds layer `layer`'s Q, K, V (layer -1: cachedForward):
// the first time these ids are read, one that stops after that layer, without logits (the maps
// of a layer come sooner: a model of 30 layers opened on layer 0 runs one of them); kept, and
// any later request it does not hold (another layer, the logits) runs the whole pass.
std::shared_ptr<const ForwardResult> cachedLayers(const std::shared_ptr<const LanguageModel>& model,
                                                  const std::vector<int>& ids, int layer);

// Throws InputError, saying why, unless `second` can be compared with `first` as two checkpoints
// of one model: the same architecture, shape (layers, query and key/value heads, head dimension,
// vocabulary) and tokenizer (the same ids for text); names are the paths shown.
void requireComparableCheckpoints(const LanguageModel& first, const LanguageModel& second,
                                  const QString& text, const QString& secondName);

// The heads of one layer as attention input, in double: query head h's Q is the columns
// [h d, (h + 1) d) of the layer's Q, its K and V those of key/value head g = h / (H / H_kv) (the
// layer's K has H_kv d columns: grouped-query attention repeats each key/value head for the
// query heads of its group); labels as given.
AttentionInput layerInput(const ForwardResult& forward, int layer, int heads,
                          const QStringList& labels);

// The input of InputKind::Model (buildInput calls it), the Q, K, V of spec.layer of the model of
// spec.modelPath: a language model reads spec.text (labels: its tokens; its queries and keys
// after RoPE for a rotary model; input.model says which model it is); a ViT reads the image (the
// pixels decoded from spec.imagePath; labels "[CLS]" and the patches' "(row, col)", with gridRows
// and gridCols the patch grid). Throws InputError (no tokens, no image for a ViT, a layer the model
// does not have, the text too long) and ResourceError (over the budget).
// With run, also the forward pass and a ViT's preprocessed pixels.
AttentionInput modelInput(const InputSpec& spec, const ImagePixels* image,
                          const MemoryBudget& budget, ModelRun* run = nullptr);

}  // namespace attnlab

#pragma once

#include "inputs/inputs.h"
#include "memory_budget.h"
#include "model/gpt2_model.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace attnlab {

// The name that stands for the model built into Attention Lab (resources/models/kjv-gpt2: a
// small GPT-2 trained on the King James Bible; see resources/models/README.md).
inline constexpr const char* kBuiltinModel = "builtin";

// What a new user sees first: the built-in model on a short sentence, in its clearest head.
struct BuiltinExample {
    QString text;
    int layer;
    int head;
};
BuiltinExample builtinExample();

// The folder of the built-in model: $ATTNLAB_MODELS/kjv-gpt2 when that variable is set, else the
// installed share/attention-lab/models/kjv-gpt2 beside the program, else the source tree's
// resources/models/kjv-gpt2. Empty when none of them holds config.json.
QString builtinModelFolder();

// The folder a model path names: builtinModelFolder() for kBuiltinModel, else the path itself.
// Throws InputError when the built-in model cannot be found.
QString modelFolder(const QString& modelPath);

// A readable name: "built-in (KJV GPT-2)" or the folder's name.
QString modelDisplayName(const QString& modelPath);

// The model a path names, loaded once and kept (the last few models, by canonical folder and the
// weights' modification time, so a changed checkpoint is read again). Thread-safe. Throws
// InputError as Gpt2Model::load does.
std::shared_ptr<const Gpt2Model> loadModel(const QString& modelPath);

// The token ids of text for model, and their labels (Gpt2Tokenizer::label). A text with more
// tokens than the model reads (n_positions) is refused with InputError, or, with keepLast, cut
// to its last n_positions tokens with a note saying how many were dropped.
struct ModelTokens {
    std::vector<int> ids;
    QStringList labels;
    QStringList notes;
};
ModelTokens modelTokens(const Gpt2Model& model, const QString& text, bool keepLast);

// The forward pass of model on ids with every layer's Q, K, V and the logits, computed once and
// kept for the last few (model, ids) pairs asked for: a new seed, m or method reuses it.
std::shared_ptr<const ForwardResult> cachedForward(const std::shared_ptr<const Gpt2Model>& model,
                                                   const std::vector<int>& ids);

// The heads of one layer as attention input: head h's Q, K, V are the columns [h d, (h + 1) d)
// of the layer's Q, K, V (in double); labels as given.
AttentionInput layerInput(const ForwardResult& forward, int layer, int heads,
                          const QStringList& labels);

// The input of InputKind::Model (buildInput calls it): spec.text through the model of
// spec.modelPath, the Q, K, V of spec.layer. Throws InputError (no tokens, a layer the model does
// not have, the text too long) and ResourceError (over the budget).
AttentionInput modelInput(const InputSpec& spec, const MemoryBudget& budget);

}  // namespace attnlab

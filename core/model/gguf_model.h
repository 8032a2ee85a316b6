#pragma once

#include "memory_budget.h"
#include "model/checkpoint_files.h"
#include "model/gguf_file.h"
#include "model/language_model.h"

#include <QString>

#include <memory>

namespace attnlab {

// A language model in one GGUF file (llama.cpp's format): the same LanguageModel as the Hugging
// Face folder it was converted from, its architecture's block built from the file's tensors
// (GgufWeights), its hyper-parameters from the metadata and its tokenizer from the metadata
// (ggufTokenizer). general.architecture names the architecture:
//   "llama" (Llama 2 and 3, TinyLlama, SmolLM, Mistral), "qwen2", "gptneox" (Pythia), "gpt2".
// The keys, <arch> that name: <arch>.block_count, .embedding_length, .feed_forward_length,
// .context_length, .attention.head_count, .attention.head_count_kv (H when absent),
// .attention.key_length (the head dimension; embedding_length / head_count when absent),
// .attention.layer_norm_rms_epsilon (Llama, Qwen2) or .attention.layer_norm_epsilon (GPT-NeoX,
// GPT-2), .rope.freq_base (10000 when absent), .rope.dimension_count, .rope.scaling.type
// ("none" or "linear" with .rope.scaling.factor), gptneox.use_parallel_residual, and the vocabulary
// (<arch>.vocab_size, or the tokens of tokenizer.ggml.tokens). llama3 frequency scaling comes as
// the tensor rope_freqs.weight (one divisor per frequency). GGUF does not record GPT-NeoX's
// activation: it is Pythia's exact GELU; nor Mistral's sliding window, which llama.cpp's "llama"
// does not apply either.

// Whether path names a GGUF file: an existing file (not a folder) that starts with GGUF's magic
// bytes "GGUF", whatever its name, or whose name ends in ".gguf" (any case), so that GgufFile
// refuses one that does not start with them, naming the file.
bool isGgufFile(const QString& path);

// The architecture of general.architecture. Throws InputError naming the file and the key when it
// is missing or names another architecture (named, with the ones read).
ModelArchitecture ggufArchitecture(const GgufFile& file);

// The language model of the GGUF file at path. Throws InputError naming the file and the key or
// tensor at fault; ResourceError when its weights in float would not fit in budget.
std::shared_ptr<const LanguageModel> loadGgufLanguageModel(
    const QString& path, const MemoryBudget& budget = MemoryBudget());

// The shape of the language model in the GGUF file at path, from its metadata alone (no tensor
// read). Throws InputError as loadGgufLanguageModel does for the metadata.
LanguageModelInfo ggufLanguageModelInfo(const QString& path);

}  // namespace attnlab

#pragma once

#include "memory_budget.h"
#include "model/checkpoint_files.h"
#include "model/decoding_state.h"
#include "model/model_weights.h"
#include "model/rotary_blocks.h"
#include "model/text_tokenizer.h"
#include "model/transformer_blocks.h"

#include <QJsonObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace attnlab {

// The shape of a language model and how it encodes positions.
struct LanguageModelInfo {
    QString architecture;  // config.json's model_type: "gpt2", "llama", "gpt_neox", ...
    int layers = 0;
    int heads = 0;          // query heads H
    int keyValueHeads = 0;  // H_kv (H when the heads do not share keys and values)
    int headDim = 0;        // d
    int positions = 0;      // the longest text read (n_positions, max_position_embeddings)
    int vocabularySize = 0;
    std::optional<RopeSettings> rope;  // rotary models; none for GPT-2's learned positions
    int slidingWindow = 0;  // Mistral: a query attends to the last slidingWindow keys; 0: all

    LanguageModelInfo() = default;
    // The shape of an architecture without RoPE or a window (set them after).
    LanguageModelInfo(ModelArchitecture architecture, int layers, int heads, int keyValueHeads,
                      int headDim, int positions, int vocabularySize);

    // One line for people: "learned absolute positions (wpe)", "RoPE (rotate-half) on 64 of 64
    // dimensions, theta 10000, llama3 scaling (factor 8, ...)", with the sliding window if any.
    QString positionalScheme() const;
};

// What the lab needs of a trained causal language model, whatever its architecture (GPT-2,
// Llama, Mistral, Qwen2, GPT-NeoX): its shape, its tokenizer and its forward pass. Query head h
// reads key/value head h / (H / H_kv) (grouped-query attention; H_kv = H without groups).
class LanguageModel {
public:
    virtual ~LanguageModel() = default;

    virtual const QString& folder() const = 0;
    virtual const LanguageModelInfo& info() const = 0;
    virtual const TextTokenizer& tokenizer() const = 0;
    // The forward pass on token ids (1 <= L <= positions, every id < vocabulary; else
    // InputError). Q and K in ForwardResult::layers are the ones the scores see (after RoPE);
    // K and V hold the H_kv key/value heads. Deterministic; safe to call from several threads.
    virtual ForwardResult forward(const std::vector<int>& tokens,
                                  const ForwardOptions& options = {}) const = 0;

    // Incremental decoding (docs/design.md section 3.4): reads `tokens` at the positions
    // p = state.position(), p + 1, ... (p + L <= positions, every id < vocabulary; else
    // InputError), the same blocks as forward() with the token's own position (its wpe row, its
    // RoPE angle), each layer attending through the state's memory of it (a key/value cache, or
    // an approximation's recurrent state), which takes the tokens' keys and values in; the state
    // then stands at p + L. Logits (L x vocab) with options.logits, Q, K, V of the L tokens with
    // options.captureQkv; options.replaced is not read (the state's memories decide). With the
    // exact memories of decodingState(), the logits of token p + r are forward()'s row p + r on
    // the whole text up to rounding. After Cancelled the state is spent.
    virtual ForwardResult decode(const std::vector<int>& tokens, DecodingState& state,
                                 const ForwardOptions& options = {}) const = 0;
    // A state for decode() at position 0 with exact attention over a key/value cache in every
    // layer (KeyValueCache, with the model's sliding window), room reserved for `tokens`.
    DecodingState decodingState(Eigen::Index tokens = 0) const;

    int layers() const { return info().layers; }
    int heads() const { return info().heads; }
    int keyValueHeads() const { return info().keyValueHeads; }
    int headDim() const { return info().headDim; }
    int positions() const { return info().positions; }
    int vocabularySize() const { return info().vocabularySize; }
    // The key/value head query head h reads: h / (H / H_kv).
    int keyValueHead(int head) const { return head / (heads() / keyValueHeads()); }
};

// Refuses, with ResourceError, float weights of `bytes` over the budget, naming folder.
void requireWeightMemory(const MemoryBudget& budget, double bytes, const QString& folder);

// What the checkpoint models (GPT-2, the Llama family, GPT-NeoX) share around their blocks: the
// folder or file they were read from, their shape and tokenizer, and the token checks
// (checkTokens) in front of forward() and decode(); each architecture supplies run().
class CheckpointModel : public LanguageModel {
public:
    const QString& folder() const override { return m_folder; }
    const LanguageModelInfo& info() const override { return m_info; }
    const TextTokenizer& tokenizer() const override { return *m_tokenizer; }
    ForwardResult forward(const std::vector<int>& tokens,
                          const ForwardOptions& options = {}) const override;
    ForwardResult decode(const std::vector<int>& tokens, DecodingState& state,
                         const ForwardOptions& options = {}) const override;

protected:
    CheckpointModel(QString folder, LanguageModelInfo info,
                    std::shared_ptr<const TextTokenizer> tokenizer);
    // The blocks on ids already checked, at positions first, first + 1, ... (first = the
    // state's position when decoding, 0 without a state).
    virtual ForwardResult run(const std::vector<int>& tokens, const ForwardOptions& options,
                              DecodingState* decoding) const = 0;

private:
    QString m_folder;
    LanguageModelInfo m_info;
    std::shared_ptr<const TextTokenizer> m_tokenizer;
};

// A checkpoint model whose blocks are a Network (GptNeoxNetwork, LlamaNetwork): a struct of its
// Config (with info()) and weights, which Network::fromWeights(config, weights) reads under the
// checkpoint's tensor names and Network::forward(tokens, options, decoding) runs.
template <class Network>
class NetworkModel : public CheckpointModel {
public:
    // The model of config from weights named as the Hugging Face checkpoint's, read through
    // tokenizer; source names it (folder()). Throws InputError naming the file and the tensor
    // (missing, or a shape that disagrees with config), ResourceError when the float weights
    // would not fit in budget.
    static std::shared_ptr<const NetworkModel> fromWeights(
        const QString& source, const typename Network::Config& config,
        std::shared_ptr<const TextTokenizer> tokenizer, const ModelWeights& weights,
        const MemoryBudget& budget = MemoryBudget())
    {
        requireWeightMemory(budget, weights.floatBytes(), source);
        std::shared_ptr<NetworkModel> model(
            new NetworkModel(source, config.info(), std::move(tokenizer)));
        model->m_network = Network::fromWeights(config, weights);
        return model;
    }

    const Network& network() const { return m_network; }

private:
    using CheckpointModel::CheckpointModel;
    ForwardResult run(const std::vector<int>& tokens, const ForwardOptions& options,
                      DecodingState* decoding) const override
    {
        return m_network.forward(tokens, options, decoding);
    }
    Network m_network;
};

// The language model in folder, as config.json's model_type says (gpt2, llama, mistral, qwen2,
// gpt_neox), or in a GGUF file (folder a .gguf file: loadGgufLanguageModel). Throws InputError
// naming the file at fault (a ViT is refused: it reads images), and ResourceError when its float
// weights would not fit in budget.
std::shared_ptr<const LanguageModel> loadLanguageModel(const QString& folder,
                                                       const MemoryBudget& budget = MemoryBudget());

// The shape of the language model in folder, from config.json alone (no weights read), or of the
// one in a .gguf file from its metadata. Throws InputError as the architecture's config reader
// does.
LanguageModelInfo languageModelInfo(const QString& folder);

// Throws InputError unless 1 <= tokens.size(), first + tokens.size() <= info.positions (the
// tokens at positions first, first + 1, ...) and every id is in [0, info.vocabularySize); the
// messages name folder.
void checkTokens(const std::vector<int>& tokens, const LanguageModelInfo& info,
                 const QString& folder, Eigen::Index first = 0);

// config.json's rotary settings: theta from json[thetaKey] (10000 when absent), rotaryDims as
// given, and rope_scaling (absent, null or of type "default": none; "linear" with factor;
// "llama3" with factor, low_freq_factor, high_freq_factor, original_max_position_embeddings),
// its type under "rope_type" or, in older files, "type". Throws InputError naming path and the
// key for any other type (named) or a missing or non-positive parameter.
RopeSettings readRopeSettings(const QString& path, const QJsonObject& json, const QString& thetaKey,
                              int rotaryDims);

}  // namespace attnlab

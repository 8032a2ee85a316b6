#pragma once

#include "memory_budget.h"
#include "model/checkpoint_files.h"
#include "model/language_model.h"
#include "model/model_weights.h"
#include "model/rotary_blocks.h"

#include <QString>

#include <memory>
#include <vector>

namespace attnlab {

// config.json of a Llama-family checkpoint (model_type "llama", "mistral" or "qwen2"; Hugging
// Face layout): the sizes (H query heads), then:
struct LlamaConfig : TransformerSizes {
    ModelArchitecture architecture = ModelArchitecture::Llama;
    int keyValueHeads = 0;         // num_key_value_heads (H_kv; H when absent or null)
    int headDim = 0;               // head_dim, or hidden_size / H when absent or null
    int positions = 0;             // max_position_embeddings
    int vocabularySize = 0;        // vocab_size
    double rmsNormEpsilon = 1e-6;  // rms_norm_eps
    RopeSettings rope;             // rope_theta and rope_scaling; rotaryDims = headDim
    int slidingWindow = 0;         // Mistral's sliding_window (absent or null: 0, none)

    LanguageModelInfo info() const;

    // Throws InputError naming the file and the key: a missing or non-positive size, H not a
    // multiple of H_kv, hidden_size not a multiple of H without head_dim, hidden_act other than
    // "silu", a rope_scaling type other than linear and llama3 (named), mlp_bias true, Qwen2's
    // use_sliding_window true.
    static LlamaConfig fromJson(const QString& path, ModelArchitecture architecture);
};

// The weights of one decoder layer, every linear map stored in x out (y = u W):
//   a = RMSNorm_1(x); [Q | K | V] = a W_qkv + b_qkv; Q, K <- RoPE; O = GQA softmax attention;
//   x = x + O W_o (+ b_o);
//   x = x + (silu(b W_gate) * (b W_up)) W_down, b = RMSNorm_2(x).
// Hugging Face names: model.layers.N.input_layernorm, self_attn.{q,k,v,o}_proj,
// post_attention_layernorm, mlp.{gate,up,down}_proj.
struct LlamaBlock {
    Vector<float> inputNormGain;  // input_layernorm.weight
    Matrix<float> qkvWeight;      // width x (H + 2 H_kv) d: [q_proj^T | k_proj^T | v_proj^T]
    Vector<float> qkvBias;        // Qwen2's q/k/v biases, or empty
    Matrix<float> outputWeight;   // H d x width: o_proj^T
    Vector<float> outputBias;     // o_proj.bias, or empty
    Vector<float> postNormGain;   // post_attention_layernorm.weight
    Matrix<float> gateUpWeight;   // width x 2 inner: [gate_proj^T | up_proj^T]
    Matrix<float> downWeight;     // inner x width: down_proj^T
};

// A Llama-family decoder in memory (Touvron et al. 2023; the Hugging Face LlamaModel):
//   x_0 = embed_tokens[t_i]; the blocks above; logits = RMSNorm_f(x) W_head^T, W_head = lm_head
//   or, when tied (no lm_head.weight), embed_tokens.
struct LlamaNetwork {
    using Config = LlamaConfig;
    Config config;
    Matrix<float> tokenEmbedding;  // vocab x width
    std::vector<LlamaBlock> blocks;
    Vector<float> finalNormGain;  // model.norm.weight
    Matrix<float> outputHead;     // lm_head.weight (vocab x width), or empty when tied

    // The forward pass on ids already checked (checkTokens); with decoding, the incremental pass
    // of LanguageModel::decode from the state's position (the ids checked for it).
    ForwardResult forward(const std::vector<int>& tokens, const ForwardOptions& options,
                          DecodingState* decoding = nullptr) const;
    // The network of config from weights named as the Hugging Face checkpoint's (with or without
    // the "model." prefix). Throws InputError naming the tensor (missing, or a shape that
    // disagrees with config).
    static LlamaNetwork fromWeights(const Config& config, const ModelWeights& weights);
};

// A Llama, Mistral or Qwen2 checkpoint.
using LlamaModel = NetworkModel<LlamaNetwork>;

// Loads folder/config.json, the weights (one model.safetensors or shards, F32, F16 or BF16,
// with or without the "model." prefix), and the tokenizer (loadTextTokenizer). Throws InputError
// naming the file and the tensor (missing, or a shape that disagrees with config.json),
// ResourceError when the float weights would not fit in budget.
std::shared_ptr<const LlamaModel> loadLlamaModel(const QString& folder, ModelArchitecture type,
                                                 const MemoryBudget& budget = MemoryBudget());

}  // namespace attnlab

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

// config.json of a GPT-NeoX checkpoint (model_type "gpt_neox": Pythia; Hugging Face layout): the
// sizes (width = heads * d), then:
struct GptNeoxConfig : TransformerSizes {
    int positions = 0;               // max_position_embeddings
    int vocabularySize = 0;          // vocab_size
    double layerNormEpsilon = 1e-5;  // layer_norm_eps
    // rotary_emb_base (or rope_theta), rotaryDims = int(d * rotary_pct) rounded down to even
    // (rotary_pct, or partial_rotary_factor; 0.25 when both are absent), rope_scaling.
    RopeSettings rope;
    bool parallelResidual = true;   // use_parallel_residual
    GeluForm gelu = GeluForm::Erf;  // hidden_act: "gelu" exact (erf); "gelu_new" etc. tanh

    int headDim() const { return width / heads; }
    LanguageModelInfo info() const;

    // Throws InputError naming the file and the key (missing or non-positive sizes, hidden_size
    // not a multiple of the heads, another hidden_act, rotary_pct outside (0, 1], an unknown
    // rope_scaling type).
    static GptNeoxConfig fromJson(const QString& path);
};

// One GPT-NeoX layer, every linear map stored in x out:
//   attn(x) = (RoPE-GQA softmax attention of [Q | K | V] = LN_1(x) W_qkv + b_qkv) W_dense + b_dense
//   mlp(u) = GELU(LN_2(u) W_h_to_4h + b_h_to_4h) W_4h_to_h + b_4h_to_h
//   parallel residual: x = x + attn(x) + mlp(x); sequential: y = x + attn(x), x = y + mlp(y).
// Hugging Face names: gpt_neox.layers.N.input_layernorm, attention.query_key_value (its output
// rows per head: head h's q, k, v contiguous, [H, 3, d]; reordered here to [Q | K | V]),
// attention.dense, post_attention_layernorm, mlp.dense_h_to_4h, mlp.dense_4h_to_h.
struct GptNeoxBlock {
    Vector<float> ln1Gain, ln1Bias;
    Matrix<float> qkvWeight;    // width x 3 width: [Q | K | V], head h columns [h d, (h + 1) d)
    Vector<float> qkvBias;      // 3 width
    Matrix<float> denseWeight;  // width x width
    Vector<float> denseBias;
    Vector<float> ln2Gain, ln2Bias;
    Matrix<float> fcWeight;  // width x inner (dense_h_to_4h^T)
    Vector<float> fcBias;
    Matrix<float> outWeight;  // inner x width (dense_4h_to_h^T)
    Vector<float> outBias;
};

// A GPT-NeoX decoder in memory (Black et al. 2022; the Hugging Face GPTNeoXModel):
//   x_0 = embed_in[t_i]; the blocks above; logits = LN_f(x) embed_out^T.
struct GptNeoxNetwork {
    using Config = GptNeoxConfig;
    Config config;
    Matrix<float> tokenEmbedding;  // embed_in: vocab x width
    std::vector<GptNeoxBlock> blocks;
    Vector<float> finalGain, finalBias;  // final_layer_norm
    Matrix<float> outputHead;  // embed_out (vocab x width), or empty when tied to embed_in

    // The forward pass on ids already checked (checkTokens); with decoding, the incremental pass
    // of LanguageModel::decode from the state's position (the ids checked for it).
    ForwardResult forward(const std::vector<int>& tokens, const ForwardOptions& options,
                          DecodingState* decoding = nullptr) const;
    // The network of config from weights named as the Hugging Face checkpoint's. Throws
    // InputError naming the tensor (missing, or a shape that disagrees with config).
    static GptNeoxNetwork fromWeights(const Config& config, const ModelWeights& weights);
};

using GptNeoxModel = NetworkModel<GptNeoxNetwork>;

// Loads folder/config.json, the weights (one model.safetensors or shards; F32, F16, BF16) and the
// tokenizer. Throws InputError naming the file and the tensor, ResourceError when the float
// weights would not fit in budget.
std::shared_ptr<const GptNeoxModel> loadGptNeoxModel(const QString& folder,
                                                     const MemoryBudget& budget = MemoryBudget());

}  // namespace attnlab

#pragma once

#include "model/checkpoint_files.h"
#include "model/gpt2_tokenizer.h"
#include "model/language_model.h"
#include "model/model_weights.h"
#include "model/transformer_blocks.h"
#include "types.h"

#include <QString>

#include <memory>
#include <vector>

namespace attnlab {

// config.json of a GPT-2-architecture checkpoint (Hugging Face layout): the sizes n_layer, n_head,
// n_embd (= heads * d) and n_inner (4 n_embd when absent or null), then:
struct Gpt2Config : TransformerSizes {
    int positions = 0;               // n_positions: the longest text the model reads
    int vocabularySize = 0;          // vocab_size
    double layerNormEpsilon = 1e-5;  // layer_norm_epsilon
    // tie_word_embeddings (default true): the output head is wte; when false, lm_head.weight.
    bool tiedOutputHead = true;

    int headDim() const { return width / heads; }  // d
    LanguageModelInfo info() const;

    // Throws InputError naming the file and the key when a key is missing, not a positive
    // integer, or inconsistent (n_embd not a multiple of n_head), or when the file is not JSON.
    static Gpt2Config fromJson(const QString& path);
};

// A GPT-2-architecture transformer (Radford et al. 2019), weights converted to float at load:
//   x_0 = wte[t_i] + wpe[i]
//   for each layer l: a = LN_1(x); [Q K V] = a W_attn + b_attn (Conv1D: W stored in x out);
//     per head O_h = softmax(Q_h K_h^T / sqrt(d) + causal mask) V_h;
//     x = x + [O_1 .. O_H] W_proj + b_proj;
//     x = x + GELU(LN_2(x) W_fc + b_fc) W_mlp + b_mlp, GELU(u) = u/2 (1 + tanh(sqrt(2/pi)(u +
//     0.044715 u^3)))
//   logits = LN_f(x) wte^T (the output head tied to the token embedding)
// LN(u) = (u - mean(u)) / sqrt(var(u) + eps) * g + b over the n_embd entries of a row.
class Gpt2Model : public CheckpointModel {
public:
    // Loads folder/config.json, the folder's safetensors weights (model.safetensors, or the one
    // *.safetensors file there) with or without the "transformer." prefix of the tensor names,
    // F32, F16 or BF16, and the tokenizer files (Gpt2Tokenizer::fromFolder). Throws InputError
    // naming the file and the tensor: missing files or tensors, shapes that disagree with
    // config.json, damaged files (see SafetensorsFile). Extra tensors (attn.bias masks) are
    // ignored.
    static std::shared_ptr<const Gpt2Model> load(const QString& folder);
    // The model of config from weights named as the Hugging Face checkpoint's (with or without
    // the "transformer." prefix), read through tokenizer; source names it (folder()). Throws
    // InputError as load() does for the tensors.
    static std::shared_ptr<const Gpt2Model> fromWeights(
        const QString& source, const Gpt2Config& config,
        std::shared_ptr<const TextTokenizer> tokenizer, const ModelWeights& weights);

    const Gpt2Config& config() const;

    ~Gpt2Model() override;

private:
    Gpt2Model(QString folder, const Gpt2Config& config,
              std::shared_ptr<const TextTokenizer> tokenizer);
    struct Weights;
    ForwardResult run(const std::vector<int>& tokens, const ForwardOptions& options,
                      DecodingState* decoding) const override;
    Gpt2Config m_config;
    std::unique_ptr<Weights> m_weights;
};

}  // namespace attnlab

#pragma once

#include "parallel.h"
#include "types.h"

#include <QString>

#include <functional>
#include <utility>
#include <vector>

namespace attnlab {

class DecodingState;

// What GPT-2 (gpt2_model.h) and ViT (vit_model.h) share: the pre-LayerNorm transformer block,
// the captured Q, K, V, the hook that replaces softmax attention, and the matrix products; and
// what the rotary decoders (rotary_blocks.h) share with them: softmax attention (with key/value
// groups and a sliding window), its replacement, LayerNorm and GELU.

// One layer's queries, keys and values: q is L x H d, k and v L x H_kv d (the key/value heads of
// grouped-query attention; H_kv = H for GPT-2 and ViT), after the bias (and after RoPE for the
// rotary models: what the scores see) and before the 1/sqrt(d) scale; head h is columns
// [h d, (h + 1) d). Query head h reads key/value head h / (H / H_kv).
struct LayerQkv {
    Matrix<float> q;
    Matrix<float> k;
    Matrix<float> v;
};

// An attention that replaces softmax attention for one head: from that query head's q and its
// key/value head's k, v (L x d each, before the scale) its output (L x d). Called for every head
// of every replaced layer, from the thread that runs forward(); causal for the language models,
// not for ViT, as the model was trained.
using HeadAttention = std::function<Matrix<float>(int layer, int head, const Matrix<float>& q,
                                                  const Matrix<float>& k, const Matrix<float>& v)>;

struct ForwardOptions {
    bool captureQkv = true;  // keep every layer's Q, K, V in ForwardResult::layers
    bool logits = true;      // compute the logits
    // Layers l with replaced[l] true run `replacement` instead of softmax attention (an empty
    // or short vector replaces none of the layers past its end).
    std::vector<bool> replaced;
    HeadAttention replacement;
    // Polled between layers; when it returns true, forward throws Cancelled.
    std::function<bool()> cancelled;
    // With lastLayer >= 0 the forward pass runs layers 0..lastLayer only and stops there: their
    // Q, K, V (with captureQkv) and no logits (set logits false). For forward(), not decode().
    int lastLayer = -1;

    // Whether layer l runs: every layer, or those up to lastLayer.
    bool runs(std::size_t l) const { return lastLayer < 0 || l <= std::size_t(lastLayer); }
};

struct ForwardResult {
    std::vector<LayerQkv> layers;  // with captureQkv: one per layer
    // With logits: GPT-2: L x vocab, the logits of the token after each position; ViT: 1 x
    // classes, the class logits of the [CLS] token (empty for a ViT without a classifier).
    Matrix<float> logits;
};

// Throws Cancelled when options.cancelled says so (the forward passes poll it between layers).
void throwIfCancelled(const ForwardOptions& options);

// The token embedding's rows of the ids (L x width): x_i = E[t_i].
Matrix<float> embeddedTokens(const Matrix<float>& embedding, const std::vector<int>& tokens);

// With options.logits, result.logits = z W_head^T (L x vocab) for the normalised residual
// stream z, W_head the output head, or the token embedding when the head is tied (outputHead
// empty); without, nothing.
void addLogits(const Matrix<float>& normalised, const Matrix<float>& outputHead,
               const Matrix<float>& tokenEmbedding, const ForwardOptions& options,
               ForwardResult& result);

// The weights of one pre-LayerNorm block, every linear map stored in x out (y = u W + b):
//   a = LN_1(x); [Q K V] = a W_attn + b_attn (head h: columns [h d, (h + 1) d) of each third);
//   O_h = softmax(s Q_h K_h^T (+ causal mask)) V_h, s = 1/sqrt(d);
//   x = x + [O_1 .. O_H] W_proj + b_proj;
//   x = x + GELU(LN_2(x) W_fc + b_fc) W_mlp + b_mlp.
// GPT-2 names them ln_1, c_attn, c_proj, ln_2, c_fc, mlp.c_proj; ViT layernorm_before, query |
// key | value, attention.output.dense, layernorm_after, intermediate.dense, output.dense.
struct TransformerBlock {
    Vector<float> ln1Gain, ln1Bias;
    Matrix<float> attentionWeight;   // width x 3 width: [Q | K | V]
    Vector<float> attentionBias;     // 3 width
    Matrix<float> projectionWeight;  // width x width
    Vector<float> projectionBias;
    Vector<float> ln2Gain, ln2Bias;
    Matrix<float> fcWeight;  // width x inner
    Vector<float> fcBias;
    Matrix<float> mlpWeight;  // inner x width
    Vector<float> mlpBias;
};

// The heads of an attention layer: H query heads, H_kv key/value heads (H_kv divides H), d each.
struct AttentionHeads {
    int heads = 0;
    int keyValueHeads = 0;
    Eigen::Index d = 0;
};

// Softmax attention of every query head, on the [Q | K | V] matrix qkv (L x (H + 2 H_kv) d;
// query head h in columns [h d, (h + 1) d), key/value head g in [H d + g d, ...) and
// [(H + H_kv) d + g d, ...)): O_h = softmax(s Q_h K_g^T + mask) V_g with g = h / (H / H_kv),
// the mask hiding keys j > i when causal and, with window > 0, keys j <= i - window (a query
// sees its last `window` keys); written to columns [h d, (h + 1) d) of out (L x H d).
void softmaxAttention(const Matrix<float>& qkv, const AttentionHeads& shape, float scale,
                      bool causal, Eigen::Index window, Matrix<float>& out);

// The replacement's output for every query head h of layer `layer` on (Q_h, K_g, V_g) of qkv
// (laid out as above), written to out (L x H d). Throws std::invalid_argument when it returns an
// output that is not L x d.
void replacedAttention(const Matrix<float>& qkv, const AttentionHeads& shape, int layer,
                       const HeadAttention& replacement, Matrix<float>& out);

// GELU(u) = u Phi(u): the exact form (ViT's "gelu") or GPT-2's tanh approximation.
enum class GeluForm {
    Tanh,  // u/2 (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
    Erf,   // u/2 (1 + erf(u / sqrt 2))
};

// x_i <- x_i + bias (when bias is not null), then out_i = LN(x_i) = (x_i - mean(x_i)) /
// sqrt(var(x_i) + eps) * g + b, for every row i (the bias a residual branch left to add).
void addBiasAndNormalise(Matrix<float>& x, const Vector<float>* bias, const Vector<float>& gain,
                         const Vector<float>& shift, float epsilon, Matrix<float>& out);

// h_ij <- GELU(h_ij + b_j), in the form given.
void addBiasGelu(Matrix<float>& h, const Vector<float>& bias, GeluForm form);

// The blocks of a model, the LayerNorm after them (LN_f), and what differs between the models.
struct TransformerStack {
    std::vector<TransformerBlock> blocks;
    Vector<float> finalGain, finalBias;  // LN_f
    int heads = 0;
    float layerNormEpsilon = 1e-5f;  // LN(u) = (u - mean u) / sqrt(var u + eps) g + b
    bool causal = false;
    GeluForm gelu = GeluForm::Tanh;

    TransformerStack() = default;
    // A stack without blocks yet, as the model computes it.
    TransformerStack(int heads, double layerNormEpsilon, bool causal, GeluForm gelu)
        : heads(heads), layerNormEpsilon(float(layerNormEpsilon)), causal(causal), gelu(gelu)
    {
    }

    // Runs every block on the embeddings x (L x width, overwritten: the residual stream) and
    // returns LN_f(x) (L x width). With options.captureQkv, appends each layer's Q, K, V to
    // result.layers; layers marked in options.replaced run options.replacement for every head
    // (std::invalid_argument when it returns an output that is not L x d). With decoding, the rows
    // are the next tokens of an incremental decoding instead: each layer attends through the
    // state's memory (options.replaced is not read), and the state advances by L at the end.
    // Throws Cancelled when options.cancelled says so between layers.
    Matrix<float> run(Matrix<float>& x, const ForwardOptions& options, ForwardResult& result,
                      DecodingState* decoding = nullptr) const;
};

// How a checkpoint names a pre-LayerNorm stack's tensors, each a LayerNorm or a linear map read as
// name + ".weight" and name + ".bias": in a block (after the block's prefix) LN_1, W_proj, LN_2,
// W_fc and W_mlp, and LN_f. GPT-2: ln_1, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj, ln_f; ViT:
// layernorm_before, attention.output.dense, layernorm_after, intermediate.dense, output.dense,
// layernorm.
struct StackTensorNames {
    QString ln1, projection, ln2, fc, mlp, final;
};

// Reads a checkpoint's tensors for a TransformerStack, by the names of its layout: linear(name,
// in, out) is the matrix called name as the stack stores it, in x out (whatever the file's
// layout), vector(name, size) a vector; both throw InputError naming the tensor when it is
// missing or has another shape.
struct StackTensorReader {
    std::function<Matrix<float>(const QString& name, Eigen::Index in, Eigen::Index out)> linear;
    std::function<Vector<float>(const QString& name, Eigen::Index size)> vector;
    StackTensorNames names;

    // The reader of file's tensors (a ModelWeights or a SafetensorsFile: matrix(name, rows,
    // cols), vector(name, size)) called prefix + name, whose linear maps the file stores out x in
    // (nn.Linear) when transposed, in x out (GPT-2's Conv1D) otherwise. file must outlive it.
    template <typename File>
    static StackTensorReader of(const File& file, const QString& prefix, bool transposed,
                                StackTensorNames names)
    {
        return {[&file, prefix, transposed](const QString& name, Eigen::Index in,
                                            Eigen::Index out) -> Matrix<float> {
                    if (transposed)
                        return file.matrix(prefix + name, out, in).transpose();
                    return file.matrix(prefix + name, in, out);
                },
                [&file, prefix](const QString& name, Eigen::Index size) {
                    return file.vector(prefix + name, size);
                },
                std::move(names)};
    }

    // A block's LayerNorms, W_proj and MLP under blockPrefix; the attention's W_attn and b_attn,
    // which each architecture stores its own way, are left to the caller.
    TransformerBlock block(const QString& blockPrefix, Eigen::Index width,
                           Eigen::Index inner) const;
    // LN_f's gain and shift.
    void finalNorm(Eigen::Index width, TransformerStack& stack) const;
};

// dst = lhs rhs, or dst += lhs rhs when accumulate, on the engine threads: dst is cut into one
// block per thread along its longer side (rows of lhs, or columns of rhs in multiples of 16), and
// each thread runs a single-threaded Eigen product on its block. Eigen's own threading shares the
// packed operands between threads but makes them wait for each other; here each thread packs
// the shared operand itself (a small cost at these sizes) and never waits (measured faster for
// every GEMM of the forward pass, and much steadier on a loaded machine).
template <typename Rhs>
void threadedProduct(const Matrix<float>& lhs, const Rhs& rhs, Matrix<float>& dst, bool accumulate)
{
    const Eigen::Index threads = engineThreads();
    const auto product = [&](auto&& block, const auto& left, const auto& right) {
        if (accumulate)
            block.noalias() += left * right;
        else
            block.noalias() = left * right;
    };
    if (dst.rows() >= dst.cols()) {
        const Eigen::Index blockRows = (dst.rows() + threads - 1) / threads;
        forEachRowBlock(dst.rows(), blockRows, [&](Eigen::Index begin, Eigen::Index end) {
            product(dst.middleRows(begin, end - begin), lhs.middleRows(begin, end - begin), rhs);
        });
    } else {
        const Eigen::Index blockCols = ((dst.cols() + threads - 1) / threads + 15) / 16 * 16;
        forEachRowBlock(dst.cols(), blockCols, [&](Eigen::Index begin, Eigen::Index end) {
            product(dst.middleCols(begin, end - begin), lhs, rhs.middleCols(begin, end - begin));
        });
    }
}

}  // namespace attnlab

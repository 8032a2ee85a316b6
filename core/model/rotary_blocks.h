#pragma once

#include "model/transformer_blocks.h"
#include "types.h"

#include <QString>

#include <vector>

namespace attnlab {

// The pieces the rotary decoders share (Llama, Mistral, Qwen2 in llama_model; GPT-NeoX in
// gpt_neox_model): rotary position embedding, RMSNorm, the gated MLP, and their attention layer
// (fused projection, RoPE, grouped-query softmax attention or its replacement).

// How the rotation frequencies are rescaled for contexts longer than pre-training (config.json's
// rope_scaling, its type under "rope_type" or "type").
enum class RopeScalingType {
    None,     // absent, null or "default"
    Linear,   // "linear": inv_freq_i / factor (positions divided by factor)
    Llama3,   // "llama3": transformers' _compute_llama3_parameters, below
    Factors,  // one divisor per frequency: inv_freq_i / f_i (a GGUF file's rope_freqs tensor,
              // which llama.cpp's converter writes for llama3 scaling)
};

// Rotary position embedding in Hugging Face's convention (rotate-half): the first rotaryDims
// (r, even) dimensions of each query and key head are rotated in pairs (i, i + r/2), i < r/2, by
// the angle p * inv_freq_i at position p, inv_freq_i = theta^(-2i / r):
//   x'_i = x_i cos - x_{i+r/2} sin,  x'_{i+r/2} = x_{i+r/2} cos + x_i sin;
// the other d - r dimensions pass unchanged (GPT-NeoX's partial rotary; r = d for Llama).
struct RopeSettings {
    double theta = 10000;  // rope_theta (rotary_emb_base for GPT-NeoX)
    int rotaryDims = 0;    // r
    RopeScalingType scaling = RopeScalingType::None;
    double factor = 1;  // linear and llama3
    // llama3 only:
    double lowFrequencyFactor = 1;
    double highFrequencyFactor = 4;
    double originalPositions = 8192;       // original_max_position_embeddings
    std::vector<double> frequencyFactors;  // Factors only: f_i, i < r/2

    // inv_freq_i for i < r/2 after the scaling. llama3, with wavelength w_i = 2 pi / inv_freq_i,
    // low = originalPositions / lowFrequencyFactor, high = originalPositions / highFrequencyFactor:
    // w_i < high: unchanged; w_i > low: inv_freq_i / factor; between: (1 - t) inv_freq_i / factor
    // + t inv_freq_i with t = (originalPositions / w_i - lowFrequencyFactor) /
    // (highFrequencyFactor - lowFrequencyFactor). Factors: inv_freq_i / f_i.
    std::vector<double> inverseFrequencies() const;
    // "RoPE (rotate-half) on 16 of 64 dimensions, theta 10000, linear scaling (factor 2)".
    QString description(int headDim) const;
};

// cos(p inv_freq_i) and sin(p inv_freq_i) for the L positions p = first, ..., first + L - 1
// (rows) and i < r/2 (columns), computed in double and stored as float.
// Row r holds position first + r.
struct RopeTable {
    Matrix<float> cos;
    Matrix<float> sin;
};
RopeTable ropeTable(const RopeSettings& settings, Eigen::Index length, Eigen::Index first = 0);

// Rotates, in place, heads heads of d columns each starting at column `first` of x (L rows), as
// RopeSettings says, with the angles of table.
void applyRope(Matrix<float>& x, Eigen::Index first, int heads, Eigen::Index d,
               const RopeTable& table);

// out_i = RMSNorm(x_i) = x_i / sqrt(mean_j(x_ij^2) + eps) * g, for every row i.
void rmsNormalise(const Matrix<float>& x, const Vector<float>& gain, float epsilon,
                  Matrix<float>& out);

// The gated MLP's activation, on gateUp = [a W_gate | a W_up] (L x 2 inner):
// hidden = silu(a W_gate) * (a W_up), silu(u) = u / (1 + exp(-u)).
void siluGate(const Matrix<float>& gateUp, Matrix<float>& hidden);

// The attention layer of a rotary decoder, on the normalised input a (L x width):
//   [Q | K | V] = a W_qkv (+ b_qkv), Q: H heads of d columns, K and V: H_kv heads;
//   Q, K <- RoPE(Q), RoPE(K);
//   O_h = softmax(Q_h K_g^T / sqrt(d) + causal (and sliding-window) mask) V_g, g = h / (H / H_kv),
// or options.replacement on (Q_h, K_g, V_g) in a replaced layer; written to outputs (L x H d).
// With options.captureQkv, appends the layer's Q, K (after RoPE) and V to result.layers.
// With decoding, the rows are the next tokens of an incremental decoding (rope's rows their
// positions) and attend through the state's memory of the layer instead.
// qkv is the caller's working matrix (L x (H + 2 H_kv) d).
struct RotaryAttention {
    const Matrix<float>& weight;  // width x (H + 2 H_kv) d, stored in x out
    const Vector<float>& bias;    // (H + 2 H_kv) d, or empty for none
    AttentionHeads heads;
    const RopeTable& rope;
    Eigen::Index window = 0;  // sliding window (0: none)
    DecodingState* decoding = nullptr;

    void run(const Matrix<float>& a, int layer, const ForwardOptions& options,
             ForwardResult& result, Matrix<float>& qkv, Matrix<float>& outputs) const;
};

}  // namespace attnlab

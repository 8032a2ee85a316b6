#pragma once

#include "model/layer_memory.h"
#include "model/transformer_blocks.h"

#include <vector>

namespace attnlab {

// Exact softmax attention of one layer over a key/value cache (docs/design.md section 3.4): the
// keys k_j (after RoPE) and values v_j of every token read so far, for each of the H_kv
// key/value heads: 2 n d floats per key/value head after n tokens. Token i's query head h reads
// key/value head g = h / (H / H_kv):
//   o_h = sum_j exp(s q_h.k_j) v_j / sum_j exp(s q_h.k_j),  s = 1/sqrt(d),
// over the keys j <= i, or with a sliding window of w keys (Mistral) the last w of them,
// j > i - w. The same mask and scale as the full forward pass (softmaxAttention), one query row at
// a time; every token stays in the cache, as Hugging Face's dynamic cache keeps it, and a windowed
// layer reads only the last w.
class KeyValueCache final : public LayerMemory {
public:
    explicit KeyValueCache(const AttentionHeads& heads, Eigen::Index window = 0);

    // Room for `tokens` in all, so that the cache does not grow (and copy) while they arrive.
    void reserve(Eigen::Index tokens);
    // The tokens held, n.
    Eigen::Index length() const { return m_length; }

    // Takes in the keys and values of the rows of qkv (laid out as for attend) without attending:
    // a context read elsewhere (bench_generation fills 16,384 positions so).
    void append(const Matrix<float>& qkv);
    // The query heads of each key/value head attend together (one product with the shared keys),
    // the key/value heads spread over the engine threads.
    void attend(const Matrix<float>& qkv, Matrix<float>& out) override;
    // 2 n d H_kv floats of 4 bytes.
    double bytes() const override;

private:
    AttentionHeads m_heads;
    Eigen::Index m_window;
    float m_scale;
    std::vector<Matrix<float>> m_keys;    // per key/value head: capacity x d, row j holds k_j
    std::vector<Matrix<float>> m_values;  // per key/value head: capacity x d
    Eigen::Index m_length = 0;
};

}  // namespace attnlab

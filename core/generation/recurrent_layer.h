#pragma once

#include "attention/approximation_spec.h"
#include "attention/recurrent_attention.h"
#include "model/layer_memory.h"
#include "model/transformer_blocks.h"

#include <functional>
#include <memory>
#include <vector>

namespace attnlab {

// A layer whose softmax attention an approximation replaces, in incremental decoding: every query
// head h runs the method's recurrent form (RecurrentAttention, head h's random draws: the W the
// parallel form draws for head h) on its own q and its key/value head's k and v, g = h / (H /
// H_kv). A feature map holds S_i and z_i per query head, C d_v + C floats whatever the position;
// local attention the keys and values of its window. Without a model's sliding window (as the
// parallel replacement in core/sweeps/downstream runs it).
class RecurrentLayer final : public LayerMemory {
public:
    // The heads of layer `layer` (its fitted maps, where the method has them). Throws InputError
    // when spec's method has no recurrent form, and as makeRecurrentAttention does.
    RecurrentLayer(const ApproximationSpec& spec, const AttentionHeads& heads, double scale,
                   int layer);

    // The heads of each row spread over the engine threads.
    void attend(const Matrix<float>& qkv, Matrix<float>& out) override;
    // The heads' state floats, 4 bytes each.
    double bytes() const override;

    const RecurrentAttention& head(int h) const { return *m_heads[std::size_t(h)]; }
    // Called in attend after every head has read row `row` of the call (a token), with the
    // layer's outputs [y_1 .. y_H] (rows x H d_v): what a view that follows a head reads of each
    // token, the prompt's too, without changing the computation. Null: none.
    using RowObserver = std::function<void(Eigen::Index row, const Matrix<float>& out)>;
    void setRowObserver(RowObserver observer) { m_observer = std::move(observer); }
    // The (token, head) pairs whose denominator was not positive so far.
    Eigen::Index nonPositiveDenominators() const { return m_nonPositive; }

private:
    AttentionHeads m_shape;
    std::vector<std::unique_ptr<RecurrentAttention>> m_heads;
    Eigen::Index m_nonPositive = 0;
    RowObserver m_observer;
};

}  // namespace attnlab

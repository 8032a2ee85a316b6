#pragma once

#include "types.h"

namespace attnlab {

// What one attention layer of a language model keeps of the tokens it has read, in incremental
// decoding (docs/design.md section 3.4), and how it attends with it: exact softmax attention over
// a key/value cache (KeyValueCache), or an approximation's recurrent form in every head
// (core/generation's RecurrentLayer). A DecodingState holds one per layer.
class LayerMemory {
public:
    virtual ~LayerMemory() = default;

    // For each row r of qkv in turn, one token's [Q | K | V] after the bias and RoPE, laid out as
    // softmaxAttention's (H query heads of d columns, then H_kv key heads, then H_kv value heads):
    // takes the token's keys and values in, then writes the attention output of its H query heads
    // (query head h reading key/value head h / (H / H_kv)) to columns [h d, (h + 1) d) of row r
    // of out. Causal by construction: a token sees itself and the tokens before it.
    virtual void attend(const Matrix<float>& qkv, Matrix<float>& out) = 0;

    // The bytes it holds from token to token.
    virtual double bytes() const = 0;
};

}  // namespace attnlab

#pragma once

#include "experiment.h"
#include "model/transformer_blocks.h"
#include "types.h"

namespace attnlab {

// Attention rollout (Abnar and Zuidema, "Quantifying Attention Flow in Transformers", ACL 2020):
// how much each output position draws, through every layer, on each input position. With A_l the
// attention of layer l averaged over its heads and the residual connection counted as half of
// each layer's mixing, A'_l = (A_l + I) / 2 (rows still sum to 1), the rollout is
//   R = A'_{N-1} ... A'_1 A'_0  (N layers).
// Computed for exact softmax attention and for the approximation of spec, each layer's P^ formed
// from that layer's own queries and keys of the exact forward pass (the approximation's rows, as
// the engine forms them); row i of R^ is then what the approximation makes of position i's
// attention flow, not what a model running the approximation would compute.
struct AttentionRollout {
    MatrixD exact;   // R, L x L
    MatrixD approx;  // R^, L x L (empty for the exact method)
    int layers = 0;
};

// The rollout of `forward` (every layer's Q, K captured, heads of d = width / heads columns) at
// spec's scale, mask and method. Throws InputError as compute does (a method without a causal
// form under a causal spec).
AttentionRollout attentionRollout(const ForwardResult& forward, int heads,
                                  const ExperimentSpec& spec);

}  // namespace attnlab

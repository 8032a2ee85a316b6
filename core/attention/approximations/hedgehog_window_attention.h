#pragma once

#include "attention/approximations/scatterbrain_attention.h"

namespace attnlab {

// hedgehog-window, as LoLCATs linearizes a model (Zhang et al., "LoLCATs: On Low-Rank
// Linearizing of Large Language Models", ICLR 2025): exact softmax inside the sliding window W(i)
// of w keys, the fitted maps of hedgehog (HedgehogFeatures) for every other key, weighted by the
// head's fitted gamma, under one normaliser:
//   A^_ij = exp(s q_i.k_j)  for j in W(i),  gamma phi_q(q_i).phi_k(k_j)  otherwise  (0 for j > i
//   when causal),  P^ = D^-1 A^,  O^ = P^ V,
// W(i) the w latest keys when causal (else w keys centred on i). Scatterbrain's machinery
// (ScatterbrainAttention, its O^ and rows of P^) with the fitted maps in FAVOR+'s place and
// log gamma folded into phi_q's log-scale. gamma comes from the fit (for the window of the file's
// metadata; another w keeps the same gamma).
template <typename T>
class HedgehogWindowAttention final : public ScatterbrainAttention<T> {
public:
    HedgehogWindowAttention(const ApproximationSpec& spec, int d, Eigen::Index length, double scale,
                            HeadSite site);

    // Scatterbrain's cost with C = 2 d_f features (d_f = d) and the rows W x' of d_f entries a
    // side: 4 L d_f d + 4 L C d_v + 2 L w (d + d_v) + 2 L w C.
    static double flops(const CostShape& shape);
    static double workingSetFloats(const CostShape& shape);
};

// hedgehog-window's recurrent form: WindowedMapRecurrence with the fitted maps of `site` and
// gamma.
std::unique_ptr<RecurrentAttention> makeHedgehogWindowRecurrence(const ApproximationSpec& spec,
                                                                 int d, double scale,
                                                                 HeadSite site);

}  // namespace attnlab

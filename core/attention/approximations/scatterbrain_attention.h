#pragma once

#include "attention/approximation.h"
#include "attention/maps/positive_random_features.h"

namespace attnlab {

// Scatterbrain (Chen et al., "Scatterbrain: Unifying Sparse and Low-rank Attention", NeurIPS
// 2021): a sparse part, exact inside the sliding window W(i) of w keys (band_products.h), plus a
// low-rank part, FAVOR+ positive features phi for every other key, without counting the window
// twice:
//   A^_ij = exp(s q_i.k_j)  for j in W(i),  phi(q_i).phi(k_j)  otherwise  (0 for j > i when
//   causal), P^ = D^-1 A^, O^ = P^ V,
// computed as the low-rank sums S = sum_j phi(k_j) v_j^T, z = sum_j phi(k_j) plus, for each query,
// a correction over its window: exp(s q_i.k_j) - phi(q_i).phi(k_j) (non-causal, where S and z run
// over every key), or, causal, S and z over the key blocks before the one where the query block's
// first window starts and the keys from there taken entry by entry. The window's scores and feature
// products, and their weights times V, are band products (band_products.h). Every entry of A^ is
// positive. Each row's terms are brought to its largest exponent before they are added; the keys
// share one scale.
// The same machinery serves any map phi in FAVOR+'s place (phi_q for the queries, phi_k for the
// keys; a weight of the low-rank part folded into phi_q's log-scale): hedgehog-window's fitted
// maps (HedgehogWindowAttention, made from this class).
template <typename T>
class ScatterbrainAttention : public Approximation<T> {
public:
    ScatterbrainAttention(const ApproximationSpec& spec, int d, Eigen::Index length, double scale,
                          HeadSite site);
    // The window of `width` keys, exact at scale s, and phi for every other key.
    ScatterbrainAttention(std::unique_ptr<FeatureMap<T>> phi, Eigen::Index width, double scale);

    // 4 L m d (features) + 4 L m d_v (S, z and phi(Q) S) + 2 L w (d + d_v) (the window's scores
    // and their values) + 2 L w m (the window's feature products).
    static double flops(const CostShape& shape);
    // phi(K) arranged for the band products, K too, the key blocks' sums and, per thread, a key
    // block's features and a query block's features, scores and feature products over its keys.
    static double workingSetFloats(const CostShape& shape);

    ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                bool causal, Eigen::Index chunk) const override;
    std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                             bool causal) const override;
    MatrixD projection() const override { return m_phi->projection(); }

private:
    std::unique_ptr<FeatureMap<T>> m_phi;
    Eigen::Index m_width;
    double m_scale;
};

}  // namespace attnlab

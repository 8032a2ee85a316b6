#pragma once

#include "attention/approximation.h"
#include "attention/band_products.h"

namespace attnlab {

// Local (sliding-window) attention: exact softmax inside the window W(i) of w keys and nothing
// outside it,
//   P^_ij = exp(s q_i.k_j) / sum_{j' in W(i)} exp(s q_i.k_j')  for j in W(i), else 0;
//   A^_ij = exp(s q_i.k_j) for j in W(i), else 0;  O^ = P^ V.
// The scores and P^ V by the band products (band_products.h), blocks of kBandBlockRows queries
// at a time. No random draws, no features.
template <typename T>
class LocalAttention final : public Approximation<T> {
public:
    LocalAttention(const ApproximationSpec& spec, int d, Eigen::Index length, double scale,
                   HeadSite site);

    // 4 L w d (with d_v = d; w no larger than L), causal or not: each query sees w keys.
    static double flops(const CostShape& shape);
    // The keys arranged for the band products, and per thread the scores of one block against
    // its span.
    static double workingSetFloats(const CostShape& shape);

    ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                bool causal, Eigen::Index chunk) const override;
    std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                             bool causal) const override;

private:
    Eigen::Index m_width;
    double m_scale;
};

}  // namespace attnlab

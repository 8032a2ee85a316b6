#pragma once

#include "attention/approximation.h"

#include <algorithm>

namespace attnlab {

// The keys query i sees in a sliding window of w keys among L: causal, the w latest keys
// [i - w + 1, i]; otherwise w keys centred on i, [i - floor((w - 1) / 2), i + ceil((w - 1) / 2)];
// both clipped to [0, L).
struct SlidingWindow {
    Eigen::Index width;
    bool causal;
    Eigen::Index length;

    Eigen::Index first(Eigen::Index i) const
    {
        return std::max<Eigen::Index>(0, i - (causal ? width - 1 : (width - 1) / 2));
    }
    // The last key, inclusive.
    Eigen::Index last(Eigen::Index i) const
    {
        return std::min(length - 1, causal ? i : i + width / 2);
    }
};

// Rows of queries local attention and Scatterbrain handle at a time for a window of w keys: one
// block's key span is at most this many keys longer than the window, so w / 2 (from 16 to 64)
// keeps the extra keys a block's products cover to about half the window.
inline Eigen::Index windowBlockRows(Eigen::Index w)
{
    return std::clamp<Eigen::Index>(w / 2, 16, 64);
}

// Local (sliding-window) attention: exact softmax inside the window W(i) of w keys and nothing
// outside it,
//   P^_ij = exp(s q_i.k_j) / sum_{j' in W(i)} exp(s q_i.k_j')  for j in W(i), else 0;
//   A^_ij = exp(s q_i.k_j) for j in W(i), else 0;  O^ = P^ V.
// Query blocks of windowBlockRows(w) rows take their span of keys as one product; 4 L w d flops (the span's extra keys aside). No random draws, no features.
template <typename T>
class LocalAttention final : public Approximation<T> {
public:
    LocalAttention(const ApproximationSpec& spec, int d, Eigen::Index length, double scale,
                   int head);

    // 4 L w d (with d_v = d; w no larger than L), causal or not: each query sees w keys.
    static double flops(const CostShape& shape);
    // Per thread the scores of one block against its span.
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

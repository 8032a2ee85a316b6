#pragma once

#include "attention/approximation.h"

namespace attnlab {

// Linformer (Wang et al., "Linformer: Self-Attention with Linear Complexity", 2020) with untrained
// projections: E and F (m x L) of independent N(0, 1/m) entries (Johnson-Lindenstrauss
// projections: E[F^T F] = I), drawn from (seed, head). The keys and values are projected along
// the sequence to m rows, K- = E K and V- = F V, and
//   P- = softmax(s Q K-^T) (L x m, row by row),  O^ = P- V-,  P^ = P- F (L x L),
// O^ by the streaming kernel (exact attention over the m projected keys; P- is not formed).
// The paper learns E and F with the model; random ones show only the projection's part of the
// approximation, and P^'s rows need not sum to 1 (its entries can be negative). Non-causal only:
// each projected row mixes every position.
template <typename T>
class LinformerAttention final : public Approximation<T> {
public:
    LinformerAttention(const ApproximationSpec& spec, int d, Eigen::Index length, double scale,
                       HeadSite site);

    // 4 L m d (E K, Q K-^T) + 4 L m d_v (F V, P- V-).
    static double flops(const CostShape& shape);
    // K-, V- and P-.
    static double workingSetFloats(const CostShape& shape);

    ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                bool causal, Eigen::Index chunk) const override;
    std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                             bool causal) const override;
    std::vector<DrawnMatrix> drawnMatrices() const override;

    // P- = softmax(s Q (E K)^T).
    Matrix<T> projectedAttention(const Matrix<T>& q, const Matrix<T>& k) const;

private:
    // Throws InputError unless k has the L rows E and F were drawn for.
    void requireLength(const Matrix<T>& k) const;

    double m_scale;
    Matrix<T> m_keyProjection;    // E, m x L
    Matrix<T> m_valueProjection;  // F, m x L
};

}  // namespace attnlab

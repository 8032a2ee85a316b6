#pragma once

#include "attention/approximation.h"

namespace attnlab {

// The exact attention of a second checkpoint of the same model, in the place of an approximation:
// for one head, the other checkpoint's queries, keys and values (Q_2, K_2, V_2, captured on the
// same tokens, in the same layer and head) give
//   P^ = softmax(s Q_2 K_2^T (+ causal mask)),  A^_ij = exp(s q2_i.k2_j),  O^ = P^ V_2,
// so that the error maps, the metrics and the downstream comparison show how far a checkpoint (a
// quantized one, say) strays from the first. The q, k, v the engine passes are the first
// checkpoint's and are not read, beyond their shape.
template <typename T>
class CheckpointAttention final : public Approximation<T> {
public:
    // The second checkpoint's head (L x d, L x d, L x d_v), at scale s.
    CheckpointAttention(Matrix<T> q, Matrix<T> k, Matrix<T> v, double scale);

    ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                bool causal, Eigen::Index chunk) const override;
    std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                             bool causal) const override;

private:
    Matrix<T> m_q, m_k, m_v;
    double m_scale;
};

}  // namespace attnlab

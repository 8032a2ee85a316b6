#pragma once

#include "attention/approximation.h"
#include "attention/linear_attention.h"

#include <memory>

namespace attnlab {

// A feature map phi as an approximation: O^ by linear attention (linear_attention.h), the rows of
// P^ = D^-1 phi(Q) phi(K)^T formed explicitly.
template <typename T>
class FeatureMapAttention final : public Approximation<T> {
public:
    explicit FeatureMapAttention(std::unique_ptr<FeatureMap<T>> phi) : m_phi(std::move(phi)) {}

    void fit(const Matrix<T>& q, const Matrix<T>& k, bool causal) override
    {
        m_phi->fit(q, k, causal);
    }

    ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                bool causal, Eigen::Index chunk) const override
    {
        return linearAttention<T>(*m_phi, q, k, v, causal, chunk);
    }

    std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                             bool causal) const override
    {
        return std::make_unique<FeatureMapRows<T>>(*m_phi, q, k, causal);
    }

    const FeatureMap<T>* featureMap() const override { return m_phi.get(); }
    MatrixD projection() const override { return m_phi->projection(); }

private:
    std::unique_ptr<FeatureMap<T>> m_phi;
};

}  // namespace attnlab

#include "attention/approximations/checkpoint_attention.h"

#include "attention/exact_attention.h"

namespace attnlab {

namespace {

// Rows of the second checkpoint's P (and, when asked, its kernel A = exp(s q2.k2)).
template <typename T>
class CheckpointRows final : public ApproximateRows<T> {
public:
    CheckpointRows(const Matrix<T>& q, const Matrix<T>& k, double scale, bool causal)
        : m_q(q), m_k(k), m_scale(scale), m_causal(causal)
    {
    }

    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const override
    {
        VectorD logNormaliser(p.rows());
        Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>> rows(p.data(), p.rows(), p.cols(),
                                                            Eigen::OuterStride<>(p.outerStride()));
        exactAttentionRows<T>(m_q, m_k, m_scale, m_causal, begin, rows, logNormaliser.data());
        if (kernel)
            exactKernelRows<T>(p, logNormaliser.data(), *kernel);
    }

private:
    const Matrix<T>& m_q;
    const Matrix<T>& m_k;
    double m_scale;
    bool m_causal;
};

}  // namespace

template <typename T>
CheckpointAttention<T>::CheckpointAttention(Matrix<T> q, Matrix<T> k, Matrix<T> v, double scale)
    : m_q(std::move(q)), m_k(std::move(k)), m_v(std::move(v)), m_scale(scale)
{
}

template <typename T>
ApproximateOutput<T> CheckpointAttention<T>::output(const Matrix<T>& /*q*/, const Matrix<T>& /*k*/,
                                                    const Matrix<T>& /*v*/, bool causal,
                                                    Eigen::Index /*chunk*/) const
{
    return {streamingAttention<T>(m_q, m_k, m_v, m_scale, causal), {}};
}

template <typename T>
std::unique_ptr<ApproximateRows<T>> CheckpointAttention<T>::rows(const Matrix<T>& /*q*/,
                                                                 const Matrix<T>& /*k*/,
                                                                 bool causal) const
{
    return std::make_unique<CheckpointRows<T>>(m_q, m_k, m_scale, causal);
}

template class CheckpointAttention<float>;
template class CheckpointAttention<double>;

}  // namespace attnlab

#include "attention/approximations/favor_sharp_attention.h"

#include "attention/row_ops.h"
#include "parallel.h"

#include <stdexcept>

namespace attnlab {

namespace {

// The rows of P^ of features on rescaled queries and keys, which it keeps (FeatureMapRows keeps
// references to them).
template <typename T>
class SharpRows final : public ApproximateRows<T> {
public:
    SharpRows(const FeatureMap<T>& phi, Matrix<T> q, Matrix<T> k)
        : m_q(std::move(q)), m_k(std::move(k)), m_rows(phi, m_q, m_k, false)
    {
    }

    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const override
    {
        m_rows.rows(begin, p, kernel);
    }

private:
    Matrix<T> m_q;
    Matrix<T> m_k;
    FeatureMapRows<T> m_rows;
};

// x diag(scale), by blocks of rows on the engine threads.
template <typename T>
Matrix<T> rescaled(const Matrix<T>& x, const Eigen::Matrix<T, 1, Eigen::Dynamic>& scale)
{
    Matrix<T> y(x.rows(), x.cols());
    forEachRowBlock(x.rows(), 1024, [&](Eigen::Index begin, Eigen::Index end) {
        y.middleRows(begin, end - begin) = x.middleRows(begin, end - begin) * scale.asDiagonal();
    });
    return y;
}

}  // namespace

template <typename T>
FavorSharpAttention<T>::FavorSharpAttention(const ApproximationSpec& spec, int d,
                                            Eigen::Index /*length*/, double scale, HeadSite site)
    : m_phi(spec, d, scale, site), m_psi(Eigen::Matrix<T, 1, Eigen::Dynamic>::Ones(d))
{
}

template <typename T>
double FavorSharpAttention<T>::flops(const CostShape& s)
{
    return 4 * s.length * s.m * (s.d + s.dv) + 4 * s.length * s.d;
}

template <typename T>
double FavorSharpAttention<T>::workingSetFloats(const CostShape& s)
{
    return linearAttentionWorkingSetFloats(s, s.m, s.m) + 2 * s.length * s.d;
}

template <typename T>
void FavorSharpAttention<T>::fit(const Matrix<T>& q, const Matrix<T>& k, bool causal)
{
    requireCausalForm(Method::FavorSharp, causal);
    const VectorD queries = columnMoments<T>(q).squares;
    const VectorD keys = columnMoments<T>(k).squares;
    for (Eigen::Index l = 0; l < m_psi.size(); ++l) {
        const double ratio = keys[l] / queries[l];
        m_psi[l] =
            queries[l] > 0 && keys[l] > 0 && std::isfinite(ratio) ? T(std::pow(ratio, 0.25)) : T(1);
    }
    m_queries = rescaled(q, m_psi);
    m_keys = rescaled(k, Eigen::Matrix<T, 1, Eigen::Dynamic>(m_psi.cwiseInverse()));
    m_phi.fit(m_queries, m_keys, false);
}

template <typename T>
ApproximateOutput<T> FavorSharpAttention<T>::output(const Matrix<T>& q, const Matrix<T>& k,
                                                    const Matrix<T>& v, bool causal,
                                                    Eigen::Index chunk) const
{
    requireFitted(q, k, causal);
    return linearAttention<T>(m_phi, m_queries, m_keys, v, false, chunk);
}

template <typename T>
std::unique_ptr<ApproximateRows<T>> FavorSharpAttention<T>::rows(const Matrix<T>& q,
                                                                 const Matrix<T>& k,
                                                                 bool causal) const
{
    requireFitted(q, k, causal);
    return std::make_unique<SharpRows<T>>(m_phi, m_queries, m_keys);
}

template <typename T>
void FavorSharpAttention<T>::requireFitted(const Matrix<T>& q, const Matrix<T>& k,
                                           bool causal) const
{
    requireCausalForm(Method::FavorSharp, causal);
    if (q.rows() != m_queries.rows() || k.rows() != m_keys.rows() || q.cols() != m_queries.cols())
        throw std::logic_error(
            "FavorSharpAttention: output() or rows() of rows that were not fitted");
}

template class FavorSharpAttention<float>;
template class FavorSharpAttention<double>;

}  // namespace attnlab

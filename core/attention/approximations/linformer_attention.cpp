#include "attention/approximations/linformer_attention.h"

#include "attention/exact_attention.h"
#include "attention/random.h"
#include "attention/row_ops.h"
#include "errors.h"
#include "parallel.h"

#include <cmath>
#include <vector>

namespace attnlab {

namespace {

// An m x L matrix of N(0, 1/m) entries from (seed, stream, head).
template <typename T>
Matrix<T> gaussianProjection(Eigen::Index m, Eigen::Index length, std::uint64_t seed,
                             RandomStream stream, int head)
{
    Rng rng(seed, stream, std::uint64_t(head));
    const double deviation = 1 / std::sqrt(double(m));
    Matrix<T> projection(m, length);
    for (Eigen::Index r = 0; r < m; ++r)
        for (Eigen::Index j = 0; j < length; ++j)
            projection(r, j) = T(deviation * rng.normal());
    return projection;
}

template <typename T>
class LinformerRows final : public ApproximateRows<T> {
public:
    LinformerRows(Matrix<T> projectedAttention, const Matrix<T>& valueProjection)
        : m_projectedAttention(std::move(projectedAttention)), m_valueProjection(valueProjection)
    {
    }

    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* /*kernel*/) const override
    {
        p.noalias() = m_projectedAttention.middleRows(begin, p.rows()) * m_valueProjection;
    }

private:
    Matrix<T> m_projectedAttention;      // P- (L x m)
    const Matrix<T>& m_valueProjection;  // F (m x L)
};

}  // namespace

template <typename T>
LinformerAttention<T>::LinformerAttention(const ApproximationSpec& spec, int /*d*/,
                                          Eigen::Index length, double scale, HeadSite site)
    : m_scale(scale),
      m_keyProjection(gaussianProjection<T>(spec.features, length, spec.seed,
                                            RandomStream::KeyProjection, site.head)),
      m_valueProjection(gaussianProjection<T>(spec.features, length, spec.seed,
                                              RandomStream::ValueProjection, site.head))
{
}

template <typename T>
double LinformerAttention<T>::flops(const CostShape& s)
{
    return 4 * s.length * s.m * (s.d + s.dv);
}

template <typename T>
double LinformerAttention<T>::workingSetFloats(const CostShape& s)
{
    return s.m * (s.d + s.dv) + s.length * s.m;
}

template <typename T>
void LinformerAttention<T>::requireLength(const Matrix<T>& k) const
{
    if (k.rows() != m_keyProjection.cols())
        throw InputError(QStringLiteral("linformer: E was drawn for %1 keys, not %2")
                             .arg(m_keyProjection.cols())
                             .arg(k.rows()));
}

template <typename T>
Matrix<T> LinformerAttention<T>::projectedAttention(const Matrix<T>& q, const Matrix<T>& k) const
{
    requireLength(k);
    Matrix<T> projectedKeys(m_keyProjection.rows(), k.cols());
    projectedKeys.noalias() = m_keyProjection * k;
    return softmaxOfScores<T>(q, projectedKeys, m_scale);
}

template <typename T>
ApproximateOutput<T> LinformerAttention<T>::output(const Matrix<T>& q, const Matrix<T>& k,
                                                   const Matrix<T>& v, bool causal,
                                                   Eigen::Index /*chunk*/) const
{
    requireCausalForm(Method::Linformer, causal);
    requireLength(k);
    // O^ = softmax(s Q K-^T) V-: exact attention over the m projected keys and values, through
    // the streaming kernel (P- is not formed).
    // E K and F V by blocks of keys, one per engine thread, added in order: each thread reads
    // its own part of E, F, K and V once (Eigen split the m rows instead, so that both threads
    // read all of K and V).
    const Eigen::Index length = k.rows();
    const Eigen::Index partRows = (length + engineThreads() - 1) / engineThreads();
    const Eigen::Index parts = (length + partRows - 1) / partRows;
    std::vector<Matrix<T>> keyParts(static_cast<std::size_t>(parts));
    std::vector<Matrix<T>> valueParts(static_cast<std::size_t>(parts));
    forEachRowBlock(length, partRows, [&](Eigen::Index begin, Eigen::Index end) {
        const std::size_t part = std::size_t(begin / partRows);
        keyParts[part].noalias() =
            m_keyProjection.middleCols(begin, end - begin) * k.middleRows(begin, end - begin);
        valueParts[part].noalias() =
            m_valueProjection.middleCols(begin, end - begin) * v.middleRows(begin, end - begin);
    });
    Matrix<T> projectedKeys = keyParts[0], projectedValues = valueParts[0];
    for (std::size_t part = 1; part < keyParts.size(); ++part) {
        projectedKeys += keyParts[part];
        projectedValues += valueParts[part];
    }
    ApproximateOutput<T> result;
    result.output = streamingAttention<T>(q, projectedKeys, projectedValues, m_scale, false);
    return result;
}

template <typename T>
std::unique_ptr<ApproximateRows<T>> LinformerAttention<T>::rows(const Matrix<T>& q,
                                                                const Matrix<T>& k,
                                                                bool causal) const
{
    requireCausalForm(Method::Linformer, causal);
    return std::make_unique<LinformerRows<T>>(projectedAttention(q, k), m_valueProjection);
}

template <typename T>
std::vector<DrawnMatrix> LinformerAttention<T>::drawnMatrices() const
{
    return {{QStringLiteral("projection_keys"), QStringLiteral("Linformer's key projection E"),
             m_keyProjection.template cast<double>()},
            {QStringLiteral("projection_values"), QStringLiteral("Linformer's value projection F"),
             m_valueProjection.template cast<double>()}};
}

template class LinformerAttention<float>;
template class LinformerAttention<double>;

}  // namespace attnlab

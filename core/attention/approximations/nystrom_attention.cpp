#include "attention/approximations/nystrom_attention.h"

#include "attention/exact_attention.h"
#include "attention/row_ops.h"
#include "parallel.h"

#include <Eigen/QR>

namespace attnlab {

namespace {

// The paper's iterative pseudo-inverse of a (m x m, non-negative rows that sum to 1).
template <typename T>
Matrix<T> iterativePseudoInverse(const Matrix<T>& a, int iterations)
{
    const Eigen::Index m = a.rows();
    const Matrix<T> identity = Matrix<T>::Identity(m, m);
    Matrix<T> z = a.transpose() / a.colwise().sum().maxCoeff();
    Matrix<T> az(m, m), inner(m, m);
    for (int n = 0; n < iterations; ++n) {
        az.noalias() = a * z;
        inner.noalias() = az * (T(7) * identity - az);
        inner = T(15) * identity - inner;
        Matrix<T> outer(m, m);
        outer.noalias() = az * inner;
        outer = T(13) * identity - outer;
        Matrix<T> next(m, m);
        next.noalias() = (T(0.25) * z) * outer;
        z.swap(next);
    }
    return z;
}

template <typename T>
class NystromRows final : public ApproximateRows<T> {
public:
    explicit NystromRows(typename NystromAttention<T>::Factors factors)
        : m_f(std::move(factors.f)), m_pinvB(factors.pinv * factors.b)
    {
    }

    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* /*kernel*/) const override
    {
        p.noalias() = m_f.middleRows(begin, p.rows()) * m_pinvB;
    }

private:
    Matrix<T> m_f;      // F (L x m)
    Matrix<T> m_pinvB;  // A~^+ B (m x L)
};

}  // namespace

template <typename T>
NystromAttention<T>::NystromAttention(const ApproximationSpec& spec, int /*d*/, Eigen::Index length,
                                      double scale, HeadSite /*site*/)
    : m_landmarks(Eigen::Index(landmarks(spec.features, double(length)))),
      m_exactPinv(spec.value(pinvParameter()) == 1),
      m_iterations(int(spec.value(pinvIterationsParameter()))),
      m_scale(scale)
{
}

template <typename T>
double NystromAttention<T>::landmarks(double m, double length)
{
    return std::clamp(m, 1.0, std::max(length, 1.0));
}

template <typename T>
double NystromAttention<T>::flops(const CostShape& s)
{
    const double m = landmarks(s.m, s.length);
    constexpr double iterations = 6;
    return 4 * s.length * m * (s.d + s.dv) + 8 * iterations * m * m * m + 2 * m * m * s.dv;
}

template <typename T>
double NystromAttention<T>::workingSetFloats(const CostShape& s)
{
    const double m = landmarks(s.m, s.length);
    return 2 * s.length * m + 6 * m * m + 2 * m * s.dv;
}

template <typename T>
Matrix<T> NystromAttention<T>::segmentMeans(const Matrix<T>& x, Eigen::Index m)
{
    const Eigen::Index length = x.rows();
    Matrix<T> means = Matrix<T>::Zero(m, x.cols());
    // Row by row (a whole row is one vectorised add), segments spread over the engine threads.
    forEachRowBlock(m, 16, [&](Eigen::Index begin, Eigen::Index end) {
        for (Eigen::Index t = begin; t < end; ++t) {
            const Eigen::Index first = t * length / m, last = (t + 1) * length / m;
            for (Eigen::Index i = first; i < last; ++i)
                means.row(t) += x.row(i);
            means.row(t) /= T(last - first);
        }
    });
    return means;
}

template <typename T>
typename NystromAttention<T>::Factors NystromAttention<T>::factors(const Matrix<T>& q,
                                                                   const Matrix<T>& k) const
{
    const Eigen::Index m = std::min(m_landmarks, q.rows());
    const Matrix<T> queryLandmarks = segmentMeans(q, m);
    const Matrix<T> keyLandmarks = segmentMeans(k, m);
    Factors parts;
    parts.f = softmaxOfScores<T>(q, keyLandmarks, m_scale);
    parts.b = softmaxOfScores<T>(queryLandmarks, k, m_scale);
    parts.pinv = landmarkPseudoInverse(queryLandmarks, keyLandmarks);
    return parts;
}

template <typename T>
Matrix<T> NystromAttention<T>::landmarkPseudoInverse(const Matrix<T>& queryLandmarks,
                                                     const Matrix<T>& keyLandmarks) const
{
    const Matrix<T> landmarkAttention = softmaxOfScores<T>(queryLandmarks, keyLandmarks, m_scale);
    if (!m_exactPinv)
        return iterativePseudoInverse<T>(landmarkAttention, m_iterations);
    const Eigen::CompleteOrthogonalDecomposition<MatrixD> decomposition(
        landmarkAttention.template cast<double>());
    return decomposition.pseudoInverse().template cast<T>();
}

template <typename T>
ApproximateOutput<T> NystromAttention<T>::output(const Matrix<T>& q, const Matrix<T>& k,
                                                 const Matrix<T>& v, bool causal,
                                                 Eigen::Index /*chunk*/) const
{
    requireCausalForm(Method::Nystrom, causal);
    // B V is exact attention of the m query landmarks over every key, and F (A~^+ B V) exact
    // attention of every query over the m key landmarks with the values A~^+ B V: both run
    // through the streaming kernel, so neither F nor B is formed.
    const Eigen::Index m = std::min(m_landmarks, q.rows());
    const Matrix<T> queryLandmarks = segmentMeans(q, m);
    const Matrix<T> keyLandmarks = segmentMeans(k, m);
    const Matrix<T> landmarkValues = streamingAttention<T>(queryLandmarks, k, v, m_scale, false);
    Matrix<T> mixedValues(m, v.cols());
    mixedValues.noalias() = landmarkPseudoInverse(queryLandmarks, keyLandmarks) * landmarkValues;
    ApproximateOutput<T> result;
    result.output = streamingAttention<T>(q, keyLandmarks, mixedValues, m_scale, false);
    return result;
}

template <typename T>
std::unique_ptr<ApproximateRows<T>> NystromAttention<T>::rows(const Matrix<T>& q,
                                                              const Matrix<T>& k, bool causal) const
{
    requireCausalForm(Method::Nystrom, causal);
    return std::make_unique<NystromRows<T>>(factors(q, k));
}

template class NystromAttention<float>;
template class NystromAttention<double>;

}  // namespace attnlab

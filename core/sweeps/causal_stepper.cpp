#include "sweeps/causal_stepper.h"

#include <cmath>

namespace attnlab {

template <typename T>
CausalStepper<T>::CausalStepper(const FeatureMap<T>& phi, const Matrix<T>& q, const Matrix<T>& k,
                                const Matrix<T>& v)
    : m_v(v),
      m_phiQ(q.rows(), phi.featureCount()),
      m_phiK(k.rows(), phi.featureCount()),
      m_queryLogScale(q.rows()),
      m_keyLogScale(k.rows()),
      m_state(phi.featureCount(), v.cols()),
      m_checkpointInterval(
          std::max<Eigen::Index>(1, Eigen::Index(std::ceil(std::sqrt(double(v.rows()))))))
{
    phi.mapQueries(q, m_phiQ, m_queryLogScale);
    phi.mapKeys(k, m_phiK, m_keyLogScale);
    m_checkpoints.push_back(m_state);
}

template <typename T>
void CausalStepper<T>::step()
{
    Q_ASSERT(m_position < length());
    const Eigen::Index t = m_position;
    Matrix<T> keyRow = m_phiK.row(t);
    m_state.add(keyRow, m_keyLogScale.segment(t, 1), m_v.row(t));
    ++m_position;
    if (m_position % m_checkpointInterval == 0 &&
        Eigen::Index(m_checkpoints.size()) == m_position / m_checkpointInterval)
        m_checkpoints.push_back(m_state);
}

template <typename T>
void CausalStepper<T>::seek(Eigen::Index i)
{
    Q_ASSERT(i >= 0 && i <= length());
    if (i < m_position) {
        // Every checkpoint up to the furthest position reached exists.
        const Eigen::Index checkpoint = i / m_checkpointInterval;
        m_state = m_checkpoints[checkpoint];
        m_position = checkpoint * m_checkpointInterval;
    }
    while (m_position < i)
        step();
}

template <typename T>
MatrixD CausalStepper<T>::state() const
{
    return m_state.trueScaleState();
}

template <typename T>
VectorD CausalStepper<T>::normalizer() const
{
    return m_state.trueScaleNormalizer();
}

template <typename T>
double CausalStepper<T>::denominator() const
{
    Q_ASSERT(m_position >= 1);
    const Eigen::Index t = m_position - 1;
    const double mantissa = double(m_phiQ.row(t).dot(m_state.z));
    if (mantissa == 0.0)
        return 0.0;
    return mantissa * std::exp(double(m_queryLogScale[t]) + double(m_state.scale));
}

template <typename T>
VectorD CausalStepper<T>::output() const
{
    Q_ASSERT(m_position >= 1);
    const Eigen::Index t = m_position - 1;
    const T den = m_phiQ.row(t).dot(m_state.z);
    if (den == T(0) || !std::isfinite(den))
        return VectorD::Zero(m_v.cols());
    return ((m_phiQ.row(t) * m_state.s) / den).transpose().template cast<double>();
}

template <typename T>
VectorD CausalStepper<T>::queryFeatures(Eigen::Index t) const
{
    return m_phiQ.row(t).transpose().template cast<double>() * std::exp(double(m_queryLogScale[t]));
}

template <typename T>
VectorD CausalStepper<T>::keyFeatures(Eigen::Index t) const
{
    return m_phiK.row(t).transpose().template cast<double>() * std::exp(double(m_keyLogScale[t]));
}

template class CausalStepper<float>;
template class CausalStepper<double>;

}  // namespace attnlab

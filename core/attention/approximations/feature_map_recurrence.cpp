#include "attention/approximations/feature_map_recurrence.h"

#include <cmath>

namespace attnlab {

FeatureMapRecurrence::FeatureMapRecurrence(std::unique_ptr<FeatureMap<float>> phi,
                                           Eigen::Index valueDim)
    : m_phi(std::move(phi)),
      m_state(m_phi->featureCount(), valueDim),
      m_queryFeatures(1, m_phi->featureCount()),
      m_keyFeatures(1, m_phi->featureCount()),
      m_queryLogScale(1),
      m_keyLogScale(1)
{
}

bool FeatureMapRecurrence::step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
                                const Eigen::Ref<const Eigen::RowVectorXf>& k,
                                const Eigen::Ref<const Eigen::RowVectorXf>& v,
                                Eigen::Ref<Eigen::RowVectorXf> y)
{
    const Eigen::Map<const Matrix<float>> key(k.data(), 1, k.size());
    const Eigen::Map<const Matrix<float>> query(q.data(), 1, q.size());
    const Eigen::Map<const Matrix<float>> value(v.data(), 1, v.size());
    m_phi->mapKeys(key, m_keyFeatures, m_keyLogScale);
    m_state.add(m_keyFeatures, m_keyLogScale, value);
    m_phi->mapQueries(query, m_queryFeatures, m_queryLogScale);
    m_started = true;
    // The query's own scale cancels between numerator and denominator.
    const float den = m_queryFeatures.row(0).dot(m_state.z);
    if (den != 0.0f && std::isfinite(den))
        y.noalias() = (m_queryFeatures * m_state.s) / den;
    else
        y.setZero();
    return den > 0.0f && std::isfinite(den);
}

double FeatureMapRecurrence::stateFloats() const
{
    return double(m_state.s.size() + m_state.z.size());
}

VectorD FeatureMapRecurrence::queryFeatures() const
{
    if (!m_started)
        return VectorD::Zero(m_queryFeatures.cols());
    return m_queryFeatures.row(0).transpose().cast<double>() * std::exp(double(m_queryLogScale[0]));
}

VectorD FeatureMapRecurrence::keyFeatures() const
{
    if (!m_started)
        return VectorD::Zero(m_keyFeatures.cols());
    // add() rescaled the key's mantissas to the state's scale.
    return m_keyFeatures.row(0).transpose().cast<double>() * std::exp(double(m_state.scale));
}

double FeatureMapRecurrence::denominator() const
{
    if (!m_started)
        return 0;
    const double mantissa = double(m_queryFeatures.row(0).dot(m_state.z));
    if (mantissa == 0.0)
        return 0.0;
    return mantissa * std::exp(double(m_queryLogScale[0]) + double(m_state.scale));
}

}  // namespace attnlab

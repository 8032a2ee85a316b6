#include "attention/approximations/windowed_map_recurrence.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

WindowedMapRecurrence::WindowedMapRecurrence(std::unique_ptr<FeatureMap<float>> phi,
                                             Eigen::Index window, Eigen::Index d,
                                             Eigen::Index valueDim, double scale)
    : m_phi(std::move(phi)),
      m_cache(window, d, valueDim),
      m_state(m_phi->featureCount(), valueDim),
      m_scale(float(scale)),
      m_features(1, m_phi->featureCount()),
      m_logScale(1)
{
}

bool WindowedMapRecurrence::step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
                                 const Eigen::Ref<const Eigen::RowVectorXf>& k,
                                 const Eigen::Ref<const Eigen::RowVectorXf>& v,
                                 Eigen::Ref<Eigen::RowVectorXf> y)
{
    m_cache.push(k, v, [&](const auto& leavingKey, const auto& leavingValue) {
        const Matrix<float> key = leavingKey;
        m_phi->mapKeys(key, m_features, m_logScale);
        m_state.add(m_features, m_logScale, Matrix<float>(leavingValue));
    });
    // The window's scores s q.k_j, and the map's part at exponent c_q + kappa.
    const Eigen::VectorXf scores = (m_cache.keys() * q.transpose()) * m_scale;
    const Eigen::Map<const Matrix<float>> query(q.data(), 1, q.size());
    m_phi->mapQueries(query, m_features, m_logScale);
    const float mapExponent = m_logScale[0] + m_state.scale;  // -inf while the state is empty
    const float reference = std::max(scores.maxCoeff(), mapExponent);
    const Eigen::VectorXf weights = (scores.array() - reference).exp();
    Eigen::RowVectorXf numerator = weights.transpose() * m_cache.values();
    float den = weights.sum();
    if (mapExponent > -std::numeric_limits<float>::infinity()) {
        const float alpha = std::exp(mapExponent - reference);
        numerator += alpha * (m_features * m_state.s);
        den += alpha * m_features.row(0).dot(m_state.z);
    }
    y = numerator / den;
    return den > 0.0f && std::isfinite(den);
}

double WindowedMapRecurrence::stateFloats() const
{
    return m_cache.floats() + double(m_state.s.size() + m_state.z.size());
}

}  // namespace attnlab

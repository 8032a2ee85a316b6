#pragma once

#include "attention/feature_maps.h"
#include "attention/linear_attention.h"
#include "attention/recurrent_attention.h"

#include <memory>

namespace attnlab {

// Causal linear attention with the feature map phi as a recurrent network (docs/design.md
// section 2.6; "Transformers are RNNs"): with S_0 = 0 and z_0 = 0, consuming token i does
//   S_i = S_{i-1} + phi(k_i) v_i^T,   z_i = z_{i-1} + phi(k_i),
//   y_i = phi(q_i)^T S_i / phi(q_i)^T z_i,
// the state (S_i, z_i) held as mantissas at a common log-scale (KeySummary), C d_v + C floats
// whatever i is. The map is never fitted to the data (a causal map must not look ahead: FAVOR++
// keeps its fixed A), so y_i is the parallel causal form's o^_i up to rounding.
class FeatureMapRecurrence final : public RecurrentAttention {
public:
    // The recurrence of phi for values of valueDim (d_v) entries.
    FeatureMapRecurrence(std::unique_ptr<FeatureMap<float>> phi, Eigen::Index valueDim);

    bool step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
              const Eigen::Ref<const Eigen::RowVectorXf>& k,
              const Eigen::Ref<const Eigen::RowVectorXf>& v,
              Eigen::Ref<Eigen::RowVectorXf> y) override;
    double stateFloats() const override;

    const FeatureMap<float>& featureMap() const { return *m_phi; }
    // S_i (C x d_v) and z_i (C) after the last step, at their true scale, in double (0 before
    // the first step; inf where an entry exceeds the double range).
    MatrixD state() const { return m_state.trueScaleState(); }
    VectorD normalizer() const { return m_state.trueScaleNormalizer(); }
    // phi(q_i) and phi(k_i) of the last step at their true scale, and its denominator
    // phi(q_i)^T z_i (0 before the first step).
    VectorD queryFeatures() const;
    VectorD keyFeatures() const;
    double denominator() const;

private:
    std::unique_ptr<FeatureMap<float>> m_phi;
    KeySummary<float> m_state;
    Matrix<float> m_queryFeatures;  // 1 x C mantissas of the last query and key
    Matrix<float> m_keyFeatures;    // (the key's rescaled to the state's scale by add())
    Vector<float> m_queryLogScale;
    Vector<float> m_keyLogScale;
    bool m_started = false;
};

}  // namespace attnlab

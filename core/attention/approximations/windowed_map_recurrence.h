#pragma once

#include "attention/approximations/window_recurrence.h"
#include "attention/feature_maps.h"
#include "attention/linear_attention.h"

#include <memory>

namespace attnlab {

// The recurrent form of a sliding window with a feature map for the keys that left it
// (hedgehog-window; the causal form of ScatterbrainAttention with phi_q and phi_k): a sliding
// cache of the last w keys and values (WindowCache) and the state (S_i, z_i) of the keys before
// them,
//   S_i = sum_{j <= i - w} phi_k(k_j) v_j^T,   z_i = sum_{j <= i - w} phi_k(k_j),
//   y_i = (sum_{j in W(i)} exp(s q_i.k_j) v_j + phi_q(q_i)^T S_i)
//         / (sum_{j in W(i)} exp(s q_i.k_j) + phi_q(q_i)^T z_i),
// W(i) = {max(1, i - w + 1), ..., i}; a key enters the state when it leaves the window. A weight
// of the map's part is phi_q's (folded into its log-scale). 2 w d + C d_v + C floats once the
// window is full, whatever i. Every term is brought to the row's largest exponent before they
// are added, so y_i is the parallel causal form's o^_i up to rounding.
class WindowedMapRecurrence final : public RecurrentAttention {
public:
    WindowedMapRecurrence(std::unique_ptr<FeatureMap<float>> phi, Eigen::Index window,
                          Eigen::Index d, Eigen::Index valueDim, double scale);

    bool step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
              const Eigen::Ref<const Eigen::RowVectorXf>& k,
              const Eigen::Ref<const Eigen::RowVectorXf>& v,
              Eigen::Ref<Eigen::RowVectorXf> y) override;
    double stateFloats() const override;

private:
    std::unique_ptr<FeatureMap<float>> m_phi;
    WindowCache m_cache;
    KeySummary<float> m_state;
    float m_scale;
    Matrix<float> m_features;  // 1 x C: phi of the key leaving the window, then of the query
    Vector<float> m_logScale;
};

}  // namespace attnlab

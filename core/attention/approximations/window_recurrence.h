#pragma once

#include "attention/recurrent_attention.h"

#include <algorithm>

namespace attnlab {

// Local attention's recurrent form: a sliding cache of its window. It keeps the keys and values
// of the last w tokens (a ring of w rows, the oldest overwritten; 2 min(i, w) d floats), and
// token i's output is exact softmax attention over them,
//   y_i = sum_{j in W(i)} exp(s q_i.k_j) v_j / sum_{j in W(i)} exp(s q_i.k_j),
// W(i) = {max(1, i - w + 1), ..., i}: local attention's causal window (LocalAttention), whatever
// the length, at a cost that stops growing once the window is full.
class WindowRecurrence final : public RecurrentAttention {
public:
    WindowRecurrence(Eigen::Index window, Eigen::Index d, Eigen::Index valueDim, double scale);

    // The keys held, min(i, w).
    Eigen::Index held() const { return std::min(m_tokens, m_window); }

    bool step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
              const Eigen::Ref<const Eigen::RowVectorXf>& k,
              const Eigen::Ref<const Eigen::RowVectorXf>& v,
              Eigen::Ref<Eigen::RowVectorXf> y) override;
    double stateFloats() const override;

private:
    // Row (i - 1) mod w holds k_i and v_i; the rows grow (doubling) up to w as tokens arrive, so
    // a large w costs memory only once that many tokens have come.
    Matrix<float> m_keys;
    Matrix<float> m_values;
    Eigen::Index m_window;
    Eigen::Index m_tokens = 0;  // i
    float m_scale;
    Eigen::MatrixXf m_scores;
};

}  // namespace attnlab

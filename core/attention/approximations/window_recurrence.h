#pragma once

#include "attention/recurrent_attention.h"
#include "types.h"

#include <algorithm>

namespace attnlab {

// The keys and values of the last w tokens, a ring of w rows (the oldest overwritten; 2 min(i, w)
// d floats after i tokens): the sliding cache of local attention's and hedgehog-window's
// recurrent forms. Row (i - 1) mod w holds k_i and v_i; the rows grow (doubling) up to w as
// tokens arrive, so a large w costs memory only once that many tokens have come.
class WindowCache {
public:
    WindowCache(Eigen::Index window, Eigen::Index d, Eigen::Index valueDim);

    // Takes token i = tokens() + 1 in. When the window was full, token i - w leaves it: evicted
    // (if not null) is called with its key and value first.
    template <typename Evicted>
    void push(const Eigen::Ref<const Eigen::RowVectorXf>& k,
              const Eigen::Ref<const Eigen::RowVectorXf>& v, Evicted&& evicted)
    {
        const Eigen::Index row = nextRow();
        if (m_tokens >= m_window)
            evicted(m_keys.row(row), m_values.row(row));
        m_keys.row(row) = k;
        m_values.row(row) = v;
        ++m_tokens;
    }

    // The keys held, min(i, w), and their keys and values (in ring order).
    Eigen::Index held() const { return std::min(m_tokens, m_window); }
    auto keys() const { return m_keys.topRows(held()); }
    auto values() const { return m_values.topRows(held()); }
    Eigen::Index tokens() const { return m_tokens; }
    double floats() const { return double(held() * (m_keys.cols() + m_values.cols())); }

private:
    // The row token tokens() + 1 goes to, grown to hold it.
    Eigen::Index nextRow();

    Matrix<float> m_keys;
    Matrix<float> m_values;
    Eigen::Index m_window;
    Eigen::Index m_tokens = 0;  // i
};

// Local attention's recurrent form: a sliding cache of its window (WindowCache), and token i's
// output exact softmax attention over it,
//   y_i = sum_{j in W(i)} exp(s q_i.k_j) v_j / sum_{j in W(i)} exp(s q_i.k_j),
// W(i) = {max(1, i - w + 1), ..., i}: local attention's causal window (LocalAttention), whatever
// the length, at a cost that stops growing once the window is full.
class WindowRecurrence final : public RecurrentAttention {
public:
    WindowRecurrence(Eigen::Index window, Eigen::Index d, Eigen::Index valueDim, double scale);

    // The keys held, min(i, w).
    Eigen::Index held() const { return m_cache.held(); }

    bool step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
              const Eigen::Ref<const Eigen::RowVectorXf>& k,
              const Eigen::Ref<const Eigen::RowVectorXf>& v,
              Eigen::Ref<Eigen::RowVectorXf> y) override;
    double stateFloats() const override { return m_cache.floats(); }

private:
    WindowCache m_cache;
    float m_scale;
    Eigen::MatrixXf m_scores;
};

}  // namespace attnlab

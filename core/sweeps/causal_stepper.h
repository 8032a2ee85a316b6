#pragma once

#include "attention/feature_maps.h"
#include "attention/linear_attention.h"
#include "types.h"

#include <vector>

namespace attnlab {

// Causal linear attention run as a recurrent network ("Transformers are RNNs"), one token at a
// time: with S_0 = 0 and z_0 = 0, consuming token i (1-based) does
//   S_i = S_{i-1} + phi(k_i) v_i^T,   z_i = z_{i-1} + phi(k_i),
//   y_i = phi(q_i)^T S_i / phi(q_i)^T z_i.
// The state (S_i, z_i) has C x d_v + C numbers whatever i is. Every intermediate state can be
// read; seek() moves to any position, forward or back, and gives exactly (bit for bit) the state
// stepping from the start gives: states are checkpointed every ceil(sqrt(L)) tokens and replayed.
template <typename T>
class CausalStepper {
public:
    // Maps every query and key once (2 L C values).
    CausalStepper(const FeatureMap<T>& phi, const Matrix<T>& q, const Matrix<T>& k,
                  const Matrix<T>& v);

    Eigen::Index length() const { return m_v.rows(); }
    // i, the number of tokens consumed: the state is (S_i, z_i). 0 at the start.
    Eigen::Index position() const { return m_position; }

    // Consumes token position() + 1. Requires position() < length().
    void step();
    // Moves to position i in [0, L].
    void seek(Eigen::Index i);

    // S_i (C x d_v) and z_i (C) at their true scale, in double.
    MatrixD state() const;
    VectorD normalizer() const;

    // For the last consumed token i (requires position() >= 1): the denominator phi(q_i)^T z_i
    // at its true scale (inf where it exceeds the double range) and y_i (d_v).
    double denominator() const;
    VectorD output() const;

    // phi(q_t) and phi(k_t) of token t (0-based) at their true scale.
    VectorD queryFeatures(Eigen::Index t) const;
    VectorD keyFeatures(Eigen::Index t) const;

private:
    Matrix<T> m_v;
    Matrix<T> m_phiQ;
    Matrix<T> m_phiK;
    Vector<T> m_queryLogScale;
    Vector<T> m_keyLogScale;
    Eigen::Index m_position = 0;
    KeySummary<T> m_state;
    Eigen::Index m_checkpointInterval;
    std::vector<KeySummary<T>>
        m_checkpoints;  // the state at positions 0, K, 2K, ... reached so far
};

}  // namespace attnlab

#pragma once

#include "attention/maps/random_projection_map.h"

namespace attnlab {

// Performer-ReLU (generalised attention) as the reference implementations define it (the
// google-research performer's generalized kernel and performer-pytorch's generalized_kernel):
// phi(x) = ReLU(W x') + epsilon, epsilon added to the unscaled ReLU. C = m.
template <typename T>
class ReluRandomFeatures final : public RandomProjectionMap<T> {
public:
    ReluRandomFeatures(const ApproximationSpec& spec, int d, double scale, HeadSite site)
        : RandomProjectionMap<T>(spec, d, scale, site),
          m_epsilon(T(spec.value(reluEpsilonParameter())))
    {
    }

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        this->project(x, phi);
        phi = phi.array().max(T(0)) + m_epsilon;
        logScale.setZero();
    }

private:
    T m_epsilon;
};

}  // namespace attnlab

#pragma once

#include "attention/maps/random_projection_map.h"
#include "attention/row_ops.h"

namespace attnlab {

// FAVOR+ positive: phi(x) = m^-1/2 exp(W x' - |x'|^2 / 2). With M_i = max_k (W x'_i)_k:
// Phi_i = m^-1/2 exp(W x'_i - M_i), c_i = M_i - |x'_i|^2 / 2. C = m.
template <typename T>
class PositiveRandomFeatures final : public RandomProjectionMap<T> {
public:
    using RandomProjectionMap<T>::RandomProjectionMap;

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        this->project(x, phi);
        Vector<T> rowMax(x.rows());
        expBelowRowMax<T>(phi, nullptr, T(1 / std::sqrt(double(this->m_features))), rowMax);
        logScale = rowMax - this->halfSquaredNorms(x);
    }

    // Lemma 2 of Choromanski et al. 2021 (iid Gaussian rows): the MSE of phi(x).phi(y) for
    // SM = exp(x'.y') is 1/m exp(|z|^2) SM^2 (1 - exp(-|z|^2)) with z = x' + y' (x, y here are
    // x', y'), in one exponential (it overflows later than the product).
    static double kernelMse(double m, const VectorD& x, const VectorD& y, double /*parameterA*/ = 0)
    {
        const double z2 = (x + y).squaredNorm();
        return std::exp(z2 + 2 * x.dot(y)) * -std::expm1(-z2) / m;
    }
};

}  // namespace attnlab

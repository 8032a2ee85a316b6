#pragma once

#include "attention/maps/random_projection_map.h"

namespace attnlab {

// Trigonometric random Fourier features: phi(x) = m^-1/2 exp(|x'|^2 / 2) [cos(W x'), sin(W x')].
// Phi_i = m^-1/2 [cos(W x'_i), sin(W x'_i)], c_i = |x'_i|^2 / 2. C = 2m.
template <typename T>
class TrigonometricRandomFeatures final : public RandomProjectionMap<T, 2> {
public:
    using RandomProjectionMap<T, 2>::RandomProjectionMap;

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        const Eigen::Index m = this->m_features;
        auto u = phi.leftCols(m);
        this->project(x, u);
        logScale = this->halfSquaredNorms(x);
        const T norm = T(1 / std::sqrt(double(m)));
        phi.rightCols(m) = u.array().sin() * norm;
        u = u.array().cos() * norm;
    }

    // Lemma 2: 1/(2m) exp(|x' + y'|^2) SM^-2 (1 - exp(-|x' - y'|^2))^2, SM = exp(x'.y').
    static double kernelMse(double m, const VectorD& x, const VectorD& y, double /*parameterA*/ = 0)
    {
        const double difference = -std::expm1(-(x - y).squaredNorm());
        return std::exp((x + y).squaredNorm() - 2 * x.dot(y)) * difference * difference / (2 * m);
    }
};

}  // namespace attnlab

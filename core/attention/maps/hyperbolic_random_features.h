#pragma once

#include "attention/maps/positive_random_features.h"
#include "attention/maps/random_projection_map.h"
#include "attention/row_ops.h"

namespace attnlab {

// FAVOR+ hyperbolic: phi(x) = (2m)^-1/2 exp(-|x'|^2 / 2) [exp(W x'), exp(-W x')]. With
// M_i = max_k |(W x'_i)_k|: Phi_i = (2m)^-1/2 [exp(W x'_i - M_i), exp(-W x'_i - M_i)],
// c_i = M_i - |x'_i|^2 / 2. C = 2m.
template <typename T>
class HyperbolicRandomFeatures final : public RandomProjectionMap<T, 2> {
public:
    using RandomProjectionMap<T, 2>::RandomProjectionMap;

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        const Eigen::Index m = this->m_features;
        auto u = phi.leftCols(m);
        this->project(x, u);
        const Vector<T> rowMax = u.cwiseAbs().rowwise().maxCoeff();
        logScale = rowMax - this->halfSquaredNorms(x);
        const T norm = T(1 / std::sqrt(2.0 * double(m)));
        phi.rightCols(m) = -u;
        expShiftedRows(phi, rowMax, norm);
    }

    // Lemma 2: 1/2 (1 - exp(-|x' + y'|^2)) times the positive features' MSE.
    static double kernelMse(double m, const VectorD& x, const VectorD& y, double /*parameterA*/ = 0)
    {
        return 0.5 * -std::expm1(-(x + y).squaredNorm()) *
               PositiveRandomFeatures<double>::kernelMse(m, x, y);
    }
};

}  // namespace attnlab

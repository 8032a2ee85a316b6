#pragma once

#include "attention/maps/random_projection_map.h"
#include "attention/row_ops.h"

namespace attnlab {

// FAVOR+ positive: phi(x) = m^-1/2 exp(W x' - |x'|^2 / 2). With M_i = max_k (W x'_i)_k:
// Phi_i = m^-1/2 exp(W x'_i - M_i), c_i = M_i - |x'_i|^2 / 2. C = m.
template <typename T>
class PositiveRandomFeatures final : public RandomProjectionMap<T> {
public:
    static Eigen::Index featureCount(int /*d*/, int m) { return m; }

    PositiveRandomFeatures(const FeatureMapSpec& spec, int d, double scale, int head)
        : RandomProjectionMap<T>(featureCount(d, spec.features), spec, d, scale, head)
    {
    }

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        this->project(x, phi);
        const Vector<T> rowMax = phi.rowwise().maxCoeff();
        logScale = rowMax - this->halfSquaredNorms(x);
        const T norm = T(1 / std::sqrt(double(this->m_features)));
        expShiftedRows(phi, rowMax, norm);
    }
};

}  // namespace attnlab

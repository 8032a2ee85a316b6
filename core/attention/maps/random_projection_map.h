#pragma once

#include "attention/feature_maps.h"

#include <cmath>

namespace attnlab {

// The base of the maps that draw W (m x d, from the spec's seed and the head): the projection
// folded with sqrt(s), so that one product gives U = X (sqrt(s) W)^T, U_ik = w_k . x'_i.
template <typename T>
class RandomProjectionMap : public FeatureMap<T> {
protected:
    RandomProjectionMap(Eigen::Index featureCount, const ApproximationSpec& spec, int d,
                        double scale, HeadSite site)
        : FeatureMap<T>(featureCount), m_features(spec.features), m_halfScale(scale / 2)
    {
        this->m_projection =
            randomProjection(spec.features, d, spec.projection, spec.rowNorm, spec.seed, site.head);
        m_scaledProjectionT =
            (std::sqrt(scale) * this->m_projection).transpose().template cast<T>();
    }

    // U = X (sqrt(s) W)^T, written into u (n x m).
    void project(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> u) const
    {
        u.noalias() = x * m_scaledProjectionT;
    }

    // |x'_i|^2 / 2 = s |x_i|^2 / 2 for each row.
    Vector<T> halfSquaredNorms(const Eigen::Ref<const Matrix<T>>& x) const
    {
        return x.rowwise().squaredNorm() * T(m_halfScale);
    }

    Eigen::Index m_features;
    double m_halfScale;
    Matrix<T> m_scaledProjectionT;  // (sqrt(s) W)^T, d x m
};

}  // namespace attnlab

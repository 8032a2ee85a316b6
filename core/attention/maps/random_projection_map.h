#pragma once

#include "attention/feature_maps.h"

#include <cmath>

namespace attnlab {

// The base of the symmetric maps that draw W (m x d, from the spec's seed and the head): the
// projection folded with sqrt(s), so that one product gives U = X (sqrt(s) W)^T, U_ik = w_k . x'_i.
// A map's features are kBlocks blocks of m functions of U side by side, C = kBlocks m: one block
// for FAVOR+ positive, FAVOR++ and Performer-ReLU, two for hyperbolic's [exp(U), exp(-U)] and
// trigonometric's [cos U, sin U]. A map with nothing else to set up inherits the constructor.
template <typename T, int kBlocks = 1>
class RandomProjectionMap : public FeatureMap<T> {
public:
    // The cost model's C = kBlocks m and rows of W x' (m).
    static Eigen::Index featureCount(int /*d*/, int m) { return kBlocks * Eigen::Index(m); }
    static Eigen::Index projectedRows(int /*d*/, int m) { return m; }

    // Draws W for spec.features and the head of `site`, for d-dimensional rows at scale s.
    RandomProjectionMap(const ApproximationSpec& spec, int d, double scale, HeadSite site)
        : FeatureMap<T>(featureCount(d, spec.features)),
          m_features(spec.features),
          m_halfScale(scale / 2)
    {
        this->m_projection =
            randomProjection(spec.features, d, spec.projection, spec.rowNorm, spec.seed, site.head);
        m_scaledProjectionT =
            (std::sqrt(scale) * this->m_projection).transpose().template cast<T>();
    }

protected:
    // phi_q = phi_k: every map that draws W is symmetric.
    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override = 0;

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

#pragma once

#include "attention/feature_maps.h"

#include <cmath>

namespace attnlab {

// Degree-2 Taylor map: phi(x) = [1, x', (x'_a x'_b c_ab)_{a <= b}] with c_aa = 1/sqrt(2) and
// c_ab = 1 otherwise, so phi(x).phi(y) = 1 + x'.y' + (x'.y')^2 / 2 exactly (the upper triangle of
// vec(x' x'^T) / sqrt(2), folded). C = 1 + d + d (d + 1) / 2.
template <typename T>
class Taylor2Features final : public FeatureMap<T> {
public:
    static Eigen::Index featureCount(int d, int /*m*/)
    {
        return 1 + Eigen::Index(d) + Eigen::Index(d) * (d + 1) / 2;
    }

    Taylor2Features(const ApproximationSpec& spec, int d, double scale, HeadSite /*site*/)
        : FeatureMap<T>(featureCount(d, spec.features)), m_d(d), m_sqrtScale(T(std::sqrt(scale)))
    {
    }

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        const T halfSqrt2 = T(1 / std::sqrt(2.0));
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
            const Vector<T> xs = x.row(i).transpose() * m_sqrtScale;
            phi(i, 0) = T(1);
            phi.row(i).segment(1, m_d) = xs.transpose();
            Eigen::Index column = 1 + m_d;
            for (Eigen::Index a = 0; a < m_d; ++a) {
                phi(i, column++) = xs[a] * xs[a] * halfSqrt2;
                for (Eigen::Index b = a + 1; b < m_d; ++b)
                    phi(i, column++) = xs[a] * xs[b];
            }
        }
        logScale.setZero();
    }

private:
    Eigen::Index m_d;
    T m_sqrtScale;
};

}  // namespace attnlab

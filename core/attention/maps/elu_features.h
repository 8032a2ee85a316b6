#pragma once

#include "attention/feature_maps.h"

#include <cmath>

namespace attnlab {

// elu+1 (Katharopoulos et al. 2020): phi(x) = elu(x) + 1, i.e. x + 1 for x > 0 and exp(x)
// otherwise, elementwise on the raw row x (or on x' = sqrt(s) x when asked). C = d.
template <typename T>
class EluFeatures final : public FeatureMap<T> {
public:
    static Eigen::Index featureCount(int d, int /*m*/) { return d; }

    EluFeatures(const ApproximationSpec& spec, int d, double scale, HeadSite /*site*/)
        : FeatureMap<T>(featureCount(d, spec.features)),
          m_inputScale(T(spec.isOn(eluOnScaledParameter()) ? std::sqrt(scale) : 1.0))
    {
    }

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        // elu(x) + 1 = max(x, 0) + exp(min(x, 0)), which vectorises (select does not).
        const auto scaled = x.array() * m_inputScale;
        phi = scaled.max(T(0)) + scaled.min(T(0)).exp();
        logScale.setZero();
    }

private:
    T m_inputScale;
};

}  // namespace attnlab

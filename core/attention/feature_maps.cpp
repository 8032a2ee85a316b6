#include "attention/feature_maps.h"

#include "attention/fitted_feature_maps.h"

#include <cmath>
#include <type_traits>

namespace attnlab {

Eigen::Index featureCountOf(const ApproximationSpec& spec, int d)
{
    const MethodInfo& info = methodInfo(spec.kind);
    if (info.needsFittedMaps)  // hedgehog-window's maps too
        return 2 * Eigen::Index(spec.fittedMaps ? spec.fittedMaps->featureDim : d);
    return info.featureCount(d, spec.features);
}

template <typename T>
std::unique_ptr<FeatureMap<T>> makeFeatureMap(const ApproximationSpec& spec, int d, double scale,
                                              HeadSite site)
{
    const MethodInfo& info = methodInfo(spec.kind);
    if constexpr (std::is_same_v<T, float>)
        return info.makeMapFloat(spec, d, scale, site);
    else
        return info.makeMapDouble(spec, d, scale, site);
}

template <typename T>
MatrixD trueScaleFeatures(const FeatureMap<T>& phi, const Matrix<T>& x, FeatureSide side)
{
    Matrix<T> mantissa(x.rows(), phi.featureCount());
    Vector<T> logScale(x.rows());
    phi.mapSide(side, x, mantissa, logScale);
    MatrixD features = mantissa.template cast<double>();
    for (Eigen::Index i = 0; i < features.rows(); ++i) {
        const double factor = std::exp(double(logScale[i]));
        for (double& value : features.row(i))
            value = value == 0.0 ? 0.0 : value * factor;  // 0 stays 0 even where exp(c_i) = inf
    }
    return features;
}

template std::unique_ptr<FeatureMap<float>> makeFeatureMap<float>(const ApproximationSpec&, int,
                                                                  double, HeadSite);
template std::unique_ptr<FeatureMap<double>> makeFeatureMap<double>(const ApproximationSpec&, int,
                                                                    double, HeadSite);
template MatrixD trueScaleFeatures<float>(const FeatureMap<float>&, const Matrix<float>&,
                                          FeatureSide);
template MatrixD trueScaleFeatures<double>(const FeatureMap<double>&, const Matrix<double>&,
                                           FeatureSide);

}  // namespace attnlab

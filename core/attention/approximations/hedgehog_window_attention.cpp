#include "attention/approximations/hedgehog_window_attention.h"

#include "attention/approximations/windowed_map_recurrence.h"
#include "attention/maps/hedgehog_features.h"

namespace attnlab {

namespace {

// The fitted maps of `site` with log gamma on the query side.
template <typename T>
std::unique_ptr<FeatureMap<T>> weightedMaps(const ApproximationSpec& spec, int d, double scale,
                                            HeadSite site)
{
    const FittedHeadMaps& maps = fittedHeadMaps(spec, d, site);
    return std::make_unique<HedgehogFeatures<T>>(maps, scale, maps.windowLogWeight);
}

// Scatterbrain's shape with m = C = 2d.
CostShape withFittedFeatures(CostShape shape)
{
    shape.m = 2 * shape.d;
    return shape;
}

}  // namespace

template <typename T>
HedgehogWindowAttention<T>::HedgehogWindowAttention(const ApproximationSpec& spec, int d,
                                                    Eigen::Index /*length*/, double scale,
                                                    HeadSite site)
    : ScatterbrainAttention<T>(weightedMaps<T>(spec, d, scale, site),
                               Eigen::Index(spec.value(windowParameter())), scale)
{
}

template <typename T>
double HedgehogWindowAttention<T>::flops(const CostShape& s)
{
    // Scatterbrain's count takes 4 L m d for m features; the fitted maps project d_f = C / 2 rows.
    const CostShape fitted = withFittedFeatures(s);
    return ScatterbrainAttention<T>::flops(fitted) - 2 * s.length * fitted.m * s.d;
}

template <typename T>
double HedgehogWindowAttention<T>::workingSetFloats(const CostShape& s)
{
    return ScatterbrainAttention<T>::workingSetFloats(withFittedFeatures(s));
}

std::unique_ptr<RecurrentAttention> makeHedgehogWindowRecurrence(const ApproximationSpec& spec,
                                                                 int d, double scale, HeadSite site)
{
    return std::make_unique<WindowedMapRecurrence>(weightedMaps<float>(spec, d, scale, site),
                                                   Eigen::Index(spec.value(windowParameter())), d,
                                                   d, scale);
}

template class HedgehogWindowAttention<float>;
template class HedgehogWindowAttention<double>;

}  // namespace attnlab

#pragma once

// Fitted feature maps for tests: the methods fitted to a model (hedgehog, hedgehog-window) run on
// maps like these, random rather than fitted, so that the tests of every method of the registry
// (recurrent == chunked == quadratic, float against double, ...) hold for them too.

#include "attention/approximation_spec.h"
#include "attention/fitted_feature_maps.h"
#include "attention/methods.h"
#include "attention/random.h"

#include <cmath>
#include <memory>

namespace attnlab::test {

// Maps for every head of `layers` layers of `heads` heads of dimension d, d_f = featureDim (d
// when 0): W the identity's rows plus N(0, 0.3^2 / d) entries, b ~ N(0, 0.1^2), log gamma
// ~ N(0, 0.5^2), seeded.
inline std::shared_ptr<const FittedFeatureMaps> randomFittedMaps(int d, int layers = 4,
                                                                 int heads = 4, int featureDim = 0,
                                                                 std::uint64_t seed = 7)
{
    const int f = featureDim > 0 ? featureDim : d;
    auto maps = std::make_shared<FittedFeatureMaps>();
    maps->model = QStringLiteral("test-model");
    maps->layers = layers;
    maps->heads = heads;
    maps->headDim = d;
    maps->featureDim = f;
    maps->window = 32;
    Rng rng(seed, RandomStream::RandomInput, 99);
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            FittedHeadMaps head =
                FittedHeadMaps::initial(f, d, seed + std::uint64_t(l * heads + h));
            for (MatrixD* weight : {&head.queryWeight, &head.keyWeight})
                for (Eigen::Index i = 0; i < weight->size(); ++i)
                    weight->data()[i] += 0.3 / std::sqrt(double(d)) * rng.normal();
            for (VectorD* bias : {&head.queryBias, &head.keyBias})
                for (Eigen::Index i = 0; i < bias->size(); ++i)
                    (*bias)[i] = 0.1 * rng.normal();
            head.windowLogWeight = 0.5 * rng.normal();
            maps->fitted[{l, h}] = head;
        }
    return maps;
}

// spec with random fitted maps for d-dimensional heads attached when its method needs them
// (unchanged otherwise).
inline ApproximationSpec withFittedMaps(ApproximationSpec spec, int d)
{
    if (methodInfo(spec.kind).needsFittedMaps)
        spec.fittedMaps = randomFittedMaps(d);
    return spec;
}

}  // namespace attnlab::test

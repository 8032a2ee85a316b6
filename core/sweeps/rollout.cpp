#include "sweeps/rollout.h"

#include "attention/approximation.h"
#include "attention/exact_attention.h"

namespace attnlab {

namespace {

// (A + I) / 2 for the heads' mean attention A of one layer, exact or (approx) the method's.
MatrixD layerMixing(const LayerQkv& layer, int layerIndex, int heads, const ExperimentSpec& spec,
                    bool approx)
{
    const Eigen::Index length = layer.q.rows();
    const int d = int(layer.q.cols()) / heads;
    const int group = heads / int(layer.k.cols() / d);  // query heads per key/value head
    const double scale = spec.resolvedScale(d);
    MatrixD mean = MatrixD::Zero(length, length);
    for (int h = 0; h < heads; ++h) {
        const Matrix<float> q = layer.q.middleCols(h * d, d);
        const Matrix<float> k = layer.k.middleCols(h / group * d, d);
        Matrix<float> p(length, length);
        if (approx) {
            const auto approximation = makeApproximation<float>(spec.approximation, d, length,
                                                                scale, HeadSite{layerIndex, h});
            approximation->fit(q, k, spec.causal);
            approximation->rows(q, k, spec.causal)->rows(0, p, nullptr);
        } else {
            exactAttentionRows<float>(q, k, scale, spec.causal, 0, p);
        }
        mean += p.cast<double>() / heads;
    }
    return (mean + MatrixD::Identity(length, length)) / 2;
}

}  // namespace

AttentionRollout attentionRollout(const ForwardResult& forward, int heads,
                                  const ExperimentSpec& spec)
{
    if (!spec.exactMethod)
        requireCausalForm(spec.approximation.kind, spec.causal, causalReason(spec.input));
    AttentionRollout rollout;
    rollout.layers = int(forward.layers.size());
    for (const bool approx : {false, true}) {
        if (approx && spec.exactMethod)
            break;
        MatrixD& product = approx ? rollout.approx : rollout.exact;
        for (int l = 0; l < rollout.layers; ++l) {
            const MatrixD mixing =
                layerMixing(forward.layers[std::size_t(l)], l, heads, spec, approx);
            product = product.size() == 0 ? mixing : MatrixD(mixing * product);
        }
    }
    return rollout;
}

}  // namespace attnlab

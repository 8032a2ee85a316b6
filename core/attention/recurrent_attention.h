#pragma once

#include "attention/approximation_spec.h"
#include "attention/methods.h"
#include "types.h"

#include <QString>

#include <memory>

namespace attnlab {

// One head's causal attention run as a recurrent network, a token at a time (docs/design.md
// section 2.6): consuming token i (1-based), it takes k_i and v_i into its state and gives the
// output y_i for the query q_i; the state is all it keeps of tokens 1..i. A method with a
// recurrent form (the registry's hasRecurrentForm) makes one (MethodInfo::makeRecurrence):
// a feature map keeps S_i and z_i (FeatureMapRecurrence), local attention the keys and values of
// its window (WindowRecurrence). Float, as the language models compute.
class RecurrentAttention {
public:
    virtual ~RecurrentAttention() = default;

    // Consumes the next token: q, k (d) and v (d_v) in, y_i (d_v) out. Returns false when the
    // output's denominator is not positive (possible only for maps whose features can be
    // negative); y_i is then numerator / denominator where that is finite, else 0, as the
    // parallel causal form gives it.
    virtual bool step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
                      const Eigen::Ref<const Eigen::RowVectorXf>& k,
                      const Eigen::Ref<const Eigen::RowVectorXf>& v,
                      Eigen::Ref<Eigen::RowVectorXf> y) = 0;

    // The floats the state holds now: C d_v + C for a feature map whatever i, 2 min(i, w) d for
    // a window of w keys.
    virtual double stateFloats() const = 0;
};

// Throws InputError when `method` has no recurrent form (the exact methods; the approximations
// whose registry entry says so), naming the methods that have one; the message begins with
// `prefix` ("--method scatterbrain: ").
void requireRecurrentForm(Method method, const QString& prefix = QString());

// The recurrent form of spec's method for d-dimensional queries, keys and values at scale s, at
// `site`: head h's random draws (the W the parallel form draws for head h), the fitted maps of
// (layer, head). Throws InputError naming the method when it has no recurrent form, and as
// makeFeatureMap does.
std::unique_ptr<RecurrentAttention> makeRecurrentAttention(const ApproximationSpec& spec, int d,
                                                           double scale, HeadSite site);
// The same at head h of layer 0.
inline std::unique_ptr<RecurrentAttention> makeRecurrentAttention(const ApproximationSpec& spec,
                                                                  int d, double scale, int head)
{
    return makeRecurrentAttention(spec, d, scale, HeadSite{0, head});
}

}  // namespace attnlab

#pragma once

#include "attention/approximation_spec.h"
#include "attention/feature_maps.h"
#include "attention/linear_attention.h"
#include "types.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace attnlab {

// A matrix an approximation drew at random besides W (Linformer's E and F), exported as
// <file>.npy.
struct DrawnMatrix {
    QString file;   // "projection_keys"
    QString title;  // "Linformer's key projection E"
    MatrixD matrix;
};

// One head's approximation of softmax attention, whatever its family: a feature map with linear
// attention, landmarks, projections along the sequence, a window, or a sum of them. Made for L
// positions of d-dimensional rows, with its random draws done; then fit to the data (what the
// method takes from Q and K themselves) and asked for O^ or for rows of P^.
template <typename T>
class Approximation {
public:
    virtual ~Approximation() = default;

    // Fits what the method takes from q and k (FAVOR++'s A*). Called before output() and rows()
    // for every new q and k; part of the method's timed work.
    virtual void fit(const Matrix<T>& /*q*/, const Matrix<T>& /*k*/, bool /*causal*/) {}

    // O^ (L x d_v) in the method's fast form, never through an L x L matrix, with the rows whose
    // denominator is not positive. Throws InputError for causal = true when the method has no
    // causal form.
    virtual ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                        bool causal, Eigen::Index chunk) const = 0;

    // The rows of P^ for q and k.
    virtual std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                                     bool causal) const = 0;

    // The feature map phi, for the methods that are one; null for the others.
    virtual const FeatureMap<T>* featureMap() const { return nullptr; }

    // The random projection W (m x d), empty where none is drawn.
    virtual MatrixD projection() const { return {}; }

    // The other matrices drawn at random, in the order they are exported.
    virtual std::vector<DrawnMatrix> drawnMatrices() const { return {}; }
};

// The approximation of spec (its method's class, from the registry) for L positions of
// d-dimensional rows at scale s, at `site`: head h's draws come from (spec.seed, h), fitted maps
// from spec.fittedMaps at (layer, head). Throws InputError as makeFeatureMap does.
template <typename T>
std::unique_ptr<Approximation<T>> makeApproximation(const ApproximationSpec& spec, int d,
                                                    Eigen::Index length, double scale,
                                                    HeadSite site);
// The same at head h of layer 0.
template <typename T>
std::unique_ptr<Approximation<T>> makeApproximation(const ApproximationSpec& spec, int d,
                                                    Eigen::Index length, double scale, int head = 0)
{
    return makeApproximation<T>(spec, d, length, scale, HeadSite{0, head});
}

// The m the approximation of spec runs with on L positions: spec.features, or fewer where its
// method cannot use that many (MethodInfo::sizeUsed: Nystrom takes at most L landmarks).
double featuresUsed(const ApproximationSpec& spec, Eigen::Index length);

// What the user is told when `method` runs with fewer than the m asked on L positions
// (featuresUsed), for those of `sizes` past it: "Nystrom takes at most L landmarks: m = 64, 128
// and 256 act as m = L = 50, with the same result and cost."; empty when none is past it.
QString sizePastLengthNote(Method method, const std::vector<int>& sizes, Eigen::Index length);

// Why attention is causal: the mask the user turned on (--causal, the Causal mask box), or a
// language model's own attention, causal as it was trained.
enum class CausalBecause { Mask, LanguageModel };

// Throws InputError naming the method when causal attention is asked of a method without a
// causal form; the message says how to get round it for the reason the attention is causal.
void requireCausalForm(Method method, bool causal, CausalBecause because = CausalBecause::Mask);

// The methods of a sweep that can serve its attention: without the methods that have no causal
// form when it is causal, each of them named in *skipped. When none has one they are all kept,
// so that the sweep refuses them with requireCausalForm's message.
std::vector<Method> skipMethodsWithoutCausalForm(const std::vector<Method>& methods, bool causal,
                                                 QStringList* skipped);

}  // namespace attnlab

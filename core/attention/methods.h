#pragma once

#include "types.h"

#include <QString>

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnlab {

// The method registry: every way the lab computes attention, named once. Menus, chart styles,
// the command line's --method and --methods, sessions, the timing and error sweeps all read the
// list below, so a new feature map is its class (core/attention/maps/) plus one line in
// methods.cpp.

// Every method, in the order lists show them.
enum class Method {
    ExactMaterialised,  // softmax attention with P formed in full (L x L), then P V
    ExactStreaming,     // softmax attention tiled with an online softmax, O(L d) memory
    FavorPositive,      // Performer's FAVOR+ positive random features
    FavorHyperbolic,    // FAVOR+ with the hyperbolic (cosh) estimator
    FavorTrig,          // trigonometric random Fourier features
    FavorRelu,          // Performer-ReLU (generalised attention)
    Elu,                // elu(x) + 1 of "Transformers are RNNs"
    Taylor2,            // degree-2 Taylor expansion of exp
};

// What a method's P^ is to softmax attention's P.
enum class MethodRole {
    Exact,        // it is P (computed another way)
    Estimate,     // an estimate of P: its error is the estimator's
    Replacement,  // another kernel that matches softmax only after training: its "error"
                  // measures a different kernel, not an estimator's variance
};

// A chart marker; the same shape for a method on every chart and in every legend.
enum class MarkerShape { Square, Circle, Diamond, Triangle, TriangleDown, Plus, Star, Cross };

// A numeric parameter of a method, with its range and default: the Method dock's control, the
// command line's option and the session's field of that name.
struct MethodParameter {
    QString option;  // on the command line: "features"
    QString field;   // in sessions and metrics.json: "features"
    QString description;  // the command line's help and the Method dock's tooltip
    double minimum;
    double maximum;
    double defaultValue;
    bool isSwitch = false;  // on or off (0 or 1): a check box and a flag without a value
};

// The largest m any method accepts.
constexpr int kMaxFeatures = 1 << 20;

// m, the number of random features (projection rows) of the maps that draw W.
const MethodParameter& featuresParameter();
// Performer-ReLU's epsilon, added to every feature.
const MethodParameter& reluEpsilonParameter();
// elu+1 on x' = sqrt(s) x instead of the raw row x.
const MethodParameter& eluOnScaledParameter();

template <typename T>
class FeatureMap;
struct FeatureMapSpec;

template <typename T>
using FeatureMapFactory = std::unique_ptr<FeatureMap<T>> (*)(const FeatureMapSpec& spec, int d,
                                                             double scale, int head);

struct MethodInfo {
    Method method;
    QString name;   // on the command line, in sessions and files: "favor-positive"
    QString title;  // for people: "FAVOR+ positive"
    QString summary;  // what it computes and what it costs, in a sentence or two (tooltips)
    MethodRole role;
    bool drawsProjection;   // random: draws W (m rows), so m, the projection and the seed matter
    bool canBeNegative;     // features can be negative: denominators can reach zero or below
    bool hasRecurrentForm;  // causal attention runs as an RNN over a state (the Stepper page)
    std::vector<const MethodParameter*> parameters;  // besides the input's scale and mask
    std::uint32_t color;  // 0xRRGGBB on every chart (Okabe-Ito and Tol's colour-blind palettes)
    MarkerShape marker;
    // The cost model: C, the length of phi(x) for d-dimensional rows and m projection rows; null
    // for the exact methods, which have no features.
    Eigen::Index (*featureCount)(int d, int m) = nullptr;
    FeatureMapFactory<float> makeFloat = nullptr;  // null for the exact methods
    FeatureMapFactory<double> makeDouble = nullptr;
    // The closed-form MSE of phi(x).phi(y) as an estimate of exp(x'.y') with iid rows of W, for
    // m features and the scaled rows x', y' (Lemma 2 of Choromanski et al. 2021); null where
    // the lab knows none. m may be any positive number (curves are drawn through it).
    double (*kernelMse)(double m, const VectorD& x, const VectorD& y) = nullptr;

    bool takes(const MethodParameter& parameter) const;
};

// Every method, in the order of Method.
const std::vector<MethodInfo>& methodRegistry();
// The approximations (every method but the exact ones), in registry order: the Method dock's
// list, the error sweep's methods and the approximations a session may name.
const std::vector<MethodInfo>& approximationMethods();
const MethodInfo& methodInfo(Method method);
bool isApproximation(Method method);

// The method called `name` (any method), or false.
bool parseMethod(const QString& name, Method* method);
// The approximation called `name`, or false (also for the exact methods' names).
bool parseApproximation(const QString& name, Method* method);
// "a|b|c": the names of `methods`, for help texts.
QString methodNames(const std::vector<MethodInfo>& methods, const QString& separator);

}  // namespace attnlab

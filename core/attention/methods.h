#pragma once

#include "types.h"

#include <QString>
#include <QStringList>

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnlab {

// The method registry: every way the lab computes attention, named once. Menus, chart styles,
// the command line's --method and --methods, sessions, the timing and error sweeps all read the
// list in methods.cpp, so a new method is its class (a feature map in core/attention/maps/, any
// other approximation in core/attention/approximations/) plus one line there.

// Every method, in the order lists show them.
enum class Method {
    ExactMaterialised,  // softmax attention with P formed in full (L x L), then P V
    ExactStreaming,     // softmax attention tiled with an online softmax, O(L d) memory
    FavorPositive,      // Performer's FAVOR+ positive random features
    FavorHyperbolic,    // FAVOR+ with the hyperbolic (cosh) estimator
    FavorPlusPlus,      // FAVOR++: optimal positive random features (Likhosherstov et al. 2022)
    FavorSharp,         // FAVOR#: FAVOR++ on queries and keys rescaled by Psi, Psi^-1 (SADERFs);
                        // command-line and session name "favor-dense"
    FavorTrig,          // trigonometric random Fourier features
    FavorRelu,          // Performer-ReLU (generalised attention)
    Elu,                // elu(x) + 1 of "Transformers are RNNs"
    Taylor2,            // degree-2 Taylor expansion of exp
    Nystrom,            // Nystromformer: landmarks and a pseudo-inverse
    Linformer,          // keys and values projected to m rows along the sequence
    Local,              // exact softmax inside a sliding window of w keys
    Scatterbrain,       // the window's exact entries plus FAVOR+ for the rest
    Hedgehog,           // feature maps fitted to a trained head (Zhang et al. 2024)
    HedgehogWindow,     // exact softmax in a sliding window, the fitted maps outside (LoLCATs)
};

// What a method's P^ is to softmax attention's P.
enum class MethodRole {
    Exact,        // it is P (computed another way)
    Estimate,     // an estimate of P: its error is the estimator's
    Replacement,  // another kernel that matches softmax only after training: its "error"
                  // measures a different kernel, not an estimator's variance
};

// "exact", "estimates softmax", "replaces softmax": what the window says beside a method's name.
QString methodRoleText(MethodRole role);

// A chart marker; the same shape for a method on every chart and in every legend.
enum class MarkerShape {
    Square,
    Circle,
    Diamond,
    Triangle,
    TriangleDown,
    Plus,
    Star,
    Cross,
    Pentagon,
    Hexagon,
    Bowtie,
    Hourglass,
    SixPointStar,
    FourPointStar,
    EightPointStar,
    Octagon,
};

// A parameter of a method, with its range and default: the Method dock's control, the command
// line's option and the session's field of that name. Its value is a double: a switch is 0 or 1,
// a choice the index of its name in `choices`.
struct MethodParameter {
    enum class Kind { Real, Integer, Switch, Choice };

    QString option;       // on the command line: "features"
    QString field;        // in sessions and metrics.json: "features"
    QString label;        // in the Method dock: "Features m"
    QString description;  // the command line's help and the Method dock's tooltip
    double minimum;
    double maximum;
    double defaultValue;
    Kind kind = Kind::Real;
    QStringList choices;  // Kind::Choice: the names of the values 0, 1, ...

    // The value `text` names on the command line or in a session (a number, or for a choice
    // one of its names), in range; false when it names none.
    bool parse(const QString& text, double* value) const;
    // How a value is written: a choice's name, an integer without decimals, else a number.
    QString format(double value) const;
};

// The largest m any method accepts.
constexpr int kMaxFeatures = 1 << 20;

// m: the random features of the maps that draw W, Nystrom's landmarks, Linformer's projected
// length, Scatterbrain's low-rank part.
const MethodParameter& featuresParameter();
// w, the keys each query sees exactly (local attention, Scatterbrain's sparse part).
const MethodParameter& windowParameter();
// Performer-ReLU's epsilon, added to every feature.
const MethodParameter& reluEpsilonParameter();
// elu+1 on x' = sqrt(s) x instead of the raw row x.
const MethodParameter& eluOnScaledParameter();
// FAVOR++: a fixed A instead of the optimal A* of the data (and the fixed A itself).
const MethodParameter& favorFixedAParameter();
const MethodParameter& favorAParameter();
// Nystrom: the pseudo-inverse of the landmarks' attention, iterative or exact, and the number of
// iterations of the iterative one.
const MethodParameter& pinvParameter();
const MethodParameter& pinvIterationsParameter();

// Every parameter of any method, in the order the Method dock and the sessions list them.
const std::vector<const MethodParameter*>& methodParameters();

// The shape of one head's attention, for a method's cost model: L queries and keys of d entries,
// values of d_v, m = the features parameter, w = the window, the engine's threads.
struct CostShape {
    double length = 0;
    double d = 64;
    double dv = 64;
    double m = 64;
    double window = 32;
    bool causal = false;
    double threads = 1;
};

template <typename T>
class FeatureMap;
template <typename T>
class Approximation;
class RecurrentAttention;
struct ApproximationSpec;
struct HeadSite;

// The factories take the head's site (its layer and query head): random draws come from the
// head, fitted parameters from both.
template <typename T>
using FeatureMapFactory = std::unique_ptr<FeatureMap<T>> (*)(const ApproximationSpec& spec, int d,
                                                             double scale, HeadSite site);
// An approximation for L positions of d-dimensional rows (its random draws made).
template <typename T>
using ApproximationFactory = std::unique_ptr<Approximation<T>> (*)(const ApproximationSpec& spec,
                                                                   int d, Eigen::Index length,
                                                                   double scale, HeadSite site);
// A head's recurrent form for d-dimensional queries, keys and values (its random draws made).
using RecurrenceFactory = std::unique_ptr<RecurrentAttention> (*)(const ApproximationSpec& spec,
                                                                  int d, double scale,
                                                                  HeadSite site);

struct MethodInfo {
    Method method = Method::ExactStreaming;
    QString name{};     // on the command line, in sessions and files: "favor-positive"
    QString title{};    // for people: "FAVOR+ positive"
    QString summary{};  // what it computes and what it costs, in a sentence or two (tooltips)
    MethodRole role = MethodRole::Exact;
    bool isRandom = false;         // draws random numbers: the seed matters, sweeps take seeds
    bool drawsProjection = false;  // draws W (m x d rows): the projection and row norms matter
    bool canBeNegative = false;    // P^ (or its features) can be negative: denominators too
    bool hasCausalForm = true;     // defined with the causal mask
    // Causal attention runs as an RNN over a state, a token at a time (makeRecurrence): the
    // feature maps' S_i and z_i (which the Stepper shows), local attention's window of keys.
    bool hasRecurrentForm = false;
    bool hasKernel = true;  // A^_ij is defined entry by entry (its MSE against A)
    // Runs on feature maps fitted to a model's heads (ApproximationSpec::fittedMaps, per layer and
    // head: `fit-features`, --feature-map), and refuses to run without them.
    bool needsFittedMaps = false;
    QString causalNote{};  // said with every causal result (what causal mode changes)
    std::vector<const MethodParameter*> parameters{};  // besides the input's scale and mask
    // The parameter that trades cost for accuracy, which the error sweep's "m" axis varies (m,
    // or w for local attention); null when there is none.
    const MethodParameter* size = nullptr;
    std::uint32_t color = 0;  // 0xRRGGBB on every chart (Okabe-Ito and Tol's palettes)
    MarkerShape marker = MarkerShape::Square;
    // The cost model: the flops of one head's output and the floats it needs besides Q, K, V
    // and O, as the timing sweep counts them (docs/design.md section 5).
    double (*flops)(const CostShape& shape) = nullptr;
    double (*workingSetFloats)(const CostShape& shape) = nullptr;
    // The size (m) it runs with for m asked and L positions, where that can be less than m
    // (Nystrom takes at most L landmarks); null where it always runs with the m asked.
    double (*sizeUsed)(double m, double length) = nullptr;
    // C, the length of phi(x) for d-dimensional rows and m projection rows; null for the methods
    // that have no features.
    Eigen::Index (*featureCount)(int d, int m) = nullptr;
    FeatureMapFactory<float> makeMapFloat = nullptr;  // null where there are no features
    FeatureMapFactory<double> makeMapDouble = nullptr;
    ApproximationFactory<float> makeFloat = nullptr;  // null for the exact methods
    ApproximationFactory<double> makeDouble = nullptr;
    RecurrenceFactory makeRecurrence = nullptr;  // set exactly when hasRecurrentForm
    // The closed-form MSE of phi(x).phi(y) as an estimate of exp(x'.y') with iid rows of W, for
    // m features and the scaled rows x', y' (Lemma 2 of Choromanski et al. 2021, and its
    // generalisation for FAVOR++); null where the lab knows none. m may be any positive number
    // (curves are drawn through it). parameterA is FAVOR++'s A (ignored by the others).
    double (*kernelMse)(double m, const VectorD& x, const VectorD& y, double parameterA) = nullptr;

    bool takes(const MethodParameter& parameter) const;
    bool hasFeatures() const { return featureCount != nullptr; }
};

// Every method, in the order of Method.
const std::vector<MethodInfo>& methodRegistry();
// The approximations (every method but the exact ones), in registry order: the Method dock's
// list, the error sweep's methods and the approximations a session may name.
const std::vector<MethodInfo>& approximationMethods();
// The approximations with a feature map phi (linear attention; the Stepper's recurrent form), in
// registry order.
const std::vector<MethodInfo>& featureMapMethods();
const MethodInfo& methodInfo(Method method);
bool isApproximation(Method method);

// The method called `name` (any method), or false.
bool parseMethod(const QString& name, Method* method);
// The approximation called `name`, or false (also for the exact methods' names).
bool parseApproximation(const QString& name, Method* method);
// "a|b|c": the names of `methods`, for help texts.
QString methodNames(const std::vector<MethodInfo>& methods, const QString& separator);

// The approximations of the registry without a causal form (hasCausalForm false), in its order:
// what tooltips and help texts name when they say which methods cannot run causally.
std::vector<MethodInfo> methodsWithoutCausalForm();

// The titles of `methods` as a sentence lists them: "Nyström, Linformer (random E, F) and
// FAVOR#".
QString methodTitleList(const std::vector<MethodInfo>& methods);

}  // namespace attnlab

#include "attention/methods.h"

#include "attention/approximation.h"
#include "attention/approximations/feature_map_attention.h"
#include "attention/approximations/feature_map_recurrence.h"
#include "attention/approximations/linformer_attention.h"
#include "attention/approximations/local_attention.h"
#include "attention/approximations/nystrom_attention.h"
#include "attention/approximations/scatterbrain_attention.h"
#include "attention/approximations/favor_sharp_attention.h"
#include "attention/approximations/hedgehog_window_attention.h"
#include "attention/approximations/window_recurrence.h"
#include "attention/exact_attention.h"
#include "attention/maps/elu_features.h"
#include "attention/maps/hedgehog_features.h"
#include "attention/maps/hyperbolic_random_features.h"
#include "attention/maps/optimal_positive_random_features.h"
#include "attention/maps/positive_random_features.h"
#include "attention/maps/relu_random_features.h"
#include "attention/maps/taylor2_features.h"
#include "attention/maps/trigonometric_random_features.h"

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

// The cost model of exact attention: 4 L^2 d flops (the two products; half of them when
// causal), materialised with P (L^2 floats), streaming with a tile of scores, its output
// accumulator, running maxima and sums per thread.
double exactFlops(const CostShape& s)
{
    return (s.causal ? 1.0 : 2.0) * s.length * s.length * (s.d + s.dv);
}

double materialisedWorkingSet(const CostShape& s)
{
    return s.length * s.length;
}

double streamingWorkingSet(const CostShape& s)
{
    constexpr double tile = kStreamingQueryTile, keys = kStreamingKeyTile;
    return s.threads * (tile * keys + tile * s.dv + 3 * tile);
}

template <template <typename> class Map, typename T>
std::unique_ptr<FeatureMap<T>> makeMap(const ApproximationSpec& spec, int d, double scale,
                                       HeadSite site)
{
    return std::make_unique<Map<T>>(spec, d, scale, site);
}

template <template <typename> class Map, typename T>
std::unique_ptr<Approximation<T>> makeMapAttention(const ApproximationSpec& spec, int d,
                                                   Eigen::Index /*length*/, double scale,
                                                   HeadSite site)
{
    return std::make_unique<FeatureMapAttention<T>>(std::make_unique<Map<T>>(spec, d, scale, site));
}

// The recurrent form of a feature map: its S_i and z_i (values of d entries, as a model's heads).
template <template <typename> class Map>
std::unique_ptr<RecurrentAttention> makeMapRecurrence(const ApproximationSpec& spec, int d,
                                                      double scale, HeadSite site)
{
    auto phi = std::make_unique<Map<float>>(spec, d, scale, site);
    return std::make_unique<FeatureMapRecurrence>(std::move(phi), d);
}

// Local attention's recurrent form: the sliding cache of its window.
std::unique_ptr<RecurrentAttention> makeWindowRecurrence(const ApproximationSpec& spec, int d,
                                                         double scale, HeadSite /*site*/)
{
    return std::make_unique<WindowRecurrence>(Eigen::Index(spec.value(windowParameter())), d, d,
                                              scale);
}

// The cost model of linear attention with a map of C features: the projection W x' of queries
// and keys (2 L r d flops a side, with the r rows the map says it projects: m for the maps that
// draw W, d_f for the fitted maps; none for elu+1 and Taylor2) and the two products with the
// features (4 L C d_v).
template <template <typename> class Map>
double projectedRows(const CostShape& s)
{
    if constexpr (requires { Map<float>::projectedRows(0, 0); })
        return double(Map<float>::projectedRows(int(s.d), int(s.m)));
    return 0.0;
}

template <template <typename> class Map>
double featureMapFlops(const CostShape& s)
{
    const double features = double(Map<float>::featureCount(int(s.d), int(s.m)));
    return 4.0 * s.length * projectedRows<Map>(s) * s.d + 4.0 * s.length * features * s.dv;
}

template <template <typename> class Map>
double featureMapWorkingSet(const CostShape& s)
{
    return linearAttentionWorkingSetFloats(s, double(Map<float>::featureCount(int(s.d), int(s.m))),
                                           projectedRows<Map>(s));
}

// The registry line of a feature map: its class gives the cost model, the factories and, where
// it knows one, the closed-form kernel MSE.
template <template <typename> class Map>
MethodInfo featureMap(MethodInfo info)
{
    info.featureCount = &Map<float>::featureCount;
    info.makeMapFloat = &makeMap<Map, float>;
    info.makeMapDouble = &makeMap<Map, double>;
    info.makeFloat = &makeMapAttention<Map, float>;
    info.makeDouble = &makeMapAttention<Map, double>;
    info.flops = &featureMapFlops<Map>;
    info.workingSetFloats = &featureMapWorkingSet<Map>;
    if (info.hasRecurrentForm)
        info.makeRecurrence = &makeMapRecurrence<Map>;
    if constexpr (requires { &Map<double>::kernelMse; })
        info.kernelMse = &Map<double>::kernelMse;
    return info;
}

template <template <typename> class Method, typename T>
std::unique_ptr<Approximation<T>> makeAttention(const ApproximationSpec& spec, int d,
                                                Eigen::Index length, double scale, HeadSite site)
{
    return std::make_unique<Method<T>>(spec, d, length, scale, site);
}

// The registry line of an approximation that is not a feature map: its class gives the cost
// model and the factories.
template <template <typename> class Method>
MethodInfo approximation(MethodInfo info)
{
    info.makeFloat = &makeAttention<Method, float>;
    info.makeDouble = &makeAttention<Method, double>;
    info.flops = &Method<float>::flops;
    info.workingSetFloats = &Method<float>::workingSetFloats;
    return info;
}

}  // namespace

QString methodRoleText(MethodRole role)
{
    switch (role) {
        case MethodRole::Exact: return QStringLiteral("exact");
        case MethodRole::Estimate: return QStringLiteral("estimates softmax");
        case MethodRole::Replacement: return QStringLiteral("replaces softmax");
    }
    return {};
}

bool MethodParameter::parse(const QString& text, double* value) const
{
    double parsed = 0;
    if (kind == Kind::Choice) {
        const qsizetype index = choices.indexOf(text);
        if (index < 0)
            return false;
        parsed = double(index);
    } else {
        bool ok = false;
        parsed = text.toDouble(&ok);
        if (!ok || !std::isfinite(parsed))
            return false;
        if ((kind == Kind::Integer || kind == Kind::Switch) && parsed != std::floor(parsed))
            return false;
    }
    if (parsed < minimum || parsed > maximum)
        return false;
    *value = parsed;
    return true;
}

QString MethodParameter::format(double value) const
{
    if (kind == Kind::Choice)
        return choices.value(qsizetype(value));
    if (kind != Kind::Real)
        return QString::number(qint64(value));
    return QString::number(value, 'g', 6);
}

const MethodParameter& featuresParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("features"),
        QStringLiteral("features"),
        QStringLiteral("Features m"),
        QStringLiteral("m: the random features, Nystrom's landmarks, Linformer's projected length "
                       "or Scatterbrain's low-rank features (default 64)."),
        1,
        double(kMaxFeatures),
        64,
        MethodParameter::Kind::Integer,
        {}};
    return parameter;
}

const MethodParameter& windowParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("window"),
        QStringLiteral("window"),
        QStringLiteral("Window w"),
        QStringLiteral("local, scatterbrain, hedgehog-window: w, the keys each query sees "
                       "exactly: the w latest keys j <= i when causal, else w keys centred on i "
                       "(default 32)."),
        1,
        double(kMaxFeatures),
        32,
        MethodParameter::Kind::Integer,
        {}};
    return parameter;
}

const MethodParameter& reluEpsilonParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("relu-epsilon"),
        QStringLiteral("relu_epsilon"),
        QStringLiteral("ReLU epsilon"),
        QStringLiteral("favor-relu: epsilon added to every feature, so that no denominator is "
                       "zero (default 0.001)."),
        0,
        1,
        1e-3,
        MethodParameter::Kind::Real,
        {}};
    return parameter;
}

const MethodParameter& eluOnScaledParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("elu-on-scaled"),
        QStringLiteral("elu_on_scaled"),
        QStringLiteral("elu+1 on x' = sqrt(s) x"),
        QStringLiteral("elu: apply elu+1 to x' = sqrt(s) x instead of the raw row."),
        0,
        1,
        0,
        MethodParameter::Kind::Switch,
        {}};
    return parameter;
}

const MethodParameter& favorFixedAParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("favor-fixed-a"),
        QStringLiteral("favor_fixed_a"),
        QStringLiteral("Fixed A"),
        QStringLiteral("favor-plusplus: use the fixed A of --favor-a instead of the optimal A* "
                       "computed from every query and key (causal attention always uses the "
                       "fixed A: A* would look ahead)."),
        0,
        1,
        0,
        MethodParameter::Kind::Switch,
        {}};
    return parameter;
}

const MethodParameter& favorAParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("favor-a"),
        QStringLiteral("favor_a"),
        QStringLiteral("A"),
        QStringLiteral("favor-plusplus: the fixed A of exp(A |w|^2 + B w.x' - |x'|^2 / 2), "
                       "A < 1/8; A = 0 is FAVOR+ positive (default -0.1)."),
        -8,
        0.124,
        -0.1,
        MethodParameter::Kind::Real,
        {}};
    return parameter;
}

const MethodParameter& pinvParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("pinv"),
        QStringLiteral("pinv"),
        QStringLiteral("Pseudo-inverse"),
        QStringLiteral("nystrom: the pseudo-inverse of the landmarks' attention: the paper's "
                       "iterative method or the exact one, by SVD (default iterative)."),
        0,
        1,
        0,
        MethodParameter::Kind::Choice,
        {QStringLiteral("iterative"), QStringLiteral("exact")}};
    return parameter;
}

const MethodParameter& pinvIterationsParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("pinv-iterations"),
        QStringLiteral("pinv_iterations"),
        QStringLiteral("Iterations"),
        QStringLiteral("nystrom: iterations of the iterative pseudo-inverse (default 6, as in "
                       "the paper)."),
        1,
        100,
        6,
        MethodParameter::Kind::Integer,
        {}};
    return parameter;
}

const std::vector<const MethodParameter*>& methodParameters()
{
    static const std::vector<const MethodParameter*> parameters = {
        &featuresParameter(),    &windowParameter(),      &favorFixedAParameter(),
        &favorAParameter(),      &pinvParameter(),        &pinvIterationsParameter(),
        &reluEpsilonParameter(), &eluOnScaledParameter(),
    };
    return parameters;
}

bool MethodInfo::takes(const MethodParameter& parameter) const
{
    return std::find(parameters.begin(), parameters.end(), &parameter) != parameters.end();
}

const std::vector<MethodInfo>& methodRegistry()
{
    using enum Method;
    using enum MethodRole;
    using enum MarkerShape;
    const MethodParameter* m = &featuresParameter();
    const MethodParameter* w = &windowParameter();
    static const std::vector<MethodInfo> registry = {
        {.method = ExactMaterialised,
         .name = QStringLiteral("exact-materialised"),
         .title = QStringLiteral("Exact, materialised"),
         .summary = QStringLiteral("Exact softmax attention that forms the whole L x L matrix "
                                   "P, then P V: L^2 memory, 4 L^2 d flops."),
         .role = Exact,
         .color = 0xd55e00,
         .marker = Square,
         .flops = &exactFlops,
         .workingSetFloats = &materialisedWorkingSet},
        {.method = ExactStreaming,
         .name = QStringLiteral("exact-streaming"),
         .title = QStringLiteral("Exact, streaming"),
         .summary = QStringLiteral("Exact softmax attention in tiles with an online softmax: the "
                                   "same 4 L^2 d flops, but memory that grows only like L d."),
         .role = Exact,
         .color = 0x000000,
         .marker = Circle,
         .flops = &exactFlops,
         .workingSetFloats = &streamingWorkingSet},
        featureMap<PositiveRandomFeatures>(
            {.method = FavorPositive,
             .name = QStringLiteral("favor-positive"),
             .title = QStringLiteral("FAVOR+ positive"),
             .summary = QStringLiteral("Performer's positive random features m^-1/2 exp(W x' - "
                                       "|x'|^2/2): unbiased for exp(x'.y'), never negative; m "
                                       "features, time and memory linear in L."),
             .role = Estimate,
             .isRandom = true,
             .drawsProjection = true,
             .hasRecurrentForm = true,
             .parameters = {m},
             .size = m,
             .color = 0x0072b2,
             .marker = Diamond}),
        featureMap<HyperbolicRandomFeatures>(
            {.method = FavorHyperbolic,
             .name = QStringLiteral("favor-hyperbolic"),
             .title = QStringLiteral("FAVOR+ hyperbolic"),
             .summary = QStringLiteral("The hyperbolic (cosh) form of the positive features: "
                                       "lower variance, 2m features, so about twice the work of "
                                       "FAVOR+ positive."),
             .role = Estimate,
             .isRandom = true,
             .drawsProjection = true,
             .hasRecurrentForm = true,
             .parameters = {m},
             .size = m,
             .color = 0x56b4e9,
             .marker = Triangle}),
        featureMap<OptimalPositiveRandomFeatures>(
            {.method = FavorPlusPlus,
             .name = QStringLiteral("favor-plusplus"),
             .title = QStringLiteral("FAVOR++"),
             .summary = QStringLiteral("Optimal positive random features (Likhosherstov et al. "
                                       "2022): (1 - 4A)^(d/4) m^-1/2 exp(A |w|^2 + sqrt(1 - 4A) "
                                       "w.x' - |x'|^2/2) with the A* that minimises the variance "
                                       "over the sequence's own queries and keys; unbiased, "
                                       "never negative, m features."),
             .role = Estimate,
             .isRandom = true,
             .drawsProjection = true,
             .hasRecurrentForm = true,
             .causalNote = QStringLiteral("FAVOR++ causal: the optimal A* is computed from every "
                                          "query and key, so a query would see later keys "
                                          "through it; causal attention uses the fixed A instead "
                                          "(Method dock: A; --favor-a)."),
             .parameters = {m, &favorFixedAParameter(), &favorAParameter()},
             .size = m,
             .color = 0x332288,
             .marker = Pentagon}),
        approximation<FavorSharpAttention>(
            {.method = FavorSharp,
             .name = QStringLiteral("favor-dense"),
             .title = QStringLiteral("FAVOR#"),
             .summary = QStringLiteral("FAVOR# with simplified asymmetric dense-exponential "
                                       "features, SADERFs (Likhosherstov et al. 2023; "
                                       "command-line name favor-dense): FAVOR++ on "
                                       "queries and keys rescaled per coordinate, Psi x' and "
                                       "Psi^-1 y' with psi_l = (sum k_l^2 / sum q_l^2)^(1/4), "
                                       "which keeps every q.k; unbiased, never negative, m "
                                       "features. Psi and A* look at every query and key: no "
                                       "causal form."),
             .role = Estimate,
             .isRandom = true,
             .drawsProjection = true,
             .hasCausalForm = false,
             .parameters = {m},
             .size = m,
             .color = 0x6699cc,
             .marker = FourPointStar}),
        featureMap<TrigonometricRandomFeatures>(
            {.method = FavorTrig,
             .name = QStringLiteral("favor-trig"),
             .title = QStringLiteral("Trigonometric (random Fourier)"),
             .summary = QStringLiteral("Random Fourier features m^-1/2 exp(|x'|^2/2) [cos W x', "
                                       "sin W x']: unbiased but can be negative; 2m features, "
                                       "linear in L."),
             .role = Estimate,
             .isRandom = true,
             .drawsProjection = true,
             .canBeNegative = true,
             .hasRecurrentForm = true,
             .parameters = {m},
             .size = m,
             .color = 0x009e73,
             .marker = TriangleDown}),
        featureMap<ReluRandomFeatures>(
            {.method = FavorRelu,
             .name = QStringLiteral("favor-relu"),
             .title = QStringLiteral("Performer-ReLU"),
             .summary = QStringLiteral("ReLU(W x') + epsilon: m features, linear in L; a "
                                       "different kernel, not an estimate of softmax."),
             .role = Replacement,
             .isRandom = true,
             .drawsProjection = true,
             .hasRecurrentForm = true,
             .parameters = {m, &reluEpsilonParameter()},
             .size = m,
             .color = 0xcc79a7,
             .marker = Plus}),
        featureMap<EluFeatures>(
            {.method = Elu,
             .name = QStringLiteral("elu"),
             .title = QStringLiteral("elu+1 linear attention"),
             .summary = QStringLiteral("phi(x) = elu(x) + 1 (Transformers are RNNs): d features, "
                                       "no random projection; a different kernel, not an "
                                       "estimate of softmax."),
             .role = Replacement,
             .hasRecurrentForm = true,
             .parameters = {&eluOnScaledParameter()},
             .color = 0xe69f00,
             .marker = Star}),
        featureMap<Taylor2Features>(
            {.method = Taylor2,
             .name = QStringLiteral("taylor2"),
             .title = QStringLiteral("Degree-2 Taylor"),
             .summary = QStringLiteral("Exact for 1 + t + t^2/2 with t = x'.y': 1 + d + d(d+1)/2 "
                                       "features, no randomness; can be negative."),
             .role = Estimate,
             .canBeNegative = true,
             .hasRecurrentForm = true,
             .color = 0x882255,
             .marker = Cross}),
        approximation<NystromAttention>(
            {.method = Nystrom,
             .name = QStringLiteral("nystrom"),
             .title = QStringLiteral("Nystr\u00f6m"),
             .summary = QStringLiteral(
                 "Nystromformer (Xiong et al. 2021): m landmarks, the "
                 "segment means of Q and K; P^ = softmax(Q K~^T) "
                 "pinv(softmax(Q~ K~^T)) softmax(Q~ K^T), about "
                 "4 L m (d + d_v) + 48 m^3 flops; no features, no causal form; entries can be "
                 "negative."),
             .role = Estimate,
             .canBeNegative = true,
             .hasCausalForm = false,
             .hasKernel = false,
             .parameters = {m, &pinvParameter(), &pinvIterationsParameter()},
             .size = m,
             .color = 0x44aa99,
             .marker = Hexagon,
             .sizeUsed = &NystromAttention<float>::landmarks}),
        approximation<LinformerAttention>(
            {.method = Linformer,
             .name = QStringLiteral("linformer"),
             .title = QStringLiteral("Linformer (random E, F)"),
             .summary = QStringLiteral("Linformer (Wang et al. 2020) with untrained Gaussian "
                                       "projections E, F (m x L) of the keys and values: "
                                       "P^ = softmax(Q (E K)^T) F, about 8 L m d flops. The paper "
                                       "learns E and F; random ones show the Johnson-"
                                       "Lindenstrauss part only. No features, no causal form."),
             .role = Estimate,
             .isRandom = true,
             .canBeNegative = true,
             .hasCausalForm = false,
             .hasKernel = false,
             .parameters = {m},
             .size = m,
             .color = 0x999933,
             .marker = Bowtie}),
        approximation<LocalAttention>(
            {.method = Local,
             .name = QStringLiteral("local"),
             .title = QStringLiteral("Local window"),
             .summary = QStringLiteral("Exact softmax over a window of w keys (the w latest when "
                                       "causal, else centred on the query), nothing outside it: "
                                       "4 L w d flops; no features. Token by token it keeps the "
                                       "keys and values of its window."),
             .role = Estimate,
             .hasRecurrentForm = true,
             .parameters = {w},
             .size = w,
             .color = 0xaa4499,
             .marker = Hourglass,
             .makeRecurrence = &makeWindowRecurrence}),
        approximation<ScatterbrainAttention>(
            {.method = Scatterbrain,
             .name = QStringLiteral("scatterbrain"),
             .title = QStringLiteral("Scatterbrain"),
             .summary = QStringLiteral("Sparse plus low-rank (Chen et al. 2021): exp(q'.k') "
                                       "exactly inside the window of w keys, FAVOR+ positive "
                                       "features for every other key, without counting the "
                                       "window twice; about 4 L m (d + d_v) + "
                                       "2 L w (d + d_v + m) flops."),
             .role = Estimate,
             .isRandom = true,
             .drawsProjection = true,
             .parameters = {m, w},
             .size = m,
             .color = 0x117733,
             .marker = SixPointStar}),
        featureMap<HedgehogFeatures>(
            {.method = Hedgehog,
             .name = QStringLiteral("hedgehog"),
             .title = QStringLiteral("Hedgehog (fitted maps)"),
             .summary = QStringLiteral("Feature maps fitted to each head of a trained model "
                                       "(Zhang et al. 2024): phi_q(x) = [exp(W_q x' + b_q), "
                                       "exp(-W_q x' - b_q)] and phi_k with its own W_k, b_k, "
                                       "fitted so that linear attention's rows match the "
                                       "model's softmax rows (fit-features); 2 d_f features, "
                                       "linear in L. Needs the fitted maps (--feature-map)."),
             .role = Replacement,
             .hasRecurrentForm = true,
             .needsFittedMaps = true,
             .color = 0xee3377,
             .marker = EightPointStar}),
        approximation<HedgehogWindowAttention>(
            {.method = HedgehogWindow,
             .name = QStringLiteral("hedgehog-window"),
             .title = QStringLiteral("Hedgehog + window (LoLCATs)"),
             .summary = QStringLiteral("Exact softmax inside a sliding window of w keys and the "
                                       "fitted Hedgehog maps, weighted by a fitted gamma, for "
                                       "every other key, under one normaliser (LoLCATs, Zhang "
                                       "et al. 2025); token by token it keeps the window's keys "
                                       "and values and the state of the keys that left it. "
                                       "Needs the fitted maps (--feature-map)."),
             .role = Replacement,
             .hasRecurrentForm = true,
             .needsFittedMaps = true,
             .parameters = {w},
             .size = w,
             .color = 0x994455,
             .marker = Octagon,
             .makeRecurrence = &makeHedgehogWindowRecurrence}),
    };
    return registry;
}

const std::vector<MethodInfo>& approximationMethods()
{
    static const std::vector<MethodInfo> approximations = [] {
        std::vector<MethodInfo> list;
        for (const MethodInfo& info : methodRegistry())
            if (info.role != MethodRole::Exact)
                list.push_back(info);
        return list;
    }();
    return approximations;
}

const std::vector<MethodInfo>& featureMapMethods()
{
    static const std::vector<MethodInfo> maps = [] {
        std::vector<MethodInfo> list;
        for (const MethodInfo& info : approximationMethods())
            if (info.hasFeatures())
                list.push_back(info);
        return list;
    }();
    return maps;
}

const MethodInfo& methodInfo(Method method)
{
    for (const MethodInfo& info : methodRegistry())
        if (info.method == method)
            return info;
    Q_UNREACHABLE();
}

bool isApproximation(Method method)
{
    return methodInfo(method).role != MethodRole::Exact;
}

namespace {

bool parseFrom(const std::vector<MethodInfo>& methods, const QString& name, Method* method)
{
    for (const MethodInfo& info : methods) {
        if (info.name == name) {
            *method = info.method;
            return true;
        }
    }
    return false;
}

}  // namespace

bool parseMethod(const QString& name, Method* method)
{
    return parseFrom(methodRegistry(), name, method);
}

bool parseApproximation(const QString& name, Method* method)
{
    return parseFrom(approximationMethods(), name, method);
}

QString methodNames(const std::vector<MethodInfo>& methods, const QString& separator)
{
    QStringList names;
    for (const MethodInfo& info : methods)
        names.append(info.name);
    return names.join(separator);
}

std::vector<MethodInfo> methodsWithoutCausalForm()
{
    std::vector<MethodInfo> methods;
    for (const MethodInfo& info : approximationMethods())
        if (!info.hasCausalForm)
            methods.push_back(info);
    return methods;
}

QString methodTitleList(const std::vector<MethodInfo>& methods)
{
    QStringList titles;
    for (const MethodInfo& info : methods)
        titles.append(info.title);
    if (titles.size() < 2)
        return titles.join(QString());
    const QString last = titles.takeLast();
    return titles.join(QStringLiteral(", ")) + QStringLiteral(" and ") + last;
}

}  // namespace attnlab

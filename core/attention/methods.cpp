#include "attention/methods.h"

#include "attention/maps/elu_features.h"
#include "attention/maps/hyperbolic_random_features.h"
#include "attention/maps/positive_random_features.h"
#include "attention/maps/relu_random_features.h"
#include "attention/maps/taylor2_features.h"
#include "attention/maps/trigonometric_random_features.h"

#include <QStringList>

#include <algorithm>

namespace attnlab {

namespace {

template <template <typename> class Map, typename T>
std::unique_ptr<FeatureMap<T>> makeMap(const FeatureMapSpec& spec, int d, double scale, int head)
{
    return std::make_unique<Map<T>>(spec, d, scale, head);
}

// The registry line of a feature map: its class gives the cost model and the factories.
template <template <typename> class Map>
MethodInfo featureMap(MethodInfo info)
{
    info.featureCount = &Map<float>::featureCount;
    info.makeFloat = &makeMap<Map, float>;
    info.makeDouble = &makeMap<Map, double>;
    if constexpr (requires { &Map<double>::kernelMse; })
        info.kernelMse = &Map<double>::kernelMse;
    return info;
}

}  // namespace

const MethodParameter& featuresParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("features"), QStringLiteral("features"),
        QStringLiteral("m, the number of random features (default 64)."), 1,
        double(kMaxFeatures), 64};
    return parameter;
}

const MethodParameter& reluEpsilonParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("relu-epsilon"), QStringLiteral("relu_epsilon"),
        QStringLiteral("favor-relu: epsilon added to every feature, so that no denominator is "
                       "zero (default 0.001)."),
        0, 1, 1e-3};
    return parameter;
}

const MethodParameter& eluOnScaledParameter()
{
    static const MethodParameter parameter{
        QStringLiteral("elu-on-scaled"), QStringLiteral("elu_on_scaled"),
        QStringLiteral("elu: apply elu+1 to x' = sqrt(s) x instead of the raw row."),
        0, 1, 0, true};
    return parameter;
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
    // name, title, summary, role, draws W, negative features, recurrent form, parameters,
    // colour, marker
    static const std::vector<MethodInfo> registry = {
        {ExactMaterialised, QStringLiteral("exact-materialised"),
         QStringLiteral("Exact, materialised"),
         QStringLiteral("Exact softmax attention that forms the whole L x L matrix P, then P V: "
                        "L^2 memory, 4 L^2 d flops."),
         Exact, false, false, false, {}, 0xd55e00, Square},
        {ExactStreaming, QStringLiteral("exact-streaming"), QStringLiteral("Exact, streaming"),
         QStringLiteral("Exact softmax attention in tiles with an online softmax: the same "
                        "4 L^2 d flops, but memory that grows only like L d."),
         Exact, false, false, false, {}, 0x000000, Circle},
        featureMap<PositiveRandomFeatures>(
            {FavorPositive, QStringLiteral("favor-positive"), QStringLiteral("FAVOR+ positive"),
             QStringLiteral("Performer's positive random features m^-1/2 exp(W x' - |x'|^2/2): "
                            "unbiased for exp(x'.y'), never negative; m features, time and "
                            "memory linear in L."),
             Estimate, true, false, true, {m}, 0x0072b2, Diamond}),
        featureMap<HyperbolicRandomFeatures>(
            {FavorHyperbolic, QStringLiteral("favor-hyperbolic"),
             QStringLiteral("FAVOR+ hyperbolic"),
             QStringLiteral("The hyperbolic (cosh) form of the positive features: lower "
                            "variance, 2m features, so about twice the work of FAVOR+ "
                            "positive."),
             Estimate, true, false, true, {m}, 0x56b4e9, Triangle}),
        featureMap<TrigonometricRandomFeatures>(
            {FavorTrig, QStringLiteral("favor-trig"),
             QStringLiteral("Trigonometric (random Fourier)"),
             QStringLiteral("Random Fourier features m^-1/2 exp(|x'|^2/2) [cos W x', sin W x']: "
                            "unbiased but can be negative; 2m features, linear in L."),
             Estimate, true, true, true, {m}, 0x009e73, TriangleDown}),
        featureMap<ReluRandomFeatures>(
            {FavorRelu, QStringLiteral("favor-relu"), QStringLiteral("Performer-ReLU"),
             QStringLiteral("ReLU(W x') + epsilon: m features, linear in L; a different kernel, "
                            "not an estimate of softmax."),
             Replacement, true, false, true, {m, &reluEpsilonParameter()}, 0xcc79a7, Plus}),
        featureMap<EluFeatures>(
            {Elu, QStringLiteral("elu"), QStringLiteral("elu+1 linear attention"),
             QStringLiteral("phi(x) = elu(x) + 1 (Transformers are RNNs): d features, no "
                            "random projection; a different kernel, not an estimate of "
                            "softmax."),
             Replacement, false, false, true, {&eluOnScaledParameter()}, 0xe69f00, Star}),
        featureMap<Taylor2Features>(
            {Taylor2, QStringLiteral("taylor2"), QStringLiteral("Degree-2 Taylor"),
             QStringLiteral("Exact for 1 + t + t^2/2 with t = x'.y': 1 + d + d(d+1)/2 features, "
                            "no randomness; can be negative."),
             Estimate, false, true, true, {}, 0x882255, Cross}),
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

}  // namespace attnlab

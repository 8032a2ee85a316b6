#include "sweeps/causal_steps.h"

#include "sweeps/causal_stepper.h"
#include "errors.h"
#include "attention/exact_attention.h"
#include "attention/feature_maps.h"
#include "attention/linear_attention.h"
#include "parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace attnlab {

namespace {

// Steps taken between two polls of cancelled().
constexpr Eigen::Index kStepsBetweenPolls = 64;

void pollCancelled(const CausalStepsOptions& options)
{
    if (options.cancelled && options.cancelled())
        throw Cancelled();
}

template <typename T>
void runSteps(const ExperimentSpec& spec, const HeadTensors& tensors,
              const CausalStepsOptions& options, CausalSteps& out)
{
    const Matrix<T> q = tensors.q.cast<T>();
    const Matrix<T> k = tensors.k.cast<T>();
    const Matrix<T> v = tensors.v.cast<T>();
    const Eigen::Index length = q.rows();
    const Eigen::Index valueDim = v.cols();
    const std::unique_ptr<FeatureMap<T>> phi = makeFeatureMap<T>(
        spec.approximation, int(q.cols()), out.scale, HeadSite{spec.input.layer, out.head});
    const Eigen::Index features = phi->featureCount();
    Q_ASSERT(features == out.featureCount);

    pollCancelled(options);
    out.outputsExact = streamingAttention<T>(q, k, v, out.scale, true).template cast<double>();
    pollCancelled(options);
    out.outputsParallel =
        linearAttention<T>(*phi, q, k, v, true, spec.chunkSize).output.template cast<double>();
    pollCancelled(options);

    out.records.resize(std::size_t(length));
    out.outputs.resize(length, valueDim);
    out.normalizers.resize(length, features);
    out.states.resize(out.statesTo - out.statesFrom, features * valueDim);
    CausalStepper<T> stepper(*phi, q, k, v);
    for (Eigen::Index t = 0; t < length; ++t) {
        if (t % kStepsBetweenPolls == 0)
            pollCancelled(options);
        stepper.step();
        CausalStepRecord& record = out.records[std::size_t(t)];
        record.position = t;
        record.denominator = stepper.denominator();
        out.outputs.row(t) = stepper.output().transpose();
        out.normalizers.row(t) = stepper.normalizer().transpose();
        record.normalizerNorm = out.normalizers.row(t).stableNorm();
        const MatrixD state = stepper.state();
        record.stateNorm = state.stableNorm();
        if (t >= out.statesFrom && t < out.statesTo)
            out.states.row(t - out.statesFrom) =
                Eigen::Map<const VectorD>(state.data(), state.size()).transpose();
        if (!(record.denominator > 0))
            out.nonPositivePositions.push_back(t);
    }

    if (options.features) {
        out.queryFeatures = trueScaleFeatures(*phi, q, FeatureSide::Query);
        out.keyFeatures = trueScaleFeatures(*phi, k, FeatureSide::Key);
    }
}

// The differences of every record, from the three outputs.
void addDifferences(CausalSteps& steps)
{
    const double largestOutput =
        steps.outputs.size() > 0 ? steps.outputs.cwiseAbs().maxCoeff() : 0.0;
    const double inf = std::numeric_limits<double>::infinity();
    for (CausalStepRecord& record : steps.records) {
        const Eigen::Index t = record.position;
        const double difference =
            steps.outputs.cols() > 0
                ? (steps.outputs.row(t) - steps.outputsParallel.row(t)).cwiseAbs().maxCoeff()
                : 0.0;
        record.differenceToParallel = difference;
        record.relativeDifferenceToParallel =
            largestOutput > 0 ? difference / largestOutput : (difference == 0 ? 0.0 : inf);
        const double exactNorm = steps.outputsExact.row(t).stableNorm();
        const double error = (steps.outputs.row(t) - steps.outputsExact.row(t)).stableNorm();
        record.errorToExact = exactNorm > 0 ? error / exactNorm : (error == 0 ? 0.0 : inf);
    }
}

QString positionsOf(Eigen::Index count)
{
    return count == 1 ? QStringLiteral("1 position") : QStringLiteral("%1 positions").arg(count);
}

}  // namespace

MatrixD CausalSteps::state(Eigen::Index position) const
{
    Q_ASSERT(position >= statesFrom && position < statesTo);
    return Eigen::Map<const MatrixD>(states.row(position - statesFrom).data(), featureCount,
                                     valueDim);
}

FormAgreement CausalSteps::agreementThrough(Eigen::Index position) const
{
    const Eigen::Index last = position < 0 ? length() - 1 : std::min(position, length() - 1);
    FormAgreement agreement;
    for (Eigen::Index t = 0; t <= last; ++t) {
        const CausalStepRecord& record = records[std::size_t(t)];
        agreement.absolute = std::max(agreement.absolute, record.differenceToParallel);
        agreement.relative = std::max(agreement.relative, record.relativeDifferenceToParallel);
    }
    return agreement;
}

double causalStepsBytes(Eigen::Index length, Eigen::Index features, Eigen::Index valueDim,
                        Eigen::Index stateCount, bool keepFeatures)
{
    const double l = double(length), c = double(features), m = double(valueDim);
    const double interval = std::max(1.0, std::ceil(std::sqrt(l)));
    const double checkpoints = std::ceil(l / interval) + 1;
    const double values = double(stateCount) * c * m   // the kept states
                          + l * (3 * m + c)            // outputs, normalizers
                          + 2 * l * c + l * m          // the stepper's phi(Q), phi(K), V
                          + checkpoints * (c * m + c)  // and its checkpoints
                          + (keepFeatures ? 2 * l * c : 0.0) + 8 * l;  // features, records
    return values * 8.0;
}

void requireFeatureState(const ExperimentSpec& spec, const QString& prefix)
{
    const auto stepped = [](const MethodInfo& info) {
        return info.hasRecurrentForm && info.hasFeatures();
    };
    if (!spec.exactMethod && stepped(methodInfo(spec.approximation.kind)))
        return;
    std::vector<MethodInfo> maps;
    for (const MethodInfo& info : approximationMethods())
        if (stepped(info))
            maps.push_back(info);
    const QString why =
        !spec.exactMethod && methodInfo(spec.approximation.kind).hasRecurrentForm
            ? QStringLiteral("the method \"%1\" runs token by token as a window of keys, with "
                             "no state S_i, z_i to step through")
            : QStringLiteral("the method \"%1\" has no recurrent form");
    throw InputError(prefix + why.arg(spec.methodName()) +
                     QStringLiteral(": choose a feature map that has one (%1)")
                         .arg(methodNames(maps, QStringLiteral(", "))));
}

CausalSteps causalSteps(const ExperimentSpec& spec, const AttentionInput& input,
                        const CausalStepsOptions& options)
{
    requireFeatureState(spec);
    requireComputable(spec, input);
    const int heads = int(input.heads.size());
    require(options.head >= 0 && options.head < heads,
            QStringLiteral("head %1 is out of range: the input has %2 (0 to %3)")
                .arg(options.head)
                .arg(heads == 1 ? QStringLiteral("1 head") : QStringLiteral("%1 heads").arg(heads))
                .arg(heads - 1));
    const HeadTensors& head = input.heads[std::size_t(options.head)];
    const Eigen::Index length = head.q.rows();
    const Eigen::Index from = options.statesFrom;
    const Eigen::Index to = options.statesTo < 0 ? length : options.statesTo;
    require(from >= 0 && from <= length,
            QStringLiteral("the first state position %1 is out of range: positions run from 0 to "
                           "%2 (L = %3)")
                .arg(from)
                .arg(length - 1)
                .arg(length));
    require(to >= 0 && to <= length,
            QStringLiteral("the end of the states range %1 is out of range: it is at most L = %2")
                .arg(to)
                .arg(length));
    require(from <= to, QStringLiteral("the states range [%1, %2) runs backwards: its start must "
                                       "not be after its end")
                            .arg(from)
                            .arg(to));

    CausalSteps steps;
    steps.spec = spec;
    steps.spec.causal = true;
    steps.scale = spec.resolvedScale(input.headDim());
    steps.head = options.head;
    steps.labels = input.labels;
    steps.featureCount = featureCountOf(spec.approximation, int(input.headDim()));
    steps.valueDim = head.v.cols();
    steps.statesFrom = from;
    steps.statesTo = to;

    const Eigen::Index c = steps.featureCount, m = steps.valueDim;
    const bool drawsProjection = methodInfo(spec.approximation.kind).drawsProjection;
    const double arrayBytes = causalStepsBytes(length, c, m, 0, options.features);
    options.budget.require(
        arrayBytes,
        QStringLiteral("The per-position arrays of the causal steps (L = %1, C = %2 features, "
                       "M = %3)")
            .arg(length)
            .arg(c)
            .arg(m),
        QStringLiteral("Use %1a shorter input, or raise the memory budget.")
            .arg(drawsProjection ? QStringLiteral("fewer features or ") : QString()),
        drawsProjection ? Remedies{Remedy::FewerFeatures} : Remedies{});
    options.budget.require(
        causalStepsBytes(length, c, m, to - from, options.features),
        QStringLiteral("Keeping the states S_i of %1 (%2 x C x M = %2 x %3 x %4 values, %5) "
                       "beside the per-position arrays (%6)")
            .arg(positionsOf(to - from))
            .arg(to - from)
            .arg(c)
            .arg(m)
            .arg(formatBytes(8 * double(to - from) * double(c) * double(m)),
                 formatBytes(arrayBytes)),
        QStringLiteral("Each S_i is C x M = %1 values whatever the position: keep the states of "
                       "fewer positions, %2or raise the memory budget.")
            .arg(c * m)
            .arg(drawsProjection ? QStringLiteral("use fewer features, ") : QString()),
        drawsProjection ? Remedies{Remedy::FewerKeptStates, Remedy::FewerFeatures}
                        : Remedies{Remedy::FewerKeptStates});

    pollCancelled(options);
    setEngineThreads(engineThreadsFor(spec, length, input.headDim(), c, 1));
    if (spec.precision == Precision::Float)
        runSteps<float>(spec, head, options, steps);
    else
        runSteps<double>(spec, head, options, steps);
    addDifferences(steps);
    return steps;
}

}  // namespace attnlab

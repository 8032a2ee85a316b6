#include "generation/followed_steps.h"

#include "attention/methods.h"
#include "errors.h"

#include <cmath>
#include <limits>

namespace attnlab {

using Eigen::Index;

namespace {

// The row of a causal attention matrix from the weights a_j (j <= i) of one query: a_j / sum a,
// with 0 where that is not finite (a sum of 0, or of features that cancel), as the parallel
// causal form gives it.
VectorD normalisedRow(const VectorD& weights)
{
    const double sum = weights.sum();
    VectorD row = weights / sum;
    for (Index j = 0; j < row.size(); ++j)
        if (!std::isfinite(row[j]))
            row[j] = 0;
    return row;
}

}  // namespace

FollowedSteps::FollowedSteps(const ApproximationSpec& spec, int layer, int head, bool replaced,
                             Index capacity, Index headDim, const MemoryBudget& budget)
    : m_layer(layer), m_head(head), m_capacity(capacity), m_scale(1 / std::sqrt(double(headDim)))
{
    const MethodInfo& info = methodInfo(spec.kind);
    const QString subject = QStringLiteral("layer %1, head %2").arg(layer).arg(head);
    if (!replaced)
        throw InputError(QStringLiteral("%1 keeps softmax attention with its key/value cache: "
                                        "there is no state S_i to follow; follow a replaced "
                                        "layer")
                             .arg(subject));
    if (!info.hasFeatures() || !info.hasRecurrentForm)
        throw InputError(QStringLiteral("%1 runs %2, which keeps no state S_i, z_i to follow "
                                        "(the Stepper follows a feature map's recurrence)")
                             .arg(subject, info.title));
    require(capacity >= 1, QStringLiteral("nothing to follow: no token is read"));
    const Index features = info.featureCount(int(headDim), spec.features);
    const double c = double(features), d = double(headDim), l = double(capacity);
    // The states, the features, normalizers, outputs and rows, and P and P^ (in double).
    const double bytes = 8 * (l * c * d + 3 * l * c + 6 * l * d + 2 * l * l);
    budget.require(bytes,
                   QStringLiteral("Following %1 over %2 tokens (its states S_i, C d = %3 x %4 "
                                  "values a token, and the rows of P and P^)")
                       .arg(subject)
                       .arg(capacity)
                       .arg(features)
                       .arg(headDim),
                   QStringLiteral("Generate fewer tokens, use fewer features, or raise the "
                                  "memory budget."),
                   {Remedy::FewerGeneratedTokens, Remedy::FewerFeatures});

    m_steps.spec.approximation = spec;
    m_steps.spec.causal = true;
    m_steps.scale = m_scale;
    m_steps.head = 0;  // the one head of input()
    m_steps.featureCount = features;
    m_steps.valueDim = headDim;
    m_steps.outputs = MatrixD::Zero(capacity, headDim);
    m_steps.outputsParallel = MatrixD::Zero(capacity, headDim);
    m_steps.outputsExact = MatrixD::Zero(capacity, headDim);
    m_steps.normalizers = MatrixD::Zero(capacity, features);
    m_steps.states = MatrixD::Zero(capacity, features * headDim);
    m_steps.queryFeatures = MatrixD::Zero(capacity, features);
    m_steps.keyFeatures = MatrixD::Zero(capacity, features);
    m_steps.records.reserve(std::size_t(capacity));
    HeadTensors rows;
    rows.q = MatrixD::Zero(capacity, headDim);
    rows.k = MatrixD::Zero(capacity, headDim);
    rows.v = MatrixD::Zero(capacity, headDim);
    m_input.heads.push_back(std::move(rows));
    m_exact = MatrixD::Zero(capacity, capacity);
    m_approx = MatrixD::Zero(capacity, capacity);
}

void FollowedSteps::append(const FollowedHead& head, const QString& label)
{
    const Index t = length();
    require(t < m_capacity,
            QStringLiteral("the followed head has room for %1 tokens").arg(m_capacity));
    require(head.hasState && head.normalizer.size() == m_steps.featureCount,
            QStringLiteral("layer %1, head %2 reported no state S_i at token %3")
                .arg(m_layer)
                .arg(m_head)
                .arg(t));
    HeadTensors& rows = m_input.heads.front();
    rows.q.row(t) = head.query.transpose();
    rows.k.row(t) = head.key.transpose();
    rows.v.row(t) = head.value.transpose();
    m_steps.labels.append(label);
    m_input.labels.append(label);
    m_steps.queryFeatures.row(t) = head.queryFeatures.transpose();
    m_steps.keyFeatures.row(t) = head.keyFeatures.transpose();
    m_steps.normalizers.row(t) = head.normalizer.transpose();
    m_steps.states.row(t) =
        Eigen::Map<const VectorD>(head.state.data(), head.state.size()).transpose();
    m_steps.outputs.row(t) = head.output.transpose();

    // Row i of P over the keys so far (stably: the largest score subtracted), and of P^ from the
    // reported features.
    const Index n = t + 1;
    const VectorD scores = rows.k.topRows(n) * head.query * m_scale;
    m_exact.row(t).head(n) =
        normalisedRow((scores.array() - scores.maxCoeff()).exp().matrix()).transpose();
    m_approx.row(t).head(n) =
        normalisedRow(m_steps.keyFeatures.topRows(n) * head.queryFeatures).transpose();
    m_steps.outputsExact.row(t) = m_exact.row(t).head(n) * rows.v.topRows(n);
    m_steps.outputsParallel.row(t) = m_approx.row(t).head(n) * rows.v.topRows(n);

    CausalStepRecord record;
    record.position = t;
    record.denominator = head.denominator;
    record.stateNorm = head.state.stableNorm();
    record.normalizerNorm = head.normalizer.stableNorm();
    const auto output = m_steps.outputs.row(t);
    const double inf = std::numeric_limits<double>::infinity();
    m_largestOutput = std::max(m_largestOutput, output.cwiseAbs().maxCoeff());
    record.differenceToParallel = (output - m_steps.outputsParallel.row(t)).cwiseAbs().maxCoeff();
    record.relativeDifferenceToParallel = m_largestOutput > 0
                                              ? record.differenceToParallel / m_largestOutput
                                              : (record.differenceToParallel == 0 ? 0.0 : inf);
    const double exactNorm = m_steps.outputsExact.row(t).stableNorm();
    const double error = (output - m_steps.outputsExact.row(t)).stableNorm();
    record.errorToExact = exactNorm > 0 ? error / exactNorm : (error == 0 ? 0.0 : inf);
    if (!(record.denominator > 0))
        m_steps.nonPositivePositions.push_back(t);
    m_steps.records.push_back(record);
    m_steps.statesTo = t + 1;
}

MatrixD FollowedSteps::exactAttention() const
{
    return m_exact.topLeftCorner(length(), length());
}

MatrixD FollowedSteps::approxAttention() const
{
    return m_approx.topLeftCorner(length(), length());
}

}  // namespace attnlab

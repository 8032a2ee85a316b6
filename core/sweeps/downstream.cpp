#include "sweeps/downstream.h"

#include "named_values.h"
#include "io/csv.h"
#include "errors.h"
#include "attention/exact_attention.h"
#include "attention/approximation.h"
#include "attention/approximations/checkpoint_attention.h"
#include "attention/feature_maps.h"
#include "inputs/model_input.h"
#include "parallel.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace attnlab {

namespace {

// The summaries of a comparison's predictions: top-1 agreement, mean and largest KL.
void summarisePredictions(DownstreamComparison& comparison)
{
    const std::size_t predictions = comparison.kl.size();
    std::size_t agreeing = 0;
    for (std::size_t i = 0; i < predictions; ++i)
        agreeing += comparison.exactTop1[i] == comparison.approxTop1[i];
    comparison.top1Agreement = double(agreeing) / double(predictions);
    comparison.meanKl =
        std::accumulate(comparison.kl.begin(), comparison.kl.end(), 0.0) / double(predictions);
    comparison.maxKl = *std::max_element(comparison.kl.begin(), comparison.kl.end());
}

constexpr int kTopCount = 5;
// Significant digits of the CSV numbers (the metrics are computed in double from float logits).
constexpr int kCsvDigits = 9;

// |P^ - P|_F / |P|_F of one head (both masked when causal), in row blocks; the rows' entropies
// and monotonicity into properties when it is not null.
double relativeAttentionError(const Approximation<float>& approximation, const Matrix<float>& q,
                              const Matrix<float>& k, double scale, bool causal,
                              RowPropertiesAccumulator* properties = nullptr)
{
    constexpr Eigen::Index kBlock = 64;
    const Eigen::Index length = q.rows();
    const std::unique_ptr<ApproximateRows<float>> approxRows = approximation.rows(q, k, causal);
    double squaredError = 0;
    double squaredExact = 0;
    Matrix<float> p(kBlock, length);
    Matrix<float> pApprox(kBlock, length);
    for (Eigen::Index begin = 0; begin < length; begin += kBlock) {
        const Eigen::Index rows = std::min(kBlock, length - begin);
        exactAttentionRows<float>(q, k, scale, causal, begin, p.topRows(rows));
        approxRows->rows(begin, pApprox.topRows(rows), nullptr);
        squaredError += (pApprox.topRows(rows) - p.topRows(rows)).cast<double>().squaredNorm();
        squaredExact += p.topRows(rows).cast<double>().squaredNorm();
        if (properties)
            properties->addRows<float>(begin, causal, p.topRows(rows), pApprox.topRows(rows));
    }
    return std::sqrt(squaredError / squaredExact);
}

// The row properties of exact attention itself (P^ = P: monotonicity 1), in row blocks.
RowProperties exactRowProperties(const Matrix<float>& q, const Matrix<float>& k, double scale,
                                 bool causal)
{
    constexpr Eigen::Index kBlock = 64;
    RowPropertiesAccumulator properties;
    Matrix<float> p(kBlock, k.rows());
    for (Eigen::Index begin = 0; begin < q.rows(); begin += kBlock) {
        const Eigen::Index rows = std::min(kBlock, q.rows() - begin);
        exactAttentionRows<float>(q, k, scale, causal, begin, p.topRows(rows));
        properties.addRows<float>(begin, causal, p.topRows(rows), p.topRows(rows));
    }
    return properties.properties();
}

std::vector<TokenProbability> topTokens(const VectorD& logProbabilities)
{
    std::vector<int> ids(std::size_t(logProbabilities.size()));
    std::iota(ids.begin(), ids.end(), 0);
    const int count = std::min<int>(kTopCount, int(ids.size()));
    std::partial_sort(ids.begin(), ids.begin() + count, ids.end(),
                      [&](int a, int b) { return logProbabilities[a] > logProbabilities[b]; });
    std::vector<TokenProbability> top;
    for (int i = 0; i < count; ++i)
        top.push_back({ids[std::size_t(i)], std::exp(logProbabilities[ids[std::size_t(i)]])});
    return top;
}

// Block-averages an L x L matrix to at most size x size cells.
MatrixD thumbnail(const ResultMatrix& kept, int size)
{
    const MatrixD matrix = kept.toDouble();
    const Eigen::Index length = matrix.rows();
    const Eigen::Index cells = std::min<Eigen::Index>(length, size);
    MatrixD small(cells, cells);
    for (Eigen::Index a = 0; a < cells; ++a) {
        const Eigen::Index rowBegin = a * length / cells;
        const Eigen::Index rowEnd = (a + 1) * length / cells;
        for (Eigen::Index b = 0; b < cells; ++b) {
            const Eigen::Index colBegin = b * length / cells;
            const Eigen::Index colEnd = (b + 1) * length / cells;
            small(a, b) =
                matrix.block(rowBegin, colBegin, rowEnd - rowBegin, colEnd - colBegin).mean();
        }
    }
    return small;
}

void comparePredictions(const ForwardResult& exact, const ForwardResult& approx,
                        DownstreamComparison& comparison);

// The attention a comparison replaces: every head of the replaced layers.
struct AttentionShape {
    int layers = 0;
    int heads = 0;
    int d = 0;
    Eigen::Index length = 0;  // L, the positions each head attends over
    bool causal = false;
};

// The comparison of `exact` with the run of runApprox (the model's forward pass with the options
// given), whose replaced layers run method's attention.
DownstreamComparison compareRuns(
    const AttentionShape& shape, const ForwardResult& exact, const ExperimentSpec& method,
    const std::vector<int>& replacedLayers, const std::function<bool()>& cancelled,
    const std::function<ForwardResult(const ForwardOptions&)>& runApprox)
{
    DownstreamComparison comparison;
    comparison.replacedLayers = checkedLayers(replacedLayers, shape.layers);

    // As compute() chooses them: one thread for little work (a ViT's 50 tokens), where Eigen
    // would split each small product (Nystrom's m x m ones from m = 47 on) over threads that wait
    // for one another by spinning, a scheduler time slice per product on a busy machine.
    const auto featuresRun =
        method.exactMethod ? 0 : Eigen::Index(featuresUsed(method.approximation, shape.length));
    setEngineThreads(engineThreadsFor(method, shape.length, shape.d, featuresRun, shape.heads));
    const double scale = method.resolvedScale(shape.d);
    // One approximation per replaced head, made for its site (layer, head): head h's random
    // draws in every layer, fitted maps per layer and head.
    std::vector<std::unique_ptr<Approximation<float>>> approximations(std::size_t(shape.layers) *
                                                                      std::size_t(shape.heads));
    if (!method.exactMethod) {
        requireCausalForm(method.approximation.kind, shape.causal, CausalBecause::LanguageModel);
        for (const int layer : comparison.replacedLayers)
            for (int h = 0; h < shape.heads; ++h)
                approximations[std::size_t(layer * shape.heads + h)] = makeApproximation<float>(
                    method.approximation, shape.d, shape.length, scale, HeadSite{layer, h});
    }

    std::vector<double> relativeErrorSum(std::size_t(shape.layers), 0.0);
    ForwardOptions options;
    options.captureQkv = false;
    options.cancelled = cancelled;
    options.replaced.assign(std::size_t(shape.layers), false);
    for (const int layer : comparison.replacedLayers)
        options.replaced[std::size_t(layer)] = true;
    options.replacement = [&](int layer, int head, const Matrix<float>& q, const Matrix<float>& k,
                              const Matrix<float>& v) -> Matrix<float> {
        if (method.exactMethod) {
            comparison.heads.push_back(
                {layer, head, exactRowProperties(q, k, scale, shape.causal)});
            return streamingAttention<float>(q, k, v, scale, shape.causal);
        }
        Approximation<float>& approximation =
            *approximations[std::size_t(layer * shape.heads + head)];
        approximation.fit(q, k, shape.causal);
        RowPropertiesAccumulator properties;
        relativeErrorSum[std::size_t(layer)] +=
            relativeAttentionError(approximation, q, k, scale, shape.causal, &properties);
        comparison.heads.push_back({layer, head, properties.properties()});
        return approximation.output(q, k, v, shape.causal, method.chunkSize).output;
    };
    const ForwardResult approx = runApprox(options);
    comparePredictions(exact, approx, comparison);
    double total = 0;
    for (const int layer : comparison.replacedLayers) {
        const double layerMean = relativeErrorSum[std::size_t(layer)] / shape.heads;
        comparison.relFrobeniusPerLayer.push_back(layerMean);
        total += layerMean;
    }
    comparison.relFrobeniusAttentionMean = total / double(comparison.replacedLayers.size());
    return comparison;
}

// The predictions of two runs compared, p from exact's logits and p^ from approx's: the top-1
// and top-5 tokens, KL(p || p^) (infinite where approx's logits are not finite), the summaries.
void comparePredictions(const ForwardResult& exact, const ForwardResult& approx,
                        DownstreamComparison& comparison)
{
    const Eigen::Index predictions = exact.logits.rows();
    comparison.exactTop1.assign(std::size_t(predictions), 0);
    comparison.approxTop1.assign(std::size_t(predictions), -1);
    comparison.kl.assign(std::size_t(predictions), 0.0);
    comparison.exactTop5.resize(std::size_t(predictions));
    comparison.approxTop5.resize(std::size_t(predictions));
    forEachRowBlock(predictions, 16, [&](Eigen::Index begin, Eigen::Index end) {
        for (Eigen::Index i = begin; i < end; ++i) {
            const VectorD logP = logSoftmax(exact.logits.row(i).transpose());
            comparison.exactTop5[std::size_t(i)] = topTokens(logP);
            comparison.exactTop1[std::size_t(i)] = comparison.exactTop5[std::size_t(i)].front().id;
            comparison.kl[std::size_t(i)] =
                predictionKl(exact.logits.row(i).transpose(), approx.logits.row(i).transpose());
            if (!approx.logits.row(i).allFinite())
                continue;
            comparison.approxTop5[std::size_t(i)] =
                topTokens(logSoftmax(approx.logits.row(i).transpose()));
            comparison.approxTop1[std::size_t(i)] =
                comparison.approxTop5[std::size_t(i)].front().id;
        }
    });

    summarisePredictions(comparison);
}

}  // namespace

DownstreamComparison compareCheckpoints(const ForwardResult& first, const ForwardResult& second,
                                        int heads)
{
    DownstreamComparison comparison;
    comparePredictions(first, second, comparison);
    const std::size_t layers = first.layers.size();
    double total = 0;
    for (std::size_t l = 0; l < layers; ++l) {
        const LayerQkv& a = first.layers[l];
        const LayerQkv& b = second.layers.at(l);
        const Eigen::Index d = a.q.cols() / heads;
        const int group = heads / int(a.k.cols() / d);
        const double scale = 1 / std::sqrt(double(d));
        double layerSum = 0;
        for (int h = 0; h < heads; ++h) {
            const Eigen::Index g = h / group;
            const CheckpointAttention<float> other(b.q.middleCols(h * d, d),
                                                   b.k.middleCols(g * d, d),
                                                   b.v.middleCols(g * d, d), scale);
            layerSum += relativeAttentionError(other, a.q.middleCols(h * d, d),
                                               a.k.middleCols(g * d, d), scale, true);
        }
        comparison.replacedLayers.push_back(int(l));
        comparison.relFrobeniusPerLayer.push_back(layerSum / heads);
        total += layerSum / heads;
    }
    comparison.relFrobeniusAttentionMean = layers ? total / double(layers) : 0;
    return comparison;
}

VectorD logSoftmax(const Eigen::Ref<const Vector<float>>& logits)
{
    const VectorD x = logits.cast<double>();
    const double top = x.maxCoeff();
    return x.array() - (top + std::log((x.array() - top).exp().sum()));
}

double predictionKl(const Eigen::Ref<const Vector<float>>& exactLogits,
                    const Eigen::Ref<const Vector<float>>& approxLogits)
{
    if (!approxLogits.allFinite())
        return std::numeric_limits<double>::infinity();
    const VectorD logP = logSoftmax(exactLogits);
    const VectorD logQ = logSoftmax(approxLogits);
    return std::max(0.0, (logP.array().exp() * (logP - logQ).array()).sum());
}

std::vector<int> checkedLayers(std::vector<int> layers, int layerCount)
{
    if (layers.empty())
        throw InputError(QStringLiteral("layers: choose at least one layer to replace"));
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    for (const int layer : layers)
        if (layer < 0 || layer >= layerCount)
            throw InputError(QStringLiteral("layer %1: the model has layers 0 to %2")
                                 .arg(layer)
                                 .arg(layerCount - 1));
    return layers;
}

DownstreamComparison compareDownstream(const LanguageModel& model, const std::vector<int>& ids,
                                       const ForwardResult& exact, const ExperimentSpec& method,
                                       const std::vector<int>& replacedLayers,
                                       const std::function<bool()>& cancelled)
{
    if (ids.empty() || exact.logits.rows() != Eigen::Index(ids.size()))
        throw std::invalid_argument("compareDownstream: the exact forward pass has no logits "
                                    "for these tokens");
    return compareRuns(
        {model.layers(), model.heads(), model.headDim(), Eigen::Index(ids.size()), true}, exact,
        method, replacedLayers, cancelled,
        [&](const ForwardOptions& options) { return model.forward(ids, options); });
}

DownstreamComparison compareDownstream(const VitModel& model, const PixelTensor& pixels,
                                       const ForwardResult& exact, const ExperimentSpec& method,
                                       const std::vector<int>& replacedLayers,
                                       const std::function<bool()>& cancelled)
{
    const VitConfig& config = model.config();
    if (model.classNames().isEmpty())
        throw InputError(QStringLiteral("%1: the ViT has no classifier (classifier.weight): it "
                                        "predicts no classes to compare")
                             .arg(model.folder()));
    if (exact.logits.rows() != 1)
        throw std::invalid_argument("compareDownstream: the exact forward pass has no class "
                                    "logits");
    return compareRuns(
        {config.layers, config.heads, config.headDim(), config.tokenCount(), false}, exact, method,
        replacedLayers, cancelled,
        [&](const ForwardOptions& options) { return model.forward(pixels, options); });
}

QString layersName(const std::vector<int>& layers, int layerCount)
{
    std::vector<int> sorted = layers;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    if (int(sorted.size()) == layerCount && layerCount > 1)
        return QStringLiteral("all");
    QStringList names;
    for (const int layer : sorted)
        names.append(QString::number(layer));
    return names.join(QLatin1Char('+'));
}

QString layersPhrase(const std::vector<int>& layers, int layerCount)
{
    const QString name = layersName(layers, layerCount);
    if (name == QLatin1String("all"))
        return QStringLiteral("all layers");
    return (name.contains(QLatin1Char('+')) ? QStringLiteral("layers ")
                                            : QStringLiteral("layer ")) +
           name;
}

namespace {

// Each head's entropies and monotonicity averaged over the comparisons (of the same heads, in the
// same order; none when they differ).
std::vector<HeadRowProperties> meanHeadProperties(
    const std::vector<DownstreamComparison>& comparisons)
{
    std::vector<HeadRowProperties> mean = comparisons.front().heads;
    const double n = double(comparisons.size());
    for (HeadRowProperties& head : mean) {
        head.properties.rankCurveExact.clear();
        head.properties.rankCurveApprox.clear();
        for (double* value : {&head.properties.entropyExact, &head.properties.entropyApprox,
                              &head.properties.monotonicity})
            *value /= n;
    }
    for (std::size_t c = 1; c < comparisons.size(); ++c) {
        if (comparisons[c].heads.size() != mean.size())
            return {};
        for (std::size_t h = 0; h < mean.size(); ++h) {
            RowProperties& to = mean[h].properties;
            const RowProperties& from = comparisons[c].heads[h].properties;
            to.entropyExact += from.entropyExact / n;
            to.entropyApprox += from.entropyApprox / n;
            to.monotonicity += from.monotonicity / n;
        }
    }
    return mean;
}

}  // namespace

DownstreamComparison combinedComparison(const std::vector<DownstreamComparison>& comparisons)
{
    if (comparisons.empty())
        throw std::invalid_argument("combinedComparison: no comparisons");
    DownstreamComparison combined;
    combined.replacedLayers = comparisons.front().replacedLayers;
    combined.relFrobeniusPerLayer.assign(combined.replacedLayers.size(), 0.0);
    for (const DownstreamComparison& comparison : comparisons) {
        const auto append = [](auto& to, const auto& from) {
            to.insert(to.end(), from.begin(), from.end());
        };
        append(combined.exactTop1, comparison.exactTop1);
        append(combined.approxTop1, comparison.approxTop1);
        append(combined.kl, comparison.kl);
        append(combined.exactTop5, comparison.exactTop5);
        append(combined.approxTop5, comparison.approxTop5);
        combined.relFrobeniusAttentionMean +=
            comparison.relFrobeniusAttentionMean / double(comparisons.size());
        for (std::size_t l = 0;
             l < combined.relFrobeniusPerLayer.size() && l < comparison.relFrobeniusPerLayer.size();
             ++l)
            combined.relFrobeniusPerLayer[l] +=
                comparison.relFrobeniusPerLayer[l] / double(comparisons.size());
    }
    combined.heads = meanHeadProperties(comparisons);
    summarisePredictions(combined);
    return combined;
}

ModelEvalRow modelEvalRow(const ExperimentSpec& method, const DownstreamComparison& comparison,
                          int layerCount)
{
    ModelEvalRow row;
    // A second checkpoint in the approximation's place is the method "checkpoint", as
    // model-eval --compare-model writes it: no size, no seed.
    const bool checkpoint = !method.input.comparisonModelPath.isEmpty();
    row.method = checkpoint ? QStringLiteral("checkpoint") : method.methodName();
    const MethodParameter* size =
        method.exactMethod || checkpoint ? nullptr : methodInfo(method.approximation.kind).size;
    const MethodInfo* info =
        method.exactMethod || checkpoint ? nullptr : &methodInfo(method.approximation.kind);
    row.features = size                            ? int(method.approximation.value(*size))
                   : info && info->needsFittedMaps ? int(featureCountOf(method.approximation, 0))
                                                   : 0;
    row.window = info && info->takes(windowParameter())
                     ? int(method.approximation.value(windowParameter()))
                     : 0;
    row.layers = layersName(comparison.replacedLayers, layerCount);
    row.seed = checkpoint ? 0 : method.approximation.seed;
    row.tokens = int(comparison.kl.size());
    row.top1Agreement = comparison.top1Agreement;
    row.meanKl = comparison.meanKl;
    row.maxKl = comparison.maxKl;
    row.relFrobeniusAttentionMean = comparison.relFrobeniusAttentionMean;
    row.heads = comparison.heads;
    return row;
}

ModelEvalRow modelEvalRow(const ExperimentSpec& method,
                          const std::vector<DownstreamComparison>& comparisons, int layerCount,
                          int tokens)
{
    ModelEvalRow row = modelEvalRow(method, combinedComparison(comparisons), layerCount);
    row.tokens = tokens;
    return row;
}

QString modelEvalCsv(const std::vector<ModelEvalRow>& rows)
{
    QByteArray csv("method,m,layers,seed,tokens,top1_agreement,mean_kl,max_kl,"
                   "rel_frobenius_attention_mean,window\n");
    for (const ModelEvalRow& row : rows) {
        csv += csvField(row.method).toUtf8() + ',' + QByteArray::number(row.features) + ',' +
               csvField(row.layers).toUtf8() + ',' + QByteArray::number(qulonglong(row.seed)) +
               ',' + QByteArray::number(row.tokens) + ',';
        appendCsvNumber(csv, row.top1Agreement, kCsvDigits);
        for (const double value : {row.meanKl, row.maxKl, row.relFrobeniusAttentionMean}) {
            csv += ',';
            appendCsvNumber(csv, value, kCsvDigits);
        }
        csv += ',' + (row.window > 0 ? QByteArray::number(row.window) : QByteArray()) + '\n';
    }
    return QString::fromUtf8(csv);
}

QString modelEvalHeadsCsv(const std::vector<ModelEvalRow>& rows)
{
    QByteArray csv("layer,head,method,m,layers,seed,entropy_exact,entropy_approx,monotonicity\n");
    for (const ModelEvalRow& row : rows)
        for (const HeadRowProperties& head : row.heads) {
            csv += QByteArray::number(head.layer) + ',' + QByteArray::number(head.head) + ',' +
                   csvField(row.method).toUtf8() + ',' + QByteArray::number(row.features) + ',' +
                   csvField(row.layers).toUtf8() + ',' + QByteArray::number(qulonglong(row.seed));
            for (const double value : {head.properties.entropyExact, head.properties.entropyApprox,
                                       head.properties.monotonicity})
                appendCsvField(csv, value, kCsvDigits);
            csv += '\n';
        }
    return QString::fromUtf8(csv);
}

namespace {

// One head's W: the seconds of its draw and the bytes it keeps (W in double, its scaled copy in
// float); nothing for a method that draws none.
ComputeCost projectionCost(const ApproximationSpec& method, int d)
{
    if (!methodInfo(method.kind).drawsProjection)
        return {};
    const double m = method.features;
    double flops = 0, draws = m * d;
    if (method.projection != ProjectionKind::Iid) {
        const double blocks = std::ceil(m / d);
        flops = blocks * 2.0 * d * d * d;
        draws = blocks * d * d + (method.rowNorm == RowNorm::Chi ? m * d : 0.0);
    }
    return {flops / kLoopFlopsPerSecond + draws * kSecondsPerNormalDraw, m * d * 12.0};
}

// C, the features of method's map (fitted maps' too); 0 for a method without a map.
double mapFeatures(const ApproximationSpec& method, int d)
{
    const MethodInfo& info = methodInfo(method.kind);
    return info.hasFeatures() || info.needsFittedMaps ? double(featureCountOf(method, d)) : 0.0;
}

}  // namespace

ComputeCost expectedDownstreamCost(const ApproximationSpec& method, int heads, int d,
                                   Eigen::Index length, bool causal)
{
    const MethodInfo& info = methodInfo(method.kind);
    CostShape shape;
    shape.length = double(length);
    shape.d = shape.dv = d;
    shape.m = method.features;
    shape.window = method.value(windowParameter());
    shape.causal = causal;
    const double l = shape.length;
    const double features = info.hasFeatures() ? mapFeatures(method, d) : 0.0;
    const double flops = info.flops(shape) + 2 * l * l * d +
                         (features > 0 ? 2 * l * l * features : info.flops(shape));
    const ComputeCost projection = projectionCost(method, d);
    ComputeCost cost;
    cost.bytes = heads * projection.bytes + 2 * l * features * 4 + info.workingSetFloats(shape) * 4;
    cost.seconds = heads * (projection.seconds + flops / kProductFlopsPerSecond) +
                   cost.bytes * kSecondsPerByteHeld;
    return cost;
}

ComputeCost expectedRecurrentCost(const ApproximationSpec& method, int heads, int d,
                                  Eigen::Index tokens)
{
    const MethodInfo& info = methodInfo(method.kind);
    const double features = mapFeatures(method, d);
    const double window =
        info.takes(windowParameter())
            ? double(std::min<Eigen::Index>(tokens, Eigen::Index(method.value(windowParameter()))))
            : 0.0;
    const ComputeCost projection = projectionCost(method, d);
    const double mapFlops = info.drawsProjection ? 4.0 * method.features * d : 4.0 * features * d;
    const double tokenFlops = mapFlops + 4.0 * features * d + 4.0 * window * d;
    ComputeCost cost;
    cost.bytes = heads * (projection.bytes + 4.0 * (features * d + features + 2 * window * d));
    cost.seconds =
        heads * (projection.seconds + double(tokens) * tokenFlops / kProductFlopsPerSecond) +
        cost.bytes * kSecondsPerByteHeld;
    return cost;
}

std::vector<HeadSurveyEntry> surveyHeads(const ExperimentSpec& spec, const ComputeOptions& options,
                                         int thumbnailSize,
                                         const std::function<void(int, int)>& progress,
                                         const ImagePixels* image)
{
    if (spec.input.kind != InputKind::Model)
        throw InputError(QStringLiteral("the head grid needs model input (a trained model reads "
                                        "the text or the image)"));
    const bool vit = modelArchitectureOf(spec.input.modelPath) == ModelArchitecture::Vit;
    const int layers = vit ? loadVitModel(spec.input.modelPath)->config().layers
                           : loadModel(spec.input.modelPath)->layers();
    const std::vector<NamedHead> named =
        vit ? std::vector<NamedHead>()
            : readNamedHeads(modelFolder(spec.input.modelPath), layers,
                             loadModel(spec.input.modelPath)->info().heads);
    ComputeOptions perLayer = options;
    perLayer.matrices = true;
    perLayer.kernels = false;
    perLayer.features = false;
    std::vector<HeadSurveyEntry> entries;
    for (int layer = 0; layer < layers; ++layer) {
        if (options.cancelled && options.cancelled())
            throw Cancelled();
        ExperimentSpec layerSpec = spec;
        layerSpec.input.layer = layer;
        layerSpec.causal = !vit;  // as the model was trained
        const AttentionInput input = buildInput(layerSpec.input, image, options.budget);
        const ExperimentResult result = compute(layerSpec, input, perLayer);
        const double rootScale = std::sqrt(result.scale);
        for (std::size_t h = 0; h < result.heads.size(); ++h) {
            const HeadResult& head = result.heads[h];
            HeadSurveyEntry entry;
            entry.layer = layer;
            entry.head = int(h);
            if (input.model && input.model->keyValueHeads < input.model->heads)
                entry.keyValueHead = int(h) / (input.model->heads / input.model->keyValueHeads);
            entry.thumbnailExact = thumbnail(head.attentionExact, thumbnailSize);
            if (head.attentionApprox.size() > 0)
                entry.thumbnailApprox = thumbnail(head.attentionApprox, thumbnailSize);
            entry.metrics = head.metrics;
            if (const NamedHead* role = namedHead(named, layer, int(h)))
                entry.role = *role;
            const VectorD queryNorms = rootScale * input.heads[h].q.rowwise().norm();
            const VectorD keyNorms = rootScale * input.heads[h].k.rowwise().norm();
            entry.meanQueryNorm = queryNorms.mean();
            entry.maxQueryNorm = queryNorms.maxCoeff();
            entry.meanKeyNorm = keyNorms.mean();
            entry.maxKeyNorm = keyNorms.maxCoeff();
            entries.push_back(std::move(entry));
        }
        if (progress)
            progress(layer + 1, layers);
    }
    return entries;
}

}  // namespace attnlab

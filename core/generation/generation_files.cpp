#include "generation/generation.h"

#include "attention/feature_maps.h"
#include "attention/fitted_feature_maps.h"
#include "attention/projection.h"
#include "io/csv.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

namespace attnlab {

namespace {

// Significant digits of the CSV's times and KL (computed in double).
constexpr int kCsvDigits = 9;

QJsonArray idArray(const std::vector<int>& ids)
{
    QJsonArray array;
    for (const int id : ids)
        array.append(id);
    return array;
}

// The ids, their text decoded together, and each one's own text.
QJsonObject tokensObject(const std::vector<int>& ids, const TextTokenizer& tokenizer)
{
    QJsonArray pieces;
    for (const int id : ids)
        pieces.append(tokenizer.text(id));
    return {{QStringLiteral("ids"), idArray(ids)},
            {QStringLiteral("text"), tokenizer.decode(ids)},
            {QStringLiteral("tokens"), pieces}};
}

// The method's name and the parameters it runs with (FAVOR++'s fixed A always: A* would look
// ahead), for a random one W's seed and shape, for fitted maps their file and features C (for
// d-dimensional heads).
QJsonObject methodObject(const ApproximationSpec& spec, int d)
{
    const MethodInfo& info = methodInfo(spec.kind);
    QJsonObject method{{QStringLiteral("name"), info.name}};
    for (const MethodParameter* parameter : info.parameters) {
        const double value = parameter == &favorFixedAParameter() ? 1.0 : spec.value(*parameter);
        method.insert(parameter->field, parameter->kind == MethodParameter::Kind::Choice
                                            ? QJsonValue(parameter->format(value))
                                            : QJsonValue(value));
    }
    if (info.isRandom)
        method.insert(QStringLiteral("seed"), double(spec.seed));
    if (info.drawsProjection) {
        method.insert(QStringLiteral("projection"), projectionKindName(spec.projection));
        method.insert(QStringLiteral("row_norm"), rowNormName(spec.rowNorm));
    }
    if (info.needsFittedMaps) {
        method.insert(QStringLiteral("features"), double(featureCountOf(spec, d)));
        if (spec.fittedMaps)
            method.insert(QStringLiteral("feature_map"), spec.fittedMaps->file);
    }
    return method;
}

QJsonObject samplingObject(const SamplingSettings& sampling)
{
    if (sampling.greedy)
        return {{QStringLiteral("greedy"), true}};
    return {{QStringLiteral("greedy"), false},
            {QStringLiteral("temperature"), sampling.temperature},
            {QStringLiteral("top_k"), sampling.topK},
            {QStringLiteral("seed"), double(sampling.seed)}};
}

}  // namespace

QByteArray generationTokensJson(const GenerationResult& result, const LanguageModel& model,
                                const GenerationSpec& spec)
{
    const TextTokenizer& tokenizer = model.tokenizer();
    const int divergence = firstDivergence(result);
    QJsonObject json{
        {QStringLiteral("model"), model.folder()},
        {QStringLiteral("architecture"), model.info().architecture},
        {QStringLiteral("method"), methodObject(spec.approximation, model.headDim())},
        {QStringLiteral("replaced_layers"), idArray(result.replacedLayers)},
        {QStringLiteral("sampling"), samplingObject(spec.sampling)},
        {QStringLiteral("prompt"), tokensObject(result.promptIds, tokenizer)},
        {QStringLiteral("exact"), tokensObject(result.exactIds, tokenizer)},
        {QStringLiteral("approximate"), tokensObject(result.approxIds, tokenizer)},
        {QStringLiteral("first_divergence"),
         divergence < 0 ? QJsonValue(QJsonValue::Null) : QJsonValue(divergence)},
        {QStringLiteral("nonpositive_denominators"), double(result.nonPositiveDenominators)},
    };
    return QJsonDocument(json).toJson(QJsonDocument::Indented);
}

QByteArray generationStepsCsv(const GenerationResult& result)
{
    QByteArray csv("step,position,exact_ms,approx_ms,exact_attention_ms,approx_attention_ms,kl,"
                   "same_token,cache_bytes,state_bytes,exact_token,approx_token,"
                   "forced_same_token\n");
    for (const GenerationStep& step : result.steps) {
        csv += QByteArray::number(step.index) + ',' + QByteArray::number(qint64(step.position));
        for (const double seconds : {step.exactSeconds, step.approxSeconds,
                                     step.exactAttentionSeconds, step.approxAttentionSeconds}) {
            csv += ',';
            appendCsvNumber(csv, seconds * 1e3, kCsvDigits);
        }
        appendCsvField(csv, step.kl, kCsvDigits);
        csv += ',' + QByteArray::number(int(step.sameToken)) + ',' +
               QByteArray::number(qint64(step.cacheBytes)) + ',' +
               QByteArray::number(qint64(step.stateBytes)) + ',' +
               QByteArray::number(step.exactToken) + ',' + QByteArray::number(step.approxToken) +
               ',' + QByteArray::number(int(step.forcedSameToken)) + '\n';
    }
    return csv;
}

}  // namespace attnlab

#include "model/language_model.h"

#include "errors.h"
#include "model/checkpoint_files.h"
#include "model/gguf_model.h"
#include "model/gpt2_model.h"
#include "model/key_value_cache.h"
#include "model/gpt_neox_model.h"
#include "model/llama_model.h"

#include <QDir>

namespace attnlab {

LanguageModelInfo::LanguageModelInfo(ModelArchitecture architecture, int layers, int heads,
                                     int keyValueHeads, int headDim, int positions,
                                     int vocabularySize)
    : architecture(modelTypeName(architecture)),
      layers(layers),
      heads(heads),
      keyValueHeads(keyValueHeads),
      headDim(headDim),
      positions(positions),
      vocabularySize(vocabularySize)
{
}

QString LanguageModelInfo::positionalScheme() const
{
    if (!rope)
        return QStringLiteral("learned absolute positions (wpe)");
    QString text = rope->description(headDim);
    if (slidingWindow > 0)
        text += QStringLiteral("; sliding window of %1 keys").arg(slidingWindow);
    return text;
}

std::shared_ptr<const LanguageModel> loadLanguageModel(const QString& folder,
                                                       const MemoryBudget& budget)
{
    if (isGgufFile(folder))
        return loadGgufLanguageModel(folder, budget);
    const ModelArchitecture architecture = modelArchitecture(folder);
    switch (architecture) {
        case ModelArchitecture::Gpt2: return Gpt2Model::load(folder);
        case ModelArchitecture::Llama:
        case ModelArchitecture::Mistral:
        case ModelArchitecture::Qwen2: return loadLlamaModel(folder, architecture, budget);
        case ModelArchitecture::GptNeox: return loadGptNeoxModel(folder, budget);
        case ModelArchitecture::Vit: break;
    }
    throw InputError(QStringLiteral("%1: the model is a ViT (model_type \"vit\"): it reads an "
                                    "image, not text")
                         .arg(folder));
}

LanguageModelInfo languageModelInfo(const QString& folder)
{
    if (isGgufFile(folder))
        return ggufLanguageModelInfo(folder);
    const ModelArchitecture architecture = modelArchitecture(folder);
    const QString config = QDir(folder).filePath(QStringLiteral("config.json"));
    switch (architecture) {
        case ModelArchitecture::Gpt2: return Gpt2Config::fromJson(config).info();
        case ModelArchitecture::Llama:
        case ModelArchitecture::Mistral:
        case ModelArchitecture::Qwen2: return LlamaConfig::fromJson(config, architecture).info();
        case ModelArchitecture::GptNeox: return GptNeoxConfig::fromJson(config).info();
        case ModelArchitecture::Vit: break;
    }
    throw InputError(QStringLiteral("%1: the model is a ViT (model_type \"vit\"): it reads an "
                                    "image, not text")
                         .arg(folder));
}

DecodingState LanguageModel::decodingState(Eigen::Index tokens) const
{
    std::vector<std::unique_ptr<LayerMemory>> memories;
    for (int l = 0; l < layers(); ++l) {
        auto cache = std::make_unique<KeyValueCache>(
            AttentionHeads{heads(), keyValueHeads(), headDim()}, info().slidingWindow);
        cache->reserve(tokens);
        memories.push_back(std::move(cache));
    }
    return DecodingState(std::move(memories));
}

CheckpointModel::CheckpointModel(QString folder, LanguageModelInfo info,
                                 std::shared_ptr<const TextTokenizer> tokenizer)
    : m_folder(std::move(folder)), m_info(std::move(info)), m_tokenizer(std::move(tokenizer))
{
}

ForwardResult CheckpointModel::forward(const std::vector<int>& tokens,
                                       const ForwardOptions& options) const
{
    checkTokens(tokens, m_info, m_folder);
    return run(tokens, options, nullptr);
}

ForwardResult CheckpointModel::decode(const std::vector<int>& tokens, DecodingState& state,
                                      const ForwardOptions& options) const
{
    checkTokens(tokens, m_info, m_folder, state.position());
    return run(tokens, options, &state);
}

void checkTokens(const std::vector<int>& tokens, const LanguageModelInfo& info,
                 const QString& folder, Eigen::Index first)
{
    const qsizetype length = qsizetype(tokens.size());
    if (length == 0)
        throw InputError(QStringLiteral("no tokens: the model needs at least one"));
    if (first > 0 && first + length > info.positions)
        throw InputError(QStringLiteral("position %1 is past the context of %2: it reads "
                                        "positions 0 to %3")
                             .arg(first + length - 1)
                             .arg(folder)
                             .arg(info.positions - 1));
    if (length > info.positions)
        throw InputError(QStringLiteral("the text has %1 tokens; the model reads at most %2 "
                                        "(the positions of %3)")
                             .arg(length)
                             .arg(info.positions)
                             .arg(folder));
    for (qsizetype i = 0; i < length; ++i) {
        const int id = tokens[std::size_t(i)];
        if (id < 0 || id >= info.vocabularySize)
            throw InputError(QStringLiteral("token %1 (position %2) is not an id of the model: its "
                                            "ids are 0 to %3 (vocab_size of %4)")
                                 .arg(id)
                                 .arg(i)
                                 .arg(info.vocabularySize - 1)
                                 .arg(folder));
    }
}

void requireWeightMemory(const MemoryBudget& budget, double bytes, const QString& folder)
{
    budget.require(bytes, QStringLiteral("The weights of %1 in float").arg(folder),
                   QStringLiteral("Use a smaller model, or raise the memory budget."));
}

RopeSettings readRopeSettings(const QString& path, const QJsonObject& json, const QString& thetaKey,
                              int rotaryDims)
{
    RopeSettings rope;
    rope.theta = positiveNumber(path, json, thetaKey, rope.theta);
    rope.rotaryDims = rotaryDims;
    const QJsonValue scaling = json.value(QStringLiteral("rope_scaling"));
    if (scaling.isUndefined() || scaling.isNull())
        return rope;
    if (!scaling.isObject())
        refuseCheckpoint(path, QStringLiteral("rope_scaling is %1; expected an object or null")
                                   .arg(jsonValueText(scaling)));
    const QJsonObject parameters = scaling.toObject();
    const QJsonValue type = parameters.contains(QStringLiteral("rope_type"))
                                ? parameters.value(QStringLiteral("rope_type"))
                                : parameters.value(QStringLiteral("type"));
    const QString name = type.toString();
    const QString where = path + QStringLiteral(" rope_scaling");
    if (name == QLatin1String("default"))
        return rope;
    if (name == QLatin1String("linear")) {
        rope.scaling = RopeScalingType::Linear;
        rope.factor = positiveNumber(where, parameters, QStringLiteral("factor"), 0);
    } else if (name == QLatin1String("llama3")) {
        rope.scaling = RopeScalingType::Llama3;
        const auto required = [&](const char* key) {
            const QString k = QLatin1String(key);
            if (!parameters.contains(k))
                refuseCheckpoint(where, QStringLiteral("the key %1 is missing").arg(k));
            return positiveNumber(where, parameters, k, 0);
        };
        rope.factor = required("factor");
        rope.lowFrequencyFactor = required("low_freq_factor");
        rope.highFrequencyFactor = required("high_freq_factor");
        rope.originalPositions = required("original_max_position_embeddings");
        if (rope.highFrequencyFactor <= rope.lowFrequencyFactor)
            refuseCheckpoint(where, QStringLiteral("high_freq_factor (%1) is not above "
                                                   "low_freq_factor (%2)")
                                        .arg(rope.highFrequencyFactor)
                                        .arg(rope.lowFrequencyFactor));
    } else {
        refuseCheckpoint(where, QStringLiteral("the rope scaling type is %1; Attention Lab "
                                               "computes \"linear\" and \"llama3\"")
                                    .arg(jsonValueText(type)));
    }
    if (!parameters.contains(QStringLiteral("factor")))
        refuseCheckpoint(where, QStringLiteral("the key factor is missing"));
    return rope;
}

}  // namespace attnlab

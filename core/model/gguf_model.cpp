#include "model/gguf_model.h"

#include "errors.h"
#include "model/gguf_tokenizer.h"
#include "model/gguf_weights.h"
#include "model/gpt2_model.h"
#include "model/gpt_neox_model.h"
#include "model/llama_model.h"

#include <QFile>
#include <QFileInfo>

#include <cmath>

namespace attnlab {

namespace {

// The largest size a hyper-parameter may have (so that products of them fit the engine's
// indices).
constexpr std::uint64_t kLargestSize = std::uint64_t(1) << 30;

struct NamedArchitecture {
    const char* name;  // general.architecture
    ModelArchitecture architecture;
};
constexpr NamedArchitecture kArchitectures[] = {
    {"llama", ModelArchitecture::Llama},
    {"qwen2", ModelArchitecture::Qwen2},
    {"gptneox", ModelArchitecture::GptNeox},
    {"gpt2", ModelArchitecture::Gpt2},
};

// The <arch>.* hyper-parameters of a file, each refused with the key's full name.
class Hyperparameters {
public:
    Hyperparameters(const GgufFile& file, const QString& architecture)
        : m_file(file), m_prefix(architecture + QLatin1Char('.'))
    {
    }
    QString key(const char* name) const { return m_prefix + QLatin1String(name); }
    // A size >= 1, required, or `fallback` when absent.
    int size(const char* name) const
    {
        return checkedSize(name, m_file.unsignedInteger(key(name)));
    }
    int size(const char* name, int fallback) const
    {
        return m_file.contains(key(name)) ? size(name) : fallback;
    }
    // A number > 0, required, or `fallback` when absent.
    double positive(const char* name) const
    {
        const double value = m_file.number(key(name));
        if (!(value > 0))
            m_file.refuseKey(key(name), QStringLiteral("is %1; expected a number > 0").arg(value));
        return value;
    }
    double positive(const char* name, double fallback) const
    {
        return m_file.contains(key(name)) ? positive(name) : fallback;
    }
    // The vocabulary: <arch>.vocab_size, or the tokens of tokenizer.ggml.tokens.
    int vocabulary() const
    {
        if (m_file.contains(key("vocab_size")))
            return size("vocab_size");
        const QString tokens = QStringLiteral("tokenizer.ggml.tokens");
        return checkedSize(tokens, m_file.arrayLength(tokens));
    }
    [[noreturn]] void refuse(const char* name, const QString& problem) const
    {
        m_file.refuseKey(key(name), problem);
    }

private:
    int checkedSize(const QString& fullKey, std::uint64_t value) const
    {
        if (value < 1 || value > kLargestSize)
            m_file.refuseKey(fullKey, QStringLiteral("is %1; expected 1 to 2^30").arg(value));
        return int(value);
    }
    int checkedSize(const char* name, std::uint64_t value) const
    {
        return checkedSize(key(name), value);
    }

    const GgufFile& m_file;
    QString m_prefix;
};

// The rotary settings: <arch>.rope.freq_base, the given rotary dimensions, the scaling
// (<arch>.rope.scaling.type "none" or "linear", the older .rope.scale_linear, or the tensor
// rope_freqs.weight).
RopeSettings ropeSettings(const GgufFile& file, const Hyperparameters& keys, int rotaryDims)
{
    RopeSettings rope;
    rope.theta = keys.positive("rope.freq_base", rope.theta);
    rope.rotaryDims = rotaryDims;
    const QString type = file.string(keys.key("rope.scaling.type"), QStringLiteral("none"));
    if (type == QLatin1String("linear")) {
        rope.scaling = RopeScalingType::Linear;
        rope.factor = keys.positive("rope.scaling.factor");
    } else if (type != QLatin1String("none")) {
        keys.refuse("rope.scaling.type", QStringLiteral("is \"%1\"; Attention Lab computes RoPE "
                                                        "without scaling, with linear scaling, "
                                                        "or with the factors of rope_freqs")
                                             .arg(type));
    } else if (file.contains(keys.key("rope.scale_linear"))) {
        rope.scaling = RopeScalingType::Linear;
        rope.factor = keys.positive("rope.scale_linear");
    }
    if (const GgufTensor* factors = file.find(QStringLiteral("rope_freqs.weight"))) {
        if (rope.scaling != RopeScalingType::None)
            file.refuseTensor(factors->name, QStringLiteral("is there with the linear scaling of "
                                                            "%1; a model has one or the other")
                                                 .arg(keys.key("rope.scaling.type")));
        rope.scaling = RopeScalingType::Factors;
        const Vector<float> values = file.vector(factors->name, rotaryDims / 2);
        for (Eigen::Index i = 0; i < values.size(); ++i) {
            if (!(values[i] > 0))
                file.refuseTensor(factors->name, QStringLiteral("holds %1 at %2; frequency "
                                                                "factors are > 0")
                                                     .arg(values[i])
                                                     .arg(i));
            rope.frequencyFactors.push_back(values[i]);
        }
    }
    return rope;
}

// The head dimension: <arch>.attention.key_length, or embedding_length / head_count.
int headDimension(const Hyperparameters& keys, int width, int heads)
{
    const int headDim = keys.size("attention.key_length", width / heads);
    if (keys.size("attention.value_length", headDim) != headDim)
        keys.refuse("attention.value_length",
                    QStringLiteral("is not the key length %1; Attention Lab reads heads whose "
                                   "values have the dimension of their keys")
                        .arg(headDim));
    return headDim;
}

// The sizes of an architecture without key/value groups (GPT-NeoX, GPT-2): block_count,
// embedding_length (the heads sharing it evenly), context_length, head_count (head_count_kv, if
// given, the same) and the vocabulary.
template <typename Config>
void readUngroupedSizes(const Hyperparameters& keys, Config& config)
{
    config.layers = keys.size("block_count");
    config.width = keys.size("embedding_length");
    config.positions = keys.size("context_length");
    config.heads = keys.size("attention.head_count");
    config.vocabularySize = keys.vocabulary();
    if (config.width % config.heads != 0)
        keys.refuse("attention.head_count", QStringLiteral("is %1, which does not divide "
                                                           "embedding_length (%2)")
                                                .arg(config.heads)
                                                .arg(config.width));
    if (keys.size("attention.head_count_kv", config.heads) != config.heads)
        keys.refuse("attention.head_count_kv",
                    QStringLiteral("is not head_count (%1): this architecture has no key/value "
                                   "groups")
                        .arg(config.heads));
}

LlamaConfig llamaConfig(const GgufFile& file, ModelArchitecture architecture, const QString& name)
{
    const Hyperparameters keys(file, name);
    LlamaConfig config;
    config.architecture = architecture;
    config.layers = keys.size("block_count");
    config.width = keys.size("embedding_length");
    config.innerWidth = keys.size("feed_forward_length");
    config.positions = keys.size("context_length");
    config.heads = keys.size("attention.head_count");
    config.keyValueHeads = keys.size("attention.head_count_kv", config.heads);
    config.vocabularySize = keys.vocabulary();
    if (config.heads % config.keyValueHeads != 0)
        keys.refuse("attention.head_count_kv",
                    QStringLiteral("is %1, which does not divide head_count (%2)")
                        .arg(config.keyValueHeads)
                        .arg(config.heads));
    if (!file.contains(keys.key("attention.key_length")) && config.width % config.heads != 0)
        keys.refuse("attention.head_count",
                    QStringLiteral("is %1, which does not divide embedding_length (%2), and "
                                   "attention.key_length is not given")
                        .arg(config.heads)
                        .arg(config.width));
    config.headDim = headDimension(keys, config.width, config.heads);
    config.rmsNormEpsilon = keys.positive("attention.layer_norm_rms_epsilon");
    const int rotaryDims = keys.size("rope.dimension_count", config.headDim);
    if (rotaryDims != config.headDim || rotaryDims % 2 != 0)
        keys.refuse("rope.dimension_count",
                    QStringLiteral("is %1; Attention Lab rotates whole heads of an even "
                                   "dimension (%2) in this architecture")
                        .arg(rotaryDims)
                        .arg(config.headDim));
    config.rope = ropeSettings(file, keys, rotaryDims);
    return config;
}

GptNeoxConfig gptNeoxConfig(const GgufFile& file)
{
    const Hyperparameters keys(file, QStringLiteral("gptneox"));
    GptNeoxConfig config;
    readUngroupedSizes(keys, config);
    config.innerWidth = keys.size("feed_forward_length");
    config.layerNormEpsilon = keys.positive("attention.layer_norm_epsilon");
    const int rotaryDims = keys.size("rope.dimension_count");
    if (rotaryDims > config.headDim() || rotaryDims % 2 != 0)
        keys.refuse("rope.dimension_count",
                    QStringLiteral("is %1; expected an even number of a head's %2 dimensions")
                        .arg(rotaryDims)
                        .arg(config.headDim()));
    config.rope = ropeSettings(file, keys, rotaryDims);
    config.parallelResidual = file.boolean(keys.key("use_parallel_residual"), true);
    config.gelu = GeluForm::Erf;  // not in the file: Pythia's "gelu"
    return config;
}

Gpt2Config gpt2Config(const GgufFile& file)
{
    const Hyperparameters keys(file, QStringLiteral("gpt2"));
    Gpt2Config config;
    readUngroupedSizes(keys, config);
    config.innerWidth = keys.size("feed_forward_length", 4 * config.width);
    config.layerNormEpsilon = keys.positive("attention.layer_norm_epsilon");
    config.tiedOutputHead = !file.find(QStringLiteral("output.weight"));
    return config;
}

QString architectureName(ModelArchitecture architecture)
{
    for (const NamedArchitecture& named : kArchitectures)
        if (named.architecture == architecture)
            return QLatin1String(named.name);
    return QString();
}

}  // namespace

bool isGgufFile(const QString& path)
{
    const QFileInfo info(path);
    if (!info.isFile())
        return false;
    if (info.suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) == 0)
        return true;
    QFile file(path);
    return file.open(QIODevice::ReadOnly) && file.read(4) == QByteArrayLiteral("GGUF");
}

ModelArchitecture ggufArchitecture(const GgufFile& file)
{
    const QString key = QStringLiteral("general.architecture");
    if (!file.contains(key))
        file.refuseKey(key, QStringLiteral("is missing"));
    const QString name = file.string(key);
    QStringList known;
    for (const NamedArchitecture& named : kArchitectures) {
        if (name == QLatin1String(named.name))
            return named.architecture;
        known.append(QLatin1Char('"') + QLatin1String(named.name) + QLatin1Char('"'));
    }
    file.refuseKey(key, QStringLiteral("is \"%1\"; Attention Lab runs the architectures %2")
                            .arg(name, known.join(QStringLiteral(", "))));
}

std::shared_ptr<const LanguageModel> loadGgufLanguageModel(const QString& path,
                                                           const MemoryBudget& budget)
{
    const GgufFile file(path);
    const ModelArchitecture architecture = ggufArchitecture(file);
    const QString name = architectureName(architecture);
    std::shared_ptr<const TextTokenizer> tokenizer = ggufTokenizer(file);
    switch (architecture) {
        case ModelArchitecture::Llama:
        case ModelArchitecture::Qwen2: {
            const LlamaConfig config = llamaConfig(file, architecture, name);
            const GgufWeights weights(file, architecture, config.layers, config.heads,
                                      config.keyValueHeads);
            return LlamaModel::fromWeights(path, config, std::move(tokenizer), weights, budget);
        }
        case ModelArchitecture::GptNeox: {
            const GptNeoxConfig config = gptNeoxConfig(file);
            const GgufWeights weights(file, architecture, config.layers, config.heads,
                                      config.heads);
            return GptNeoxModel::fromWeights(path, config, std::move(tokenizer), weights, budget);
        }
        case ModelArchitecture::Gpt2: {
            const Gpt2Config config = gpt2Config(file);
            const GgufWeights weights(file, architecture, config.layers, config.heads,
                                      config.heads);
            requireWeightMemory(budget, weights.floatBytes(), path);
            return Gpt2Model::fromWeights(path, config, std::move(tokenizer), weights);
        }
        case ModelArchitecture::Mistral:
        case ModelArchitecture::Vit: break;
    }
    return nullptr;  // ggufArchitecture gives none of the others
}

LanguageModelInfo ggufLanguageModelInfo(const QString& path)
{
    const GgufFile file(path);
    const ModelArchitecture architecture = ggufArchitecture(file);
    switch (architecture) {
        case ModelArchitecture::Llama:
        case ModelArchitecture::Qwen2:
            return llamaConfig(file, architecture, architectureName(architecture)).info();
        case ModelArchitecture::GptNeox: return gptNeoxConfig(file).info();
        case ModelArchitecture::Gpt2: return gpt2Config(file).info();
        case ModelArchitecture::Mistral:
        case ModelArchitecture::Vit: break;
    }
    return {};
}

}  // namespace attnlab

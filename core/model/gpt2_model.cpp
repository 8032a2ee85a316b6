#include "model/gpt2_model.h"

#include "errors.h"
#include "model/checkpoint_files.h"
#include "model/checkpoint_weights.h"
#include "model/decoding_state.h"
#include "model/safetensors.h"
#include "parallel.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonObject>

#include <limits>

namespace attnlab {

using Eigen::Index;

struct Gpt2Model::Weights {
    Matrix<float> tokenEmbedding;     // wte: vocab x n_embd
    Matrix<float> positionEmbedding;  // wpe: n_positions x n_embd
    TransformerStack stack;           // Conv1D weights, stored in x out as in the file; ln_f
    Matrix<float> outputHead;         // lm_head (vocab x n_embd) when not tied to wte, else empty
};

Gpt2Config Gpt2Config::fromJson(const QString& path)
{
    const QJsonObject json = readJsonObject(
        path, QStringLiteral("a model folder holds config.json, the .safetensors weights and the "
                             "tokenizer files"));

    Gpt2Config config;
    config.layers = positiveInteger(path, json, QStringLiteral("n_layer"));
    config.heads = positiveInteger(path, json, QStringLiteral("n_head"));
    config.width = positiveInteger(path, json, QStringLiteral("n_embd"));
    config.positions = positiveInteger(path, json, QStringLiteral("n_positions"));
    config.vocabularySize = positiveInteger(path, json, QStringLiteral("vocab_size"));
    if (config.width % config.heads != 0)
        refuseCheckpoint(path, QStringLiteral("n_embd (%1) is not a multiple of n_head (%2)")
                                   .arg(config.width)
                                   .arg(config.heads));
    if (config.width > std::numeric_limits<int>::max() / 4)
        refuseCheckpoint(path, QStringLiteral("n_embd is %1; at most %2 is read")
                                   .arg(config.width)
                                   .arg(std::numeric_limits<int>::max() / 4));
    const QJsonValue inner = json.value(QStringLiteral("n_inner"));
    config.innerWidth = inner.isUndefined() || inner.isNull()
                            ? 4 * config.width
                            : positiveInteger(path, json, QStringLiteral("n_inner"));
    config.layerNormEpsilon =
        positiveNumber(path, json, QStringLiteral("layer_norm_epsilon"), config.layerNormEpsilon);
    // What the forward pass computes is GPT-2's own block; variants it does not compute are
    // refused rather than run wrongly.
    const QJsonValue activation = json.value(QStringLiteral("activation_function"));
    if (!activation.isUndefined()) {
        const QString name = activation.toString();
        if (name != QLatin1String("gelu_new") && name != QLatin1String("gelu_pytorch_tanh") &&
            name != QLatin1String("gelu_fast"))
            refuseCheckpoint(path, QStringLiteral("activation_function is %1; Attention Lab "
                                                  "computes GPT-2's tanh GELU (\"gelu_new\")")
                                       .arg(jsonValueText(activation)));
    }
    if (json.value(QStringLiteral("scale_attn_weights")).toBool(true) == false)
        refuseCheckpoint(path, QStringLiteral("scale_attn_weights is false; Attention Lab scales "
                                              "attention scores by 1/sqrt(d), as GPT-2 does"));
    if (json.value(QStringLiteral("scale_attn_by_inverse_layer_idx")).toBool(false))
        refuseCheckpoint(path, QStringLiteral("scale_attn_by_inverse_layer_idx is true; "
                                              "Attention Lab scales attention scores by "
                                              "1/sqrt(d) only, as GPT-2 does"));
    config.tiedOutputHead = json.value(QStringLiteral("tie_word_embeddings")).toBool(true);
    return config;
}

LanguageModelInfo Gpt2Config::info() const
{
    LanguageModelInfo info;
    info.architecture = modelTypeName(ModelArchitecture::Gpt2);
    info.layers = layers;
    info.heads = heads;
    info.keyValueHeads = heads;
    info.headDim = headDim();
    info.positions = positions;
    info.vocabularySize = vocabularySize;
    return info;
}

Gpt2Model::Gpt2Model() = default;
Gpt2Model::~Gpt2Model() = default;

const QString& Gpt2Model::folder() const
{
    return m_folder;
}
const LanguageModelInfo& Gpt2Model::info() const
{
    return m_info;
}
const Gpt2Config& Gpt2Model::config() const
{
    return m_config;
}
const TextTokenizer& Gpt2Model::tokenizer() const
{
    return *m_tokenizer;
}

std::shared_ptr<const Gpt2Model> Gpt2Model::load(const QString& folder)
{
    const QDir dir(folder);
    if (!QFileInfo(folder).isDir())
        refuseCheckpoint(folder, QStringLiteral("no such model folder (a model is a folder "
                                                "holding config.json, the .safetensors weights "
                                                "and the tokenizer files)"));
    const Gpt2Config config = Gpt2Config::fromJson(dir.filePath(QStringLiteral("config.json")));
    auto tokenizer = std::make_shared<const Gpt2Tokenizer>(Gpt2Tokenizer::fromFolder(folder));
    return fromWeights(folder, config, std::move(tokenizer), CheckpointWeights(folder));
}

std::shared_ptr<const Gpt2Model> Gpt2Model::fromWeights(
    const QString& source, const Gpt2Config& config, std::shared_ptr<const TextTokenizer> tokenizer,
    const ModelWeights& file)
{
    std::shared_ptr<Gpt2Model> model(new Gpt2Model);
    model->m_folder = source;
    model->m_config = config;
    model->m_info = config.info();
    model->m_tokenizer = std::move(tokenizer);

    // GPT2LMHeadModel saves "transformer.wte.weight", GPT2Model "wte.weight".
    const QString prefix = file.contains(QStringLiteral("transformer.wte.weight"))
                               ? QStringLiteral("transformer.")
                               : QString();
    const auto matrix = [&](const QString& name, Index rows, Index cols) {
        return file.matrix(prefix + name, rows, cols);
    };
    const auto vector = [&](const QString& name, Index size) {
        return file.vector(prefix + name, size);
    };
    const Index width = config.width;
    const Index inner = config.innerWidth;
    auto weights = std::make_unique<Weights>();
    TransformerStack& stack = weights->stack;
    stack.heads = config.heads;
    stack.layerNormEpsilon = float(config.layerNormEpsilon);
    stack.causal = true;
    stack.gelu = GeluForm::Tanh;
    weights->tokenEmbedding = matrix(QStringLiteral("wte.weight"), config.vocabularySize, width);
    weights->positionEmbedding = matrix(QStringLiteral("wpe.weight"), config.positions, width);
    for (int l = 0; l < config.layers; ++l) {
        const QString h = QStringLiteral("h.%1.").arg(l);
        TransformerBlock layer;
        layer.ln1Gain = vector(h + QStringLiteral("ln_1.weight"), width);
        layer.ln1Bias = vector(h + QStringLiteral("ln_1.bias"), width);
        layer.attentionWeight = matrix(h + QStringLiteral("attn.c_attn.weight"), width, 3 * width);
        layer.attentionBias = vector(h + QStringLiteral("attn.c_attn.bias"), 3 * width);
        layer.projectionWeight = matrix(h + QStringLiteral("attn.c_proj.weight"), width, width);
        layer.projectionBias = vector(h + QStringLiteral("attn.c_proj.bias"), width);
        layer.ln2Gain = vector(h + QStringLiteral("ln_2.weight"), width);
        layer.ln2Bias = vector(h + QStringLiteral("ln_2.bias"), width);
        layer.fcWeight = matrix(h + QStringLiteral("mlp.c_fc.weight"), width, inner);
        layer.fcBias = vector(h + QStringLiteral("mlp.c_fc.bias"), inner);
        layer.mlpWeight = matrix(h + QStringLiteral("mlp.c_proj.weight"), inner, width);
        layer.mlpBias = vector(h + QStringLiteral("mlp.c_proj.bias"), width);
        stack.blocks.push_back(std::move(layer));
    }
    stack.finalGain = vector(QStringLiteral("ln_f.weight"), width);
    stack.finalBias = vector(QStringLiteral("ln_f.bias"), width);
    // The output head is wte (tied), as in GPT-2, unless config.json unties it.
    if (!config.tiedOutputHead)
        weights->outputHead =
            file.matrix(QStringLiteral("lm_head.weight"), config.vocabularySize, width);
    model->m_weights = std::move(weights);
    return model;
}

ForwardResult Gpt2Model::forward(const std::vector<int>& tokens,
                                 const ForwardOptions& options) const
{
    const Gpt2Config& config = m_config;
    const Index length = Index(tokens.size());
    if (length == 0)
        throw InputError(QStringLiteral("no tokens: the model needs at least one"));
    if (length > config.positions)
        throw InputError(QStringLiteral("the text has %1 tokens; the model reads at most %2 "
                                        "(n_positions of %3)")
                             .arg(length)
                             .arg(config.positions)
                             .arg(m_folder));
    for (Index i = 0; i < length; ++i) {
        const int id = tokens[std::size_t(i)];
        if (id < 0 || id >= config.vocabularySize)
            throw InputError(QStringLiteral("token %1 (position %2) is not an id of the model: its "
                                            "ids are 0 to %3 (vocab_size of %4)")
                                 .arg(id)
                                 .arg(i)
                                 .arg(config.vocabularySize - 1)
                                 .arg(m_folder));
    }
    return run(tokens, options, nullptr);
}

ForwardResult Gpt2Model::decode(const std::vector<int>& tokens, DecodingState& state,
                                const ForwardOptions& options) const
{
    checkTokens(tokens, m_info, m_folder, state.position());
    return run(tokens, options, &state);
}

ForwardResult Gpt2Model::run(const std::vector<int>& tokens, const ForwardOptions& options,
                             DecodingState* decoding) const
{
    const Weights& weights = *m_weights;
    const Index length = Index(tokens.size());
    const Index first = decoding ? decoding->position() : 0;
    const Index width = m_config.width;
    Matrix<float> x(length, width);
    forEachRowBlock(length, 16, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i)
            x.row(i) = weights.tokenEmbedding.row(tokens[std::size_t(i)]) +
                       weights.positionEmbedding.row(first + i);
    });
    ForwardResult result;
    const Matrix<float> normalised = weights.stack.run(x, options, result, decoding);
    if (options.logits) {
        const Matrix<float>& head =
            weights.outputHead.size() > 0 ? weights.outputHead : weights.tokenEmbedding;
        result.logits.resize(length, m_config.vocabularySize);
        threadedProduct(normalised, head.transpose(), result.logits, false);
    }
    return result;
}

}  // namespace attnlab

#include "model/gpt2_model.h"

#include "errors.h"
#include "model/checkpoint_files.h"
#include "model/checkpoint_weights.h"
#include "model/decoding_state.h"
#include "model/safetensors.h"
#include "parallel.h"

#include <QDir>
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
    const QJsonObject json = readModelConfig(path);

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
    return LanguageModelInfo(ModelArchitecture::Gpt2, layers, heads, heads, headDim(), positions,
                             vocabularySize);
}

Gpt2Model::Gpt2Model(QString folder, const Gpt2Config& config,
                     std::shared_ptr<const TextTokenizer> tokenizer)
    : CheckpointModel(std::move(folder), config.info(), std::move(tokenizer)), m_config(config)
{
}

Gpt2Model::~Gpt2Model() = default;

const Gpt2Config& Gpt2Model::config() const
{
    return m_config;
}

std::shared_ptr<const Gpt2Model> Gpt2Model::load(const QString& folder)
{
    const QDir dir(folder);
    requireModelFolder(folder, QStringLiteral("a model is a folder holding config.json, the "
                                              ".safetensors weights and the tokenizer files"));
    const Gpt2Config config = Gpt2Config::fromJson(dir.filePath(QStringLiteral("config.json")));
    auto tokenizer = std::make_shared<const Gpt2Tokenizer>(Gpt2Tokenizer::fromFolder(folder));
    return fromWeights(folder, config, std::move(tokenizer), CheckpointWeights(folder));
}

std::shared_ptr<const Gpt2Model> Gpt2Model::fromWeights(
    const QString& source, const Gpt2Config& config, std::shared_ptr<const TextTokenizer> tokenizer,
    const ModelWeights& file)
{
    std::shared_ptr<Gpt2Model> model(new Gpt2Model(source, config, std::move(tokenizer)));

    // GPT2LMHeadModel saves "transformer.wte.weight", GPT2Model "wte.weight".
    const QString prefix = file.contains(QStringLiteral("transformer.wte.weight"))
                               ? QStringLiteral("transformer.")
                               : QString();
    // Conv1D weights are stored in x out, as the stack keeps them.
    const StackTensorReader read = StackTensorReader::of(
        file, prefix, false,
        {QStringLiteral("ln_1"), QStringLiteral("attn.c_proj"), QStringLiteral("ln_2"),
         QStringLiteral("mlp.c_fc"), QStringLiteral("mlp.c_proj"), QStringLiteral("ln_f")});
    const Index width = config.width;
    auto weights = std::make_unique<Weights>();
    weights->stack = TransformerStack(config.heads, config.layerNormEpsilon, true, GeluForm::Tanh);
    TransformerStack& stack = weights->stack;
    weights->tokenEmbedding =
        file.matrix(prefix + QStringLiteral("wte.weight"), config.vocabularySize, width);
    weights->positionEmbedding =
        file.matrix(prefix + QStringLiteral("wpe.weight"), config.positions, width);
    for (int l = 0; l < config.layers; ++l) {
        const QString h = QStringLiteral("h.%1.").arg(l);
        TransformerBlock layer = read.block(h, width, config.innerWidth);
        layer.attentionWeight =
            read.linear(h + QStringLiteral("attn.c_attn.weight"), width, 3 * width);
        layer.attentionBias = read.vector(h + QStringLiteral("attn.c_attn.bias"), 3 * width);
        stack.blocks.push_back(std::move(layer));
    }
    read.finalNorm(width, stack);
    // The output head is wte (tied), as in GPT-2, unless config.json unties it.
    if (!config.tiedOutputHead)
        weights->outputHead =
            file.matrix(QStringLiteral("lm_head.weight"), config.vocabularySize, width);
    model->m_weights = std::move(weights);
    return model;
}

ForwardResult Gpt2Model::run(const std::vector<int>& tokens, const ForwardOptions& options,
                             DecodingState* decoding) const
{
    const Weights& weights = *m_weights;
    const Index length = Index(tokens.size());
    const Index first = decoding ? decoding->position() : 0;
    // x_0 = wte[t_i] + wpe[first + i]
    Matrix<float> x = embeddedTokens(weights.tokenEmbedding, tokens);
    x += weights.positionEmbedding.middleRows(first, length);
    ForwardResult result;
    const Matrix<float> normalised = weights.stack.run(x, options, result, decoding);
    addLogits(normalised, weights.outputHead, weights.tokenEmbedding, options, result);
    return result;
}

}  // namespace attnlab

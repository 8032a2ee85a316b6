#include "model/gpt_neox_model.h"

#include "errors.h"
#include "model/decoding_state.h"
#include "model/checkpoint_files.h"
#include "model/checkpoint_weights.h"
#include "parallel.h"

#include <QDir>
#include <QJsonObject>

#include <cmath>

namespace attnlab {

using Eigen::Index;

LanguageModelInfo GptNeoxConfig::info() const
{
    LanguageModelInfo info(ModelArchitecture::GptNeox, layers, heads, heads, headDim(), positions,
                           vocabularySize);
    info.rope = rope;
    return info;
}

GptNeoxConfig GptNeoxConfig::fromJson(const QString& path)
{
    const QJsonObject json = readModelConfig(path);
    GptNeoxConfig config;
    static_cast<TransformerSizes&>(config) = readTransformerSizes(path, json, true);
    config.positions = positiveInteger(path, json, QStringLiteral("max_position_embeddings"));
    config.vocabularySize = positiveInteger(path, json, QStringLiteral("vocab_size"));
    config.layerNormEpsilon =
        positiveNumber(path, json, QStringLiteral("layer_norm_eps"), config.layerNormEpsilon);
    const QString pctKey = json.contains(QStringLiteral("rotary_pct"))
                               ? QStringLiteral("rotary_pct")
                               : QStringLiteral("partial_rotary_factor");
    const double pct = positiveNumber(path, json, pctKey, 0.25);
    if (pct > 1)
        refuseCheckpoint(path, QStringLiteral("%1 is %2; expected a fraction of the head's "
                                              "dimensions, at most 1")
                                   .arg(pctKey)
                                   .arg(pct));
    // transformers: rotary_ndims = int(head_size * rotary_pct); pairs (i, i + r/2).
    const int rotaryDims = int(config.headDim() * pct) / 2 * 2;
    config.rope = readRopeSettings(path, json,
                                   json.contains(QStringLiteral("rotary_emb_base"))
                                       ? QStringLiteral("rotary_emb_base")
                                       : QStringLiteral("rope_theta"),
                                   rotaryDims);
    config.parallelResidual =
        booleanValue(path, json, QStringLiteral("use_parallel_residual"), true);
    const QString activation =
        json.value(QStringLiteral("hidden_act")).toString(QStringLiteral("gelu"));
    if (activation == QLatin1String("gelu"))
        config.gelu = GeluForm::Erf;
    else if (activation == QLatin1String("gelu_new") ||
             activation == QLatin1String("gelu_pytorch_tanh") ||
             activation == QLatin1String("gelu_fast"))
        config.gelu = GeluForm::Tanh;
    else
        refuseCheckpoint(path, QStringLiteral("hidden_act is %1; Attention Lab computes GELU, "
                                              "exact (\"gelu\") or in its tanh form "
                                              "(\"gelu_new\")")
                                   .arg(jsonValueText(json.value(QStringLiteral("hidden_act")))));
    return config;
}

namespace {

// query_key_value's output rows are [H, 3, d] (head h's q, k, v contiguous): the weight (3 width
// x width, HF's out x in) and bias reordered and transposed to [Q | K | V] in x out.
void fusedQkv(const Matrix<float>& weight, const Vector<float>& bias, int heads, Index d,
              GptNeoxBlock& block)
{
    const Index width = weight.cols();
    block.qkvWeight.resize(width, 3 * width);
    block.qkvBias.resize(3 * width);
    for (int h = 0; h < heads; ++h)
        for (Index part = 0; part < 3; ++part) {
            const Index from = (Index(h) * 3 + part) * d;
            const Index to = part * width + Index(h) * d;
            block.qkvWeight.middleCols(to, d) = weight.middleRows(from, d).transpose();
            block.qkvBias.segment(to, d) = bias.segment(from, d);
        }
}

GptNeoxBlock loadBlock(const ModelWeights& file, int l, const GptNeoxConfig& config)
{
    const QString p = QStringLiteral("gpt_neox.layers.%1.").arg(l);
    const Index width = config.width;
    const Index inner = config.innerWidth;
    GptNeoxBlock block;
    block.ln1Gain = file.vector(p + QStringLiteral("input_layernorm.weight"), width);
    block.ln1Bias = file.vector(p + QStringLiteral("input_layernorm.bias"), width);
    fusedQkv(file.matrix(p + QStringLiteral("attention.query_key_value.weight"), 3 * width, width),
             file.vector(p + QStringLiteral("attention.query_key_value.bias"), 3 * width),
             config.heads, config.headDim(), block);
    block.denseWeight =
        file.matrix(p + QStringLiteral("attention.dense.weight"), width, width).transpose();
    block.denseBias = file.vector(p + QStringLiteral("attention.dense.bias"), width);
    block.ln2Gain = file.vector(p + QStringLiteral("post_attention_layernorm.weight"), width);
    block.ln2Bias = file.vector(p + QStringLiteral("post_attention_layernorm.bias"), width);
    block.fcWeight =
        file.matrix(p + QStringLiteral("mlp.dense_h_to_4h.weight"), inner, width).transpose();
    block.fcBias = file.vector(p + QStringLiteral("mlp.dense_h_to_4h.bias"), inner);
    block.outWeight =
        file.matrix(p + QStringLiteral("mlp.dense_4h_to_h.weight"), width, inner).transpose();
    block.outBias = file.vector(p + QStringLiteral("mlp.dense_4h_to_h.bias"), width);
    return block;
}

}  // namespace

std::shared_ptr<const GptNeoxModel> loadGptNeoxModel(const QString& folder,
                                                     const MemoryBudget& budget)
{
    const GptNeoxConfig config =
        GptNeoxConfig::fromJson(QDir(folder).filePath(QStringLiteral("config.json")));
    std::shared_ptr<const TextTokenizer> tokenizer = loadTextTokenizer(folder);
    return GptNeoxModel::fromWeights(folder, config, std::move(tokenizer),
                                     CheckpointWeights(folder), budget);
}

GptNeoxNetwork GptNeoxNetwork::fromWeights(const Config& config, const ModelWeights& file)
{
    GptNeoxNetwork network;
    network.config = config;
    network.tokenEmbedding = file.matrix(QStringLiteral("gpt_neox.embed_in.weight"),
                                         config.vocabularySize, config.width);
    for (int l = 0; l < config.layers; ++l)
        network.blocks.push_back(loadBlock(file, l, config));
    network.finalGain =
        file.vector(QStringLiteral("gpt_neox.final_layer_norm.weight"), config.width);
    network.finalBias = file.vector(QStringLiteral("gpt_neox.final_layer_norm.bias"), config.width);
    // Pythia's head is its own embed_out; a checkpoint without it ties the head to embed_in.
    network.outputHead = file.optionalMatrix(QStringLiteral("embed_out.weight"),
                                             config.vocabularySize, config.width);
    return network;
}

ForwardResult GptNeoxNetwork::forward(const std::vector<int>& tokens, const ForwardOptions& options,
                                      DecodingState* decoding) const
{
    const Index length = Index(tokens.size());
    const Index width = config.width;
    const AttentionHeads heads{config.heads, config.heads, config.headDim()};
    const float epsilon = float(config.layerNormEpsilon);
    Matrix<float> x = embeddedTokens(tokenEmbedding, tokens);
    const RopeTable rope = ropeTable(config.rope, length, decoding ? decoding->position() : 0);
    Matrix<float> a(length, width);
    Matrix<float> qkv(length, 3 * width);
    Matrix<float> outputs(length, width);
    Matrix<float> hidden(length, config.innerWidth);
    ForwardResult result;
    // hidden = GELU(LN_2(u) W_fc + b_fc), the MLP's inner layer on the residual stream u.
    const auto mlpHidden = [&](Matrix<float>& u, const GptNeoxBlock& block) {
        addBiasAndNormalise(u, nullptr, block.ln2Gain, block.ln2Bias, epsilon, a);
        threadedProduct(a, block.fcWeight, hidden, false);
        addBiasGelu(hidden, block.fcBias, config.gelu);
    };
    for (std::size_t l = 0; l < blocks.size() && options.runs(l); ++l) {
        throwIfCancelled(options);
        const GptNeoxBlock& block = blocks[l];
        addBiasAndNormalise(x, nullptr, block.ln1Gain, block.ln1Bias, epsilon, a);
        const RotaryAttention attention{block.qkvWeight, block.qkvBias, heads, rope, 0, decoding};
        attention.run(a, int(l), options, result, qkv, outputs);
        if (config.parallelResidual) {
            mlpHidden(x, block);  // on x before the attention is added
            threadedProduct(outputs, block.denseWeight, x, true);
        } else {
            threadedProduct(outputs, block.denseWeight, x, true);
            x.rowwise() += block.denseBias.transpose();
            mlpHidden(x, block);
        }
        threadedProduct(hidden, block.outWeight, x, true);
        x.rowwise() += (config.parallelResidual ? Vector<float>(block.denseBias + block.outBias)
                                                : block.outBias)
                           .transpose();
    }
    throwIfCancelled(options);
    addBiasAndNormalise(x, nullptr, finalGain, finalBias, epsilon, a);
    if (decoding)
        decoding->advance(length);
    addLogits(a, outputHead, tokenEmbedding, options, result);
    return result;
}

}  // namespace attnlab

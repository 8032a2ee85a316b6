#include "model/llama_model.h"

#include "errors.h"
#include "model/decoding_state.h"
#include "model/checkpoint_weights.h"
#include "parallel.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonObject>

namespace attnlab {

using Eigen::Index;

LanguageModelInfo LlamaConfig::info() const
{
    LanguageModelInfo info(architecture, layers, heads, keyValueHeads, headDim, positions,
                           vocabularySize);
    info.rope = rope;
    info.slidingWindow = slidingWindow;
    return info;
}

LlamaConfig LlamaConfig::fromJson(const QString& path, ModelArchitecture architecture)
{
    const QJsonObject json = readModelConfig(path);
    LlamaConfig config;
    config.architecture = architecture;
    static_cast<TransformerSizes&>(config) = readTransformerSizes(path, json, false);
    config.positions = positiveInteger(path, json, QStringLiteral("max_position_embeddings"));
    config.vocabularySize = positiveInteger(path, json, QStringLiteral("vocab_size"));
    config.keyValueHeads =
        optionalPositiveInteger(path, json, QStringLiteral("num_key_value_heads"), config.heads);
    if (config.heads % config.keyValueHeads != 0)
        refuseCheckpoint(path, QStringLiteral("num_attention_heads (%1) is not a multiple of "
                                              "num_key_value_heads (%2)")
                                   .arg(config.heads)
                                   .arg(config.keyValueHeads));
    const QJsonValue headDim = json.value(QStringLiteral("head_dim"));
    if ((headDim.isUndefined() || headDim.isNull()) && config.width % config.heads != 0)
        refuseCheckpoint(path, QStringLiteral("hidden_size (%1) is not a multiple of "
                                              "num_attention_heads (%2), and head_dim is not given")
                                   .arg(config.width)
                                   .arg(config.heads));
    config.headDim = optionalPositiveInteger(path, json, QStringLiteral("head_dim"),
                                             config.width / config.heads);
    if (config.headDim % 2 != 0)
        refuseCheckpoint(
            path,
            QStringLiteral("head_dim is %1; RoPE rotates pairs of dimensions").arg(config.headDim));
    config.rmsNormEpsilon =
        positiveNumber(path, json, QStringLiteral("rms_norm_eps"), config.rmsNormEpsilon);
    config.rope = readRopeSettings(path, json, QStringLiteral("rope_theta"), config.headDim);
    const QJsonValue activation = json.value(QStringLiteral("hidden_act"));
    if (!activation.isUndefined() && activation.toString() != QLatin1String("silu"))
        refuseCheckpoint(path, QStringLiteral("hidden_act is %1; Attention Lab computes the "
                                              "gated MLP with silu")
                                   .arg(jsonValueText(activation)));
    if (booleanValue(path, json, QStringLiteral("mlp_bias"), false))
        refuseCheckpoint(path, QStringLiteral("mlp_bias is true; Attention Lab computes the "
                                              "gated MLP without biases"));
    if (architecture == ModelArchitecture::Qwen2 &&
        booleanValue(path, json, QStringLiteral("use_sliding_window"), false))
        refuseCheckpoint(path, QStringLiteral("use_sliding_window is true; Attention Lab "
                                              "computes Qwen2 with full causal attention"));
    if (architecture == ModelArchitecture::Mistral)
        config.slidingWindow =
            optionalPositiveInteger(path, json, QStringLiteral("sliding_window"), 0);
    return config;
}

namespace {

// [m_1^T | m_2^T | ...]: the HF Linear weights (out x in) side by side, stored in x out.
Matrix<float> stackedTransposed(const std::vector<Matrix<float>>& parts)
{
    Index columns = 0;
    for (const Matrix<float>& part : parts)
        columns += part.rows();
    Matrix<float> stacked(parts.front().cols(), columns);
    Index column = 0;
    for (const Matrix<float>& part : parts) {
        stacked.middleCols(column, part.rows()) = part.transpose();
        column += part.rows();
    }
    return stacked;
}

// Layer l's weights, the names under prefix ("model." or none).
LlamaBlock loadBlock(const ModelWeights& file, const QString& prefix, int l,
                     const LlamaConfig& config)
{
    const QString p = prefix + QStringLiteral("layers.%1.").arg(l);
    const Index width = config.width;
    const Index queryWidth = Index(config.heads) * config.headDim;
    const Index keyWidth = Index(config.keyValueHeads) * config.headDim;
    LlamaBlock block;
    block.inputNormGain = file.vector(p + QStringLiteral("input_layernorm.weight"), width);
    block.qkvWeight = stackedTransposed(
        {file.matrix(p + QStringLiteral("self_attn.q_proj.weight"), queryWidth, width),
         file.matrix(p + QStringLiteral("self_attn.k_proj.weight"), keyWidth, width),
         file.matrix(p + QStringLiteral("self_attn.v_proj.weight"), keyWidth, width)});
    // Qwen2's biases (and Llama's with attention_bias): the file decides.
    if (file.contains(p + QStringLiteral("self_attn.q_proj.bias"))) {
        block.qkvBias.resize(queryWidth + 2 * keyWidth);
        block.qkvBias << file.vector(p + QStringLiteral("self_attn.q_proj.bias"), queryWidth),
            file.vector(p + QStringLiteral("self_attn.k_proj.bias"), keyWidth),
            file.vector(p + QStringLiteral("self_attn.v_proj.bias"), keyWidth);
    }
    block.outputWeight =
        file.matrix(p + QStringLiteral("self_attn.o_proj.weight"), width, queryWidth).transpose();
    block.outputBias = file.optionalVector(p + QStringLiteral("self_attn.o_proj.bias"), width);
    block.postNormGain = file.vector(p + QStringLiteral("post_attention_layernorm.weight"), width);
    block.gateUpWeight = stackedTransposed(
        {file.matrix(p + QStringLiteral("mlp.gate_proj.weight"), config.innerWidth, width),
         file.matrix(p + QStringLiteral("mlp.up_proj.weight"), config.innerWidth, width)});
    block.downWeight =
        file.matrix(p + QStringLiteral("mlp.down_proj.weight"), width, config.innerWidth)
            .transpose();
    return block;
}

}  // namespace

std::shared_ptr<const LlamaModel> loadLlamaModel(const QString& folder, ModelArchitecture type,
                                                 const MemoryBudget& budget)
{
    const LlamaConfig config =
        LlamaConfig::fromJson(QDir(folder).filePath(QStringLiteral("config.json")), type);
    std::shared_ptr<const TextTokenizer> tokenizer = loadTextTokenizer(folder);
    return LlamaModel::fromWeights(folder, config, std::move(tokenizer), CheckpointWeights(folder),
                                   budget);
}

LlamaNetwork LlamaNetwork::fromWeights(const Config& config, const ModelWeights& file)
{
    LlamaNetwork network;
    network.config = config;
    // LlamaForCausalLM saves "model.embed_tokens.weight", LlamaModel "embed_tokens.weight".
    const QString prefix = file.contains(QStringLiteral("model.embed_tokens.weight"))
                               ? QStringLiteral("model.")
                               : QString();
    network.tokenEmbedding = file.matrix(prefix + QStringLiteral("embed_tokens.weight"),
                                         config.vocabularySize, config.width);
    for (int l = 0; l < config.layers; ++l)
        network.blocks.push_back(loadBlock(file, prefix, l, config));
    network.finalNormGain = file.vector(prefix + QStringLiteral("norm.weight"), config.width);
    // tie_word_embeddings: the file decides (no lm_head.weight: the head is embed_tokens).
    network.outputHead =
        file.optionalMatrix(QStringLiteral("lm_head.weight"), config.vocabularySize, config.width);
    return network;
}

ForwardResult LlamaNetwork::forward(const std::vector<int>& tokens, const ForwardOptions& options,
                                    DecodingState* decoding) const
{
    const Index length = Index(tokens.size());
    const Index width = config.width;
    const AttentionHeads heads{config.heads, config.keyValueHeads, config.headDim};
    const float epsilon = float(config.rmsNormEpsilon);
    Matrix<float> x = embeddedTokens(tokenEmbedding, tokens);
    const RopeTable rope = ropeTable(config.rope, length, decoding ? decoding->position() : 0);
    // The normalised a, [Q | K | V], the heads' outputs, [gate | up], the MLP's hidden layer.
    Matrix<float> a(length, width);
    Matrix<float> qkv(length, Index(heads.heads + 2 * heads.keyValueHeads) * heads.d);
    Matrix<float> outputs(length, Index(heads.heads) * heads.d);
    Matrix<float> gateUp(length, 2 * Index(config.innerWidth));
    Matrix<float> hidden(length, config.innerWidth);
    ForwardResult result;
    for (std::size_t l = 0; l < blocks.size() && options.runs(l); ++l) {
        throwIfCancelled(options);
        const LlamaBlock& block = blocks[l];
        rmsNormalise(x, block.inputNormGain, epsilon, a);
        const RotaryAttention attention{block.qkvWeight,      block.qkvBias, heads, rope,
                                        config.slidingWindow, decoding};
        attention.run(a, int(l), options, result, qkv, outputs);
        threadedProduct(outputs, block.outputWeight, x, true);
        if (block.outputBias.size() > 0)
            x.rowwise() += block.outputBias.transpose();
        rmsNormalise(x, block.postNormGain, epsilon, a);
        threadedProduct(a, block.gateUpWeight, gateUp, false);
        siluGate(gateUp, hidden);
        threadedProduct(hidden, block.downWeight, x, true);
    }
    throwIfCancelled(options);
    rmsNormalise(x, finalNormGain, epsilon, a);
    if (decoding)
        decoding->advance(length);
    addLogits(a, outputHead, tokenEmbedding, options, result);
    return result;
}

}  // namespace attnlab

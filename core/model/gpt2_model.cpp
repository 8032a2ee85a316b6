#include "model/gpt2_model.h"

#include "errors.h"
#include "model/safetensors.h"
#include "parallel.h"
#include "attention/row_ops.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnlab {

namespace {

using Eigen::Index;

// Rows per block of the element-wise passes (LayerNorm, bias, GELU).
constexpr Index kElementRows = 16;
// Queries per block of causal attention: a block's scores (64 x L floats) stay in L2.
constexpr Index kAttentionQueryBlock = 64;

[[noreturn]] void refuse(const QString& where, const QString& problem)
{
    throw InputError(QStringLiteral("%1: %2").arg(where, problem));
}

QString jsonText(const QJsonValue& value)
{
    switch (value.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: return QString::number(value.toDouble());
    case QJsonValue::String: return QLatin1Char('"') + value.toString() + QLatin1Char('"');
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    default: return QStringLiteral("missing");
    }
}

// config[key] as a positive int; InputError naming path and key otherwise.
int positiveInteger(const QString& path, const QJsonObject& config, const QString& key)
{
    const QJsonValue value = config.value(key);
    if (value.isUndefined())
        refuse(path, QStringLiteral("the key %1 is missing").arg(key));
    const double number = value.toDouble(-1);
    if (!value.isDouble() || number != std::trunc(number) || number < 1 ||
        number > double(std::numeric_limits<int>::max()))
        refuse(path, QStringLiteral("%1 is %2; expected a positive integer")
                         .arg(key, jsonText(value)));
    return int(number);
}

// x_i <- x_i + bias (when bias is not null), then out_i = LN(x_i) = (x_i - mean(x_i)) /
// sqrt(var(x_i) + eps) * g + b, for every row i (the bias a residual branch left to add).
void addBiasAndNormalise(Matrix<float>& x, const Vector<float>* bias, const Vector<float>& gain,
                         const Vector<float>& shift, float epsilon, Matrix<float>& out)
{
    forEachRowBlock(x.rows(), kElementRows, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) {
            auto row = x.row(i).array();
            if (bias)
                row += bias->transpose().array();
            const float mean = row.mean();
            const float variance = (row - mean).square().mean();
            const float inverse = 1.0f / std::sqrt(variance + epsilon);
            out.row(i).array() =
                (row - mean) * (inverse * gain.transpose().array()) + shift.transpose().array();
        }
    });
}

// h_ij <- GELU(h_ij + b_j), GELU(u) = u/2 (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))).
void addBiasGelu(Matrix<float>& h, const Vector<float>& bias)
{
    const float c = float(std::sqrt(2.0 / M_PI));
    forEachRowBlock(h.rows(), kElementRows, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) {
            auto row = h.row(i).array();
            row += bias.transpose().array();
            row = 0.5f * row * (1.0f + (c * (row + 0.044715f * row.cube())).tanh());
        }
    });
}

// dst = lhs rhs, or dst += lhs rhs when accumulate, on the engine threads: dst is cut into one
// block per thread along its longer side (rows of lhs, or columns of rhs in multiples of 16), and
// each thread runs a single-threaded Eigen product on its block. Eigen's own threading shares the
// packed operands between threads but makes them wait for each other; here each thread packs
// the shared operand itself (a small cost at these sizes) and never waits (measured faster for
// every GEMM of the forward pass, and much steadier on a loaded machine).
template <typename Rhs>
void threadedProduct(const Matrix<float>& lhs, const Rhs& rhs, Matrix<float>& dst, bool accumulate)
{
    const Index threads = engineThreads();
    const auto product = [&](auto&& block, const auto& left, const auto& right) {
        if (accumulate)
            block.noalias() += left * right;
        else
            block.noalias() = left * right;
    };
    if (dst.rows() >= dst.cols()) {
        const Index blockRows = (dst.rows() + threads - 1) / threads;
        forEachRowBlock(dst.rows(), blockRows, [&](Index begin, Index end) {
            product(dst.middleRows(begin, end - begin), lhs.middleRows(begin, end - begin), rhs);
        });
    } else {
        const Index blockCols = ((dst.cols() + threads - 1) / threads + 15) / 16 * 16;
        forEachRowBlock(dst.cols(), blockCols, [&](Index begin, Index end) {
            product(dst.middleCols(begin, end - begin), lhs, rhs.middleCols(begin, end - begin));
        });
    }
}

// Causal softmax attention of every head, on the [Q | K | V] matrix qkv (L x 3 n_embd, head h
// in columns [h d, (h + 1) d) of each third): O_h = softmax(s Q_h K_h^T + causal mask) V_h,
// written to columns [h d, (h + 1) d) of out. The work is split in (head, query block) tasks:
// a block of queries [i0, i1) meets keys [0, i1) only, as scores S = s Q K^T (a GEMM), the
// stable row softmax over the unmasked part of each row (the rest set to 0), then E V divided
// by the row sums. Every task runs single-threaded Eigen products on one engine thread, and the
// largest blocks (the last queries) are handed out first.
void causalAttention(const Matrix<float>& qkv, int heads, Index d, float scale,
                     Matrix<float>& out)
{
    const Index length = qkv.rows();
    const Index width = Index(heads) * d;
    const Index blocks = (length + kAttentionQueryBlock - 1) / kAttentionQueryBlock;
    const Index tasks = blocks * heads;
#pragma omp parallel
    {
        Matrix<float> scores(std::min(kAttentionQueryBlock, length), length);
        Vector<float> inverseSums(scores.rows());
#pragma omp for schedule(dynamic)
        for (Index task = 0; task < tasks; ++task) {
            const Index block = blocks - 1 - task / heads;
            const Index head = task % heads;
            const Index begin = block * kAttentionQueryBlock;
            const Index rows = std::min(kAttentionQueryBlock, length - begin);
            const Index keys = begin + rows;
            auto s = scores.topLeftCorner(rows, keys);
            s.noalias() = (qkv.block(begin, head * d, rows, d) * scale) *
                          qkv.block(0, width + head * d, keys, d).transpose();
            for (Index r = 0; r < rows; ++r) {
                float* row = s.row(r).data();
                const Index visible = begin + r + 1;  // keys 0 .. i
                const float rowMax = Eigen::Map<const Eigen::ArrayXf>(row, visible).maxCoeff();
                inverseSums[r] = 1.0f / expShiftedSum(row, visible, rowMax);
                std::fill(row + visible, row + keys, 0.0f);
            }
            auto o = out.block(begin, head * d, rows, d);
            o.noalias() = s * qkv.block(0, 2 * width + head * d, keys, d);
            o = inverseSums.head(rows).asDiagonal() * o;
        }
    }
}

}  // namespace

struct Gpt2Model::Weights {
    struct Layer {
        Vector<float> ln1Gain, ln1Bias;
        Matrix<float> attentionWeight;  // n_embd x 3 n_embd: [Q | K | V]
        Vector<float> attentionBias;
        Matrix<float> projectionWeight;  // n_embd x n_embd
        Vector<float> projectionBias;
        Vector<float> ln2Gain, ln2Bias;
        Matrix<float> fcWeight;  // n_embd x n_inner
        Vector<float> fcBias;
        Matrix<float> mlpWeight;  // n_inner x n_embd
        Vector<float> mlpBias;
    };
    Matrix<float> tokenEmbedding;     // wte: vocab x n_embd
    Matrix<float> positionEmbedding;  // wpe: n_positions x n_embd
    std::vector<Layer> layers;
    Vector<float> lnfGain, lnfBias;
    Matrix<float> outputHead;  // lm_head (vocab x n_embd) when not tied to wte, else empty
};

Gpt2Config Gpt2Config::fromJson(const QString& path)
{
    QFile file(path);
    if (!QFileInfo(path).isFile())
        refuse(path, QStringLiteral("no such file (a model folder holds config.json, the "
                                    ".safetensors weights and the tokenizer files)"));
    if (!file.open(QIODevice::ReadOnly))
        refuse(path, QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError)
        refuse(path, QStringLiteral("not JSON (%1 at byte %2)")
                         .arg(error.errorString())
                         .arg(error.offset));
    if (!document.isObject())
        refuse(path, QStringLiteral("not a JSON object"));
    const QJsonObject json = document.object();

    Gpt2Config config;
    config.layers = positiveInteger(path, json, QStringLiteral("n_layer"));
    config.heads = positiveInteger(path, json, QStringLiteral("n_head"));
    config.width = positiveInteger(path, json, QStringLiteral("n_embd"));
    config.positions = positiveInteger(path, json, QStringLiteral("n_positions"));
    config.vocabularySize = positiveInteger(path, json, QStringLiteral("vocab_size"));
    if (config.width % config.heads != 0)
        refuse(path, QStringLiteral("n_embd (%1) is not a multiple of n_head (%2)")
                         .arg(config.width)
                         .arg(config.heads));
    if (config.width > std::numeric_limits<int>::max() / 4)
        refuse(path, QStringLiteral("n_embd is %1; at most %2 is read")
                         .arg(config.width)
                         .arg(std::numeric_limits<int>::max() / 4));
    const QJsonValue inner = json.value(QStringLiteral("n_inner"));
    config.innerWidth = inner.isUndefined() || inner.isNull()
                            ? 4 * config.width
                            : positiveInteger(path, json, QStringLiteral("n_inner"));
    const QJsonValue epsilon = json.value(QStringLiteral("layer_norm_epsilon"));
    if (!epsilon.isUndefined()) {
        const double value = epsilon.toDouble(-1);
        if (!epsilon.isDouble() || !(value > 0) || !std::isfinite(value))
            refuse(path, QStringLiteral("layer_norm_epsilon is %1; expected a positive number")
                             .arg(jsonText(epsilon)));
        config.layerNormEpsilon = value;
    }
    // What the forward pass computes is GPT-2's own block; variants it does not compute are
    // refused rather than run wrongly.
    const QJsonValue activation = json.value(QStringLiteral("activation_function"));
    if (!activation.isUndefined()) {
        const QString name = activation.toString();
        if (name != QLatin1String("gelu_new") && name != QLatin1String("gelu_pytorch_tanh") &&
            name != QLatin1String("gelu_fast"))
            refuse(path, QStringLiteral("activation_function is %1; Attention Lab computes GPT-2's "
                                        "tanh GELU (\"gelu_new\")")
                             .arg(jsonText(activation)));
    }
    if (json.value(QStringLiteral("scale_attn_weights")).toBool(true) == false)
        refuse(path, QStringLiteral("scale_attn_weights is false; Attention Lab scales attention "
                                    "scores by 1/sqrt(d), as GPT-2 does"));
    if (json.value(QStringLiteral("scale_attn_by_inverse_layer_idx")).toBool(false))
        refuse(path, QStringLiteral("scale_attn_by_inverse_layer_idx is true; Attention Lab "
                                    "scales attention scores by 1/sqrt(d) only, as GPT-2 does"));
    config.tiedOutputHead = json.value(QStringLiteral("tie_word_embeddings")).toBool(true);
    return config;
}

Gpt2Model::Gpt2Model() = default;
Gpt2Model::~Gpt2Model() = default;

const QString& Gpt2Model::folder() const { return m_folder; }
const Gpt2Config& Gpt2Model::config() const { return m_config; }
const Gpt2Tokenizer& Gpt2Model::tokenizer() const { return m_tokenizer; }

std::shared_ptr<const Gpt2Model> Gpt2Model::load(const QString& folder)
{
    const QDir dir(folder);
    if (!QFileInfo(folder).isDir())
        refuse(folder, QStringLiteral("no such model folder (a model is a folder holding "
                                      "config.json, the .safetensors weights and the tokenizer "
                                      "files)"));
    std::shared_ptr<Gpt2Model> model(new Gpt2Model);
    model->m_folder = folder;
    model->m_config = Gpt2Config::fromJson(dir.filePath(QStringLiteral("config.json")));
    const Gpt2Config& config = model->m_config;

    // model.safetensors, or the only .safetensors file of the folder.
    QString weightsPath = dir.filePath(QStringLiteral("model.safetensors"));
    if (!QFileInfo::exists(weightsPath)) {
        const QStringList found =
            dir.entryList({QStringLiteral("*.safetensors")}, QDir::Files, QDir::Name);
        if (found.isEmpty())
            refuse(folder, QStringLiteral("no .safetensors weights in the model folder "
                                          "(model.safetensors; Attention Lab does not read "
                                          "PyTorch .bin checkpoints)"));
        if (found.size() > 1)
            refuse(folder, QStringLiteral("%1 .safetensors files (%2) and no model.safetensors: "
                                          "Attention Lab reads one file of weights")
                               .arg(found.size())
                               .arg(found.join(QStringLiteral(", "))));
        weightsPath = dir.filePath(found.front());
    }

    model->m_tokenizer = Gpt2Tokenizer::fromFolder(folder);

    const SafetensorsFile file(weightsPath);
    // GPT2LMHeadModel saves "transformer.wte.weight", GPT2Model "wte.weight".
    const QString prefix = file.find(QStringLiteral("transformer.wte.weight"))
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
    weights->tokenEmbedding = matrix(QStringLiteral("wte.weight"), config.vocabularySize, width);
    weights->positionEmbedding = matrix(QStringLiteral("wpe.weight"), config.positions, width);
    for (int l = 0; l < config.layers; ++l) {
        const QString h = QStringLiteral("h.%1.").arg(l);
        Weights::Layer layer;
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
        weights->layers.push_back(std::move(layer));
    }
    weights->lnfGain = vector(QStringLiteral("ln_f.weight"), width);
    weights->lnfBias = vector(QStringLiteral("ln_f.bias"), width);
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
    const Weights& weights = *m_weights;
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
    const auto checkCancelled = [&] {
        if (options.cancelled && options.cancelled())
            throw Cancelled();
    };

    const Index width = config.width;
    const Index d = config.headDim();
    const float epsilon = float(config.layerNormEpsilon);
    const float scale = float(1 / std::sqrt(double(d)));

    ForwardResult result;
    // The residual stream x, the normalised a = LN(x), [Q | K | V], the heads' outputs, the MLP's
    // hidden layer.
    Matrix<float> x(length, width);
    Matrix<float> a(length, width);
    Matrix<float> qkv(length, 3 * width);
    Matrix<float> heads(length, width);
    Matrix<float> hidden(length, config.innerWidth);
    forEachRowBlock(length, kElementRows, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i)
            x.row(i) = weights.tokenEmbedding.row(tokens[std::size_t(i)]) +
                       weights.positionEmbedding.row(i);
    });
    // The bias of the last residual branch, added to x in the next LayerNorm pass.
    const Vector<float>* pendingBias = nullptr;

    for (int l = 0; l < config.layers; ++l) {
        checkCancelled();
        const Weights::Layer& layer = weights.layers[std::size_t(l)];
        addBiasAndNormalise(x, pendingBias, layer.ln1Gain, layer.ln1Bias, epsilon, a);
        threadedProduct(a, layer.attentionWeight, qkv, false);
        LayerQkv* captured = nullptr;
        if (options.captureQkv) {
            result.layers.push_back({Matrix<float>(length, width), Matrix<float>(length, width),
                                     Matrix<float>(length, width)});
            captured = &result.layers.back();
        }
        forEachRowBlock(length, kElementRows, [&](Index begin, Index end) {
            for (Index i = begin; i < end; ++i) {
                qkv.row(i) += layer.attentionBias.transpose();
                if (captured) {
                    captured->q.row(i) = qkv.row(i).segment(0, width);
                    captured->k.row(i) = qkv.row(i).segment(width, width);
                    captured->v.row(i) = qkv.row(i).segment(2 * width, width);
                }
            }
        });

        const bool replaced = std::size_t(l) < options.replaced.size() &&
                              options.replaced[std::size_t(l)] && options.replacement;
        if (replaced) {
            for (int h = 0; h < config.heads; ++h) {
                const Matrix<float> q = qkv.middleCols(h * d, d);
                const Matrix<float> k = qkv.middleCols(width + h * d, d);
                const Matrix<float> v = qkv.middleCols(2 * width + h * d, d);
                const Matrix<float> o = options.replacement(l, h, q, k, v);
                if (o.rows() != length || o.cols() != d)
                    throw std::invalid_argument(
                        QStringLiteral("Gpt2Model::forward: the replacement of layer %1 head %2 "
                                       "gave a %3 x %4 output; expected %5 x %6")
                            .arg(l)
                            .arg(h)
                            .arg(o.rows())
                            .arg(o.cols())
                            .arg(length)
                            .arg(d)
                            .toStdString());
                heads.middleCols(h * d, d) = o;
            }
        } else {
            causalAttention(qkv, config.heads, d, scale, heads);
        }

        // x = x + O W_proj + b_proj (the bias added with LN_2), then the MLP.
        threadedProduct(heads, layer.projectionWeight, x, true);
        addBiasAndNormalise(x, &layer.projectionBias, layer.ln2Gain, layer.ln2Bias, epsilon,
                            a);
        threadedProduct(a, layer.fcWeight, hidden, false);
        addBiasGelu(hidden, layer.fcBias);
        threadedProduct(hidden, layer.mlpWeight, x, true);
        pendingBias = &layer.mlpBias;
    }
    checkCancelled();
    if (options.logits) {
        addBiasAndNormalise(x, pendingBias, weights.lnfGain, weights.lnfBias, epsilon, a);
        const Matrix<float>& head =
            weights.outputHead.size() > 0 ? weights.outputHead : weights.tokenEmbedding;
        result.logits.resize(length, config.vocabularySize);
        threadedProduct(a, head.transpose(), result.logits, false);
    }
    return result;
}

}  // namespace attnlab

#include "model/transformer_blocks.h"

#include "attention/row_ops.h"
#include "errors.h"
#include "model/decoding_state.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab {

namespace {

using Eigen::Index;

// Rows per block of the element-wise passes (LayerNorm, bias, GELU).
constexpr Index kElementRows = 16;
// Queries per block of attention: a block's scores (64 x L floats) stay in L2.
constexpr Index kAttentionQueryBlock = 64;

}  // namespace

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

void throwIfCancelled(const ForwardOptions& options)
{
    if (options.cancelled && options.cancelled())
        throw Cancelled();
}

Matrix<float> embeddedTokens(const Matrix<float>& embedding, const std::vector<int>& tokens)
{
    const Index length = Index(tokens.size());
    Matrix<float> x(length, embedding.cols());
    forEachRowBlock(length, kElementRows, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i)
            x.row(i) = embedding.row(tokens[std::size_t(i)]);
    });
    return x;
}

void addLogits(const Matrix<float>& normalised, const Matrix<float>& outputHead,
               const Matrix<float>& tokenEmbedding, const ForwardOptions& options,
               ForwardResult& result)
{
    if (!options.logits)
        return;
    const Matrix<float>& head = outputHead.size() > 0 ? outputHead : tokenEmbedding;
    result.logits.resize(normalised.rows(), head.rows());
    threadedProduct(normalised, head.transpose(), result.logits, false);
}

void addBiasGelu(Matrix<float>& h, const Vector<float>& bias, GeluForm form)
{
    const float c = float(std::sqrt(2.0 / M_PI));
    const float inverseRoot2 = float(1 / std::sqrt(2.0));
    forEachRowBlock(h.rows(), kElementRows, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) {
            auto row = h.row(i).array();
            row += bias.transpose().array();
            if (form == GeluForm::Tanh) {
                row = 0.5f * row * (1.0f + (c * (row + 0.044715f * row.cube())).tanh());
            } else {
                float* u = h.row(i).data();
                for (Index j = 0; j < h.cols(); ++j)
                    u[j] = 0.5f * u[j] * (1.0f + std::erf(u[j] * inverseRoot2));
            }
        }
    });
}

// The work is split in (head, query block) tasks: a block of queries [i0, i1) meets keys
// [k0, i1) when causal (else all L; k0 > 0 with a window), as scores S = s Q K^T (a GEMM), the
// stable row softmax over the unmasked part of each row (the rest set to 0), then E V divided by
// the row sums. Every task runs single-threaded Eigen products on one engine thread, and the
// largest blocks (the last queries, when causal) are handed out first.
void softmaxAttention(const Matrix<float>& qkv, const AttentionHeads& shape, float scale,
                      bool causal, Index window, Matrix<float>& out)
{
    const Index length = qkv.rows();
    const Index d = shape.d;
    const int heads = shape.heads;
    const int group = shape.heads / shape.keyValueHeads;
    const Index keyColumn = Index(heads) * d;
    const Index valueColumn = keyColumn + Index(shape.keyValueHeads) * d;
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
            const Index kv = head / group;
            const Index begin = block * kAttentionQueryBlock;
            const Index rows = std::min(kAttentionQueryBlock, length - begin);
            const Index end = causal ? begin + rows : length;  // keys [first, end)
            const Index first = window > 0 ? std::max<Index>(0, begin - window + 1) : 0;
            const Index keys = end - first;
            auto s = scores.topLeftCorner(rows, keys);
            s.noalias() = (qkv.block(begin, head * d, rows, d) * scale) *
                          qkv.block(first, keyColumn + kv * d, keys, d).transpose();
            for (Index r = 0; r < rows; ++r) {
                float* row = s.row(r).data();
                const Index i = begin + r;
                // Visible keys: [low, high) of the block's keys.
                const Index low = window > 0 ? std::max<Index>(0, i - window + 1) - first : 0;
                const Index high = causal ? i + 1 - first : keys;
                const float rowMax =
                    Eigen::Map<const Eigen::ArrayXf>(row + low, high - low).maxCoeff();
                inverseSums[r] = 1.0f / expShiftedSum(row + low, high - low, rowMax);
                std::fill(row, row + low, 0.0f);
                std::fill(row + high, row + keys, 0.0f);
            }
            auto o = out.block(begin, head * d, rows, d);
            o.noalias() = s * qkv.block(first, valueColumn + kv * d, keys, d);
            o = inverseSums.head(rows).asDiagonal() * o;
        }
    }
}

void replacedAttention(const Matrix<float>& qkv, const AttentionHeads& shape, int layer,
                       const HeadAttention& replacement, Matrix<float>& out)
{
    const Index length = qkv.rows();
    const Index d = shape.d;
    const int group = shape.heads / shape.keyValueHeads;
    const Index keyColumn = Index(shape.heads) * d;
    const Index valueColumn = keyColumn + Index(shape.keyValueHeads) * d;
    for (int h = 0; h < shape.heads; ++h) {
        const Index kv = h / group;
        const Matrix<float> q = qkv.middleCols(h * d, d);
        const Matrix<float> k = qkv.middleCols(keyColumn + kv * d, d);
        const Matrix<float> v = qkv.middleCols(valueColumn + kv * d, d);
        const Matrix<float> o = replacement(layer, h, q, k, v);
        if (o.rows() != length || o.cols() != d)
            throw std::invalid_argument(QStringLiteral("forward: the replacement of layer %1 head "
                                                       "%2 gave a %3 x %4 output; expected %5 x %6")
                                            .arg(layer)
                                            .arg(h)
                                            .arg(o.rows())
                                            .arg(o.cols())
                                            .arg(length)
                                            .arg(d)
                                            .toStdString());
        out.middleCols(h * d, d) = o;
    }
}

Matrix<float> TransformerStack::run(Matrix<float>& x, const ForwardOptions& options,
                                    ForwardResult& result, DecodingState* decoding) const
{
    const Index length = x.rows();
    const Index width = x.cols();
    const Index d = width / heads;
    const float scale = float(1 / std::sqrt(double(d)));
    const Index inner = blocks.empty() ? 0 : blocks.front().fcWeight.cols();

    // The normalised a = LN(x), [Q | K | V], the heads' outputs, the MLP's hidden layer.
    Matrix<float> a(length, width);
    Matrix<float> qkv(length, 3 * width);
    Matrix<float> outputs(length, width);
    Matrix<float> hidden(length, inner);
    // The bias of the last residual branch, added to x in the next LayerNorm pass.
    const Vector<float>* pendingBias = nullptr;
    for (std::size_t l = 0; l < blocks.size() && options.runs(l); ++l) {
        throwIfCancelled(options);
        const TransformerBlock& block = blocks[l];
        addBiasAndNormalise(x, pendingBias, block.ln1Gain, block.ln1Bias, layerNormEpsilon, a);
        threadedProduct(a, block.attentionWeight, qkv, false);
        LayerQkv* captured = nullptr;
        if (options.captureQkv) {
            result.layers.push_back({Matrix<float>(length, width), Matrix<float>(length, width),
                                     Matrix<float>(length, width)});
            captured = &result.layers.back();
        }
        forEachRowBlock(length, kElementRows, [&](Index begin, Index end) {
            for (Index i = begin; i < end; ++i) {
                qkv.row(i) += block.attentionBias.transpose();
                if (captured) {
                    captured->q.row(i) = qkv.row(i).segment(0, width);
                    captured->k.row(i) = qkv.row(i).segment(width, width);
                    captured->v.row(i) = qkv.row(i).segment(2 * width, width);
                }
            }
        });

        const AttentionHeads shape{heads, heads, d};
        if (decoding)
            decoding->attend(int(l), qkv, outputs);
        else if (l < options.replaced.size() && options.replaced[l] && options.replacement)
            replacedAttention(qkv, shape, int(l), options.replacement, outputs);
        else
            softmaxAttention(qkv, shape, scale, causal, 0, outputs);

        // x = x + O W_proj + b_proj (the bias added with LN_2), then the MLP.
        threadedProduct(outputs, block.projectionWeight, x, true);
        addBiasAndNormalise(x, &block.projectionBias, block.ln2Gain, block.ln2Bias,
                            layerNormEpsilon, a);
        threadedProduct(a, block.fcWeight, hidden, false);
        addBiasGelu(hidden, block.fcBias, gelu);
        threadedProduct(hidden, block.mlpWeight, x, true);
        pendingBias = &block.mlpBias;
    }
    throwIfCancelled(options);
    addBiasAndNormalise(x, pendingBias, finalGain, finalBias, layerNormEpsilon, a);
    if (decoding)
        decoding->advance(length);
    return a;
}

TransformerBlock StackTensorReader::block(const QString& prefix, Index width, Index inner) const
{
    const QString weight = QStringLiteral(".weight");
    const QString bias = QStringLiteral(".bias");
    TransformerBlock block;
    block.ln1Gain = vector(prefix + names.ln1 + weight, width);
    block.ln1Bias = vector(prefix + names.ln1 + bias, width);
    block.projectionWeight = linear(prefix + names.projection + weight, width, width);
    block.projectionBias = vector(prefix + names.projection + bias, width);
    block.ln2Gain = vector(prefix + names.ln2 + weight, width);
    block.ln2Bias = vector(prefix + names.ln2 + bias, width);
    block.fcWeight = linear(prefix + names.fc + weight, width, inner);
    block.fcBias = vector(prefix + names.fc + bias, inner);
    block.mlpWeight = linear(prefix + names.mlp + weight, inner, width);
    block.mlpBias = vector(prefix + names.mlp + bias, width);
    return block;
}

void StackTensorReader::finalNorm(Index width, TransformerStack& stack) const
{
    stack.finalGain = vector(names.final + QStringLiteral(".weight"), width);
    stack.finalBias = vector(names.final + QStringLiteral(".bias"), width);
}

}  // namespace attnlab

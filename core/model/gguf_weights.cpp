#include "model/gguf_weights.h"

#include "errors.h"

#include <algorithm>

namespace attnlab {

using Eigen::Index;

GgufWeights::GgufWeights(const GgufFile& file, ModelArchitecture architecture, int layers,
                         int heads, int keyValueHeads)
    : m_file(file)
{
    const auto block = [](const char* pattern, int l) {
        return QString::fromLatin1(pattern).arg(l);
    };
    switch (architecture) {
        case ModelArchitecture::Llama:
        case ModelArchitecture::Mistral:
        case ModelArchitecture::Qwen2: {
            // llama.cpp's converter permutes q and k for the llama architecture only.
            const bool pairs = architecture != ModelArchitecture::Qwen2;
            const Layout rotary = pairs ? Layout::RotaryPairs : Layout::Stored;
            add(QStringLiteral("model.embed_tokens.weight"), QStringLiteral("token_embd.weight"));
            add(QStringLiteral("model.norm.weight"), QStringLiteral("output_norm.weight"));
            add(QStringLiteral("lm_head.weight"), QStringLiteral("output.weight"));
            for (int l = 0; l < layers; ++l) {
                const QString hf = QStringLiteral("model.layers.%1.").arg(l);
                add(hf + QStringLiteral("input_layernorm.weight"),
                    block("blk.%1.attn_norm.weight", l));
                for (const char* kind : {"weight", "bias"}) {
                    const QString k = QLatin1String(kind);
                    add(hf + QStringLiteral("self_attn.q_proj.") + k,
                        block("blk.%1.attn_q.", l) + k, rotary, heads);
                    add(hf + QStringLiteral("self_attn.k_proj.") + k,
                        block("blk.%1.attn_k.", l) + k, rotary, keyValueHeads);
                    add(hf + QStringLiteral("self_attn.v_proj.") + k,
                        block("blk.%1.attn_v.", l) + k);
                    add(hf + QStringLiteral("self_attn.o_proj.") + k,
                        block("blk.%1.attn_output.", l) + k);
                }
                add(hf + QStringLiteral("post_attention_layernorm.weight"),
                    block("blk.%1.ffn_norm.weight", l));
                add(hf + QStringLiteral("mlp.gate_proj.weight"),
                    block("blk.%1.ffn_gate.weight", l));
                add(hf + QStringLiteral("mlp.up_proj.weight"), block("blk.%1.ffn_up.weight", l));
                add(hf + QStringLiteral("mlp.down_proj.weight"),
                    block("blk.%1.ffn_down.weight", l));
            }
            break;
        }
        case ModelArchitecture::GptNeox:
            add(QStringLiteral("gpt_neox.embed_in.weight"), QStringLiteral("token_embd.weight"));
            add(QStringLiteral("embed_out.weight"), QStringLiteral("output.weight"));
            for (const char* kind : {"weight", "bias"}) {
                const QString k = QLatin1String(kind);
                add(QStringLiteral("gpt_neox.final_layer_norm.") + k,
                    QStringLiteral("output_norm.") + k);
                for (int l = 0; l < layers; ++l) {
                    const QString hf = QStringLiteral("gpt_neox.layers.%1.").arg(l);
                    add(hf + QStringLiteral("input_layernorm.") + k,
                        block("blk.%1.attn_norm.", l) + k);
                    add(hf + QStringLiteral("attention.query_key_value.") + k,
                        block("blk.%1.attn_qkv.", l) + k, Layout::FusedQkv, heads);
                    add(hf + QStringLiteral("attention.dense.") + k,
                        block("blk.%1.attn_output.", l) + k);
                    add(hf + QStringLiteral("post_attention_layernorm.") + k,
                        block("blk.%1.ffn_norm.", l) + k);
                    add(hf + QStringLiteral("mlp.dense_h_to_4h.") + k,
                        block("blk.%1.ffn_up.", l) + k);
                    add(hf + QStringLiteral("mlp.dense_4h_to_h.") + k,
                        block("blk.%1.ffn_down.", l) + k);
                }
            }
            break;
        case ModelArchitecture::Gpt2:
            add(QStringLiteral("wte.weight"), QStringLiteral("token_embd.weight"));
            add(QStringLiteral("wpe.weight"), QStringLiteral("position_embd.weight"));
            add(QStringLiteral("lm_head.weight"), QStringLiteral("output.weight"));
            for (const char* kind : {"weight", "bias"}) {
                const QString k = QLatin1String(kind);
                // The converter transposed the Conv1D weights (in x out) to out x in.
                const Layout conv =
                    k == QLatin1String("weight") ? Layout::Transposed : Layout::Stored;
                add(QStringLiteral("ln_f.") + k, QStringLiteral("output_norm.") + k);
                for (int l = 0; l < layers; ++l) {
                    const QString hf = QStringLiteral("h.%1.").arg(l);
                    add(hf + QStringLiteral("ln_1.") + k, block("blk.%1.attn_norm.", l) + k);
                    add(hf + QStringLiteral("attn.c_attn.") + k, block("blk.%1.attn_qkv.", l) + k,
                        conv);
                    add(hf + QStringLiteral("attn.c_proj.") + k,
                        block("blk.%1.attn_output.", l) + k, conv);
                    add(hf + QStringLiteral("ln_2.") + k, block("blk.%1.ffn_norm.", l) + k);
                    add(hf + QStringLiteral("mlp.c_fc.") + k, block("blk.%1.ffn_up.", l) + k, conv);
                    add(hf + QStringLiteral("mlp.c_proj.") + k, block("blk.%1.ffn_down.", l) + k,
                        conv);
                }
            }
            break;
        case ModelArchitecture::Vit: break;
    }
}

void GgufWeights::add(const QString& name, const QString& tensor, Layout layout, int heads)
{
    m_sources.insert(name, Source{tensor, layout, heads});
}

const GgufWeights::Source& GgufWeights::sourceOf(const QString& name) const
{
    const auto it = m_sources.constFind(name);
    if (it == m_sources.cend())
        m_file.refuse(QStringLiteral("the model needs the checkpoint tensor %1, which no tensor "
                                     "of a GGUF file stands for")
                          .arg(name));
    return it.value();
}

bool GgufWeights::contains(const QString& name) const
{
    const auto it = m_sources.constFind(name);
    return it != m_sources.cend() && m_file.find(it->tensor);
}

Matrix<float> GgufWeights::matrix(const QString& name, Index rows, Index cols) const
{
    const Source& source = sourceOf(name);
    switch (source.layout) {
        case Layout::Stored: return m_file.matrix(source.tensor, rows, cols);
        case Layout::Transposed: return m_file.matrix(source.tensor, cols, rows).transpose();
        case Layout::RotaryPairs:
        case Layout::FusedQkv: break;
    }
    const Matrix<float> stored = m_file.matrix(source.tensor, rows, cols);
    Matrix<float> result(rows, cols);
    toCheckpointRows(source, stored.data(), rows, cols, result.data());
    return result;
}

Vector<float> GgufWeights::vector(const QString& name, Index size) const
{
    const Source& source = sourceOf(name);
    const Vector<float> stored = m_file.vector(source.tensor, size);
    if (source.layout == Layout::Stored || source.layout == Layout::Transposed)
        return stored;
    // The bias of a rearranged weight: its rows, one value each.
    Vector<float> result(size);
    toCheckpointRows(source, stored.data(), size, 1, result.data());
    return result;
}

void GgufWeights::toCheckpointRows(const Source& source, const float* values, Index rows,
                                   Index width, float* out) const
{
    const Index heads = source.heads;
    const auto move = [&](auto&& checkpointRow) {
        for (Index r = 0; r < rows; ++r)
            std::copy(values + r * width, values + (r + 1) * width, out + checkpointRow(r) * width);
    };
    if (source.layout == Layout::RotaryPairs) {
        // Row h d + 2i + c of the file is row h d + c d/2 + i of the checkpoint.
        const Index d = rows / heads;
        if (rows % heads != 0 || d % 2 != 0)
            m_file.refuseTensor(source.tensor, QStringLiteral("has %1 rows, which %2 heads of an "
                                                              "even dimension cannot share")
                                                   .arg(rows)
                                                   .arg(heads));
        move([&](Index r) { return r / d * d + r % 2 * (d / 2) + r % d / 2; });
    } else {
        // Row p W + h d + j of the file ([Q; K; V], W = H d) is row (3 h + p) d + j.
        const Index part = rows / 3;
        const Index d = part / heads;
        if (rows % 3 != 0 || part % heads != 0)
            m_file.refuseTensor(
                source.tensor,
                QStringLiteral("has %1 rows, not 3 H d for H = %2 heads").arg(rows).arg(heads));
        move([&](Index r) { return (3 * (r % part / d) + r / part) * d + r % d; });
    }
}

double GgufWeights::floatBytes() const
{
    return m_file.floatBytes();
}

}  // namespace attnlab

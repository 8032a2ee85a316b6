#pragma once

#include "model/checkpoint_files.h"
#include "model/gguf_file.h"
#include "model/model_weights.h"

#include <QHash>
#include <QString>

namespace attnlab {

// The tensors of a GGUF file read as the Hugging Face checkpoint they were converted from: each
// Hugging Face name ("model.layers.0.self_attn.q_proj.weight") stands for a GGUF tensor
// ("blk.0.attn_q.weight", llama.cpp's names) and the way llama.cpp's convert_hf_to_gguf.py laid
// it out, undone here:
//   - as stored: a GGUF matrix of dimensions [in, out] is the PyTorch out x in weight;
//   - transposed: GPT-2's Conv1D weights (in x out in the checkpoint) were transposed;
//   - rotary pairs (the llama architecture's attn_q and attn_k, by H and H_kv heads): the
//     converter permuted each head's rows so that RoPE rotates adjacent pairs; row 2i + c of a
//     head (c = 0, 1; i < d/2) of the file is row c d/2 + i of the checkpoint, which rotates the
//     halves (rotate-half);
//   - fused qkv (gptneox's attn_qkv, H heads of d): stored as [Q; K; V], while the checkpoint's
//     query_key_value holds each head's q, k, v together ([H, 3, d]).
// The tensors are dequantized when asked for (GgufFile::matrix); problems name the GGUF tensor.
class GgufWeights : public ModelWeights {
public:
    // The names of `architecture` (Llama and Qwen2: "model." prefixed; GPT-NeoX; GPT-2 without
    // "transformer.") for `layers` blocks; heads and keyValueHeads for the layouts that need them.
    // Only Llama's q and k are rotary pairs (Qwen2 keeps rotate-half: the converter does not
    // permute it).
    GgufWeights(const GgufFile& file, ModelArchitecture architecture, int layers, int heads,
                int keyValueHeads);

    bool contains(const QString& name) const override;
    Matrix<float> matrix(const QString& name, Eigen::Index rows, Eigen::Index cols) const override;
    Vector<float> vector(const QString& name, Eigen::Index size) const override;
    double floatBytes() const override;

private:
    enum class Layout { Stored, Transposed, RotaryPairs, FusedQkv };
    struct Source {
        QString tensor;  // the GGUF name
        Layout layout = Layout::Stored;
        int heads = 0;  // RotaryPairs and FusedQkv
    };
    // The source of a Hugging Face name; refused, naming the file, for a name the architecture's
    // table does not hold.
    const Source& sourceOf(const QString& name) const;
    void add(const QString& name, const QString& tensor, Layout layout = Layout::Stored,
             int heads = 0);
    // values (rows of `width` floats, in the file's order) in the checkpoint's order of rows, for
    // the RotaryPairs and FusedQkv layouts; refused, naming the tensor, when the rows cannot be
    // the source's heads.
    void toCheckpointRows(const Source& source, const float* values, Eigen::Index rows,
                          Eigen::Index width, float* out) const;

    const GgufFile& m_file;
    QHash<QString, Source> m_sources;
};

}  // namespace attnlab

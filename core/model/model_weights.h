#pragma once

#include "types.h"

#include <QString>

namespace attnlab {

// Where a model's weights come from, asked for by the names and shapes of the Hugging Face
// checkpoint ("model.layers.0.self_attn.q_proj.weight", out x in): a checkpoint folder's
// safetensors (CheckpointWeights), or a GGUF file read as that checkpoint (GgufWeights). The
// architectures build their blocks from these names alone, whatever file the weights are in;
// each tensor is converted to float when asked for.
class ModelWeights {
public:
    virtual ~ModelWeights() = default;

    virtual bool contains(const QString& name) const = 0;
    // The tensor called name as a rows x cols matrix in the checkpoint's layout, or a vector of
    // size floats. Throws InputError naming the file and the tensor (as the file names it) when
    // it is missing, has another shape, or cannot be read.
    virtual Matrix<float> matrix(const QString& name, Eigen::Index rows,
                                 Eigen::Index cols) const = 0;
    virtual Vector<float> vector(const QString& name, Eigen::Index size) const = 0;
    // matrix() and vector() of a tensor the checkpoint may lack: empty when it has no such name.
    Matrix<float> optionalMatrix(const QString& name, Eigen::Index rows, Eigen::Index cols) const
    {
        return contains(name) ? matrix(name, rows, cols) : Matrix<float>();
    }
    Vector<float> optionalVector(const QString& name, Eigen::Index size) const
    {
        return contains(name) ? vector(name, size) : Vector<float>();
    }
    // The memory of the weights once in float.
    virtual double floatBytes() const = 0;
};

}  // namespace attnlab

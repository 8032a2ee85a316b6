#pragma once

#include "model/model_weights.h"
#include "model/safetensors.h"
#include "types.h"

#include <QByteArrayView>
#include <QHash>
#include <QString>

#include <map>
#include <memory>
#include <vector>

namespace attnlab {

// The weights of a Hugging Face checkpoint folder, in one .safetensors file or in shards listed
// by model.safetensors.index.json, every file memory-mapped and each tensor converted to float
// when asked for (SafetensorsFile), so a model is read one tensor, one layer, at a time.

// The "weight_map" of a model.safetensors.index.json (the text `json`, read from `path`): tensor
// name -> shard file name. Throws InputError naming path when the text is not a JSON object, has
// no "weight_map" object, a value is not a file name of the folder (a non-empty string without
// '/', '\' or "..") or the map is empty. "metadata" is not read.
std::map<QString, QString> parseShardIndex(QByteArrayView json, const QString& path);

class CheckpointWeights : public ModelWeights {
public:
    // folder/model.safetensors.index.json when it exists: every shard it names is opened, and
    // each shard must hold the tensors the index gives it, no tensor may be in two shards.
    // Otherwise the one file weightsPath(folder) gives. Throws InputError naming the file at
    // fault: a shard missing or damaged, a tensor the index puts in a shard that does not hold
    // it, a tensor in two shards.
    explicit CheckpointWeights(const QString& folder);
    ~CheckpointWeights() override;
    CheckpointWeights(const CheckpointWeights&) = delete;
    CheckpointWeights& operator=(const CheckpointWeights&) = delete;

    bool contains(const QString& name) const override;
    // The tensor called name as a rows x cols matrix (C order, as stored), or a vector of size
    // floats. Throws InputError naming the file (the index for a tensor in none of the shards)
    // and the tensor when it is missing or has another shape, as SafetensorsFile::matrix does.
    Matrix<float> matrix(const QString& name, Eigen::Index rows, Eigen::Index cols) const override;
    Vector<float> vector(const QString& name, Eigen::Index size) const override;
    // 4 bytes for every element of every floating-point tensor (F32, F16, BF16, F64; not the
    // integer or boolean buffers some checkpoints keep, such as causal masks): the memory of the
    // weights once in float.
    double floatBytes() const override;

private:
    const SafetensorsFile& fileOf(const QString& name) const;

    QString m_source;  // the index, or the one weights file: where a missing tensor is looked for
    std::vector<std::unique_ptr<SafetensorsFile>> m_files;
    QHash<QString, const SafetensorsFile*> m_fileOf;  // tensor -> its file
};

}  // namespace attnlab

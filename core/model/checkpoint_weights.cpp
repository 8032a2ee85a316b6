#include "model/checkpoint_weights.h"

#include "errors.h"
#include "model/checkpoint_files.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>

namespace attnlab {

std::map<QString, QString> parseShardIndex(QByteArrayView json, const QString& path)
{
    const QJsonValue map =
        parseJsonObject(json.toByteArray(), path).value(QStringLiteral("weight_map"));
    if (!map.isObject())
        refuseCheckpoint(path, QStringLiteral("weight_map is %1; expected an object of tensor "
                                              "name -> shard file")
                                   .arg(jsonValueText(map)));
    const QJsonObject entries = map.toObject();
    if (entries.isEmpty())
        refuseCheckpoint(path, QStringLiteral("weight_map names no tensor"));
    std::map<QString, QString> shards;
    for (auto it = entries.begin(); it != entries.end(); ++it) {
        const QString shard = it.value().toString();
        if (!it.value().isString() || shard.isEmpty() || shard.contains(QLatin1Char('/')) ||
            shard.contains(QLatin1Char('\\')) || shard.contains(QStringLiteral("..")))
            refuseCheckpoint(path, QStringLiteral("weight_map gives the tensor %1 the shard %2; "
                                                  "expected the name of a file of the folder")
                                       .arg(it.key(), jsonValueText(it.value())));
        shards.emplace(it.key(), shard);
    }
    return shards;
}

namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";

QByteArray readIndex(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        refuseCheckpoint(path, QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    return file.readAll();
}

}  // namespace

CheckpointWeights::CheckpointWeights(const QString& folder)
{
    const QDir dir(folder);
    const QString index = dir.filePath(QLatin1String(kIndexName));
    if (!QFileInfo(index).isFile()) {
        m_source = weightsPath(folder);
        m_files.push_back(std::make_unique<SafetensorsFile>(m_source));
        for (const TensorEntry& entry : m_files.front()->entries())
            m_fileOf.insert(entry.name, m_files.front().get());
        return;
    }
    m_source = index;
    const std::map<QString, QString> shards = parseShardIndex(readIndex(index), index);
    QHash<QString, const SafetensorsFile*> opened;  // shard name -> file
    for (const auto& [tensor, shard] : shards) {
        if (opened.contains(shard))
            continue;
        const QString path = dir.filePath(shard);
        if (!QFileInfo(path).isFile())
            refuseCheckpoint(index, QStringLiteral("names the shard %1 (for %2), which is not in "
                                                   "the folder")
                                        .arg(shard, tensor));
        m_files.push_back(std::make_unique<SafetensorsFile>(path));
        opened.insert(shard, m_files.back().get());
    }
    for (const auto& file : m_files)
        for (const TensorEntry& entry : file->entries()) {
            if (const SafetensorsFile* other = m_fileOf.value(entry.name))
                refuseCheckpoint(file->path(), QStringLiteral("holds the tensor %1, which %2 "
                                                              "holds too")
                                                   .arg(entry.name, other->path()));
            m_fileOf.insert(entry.name, file.get());
        }
    for (const auto& [tensor, shard] : shards)
        if (m_fileOf.value(tensor) != opened.value(shard))
            refuseCheckpoint(opened.value(shard)->path(),
                             QStringLiteral("does not hold the tensor %1, which %2 puts there")
                                 .arg(tensor, index));
}

CheckpointWeights::~CheckpointWeights() = default;

bool CheckpointWeights::contains(const QString& name) const
{
    return m_fileOf.contains(name);
}

const SafetensorsFile& CheckpointWeights::fileOf(const QString& name) const
{
    const SafetensorsFile* file = m_fileOf.value(name);
    if (!file && m_files.size() == 1)
        return *m_files.front();  // which refuses the missing tensor, naming itself
    if (!file)
        refuseCheckpoint(m_source, QStringLiteral("the tensor %1 is in none of the weights "
                                                  "files")
                                       .arg(name));
    return *file;
}

Matrix<float> CheckpointWeights::matrix(const QString& name, Eigen::Index rows,
                                        Eigen::Index cols) const
{
    return fileOf(name).matrix(name, rows, cols);
}

Vector<float> CheckpointWeights::vector(const QString& name, Eigen::Index size) const
{
    return fileOf(name).vector(name, size);
}

double CheckpointWeights::floatBytes() const
{
    double bytes = 0;
    for (const auto& file : m_files)
        for (const TensorEntry& entry : file->entries())
            if (entry.dtype != TensorDtype::Other)  // not the integer or boolean buffers
                bytes += 4.0 * double(entry.elementCount());
    return bytes;
}

}  // namespace attnlab

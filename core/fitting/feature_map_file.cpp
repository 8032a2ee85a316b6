#include "fitting/feature_map_file.h"

#include "errors.h"
#include "fitting/feature_map_fit.h"
#include "io/atomic_files.h"
#include "model/safetensors.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtEndian>

#include <set>

namespace attnlab {

namespace {

const QString kContent = QStringLiteral("attention-lab-feature-maps");

QString tensorName(int layer, int head, const QString& part)
{
    return QStringLiteral("layers.%1.heads.%2.%3").arg(layer).arg(head).arg(part);
}

// One tensor of the file: its name, shape and values (as float).
struct OutputTensor {
    QString name;
    QJsonArray shape;
    std::vector<float> values;
};

std::vector<float> floatsOf(const double* data, Eigen::Index count)
{
    std::vector<float> values(static_cast<std::size_t>(count));
    for (Eigen::Index i = 0; i < count; ++i)
        values[std::size_t(i)] = qToLittleEndian(float(data[i]));
    return values;
}

std::vector<OutputTensor> tensorsOf(const FittedFeatureMaps& maps)
{
    std::vector<OutputTensor> tensors;
    for (const auto& [site, head] : maps.fitted) {
        const auto [layer, h] = site;
        const QJsonArray weightShape{head.featureDim(), head.headDim()};
        const QJsonArray biasShape{head.featureDim()};
        const double logGamma = head.windowLogWeight;
        tensors.push_back({tensorName(layer, h, QStringLiteral("query.weight")), weightShape,
                           floatsOf(head.queryWeight.data(), head.queryWeight.size())});
        tensors.push_back({tensorName(layer, h, QStringLiteral("query.bias")), biasShape,
                           floatsOf(head.queryBias.data(), head.queryBias.size())});
        tensors.push_back({tensorName(layer, h, QStringLiteral("key.weight")), weightShape,
                           floatsOf(head.keyWeight.data(), head.keyWeight.size())});
        tensors.push_back({tensorName(layer, h, QStringLiteral("key.bias")), biasShape,
                           floatsOf(head.keyBias.data(), head.keyBias.size())});
        tensors.push_back({tensorName(layer, h, QStringLiteral("window.log_gamma")), QJsonArray{1},
                           floatsOf(&logGamma, 1)});
    }
    return tensors;
}

// A metadata field as an integer in [minimum, maximum], or InputError naming the file and field.
int metadataInteger(const QString& path, const QJsonObject& metadata, const QString& key,
                    int minimum, int maximum)
{
    bool ok = false;
    const int value = metadata.value(key).toString().toInt(&ok);
    if (!metadata.contains(key))
        refuse(path, QStringLiteral("the metadata has no %1").arg(key));
    if (!ok || value < minimum || value > maximum)
        refuse(path, QStringLiteral("the metadata's %1 is \"%2\"; expected a whole number from "
                                    "%3 to %4")
                         .arg(key, metadata.value(key).toString())
                         .arg(minimum)
                         .arg(maximum));
    return value;
}

}  // namespace

QByteArray featureMapFileBytes(const FittedFeatureMaps& maps)
{
    const std::vector<OutputTensor> tensors = tensorsOf(maps);
    QJsonObject header;
    qint64 offset = 0;
    for (const OutputTensor& tensor : tensors) {
        const qint64 bytes = qint64(tensor.values.size() * sizeof(float));
        header.insert(tensor.name,
                      QJsonObject{{"dtype", "F32"},
                                  {"shape", tensor.shape},
                                  {"data_offsets", QJsonArray{offset, offset + bytes}}});
        offset += bytes;
    }
    header.insert(QStringLiteral("__metadata__"),
                  QJsonObject{{"format", "pt"},
                              {"content", kContent},
                              {"version", "1"},
                              {"method", "hedgehog"},
                              {"model", maps.model},
                              {"layers", QString::number(maps.layers)},
                              {"heads", QString::number(maps.heads)},
                              {"head_dim", QString::number(maps.headDim)},
                              {"feature_dim", QString::number(maps.featureDim)},
                              {"window", QString::number(maps.window)},
                              {"steps", QString::number(maps.steps)},
                              {"training_text", maps.trainingText}});
    QByteArray text = QJsonDocument(header).toJson(QJsonDocument::Compact);
    text.append(QByteArray((8 - text.size() % 8) % 8, ' '));
    QByteArray bytes(8, '\0');
    qToLittleEndian(quint64(text.size()), bytes.data());
    bytes.append(text);
    for (const OutputTensor& tensor : tensors)
        bytes.append(reinterpret_cast<const char*>(tensor.values.data()),
                     qsizetype(tensor.values.size() * sizeof(float)));
    return bytes;
}

void writeFeatureMaps(const FittedFeatureMaps& maps, const QString& path)
{
    const QFileInfo info(path);
    AtomicFileSet files(info.absolutePath());
    writeAll(files.open(info.fileName()), featureMapFileBytes(maps));
    files.commit();
}

std::shared_ptr<const FittedFeatureMaps> readFeatureMaps(const QString& path)
{
    const SafetensorsFile file(path);
    const QJsonObject& metadata = file.metadata();
    if (metadata.value(QLatin1String("content")).toString() != kContent)
        refuse(path, QStringLiteral("not a file of fitted feature maps (its safetensors metadata "
                                    "has no content \"%1\": write one with attention-lab "
                                    "fit-features)")
                         .arg(kContent));
    if (metadata.value(QLatin1String("version")).toString() != QLatin1String("1"))
        refuse(path, QStringLiteral("feature-map file version \"%1\" is not one Attention Lab "
                                    "reads (1)")
                         .arg(metadata.value(QLatin1String("version")).toString()));
    auto maps = std::make_shared<FittedFeatureMaps>();
    maps->file = path;
    maps->model = metadata.value(QLatin1String("model")).toString();
    if (maps->model.isEmpty())
        refuse(path, QStringLiteral("the metadata has no model"));
    maps->layers = metadataInteger(path, metadata, QStringLiteral("layers"), 1, 1 << 16);
    maps->heads = metadataInteger(path, metadata, QStringLiteral("heads"), 1, 1 << 16);
    maps->headDim = metadataInteger(path, metadata, QStringLiteral("head_dim"), 1, 1 << 16);
    maps->featureDim = metadataInteger(path, metadata, QStringLiteral("feature_dim"), 1, 4096);
    maps->window = metadataInteger(path, metadata, QStringLiteral("window"), 0, 1 << 30);
    maps->steps = metadataInteger(path, metadata, QStringLiteral("steps"), 0, 1 << 30);
    maps->trainingText = metadata.value(QLatin1String("training_text")).toString();

    static const QRegularExpression pattern(
        QStringLiteral("^layers\\.(\\d+)\\.heads\\.(\\d+)\\.(query\\.weight|query\\.bias|"
                       "key\\.weight|key\\.bias|window\\.log_gamma)$"));
    std::set<std::pair<int, int>> sites;
    for (const TensorEntry& entry : file.entries()) {
        const QRegularExpressionMatch match = pattern.match(entry.name);
        if (!match.hasMatch())
            refuse(path, QStringLiteral("tensor %1 is not one of a feature-map file "
                                        "(layers.<l>.heads.<h>.query.weight, ...)")
                             .arg(entry.name));
        const int layer = match.captured(1).toInt(), head = match.captured(2).toInt();
        if (layer >= maps->layers || head >= maps->heads)
            refuse(path, QStringLiteral("tensor %1 is past the metadata's %2 layers of %3 heads")
                             .arg(entry.name)
                             .arg(maps->layers)
                             .arg(maps->heads));
        sites.insert({layer, head});
    }
    if (sites.empty())
        refuse(path, QStringLiteral("holds no fitted head"));
    const Eigen::Index f = maps->featureDim, d = maps->headDim;
    for (const auto& site : sites) {
        const auto name = [&](const char* part) {
            return tensorName(site.first, site.second, QLatin1String(part));
        };
        FittedHeadMaps& fitted = maps->fitted[site];
        fitted.queryWeight = file.matrix(name("query.weight"), f, d).cast<double>();
        fitted.queryBias = file.vector(name("query.bias"), f).cast<double>();
        fitted.keyWeight = file.matrix(name("key.weight"), f, d).cast<double>();
        fitted.keyBias = file.vector(name("key.bias"), f).cast<double>();
        fitted.windowLogWeight = double(file.vector(name("window.log_gamma"), 1)[0]);
    }
    return maps;
}

std::shared_ptr<const FittedFeatureMaps> readFeatureMapsFor(const QString& path,
                                                            const QString& folder,
                                                            const LanguageModelInfo& info)
{
    std::shared_ptr<const FittedFeatureMaps> maps = readFeatureMaps(path);
    requireFeatureMapsFit(*maps, folder, info);
    return maps;
}

}  // namespace attnlab

#include "model/checkpoint_files.h"

#include "errors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QStringList>

#include <cmath>
#include <limits>

namespace attnlab {

void refuseCheckpoint(const QString& where, const QString& problem)
{
    throw InputError(QStringLiteral("%1: %2").arg(where, problem));
}

QString jsonValueText(const QJsonValue& value)
{
    switch (value.type()) {
        case QJsonValue::Null: return QStringLiteral("null");
        case QJsonValue::Bool:
            return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
        case QJsonValue::Double: return QString::number(value.toDouble());
        case QJsonValue::String: return QLatin1Char('"') + value.toString() + QLatin1Char('"');
        case QJsonValue::Array: return QStringLiteral("an array");
        case QJsonValue::Object: return QStringLiteral("an object");
        default: return QStringLiteral("missing");
    }
}

QJsonObject parseJsonObject(const QByteArray& json, const QString& path)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        refuseCheckpoint(
            path,
            QStringLiteral("not JSON (%1 at byte %2)").arg(error.errorString()).arg(error.offset));
    if (!document.isObject())
        refuseCheckpoint(path, QStringLiteral("not a JSON object"));
    return document.object();
}

QJsonObject readJsonObject(const QString& path, const QString& whatItHolds)
{
    if (!QFileInfo(path).isFile())
        refuseCheckpoint(path, QStringLiteral("no such file (%1)").arg(whatItHolds));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        refuseCheckpoint(path, QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    return parseJsonObject(file.readAll(), path);
}

int positiveInteger(const QString& path, const QJsonObject& json, const QString& key)
{
    const QJsonValue value = json.value(key);
    if (value.isUndefined())
        refuseCheckpoint(path, QStringLiteral("the key %1 is missing").arg(key));
    const double number = value.toDouble(-1);
    if (!value.isDouble() || number != std::trunc(number) || number < 1 ||
        number > double(std::numeric_limits<int>::max()))
        refuseCheckpoint(
            path,
            QStringLiteral("%1 is %2; expected a positive integer").arg(key, jsonValueText(value)));
    return int(number);
}

int optionalPositiveInteger(const QString& path, const QJsonObject& json, const QString& key,
                            int fallback)
{
    const QJsonValue value = json.value(key);
    if (value.isUndefined() || value.isNull())
        return fallback;
    return positiveInteger(path, json, key);
}

double positiveNumber(const QString& path, const QJsonObject& json, const QString& key,
                      double fallback)
{
    const QJsonValue value = json.value(key);
    if (value.isUndefined())
        return fallback;
    const double number = value.toDouble(-1);
    if (!value.isDouble() || !(number > 0) || !std::isfinite(number))
        refuseCheckpoint(
            path,
            QStringLiteral("%1 is %2; expected a positive number").arg(key, jsonValueText(value)));
    return number;
}

bool booleanValue(const QString& path, const QJsonObject& json, const QString& key, bool fallback)
{
    const QJsonValue value = json.value(key);
    if (value.isUndefined() || value.isNull())
        return fallback;
    if (!value.isBool())
        refuseCheckpoint(
            path,
            QStringLiteral("%1 is %2; expected true or false").arg(key, jsonValueText(value)));
    return value.toBool();
}

QString weightsPath(const QString& folder)
{
    const QDir dir(folder);
    const QString standard = dir.filePath(QStringLiteral("model.safetensors"));
    if (QFileInfo::exists(standard))
        return standard;
    const QStringList found =
        dir.entryList({QStringLiteral("*.safetensors")}, QDir::Files, QDir::Name);
    if (found.isEmpty())
        refuseCheckpoint(folder, QStringLiteral("no .safetensors weights in the model folder "
                                                "(model.safetensors; Attention Lab does not read "
                                                "PyTorch .bin checkpoints)"));
    if (found.size() > 1)
        refuseCheckpoint(folder, QStringLiteral("%1 .safetensors files (%2) and no "
                                                "model.safetensors: Attention Lab reads one file "
                                                "of weights")
                                     .arg(found.size())
                                     .arg(found.join(QStringLiteral(", "))));
    return dir.filePath(found.front());
}

namespace {

constexpr ModelArchitecture kArchitectures[] = {
    ModelArchitecture::Gpt2,    ModelArchitecture::Vit,   ModelArchitecture::Llama,
    ModelArchitecture::Mistral, ModelArchitecture::Qwen2, ModelArchitecture::GptNeox};

}  // namespace

QString modelTypeName(ModelArchitecture architecture)
{
    switch (architecture) {
        case ModelArchitecture::Gpt2: return QStringLiteral("gpt2");
        case ModelArchitecture::Vit: return QStringLiteral("vit");
        case ModelArchitecture::Llama: return QStringLiteral("llama");
        case ModelArchitecture::Mistral: return QStringLiteral("mistral");
        case ModelArchitecture::Qwen2: return QStringLiteral("qwen2");
        case ModelArchitecture::GptNeox: return QStringLiteral("gpt_neox");
    }
    return QString();
}

QString architectureDisplayName(ModelArchitecture architecture)
{
    switch (architecture) {
        case ModelArchitecture::Gpt2: return QStringLiteral("GPT-2");
        case ModelArchitecture::Vit: return QStringLiteral("ViT");
        case ModelArchitecture::Llama: return QStringLiteral("Llama");
        case ModelArchitecture::Mistral: return QStringLiteral("Mistral");
        case ModelArchitecture::Qwen2: return QStringLiteral("Qwen2");
        case ModelArchitecture::GptNeox: return QStringLiteral("GPT-NeoX");
    }
    return QString();
}

TransformerSizes readTransformerSizes(const QString& path, const QJsonObject& json, bool equalHeads)
{
    TransformerSizes sizes;
    sizes.layers = positiveInteger(path, json, QStringLiteral("num_hidden_layers"));
    sizes.heads = positiveInteger(path, json, QStringLiteral("num_attention_heads"));
    sizes.width = positiveInteger(path, json, QStringLiteral("hidden_size"));
    sizes.innerWidth = positiveInteger(path, json, QStringLiteral("intermediate_size"));
    if (equalHeads && sizes.width % sizes.heads != 0)
        refuseCheckpoint(path, QStringLiteral("hidden_size (%1) is not a multiple of "
                                              "num_attention_heads (%2)")
                                   .arg(sizes.width)
                                   .arg(sizes.heads));
    return sizes;
}

QJsonObject readModelConfig(const QString& path)
{
    return readJsonObject(
        path, QStringLiteral("a model folder holds config.json, the .safetensors weights and the "
                             "tokenizer files"));
}

void requireModelFolder(const QString& folder, const QString& whatItIs)
{
    if (!QFileInfo(folder).isDir())
        refuseCheckpoint(folder, QStringLiteral("no such model folder (%1)").arg(whatItIs));
}

ModelArchitecture modelArchitecture(const QString& folder)
{
    requireModelFolder(folder, QStringLiteral("a model is a folder holding config.json and the "
                                              ".safetensors weights"));
    const QString path = QDir(folder).filePath(QStringLiteral("config.json"));
    const QJsonObject config = readJsonObject(
        path, QStringLiteral("a model folder holds config.json and the .safetensors weights"));
    const QJsonValue type = config.value(QStringLiteral("model_type"));
    if (type.isUndefined())
        return ModelArchitecture::Gpt2;
    QStringList known;
    for (const ModelArchitecture architecture : kArchitectures) {
        if (type.toString() == modelTypeName(architecture))
            return architecture;
        known.append(QLatin1Char('"') + modelTypeName(architecture) + QLatin1Char('"'));
    }
    refuseCheckpoint(path, QStringLiteral("model_type is %1; Attention Lab runs the model types %2")
                               .arg(jsonValueText(type), known.join(QStringLiteral(", "))));
}

}  // namespace attnlab

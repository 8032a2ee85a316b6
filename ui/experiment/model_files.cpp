#include "ui/experiment/model_files.h"

#include "errors.h"
#include "inputs/builtin_models.h"
#include "inputs/inputs.h"
#include "inputs/model_input.h"
#include "model/language_model.h"
#include "model/vit_model.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>

#include <algorithm>

namespace attnlab::ui {

namespace {

constexpr int kRecentModels = 6;
const QString kRecentModelsKey = QStringLiteral("recentModels");

// Why a file cannot be read as a GGUF model (the reader's message without the path).
QString ggufProblem(const QString& path)
{
    try {
        modelArchitectureOf(path);
        return QObject::tr("it is not a .gguf file");
    } catch (const InputError& error) {
        return error.message().mid(path.size() + 2);
    }
}

}  // namespace

QStringList recentModels()
{
    return QSettings().value(kRecentModelsKey).toStringList();
}

void rememberModelsOf(const InputSpec& input)
{
    if (input.kind != InputKind::Model)
        return;
    const QStringList before = recentModels();
    QStringList recent = before;
    for (const QString& path : {input.comparisonModelPath, input.modelPath})
        if (!path.isEmpty() && !isBuiltinName(path)) {
            recent.removeAll(path);
            recent.prepend(path);
        }
    while (recent.size() > kRecentModels)
        recent.removeLast();
    if (recent != before)  // a result at every step of a slider
        QSettings().setValue(kRecentModelsKey, recent);
}

std::optional<ModelArchitecture> readableArchitecture(const QString& modelPath)
{
    try {
        return modelArchitectureOf(modelPath);
    } catch (const InputError&) {
        return std::nullopt;
    }
}

bool isLanguageModel(const QString& modelPath)
{
    const std::optional<ModelArchitecture> architecture = readableArchitecture(modelPath);
    return architecture && *architecture != ModelArchitecture::Vit;
}

ModelShape modelShapeOf(const QString& modelPath)
{
    try {
        ModelShape shape;
        if (modelArchitectureOf(modelPath) == ModelArchitecture::Vit) {
            const VitConfig vit =
                VitConfig::fromJson(modelFolder(modelPath) + QStringLiteral("/config.json"));
            shape.layers = vit.layers;
            shape.heads = vit.heads;
            shape.headDim = vit.headDim();
            shape.patchSize = std::max(vit.patchHeight, vit.patchWidth);
            shape.imageSize = std::max(vit.imageHeight, vit.imageWidth);
            return shape;
        }
        const LanguageModelInfo info = languageModelInfo(modelFolder(modelPath));
        QString heads = QObject::tr("%1 heads of d = %2").arg(info.heads).arg(info.headDim);
        if (info.keyValueHeads < info.heads)
            heads = QObject::tr("%1 query heads sharing %2 key/value heads (d = %3)")
                        .arg(info.heads)
                        .arg(info.keyValueHeads)
                        .arg(info.headDim);
        const QString queries = info.rope
                                    ? QObject::tr("queries and keys after RoPE, as the scores see "
                                                  "them")
                                    : QObject::tr("queries and keys as the scores see them");
        shape.layers = info.layers;
        shape.heads = info.heads;
        shape.headDim = info.headDim;
        shape.summary = QStringLiteral("%1: %2; %3; %4.")
                            .arg(info.architecture, heads, info.positionalScheme(), queries);
        return shape;
    } catch (const InputError&) {
        return {};
    }
}

QString openLanguageModel(QWidget* parent, const QString& title)
{
    QString path = QFileDialog::getOpenFileName(
        parent, title, QString(), QObject::tr("Models (*.gguf config.json);;All files (*)"));
    if (QFileInfo(path).fileName() == QLatin1String("config.json"))
        path = QFileInfo(path).absolutePath();
    if (path.isEmpty() || isLanguageModel(path))
        return path;
    const QString shown = QDir::toNativeSeparators(path);
    QMessageBox::warning(
        parent, title,
        QFileInfo(path).isFile() ? QObject::tr("%1 cannot be read as a GGUF language model (%2).")
                                       .arg(shown, ggufProblem(path))
        : !QFileInfo::exists(path + QStringLiteral("/config.json"))
            ? QObject::tr("%1 holds no config.json: a model folder holds config.json and the "
                          ".safetensors weights.")
                  .arg(shown)
            : QObject::tr("%1 holds no language model (GPT-2, Llama, Mistral, Qwen2, GPT-NeoX); "
                          "a ViT reads images: open it from the Image tab.")
                  .arg(shown));
    return QString();
}

}  // namespace attnlab::ui

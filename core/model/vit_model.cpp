#include "model/vit_model.h"

#include "errors.h"
#include "model/checkpoint_files.h"
#include "model/safetensors.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonObject>

#include <limits>

namespace attnlab {

using Eigen::Index;

namespace {

// The most patches a ViT may cut its image into (ViT-H/14 at 518 x 518 pixels has 1369).
constexpr qint64 kMaxPatches = qint64(1) << 20;

// json[key] as (height, width): one positive integer for both, or a list of two.
std::pair<int, int> sides(const QString& path, const QJsonObject& json, const QString& key)
{
    const QJsonValue value = json.value(key);
    if (value.isArray()) {
        const QJsonArray pair = value.toArray();
        const QString where = QStringLiteral("%1: %2").arg(path, key);
        if (pair.size() != 2)
            refuseCheckpoint(where, QStringLiteral("a list of %1 numbers; expected one number or "
                                                   "[height, width]")
                                        .arg(pair.size()));
        const QJsonObject named{{QStringLiteral("height"), pair.at(0)},
                                {QStringLiteral("width"), pair.at(1)}};
        return {positiveInteger(where, named, QStringLiteral("height")),
                positiveInteger(where, named, QStringLiteral("width"))};
    }
    const int side = positiveInteger(path, json, key);
    return {side, side};
}

// id2label: {"0": name, ..., "n-1": name} in id order; empty when absent.
QStringList classNamesOf(const QString& path, const QJsonObject& json)
{
    const QJsonValue value = json.value(QStringLiteral("id2label"));
    if (value.isUndefined() || value.isNull())
        return {};
    if (!value.isObject())
        refuseCheckpoint(path, QStringLiteral("id2label is %1; expected {\"0\": name, ...}")
                                   .arg(jsonValueText(value)));
    const QJsonObject labels = value.toObject();
    QStringList names;
    for (int id = 0; id < labels.size(); ++id) {
        const QJsonValue name = labels.value(QString::number(id));
        if (!name.isString())
            refuseCheckpoint(path, QStringLiteral("id2label has %1 entries but its entry \"%2\" "
                                                  "is %3; expected the names of ids 0 to %4")
                                       .arg(labels.size())
                                       .arg(id)
                                       .arg(jsonValueText(name))
                                       .arg(labels.size() - 1));
        names.append(name.toString());
    }
    return names;
}

}  // namespace

struct VitModel::Weights {
    Vector<float> classToken;         // cls_token: width
    Matrix<float> positionEmbedding;  // L x width
    Matrix<float> patchWeight;        // E^T: C p_h p_w x width
    Vector<float> patchBias;          // width
    TransformerStack stack;  // linear maps stored in x out (transposed at load); vit.layernorm
    Matrix<float> classifierWeight;  // Wc^T: width x classes (empty without a classifier)
    Vector<float> classifierBias;
};

VitConfig VitConfig::fromJson(const QString& path)
{
    const QJsonObject json = readJsonObject(
        path, QStringLiteral("a model folder holds config.json, preprocessor_config.json and the "
                             ".safetensors weights"));
    VitConfig config;
    static_cast<TransformerSizes&>(config) = readTransformerSizes(path, json, true);
    std::tie(config.imageHeight, config.imageWidth) =
        sides(path, json, QStringLiteral("image_size"));
    std::tie(config.patchHeight, config.patchWidth) =
        sides(path, json, QStringLiteral("patch_size"));
    if (json.contains(QStringLiteral("num_channels")))
        config.channels = positiveInteger(path, json, QStringLiteral("num_channels"));
    if (config.width > std::numeric_limits<int>::max() / 4)
        refuseCheckpoint(path, QStringLiteral("hidden_size is %1; at most %2 is read")
                                   .arg(config.width)
                                   .arg(std::numeric_limits<int>::max() / 4));
    if (config.patchHeight > config.imageHeight || config.patchWidth > config.imageWidth)
        refuseCheckpoint(path, QStringLiteral("patch_size (%1 x %2) is larger than image_size "
                                              "(%3 x %4)")
                                   .arg(config.patchHeight)
                                   .arg(config.patchWidth)
                                   .arg(config.imageHeight)
                                   .arg(config.imageWidth));
    const qint64 patches = qint64(config.gridRows()) * config.gridCols();
    if (patches > kMaxPatches)
        refuseCheckpoint(path, QStringLiteral("image_size %1 x %2 with patch_size %3 x %4 makes "
                                              "%5 patches; Attention Lab reads at most %6")
                                   .arg(config.imageHeight)
                                   .arg(config.imageWidth)
                                   .arg(config.patchHeight)
                                   .arg(config.patchWidth)
                                   .arg(patches)
                                   .arg(kMaxPatches));
    if (config.channels != 1 && config.channels != 3)
        refuseCheckpoint(path, QStringLiteral("num_channels is %1; Attention Lab reads images "
                                              "into 1 (grayscale) or 3 (RGB) channels")
                                   .arg(config.channels));
    const QJsonValue activation = json.value(QStringLiteral("hidden_act"));
    if (!activation.isUndefined() && activation.toString() != QLatin1String("gelu"))
        refuseCheckpoint(path, QStringLiteral("hidden_act is %1; Attention Lab computes ViT's "
                                              "exact (erf) GELU, \"gelu\"")
                                   .arg(jsonValueText(activation)));
    config.layerNormEpsilon =
        positiveNumber(path, json, QStringLiteral("layer_norm_eps"), config.layerNormEpsilon);
    config.qkvBias = booleanValue(path, json, QStringLiteral("qkv_bias"), true);
    config.classNames = classNamesOf(path, json);
    return config;
}

VitModel::VitModel() = default;
VitModel::~VitModel() = default;

const QString& VitModel::folder() const
{
    return m_folder;
}
const VitConfig& VitModel::config() const
{
    return m_config;
}
const ImagePreprocessing& VitModel::preprocessing() const
{
    return m_preprocessing;
}
const QStringList& VitModel::classNames() const
{
    return m_classNames;
}

std::shared_ptr<const VitModel> VitModel::load(const QString& folder)
{
    const QDir dir(folder);
    requireModelFolder(folder, QStringLiteral("a ViT is a folder holding config.json, "
                                              "preprocessor_config.json and the .safetensors "
                                              "weights"));
    std::shared_ptr<VitModel> model(new VitModel);
    model->m_folder = folder;
    model->m_config = VitConfig::fromJson(dir.filePath(QStringLiteral("config.json")));
    const VitConfig& config = model->m_config;
    const QString preprocessorPath = dir.filePath(QStringLiteral("preprocessor_config.json"));
    model->m_preprocessing = ImagePreprocessing::fromJson(preprocessorPath, config.channels);
    const ImagePreprocessing& preprocessing = model->m_preprocessing;
    if (preprocessing.height != config.imageHeight || preprocessing.width != config.imageWidth)
        refuseCheckpoint(preprocessorPath,
                         QStringLiteral("size is %1 x %2 (height x width) but config.json's "
                                        "image_size is %3 x %4: the model reads the image its "
                                        "preprocessor makes")
                             .arg(preprocessing.height)
                             .arg(preprocessing.width)
                             .arg(config.imageHeight)
                             .arg(config.imageWidth));

    const SafetensorsFile file(weightsPath(folder));
    // ViTForImageClassification saves "vit.embeddings.cls_token", ViTModel "embeddings.cls_token".
    const QString prefix =
        file.find(QStringLiteral("vit.embeddings.cls_token")) ? QStringLiteral("vit.") : QString();
    // nn.Linear weights are out x in in the file, in x out in the stack.
    const StackTensorReader read = StackTensorReader::of(
        file, prefix, true,
        {QStringLiteral("layernorm_before"), QStringLiteral("attention.output.dense"),
         QStringLiteral("layernorm_after"), QStringLiteral("intermediate.dense"),
         QStringLiteral("output.dense"), QStringLiteral("layernorm")});
    const Index width = config.width;
    auto weights = std::make_unique<Weights>();
    weights->stack = TransformerStack(config.heads, config.layerNormEpsilon, false, GeluForm::Erf);
    TransformerStack& stack = weights->stack;
    const std::vector<float> classToken =
        file.tensor(prefix + QStringLiteral("embeddings.cls_token"), {1, 1, width});
    weights->classToken = Eigen::Map<const Vector<float>>(classToken.data(), width);
    const Index length = config.tokenCount();
    const std::vector<float> positions =
        file.tensor(prefix + QStringLiteral("embeddings.position_embeddings"), {1, length, width});
    weights->positionEmbedding = Eigen::Map<const Matrix<float>>(positions.data(), length, width);
    const Index patchValues = Index(config.channels) * config.patchHeight * config.patchWidth;
    const std::vector<float> patchWeight =
        file.tensor(prefix + QStringLiteral("embeddings.patch_embeddings.projection.weight"),
                    {width, config.channels, config.patchHeight, config.patchWidth});
    weights->patchWeight =
        Eigen::Map<const Matrix<float>>(patchWeight.data(), width, patchValues).transpose();
    weights->patchBias =
        read.vector(QStringLiteral("embeddings.patch_embeddings.projection.bias"), width);
    for (int l = 0; l < config.layers; ++l) {
        const QString e = QStringLiteral("encoder.layer.%1.").arg(l);
        TransformerBlock layer = read.block(e, width, config.innerWidth);
        // [Q | K | V] from three maps (no bias with qkv_bias false).
        layer.attentionWeight.resize(width, 3 * width);
        layer.attentionBias = Vector<float>::Zero(3 * width);
        const char* parts[] = {"query", "key", "value"};
        for (int part = 0; part < 3; ++part) {
            const QString name =
                e + QStringLiteral("attention.attention.") + QLatin1String(parts[part]);
            layer.attentionWeight.middleCols(part * width, width) =
                read.linear(name + QStringLiteral(".weight"), width, width);
            if (config.qkvBias)
                layer.attentionBias.segment(part * width, width) =
                    read.vector(name + QStringLiteral(".bias"), width);
        }
        stack.blocks.push_back(std::move(layer));
    }
    read.finalNorm(width, stack);

    // The classifier of ViTForImageClassification (no prefix), with id2label's class count when
    // config.json has one.
    const TensorEntry* classifier = file.find(QStringLiteral("classifier.weight"));
    if (classifier) {
        Index classes = config.classNames.size();
        if (classes == 0)
            classes = classifier->shape.size() == 2 ? Index(classifier->shape[0]) : 1;
        weights->classifierWeight =
            file.matrix(QStringLiteral("classifier.weight"), classes, width).transpose();
        weights->classifierBias = file.vector(QStringLiteral("classifier.bias"), classes);
        model->m_classNames = config.classNames;
        for (Index c = model->m_classNames.size(); c < classes; ++c)
            model->m_classNames.append(QStringLiteral("LABEL_%1").arg(c));
    }
    model->m_weights = std::move(weights);
    return model;
}

PixelTensor VitModel::preprocess(const ImagePixels& image, const QString& imageName) const
{
    return preprocessImage(image, m_preprocessing, m_config.channels, imageName);
}

ForwardResult VitModel::forward(const PixelTensor& pixels, const ForwardOptions& options) const
{
    const VitConfig& config = m_config;
    const Weights& weights = *m_weights;
    if (pixels.channels != config.channels || pixels.height != config.imageHeight ||
        pixels.width != config.imageWidth ||
        pixels.values.size() !=
            std::size_t(pixels.channels) * std::size_t(pixels.height) * std::size_t(pixels.width))
        throw InputError(QStringLiteral("%1: the model reads %2 x %3 x %4 pixels (channels x "
                                        "height x width), not %5 x %6 x %7")
                             .arg(m_folder)
                             .arg(config.channels)
                             .arg(config.imageHeight)
                             .arg(config.imageWidth)
                             .arg(pixels.channels)
                             .arg(pixels.height)
                             .arg(pixels.width));
    const int rows = config.gridRows();
    const int cols = config.gridCols();
    const int ph = config.patchHeight;
    const int pw = config.patchWidth;
    const Index patches = Index(rows) * cols;
    Matrix<float> flattened(patches, weights.patchWeight.rows());
    for (int gr = 0; gr < rows; ++gr)
        for (int gc = 0; gc < cols; ++gc) {
            float* out = flattened.row(Index(gr) * cols + gc).data();
            for (int c = 0; c < config.channels; ++c)
                for (int y = 0; y < ph; ++y) {
                    const std::size_t start =
                        (std::size_t(c) * std::size_t(pixels.height) + std::size_t(gr * ph + y)) *
                            std::size_t(pixels.width) +
                        std::size_t(gc * pw);
                    out = std::copy_n(pixels.values.data() + start, pw, out);
                }
        }
    Matrix<float> embedded(patches, config.width);
    threadedProduct(flattened, weights.patchWeight, embedded, false);
    Matrix<float> x(patches + 1, config.width);
    x.row(0) = weights.classToken.transpose() + weights.positionEmbedding.row(0);
    x.bottomRows(patches) = (embedded.rowwise() + weights.patchBias.transpose()) +
                            weights.positionEmbedding.bottomRows(patches);

    ForwardResult result;
    const Matrix<float> normalised = weights.stack.run(x, options, result);
    if (options.logits && weights.classifierWeight.size() > 0)
        result.logits =
            normalised.topRows(1) * weights.classifierWeight + weights.classifierBias.transpose();
    return result;
}

QStringList VitModel::tokenLabels() const
{
    QStringList labels{QStringLiteral("[CLS]")};
    for (int gr = 0; gr < m_config.gridRows(); ++gr)
        for (int gc = 0; gc < m_config.gridCols(); ++gc)
            labels.append(QStringLiteral("(%1, %2)").arg(gr).arg(gc));
    return labels;
}

}  // namespace attnlab

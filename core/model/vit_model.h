#pragma once

#include "image_pixels.h"
#include "model/checkpoint_files.h"
#include "model/image_preprocessing.h"
#include "model/transformer_blocks.h"
#include "types.h"

#include <QString>
#include <QStringList>

#include <memory>

namespace attnlab {

// config.json of a ViT checkpoint (Hugging Face ViTConfig, model_type "vit"): the sizes (width =
// heads * d), then:
struct VitConfig : TransformerSizes {
    int imageHeight = 0;  // image_size: one number, or [height, width]
    int imageWidth = 0;
    int patchHeight = 0;  // patch_size: one number, or [height, width]
    int patchWidth = 0;
    int channels = 3;                 // num_channels: 1 or 3
    double layerNormEpsilon = 1e-12;  // layer_norm_eps (Hugging Face's default)
    bool qkvBias = true;              // qkv_bias: the query, key and value maps have biases
    QStringList classNames;           // id2label in id order (empty when config.json has none)

    int headDim() const { return width / heads; }  // d
    // The patch grid: the convolution of stride p drops the pixels past the last whole patch.
    int gridRows() const { return imageHeight / patchHeight; }
    int gridCols() const { return imageWidth / patchWidth; }
    int tokenCount() const { return 1 + gridRows() * gridCols(); }  // L: [CLS] and the patches

    // Throws InputError naming the file and the key when the file is not a JSON object, a key is
    // missing or not a positive integer, hidden_size is not a multiple of num_attention_heads,
    // a patch is larger than the image, the image makes more than 2^20 patches, num_channels is
    // not 1 or 3, hidden_act is not "gelu" (the exact erf GELU), or id2label does not map "0" ..
    // "n-1" to names.
    static VitConfig fromJson(const QString& path);
};

// A Vision Transformer (Dosovitskiy et al. 2021) in the Hugging Face layout (ViTModel or
// ViTForImageClassification), weights converted to float at load:
//   patches: the image (C x H x W) cut into N = (H / p_h)(W / p_w) patches, row-major over the
//     grid, each flattened in (channel, row, column) order: P (N x C p_h p_w);
//   x_0 = [cls; P E^T + b_E] + pos (L = N + 1 rows), E the Conv2d weight (width x C x p_h x p_w)
//     seen as width x C p_h p_w (a convolution with kernel = stride = p is this product);
//   each layer, pre-LayerNorm (TransformerBlock): a = LN_before(x); Q = a Wq^T + bq, K, V likewise
//     (nn.Linear: W is out x in); O_h = softmax(Q_h K_h^T / sqrt(d)) V_h, no mask;
//     h = x + [O_1 .. O_H] Wo^T + bo; x = h + GELU(LN_after(h) W1^T + b1) W2^T + b2, with the
//     exact GELU(u) = u/2 (1 + erf(u / sqrt 2));
//   z = LN(x) (vit.layernorm); logits = z_0 Wc^T + bc (the classifier on the [CLS] token).
// LN(u) = (u - mean(u)) / sqrt(var(u) + eps) * g + b, eps = layer_norm_eps.
class VitModel {
public:
    // Loads folder/config.json, folder/preprocessor_config.json and the folder's safetensors
    // weights (model.safetensors, or the one *.safetensors file there), with or without the "vit."
    // prefix of the tensor names, F32, F16 or BF16. The classifier (classifier.weight, .bias) is
    // optional: without it the model gives no logits; vit.pooler.* and other extra tensors are
    // ignored. Throws InputError naming the file and the tensor: missing files or tensors, shapes
    // that disagree with config.json, a classifier whose class count is not id2label's, a
    // preprocessor whose size is not the model's image_size, damaged files (see
    // SafetensorsFile).
    static std::shared_ptr<const VitModel> load(const QString& folder);

    const QString& folder() const;
    const VitConfig& config() const;
    const ImagePreprocessing& preprocessing() const;
    // The classes of the logits: id2label's names, or LABEL_0 .. LABEL_{n-1} when config.json has
    // none; empty without a classifier.
    const QStringList& classNames() const;

    // The image as the model reads it (preprocessImage with this model's preprocessor and
    // channels). Throws InputError naming imageName as preprocessImage does.
    PixelTensor preprocess(const ImagePixels& image, const QString& imageName) const;

    // The forward pass above on a preprocessed image (num_channels x image_size; else
    // InputError). Deterministic; safe to call from several threads at once.
    ForwardResult forward(const PixelTensor& pixels, const ForwardOptions& options = {}) const;

    // The label of each token: "[CLS]", then "(row, col)" of each patch in the grid.
    QStringList tokenLabels() const;

    ~VitModel();

private:
    VitModel();
    struct Weights;
    QString m_folder;
    VitConfig m_config;
    ImagePreprocessing m_preprocessing;
    QStringList m_classNames;
    std::unique_ptr<Weights> m_weights;
};

}  // namespace attnlab

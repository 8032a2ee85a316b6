#pragma once

#include "model/image_preprocessing.h"
#include "model/vit_model.h"

#include "inputs/inputs.h"

#include <QImage>
#include <QString>

namespace attnlab {

// The most pixels an image file may declare; larger images are refused before they are decoded.
constexpr qint64 kMaxImagePixels = 100'000'000;

// Decodes an image file (any format QImageReader reads), scales it so that its longest side is
// longestSide pixels (aspect ratio kept; 0 keeps the decoded size and values, as a ViT's
// preprocessing needs them) and returns its RGB values in [0, 1]. Throws InputError
// naming the file when it cannot be read, is empty, or declares more than kMaxImagePixels pixels
// (decoding is also capped by QImageReader's allocation limit).
ImagePixels loadImagePixels(const QString& path, int longestSide);

// The image as the engine splits it: the pixels cropped to whole patchSize x patchSize patches.
QImage patchImage(const ImagePixels& pixels, int patchSize);

// The image as a ViT reads it, for display: the preprocessed tensor with its normalisation and
// rescaling undone (v = (x std_c + mean_c) / (rescale_factor 255)), grey for one channel,
// cropped to the model's patch grid.
QImage modelViewImage(const PixelTensor& tensor, const ImagePreprocessing& preprocessing,
                      const VitConfig& config);

}  // namespace attnlab

#pragma once

#include "model/image_preprocessing.h"
#include "model/vit_model.h"

#include "inputs/inputs.h"
#include "memory_budget.h"
#include "model/transformer_blocks.h"

#include <QImage>
#include <QString>
#include <QStringList>

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

// The files of folder that Qt decodes (PNG, JPEG, ...), by name. Throws InputError naming the
// folder when it is not one (a file, or nothing there) or holds none.
QStringList imageFilesIn(const QString& folder);

// A run over a folder's images (model-eval --image-folder, the window's "every image of the
// folder") skips those that cannot be read and goes on over the others. What it says of a skipped
// image, why being loadImagePixels's InputError message (which names the file):
// "<why>; skipped, the folder's other images are read".
QString skippedImageWarning(const QString& why);
// Throws InputError naming folder when a run over `files` of its image files read none of them;
// firstWhy: why the first could not be read.
[[noreturn]] void refuseUnreadableImages(const QString& folder, qsizetype files,
                                         const QString& firstWhy);

// What a ViT makes of an image, as the window and `render` show it: the Q, K, V of every head of
// input.layer, the image as the model reads it (modelViewImage) and the forward pass of every
// layer, for the attention rollout.
struct VitReading {
    AttentionInput input;
    QImage image;
    std::shared_ptr<const ForwardResult> forward;
    int heads = 0;  // per layer
};

// Reads input.imagePath with the ViT of input.modelPath (resized as its preprocessor says).
// Throws InputError naming the file or the model, and MemoryError beyond the budget.
VitReading readWithVit(const InputSpec& input, const MemoryBudget& budget);

}  // namespace attnlab

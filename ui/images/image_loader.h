#pragma once

#include "model/image_preprocessing.h"
#include "model/vit_model.h"

#include "inputs/inputs.h"
#include "memory_budget.h"
#include "model/transformer_blocks.h"

#include <QImage>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

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

// Reads the images of a run over a folder (model-eval --image-folder, the window's "every image
// of the folder"): an image that cannot be read is skipped, said through warn as
// "<why>; skipped, the folder's other images are read" (why: loadImagePixels's InputError
// message, which names the file), and the run goes on over the others. In a run over one image
// (folder empty) its InputError goes through.
class FolderImageReader {
public:
    FolderImageReader(QString folder, std::function<void(const QString&)> warn);

    // loadImagePixels(path, 0), or nothing when the image is skipped.
    std::optional<ImagePixels> read(const QString& path);
    // Throws InputError naming the folder when images were tried and none could be read: "<folder>:
    // none of the folder's image files can be read (<n> tried; the first: <why>)".
    void requireSomeRead() const;

private:
    QString m_folder;
    std::function<void(const QString&)> m_warn;
    qsizetype m_tried = 0;
    qsizetype m_read = 0;
    QString m_firstWhy;  // why the first skipped image could not be read
};

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

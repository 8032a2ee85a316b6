#include "ui/images/image_loader.h"

#include "errors.h"
#include "inputs/model_input.h"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>

#include <cmath>

#include <fcntl.h>
#include <unistd.h>

namespace attnlab {

namespace {

// Sends this process's stderr to /dev/null while it lives. libpng's default error handler (Qt
// installs none) prints "libpng error: ..." there before Qt reports the failure, which the loader
// reports itself, naming the file.
class SilencedStderr {
public:
    SilencedStderr() : m_saved(dup(STDERR_FILENO))
    {
        const int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    ~SilencedStderr()
    {
        if (m_saved >= 0) {
            dup2(m_saved, STDERR_FILENO);
            close(m_saved);
        }
    }
    SilencedStderr(const SilencedStderr&) = delete;
    SilencedStderr& operator=(const SilencedStderr&) = delete;

private:
    int m_saved;
};

}  // namespace

ImagePixels loadImagePixels(const QString& path, int longestSide)
{
    const QFileInfo info(path);
    if (info.isDir())
        throw InputError(QStringLiteral("%1: a folder, not an image file").arg(path));
    if (!info.isFile())
        throw InputError(QStringLiteral("%1: no such image file").arg(path));
    QImageReader reader(path);
    QImageReader::setAllocationLimit(512);  // MiB
    QSize declared;
    {
        const SilencedStderr silenced;  // the header is decoded here, and may be corrupt
        declared = reader.size();
    }
    if (declared.isValid() && qint64(declared.width()) * declared.height() > kMaxImagePixels)
        throw InputError(QStringLiteral("%1: the image declares %2 x %3 pixels, more than the %4 "
                                        "million Attention Lab decodes")
                             .arg(path)
                             .arg(declared.width())
                             .arg(declared.height())
                             .arg(kMaxImagePixels / 1'000'000));
    QImage image;
    {
        const SilencedStderr silenced;
        image = reader.read();
    }
    if (image.isNull())
        throw InputError(
            QStringLiteral("%1: cannot read the image: %2").arg(path, reader.errorString()));
    if (image.width() == 0 || image.height() == 0)
        throw InputError(QStringLiteral("%1: the image has no pixels").arg(path));
    if (longestSide > 0)
        image =
            image.scaled(longestSide, longestSide, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    image = image.convertToFormat(QImage::Format_RGB888);
    ImagePixels pixels;
    pixels.width = image.width();
    pixels.height = image.height();
    pixels.rgb.resize(std::size_t(pixels.width) * pixels.height * 3);
    for (int y = 0; y < pixels.height; ++y) {
        const uchar* line = image.constScanLine(y);
        for (int i = 0; i < pixels.width * 3; ++i)
            pixels.rgb[std::size_t(y) * pixels.width * 3 + i] = float(line[i]) / 255.0f;
    }
    return pixels;
}

QImage patchImage(const ImagePixels& pixels, int patchSize)
{
    const int width = pixels.width / patchSize * patchSize;
    const int height = pixels.height / patchSize * patchSize;
    QImage image(width, height, QImage::Format_RGB888);
    for (int y = 0; y < height; ++y) {
        uchar* line = image.scanLine(y);
        for (int i = 0; i < width * 3; ++i)
            line[i] = uchar(std::lround(pixels.rgb[std::size_t(y) * pixels.width * 3 + i] * 255));
    }
    return image;
}

QImage modelViewImage(const PixelTensor& tensor, const ImagePreprocessing& preprocessing,
                      const VitConfig& config)
{
    const int width = config.gridCols() * config.patchWidth;
    const int height = config.gridRows() * config.patchHeight;
    QImage image(width, height, QImage::Format_RGB32);
    const double toUnit =
        preprocessing.rescale ? 1.0 / (preprocessing.rescaleFactor * 255.0) : 1.0 / 255.0;
    const auto unit = [&](int channel, int y, int x) {
        double value = tensor.values[std::size_t((channel * tensor.height + y) * tensor.width + x)];
        if (preprocessing.normalise)
            value = value * preprocessing.std[std::size_t(channel)] +
                    preprocessing.mean[std::size_t(channel)];
        return std::clamp(int(std::lround(value * toUnit * 255.0)), 0, 255);
    };
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            const int r = unit(0, y, x);
            image.setPixel(
                x, y, tensor.channels == 1 ? qRgb(r, r, r) : qRgb(r, unit(1, y, x), unit(2, y, x)));
        }
    }
    return image;
}

QStringList imageFilesIn(const QString& folder)
{
    const QFileInfo info(folder);
    if (info.exists() && !info.isDir())
        throw InputError(QStringLiteral("%1: a file, not a folder of images").arg(folder));
    if (!info.isDir())
        throw InputError(QStringLiteral("%1: no such folder").arg(folder));
    QStringList patterns;
    for (const QByteArray& format : QImageReader::supportedImageFormats())
        patterns.append(QStringLiteral("*.") + QString::fromLatin1(format));
    QStringList files;
    const QDir dir(folder);
    for (const QString& name : dir.entryList(patterns, QDir::Files, QDir::Name))
        files.append(dir.filePath(name));
    if (files.isEmpty())
        throw InputError(QStringLiteral("%1: no image files in the folder (the files Qt decodes: "
                                        "PNG, JPEG, ...)")
                             .arg(folder));
    return files;
}

FolderImageReader::FolderImageReader(QString folder, std::function<void(const QString&)> warn)
    : m_folder(std::move(folder)), m_warn(std::move(warn))
{
}

std::optional<ImagePixels> FolderImageReader::read(const QString& path)
{
    ++m_tried;
    try {
        ImagePixels pixels = loadImagePixels(path, 0);
        ++m_read;
        return pixels;
    } catch (const InputError& error) {
        if (m_folder.isEmpty())
            throw;
        if (m_firstWhy.isEmpty())
            m_firstWhy = error.message();
        m_warn(
            QStringLiteral("%1; skipped, the folder's other images are read").arg(error.message()));
        return std::nullopt;
    }
}

void FolderImageReader::requireSomeRead() const
{
    if (m_tried > 0 && m_read == 0)
        throw InputError(QStringLiteral("%1: none of the folder's image files can be read (%2 "
                                        "tried; the first: %3)")
                             .arg(m_folder)
                             .arg(m_tried)
                             .arg(m_firstWhy));
}

VitReading readWithVit(const InputSpec& input, const MemoryBudget& budget)
{
    const ImagePixels pixels = loadImagePixels(input.imagePath, 0);  // the ViT resizes it
    VitReading reading;
    ModelRun run;
    reading.input = buildInput(input, &pixels, budget, &run);
    const std::shared_ptr<const VitModel> model = loadVitModel(input.modelPath);
    reading.image = modelViewImage(run.pixels, model->preprocessing(), model->config());
    reading.forward = std::move(run.forward);
    reading.heads = model->config().heads;
    return reading;
}

}  // namespace attnlab

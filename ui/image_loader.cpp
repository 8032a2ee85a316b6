#include "image_loader.h"

#include "errors.h"

#include <QFileInfo>
#include <QImage>
#include <QImageReader>

namespace attnlab {

ImagePixels loadImagePixels(const QString& path, int longestSide)
{
    if (!QFileInfo(path).isFile())
        throw InputError(QStringLiteral("%1: no such image file").arg(path));
    QImageReader reader(path);
    QImageReader::setAllocationLimit(512);  // MiB
    const QSize declared = reader.size();
    if (declared.isValid() && qint64(declared.width()) * declared.height() > kMaxImagePixels)
        throw InputError(QStringLiteral("%1: the image declares %2 x %3 pixels, more than the %4 "
                                        "million Attention Lab decodes")
                             .arg(path)
                             .arg(declared.width())
                             .arg(declared.height())
                             .arg(kMaxImagePixels / 1'000'000));
    QImage image = reader.read();
    if (image.isNull())
        throw InputError(QStringLiteral("%1: cannot read the image: %2").arg(path, reader.errorString()));
    if (image.width() == 0 || image.height() == 0)
        throw InputError(QStringLiteral("%1: the image has no pixels").arg(path));
    image = image.scaled(longestSide, longestSide, Qt::KeepAspectRatio, Qt::SmoothTransformation)
                .convertToFormat(QImage::Format_RGB888);
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

}  // namespace attnlab

#include "model/image_preprocessing.h"

#include "model/checkpoint_files.h"

#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace attnlab {

namespace {

// PIL's resampling filters by number (PIL.Image.Resampling); Attention Lab computes BILINEAR.
constexpr int kBilinear = 2;
// ViTImageProcessor's default mean and standard deviation (IMAGENET_STANDARD_MEAN, _STD).
constexpr double kDefaultMeanAndStd = 0.5;

// The taps of one output sample: the first input sample it reads and the weights from there.
struct Taps {
    int first = 0;
    std::vector<double> weights;
};

// The bilinear taps from n samples to m (see resizeBilinear), computed in double as PIL does.
std::vector<Taps> bilinearTaps(int n, int m)
{
    const double scale = double(n) / double(m);
    const double spread = std::max(scale, 1.0);  // f: the support of tri, widened when shrinking
    std::vector<Taps> taps(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) {
        const double centre = (i + 0.5) * scale;
        const int first = std::max(int(centre - spread + 0.5), 0);
        const int last = std::min(int(centre + spread + 0.5), n);
        Taps& tap = taps[std::size_t(i)];
        tap.first = first;
        double sum = 0;
        for (int j = first; j < last; ++j) {
            const double weight = std::max(0.0, 1.0 - std::abs((j + 0.5 - centre) / spread));
            tap.weights.push_back(weight);
            sum += weight;
        }
        if (sum != 0)
            for (double& weight : tap.weights)
                weight /= sum;
    }
    return taps;
}

// One channel of the image, as 8-bit values v (v = 255 rgb): R, G or B, or the luma.
std::vector<float> channelPlane(const ImagePixels& image, int channels, int channel)
{
    const std::size_t count = std::size_t(image.width) * std::size_t(image.height);
    std::vector<float> plane(count);
    for (std::size_t p = 0; p < count; ++p) {
        const float r = image.rgb[3 * p];
        const float g = image.rgb[3 * p + 1];
        const float b = image.rgb[3 * p + 2];
        float value = channels == 3 ? image.rgb[3 * p + std::size_t(channel)] : r;
        if (channels == 1 && !(r == g && g == b))
            value = 0.299f * r + 0.587f * g + 0.114f * b;
        plane[p] = value * 255.0f;
    }
    return plane;
}

// image_mean or image_std: a number for every channel, or a list of `channels` numbers.
std::vector<double> perChannel(const QString& path, const QJsonObject& json, const QString& key,
                               int channels, bool positive)
{
    const QJsonValue value = json.value(key);
    if (value.isUndefined() || value.isNull())
        return std::vector<double>(std::size_t(channels), kDefaultMeanAndStd);
    std::vector<double> numbers;
    if (value.isDouble()) {
        numbers.assign(std::size_t(channels), value.toDouble());
    } else if (value.isArray()) {
        for (const QJsonValue& item : value.toArray())
            numbers.push_back(item.isDouble() ? item.toDouble() : std::nan(""));
    }
    bool valid = int(numbers.size()) == channels;
    for (const double number : numbers)
        valid = valid && std::isfinite(number) && (!positive || number > 0);
    if (!valid)
        refuseCheckpoint(
            path,
            QStringLiteral("%1 is %2; expected %3 %4 (one per channel of the "
                           "model, num_channels %5)")
                .arg(key, jsonValueText(value))
                .arg(channels == 1 ? QStringLiteral("a number or a list of 1")
                                   : QStringLiteral("a list of %1").arg(channels))
                .arg(positive ? QStringLiteral("positive numbers") : QStringLiteral("numbers"))
                .arg(channels));
    return numbers;
}

}  // namespace

ImagePreprocessing ImagePreprocessing::fromJson(const QString& path, int channels)
{
    const QJsonObject json = readJsonObject(
        path, QStringLiteral("a ViT's folder holds preprocessor_config.json, which says how images "
                             "are resized and normalised"));
    ImagePreprocessing preprocessing;
    preprocessing.resize = booleanValue(path, json, QStringLiteral("do_resize"), true);
    const QJsonValue size = json.value(QStringLiteral("size"));
    if (size.isDouble()) {
        preprocessing.height = preprocessing.width =
            positiveInteger(path, json, QStringLiteral("size"));
    } else if (size.isObject()) {
        const QJsonObject sides = size.toObject();
        const QString where = path + QStringLiteral(": size");
        preprocessing.height = positiveInteger(where, sides, QStringLiteral("height"));
        preprocessing.width = positiveInteger(where, sides, QStringLiteral("width"));
    } else if (!size.isUndefined()) {
        refuseCheckpoint(path, QStringLiteral("size is %1; expected {\"height\": H, \"width\": W} "
                                              "or one number")
                                   .arg(jsonValueText(size)));
    }
    const QJsonValue resample = json.value(QStringLiteral("resample"));
    if (!resample.isUndefined() && resample.toDouble(-1) != kBilinear)
        refuseCheckpoint(path, QStringLiteral("resample is %1; Attention Lab resizes with the "
                                              "bilinear filter (2) only")
                                   .arg(jsonValueText(resample)));
    if (booleanValue(path, json, QStringLiteral("do_center_crop"), false))
        refuseCheckpoint(path, QStringLiteral("do_center_crop is true; Attention Lab resizes "
                                              "without cropping, as ViTImageProcessor does"));
    preprocessing.rescale = booleanValue(path, json, QStringLiteral("do_rescale"), true);
    preprocessing.rescaleFactor =
        positiveNumber(path, json, QStringLiteral("rescale_factor"), preprocessing.rescaleFactor);
    preprocessing.normalise = booleanValue(path, json, QStringLiteral("do_normalize"), true);
    preprocessing.mean = perChannel(path, json, QStringLiteral("image_mean"), channels, false);
    preprocessing.std = perChannel(path, json, QStringLiteral("image_std"), channels, true);
    return preprocessing;
}

std::vector<float> resizeBilinear(const std::vector<float>& plane, int height, int width,
                                  int outHeight, int outWidth)
{
    // Horizontal pass: height x outWidth.
    const std::vector<Taps> across = bilinearTaps(width, outWidth);
    std::vector<float> rows(std::size_t(height) * std::size_t(outWidth));
    for (int y = 0; y < height; ++y) {
        const float* in = plane.data() + std::size_t(y) * std::size_t(width);
        for (int x = 0; x < outWidth; ++x) {
            const Taps& tap = across[std::size_t(x)];
            double sum = 0;
            for (std::size_t k = 0; k < tap.weights.size(); ++k)
                sum += tap.weights[k] * in[std::size_t(tap.first) + k];
            rows[std::size_t(y) * std::size_t(outWidth) + std::size_t(x)] = float(sum);
        }
    }
    // Vertical pass: outHeight x outWidth.
    const std::vector<Taps> down = bilinearTaps(height, outHeight);
    std::vector<float> out(std::size_t(outHeight) * std::size_t(outWidth));
    for (int y = 0; y < outHeight; ++y) {
        const Taps& tap = down[std::size_t(y)];
        for (int x = 0; x < outWidth; ++x) {
            double sum = 0;
            for (std::size_t k = 0; k < tap.weights.size(); ++k)
                sum += tap.weights[k] *
                       rows[(std::size_t(tap.first) + k) * std::size_t(outWidth) + std::size_t(x)];
            out[std::size_t(y) * std::size_t(outWidth) + std::size_t(x)] = float(sum);
        }
    }
    return out;
}

PixelTensor preprocessImage(const ImagePixels& image, const ImagePreprocessing& preprocessing,
                            int channels, const QString& imageName)
{
    if (image.width <= 0 || image.height <= 0 ||
        image.rgb.size() != std::size_t(image.width) * std::size_t(image.height) * 3)
        refuseCheckpoint(imageName, QStringLiteral("the image has no pixels"));
    if (!preprocessing.resize &&
        (image.height != preprocessing.height || image.width != preprocessing.width))
        refuseCheckpoint(imageName, QStringLiteral("the image is %1 x %2 pixels; the model reads "
                                                   "%3 x %4 and its preprocessor does not resize "
                                                   "(do_resize is false)")
                                        .arg(image.width)
                                        .arg(image.height)
                                        .arg(preprocessing.width)
                                        .arg(preprocessing.height));
    PixelTensor tensor;
    tensor.channels = channels;
    tensor.height = preprocessing.height;
    tensor.width = preprocessing.width;
    const std::size_t planeSize = std::size_t(tensor.height) * std::size_t(tensor.width);
    tensor.values.reserve(std::size_t(channels) * planeSize);
    const float factor = preprocessing.rescale ? float(preprocessing.rescaleFactor) : 1.0f;
    for (int c = 0; c < channels; ++c) {
        std::vector<float> plane = channelPlane(image, channels, c);
        if (preprocessing.resize)
            plane = resizeBilinear(plane, image.height, image.width, tensor.height, tensor.width);
        const float mean = preprocessing.normalise ? float(preprocessing.mean[std::size_t(c)]) : 0;
        const float std = preprocessing.normalise ? float(preprocessing.std[std::size_t(c)]) : 1;
        for (const float value : plane)
            tensor.values.push_back((value * factor - mean) / std);
    }
    return tensor;
}

}  // namespace attnlab

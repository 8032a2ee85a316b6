#pragma once

#include "image_pixels.h"

#include <QString>

#include <vector>

namespace attnlab {

// What a ViT's preprocessor_config.json (Hugging Face's ViTImageProcessor) does to an image before
// the model reads it: resize, rescale, normalise, in that order.
struct ImagePreprocessing {
    bool resize = true;  // do_resize
    int height = 224;    // size: {"height": H, "width": W}, or one number for both (the old form)
    int width = 224;
    bool rescale = true;                 // do_rescale
    double rescaleFactor = 1.0 / 255.0;  // rescale_factor
    bool normalise = true;               // do_normalize
    std::vector<double> mean;            // image_mean, one per channel (default 0.5)
    std::vector<double> std;             // image_std, one per channel (default 0.5)

    // Reads preprocessor_config.json for a model with `channels` channels. Throws InputError
    // naming the file and the key: missing or not JSON; resample other than 2 (bilinear, the only
    // filter Attention Lab computes); do_center_crop true; a size that is not a positive number or
    // {"height", "width"}; image_mean or image_std not a number or a list of `channels` numbers;
    // a standard deviation that is not positive.
    static ImagePreprocessing fromJson(const QString& path, int channels);
};

// The image a ViT reads: channels x height x width values in C order (the value of channel c at
// row y, column x is values[(c height + y) width + x]).
struct PixelTensor {
    int channels = 0;
    int height = 0;
    int width = 0;
    std::vector<float> values;
};

// Decoded pixels (v / 255 for 8-bit values v) -> the pixel tensor the model reads:
//   1. channels: 3 reads R, G, B; 1 reads the luma Y = 0.299 R + 0.587 G + 0.114 B (in float;
//      exactly the value where R = G = B, so a grayscale image keeps its 8-bit values);
//   2. with resize, to height x width by PIL's bilinear filter computed in float (resizeBilinear);
//   3. x = v * rescale_factor with rescale (x = v without);
//   4. with normalise, x_c = (x_c - mean_c) / std_c.
// Hugging Face resizes with PIL on 8-bit images, which rounds to 8 bits after each pass: its
// pixels differ from these by at most 1/255 before normalisation. Throws InputError naming
// imageName when the image has no pixels, or, without resize, is not height x width.
PixelTensor preprocessImage(const ImagePixels& image, const ImagePreprocessing& preprocessing,
                            int channels, const QString& imageName);

// Resamples a plane of h x w values (row-major) to outHeight x outWidth with PIL's bilinear
// filter (Image.resize with BILINEAR), in float without rounding: each output sample is a
// weighted mean of the input samples along one axis, first the rows (horizontal pass), then the
// columns. Along an axis of n samples resized to m, scale = n / m, f = max(scale, 1) (the filter
// widens when shrinking: antialiasing) and output i takes the inputs j with weights
//   w_ij = tri((j + 1/2 - c_i) / f), c_i = (i + 1/2) scale, tri(t) = max(0, 1 - |t|),
// over j in [max(0, trunc(c_i - f + 1/2)), min(n, trunc(c_i + f + 1/2))), normalised to sum 1.
// Equals torch.nn.functional.interpolate(mode="bilinear", antialias=True, align_corners=False).
std::vector<float> resizeBilinear(const std::vector<float>& plane, int height, int width,
                                  int outHeight, int outWidth);

}  // namespace attnlab

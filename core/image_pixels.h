#pragma once

#include <vector>

namespace attnlab {

// An image as decoded outside the engine (core has no QtGui; ui/images/image_loader decodes
// files): RGB pixels, row-major, 3 floats per pixel, each v / 255 for the 8-bit value v the
// decoder gave (a grayscale image has R = G = B). Read by the image input (inputs/inputs.h) and
// by a ViT's preprocessing (model/image_preprocessing.h).
struct ImagePixels {
    int width = 0;
    int height = 0;
    std::vector<float> rgb;
};

}  // namespace attnlab

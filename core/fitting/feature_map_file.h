#pragma once

#include "attention/fitted_feature_maps.h"
#include "model/language_model.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace attnlab {

// Fitted feature maps as a safetensors file (docs/design.md section 4.3): for each fitted head,
// F32 tensors named by layer, head and side,
//   layers.<l>.heads.<h>.query.weight  [d_f, d]   W_q
//   layers.<l>.heads.<h>.query.bias    [d_f]      b_q
//   layers.<l>.heads.<h>.key.weight    [d_f, d]   W_k
//   layers.<l>.heads.<h>.key.bias      [d_f]      b_k
//   layers.<l>.heads.<h>.window.log_gamma  [1]    hedgehog-window's log gamma
// and the header's __metadata__ (strings): format "pt" (as PyTorch's files, so Python's safetensors
// reads it), content "attention-lab-feature-maps", version "1", method "hedgehog", model (its name,
// fittedModelName), layers, heads, head_dim, feature_dim, window, steps, training_text.

// The file's bytes.
QByteArray featureMapFileBytes(const FittedFeatureMaps& maps);

// Writes the file at path, all or nothing (AtomicFileSet). Throws OutputError naming it.
void writeFeatureMaps(const FittedFeatureMaps& maps, const QString& path);

// Reads the file at path (file set to path). Throws InputError naming the file: not a
// safetensors file or a damaged one (SafetensorsFile's checks), not a feature-map file (its
// content), an unknown version, a metadata field missing or not a number in range, a tensor of
// a head missing, of the wrong shape or with a value that is not finite, a layer or head past the
// metadata's, an unknown tensor, no head at all.
std::shared_ptr<const FittedFeatureMaps> readFeatureMaps(const QString& path);

// readFeatureMaps, then requireFeatureMapsFit for the language model in folder (info its shape):
// the maps must be this model's.
std::shared_ptr<const FittedFeatureMaps> readFeatureMapsFor(const QString& path,
                                                            const QString& folder,
                                                            const LanguageModelInfo& info);

}  // namespace attnlab

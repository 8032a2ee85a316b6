#pragma once

#include "model/checkpoint_files.h"

#include <QString>
#include <QStringList>

#include <optional>

class QWidget;

namespace attnlab {
struct InputSpec;
}

namespace attnlab::ui {

// The models a user has opened, as the Input dock's readers and the Method dock's second
// checkpoint list them: folders and .gguf files, newest first, kept in the settings. A model
// joins them once the window has read it (rememberModelsOf), so that one which cannot be read is
// not offered again.
QStringList recentModels();
// Puts the model input reads first among the recent models, and its second checkpoint, if any,
// after it (at most six are kept; a built-in model is none of them): what a result computed from
// input has read.
void rememberModelsOf(const InputSpec& input);

// The architecture of the model at modelPath, or none when its config or file cannot be read
// (the computation then reports the problem).
std::optional<ModelArchitecture> readableArchitecture(const QString& modelPath);
// Whether the model at modelPath reads text: a language model (none when it cannot be read).
bool isLanguageModel(const QString& modelPath);

// The shape of the model at modelPath, from its config.json (or GGUF header): what the docks show
// in the fields the model sets. Zeros and an empty summary when it cannot be read.
struct ModelShape {
    int layers = 0;
    int heads = 0;      // H, the query heads
    int headDim = 0;    // d
    int patchSize = 0;  // a ViT's patch side p, in pixels
    int imageSize = 0;  // a ViT's input image, its longer side in pixels
    QString summary;    // a language model's heads and positions, for the Input dock
};
ModelShape modelShapeOf(const QString& modelPath);

// Asks for a language model: a .gguf file, or the config.json of a model folder (whose folder is
// returned). Empty when the user cancels, or when the choice holds no language model, which a
// message box then says (naming the file and what is wrong).
QString openLanguageModel(QWidget* parent, const QString& title);

}  // namespace attnlab::ui

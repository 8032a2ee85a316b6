#pragma once

#include "experiment.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace attnlab {

// Everything needed to reopen a view exactly as it was (a lecture demo reopens as it was): the
// experiment spec plus the state of the view. Stored in a .attnlab file as JSON:
//   { "format": "attention-lab-session", "version": 2,
//     "spec": { ExperimentSpec::toJson() }, "view": { the view object } }
struct Session {
    ExperimentSpec spec;
    // The selected head and query, error mode, colour maps, ...: owned by the GUI, kept as is
    // but for the file paths of the Error analysis sweep's input (readSession, writeSession).
    QJsonObject view;
};

// The "format" and "version" a session file carries; readSession reads versions up to this one.
// Version 2 stores a built-in model by its explicit id (builtin-kjv-gpt2, builtin-kjv-llama); in
// version 1, "builtin" meant the KJV GPT-2, and reads so.
inline constexpr char kSessionFormat[] = "attention-lab-session";
inline constexpr int kSessionVersion = 2;
// Session files larger than this are refused before they are read: a session is small.
inline constexpr qint64 kLargestSessionBytes = 16 * 1024 * 1024;

// The bytes of a session file (indented JSON, UTF-8). Paths inside the spec are written as they
// are; writeSession makes those in the session's folder relative first.
QByteArray sessionJson(const Session& session);

// Reads the session file at path. The file paths of the spec (input.image, input.q, input.k,
// input.v, input.model, input.comparison_model) that are relative are resolved against the
// session file's folder; absolute paths and Qt resource paths (":/...") are kept as they are.
// The inputs the view's sweeps were computed on (the Error analysis sweep's,
// view.errors.result.spec.experiment, and the Inside the model rows', view.model.rows_input.
// experiment) are read the same way, so that their pages know them for the spec's. A "view" that
// is absent reads as {}.
// A session is either fully read or refused: throws InputError, its message starting with path,
// when the file is missing, a folder or unreadable, larger than kLargestSessionBytes (checked
// before reading), empty (or only white space), not JSON (with the line and column of the
// error), not a JSON object, not an Attention Lab session ("format" missing or not
// kSessionFormat), without an integer "version" >= 1, written by a newer Attention Lab (a version
// above kSessionVersion), without a "spec" object, with a "view" that is not an object, or with a
// spec that ExperimentSpec::fromJson refuses (its message follows "path: spec: "). The spec's
// feature_map (fitted feature maps), resolved as the input's paths are, is read into
// spec.approximation.fittedMaps; a file that readFeatureMaps refuses refuses the session.
Session readSession(const QString& path);

// Writes session to path atomically (QSaveFile through AtomicFileSet; the folder is created as
// needed). Spec paths (and the view's sweeps' inputs', as readSession reads them) that lie
// in the session's folder or below it are written relative to that folder, so a folder holding a
// session and its image can be moved as a whole; other paths are written absolute (a relative path
// is taken from the current directory); a built-in model by its explicit id ("builtin" as
// builtin-kjv-llama, say: explicitModelId); Qt resource paths
// (":/...") and empty paths as they are. Throws OutputError naming the path on failure, leaving
// no file behind (and an existing file at path unchanged); also when the session would not read
// back as it is (a spec fromJson refuses, or a NaN or infinite number, which JSON cannot hold).
// Fitted feature maps that have no file yet (fitted in the window) are written beside the
// session as <name>.maps.safetensors, in the same all-or-nothing set, and the session names it.
void writeSession(const QString& path, const Session& session);

}  // namespace attnlab

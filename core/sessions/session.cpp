#include "sessions/session.h"

#include "fitting/feature_map_file.h"

#include "inputs/model_input.h"

#include "io/atomic_files.h"
#include "errors.h"
#include "io/json_types.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <array>
#include <cmath>
#include <functional>

namespace attnlab {

namespace {

// A string value in quotes, anything else by its type.
QString describe(const QJsonValue& value)
{
    if (value.isUndefined())
        return QStringLiteral("nothing");
    return value.isString() ? QStringLiteral("\"%1\"").arg(value.toString()) : jsonTypeName(value);
}

// The file paths of an input: input.image, input.q, input.k, input.v, input.model,
// input.comparison_model.
std::array<QString*, 6> filePathsOf(InputSpec& input)
{
    return {&input.imagePath, &input.queryPath, &input.keyPath,
            &input.valuePath, &input.modelPath, &input.comparisonModelPath};
}

// json with the experiment at `place` (keys from json down) passed through `change`
// (ExperimentSpec::fromJson, change, toJson); as it is where there is none or it does not read
// (the page that shows it says why).
QJsonObject withExperimentChanged(QJsonObject json, QStringList place,
                                  const std::function<void(ExperimentSpec&)>& change)
{
    const QString key = place.takeFirst();
    const QJsonValue value = json.value(key);
    if (!value.isObject())
        return json;
    if (!place.isEmpty()) {
        json.insert(key, withExperimentChanged(value.toObject(), place, change));
        return json;
    }
    try {
        ExperimentSpec experiment = ExperimentSpec::fromJson(value.toObject());
        change(experiment);
        json.insert(key, experiment.toJson());
    } catch (const InputError&) {
    }
    return json;
}

// Calls `change` on every file path of the session's inputs: the spec's, and those of the
// experiments its view holds, which their pages compare with the window's input (the Error
// analysis sweep's, view.errors.result.spec.experiment; the input of the Inside the model sweep's
// rows, view.model.rows_input.experiment), so that they are read, migrated and stored alike.
void changeInputPaths(Session& session, const std::function<void(QString&)>& change)
{
    const auto changeInput = [&](ExperimentSpec& experiment) {
        for (QString* file : filePathsOf(experiment.input))
            change(*file);
    };
    changeInput(session.spec);
    const QStringList places[] = {
        {QStringLiteral("errors"), QStringLiteral("result"), QStringLiteral("spec"),
         QStringLiteral("experiment")},
        {QStringLiteral("model"), QStringLiteral("rows_input"), QStringLiteral("experiment")}};
    for (const QStringList& place : places)
        session.view = withExperimentChanged(session.view, place, changeInput);
}

// Paths that are kept as they are whatever the session's folder: none, Qt resources and the
// built-in models' names.
bool isFixedPath(const QString& path)
{
    return path.isEmpty() || path.startsWith(QLatin1Char(':')) || isBuiltinName(path);
}

// Whether the absolute, clean path lies in the absolute, clean folder or below it.
bool liesIn(const QString& path, const QString& folder)
{
    const QString prefix = folder.endsWith(QLatin1Char('/')) ? folder : folder + QLatin1Char('/');
    return path.startsWith(prefix) && path.size() > prefix.size();
}

// A spec path as read from a session in folder: relative paths are taken from the folder.
QString resolvedPath(const QString& path, const QString& folder)
{
    if (isFixedPath(path) || QDir::isAbsolutePath(path))
        return path;
    return QDir::cleanPath(QDir(folder).absoluteFilePath(path));
}

// A spec path as written to a session in folder (absolute and clean): relative to the folder when
// it lies there or below (also when only the canonical paths, with symbolic links resolved, show
// it), else absolute. A relative path in memory is taken from the current directory.
QString storedPath(const QString& path, const QString& folder)
{
    if (isFixedPath(path))
        return explicitModelId(path);
    const QString absolute = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    if (liesIn(absolute, folder))
        return QDir(folder).relativeFilePath(absolute);
    const QString canonicalFolder = QFileInfo(folder).canonicalFilePath();
    const QString canonical = QFileInfo(absolute).canonicalFilePath();
    if (!canonicalFolder.isEmpty() && !canonical.isEmpty() && liesIn(canonical, canonicalFolder))
        return QDir(canonicalFolder).relativeFilePath(canonical);
    return QDir::isAbsolutePath(path) ? path : absolute;
}

QString mebibytes(qint64 bytes)
{
    return QString::number(double(bytes) / (1024.0 * 1024.0), 'f', 1);
}

// The bytes of the file at path, refused when it is missing, a folder, unreadable or too large
// for a session (the size is checked before reading, and again while reading).
QByteArray readSessionBytes(const QString& path)
{
    const QFileInfo info(path);
    if (!info.exists())
        refuse(path, QStringLiteral("no such file"));
    if (info.isDir())
        refuse(path, QStringLiteral("is a folder, not a session file"));
    const auto tooLarge = [&](qint64 size) {
        refuse(path, QStringLiteral("the file is %1 MiB, larger than a session can be (%2 MiB); it "
                                    "is not an Attention Lab session")
                         .arg(mebibytes(size), mebibytes(kLargestSessionBytes)));
    };
    if (info.size() > kLargestSessionBytes)
        tooLarge(info.size());
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        refuse(path, QStringLiteral("cannot read the file: %1").arg(file.errorString()));
    // As many bytes as the file holds, plus one to see whether it grew since; then, if it did (or
    // it is a device whose size reads as 0), on up to one byte past the limit. (Reading the limit
    // at once would allocate 16 MiB for every session.)
    const qint64 expected = info.size() > 0 ? info.size() : kLargestSessionBytes;
    QByteArray bytes = file.read(expected + 1);
    if (bytes.size() > expected)
        bytes += file.read(kLargestSessionBytes + 1 - bytes.size());
    if (file.error() != QFileDevice::NoError)
        refuse(path, QStringLiteral("cannot read the file: %1").arg(file.errorString()));
    if (bytes.size() > kLargestSessionBytes)
        tooLarge(qMax(info.size(), qint64(bytes.size())));
    return bytes;
}

// "line L, column C" (from 1; the column counts characters) of a byte offset into UTF-8 text.
QString placeOf(const QByteArray& text, qsizetype offset)
{
    offset = qBound(qsizetype(0), offset, text.size());
    const QByteArray before = text.first(offset);
    const qsizetype lineStart = before.lastIndexOf('\n') + 1;
    const qsizetype line = before.count('\n') + 1;
    const qsizetype column = QString::fromUtf8(before.sliced(lineStart)).size() + 1;
    return QStringLiteral("line %1, column %2").arg(line).arg(column);
}

// The JSON object the bytes of the file at path hold; refused when they hold anything else.
QJsonObject parseSessionObject(const QString& path, const QByteArray& bytes)
{
    if (bytes.trimmed().isEmpty())
        refuse(path, bytes.isEmpty() ? QStringLiteral("the file is empty")
                                     : QStringLiteral("the file is empty (only white space)"));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError) {
        // QJsonDocument takes only objects and arrays: a lone number or string is valid JSON
        // that it calls an "illegal value"; say what the file holds instead.
        const QJsonDocument wrapped = QJsonDocument::fromJson('[' + bytes + ']');
        if (wrapped.isArray() && wrapped.array().size() == 1)
            refuse(path, QStringLiteral("not a JSON object (the file holds %1)")
                             .arg(jsonTypeName(wrapped.array().first())));
        refuse(path, QStringLiteral("not valid JSON: %1 at %2 (byte offset %3)%4")
                         .arg(error.errorString(), placeOf(bytes, error.offset))
                         .arg(error.offset)
                         .arg(error.offset >= bytes.trimmed().size()
                                  ? QStringLiteral("; the file ends too early, it may be truncated")
                                  : QString()));
    }
    if (!document.isObject())
        refuse(path, QStringLiteral("not a JSON object (the file holds an array)"));
    return document.object();
}

// Refuses anything but a session of a version this Attention Lab reads; returns the version.
int requireSessionHeader(const QString& path, const QJsonObject& root)
{
    const QJsonValue format = root.value(QLatin1String("format"));
    if (format.isUndefined())
        refuse(path, QStringLiteral("not an Attention Lab session (it has no \"format\": \"%1\")")
                         .arg(QLatin1String(kSessionFormat)));
    if (format.toString() != QLatin1String(kSessionFormat))
        refuse(path, QStringLiteral("not an Attention Lab session (\"format\" is %1, not \"%2\")")
                         .arg(describe(format), QLatin1String(kSessionFormat)));

    const QJsonValue version = root.value(QLatin1String("version"));
    if (version.isUndefined())
        refuse(path, QStringLiteral("\"version\" is missing (the session format version, %1)")
                         .arg(kSessionVersion));
    const double number = version.toDouble();
    if (!version.isDouble() || number != std::floor(number))
        refuse(path,
               QStringLiteral("\"version\" must be an integer (got %1)")
                   .arg(version.isDouble() ? QString::number(number, 'g', 17) : describe(version)));
    if (number > kSessionVersion)
        refuse(path, QStringLiteral("written by a newer Attention Lab (version %1); this one reads "
                                    "versions 1 to %2")
                         .arg(QString::number(number, 'g', 17))
                         .arg(kSessionVersion));
    if (number < 1)
        refuse(path, QStringLiteral("\"version\" must be at least 1 (got %1)")
                         .arg(QString::number(number, 'g', 17)));
    return int(number);
}

// The session a parsed file holds, with the spec paths as the file gives them.
Session sessionOf(const QString& path, const QJsonObject& root)
{
    const int version = requireSessionHeader(path, root);
    Session session;
    const QJsonValue spec = root.value(QLatin1String("spec"));
    if (spec.isUndefined())
        refuse(path, QStringLiteral("\"spec\" is missing (the experiment the session shows)"));
    if (!spec.isObject())
        refuse(path, QStringLiteral("\"spec\" must be an object (got %1)").arg(describe(spec)));
    try {
        session.spec = ExperimentSpec::fromJson(spec.toObject());
    } catch (const InputError& error) {
        refuse(path, QStringLiteral("spec: %1").arg(error.message()));
    }
    const QJsonValue view = root.value(QLatin1String("view"));
    if (!view.isUndefined() && !view.isObject())
        refuse(path, QStringLiteral("\"view\" must be an object (got %1)").arg(describe(view)));
    session.view = view.toObject();
    // Version 1 was written when "builtin" named the KJV GPT-2 (the only built-in text model).
    if (version == 1)
        changeInputPaths(session, [](QString& file) {
            if (file == QLatin1String(kBuiltinModel))
                file = QString::fromLatin1(kBuiltinKjvGpt2);
        });
    return session;
}

}  // namespace

QByteArray sessionJson(const Session& session)
{
    QJsonObject root;
    root[QLatin1String("format")] = QLatin1String(kSessionFormat);
    root[QLatin1String("version")] = kSessionVersion;
    root[QLatin1String("spec")] = session.spec.toJson();
    root[QLatin1String("view")] = session.view;
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

Session readSession(const QString& path)
{
    const QByteArray bytes = readSessionBytes(path);
    Session session = sessionOf(path, parseSessionObject(path, bytes));
    const QString folder = QFileInfo(path).absolutePath();
    changeInputPaths(session, [&](QString& file) { file = resolvedPath(file, folder); });
    ExperimentSpec& spec = session.spec;
    if (!spec.featureMapFile.isEmpty()) {
        spec.featureMapFile = resolvedPath(spec.featureMapFile, folder);
        try {
            spec.approximation.fittedMaps = readFeatureMaps(spec.featureMapFile);
        } catch (const InputError& error) {
            refuse(path, QStringLiteral("spec: feature_map: %1").arg(error.message()));
        }
    }
    return session;
}

void writeSession(const QString& path, const Session& session)
{
    const QFileInfo target(path);
    if (path.isEmpty() || target.fileName().isEmpty())
        throw OutputError(QStringLiteral("%1: not a file name for a session").arg(path));
    const QString folder = QDir::cleanPath(target.absolutePath());
    Session stored = session;
    changeInputPaths(stored, [&](QString& file) { file = storedPath(file, folder); });
    // Maps fitted in the window and not saved go beside the session, in the same set of files.
    const std::shared_ptr<const FittedFeatureMaps>& maps = stored.spec.approximation.fittedMaps;
    const QString mapsName = target.completeBaseName() + QStringLiteral(".maps.safetensors");
    const bool writeMaps = maps && stored.spec.featureMapFile.isEmpty();
    if (writeMaps)
        stored.spec.featureMapFile = mapsName;
    else if (!stored.spec.featureMapFile.isEmpty())
        stored.spec.featureMapFile = storedPath(stored.spec.featureMapFile, folder);
    const QByteArray bytes = sessionJson(stored);

    // What is written must read back as it is: JSON has no NaN or infinity (Qt writes null), and
    // a spec that fromJson refuses would make a session that cannot be opened.
    const QJsonObject specJson = stored.spec.toJson();
    QString problem;
    try {
        const QJsonObject root = QJsonDocument::fromJson(bytes).object();
        if (ExperimentSpec::fromJson(root.value(QLatin1String("spec")).toObject()).toJson() !=
            specJson)
            problem = QStringLiteral("spec: a number is NaN or infinite (JSON cannot hold it)");
        else if (root.value(QLatin1String("view")).toObject() != stored.view)
            problem = QStringLiteral("view: a number is NaN or infinite (JSON cannot hold it)");
    } catch (const InputError& error) {
        problem = QStringLiteral("spec: %1").arg(error.message());
    }
    if (!problem.isEmpty())
        throw OutputError(QStringLiteral("%1: not written, the session would not read back as it "
                                         "is: %2")
                              .arg(path, problem));

    AtomicFileSet files(folder);
    if (writeMaps)
        writeAll(files.open(mapsName), featureMapFileBytes(*maps));
    writeAll(files.open(target.fileName()), bytes);
    files.commit();
}

}  // namespace attnlab

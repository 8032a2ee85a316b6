// Paths in session files: relative to the session's folder when they lie in it (or beside it,
// for a model folder), absolute otherwise, resources and the built-in models kept as they are;
// read back against the session's folder whatever the current directory, through symbolic links
// and after the folder moved.

#include "errors.h"
#include "inputs/model_input.h"
#include "sessions/session.h"
#include "session_support.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <optional>

using namespace attnlab;
using namespace attnlab::test;

class TestSessionPaths : public QObject {
    Q_OBJECT

private slots:
    void relativePathsResolveAgainstTheSessionFolder();
    void resolutionDoesNotDependOnTheCurrentDirectory();
    void resourceAndAbsolutePathsAreKept();
    void pathsInTheSessionFolderAreWrittenRelative();
    void modelFolderBesideTheSessionIsRelativeAndBuiltinKept();
    void aVersionOneSessionKeepsTheModelItWasSavedWith();
    void secondCheckpointBesideTheSessionIsRelative();
    void pathsOutsideTheSessionFolderAreWrittenAbsolute();
    void pathsInMemoryRelativeToTheCurrentDirectoryAreRebased();
    void symbolicLinksToTheFolderStillGiveRelativePaths();
    void aMovedFolderStillFindsItsImage();
    void bundledSessionsHoldSweepsOfTheirOwnInput();
};

// The input of the Error analysis sweep a session's view holds (view.errors.result.spec.experiment,
// which the page compares with the window's input); none when it holds no sweep.
std::optional<InputSpec> errorSweepInput(const Session& session)
{
    const QJsonObject experiment =
        session.view["errors"]["result"]["spec"]["experiment"].toObject();
    if (experiment.isEmpty())
        return std::nullopt;
    return ExperimentSpec::fromJson(experiment).input;
}

// Relative spec paths are taken from the session file's folder (".." included), and the result
// is a clean absolute path that names the real file; empty paths stay empty.
void TestSessionPaths::relativePathsResolveAgainstTheSessionFolder()
{
    const Session image = readSession(fixture(QStringLiteral("image-relative.attnlab")));
    const QString chelsea =
        QDir::cleanPath(QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/images/chelsea.png"));
    QCOMPARE(image.spec.input.imagePath, chelsea);
    QVERIFY2(QFileInfo::exists(chelsea), qPrintable(chelsea));

    const Session files = readSession(fixture(QStringLiteral("files.attnlab")));
    const QString npy = QDir::cleanPath(QStringLiteral(ATTNLAB_TEST_DATA "/npy/f8_c_2d.npy"));
    QCOMPARE(files.spec.input.queryPath, npy);
    QCOMPARE(files.spec.input.keyPath, npy);
    QVERIFY2(QFileInfo::exists(npy), qPrintable(npy));
    QCOMPARE(files.spec.input.valuePath, QString());
    QCOMPARE(files.spec.input.imagePath, QString());
}

// The current directory plays no part: a session opened by a relative path resolves its paths
// against its own folder, not against the current directory.
void TestSessionPaths::resolutionDoesNotDependOnTheCurrentDirectory()
{
    const QString before = QDir::currentPath();
    QTemporaryDir elsewhere;
    QVERIFY(elsewhere.isValid());
    QVERIFY(QDir::setCurrent(elsewhere.path()));
    const QString relativeSession =
        QDir(elsewhere.path()).relativeFilePath(fixture(QStringLiteral("image-relative.attnlab")));
    Session session;
    const QString message =
        thrownMessage<InputError>([&] { session = readSession(relativeSession); });
    QVERIFY(QDir::setCurrent(before));
    QCOMPARE(message, QString());
    QCOMPARE(
        session.spec.input.imagePath,
        QDir::cleanPath(QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/images/chelsea.png")));
}

// Qt resource paths (":/...") and absolute paths are kept exactly as the file gives them.
void TestSessionPaths::resourceAndAbsolutePathsAreKept()
{
    const Session resource = readSession(fixture(QStringLiteral("image-resource.attnlab")));
    QCOMPARE(resource.spec.input.imagePath, QStringLiteral(":/images/coffee.png"));

    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    QJsonObject root = parsedObject(readBytes(fixture(QStringLiteral("files.attnlab"))));
    QJsonObject spec = root.value(QLatin1String("spec")).toObject();
    QJsonObject input = spec.value(QLatin1String("input")).toObject();
    // Kept as written, not even cleaned.
    input[QLatin1String("q")] = QStringLiteral("/data/model/layer 3/../q.npy");
    input[QLatin1String("k")] = QStringLiteral("/data/model/k.npy");
    spec[QLatin1String("input")] = input;
    root[QLatin1String("spec")] = spec;
    const QString path = tmp.filePath(QStringLiteral("absolute.attnlab"));
    writeBytes(path, QJsonDocument(root).toJson());
    const Session read = readSession(path);
    QCOMPARE(read.spec.input.queryPath, QStringLiteral("/data/model/layer 3/../q.npy"));
    QCOMPARE(read.spec.input.keyPath, QStringLiteral("/data/model/k.npy"));
}

// Paths in the session's folder or below it are written relative to the folder.
void TestSessionPaths::pathsInTheSessionFolderAreWrittenRelative()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    Session session;
    session.spec.input.kind = InputKind::Files;
    session.spec.input.queryPath = tmp.filePath(QStringLiteral("q.npy"));
    session.spec.input.keyPath = tmp.filePath(QStringLiteral("deep/er/k.npy"));
    session.spec.input.valuePath = tmp.filePath(QStringLiteral("./deep/../v.npy"));  // cleaned
    session.spec.input.imagePath = tmp.filePath(QStringLiteral("image.png"));
    const QString path = tmp.filePath(QStringLiteral("s.attnlab"));
    writeSession(path, session);
    QCOMPARE(storedInputString(path, "q"), QStringLiteral("q.npy"));
    QCOMPARE(storedInputString(path, "k"), QStringLiteral("deep/er/k.npy"));
    QCOMPARE(storedInputString(path, "v"), QStringLiteral("v.npy"));
    QCOMPARE(storedInputString(path, "image"), QStringLiteral("image.png"));
}

// A model folder beside the session is stored relative to it (the session and its model move
// together) and read back absolute; a built-in model is stored by its explicit id ("builtin" as
// the default model's id, so that a later default does not change what the session shows). The
// layer survives the round trip.
void TestSessionPaths::modelFolderBesideTheSessionIsRelativeAndBuiltinKept()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    Session session;
    session.spec.input.kind = InputKind::Model;
    session.spec.input.modelPath = tmp.filePath(QStringLiteral("models/tiny"));
    session.spec.input.layer = 3;
    const QString path = tmp.filePath(QStringLiteral("s.attnlab"));
    writeSession(path, session);
    QCOMPARE(storedInputString(path, "model"), QStringLiteral("models/tiny"));
    QCOMPARE(storedInputString(path, "kind"), QStringLiteral("model"));
    const Session read = readSession(path);
    QCOMPARE(read.spec.input.modelPath, tmp.filePath(QStringLiteral("models/tiny")));
    QCOMPARE(read.spec.input.layer, 3);

    session.spec.input.modelPath = QStringLiteral("builtin");
    writeSession(path, session);
    QCOMPARE(storedInputString(path, "model"), QString::fromLatin1(kDefaultTextModel));
    QCOMPARE(readSession(path).spec.input.modelPath, QString::fromLatin1(kDefaultTextModel));
    for (const char* id : {kBuiltinKjvGpt2, kBuiltinKjvLlama, kBuiltinVitModel}) {
        session.spec.input.modelPath = QString::fromLatin1(id);
        writeSession(path, session);
        QCOMPARE(storedInputString(path, "model"), QString::fromLatin1(id));
        QCOMPARE(readSession(path).spec.input.modelPath, QString::fromLatin1(id));
    }
}

// A session of version 1, written when "builtin" named the KJV GPT-2, opens the KJV GPT-2 it was
// saved with, whatever the default is now (its second checkpoint, and the input of the Error
// analysis sweep it holds, too); one of version 2 that says "builtin" (written by hand) means the
// default.
void TestSessionPaths::aVersionOneSessionKeepsTheModelItWasSavedWith()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath(QStringLiteral("old.attnlab"));
    const auto write = [&](int version) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        const QString input = QStringLiteral(R"({"input": {"kind": "model", "model": "builtin",
            "comparison_model": "builtin", "text": "And God said", "layer": 1}})");
        file.write(QStringLiteral(R"({"format": "attention-lab-session", "version": %1,
            "spec": %2, "view": {"errors": {"result": {"spec": {"experiment": %2}}}}})")
                       .arg(version)
                       .arg(input)
                       .toUtf8());
    };
    write(1);
    Session read = readSession(path);
    QCOMPARE(read.spec.input.modelPath, QString::fromLatin1(kBuiltinKjvGpt2));
    QCOMPARE(read.spec.input.comparisonModelPath, QString::fromLatin1(kBuiltinKjvGpt2));
    QCOMPARE(read.spec.input.layer, 1);
    QCOMPARE(errorSweepInput(read)->modelPath, QString::fromLatin1(kBuiltinKjvGpt2));
    write(2);
    read = readSession(path);
    QCOMPARE(read.spec.input.modelPath, QStringLiteral("builtin"));
    QCOMPARE(errorSweepInput(read)->modelPath, QStringLiteral("builtin"));
    QCOMPARE(modelFolder(read.spec.input.modelPath),
             modelFolder(QString::fromLatin1(kDefaultTextModel)));
}

// A second checkpoint compared with the model is kept as the model is: relative when it sits
// beside the session, read back against the session's folder (wherever the session now is), and
// the spec's method is "checkpoint".
void TestSessionPaths::secondCheckpointBesideTheSessionIsRelative()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    Session session;
    session.spec.input.kind = InputKind::Model;
    session.spec.input.modelPath = tmp.filePath(QStringLiteral("model-f16.gguf"));
    session.spec.input.comparisonModelPath = tmp.filePath(QStringLiteral("quantized/q4_k_m.gguf"));
    const QString path = tmp.filePath(QStringLiteral("s.attnlab"));
    writeSession(path, session);
    const QJsonObject spec = storedSpec(path);
    QCOMPARE(spec.value(QLatin1String("method")).toString(), QStringLiteral("checkpoint"));
    QCOMPARE(spec.value(QLatin1String("input")).toObject().value(QLatin1String("comparison_model")),
             QJsonValue(QStringLiteral("quantized/q4_k_m.gguf")));
    QCOMPARE(readSession(path).spec.input.comparisonModelPath,
             tmp.filePath(QStringLiteral("quantized/q4_k_m.gguf")));

    // The session moved: its checkpoint is looked for beside it, where it is now.
    const QString moved = tmp.filePath(QStringLiteral("moved"));
    QVERIFY(QDir().mkpath(moved));
    QVERIFY(QFile::rename(path, moved + QStringLiteral("/s.attnlab")));
    QCOMPARE(readSession(moved + QStringLiteral("/s.attnlab")).spec.input.comparisonModelPath,
             moved + QStringLiteral("/quantized/q4_k_m.gguf"));

    // Outside the session's folder: absolute.
    session.spec.input.comparisonModelPath = QStringLiteral("/elsewhere/q8_0.gguf");
    writeSession(path, session);
    QCOMPARE(storedInputString(path, "comparison_model"), QStringLiteral("/elsewhere/q8_0.gguf"));
}

// Paths outside the session's folder are written absolute, even when they share the folder's
// name as a prefix ("demo2" is not inside "demo") or sit in its parent.
void TestSessionPaths::pathsOutsideTheSessionFolderAreWrittenAbsolute()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    Session session;
    session.spec.input.kind = InputKind::Files;
    session.spec.input.queryPath = tmp.filePath(QStringLiteral("demo2/q.npy"));
    session.spec.input.keyPath = tmp.filePath(QStringLiteral("k.npy"));
    session.spec.input.valuePath = tmp.filePath(QStringLiteral("demo"));  // the folder itself
    const QString path = tmp.filePath(QStringLiteral("demo/s.attnlab"));
    writeSession(path, session);
    QCOMPARE(storedInputString(path, "q"), session.spec.input.queryPath);
    QCOMPARE(storedInputString(path, "k"), session.spec.input.keyPath);
    QCOMPARE(storedInputString(path, "v"), session.spec.input.valuePath);
    QCOMPARE(readSession(path).spec.toJson(), session.spec.toJson());
}

// A relative path in memory means "from the current directory" (that is how the engine opens
// it); the session stores it so that it still names the same file when read back.
void TestSessionPaths::pathsInMemoryRelativeToTheCurrentDirectoryAreRebased()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(tmp.path()));
    Session session;
    session.spec.input.kind = InputKind::Image;
    session.spec.input.imagePath = QStringLiteral("demo/pictures/cat.png");  // inside the folder
    session.spec.input.queryPath = QStringLiteral("q.npy");                  // outside it
    const QString message = thrownMessage<OutputError>(
        [&] { writeSession(QStringLiteral("demo/s.attnlab"), session); });
    QVERIFY(QDir::setCurrent(before));
    QCOMPARE(message, QString());
    const QString path = tmp.filePath(QStringLiteral("demo/s.attnlab"));
    QCOMPARE(storedInputString(path, "image"), QStringLiteral("pictures/cat.png"));
    QCOMPARE(storedInputString(path, "q"), QDir::cleanPath(tmp.filePath(QStringLiteral("q.npy"))));
    const Session read = readSession(path);
    QCOMPARE(read.spec.input.imagePath, tmp.filePath(QStringLiteral("demo/pictures/cat.png")));
    QCOMPARE(read.spec.input.queryPath, tmp.filePath(QStringLiteral("q.npy")));
}

// A session saved through a symbolic link to its folder, with the image named by its real path,
// still stores the image relative (the folder and the image are the same on disk).
void TestSessionPaths::symbolicLinksToTheFolderStillGiveRelativePaths()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("real")));
    const QString image = tmp.filePath(QStringLiteral("real/cat.png"));
    writeBytes(image, "not really a PNG");
    if (!QFile::link(tmp.filePath(QStringLiteral("real")), tmp.filePath(QStringLiteral("link"))))
        QSKIP("cannot make a symbolic link here");
    Session session;
    session.spec.input.kind = InputKind::Image;
    session.spec.input.imagePath = image;
    const QString path = tmp.filePath(QStringLiteral("link/s.attnlab"));
    writeSession(path, session);
    QCOMPARE(storedInputString(path, "image"), QStringLiteral("cat.png"));
    QCOMPARE(readSession(path).spec.input.imagePath, tmp.filePath(QStringLiteral("link/cat.png")));
}

// A folder holding a session and its image can be moved as a whole: the session opened from the
// new place names the image at the new place, and so do the Error analysis sweep and the Inside
// the model rows it holds (a sweep of the session's input stays one).
void TestSessionPaths::aMovedFolderStillFindsItsImage()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("lecture/images")));
    writeBytes(tmp.filePath(QStringLiteral("lecture/images/cat.png")), "not really a PNG");
    Session session;
    session.spec.input.kind = InputKind::Image;
    session.spec.input.imagePath = tmp.filePath(QStringLiteral("lecture/images/cat.png"));
    const QJsonObject sweep{{"spec", QJsonObject{{"experiment", session.spec.toJson()}}}};
    session.view.insert(QStringLiteral("errors"), QJsonObject{{"result", sweep}});
    const QJsonObject rowsInput{{"experiment", session.spec.toJson()}};
    session.view.insert(QStringLiteral("model"), QJsonObject{{"rows_input", rowsInput}});
    writeSession(tmp.filePath(QStringLiteral("lecture/demo.attnlab")), session);

    QVERIFY(QDir(tmp.path()).rename(QStringLiteral("lecture"), QStringLiteral("moved")));
    const Session moved = readSession(tmp.filePath(QStringLiteral("moved/demo.attnlab")));
    QCOMPARE(moved.spec.input.imagePath, tmp.filePath(QStringLiteral("moved/images/cat.png")));
    QVERIFY(QFileInfo::exists(moved.spec.input.imagePath));
    QCOMPARE(errorSweepInput(moved)->imagePath, moved.spec.input.imagePath);
    const QJsonObject rowsExperiment = moved.view["model"]["rows_input"]["experiment"].toObject();
    QCOMPARE(ExperimentSpec::fromJson(rowsExperiment).input.imagePath, moved.spec.input.imagePath);
}

// The README's sessions and the bundled scenarios that hold an Error analysis sweep read with the
// sweep's input naming the files and model the spec names, so that the page shows it as a sweep
// of the window's input. Three of them held a relative image path or version 1's "builtin" in the
// sweep, and the README's pictures said "from an earlier input: Run to sweep the current one".
void TestSessionPaths::bundledSessionsHoldSweepsOfTheirOwnInput()
{
    int sweeps = 0;
    for (const char* folder : {"/../../docs/screenshots", "/../../resources/scenarios"}) {
        const QDir dir(QStringLiteral(ATTNLAB_TEST_DATA) + QLatin1String(folder));
        for (const QString& name : dir.entryList({QStringLiteral("*.attnlab")}, QDir::Files)) {
            const Session session = readSession(dir.filePath(name));
            const std::optional<InputSpec> swept = errorSweepInput(session);
            if (!swept)
                continue;
            ++sweeps;
            const InputSpec& spec = session.spec.input;
            QVERIFY2(swept->imagePath == spec.imagePath && swept->modelPath == spec.modelPath &&
                         swept->queryPath == spec.queryPath,
                     qPrintable(QStringLiteral("%1: the sweep's input names %2, the spec's %3")
                                    .arg(name, swept->imagePath + " " + swept->modelPath,
                                         spec.imagePath + " " + spec.modelPath)));
        }
    }
    QVERIFY2(sweeps >= 5, qPrintable(QString::number(sweeps)));
}

QTEST_GUILESS_MAIN(TestSessionPaths)
#include "test_session_paths.moc"

// Session files (.attnlab): a spec and the view state, written atomically and read either fully
// or not at all. Bad sessions come from the catalogue in tests/data/sessions (see its README).

#include "errors.h"
#include "sessions/session.h"
#include "session_support.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <limits>

using namespace attnlab;
using namespace attnlab::test;

Q_DECLARE_METATYPE(attnlab::Session)

namespace {

// Every entry of folder, recursively, hidden ones (QSaveFile's temporary files) included.
QStringList entriesBelow(const QString& folder)
{
    QStringList entries;
    const QDir dir(folder);
    for (const QFileInfo& info :
         dir.entryInfoList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot)) {
        entries.append(info.fileName());
        if (info.isDir() && !info.isSymLink())
            for (const QString& below : entriesBelow(info.filePath()))
                entries.append(info.fileName() + QLatin1Char('/') + below);
    }
    entries.sort();
    return entries;
}

// A view object as the GUI might keep it, with every JSON type and non-ASCII text.
QJsonObject richView()
{
    QJsonObject colours;
    colours[QLatin1String("attention")] = QStringLiteral("viridis");
    colours[QLatin1String("error")] = QStringLiteral("RdBu");
    colours[QLatin1String("range")] = QJsonArray{-0.25, 0.25};
    QJsonObject view;
    view[QLatin1String("head")] = 1;
    view[QLatin1String("query")] = 17;
    view[QLatin1String("error_mode")] = QStringLiteral("relative");
    view[QLatin1String("colour_maps")] = colours;
    view[QLatin1String("log_scale")] = true;
    view[QLatin1String("pinned")] = QJsonValue(QJsonValue::Null);
    view[QLatin1String("note")] =
        QStringLiteral("Aufmerksamkeit \u00fcber \u201cTokens\u201d, \u03c6(x) \u2248 e^x");
    view[QLatin1String("zoom")] = 0.1;
    return view;
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT

private slots:
    void writesTheDocumentedFormat();
    void roundTripGivesTheSameSpecAndView_data();
    void roundTripGivesTheSameSpecAndView();
    void largeSeedsSurviveExactly();
    void readsGoodFixtures();
    void minimalSessionHasDefaultsAndAnEmptyView();
    void refusesBadSessions_data();
    void refusesBadSessions();
    void refusesMissingFileAndFolder();
    void refusesUnreadableFile();
    void refusesHugeFileBeforeReadingIt();
    void readsAFileOfExactlyTheLargestSize();
    void refusesSpecValuesOutOfRange_data();
    void refusesSpecValuesOutOfRange();
    void writeToUnwritableLocationThrowsAndLeavesNoFile();
    void writeToReadOnlyFolderThrowsAndLeavesNoFile();
    void writeRefusesWhatWouldNotReadBack_data();
    void writeRefusesWhatWouldNotReadBack();
    void failedWriteKeepsTheExistingSession();
};

// sessionJson gives an indented JSON object with the format name, version 1, the spec as
// ExperimentSpec::toJson() gives it, and the view as it is.
void TestSession::writesTheDocumentedFormat()
{
    Session session;
    session.spec.input.text = QStringLiteral("attention is all you need");
    session.view = richView();
    const QByteArray bytes = sessionJson(session);
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QVERIFY(document.isObject());
    const QJsonObject root = document.object();
    QCOMPARE(root.value(QLatin1String("format")).toString(),
             QStringLiteral("attention-lab-session"));
    QCOMPARE(root.value(QLatin1String("version")).toInteger(), kSessionVersion);
    QCOMPARE(root.value(QLatin1String("spec")).toObject(), session.spec.toJson());
    QCOMPARE(root.value(QLatin1String("view")).toObject(), session.view);
    QCOMPARE(root.keys(), (QStringList{"format", "spec", "version", "view"}));
    QVERIFY2(bytes.contains("\n    \"format\""), "indented, one key a line");
}

void TestSession::roundTripGivesTheSameSpecAndView_data()
{
    // Paths: {folder} is the session's folder, {other} a folder beside it.
    QTest::addColumn<Session>("session");
    QTest::addColumn<QStringList>("storedPaths");  // image, q, k, v as the file holds them

    const QStringList noPaths{"", "", "", ""};
    Session text;
    QTest::newRow("text, defaults") << text << noPaths;

    text.spec.input.text =
        QStringLiteral("Der Hund bellt. \u732b\u304c\u5bdd\u3066\u3044\u308b\u3002");
    text.spec.input.tokenMode = TokenMode::Characters;
    text.spec.input.positionalEncoding = false;
    text.spec.input.heads = 4;
    text.spec.input.headDim = 16;
    text.spec.input.projection = HeadProjection::Tied;
    text.spec.input.normMultiplier = 2.75;
    text.view = richView();
    QTest::newRow("text, characters, 4 heads, tied") << text << noPaths;

    Session methods;
    methods.spec.setMethod(QStringLiteral("favor-hyperbolic"));
    methods.spec.approximation.features = 257;
    methods.spec.approximation.projection = ProjectionKind::Iid;
    methods.spec.approximation.rowNorm = RowNorm::SqrtD;
    methods.spec.approximation.seed = 123456789;
    methods.spec.scale = 0.1;
    methods.spec.causal = true;
    methods.spec.precision = Precision::Double;
    methods.spec.threads = 3;
    methods.spec.chunkSize = 7;
    methods.view = richView();
    QTest::newRow("non-default method parameters, scale set") << methods << noPaths;

    Session relu = methods;
    relu.spec.setMethod(QStringLiteral("favor-relu"));
    relu.spec.approximation.setValue(reluEpsilonParameter(), 0.0);
    relu.spec.scale = 1.0 / 3.0;
    QTest::newRow("favor-relu, epsilon 0, scale 1/3") << relu << noPaths;

    Session elu;
    elu.spec.setMethod(QStringLiteral("elu"));
    elu.spec.approximation.setValue(eluOnScaledParameter(), 1);
    elu.spec.causal = true;
    QTest::newRow("elu+1 on x', causal, scale unset") << elu << noPaths;

    Session exact;
    exact.spec.setMethod(QStringLiteral("exact"));
    QTest::newRow("exact") << exact << noPaths;

    Session random;
    random.spec.input.kind = InputKind::Random;
    random.spec.input.length = 1000;
    random.spec.input.rowNorm = 1.5;
    random.spec.input.clusters = 3;
    random.spec.input.seed = 42;
    random.spec.setMethod(QStringLiteral("favor-trig"));
    random.spec.scale.reset();
    random.view = QJsonObject{{"query", 999}};
    QTest::newRow("random, clusters, row norm set, scale unset") << random << noPaths;

    Session randomDefaultNorm = random;
    randomDefaultNorm.spec.input.rowNorm.reset();
    randomDefaultNorm.spec.scale = 2.0;
    QTest::newRow("random, row norm unset, scale set") << randomDefaultNorm << noPaths;

    Session seeds;
    seeds.spec.input.seed = (std::uint64_t(1) << 53) - 1;
    seeds.spec.approximation.seed = (std::uint64_t(1) << 53) - 2;
    QTest::newRow("seeds 2^53 - 1 and 2^53 - 2") << seeds << noPaths;

    Session imageRelative;
    imageRelative.spec.input.kind = InputKind::Image;
    imageRelative.spec.input.imagePath = QStringLiteral("{folder}/images/chelsea.png");
    imageRelative.spec.input.patchSize = 8;
    imageRelative.spec.input.imageSize = 96;
    imageRelative.view = QJsonObject{{"query", 5}, {"overlay", "exact"}};
    QTest::newRow("image in the session folder")
        << imageRelative << QStringList{"images/chelsea.png", "", "", ""};

    // The same session with its image elsewhere, and the image path the file must store.
    const auto addImageRow = [&](const char* name, const char* imagePath, const char* stored) {
        Session moved = imageRelative;
        moved.spec.input.imagePath = QString::fromUtf8(imagePath);
        QTest::newRow(name) << moved << QStringList{stored, "", "", ""};
    };
    addImageRow("image beside the session", "{folder}/chelsea.png", "chelsea.png");
    addImageRow("image elsewhere (absolute)", "{other}/photos/coffee.png",
                "{other}/photos/coffee.png");
    addImageRow("image from the resources", ":/images/astronaut.png", ":/images/astronaut.png");

    Session files;
    files.spec.input.kind = InputKind::Files;
    files.spec.input.queryPath = QStringLiteral("{folder}/q.npy");
    files.spec.input.keyPath = QStringLiteral("{folder}/tensors/layer 3/k.npy");
    files.spec.input.valuePath = QStringLiteral("{other}/v.npy");
    files.spec.setMethod(QStringLiteral("taylor2"));
    files.spec.input.normMultiplier = 0.5;
    QTest::newRow("files, in the folder and elsewhere")
        << files << QStringList{"", "q.npy", "tensors/layer 3/k.npy", "{other}/v.npy"};

    Session filesNoValues = files;
    filesNoValues.spec.input.valuePath.clear();
    QTest::newRow("files, no value file")
        << filesNoValues << QStringList{"", "q.npy", "tensors/layer 3/k.npy", ""};
}

// write -> read gives the same spec (toJson() compared) and the same view; paths in the session's
// folder are stored relative to it, others as they are; reading resolves them back.
void TestSession::roundTripGivesTheSameSpecAndView()
{
    QFETCH(Session, session);
    QFETCH(QStringList, storedPaths);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString folder = tmp.filePath(QStringLiteral("lecture"));
    const QString other = tmp.filePath(QStringLiteral("other"));
    const auto place = [&](QString path) {
        return path.replace(QLatin1String("{folder}"), folder)
            .replace(QLatin1String("{other}"), other);
    };
    for (QString* path : {&session.spec.input.imagePath, &session.spec.input.queryPath,
                          &session.spec.input.keyPath, &session.spec.input.valuePath})
        *path = place(*path);

    const QString path = folder + QStringLiteral("/demo.attnlab");
    writeSession(path, session);
    QCOMPARE(storedInputString(path, "image"), place(storedPaths[0]));
    QCOMPARE(storedInputString(path, "q"), place(storedPaths[1]));
    QCOMPARE(storedInputString(path, "k"), place(storedPaths[2]));
    QCOMPARE(storedInputString(path, "v"), place(storedPaths[3]));

    const Session read = readSession(path);
    QCOMPARE(read.spec.toJson(), session.spec.toJson());
    QCOMPARE(read.view, session.view);
    // Written again, the file is byte for byte the same.
    const QString again = folder + QStringLiteral("/again.attnlab");
    writeSession(again, read);
    QCOMPARE(readBytes(again), readBytes(path));
}

// Seeds are JSON numbers: every integer up to 2^53 - 1 comes back exactly.
void TestSession::largeSeedsSurviveExactly()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::uint64_t largest = (std::uint64_t(1) << 53) - 1;
    for (const std::uint64_t seed : {largest, largest - 1, largest - 2, std::uint64_t(1) << 52,
                                     (std::uint64_t(1) << 52) + 1}) {
        Session session;
        session.spec.input.seed = seed;
        session.spec.approximation.seed = largest - seed;
        const QString path = tmp.filePath(QStringLiteral("seed.attnlab"));
        writeSession(path, session);
        const Session read = readSession(path);
        QCOMPARE(read.spec.input.seed, seed);
        QCOMPARE(read.spec.approximation.seed, largest - seed);
    }
}

// The good fixtures read with the values they hold.
void TestSession::readsGoodFixtures()
{
    const Session text = readSession(fixture(QStringLiteral("text.attnlab")));
    QCOMPARE(text.spec.input.kind, InputKind::Text);
    QCOMPARE(text.spec.input.text, QStringLiteral("The cat sat on the mat because it was tired."));
    QCOMPARE(text.spec.input.heads, 2);
    QCOMPARE(text.spec.input.headDim, 32);
    QCOMPARE(text.spec.input.seed, (std::uint64_t(1) << 53) - 1);
    QCOMPARE(text.spec.methodName(), QStringLiteral("favor-hyperbolic"));
    QCOMPARE(text.spec.approximation.features, 96);
    QCOMPARE(text.spec.approximation.projection, ProjectionKind::Iid);
    QCOMPARE(text.spec.approximation.rowNorm, RowNorm::SqrtD);
    QCOMPARE(text.spec.approximation.seed, (std::uint64_t(1) << 53) - 2);
    QCOMPARE(text.spec.scale, std::optional<double>(0.25));
    QVERIFY(text.spec.causal);
    QCOMPARE(text.spec.precision, Precision::Double);
    QCOMPARE(text.spec.chunkSize, 16);
    QCOMPARE(text.view.value(QLatin1String("query")).toInt(), 3);
    QCOMPARE(text.view.value(QLatin1String("colour_map")).toString(), QStringLiteral("viridis"));
    QCOMPARE(text.view.value(QLatin1String("zoom")).toArray(), (QJsonArray{0, 0, 11, 11}));

    const Session files = readSession(fixture(QStringLiteral("files.attnlab")));
    QCOMPARE(files.spec.input.kind, InputKind::Files);
    QCOMPARE(files.spec.methodName(), QStringLiteral("elu"));
    QVERIFY(files.spec.approximation.isOn(eluOnScaledParameter()));
    QCOMPARE(files.view, (QJsonObject{{"query", 1}}));
}

// A spec with no fields is the default spec; a session without "view" has an empty view.
void TestSession::minimalSessionHasDefaultsAndAnEmptyView()
{
    const Session session = readSession(fixture(QStringLiteral("minimal.attnlab")));
    QCOMPARE(session.spec.toJson(), ExperimentSpec().toJson());
    QVERIFY(session.view.isEmpty());
}

void TestSession::refusesBadSessions_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("problem");  // every part must appear in the message

    const auto row = [](const char* file, const QStringList& problem) {
        QTest::newRow(file) << QString::fromLatin1(file) << problem;
    };
    row("empty.attnlab", {"the file is empty"});
    row("blank.attnlab", {"the file is empty (only white space)"});
    row("truncated.attnlab",
        {"not valid JSON", "at line 24, column 9 (byte offset 622)", "may be truncated"});
    // The missing comma is at the end of line 3; Qt notices it at the key on line 4.
    row("syntax-error.attnlab", {"not valid JSON", "at line 4, column "});
    row("array.attnlab", {"not a JSON object", "an array"});
    row("number.attnlab", {"not a JSON object", "a number"});
    row("no-format.attnlab", {"not an Attention Lab session", "no \"format\""});
    row("wrong-format.attnlab",
        {"not an Attention Lab session", "\"format\" is \"attention-lab-figure\""});
    row("no-version.attnlab", {"\"version\" is missing"});
    row("version-string.attnlab", {"\"version\" must be an integer (got \"1\")"});
    row("version-fraction.attnlab", {"\"version\" must be an integer (got 1.5)"});
    row("version-0.attnlab", {"\"version\" must be at least 1 (got 0)"});
    row("version-3.attnlab",
        {"written by a newer Attention Lab (version 3); this one reads versions 1 to 2"});
    row("no-spec.attnlab", {"\"spec\" is missing"});
    row("spec-string.attnlab", {"\"spec\" must be an object (got \"favor-positive\")"});
    row("view-array.attnlab", {"\"view\" must be an object (got an array)"});
    row("features-string.attnlab", {"spec: features must be a number"});
    row("features-0.attnlab", {"spec: features must be an integer from 1 to", "(got 0)"});
    row("unknown-method.attnlab", {"spec: method: unknown value \"favor-magic\""});
    row("negative-norm.attnlab", {"spec: ", "norm_multiplier"});
}

// Each bad session is refused with an InputError whose message starts with the path and says
// what is wrong; the Session it would have been assigned to is left as it was (never
// half-loaded: readSession returns a whole session or throws).
void TestSession::refusesBadSessions()
{
    QFETCH(QString, file);
    QFETCH(QStringList, problem);
    const QString path = fixture(file);
    QVERIFY2(QFileInfo::exists(path), qPrintable(path));

    Session session;
    session.spec.input.text = QStringLiteral("kept");
    session.view = richView();
    const QJsonObject specBefore = session.spec.toJson();
    const QString message = thrownMessage<InputError>([&] { session = readSession(path); });
    QVERIFY2(!message.isEmpty(), "the session was read");
    QVERIFY2(message.startsWith(path + QStringLiteral(": ")), qPrintable(message));
    for (const QString& part : problem)
        QVERIFY2(message.contains(part), qPrintable(message));
    QCOMPARE(session.spec.toJson(), specBefore);
    QCOMPARE(session.view, richView());
}

// A missing file and a folder are refused, naming the path.
void TestSession::refusesMissingFileAndFolder()
{
    const QString missing = fixture(QStringLiteral("no-such-session.attnlab"));
    QString message = thrownMessage<InputError>([&] { readSession(missing); });
    QCOMPARE(message, missing + QStringLiteral(": no such file"));

    message = thrownMessage<InputError>([&] { readSession(kFixtures); });
    QCOMPARE(message, kFixtures + QStringLiteral(": is a folder, not a session file"));
}

// A file that cannot be opened for reading is refused with the reason.
void TestSession::refusesUnreadableFile()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath(QStringLiteral("locked.attnlab"));
    QVERIFY(QFile::copy(fixture(QStringLiteral("text.attnlab")), path));
    QVERIFY(QFile::setPermissions(path, QFileDevice::WriteOwner));
    QFile probe(path);
    if (probe.open(QIODevice::ReadOnly))
        QSKIP("permissions do not stop this user from reading (root?)");
    const QString message = thrownMessage<InputError>([&] { readSession(path); });
    QVERIFY2(message.startsWith(path + QStringLiteral(": cannot read the file: ")),
             qPrintable(message));
}

// A file larger than 16 MiB is refused for its size alone, before it is read: this one starts
// with a valid session, and the rest (a sparse hole) is never looked at. (Generated here: a
// 16 MiB fixture does not belong in the repository.)
void TestSession::refusesHugeFileBeforeReadingIt()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath(QStringLiteral("huge.attnlab"));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.write(readBytes(fixture(QStringLiteral("text.attnlab")))) > 0);
        QVERIFY(file.resize(kLargestSessionBytes + 1));
    }
    const QString message = thrownMessage<InputError>([&] { readSession(path); });
    QCOMPARE(message, path + QStringLiteral(": the file is 16.0 MiB, larger than a session can "
                                            "be (16.0 MiB); it is not an Attention Lab session"));
}

// The limit is inclusive: a session padded with white space to exactly 16 MiB is read.
void TestSession::readsAFileOfExactlyTheLargestSize()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath(QStringLiteral("padded.attnlab"));
    QByteArray bytes = readBytes(fixture(QStringLiteral("text.attnlab")));
    bytes.append(QByteArray(kLargestSessionBytes - bytes.size(), ' '));
    writeBytes(path, bytes);
    QCOMPARE(QFileInfo(path).size(), kLargestSessionBytes);
    const QString message = thrownMessage<InputError>([&] { readSession(path); });
    QCOMPARE(message, QString());
}

void TestSession::refusesSpecValuesOutOfRange_data()
{
    // field ("input.x" or a top-level spec key) and its value. Upper limits are SpecLimits, which
    // the command line shares.
    QTest::addColumn<QString>("field");
    QTest::addColumn<QJsonValue>("value");

    const auto row = [](const char* name, const char* field, const QJsonValue& value) {
        QTest::newRow(name) << QString::fromLatin1(field) << value;
    };
    row("features 0", "features", 0);
    row("features 1.5", "features", 1.5);
    row("features 2^31", "features", 2147483648.0);
    row("features 2^20 + 1", "features", (1 << 20) + 1);
    row("d 0", "input.d", 0);
    row("d 2^16 + 1", "input.d", (1 << 16) + 1);
    row("heads 0", "input.heads", 0);
    row("heads 1025", "input.heads", 1025);
    row("patch 0", "input.patch", 0);
    row("patch 4097", "input.patch", 4097);
    row("patch 300 > image_size 224", "input.patch", 300);
    row("image_size 0", "input.image_size", 0);
    row("image_size 8193", "input.image_size", 8193);
    row("length 0", "input.length", 0);
    row("length -5", "input.length", -5);
    row("length 2e9", "input.length", 2e9);
    row("clusters -1", "input.clusters", -1);
    row("clusters 2^20 + 1", "input.clusters", (1 << 20) + 1);
    row("chunk 0", "chunk", 0);
    row("chunk 2^16 + 1", "chunk", (1 << 16) + 1);
    row("threads -1", "threads", -1);
    row("threads 1025", "threads", 1025);
    row("seed -1", "seed", -1);
    row("seed 2^53", "seed", 9007199254740992.0);
    row("input seed 0.5", "input.seed", 0.5);
    row("norm_multiplier 0", "input.norm_multiplier", 0);
    row("norm_multiplier -1.5", "input.norm_multiplier", -1.5);
    row("row_norm -1", "input.row_norm", -1);
    row("scale 0", "scale", 0);
    row("scale -0.5", "scale", -0.5);
    row("relu_epsilon -0.001", "relu_epsilon", -0.001);
}

// Values out of the range the GUI and the engine rely on are refused when the session is read,
// naming the file and the field, not later when the spec is used.
void TestSession::refusesSpecValuesOutOfRange()
{
    QFETCH(QString, field);
    QFETCH(QJsonValue, value);

    QJsonObject root = parsedObject(readBytes(fixture(QStringLiteral("text.attnlab"))));
    QJsonObject spec = root.value(QLatin1String("spec")).toObject();
    const bool inInput = field.startsWith(QLatin1String("input."));
    const QString key = inInput ? field.mid(6) : field;
    if (inInput) {
        QJsonObject input = spec.value(QLatin1String("input")).toObject();
        input[key] = value;
        spec[QLatin1String("input")] = input;
    } else {
        spec[key] = value;
    }
    root[QLatin1String("spec")] = spec;
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath(QStringLiteral("range.attnlab"));
    writeBytes(path, QJsonDocument(root).toJson());

    const QString message = thrownMessage<InputError>([&] { readSession(path); });
    QVERIFY2(!message.isEmpty(), "the session was read");
    QVERIFY2(blames(message, path + QStringLiteral(": spec: "), key), qPrintable(message));
}

// Writing where no file can be made throws OutputError naming the path and leaves nothing
// behind: no session, no temporary file.
void TestSession::writeToUnwritableLocationThrowsAndLeavesNoFile()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    writeBytes(tmp.filePath(QStringLiteral("plain.txt")), "a file, not a folder");
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("taken.attnlab")));
    const QStringList before = entriesBelow(tmp.path());
    Session session;
    session.view = richView();

    // Under a plain file: the folder cannot be made.
    const QString underFile = tmp.filePath(QStringLiteral("plain.txt/s.attnlab"));
    QString message = thrownMessage<OutputError>([&] { writeSession(underFile, session); });
    QVERIFY2(message.contains(tmp.filePath(QStringLiteral("plain.txt"))), qPrintable(message));
    QCOMPARE(entriesBelow(tmp.path()), before);

    // A folder in the way of the file.
    const QString taken = tmp.filePath(QStringLiteral("taken.attnlab"));
    message = thrownMessage<OutputError>([&] { writeSession(taken, session); });
    QVERIFY2(message.startsWith(taken + QStringLiteral(": ")), qPrintable(message));
    QCOMPARE(entriesBelow(tmp.path()), before);

    // No file name at all.
    message =
        thrownMessage<OutputError>([&] { writeSession(tmp.path() + QLatin1Char('/'), session); });
    QVERIFY2(!message.isEmpty(), "a folder path with no file name was accepted");
    QCOMPARE(entriesBelow(tmp.path()), before);
}

// Writing into a read-only folder throws OutputError naming the path and leaves the folder empty.
void TestSession::writeToReadOnlyFolderThrowsAndLeavesNoFile()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString locked = tmp.filePath(QStringLiteral("locked"));
    QVERIFY(QDir(tmp.path()).mkdir(QStringLiteral("locked")));
    QVERIFY(QFile::setPermissions(locked, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const auto unlock = qScopeGuard([&] {
        QFile::setPermissions(
            locked, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    });
    QFile probe(locked + QStringLiteral("/probe"));
    if (probe.open(QIODevice::WriteOnly)) {
        probe.remove();
        QSKIP("permissions do not stop this user from writing (root?)");
    }
    const QString path = locked + QStringLiteral("/s.attnlab");
    const QString message = thrownMessage<OutputError>([&] { writeSession(path, Session()); });
    QVERIFY2(message.startsWith(path + QStringLiteral(": ")), qPrintable(message));
    QCOMPARE(entriesBelow(locked), QStringList());
}

void TestSession::writeRefusesWhatWouldNotReadBack_data()
{
    QTest::addColumn<Session>("session");
    QTest::addColumn<QString>("problem");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    Session session;
    session.spec.scale = nan;
    QTest::newRow("scale NaN (would read back unset)") << session << QStringLiteral("NaN");
    session = Session();
    session.spec.input.normMultiplier = inf;
    QTest::newRow("norm multiplier inf") << session << QStringLiteral("norm_multiplier");
    session = Session();
    session.spec.approximation.features = 0;
    QTest::newRow("features 0") << session << QStringLiteral("features");
    session = Session();
    session.view[QLatin1String("zoom")] = nan;
    QTest::newRow("view with NaN") << session << QStringLiteral("view: ");
}

// writeSession never writes a file that readSession would refuse or read differently: JSON has
// no NaN or infinity (Qt writes null), and fromJson refuses some values. OutputError, no file.
void TestSession::writeRefusesWhatWouldNotReadBack()
{
    QFETCH(Session, session);
    QFETCH(QString, problem);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath(QStringLiteral("s.attnlab"));
    const QString message = thrownMessage<OutputError>([&] { writeSession(path, session); });
    QVERIFY2(blames(message, path + QStringLiteral(": not written"), problem), qPrintable(message));
    QCOMPARE(entriesBelow(tmp.path()), QStringList());
}

// A failed write over an existing session leaves the old file exactly as it was.
void TestSession::failedWriteKeepsTheExistingSession()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath(QStringLiteral("s.attnlab"));
    Session good;
    good.view = richView();
    writeSession(path, good);
    const QByteArray before = readBytes(path);

    Session bad = good;
    bad.spec.scale = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(!thrownMessage<OutputError>([&] { writeSession(path, bad); }).isEmpty());
    QCOMPARE(readBytes(path), before);
    QCOMPARE(entriesBelow(tmp.path()), QStringList{"s.attnlab"});
    QCOMPARE(readSession(path).view, good.view);
}

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"

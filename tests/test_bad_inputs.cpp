// The catalogue of bad, huge and hostile inputs (issue 8), run against the built program: one
// table, one row per input. Each row writes its input files into a fresh folder (crafted bytes;
// nothing large is committed: big files are sparse and made here), runs attention-lab with a
// time bound, and checks the exit status, that stderr names the file or argument at fault and
// says what is wrong, and that nothing in the folder was created or modified (a previous result
// and a previous screenshot sit there as bait). Rows that must work (L = 1, Fortran order) check
// instead that the outputs hold no unexplained NaN or infinity.

#include "app_process.h"
#include "errors.h"
#include "ui/images/image_loader.h"
#include "io/npy.h"
#include "sessions/session.h"
#include "inputs/text.h"
#include "model_support.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <cstring>
#include <functional>
#include <limits>
#include <vector>

using namespace attnlab;
using namespace attnlab::test;

namespace {

const QString kBadData = QStringLiteral(ATTNLAB_TEST_DATA "/bad");
const QString kSessionData = QStringLiteral(ATTNLAB_TEST_DATA "/sessions");

// The bytes of a .npy file of format version `major`.0 (1: 2-byte header length, 2: 4-byte) with
// `dict` as its header (padded so that the data starts at a multiple of 64 bytes) and `data` after
// it: lets a row write any header, lying or not.
QByteArray npyBytes(const QByteArray& dict, const QByteArray& data, int major = 1)
{
    const qint64 lengthBytes = major == 1 ? 2 : 4;
    const qint64 preamble = 6 + 2 + lengthBytes;
    const qint64 length = (preamble + dict.size() + 1 + 63) / 64 * 64 - preamble;
    QByteArray bytes("\x93NUMPY", 6);
    bytes.append(char(major)).append('\0');
    char field[4];
    qToLittleEndian<quint32>(quint32(length), field);
    bytes.append(field, lengthBytes).append(dict).append(length - dict.size() - 1, ' ');
    return bytes.append('\n') + data;
}

// The little-endian float64 bytes of `count` values value(0), value(1), ...
QByteArray float64Data(qint64 count, const std::function<double(qint64)>& value)
{
    QByteArray data(count * 8, Qt::Uninitialized);
    for (qint64 i = 0; i < count; ++i)
        qToLittleEndian<double>(value(i), data.data() + i * 8);
    return data;
}

// A well-formed float64 array of `shape` (C order) with smooth, varied values, and one value
// replaced by `poison` when it is given.
QByteArray goodNpy(const QByteArray& shape, qint64 count,
                   std::optional<double> poison = std::nullopt)
{
    return npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }",
                    float64Data(count, [&](qint64 i) {
                        return poison && i == count / 2 ? *poison : std::sin(0.7 * double(i));
                    }));
}

// The folder one catalogue row works in, and the path of the input at fault.
class CaseFolder {
public:
    explicit CaseFolder(const QString& path) : m_path(path) {}

    QString path() const { return m_path; }
    // Where the run writes: a folder for the commands.
    QString out() const { return m_path + QStringLiteral("/out"); }
    // Where --screenshot writes.
    QString screenshot() const { return m_path + QStringLiteral("/window.png"); }
    QString culprit() const { return m_culprit; }

    // Writes `bytes` to `name` in the folder and returns its path.
    QString write(const QString& name, const QByteArray& bytes) const
    {
        const QString path = m_path + QLatin1Char('/') + name;
        writeBytes(path, bytes);
        return path;
    }
    // As write(), and marks the file as the input at fault.
    QString writeCulprit(const QString& name, const QByteArray& bytes)
    {
        return m_culprit = write(name, bytes);
    }
    // A file of `size` bytes that starts with `head` and is a hole after it (sparse: a declared
    // size can be large without taking the disk). Marked as the input at fault.
    QString writeSparseCulprit(const QString& name, const QByteArray& head, qint64 size)
    {
        m_culprit = write(name, head);
        QFile file(m_culprit);
        if (!file.resize(size))
            qFatal("cannot resize %s", qPrintable(m_culprit));
        return m_culprit;
    }
    // Copies a committed fixture into the folder and marks it as the input at fault.
    QString copyCulprit(const QString& fixture)
    {
        m_culprit = m_path + QLatin1Char('/') + QFileInfo(fixture).fileName();
        if (!QFile::copy(fixture, m_culprit))
            qFatal("cannot copy %s", qPrintable(fixture));
        return m_culprit;
    }
    // A session file whose spec is the default one changed by `edit`, marked as the culprit.
    QString writeSessionCulprit(const QString& name, const std::function<void(QJsonObject&)>& edit)
    {
        QJsonObject root = QJsonDocument::fromJson(sessionJson(Session())).object();
        edit(root);
        return writeCulprit(name, QJsonDocument(root).toJson());
    }
    // Marks an argument (not a file) as what is at fault.
    void blameArgument(const QString& argument) { m_culprit = argument; }

private:
    QString m_path;
    QString m_culprit;
};

// Sets root.spec.<path> (dotted, e.g. "input.heads") to value.
void setSpecField(QJsonObject& root, const QString& path, const QJsonValue& value)
{
    QJsonObject spec = root.value(QLatin1String("spec")).toObject();
    const QStringList keys = path.split(QLatin1Char('.'));
    if (keys.size() == 2) {
        QJsonObject inner = spec.value(keys[0]).toObject();
        inner[keys[1]] = value;
        spec[keys[0]] = inner;
    } else {
        spec[path] = value;
    }
    root[QLatin1String("spec")] = spec;
}

// What a row expects of the run.
enum class Expect {
    Refused,   // the statuses given, the fragments on stderr, the folder unchanged
    Computed,  // exit 0 and outputs without unexplained NaN or inf
    Bounded,   // exit 0 with good outputs, or 3 with the fragments on stderr (the refusal)
};

// One entry of the catalogue.
struct BadInput {
    const char* name;
    // Writes the row's inputs into the folder, marks the culprit, returns the arguments.
    std::function<QStringList(CaseFolder&)> arrange;
    Expect expect;
    int exitCode;           // for Refused: 2 (bad input) or 3 (resources)
    QStringList fragments;  // each must be on stderr; "{culprit}" is replaced by the culprit
    int seconds = 60;       // the time bound of the run
};

// `compute` with these inputs, writing into the case's out folder.
QStringList computeArgs(const CaseFolder& folder, const QStringList& inputs)
{
    return QStringList{QStringLiteral("compute")} + inputs +
           QStringList{QStringLiteral("--out"), folder.out()};
}

// A copy of the tiny F16 GPT-2 fixture in the case's folder whose model.safetensors is replaced by
// what `damage` makes of (header JSON, data) (return the whole file), marked as the culprit;
// `compute --model` on it.
QStringList damagedModelArgs(
    CaseFolder& f, const std::function<QByteArray(QJsonObject&, const QByteArray&)>& damage)
{
    const QString fixture = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-gpt2-f16");
    const QString model = f.path() + QStringLiteral("/model");
    QDir().mkpath(model);
    for (const char* name : {"config.json", "vocab.json", "merges.txt"})
        QFile::copy(fixture + QLatin1Char('/') + QLatin1String(name),
                    model + QLatin1Char('/') + QLatin1String(name));
    QFile file(fixture + QStringLiteral("/model.safetensors"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read the tiny GPT-2 fixture");
    const QByteArray bytes = file.readAll();
    const quint64 length = qFromLittleEndian<quint64>(bytes.constData());
    QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, qsizetype(length))).object();
    f.writeCulprit(QStringLiteral("model/model.safetensors"),
                   damage(header, bytes.mid(8 + qsizetype(length))));
    return computeArgs(f, {"--model", model, "--text", "the cat"});
}

// A copy of the tiny RGB ViT fixture in the case's folder changed by `damage` (given the copy's
// folder; it marks the culprit); `compute --model` on it with the fixture's image.
QStringList damagedVitArgs(CaseFolder& f,
                           const std::function<void(CaseFolder&, const QString&)>& damage)
{
    const QString model = f.path() + QStringLiteral("/vit");
    QDir().mkpath(model);
    copyFixture(QStringLiteral("tiny-vit-rgb-f32"), model);
    damage(f, model);
    return computeArgs(f, {"--model", model, "--image", model + QStringLiteral("/image.png")});
}

// A safetensors file of header and data.
QByteArray safetensorsBytes(const QJsonObject& header, const QByteArray& data)
{
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    json.append(QByteArray((8 - json.size() % 8) % 8, ' '));
    QByteArray file(8, '\0');
    qToLittleEndian<quint64>(quint64(json.size()), file.data());
    return file + json + data;
}

// Sets one field of a tensor's entry in a safetensors header.
void setTensorField(QJsonObject& header, const QString& tensor, const QString& field,
                    const QJsonValue& value)
{
    QJsonObject entry = header.value(tensor).toObject();
    entry[field] = value;
    header[tensor] = entry;
}

// `--session FILE --screenshot PNG`: the window opens the session offscreen (how sessions are
// loaded without a display), then saves a screenshot.
QStringList sessionArgs(const CaseFolder& folder, const QString& session)
{
    return {QStringLiteral("--session"),    session,
            QStringLiteral("--screenshot"), folder.screenshot(),
            QStringLiteral("--size"),       QStringLiteral("800x600")};
}

// A row that gives a bad .npy as the queries (with good keys) and expects exit 2 naming it.
BadInput badQueries(const char* name, const QByteArray& bytes, const QStringList& problem)
{
    return {name,
            [bytes](CaseFolder& f) {
                const QString k = f.write("k.npy", goodNpy("(5, 3)", 15));
                return computeArgs(f, {"--q", f.writeCulprit("q.npy", bytes), "--k", k});
            },
            Expect::Refused, 2, QStringList{"{culprit}"} + problem};
}

// A row that gives an image file and expects exit 2 naming it.
BadInput badImage(const char* name, const QByteArray& bytes, const QStringList& problem)
{
    return {name,
            [bytes](CaseFolder& f) {
                return computeArgs(f, {"--image", f.writeCulprit("image.png", bytes)});
            },
            Expect::Refused, 2, QStringList{"{culprit}"} + problem};
}

// A row that opens a session whose default spec is changed by `edit`; expects exit 2 naming it.
BadInput badSession(const char* name, const std::function<void(QJsonObject&)>& edit,
                    const QStringList& problem)
{
    return {name,
            [edit](CaseFolder& f) {
                return sessionArgs(f, f.writeSessionCulprit("session.attnlab", edit));
            },
            Expect::Refused, 2, QStringList{"{culprit}"} + problem};
}

// A row that opens a committed session fixture; expects exit 2 naming it.
BadInput badSessionFixture(const char* name, const QString& fixture, const QStringList& problem)
{
    return {name, [fixture](CaseFolder& f) { return sessionArgs(f, f.copyCulprit(fixture)); },
            Expect::Refused, 2, QStringList{"{culprit}"} + problem};
}

// A row of `compute` options alone (the culprit is the option), expecting exit 2.
BadInput badOption(const char* name, const QStringList& options, const QString& option,
                   const QStringList& problem)
{
    return {name,
            [options, option](CaseFolder& f) {
                f.blameArgument(option);
                return computeArgs(f, options);
            },
            Expect::Refused, 2, QStringList{"{culprit}"} + problem};
}

// `count` words, each one of a small vocabulary, separated by spaces: `count` tokens.
QByteArray wordsText(qint64 count)
{
    static const char* const vocabulary[] = {"the", "cat", "sat", "on", "a", "warm", "mat"};
    QByteArray text;
    text.reserve(count * 4);
    for (qint64 i = 0; i < count; ++i)
        text.append(vocabulary[i % 7]).append(' ');
    return text;
}

// The catalogue.
const std::vector<BadInput>& catalogue()
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    static const std::vector<BadInput> rows = {
        // .npy files
        badQueries("npy: empty file", QByteArray(), {"not a .npy file"}),
        badQueries("npy: magic string only", QByteArray("\x93NUMPY", 6), {".npy"}),
        badQueries("npy: truncated data", goodNpy("(5, 3)", 15).chopped(12),
                   {"truncated", "120 bytes", "108"}),
        badQueries("npy: truncated header", goodNpy("(5, 3)", 15).left(40), {"header"}),
        badQueries("npy: oversized, data beyond the shape",
                   goodNpy("(5, 3)", 15) + QByteArray(64, '\0'),
                   {"64 more bytes", "does not match"}),
        badQueries("npy: lying header, shape far larger than the data",
                   npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (100000, "
                            "100000), }",
                            float64Data(15, [](qint64 i) { return double(i); })),
                   {"truncated", "(100000, 100000)"}),
        badQueries("npy: shape whose byte size overflows 64 bits",
                   npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': "
                            "(4294967296, 4294967296), }",
                            QByteArray()),
                   {"too large"}),
        badQueries("npy: complex64 '<c8'",
                   npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (5, 3), }",
                            QByteArray(120, '\0')),
                   {"'<c8'", "complex"}),
        badQueries("npy: object array '|O'",
                   npyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (5, 3), }",
                            QByteArray(120, '\0')),
                   {"object array", "pickle"}),
        badQueries("npy: big-endian float64 '>f8'",
                   npyBytes("{'descr': '>f8', 'fortran_order': False, 'shape': (5, 3), }",
                            QByteArray(120, '\0')),
                   {"big-endian"}),
        badQueries("npy: 4-D shape",
                   npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 5, 3), }",
                            float64Data(15, [](qint64 i) { return double(i); })),
                   {"4-D", "rank 1, 2 or 3"}),
        badQueries("npy: 1-D shape", goodNpy("(15,)", 15), {"1-D", "2-D"}),
        badQueries("npy: NaN value", goodNpy("(5, 3)", 15, nan), {"NaN", "[2, 1]"}),
        badQueries("npy: +Inf value", goodNpy("(5, 3)", 15, inf), {"+Inf"}),
        badQueries("npy: -Inf value", goodNpy("(5, 3)", 15, -inf), {"-Inf"}),
        badQueries("npy: header not a dict",
                   npyBytes("['descr', '<f8']", float64Data(15, [](qint64) { return 1.0; })),
                   {"header"}),
        badQueries("npy: header nested a million lists deep (format 2.0)",
                   npyBytes(QByteArray(1'000'000, '['), QByteArray(), 2), {"header", "nested"}),
        badQueries("npy: header of 16 MiB (format 2.0)",
                   npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (5, 3), " +
                                QByteArray(16 << 20, ' ') + "}",
                            QByteArray(120, '\0'), 2),
                   {"header", "MiB"}),
        badQueries("npy: negative dimension",
                   npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (-5, 3), }",
                            QByteArray(120, '\0')),
                   {"negative"}),
        {"npy: Q and K of different d",
         [](CaseFolder& f) {
             const QString q = f.write("q.npy", goodNpy("(5, 3)", 15));
             return computeArgs(f, {"--q", q, "--k", f.writeCulprit("k.npy", goodNpy("(5, 4)", 20))});
         },
         Expect::Refused, 2, {"{culprit}", "(5, 4)", "(5, 3)", "same"}},
        {"npy: Q with 2 heads, K with 1",
         [](CaseFolder& f) {
             const QString k = f.write("k.npy", goodNpy("(5, 3)", 15));
             return computeArgs(
                 f, {"--q", f.writeCulprit("q.npy", goodNpy("(2, 5, 3)", 30)), "--k", k});
         },
         Expect::Refused, 2, {"{culprit}", "(2, 5, 3)", "heads"}},
        {"npy: V of another length",
         [](CaseFolder& f) {
             const QString q = f.write("q.npy", goodNpy("(5, 3)", 15));
             return computeArgs(f, {"--q", q, "--k", q, "--v",
                                    f.writeCulprit("v.npy", goodNpy("(6, 3)", 18))});
         },
         Expect::Refused, 2, {"{culprit}", "(6, 3)", "positions"}},
        {"npy: declared 128 MiB (sparse) over a 64 MiB budget",
         [](CaseFolder& f) {
             const QByteArray header =
                 npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4096, 4096), }",
                          QByteArray());
             const QString q = f.writeSparseCulprit("q.npy", header,
                                                    header.size() + 4096LL * 4096 * 8);
             return computeArgs(f, {"--q", q, "--k", q, "--memory-budget", "64M"});
         },
         Expect::Refused, 3, {"{culprit}", "memory budget", "--memory-budget"}},
        {"npy: Fortran order (supported)",
         [](CaseFolder& f) {
             const QString q = f.write(
                 "q.npy",
                 npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (5, 3), }",
                          QByteArray(60, '\0').replace(0, 4, QByteArray("\0\0\x80\x3f", 4))));
             return computeArgs(f, {"--q", q, "--k", q});
         },
         Expect::Computed, 0, {}},

        // Images
        badImage("image: empty file", QByteArray(), {"cannot read the image"}),
        badImage("image: random bytes",
                 QByteArray(3000, '\0').replace(0, 8, "\x89PNG\r\n\x1a\n"),
                 {"cannot read the image"}),
        badImage("image: truncated PNG",
                 pngImage(64, 64, [](int x, int y) {
                     return std::array<quint8, 3>{quint8(x * 4), quint8(y * 4), 7};
                 }).left(200),
                 {"cannot read the image"}),
        badImage("image: zero-sized (0 x 0 declared)", pngDeclaring(0, 0),
                 {"cannot read the image"}),
        badImage("image: declares 30000 x 30000", pngDeclaring(30000, 30000),
                 {"30000 x 30000", "100 million"}),
        badImage("image: declares 2^31 - 1 x 1", pngDeclaring(0x7fffffff, 1),
                 {"cannot read the image"}),
        {"image: 16-bit 9000 x 9000, over the decoder's allocation limit",
         [](CaseFolder& f) {
             // 81 million pixels pass the pixel limit, but decoded at 16 bits a channel they
             // need 8 bytes a pixel (648 MB), over QImageReader's allocation limit (512 MiB).
             QByteArray header = bigEndian32(9000) + bigEndian32(9000);
             header.append(char(16)).append(char(2)).append(3, '\0');
             const QByteArray png = QByteArray("\x89PNG\r\n\x1a\n", 8) +
                                    pngChunk("IHDR", header) +
                                    pngChunk("IDAT", qCompress(QByteArray(97, '\0')).mid(4)) +
                                    pngChunk("IEND", QByteArray());
             return computeArgs(f, {"--image", f.writeCulprit("deep.png", png)});
         },
         Expect::Refused, 2, {"{culprit}", "cannot read the image"}},

        // Sessions (opened by the window, offscreen, before a screenshot)
        badSessionFixture("session: empty file", kSessionData + "/empty.attnlab",
                          {"the file is empty"}),
        badSessionFixture("session: truncated JSON", kSessionData + "/truncated.attnlab",
                          {"not valid JSON", "truncated"}),
        badSessionFixture("session: not a session", kSessionData + "/no-format.attnlab",
                          {"not an Attention Lab session"}),
        badSessionFixture("session: version missing", kSessionData + "/no-version.attnlab",
                          {"\"version\" is missing"}),
        badSessionFixture("session: spec missing", kSessionData + "/no-spec.attnlab",
                          {"\"spec\" is missing"}),
        badSessionFixture("session: spec of the wrong type",
                          kSessionData + "/spec-string.attnlab", {"\"spec\" must be an object"}),
        badSessionFixture("session: features a string",
                          kSessionData + "/features-string.attnlab", {"features"}),
        badSessionFixture("session: unknown version 3", kSessionData + "/version-3.attnlab",
                          {"newer Attention Lab"}),
        badSession("session: unknown version 99",
                   [](QJsonObject& root) { root["version"] = 99; }, {"newer", "version 99"}),
        badSession("session: heads 5000", [](QJsonObject& root) {
                       setSpecField(root, "input.heads", 5000);
                   }, {"heads", "5000"}),
        badSession("session: scale -1",
                   [](QJsonObject& root) { setSpecField(root, "scale", -1); }, {"scale"}),
        badSession("session: text a number",
                   [](QJsonObject& root) { setSpecField(root, "input.text", 42); }, {"text"}),
        badSession("session: input kind unknown", [](QJsonObject& root) {
                       setSpecField(root, "input.kind", "audio");
                   }, {"kind", "audio"}),
        badSession("session: norm multiplier -1.5", [](QJsonObject& root) {
                       setSpecField(root, "input.norm_multiplier", -1.5);
                   }, {"norm_multiplier"}),
        badSession("session: features 2^31", [](QJsonObject& root) {
                       setSpecField(root, "features", 2147483648.0);
                   }, {"features"}),

        {"session: its model folder is missing",
         [](CaseFolder& f) {
             const QString session = f.writeSessionCulprit("model.attnlab", [](QJsonObject& root) {
                 setSpecField(root, "input.kind", QStringLiteral("model"));
                 setSpecField(root, "input.model", QStringLiteral("moved-model"));
             });
             f.blameArgument(f.path() + QStringLiteral("/moved-model"));
             return sessionArgs(f, session);
         },
         Expect::Refused, 2, {"{culprit}", "no such model folder"}},

        // Model checkpoints (core/model/safetensors.h): the file and the tensor named
        {"model: truncated weights",
         [](CaseFolder& f) {
             return damagedModelArgs(f, [](QJsonObject& header, const QByteArray& data) {
                 return safetensorsBytes(header, data.left(data.size() - 100));
             });
         },
         Expect::Refused, 2, {"{culprit}", "h.1.mlp.c_proj.bias", "truncated"}},
        {"model: data offsets past the end",
         [](CaseFolder& f) {
             return damagedModelArgs(f, [](QJsonObject& header, const QByteArray& data) {
                 setTensorField(header, "wpe.weight", "data_offsets",
                                QJsonArray{0, data.size() + 4096});
                 return safetensorsBytes(header, data);
             });
         },
         Expect::Refused, 2, {"{culprit}", "wpe.weight", "past the end"}},
        {"model: a tensor missing",
         [](CaseFolder& f) {
             return damagedModelArgs(f, [](QJsonObject& header, const QByteArray& data) {
                 header["h.1.ln_2.renamed"] = header.take("h.1.ln_2.weight");
                 return safetensorsBytes(header, data);
             });
         },
         Expect::Refused, 2, {"{culprit}", "h.1.ln_2.weight", "missing"}},
        {"model: a shape that disagrees with config.json",
         [](CaseFolder& f) {
             return damagedModelArgs(f, [](QJsonObject& header, const QByteArray& data) {
                 setTensorField(header, "h.0.attn.c_attn.weight", "shape", QJsonArray{48, 16});
                 return safetensorsBytes(header, data);
             });
         },
         Expect::Refused, 2, {"{culprit}", "h.0.attn.c_attn.weight", "expected [16, 48]"}},
        {"model: unknown dtype",
         [](CaseFolder& f) {
             return damagedModelArgs(f, [](QJsonObject& header, const QByteArray& data) {
                 setTensorField(header, "ln_f.bias", "dtype", "F12");
                 return safetensorsBytes(header, data);
             });
         },
         Expect::Refused, 2, {"{culprit}", "ln_f.bias", "F12"}},
        {"model: header over the size limit",
         [](CaseFolder& f) {
             return damagedModelArgs(f, [](QJsonObject&, const QByteArray&) {
                 QByteArray file(8, '\0');
                 qToLittleEndian<quint64>(quint64(200) << 20, file.data());
                 return file + QByteArray("{") + QByteArray(100, ' ');
             });
         },
         Expect::Refused, 2, {"{culprit}", "header length"}},

        // ViT checkpoints and images (core/model/vit_model.h)
        {"vit: a bicubic preprocessor",
         [](CaseFolder& f) {
             return damagedVitArgs(f, [](CaseFolder& f, const QString& model) {
                 editJson(model + "/preprocessor_config.json",
                          [](QJsonObject& p) { p.insert("resample", 3); });
                 f.blameArgument(model + "/preprocessor_config.json");
             });
         },
         Expect::Refused, 2, {"{culprit}", "resample is 3", "bilinear"}},
        {"vit: a weight missing",
         [](CaseFolder& f) {
             return damagedVitArgs(f, [](CaseFolder& f, const QString& model) {
                 QList<RawTensor> tensors = rawTensorsOf(model + "/model.safetensors");
                 tensors.removeIf(
                     [](const RawTensor& t) { return t.name == "vit.layernorm.weight"; });
                 writeBytes(model + "/model.safetensors", safetensorsOf(tensors));
                 f.blameArgument(model + "/model.safetensors");
             });
         },
         Expect::Refused, 2, {"{culprit}", "vit.layernorm.weight", "missing"}},
        {"vit: image_size without its position embeddings",
         [](CaseFolder& f) {
             return damagedVitArgs(f, [](CaseFolder& f, const QString& model) {
                 editConfig(model, [](QJsonObject& c) { c.insert("image_size", 20); });
                 editJson(model + "/preprocessor_config.json",
                          [](QJsonObject& p) { p.insert("size", 20); });
                 f.blameArgument(model + "/model.safetensors");
             });
         },
         Expect::Refused, 2, {"{culprit}", "position_embeddings", "expected [1, 26, 16]"}},
        {"vit: an image file that is not an image",
         [](CaseFolder& f) {
             return computeArgs(f, {"--model", "builtin-vit", "--image",
                                    f.writeCulprit("image.png", "not a PNG")});
         },
         Expect::Refused, 2, {"{culprit}", "cannot read the image"}},
        badOption("vit: text for a ViT", {"--model", "builtin-vit", "--text", "a cat"}, "--text",
                  {"ViT", "an image"}),

        // Text
        badOption("text: 0 tokens (empty)", {"--text", ""}, "--text", {"no tokens"}),
        badOption("text: 0 tokens (white space)", {"--text", " \t\n "}, "--text", {"no tokens"}),
        {"text: file of 0 tokens",
         [](CaseFolder& f) { return computeArgs(f, {"--text-file", f.writeCulprit("empty.txt", {})}); },
         Expect::Refused, 2, {"{culprit}", "no tokens"}},
        {"text: 1,000,000 tokens",
         [](CaseFolder& f) {
             return computeArgs(f, {"--text-file", f.write("million.txt", wordsText(1'000'000))});
         },
         Expect::Bounded, 3, {"1000000", "memory budget", "--no-matrices"}, 120},

        // Sizes
        badOption("m = 0: --features 0", {"--features", "0"}, "--features", {"0"}),
        badOption("d = 0: --d 0", {"--d", "0"}, "--d", {"0"}),
        badOption("L = 0: --random 0", {"--random", "0"}, "--random", {"0"}),
        {"L = 1: --random 1 (works)",
         [](CaseFolder& f) { return computeArgs(f, {"--random", "1"}); }, Expect::Computed, 0, {}},
        {"L = 1: one token, causal (works)",
         [](CaseFolder& f) { return computeArgs(f, {"--text", "cat", "--causal"}); },
         Expect::Computed, 0, {}},
        {"d = 1: --d 1 (works)",
         [](CaseFolder& f) { return computeArgs(f, {"--random", "5", "--d", "1"}); },
         Expect::Computed, 0, {}},
    };
    return rows;
}

}  // namespace

class TestBadInputs : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void catalogue_data();
    void catalogue();
    void fuzzRegressions_data();
    void fuzzRegressions();
    void imageDecodingIsLimited();

private:
    QTemporaryDir m_dir;
    int m_cases = 0;
};

void TestBadInputs::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFileInfo(QStringLiteral(ATTNLAB_APP)).isExecutable(), ATTNLAB_APP);
}

void TestBadInputs::catalogue_data()
{
    QTest::addColumn<int>("row");
    const std::vector<BadInput>& rows = ::catalogue();
    for (std::size_t i = 0; i < rows.size(); ++i)
        QTest::newRow(rows[i].name) << int(i);
}

// Property: every entry ends within its time bound without a crash, with its exit status; a
// refused input names the file or argument at fault and the problem on stderr, and leaves every
// file in its folder (inputs, a previous result in --out, a previous screenshot) as it was; an
// input that works writes outputs in which no NaN or infinity goes without a warning.
void TestBadInputs::catalogue()
{
    QFETCH(int, row);
    const BadInput& entry = ::catalogue()[std::size_t(row)];
    CaseFolder folder(m_dir.filePath(QStringLiteral("case_%1").arg(++m_cases)));
    QVERIFY(QDir().mkpath(folder.out()));
    writeBytes(folder.out() + QStringLiteral("/metrics.json"), "{\"previous\": true}\n");
    writeBytes(folder.screenshot(), "previous screenshot");
    const QStringList arguments = entry.arrange(folder);
    const std::map<QString, QByteArray> before = folderSnapshot(folder.path());

    const AppRun run = runAttentionLab(arguments, folder.path(), entry.seconds * 1000);
    QVERIFY2(run.finished,
             qPrintable(
                 QStringLiteral("no exit within %1 s: %2").arg(entry.seconds).arg(run.describe())));
    QVERIFY2(!run.crashed, qPrintable(run.describe()));

    if (entry.expect == Expect::Computed ||
        (entry.expect == Expect::Bounded && run.exitCode == 0)) {
        QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
        const QStringList problems = unexplainedNonFinite(folder.out());
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        return;
    }
    QVERIFY2(run.exitCode == entry.exitCode, qPrintable(run.describe()));
    // A command says it in one line; the window (--session) in the first line of its message.
    const QString err = QString::fromUtf8(run.err);
    // The offscreen platform's own warnings ("This plugin does not support
    // propagateSizeHints()") may come before the window's message.
    QStringList lines = err.split(QLatin1Char('\n'));
    while (lines.size() > 1 && lines.first().startsWith(QLatin1String("This plugin does not")))
        lines.removeFirst();
    const QString firstLine = lines.first();
    if (arguments.first() == QLatin1String("compute"))
        QVERIFY2(err.endsWith('\n') && err.count('\n') == 1,
                 qPrintable("not one line on stderr:\n" + run.describe()));
    else
        QVERIFY2(firstLine.startsWith(QLatin1String("attention-lab: ")),
                 qPrintable(run.describe()));
    for (QString fragment : entry.fragments) {
        fragment.replace(QStringLiteral("{culprit}"), folder.culprit());
        QVERIFY2(firstLine.contains(fragment),
                 qPrintable(QStringLiteral("\"%1\" missing:\n%2").arg(fragment, run.describe())));
    }
    const QStringList changed = changedEntries(before, folderSnapshot(folder.path()));
    QVERIFY2(changed.isEmpty(), qPrintable(changed.join(", ")));
}

void TestBadInputs::fuzzRegressions_data()
{
    QTest::addColumn<QString>("path");
    const QStringList files = QDir(kBadData).entryList(
        {QStringLiteral("*.npy"), QStringLiteral("*.attnlab"), QStringLiteral("*.txt")},
        QDir::Files, QDir::Name);
    for (const QString& name : files)
        QTest::newRow(qPrintable(name)) << kBadData + QLatin1Char('/') + name;
}

// Property: every input in tests/data/bad (crafted or found by the fuzzers, see its README) is
// handled by its reader without a crash: a .npy or a session is read or refused with an error
// whose message starts with its path; a text is split into tokens that are non-empty and trimmed.
void TestBadInputs::fuzzRegressions()
{
    QFETCH(QString, path);
    QString message;
    if (path.endsWith(QLatin1String(".npy"))) {
        NpyReadOptions options;
        options.budget = MemoryBudget(qint64(64) << 20);
        message = thrownMessage<InputError>([&] { readNpy(path, options); });
        if (message.isEmpty())
            message = thrownMessage<ResourceError>([&] { readNpy(path, options); });
    } else if (path.endsWith(QLatin1String(".attnlab"))) {
        message = thrownMessage<InputError>([&] { readSession(path); });
    } else {
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        for (const TokenMode mode : {TokenMode::Words, TokenMode::Characters})
            for (const QString& token : tokenize(text, mode))
                QVERIFY(!token.isEmpty() && token == token.trimmed());
        return;
    }
    QVERIFY2(message.isEmpty() || message.startsWith(path + QStringLiteral(": ")),
             qPrintable(message));
}

namespace {

// Qt's warnings while an image is decoded (QImageIOHandler says why it rejects an image).
QStringList g_imageWarnings;

// Keeps the messages of the image decoders for imageDecodingIsLimited.
void keepImageWarning(QtMsgType, const QMessageLogContext&, const QString& message)
{
    g_imageWarnings.append(message);
}

}  // namespace

// Property: the image loader bounds decoding twice. An image declaring more than 100 million
// pixels is refused from its header, before the decoder runs. One under that many pixels that
// would still take more than QImageReader's allocation limit once decoded (9000 x 9000 at 16 bits
// a channel: 648 MB) is refused by the decoder before it allocates (its warning names the limit),
// and the loader reports it as an InputError naming the file. The limit stays set (512 MiB).
void TestBadInputs::imageDecodingIsLimited()
{
    const QString huge = m_dir.filePath(QStringLiteral("huge.png"));
    writeBytes(huge, pngDeclaring(30000, 30000));
    QString message = thrownMessage<InputError>([&] { loadImagePixels(huge, 224); });
    QVERIFY2(blames(message, huge, "30000 x 30000"), qPrintable(message));

    QByteArray header = bigEndian32(9000) + bigEndian32(9000);
    header.append(char(16)).append(char(2)).append(3, '\0');
    const QString deep = m_dir.filePath(QStringLiteral("deep.png"));
    writeBytes(deep, QByteArray("\x89PNG\r\n\x1a\n", 8) + pngChunk("IHDR", header) +
                         pngChunk("IDAT", qCompress(QByteArray(97, '\0')).mid(4)) +
                         pngChunk("IEND", QByteArray()));
    g_imageWarnings.clear();
    const QtMessageHandler previous = qInstallMessageHandler(keepImageWarning);
    message = thrownMessage<InputError>([&] { loadImagePixels(deep, 224); });
    qInstallMessageHandler(previous);
    QVERIFY2(blames(message, deep, "cannot read the image"), qPrintable(message));
    QVERIFY2(g_imageWarnings.join('\n').contains("allocation limit"),
             qPrintable(g_imageWarnings.join('\n')));
    QCOMPARE(QImageReader::allocationLimit(), 512);
}

QTEST_GUILESS_MAIN(TestBadInputs)
#include "test_bad_inputs.moc"

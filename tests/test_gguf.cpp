// GGUF files (core/model/gguf_file, ggml_types, gguf_weights, gguf_model, gguf_tokenizer):
// - a GGUF file converted from a tiny Hugging Face checkpoint (tests/data/gguf/
//   make_gguf_fixtures.py, as llama.cpp's converter writes it: Llama's q/k rows permuted,
//   GPT-NeoX's [Q; K; V], GPT-2's transposed Conv1D weights, llama3 scaling as rope_freqs) gives
//   the attention of the same checkpoint read from its safetensors to 1e-5, in F32, F16 and BF16;
// - each file quantized by ggml's own quantizers (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K,
// and
//   a Q4_K_M mix whose tensors fall back to Q5_0 and Q8_0) gives, to 1e-4, the attention and the
//   logits of a forward pass on ggml's own dequantized values;
// - the tokenizer of the metadata ("gpt2" with the pre-tokenizers gpt-2, llama-bpe, qwen2, smollm;
//   "llama" SentencePiece with scores and byte tokens) gives the reference ids of the
//   tokenizer.json fixtures (Hugging Face's tokenizers, SentencePiece itself for Llama 2);
// - a damaged file (truncated, wrong magic, a count or length past the end, an offset out of range
//   or misaligned, a size that disagrees with type and dimensions, a missing key, an unknown
//   architecture, type or pre-tokenizer) is refused naming the file and the key or tensor, and on
//   the command line with exit status 2 and nothing written; compute, render and model-eval run a
//   .gguf file.

#include "errors.h"
#include "gguf_support.h"
#include "inputs/model_input.h"
#include "model/gguf_file.h"
#include "model/gguf_model.h"
#include "model/gguf_tokenizer.h"
#include "model/language_model.h"
#include "model_support.h"
#include "app_process.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <map>
#include <tuple>

using namespace attnlab;
using namespace attnlab::test;

Q_DECLARE_METATYPE(std::vector<int>)

namespace {

const QString kTokenizers = QStringLiteral(ATTNLAB_TEST_DATA "/tokenizers");

// The F32 file against its safetensors model, both in float, each against the float64 reference:
// the same sums in the same order but for the layouts undone, so their attention agrees to about
// 1e-7; 1e-5 (the bound) still fails for a head's rows permuted wrongly, the wrong RoPE
// pairs, or a fused qkv taken in the wrong order.
constexpr double kConvertedTolerance = 1e-5;
// A quantized file against the float64 pass on ggml's dequantized values: the dequantization is
// ggml's arithmetic in float (at most an ulp from ggml's where a product is fused or not), then the
// forward pass in float, about 1e-6 off; 1e-4 (the bound) fails for a nibble or a 6-bit
// scale read from the wrong place, which moves weights by a whole quantization step.
constexpr double kQuantizedTolerance = 1e-4;

// The attention of every head of every captured layer, by the definition.
std::vector<std::vector<MatrixD>> attentionOf(const ForwardResult& result, int heads)
{
    std::vector<std::vector<MatrixD>> layers;
    for (const LayerQkv& layer : result.layers) {
        layers.emplace_back();
        for (int h = 0; h < heads; ++h)
            layers.back().push_back(attentionByHand(layer, heads, h, 0));
    }
    return layers;
}

// max |P - reference| over the heads of layer l, the reference H x L x L.
double attentionError(const std::vector<MatrixD>& heads, const NpyArray& expected)
{
    const qint64 length = heads.front().rows();
    double error = 0;
    for (std::size_t i = 0; i < expected.values.size(); ++i)
        error = std::max(
            error,
            std::abs(
                heads[i / std::size_t(length * length)].data()[i % std::size_t(length * length)] -
                expected.values[i]));
    return error;
}

// The position of the type field of tensor `name`'s info in a GGUF file (after its name, n_dims
// and dims); the offset follows 4 bytes later.
qsizetype tensorTypeAt(const QByteArray& file, const QString& name, int dims)
{
    const qsizetype at = file.indexOf(GgufBuilder::text(name));
    if (at < 0)
        qFatal("no tensor %s", qPrintable(name));
    return at + GgufBuilder::text(name).size() + 4 + 8 * dims;
}

QByteArray patched(QByteArray file, qsizetype at, const QByteArray& bytes)
{
    file.replace(at, bytes.size(), bytes);
    return file;
}

}  // namespace

class TestGguf : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    // A file of these bytes in the temporary folder.
    QString written(const QString& name, const QByteArray& bytes) const
    {
        const QString path = m_dir.filePath(name);
        writeBytes(path, bytes);
        return path;
    }

    // The model of the current row's bytes is refused naming the file and the expected text.
    void checkRefusal()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        const QString path = written(QStringLiteral("damaged.gguf"), bytes);
        const QString message = thrownMessage<InputError>([&] { loadLanguageModel(path); });
        QVERIFY2(blames(message, path + QStringLiteral(": "), expected), qPrintable(message));
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Every scalar type, strings, arrays (of numbers, of strings, nested), general.alignment.
    void readsTypedMetadata()
    {
        GgufBuilder gguf;
        gguf.alignment = 64;
        gguf.addU32(QStringLiteral("general.alignment"), 64);
        gguf.addRaw(QStringLiteral("a.u8"), 0, QByteArray(1, char(200)));
        gguf.addRaw(QStringLiteral("a.i8"), 1, QByteArray(1, char(-5)));
        gguf.addRaw(QStringLiteral("a.u16"), 2, GgufBuilder::little<quint16>(65000));
        gguf.addRaw(QStringLiteral("a.i16"), 3, GgufBuilder::little<qint16>(-300));
        gguf.addRaw(QStringLiteral("a.i32"), 5, GgufBuilder::little<qint32>(-70000));
        gguf.addRaw(QStringLiteral("a.u64"), 10, GgufBuilder::little<quint64>(1ull << 40));
        gguf.addRaw(QStringLiteral("a.i64"), 11, GgufBuilder::little<qint64>(-(1ll << 40)));
        gguf.addRaw(QStringLiteral("a.f64"), 12, GgufBuilder::little<double>(0.1));
        gguf.addF32(QStringLiteral("a.f32"), 2.5f);
        gguf.addBool(QStringLiteral("a.bool"), true);
        gguf.addString(QStringLiteral("a.text"), QStringLiteral("naïve ▁"));
        gguf.addStrings(QStringLiteral("a.words"),
                        {QStringLiteral("x"), QString(), QStringLiteral("é")});
        gguf.addNumbers<float>(QStringLiteral("a.floats"), GgufBuilder::Float32, {1.5f, -2});
        gguf.addNumbers<qint32>(QStringLiteral("a.ints"), GgufBuilder::Int32, {7, -1});
        gguf.addRaw(QStringLiteral("a.nested"), GgufBuilder::Array,
                    GgufBuilder::little<quint32>(GgufBuilder::Array) +
                        GgufBuilder::little<quint64>(1) +
                        GgufBuilder::little<quint32>(GgufBuilder::UInt8) +
                        GgufBuilder::little<quint64>(2) + QByteArray("\1\2"));
        gguf.addTensor(QStringLiteral("t"), 0, {2},
                       GgufBuilder::little(1.0f) + GgufBuilder::little(-3.0f));
        const GgufFile file(written(QStringLiteral("typed.gguf"), gguf.bytes()));
        QCOMPARE(file.alignment(), quint64(64));
        QCOMPARE(file.keys().size(), 16);
        QCOMPARE(file.unsignedInteger(QStringLiteral("a.u8")), quint64(200));
        QCOMPARE(file.number(QStringLiteral("a.i8")), -5.0);
        QCOMPARE(file.unsignedInteger(QStringLiteral("a.u16")), quint64(65000));
        QCOMPARE(file.number(QStringLiteral("a.i16")), -300.0);
        QCOMPARE(file.number(QStringLiteral("a.i32")), -70000.0);
        QCOMPARE(file.unsignedInteger(QStringLiteral("a.u64")), quint64(1) << 40);
        QCOMPARE(file.number(QStringLiteral("a.i64")), -std::ldexp(1.0, 40));
        QCOMPARE(file.number(QStringLiteral("a.f64")), 0.1);
        QCOMPARE(file.number(QStringLiteral("a.f32")), 2.5);
        QCOMPARE(file.boolean(QStringLiteral("a.bool"), false), true);
        QCOMPARE(file.string(QStringLiteral("a.text")), QStringLiteral("naïve ▁"));
        const std::vector<QByteArrayView> words = file.byteStrings(QStringLiteral("a.words"));
        QCOMPARE(words.size(), std::size_t(3));
        QCOMPARE(QString::fromUtf8(words[2]), QStringLiteral("é"));
        QCOMPARE(file.floats(QStringLiteral("a.floats")), (std::vector<float>{1.5f, -2}));
        QCOMPARE(file.integers(QStringLiteral("a.ints")), (std::vector<std::int64_t>{7, -1}));
        QCOMPARE(file.arrayLength(QStringLiteral("a.nested")), quint64(1));
        QCOMPARE(file.values(*file.find(QStringLiteral("t"))), (std::vector<float>{1, -3}));
        // A value of another type than asked for is refused with both types named.
        QVERIFY(thrownMessage<InputError>([&] {
                    file.unsignedInteger(QStringLiteral("a.i32"));
                }).contains(QStringLiteral("a.i32 is -70000; expected an integer >= 0")));
        QVERIFY(thrownMessage<InputError>([&] {
                    file.string(QStringLiteral("a.f32"));
                }).contains(QStringLiteral("a.f32 is a float32; expected a string")));
        QVERIFY(thrownMessage<InputError>([&] {
                    file.floats(QStringLiteral("a.words"));
                }).contains(QStringLiteral("is an array of string; expected an array of numbers")));
    }

    // The converted files give the safetensors model's attention, and the reference's.
    void convertedFilesEqualSafetensors_data()
    {
        QTest::addColumn<QString>("gguf");
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("architecture");
        QTest::newRow("llama GQA llama3 F32") << "llama-gqa-f32"
                                              << "tiny-llama-gqa-f32"
                                              << "llama";
        QTest::newRow("llama BF16") << "llama-bf16"
                                    << "tiny-llama-bf16"
                                    << "llama";
        QTest::newRow("qwen2 F32") << "qwen2-f32"
                                   << "tiny-qwen2-f32"
                                   << "qwen2";
        QTest::newRow("pythia F32") << "pythia-parallel-f32"
                                    << "tiny-pythia-parallel-f32"
                                    << "gpt_neox";
        QTest::newRow("gpt2 F32") << "gpt2-f32"
                                  << "tiny-gpt2-prefixed-f32"
                                  << "gpt2";
        QTest::newRow("gpt2 F16") << "gpt2-f16"
                                  << "tiny-gpt2-f16"
                                  << "gpt2";
    }
    void convertedFilesEqualSafetensors()
    {
        QFETCH(QString, gguf);
        QFETCH(QString, folder);
        QFETCH(QString, architecture);
        const auto fromGguf = loadLanguageModel(ggufFixture(gguf));
        const auto fromFolder = loadLanguageModel(kModelFixtures + QLatin1Char('/') + folder);
        QCOMPARE(fromGguf->info().architecture, architecture);
        QCOMPARE(fromGguf->info().positionalScheme(),
                 fromFolder->info().positionalScheme().replace(
                     QRegularExpression(QStringLiteral(", llama3 scaling .*")),
                     QStringLiteral(", a scaling factor per frequency (rope_freqs)")));
        const std::vector<int> ids = referenceTokens(folder);
        const ForwardResult a = fromGguf->forward(ids);
        const ForwardResult b = fromFolder->forward(ids);
        const int heads = fromGguf->heads();
        const auto attentionA = attentionOf(a, heads);
        const auto attentionB = attentionOf(b, heads);
        QCOMPARE(attentionA.size(), std::size_t(fromFolder->layers()));
        for (std::size_t l = 0; l < attentionA.size(); ++l) {
            for (int h = 0; h < heads; ++h)
                QVERIFY2((attentionA[l][std::size_t(h)] - attentionB[l][std::size_t(h)])
                                 .cwiseAbs()
                                 .maxCoeff() <= kConvertedTolerance,
                         qPrintable(QStringLiteral("layer %1 head %2").arg(l).arg(h)));
            const double error = attentionError(
                attentionA[l], reference(folder, QStringLiteral("attention_layer%1.npy").arg(l)));
            QVERIFY2(error <= kConvertedTolerance, qPrintable(QString::number(error)));
            // Queries and keys as the scores see them: the layouts undone, RoPE rotate-half.
            QVERIFY((a.layers[l].q - b.layers[l].q).cwiseAbs().maxCoeff() <= 1e-5f);
            QVERIFY((a.layers[l].k - b.layers[l].k).cwiseAbs().maxCoeff() <= 1e-5f);
        }
        QVERIFY(scaledError(reference(folder, QStringLiteral("logits.npy")),
                            [&](qint64 i) { return a.logits.data()[i]; }) <= kConvertedTolerance);
    }

    // The quantized files give the pass on ggml's own dequantized values; their tensors are of the
    // types the plan of make_gguf_fixtures.py says (a fixture silently left in F32 would pass).
    void quantizedFilesEqualGgmlDequantized_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("tensor");
        QTest::addColumn<QString>("type");
        QTest::newRow("Q8_0") << "llama-q8_0"
                              << "blk.1.attn_q.weight"
                              << "Q8_0";
        QTest::newRow("Q4_0") << "llama-q4_0"
                              << "blk.1.attn_k.weight"
                              << "Q4_0";
        QTest::newRow("Q4_1") << "llama-q4_1"
                              << "blk.0.ffn_down.weight"
                              << "Q4_1";
        QTest::newRow("Q5_0") << "llama-q5_0"
                              << "token_embd.weight"
                              << "Q5_0";
        QTest::newRow("Q5_1") << "llama-q5_1"
                              << "output.weight"
                              << "Q5_1";
        QTest::newRow("Q4_K") << "llama-q4_k"
                              << "blk.0.attn_q.weight"
                              << "Q4_K";
        QTest::newRow("Q5_K") << "llama-q5_k"
                              << "blk.0.ffn_gate.weight"
                              << "Q5_K";
        QTest::newRow("Q6_K") << "llama-q6_k"
                              << "blk.0.attn_k.weight"
                              << "Q6_K";
        QTest::newRow("Q4_K_M falls back to Q5_0") << "qwen2-q4_k_m"
                                                   << "blk.0.attn_q.weight"
                                                   << "Q5_0";
        QTest::newRow("Q4_K_M falls back to Q8_0") << "qwen2-q4_k_m"
                                                   << "blk.1.attn_v.weight"
                                                   << "Q8_0";
        QTest::newRow("pythia Q8_0") << "pythia-q8_0"
                                     << "blk.0.attn_qkv.weight"
                                     << "Q8_0";
        QTest::newRow("gpt2 Q5_1") << "gpt2-q5_1"
                                   << "blk.1.ffn_up.weight"
                                   << "Q5_1";
    }
    void quantizedFilesEqualGgmlDequantized()
    {
        QFETCH(QString, name);
        QFETCH(QString, tensor);
        QFETCH(QString, type);
        {
            const GgufFile file(ggufFixture(name));
            QVERIFY(file.find(tensor));
            QCOMPARE(QString::fromLatin1(file.find(tensor)->traits->name), type);
        }
        const QString references = kGgufFixtures + QStringLiteral("/reference/") + name;
        const auto model = loadLanguageModel(ggufFixture(name));
        const ForwardResult result = model->forward(referenceTokensIn(references));
        const auto attention = attentionOf(result, model->heads());
        for (std::size_t l = 0; l < attention.size(); ++l) {
            const double error = attentionError(
                attention[l],
                readNpy(references + QStringLiteral("/attention_layer%1.npy").arg(l)));
            QVERIFY2(error <= kQuantizedTolerance,
                     qPrintable(QStringLiteral("layer %1: %2").arg(l).arg(error)));
        }
        QVERIFY(scaledError(readNpy(references + QStringLiteral("/logits.npy")), [&](qint64 i) {
                    return result.logits.data()[i];
                }) <= kQuantizedTolerance);
    }

    // The metadata-only shape equals the loaded model's.
    void infoFromMetadata()
    {
        const LanguageModelInfo info = languageModelInfo(ggufFixture(QStringLiteral("llama-q4_k")));
        QCOMPARE(info.architecture, QStringLiteral("llama"));
        QCOMPARE(info.layers, 1);
        QCOMPARE(info.heads, 4);
        QCOMPARE(info.keyValueHeads, 2);
        QCOMPARE(info.headDim, 64);
        QCOMPARE(info.vocabularySize, 269);
        QCOMPARE(modelArchitectureOf(ggufFixture(QStringLiteral("pythia-q8_0"))),
                 ModelArchitecture::GptNeox);
    }

    // The tokenizer of the metadata gives the reference ids and decoded texts of
    // tests/data/tokenizers/expected_ids.json.
    void tokenizesLikeTheReferences_data();
    void tokenizesLikeTheReferences();

    // The tiny models' GGUF tokenizer encodes as their folder's tokenizer.json.
    void modelTokenizerEqualsFolders()
    {
        const auto gguf = loadLanguageModel(ggufFixture(QStringLiteral("llama-gqa-f32")));
        const auto folder =
            loadLanguageModel(kModelFixtures + QStringLiteral("/tiny-llama-gqa-f32"));
        for (const QString& text : {QStringLiteral("the theatre<|endoftext|> at when"),
                                    QStringLiteral("ünïcode\n\ttabs  spaces")}) {
            QCOMPARE(gguf->tokenizer().encode(text), folder->tokenizer().encode(text));
            const std::vector<int> ids = gguf->tokenizer().encode(text);
            QCOMPARE(gguf->tokenizer().decode(ids), folder->tokenizer().decode(ids));
            for (const int id : ids)
                QCOMPARE(gguf->tokenizer().label(id), folder->tokenizer().label(id));
        }
    }

    void refusesDamagedFiles_data();
    void refusesDamagedFiles();
    void refusesBadModels_data();
    void refusesBadModels();

    // Every cut of a file short of its end is refused, naming the file and saying it ends too
    // soon (never a crash).
    void refusesTruncatedFiles()
    {
        const QByteArray whole = fileBytes(ggufFixture(QStringLiteral("qwen2-q4_k_m")));
        for (qsizetype size = 0; size < whole.size(); size += std::max<qsizetype>(1, size / 3)) {
            const QString path = written(QStringLiteral("cut.gguf"), whole.left(size));
            const QString message = thrownMessage<InputError>([&] { loadLanguageModel(path); });
            QVERIFY2(message.startsWith(path) &&
                         (message.contains(QStringLiteral("truncated")) ||
                          message.contains(QStringLiteral("past the end")) ||
                          message.contains(QStringLiteral("bytes left in the file"))),
                     qPrintable(QStringLiteral("%1 bytes: %2").arg(size).arg(message)));
        }
    }

    void recognisesGgufFilesByTheirMagic();
    void commandLineRunsGgufFiles();
    void commandLineRefusesBadFiles();
};

void TestGguf::tokenizesLikeTheReferences_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("text");
    QTest::addColumn<std::vector<int>>("ids");
    QTest::addColumn<QString>("decoded");
    const auto object = [](const QByteArray& bytes) {
        return QJsonDocument::fromJson(bytes).object();
    };
    const QJsonObject gpt2Pipeline = object(fileBytes(kTokenizers + "/gpt2_pipeline.json"));
    // GPT-2's tokenizer.json: its pipeline with the vocabulary and merges of tests/data/models.
    QJsonObject gpt2 = gpt2Pipeline;
    QJsonObject model = gpt2.value(QStringLiteral("model")).toObject();
    const QString gpt2Files = kModelFixtures + QStringLiteral("/tokenizer");
    model.insert(QStringLiteral("vocab"), object(fileBytes(gpt2Files + "/vocab.json")));
    QJsonArray merges;
    for (const QString& line : QString::fromUtf8(fileBytes(gpt2Files + "/merges.txt")).split(u'\n'))
        if (!line.isEmpty() && !line.startsWith(QStringLiteral("#version")))
            merges.append(line);
    model.insert(QStringLiteral("merges"), merges);
    gpt2.insert(QStringLiteral("model"), model);
    const QJsonObject llama3 =
        object(qUncompress(fileBytes(kTokenizers + "/llama3/tokenizer.json.zlib")));
    // The reference tokenizer, its tokenizer.json and the name llama.cpp's converter gives its
    // pre-tokenizer.
    const std::vector<std::tuple<QString, QJsonObject, QString>> converted = {
        {QStringLiteral("gpt2"), gpt2, QStringLiteral("gpt-2")},
        {QStringLiteral("llama3"), llama3, QStringLiteral("llama-bpe")},
        {QStringLiteral("qwen2-style"), llama3, QStringLiteral("qwen2")},
        {QStringLiteral("smollm-style"), gpt2, QStringLiteral("smollm")},
    };
    std::map<QString, QString> files;
    for (const auto& [name, json, pre] : converted) {
        GgufBuilder gguf;
        gguf.addString(QStringLiteral("general.architecture"), QStringLiteral("llama"));
        // qwen2-style has no BOS (its post-processor is ByteLevel): the tokenizer.json of Qwen2.
        addByteLevelTokenizer(
            gguf,
            name == QLatin1String("qwen2-style")
                ? QJsonObject{{QStringLiteral("model"), json[QStringLiteral("model")]},
                              {QStringLiteral("added_tokens"),
                               json[QStringLiteral("added_tokens")]}}
                : json,
            pre);
        files[name] = written(name + QStringLiteral(".gguf"), gguf.bytes());
    }
    files[QStringLiteral("llama2")] =
        written(QStringLiteral("llama2.gguf"),
                qUncompress(fileBytes(kGgufFixtures + "/llama2-tokenizer.gguf.zlib")));
    const QJsonObject expected = object(fileBytes(kTokenizers + "/expected_ids.json"));
    for (const auto& [name, path] : files) {
        for (const QJsonValue entry : expected.value(name).toArray()) {
            std::vector<int> ids;
            for (const QJsonValue id : entry[QStringLiteral("ids")].toArray())
                ids.push_back(id.toInt());
            QTest::addRow("%s/%s", qPrintable(name),
                          qPrintable(entry[QStringLiteral("name")].toString()))
                << path << entry[QStringLiteral("text")].toString() << ids
                << entry[QStringLiteral("decoded")].toString();
        }
    }
}

void TestGguf::tokenizesLikeTheReferences()
{
    QFETCH(QString, path);
    QFETCH(QString, text);
    QFETCH(std::vector<int>, ids);
    QFETCH(QString, decoded);
    static std::map<QString, std::shared_ptr<const TextTokenizer>> tokenizers;
    if (!tokenizers.count(path))
        tokenizers[path] = ggufTokenizer(GgufFile(path));
    QCOMPARE(tokenizers[path]->encode(text), ids);
    QCOMPARE(tokenizers[path]->decode(ids), decoded);
}

void TestGguf::refusesDamagedFiles_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const QByteArray llama = fileBytes(ggufFixture(QStringLiteral("llama-q8_0")));
    const QString q = QStringLiteral("blk.0.attn_q.weight");
    const qsizetype type = tensorTypeAt(llama, q, 2);
    QTest::newRow("empty") << QByteArray()
                           << "truncated: the file (0 bytes) ends inside the header";
    QTest::newRow("wrong magic") << patched(llama, 0, "GGML")
                                 << "not a GGUF file: it starts with the bytes 47 47 4d 4c";
    QTest::newRow("version 1") << patched(llama, 4, GgufBuilder::little<quint32>(1))
                               << "GGUF version 1; Attention Lab reads versions 2 and 3";
    QTest::newRow("big-endian") << patched(llama, 4, QByteArray("\0\0\0\3", 4))
                                << "a big-endian GGUF file";
    QTest::newRow("tensor count") << patched(llama, 8, GgufBuilder::little<quint64>(1ull << 40))
                                  << "the header gives 1099511627776 tensors, more than";
    QTest::newRow("key count") << patched(llama, 16, GgufBuilder::little<quint64>(1ull << 60))
                               << "the header gives 1152921504606846976 metadata entries";
    const qsizetype tokens =
        llama.indexOf(GgufBuilder::text(QStringLiteral("tokenizer.ggml.tokens")));
    const qsizetype tokenCount = tokens + 8 + 21 + 4 + 4;
    QTest::newRow("array count") << patched(llama, tokenCount,
                                            GgufBuilder::little<quint64>(1ull << 50))
                                 << "the value of metadata key tokenizer.ggml.tokens is an array "
                                    "of 1125899906842624 elements of type string, more than";
    QTest::newRow("string length")
        << patched(llama, tokenCount + 8, GgufBuilder::little<quint64>(1ull << 33))
        << "ends inside the value of metadata key tokenizer.ggml.tokens";
    QTest::newRow("value type")
        << patched(llama, tokens + 8 + 21, GgufBuilder::little<quint32>(13))
        << "the value of metadata key tokenizer.ggml.tokens has the value type 13";
    QTest::newRow("unknown tensor type") << patched(llama, type, GgufBuilder::little<quint32>(77))
                                         << "tensor blk.0.attn_q.weight has the type 77, which is "
                                            "not a ggml type";
    QTest::newRow("rows not whole blocks") << patched(llama, type, GgufBuilder::little<quint32>(12))
                                           << "type Q4_K stores rows in blocks of 256 values";
    const qsizetype offsetAt = type + 4;
    const quint64 offset = qFromLittleEndian<quint64>(llama.constData() + offsetAt);
    QTest::newRow("misaligned") << patched(llama, offsetAt,
                                           GgufBuilder::little<quint64>(offset + 1))
                                << "tensor blk.0.attn_q.weight has the data offset";
    QTest::newRow("offset past the end")
        << patched(llama, offsetAt, GgufBuilder::little<quint64>(1ull << 40))
        << "tensor blk.0.attn_q.weight has data (type Q8_0, dimensions [64, 64]: 4352 bytes from "
           "offset 1099511627776) that runs past the end of the file";
    QTest::newRow("size disagrees") << patched(llama, type - 8, GgufBuilder::little<quint64>(65))
                                    << "tensor blk.0.attn_q.weight has data (type Q8_0, dimensions "
                                       "[64, 65]: 4420 bytes";
    QTest::newRow("no dimensions") << patched(llama, type - 20, GgufBuilder::little<quint32>(0))
                                   << "tensor blk.0.attn_q.weight has 0 dimensions";
    GgufBuilder alignment;
    alignment.addU32(QStringLiteral("general.alignment"), 24);
    QTest::newRow("alignment") << alignment.bytes()
                               << "metadata key general.alignment is 24; expected a power of two";
    GgufBuilder twice;
    twice.addU32(QStringLiteral("a.b"), 1);
    twice.addU32(QStringLiteral("a.b"), 2);
    QTest::newRow("key twice") << twice.bytes() << "metadata key a.b appears twice";
}

void TestGguf::refusesDamagedFiles()
{
    checkRefusal();
}

void TestGguf::refusesBadModels_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const QByteArray llama = fileBytes(ggufFixture(QStringLiteral("llama-gqa-f32")));
    const auto renamed = [&](const QString& from, const QString& to) {
        QByteArray file = llama;
        return file.replace(GgufBuilder::text(from), GgufBuilder::text(to));
    };
    QTest::newRow("missing key") << renamed("llama.block_count", "llama.block_coun_")
                                 << "metadata key llama.block_count is missing";
    QTest::newRow("missing tensor") << renamed("blk.1.ffn_up.weight", "blk.1.ffn_up.weighx")
                                    << "tensor blk.1.ffn_up.weight is missing";
    QTest::newRow("unknown architecture")
        << renamed("llama", "mamba")
        << "metadata key general.architecture is \"mamba\"; Attention Lab runs the architectures "
           "\"llama\", \"qwen2\", \"gptneox\", \"gpt2\"";
    QTest::newRow("unknown pre-tokenizer") << renamed("gpt-2", "tekke")
                                           << "metadata key tokenizer.ggml.pre is \"tekke\", a "
                                              "pre-tokenizer Attention Lab does not know";
    QTest::newRow("unknown tokenizer")
        << renamed("gpt2", "bert") << "metadata key tokenizer.ggml.model is \"bert\"";
    // An F32 tensor of 48 x 16 read as I32 (the same bytes): a type ggml has, which is not read.
    const QString q = QStringLiteral("blk.0.attn_q.weight");
    QTest::newRow("type not read")
        << patched(llama, tensorTypeAt(llama, q, 2), GgufBuilder::little<quint32>(26))
        << "tensor blk.0.attn_q.weight has the type I32; Attention Lab "
           "reads F32, F16, BF16, Q8_0";
    const GgufFile file(ggufFixture(QStringLiteral("llama-gqa-f32")));
    const qsizetype data =
        qsizetype(file.dataStart() + file.find(QStringLiteral("output.weight"))->offset);
    QTest::newRow("NaN weight") << patched(llama, data + 8, QByteArray("\0\0\xc0\x7f", 4))
                                << "tensor output.weight holds NaN at value 2";
    QTest::newRow("head dimension")
        << patched(llama,
                   llama.indexOf(GgufBuilder::text(QStringLiteral("llama.rope.dimension_count"))) +
                       8 + 26 + 4,
                   GgufBuilder::little<quint32>(6))
        << "metadata key llama.rope.dimension_count is 6; Attention "
           "Lab rotates whole heads";
}

void TestGguf::refusesBadModels()
{
    checkRefusal();
}

// Property: a GGUF file is known by its first bytes, "GGUF": renamed without the suffix, it is
// the same model (architecture, tokens, attention) and runs on the command line; a file named
// .gguf that does not start with them is refused naming it; a file with neither is said to be a
// file, neither a model folder nor a GGUF file.
void TestGguf::recognisesGgufFilesByTheirMagic()
{
    const QString original = ggufFixture(QStringLiteral("llama-q8_0"));
    const QString renamed = written(QStringLiteral("llama-q8_0.bin"), fileBytes(original));
    QVERIFY(isGgufFile(renamed));
    QCOMPARE(modelArchitectureOf(renamed), ModelArchitecture::Llama);
    const QString text = QStringLiteral("the theatre at when the");
    const std::vector<int> ids = modelTokens(*loadModel(original), text, false).ids;
    QCOMPARE(modelTokens(*loadModel(renamed), text, false).ids, ids);
    QCOMPARE(cachedForward(loadModel(renamed), ids)->layers.front().q,
             cachedForward(loadModel(original), ids)->layers.front().q);

    const QString fake = written(QStringLiteral("fake.gguf"), QByteArray("PK\x03\x04 a zip file"));
    QVERIFY(isGgufFile(fake));
    QString message = thrownMessage<InputError>([&] { modelArchitectureOf(fake); });
    QVERIFY2(blames(message, fake + QStringLiteral(": "), QStringLiteral("not a GGUF file")),
             qPrintable(message));

    const QString notes = written(QStringLiteral("notes.txt"), QByteArray("GGU"));
    QVERIFY(!isGgufFile(notes));
    message = thrownMessage<InputError>([&] { loadModel(notes); });
    QCOMPARE(message, notes + QStringLiteral(": a file, not a model folder (give the folder that "
                                             "holds config.json), nor a GGUF file (it does not "
                                             "start with \"GGUF\")"));

    REQUIRE_ATTENTION_LAB();
    const QString out = m_dir.filePath(QStringLiteral("renamed-out"));
    const AppRun run = runAttentionLab(
        {"compute", "--model", renamed, "--layer", "0", "--text", text, "--out", out}, QString(),
        120000);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(QFileInfo::exists(out + QStringLiteral("/metrics.json")));
}

void TestGguf::commandLineRunsGgufFiles()
{
    REQUIRE_ATTENTION_LAB();
    const QString out = m_dir.filePath(QStringLiteral("compute-out"));
    const QString text = QStringLiteral("the theatre at when the");
    const AppRun run =
        runAttentionLab({"compute", "--model", ggufFixture(QStringLiteral("llama-q4_k")), "--layer",
                         "0", "--text", text, "--method", "favor-positive", "--out", out},
                        QString(), 120000);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject metrics =
        QJsonDocument::fromJson(fileBytes(out + QStringLiteral("/metrics.json"))).object();
    QCOMPARE(metrics[QStringLiteral("model")][QStringLiteral("architecture")].toString(),
             QStringLiteral("llama"));
    const QString figures = m_dir.filePath(QStringLiteral("render-out"));
    const AppRun render =
        runAttentionLab({"render", "--model", ggufFixture(QStringLiteral("gpt2-q5_1")), "--layer",
                         "1", "--text", text, "--format", "png", "--out", figures},
                        QString(), 120000);
    QVERIFY2(render.finished && render.exitCode == 0, qPrintable(render.describe()));
    QVERIFY(QFileInfo::exists(figures + QStringLiteral("/attention_exact.png")));
    const QString csv = m_dir.filePath(QStringLiteral("eval.csv"));
    const AppRun eval = runAttentionLab(
        {"model-eval", "--model", ggufFixture(QStringLiteral("pythia-q8_0")), "--text", text,
         "--methods", "favor-positive", "--features", "16", "--out", csv},
        QString(), 120000);
    QVERIFY2(eval.finished && eval.exitCode == 0, qPrintable(eval.describe()));
    QVERIFY(fileBytes(csv).contains("favor-positive"));
}

void TestGguf::commandLineRefusesBadFiles()
{
    REQUIRE_ATTENTION_LAB();
    QByteArray bytes = fileBytes(ggufFixture(QStringLiteral("llama-q8_0")));
    const QString path = written(QStringLiteral("bad model.gguf"),
                                 patched(bytes, 8, GgufBuilder::little<quint64>(1ull << 40)));
    for (const QStringList& command :
         {QStringList{"compute", "--model", path, "--layer", "0", "--text", "the", "--out"},
          QStringList{"render", "--model", path, "--layer", "0", "--text", "the", "--out"},
          QStringList{"model-eval", "--model", path, "--text", "the", "--out"}}) {
        const QString out = m_dir.filePath(QStringLiteral("never-%1").arg(command.front()));
        const AppRun run = runAttentionLab(command + QStringList{out}, QString(), 60000);
        QVERIFY2(
            refusedNaming(run, path + QStringLiteral(": the header gives 1099511627776 tensors")),
            qPrintable(run.describe()));
        QVERIFY2(!QFileInfo::exists(out), qPrintable(out));
    }
}

QTEST_GUILESS_MAIN(TestGguf)
#include "test_gguf.moc"

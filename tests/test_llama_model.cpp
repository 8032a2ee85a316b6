// The Llama-family (llama, mistral, qwen2) and GPT-NeoX forward passes (core/model/llama_model,
// gpt_neox_model, rotary_blocks) and the sharded weights reader (checkpoint_weights):
// - every layer's queries and keys after RoPE, values, the attention formed from them and the
//   logits equal those of an independent PyTorch forward pass (tests/data/models/
//   make_llama_fixtures.py) on tiny checkpoints: GQA with head_dim and llama3 scaling, two
//   shards, BF16, Qwen2's biases and tied head with linear scaling, Mistral's sliding window,
//   GPT-NeoX's partial rotary with parallel and sequential residual;
// - grouped-query heads: the model input gives each query head its group's keys and values, and
//   so does the hook that replaces attention;
// - bad checkpoints are refused naming the file and what is wrong, a model over the memory budget
//   with the size it needs;
// - a forward pass that stops after layer l (ForwardOptions::lastLayer) gives layers 0..l exactly
// as
//   the whole pass does, and no logits; the model input runs one for a text's first read (its
//   layer's maps come sooner) and the whole pass for anything later, which keeps the layers
//   shown (cachedLayers);
// - compute --model on a fixture writes metrics.json with the architecture, the groups and the
//   RoPE settings, and --save-qkv queries, keys and values as H x L x d.

#include "errors.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "model/checkpoint_weights.h"
#include "model/language_model.h"
#include "model/llama_model.h"
#include "model_support.h"
#include "sweeps/downstream.h"
#include "app_process.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <tuple>

using namespace attnlab;
using namespace attnlab::test;

namespace {

// Float tolerance against the float64 reference (stored as float32), relative to the largest
// reference value of the array compared (logits reach about 17, Q about 5): the C++ pass runs in
// float through two layers of sums of at most 48 products, norms, RoPE and a softmax; its errors
// measure about 1e-6 of that scale. 2e-5 still fails for mistakes such as RoPE's pairs taken
// adjacent instead of rotate-half, a key/value head given to the wrong query heads, or the
// sliding window ignored (see slidingWindowMatters).
constexpr double kTolerance = 2e-5;

// What is off in a forward pass against the fixture's reference: Q (H heads), K and V (H_kv
// heads) of every layer, the attention formed from them, the logits; empty when nothing is.
QString referenceMismatch(const QString& fixture, const ForwardResult& result, int heads,
                          int window)
{
    for (std::size_t l = 0; l < result.layers.size(); ++l) {
        const LayerQkv& layer = result.layers[l];
        const qint64 keyValueHeads = layer.k.cols() / (layer.q.cols() / heads);
        if (const QString off =
                capturedQkvMismatch(fixture, layer, l, heads, keyValueHeads, kTolerance);
            !off.isEmpty())
            return off;
        std::vector<MatrixD> attention;
        for (int h = 0; h < heads; ++h)
            attention.push_back(attentionByHand(layer, heads, h, window));
        if (const QString off = attentionMismatch(fixture, attention, l, kTolerance);
            !off.isEmpty())
            return off;
    }
    const double error = scaledError(reference(fixture, QStringLiteral("logits.npy")),
                                     [&](qint64 i) { return result.logits.data()[i]; });
    if (!(error <= kTolerance))
        return QStringLiteral("logits: error %1").arg(error);
    return {};
}

QString fixturePath(const QString& fixture)
{
    return kModelFixtures + QLatin1Char('/') + fixture;
}

// Moves tensor `name` from one shard file to the other (both rewritten), or copies it when
// `keep` is set.
void moveTensor(const QString& from, const QString& to, const QString& name, bool keep)
{
    QList<RawTensor> source = rawTensorsOf(from);
    QList<RawTensor> target = rawTensorsOf(to);
    for (qsizetype i = 0; i < source.size(); ++i)
        if (source[i].name == name) {
            target.append(source[i]);
            if (!keep)
                source.removeAt(i);
            break;
        }
    writeBytes(from, safetensorsOf(source));
    writeBytes(to, safetensorsOf(target));
}

const QString kShard1 = QStringLiteral("model-00001-of-00002.safetensors");
const QString kShard2 = QStringLiteral("model-00002-of-00002.safetensors");
const QString kIndex = QStringLiteral("model.safetensors.index.json");

}  // namespace

class TestLlamaModel : public QObject {
    Q_OBJECT

private slots:
    void forwardMatchesReference_data();
    void forwardMatchesReference();
    void slidingWindowMatters();
    void groupedHeadsShareKeysAndValues();
    void replacedLayerGetsItsGroup();
    void headSurveyMarksGroups();
    void ropeScaling();
    void aPassThatStopsHoldsItsLayers_data();
    void aPassThatStopsHoldsItsLayers();

    void badCheckpoint_data();
    void badCheckpoint();
    void overMemoryBudget();
    void shardIndex_data();
    void shardIndex();

    void computeWritesModelMetrics();
    void templateBosIsTheFirstToken();
    void computeRefusesOverBudget();
};

void TestLlamaModel::forwardMatchesReference_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("keyValueHeads");
    QTest::addColumn<int>("window");
    const auto row = [](const char* name, const char* fixture, const char* architecture, int heads,
                        int keyValueHeads, int window) {
        QTest::newRow(name) << QString::fromLatin1(fixture) << QString::fromLatin1(architecture)
                            << heads << keyValueHeads << window;
    };
    row("llama GQA, head_dim, llama3 scaling", "tiny-llama-gqa-f32", "llama", 4, 2, 0);
    row("the same in two shards", "tiny-llama-gqa-2-shards", "llama", 4, 2, 0);
    row("llama BF16, tied", "tiny-llama-bf16", "llama", 4, 4, 0);
    row("qwen2 biases, tied, linear", "tiny-qwen2-f32", "qwen2", 4, 1, 0);
    row("mistral sliding window", "tiny-mistral-f32", "mistral", 4, 2, 5);
    row("gpt_neox parallel", "tiny-pythia-parallel-f32", "gpt_neox", 2, 2, 0);
    row("gpt_neox sequential", "tiny-pythia-sequential-f32", "gpt_neox", 2, 2, 0);
}

// Property: Q and K after RoPE, V, the attention P formed from them and the logits equal the
// PyTorch reference to 2e-5 of their scale, for every layer and head; the model's shape is the
// config's.
void TestLlamaModel::forwardMatchesReference()
{
    QFETCH(QString, fixture);
    QFETCH(QString, architecture);
    QFETCH(int, heads);
    QFETCH(int, keyValueHeads);
    QFETCH(int, window);
    const auto model = loadLanguageModel(fixturePath(fixture));
    QCOMPARE(model->info().architecture, architecture);
    QCOMPARE(model->heads(), heads);
    QCOMPARE(model->keyValueHeads(), keyValueHeads);
    QCOMPARE(model->info().slidingWindow, window);
    QCOMPARE(model->layers(), 2);
    QCOMPARE(model->vocabularySize(), model->tokenizer().vocabularySize());
    const ForwardResult result = model->forward(referenceTokens(fixture));
    QCOMPARE(result.layers.size(), std::size_t(2));
    const QString mismatch = referenceMismatch(fixture, result, heads, window);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

// The Mistral fixture's window is short enough to matter: attention without it differs from the
// reference far beyond the tolerance (so the comparison above can fail), and the reference hides
// every key more than 5 positions back.
void TestLlamaModel::slidingWindowMatters()
{
    const QString fixture = QStringLiteral("tiny-mistral-f32");
    const auto model = loadLanguageModel(fixturePath(fixture));
    const ForwardResult result = model->forward(referenceTokens(fixture));
    const NpyArray expected = reference(fixture, QStringLiteral("attention_layer0.npy"));
    const qint64 length = expected.shape[1];
    for (qint64 i = 0; i < length; ++i)
        for (qint64 j = 0; j + 5 <= i; ++j)
            QCOMPARE(expected.values[std::size_t(i * length + j)], 0.0);
    const MatrixD full = attentionByHand(result.layers[0], 4, 0, 0);
    const double error = scaledError(
        expected, [&](qint64 index) { return index < length * length ? full.data()[index] : 0.0; });
    QVERIFY2(error > 100 * kTolerance, qPrintable(QString::number(error)));
}

// Property: the model input of a GQA layer gives query heads 0 and 1 key/value head 0, heads 2
// and 3 key/value head 1, each its own query; the captured K holds the 2 key/value heads.
void TestLlamaModel::groupedHeadsShareKeysAndValues()
{
    const QString fixture = QStringLiteral("tiny-llama-gqa-f32");
    const auto model = loadLanguageModel(fixturePath(fixture));
    QCOMPARE(model->keyValueHead(1), 0);
    QCOMPARE(model->keyValueHead(2), 1);
    const ForwardResult result = model->forward(referenceTokens(fixture));
    const LayerQkv& layer = result.layers[1];
    const int d = model->headDim();
    QCOMPARE(d, 12);
    QCOMPARE(layer.k.cols(), Eigen::Index(2 * d));
    const AttentionInput input = layerInput(result, 1, model->heads(), {});
    QCOMPARE(input.heads.size(), std::size_t(4));
    for (int h = 0; h < 4; ++h) {
        const int g = h / 2;
        const HeadTensors& head = input.heads[std::size_t(h)];
        QCOMPARE(head.q, MatrixD(layer.q.middleCols(h * d, d).cast<double>()));
        QCOMPARE(head.k, MatrixD(layer.k.middleCols(g * d, d).cast<double>()));
        QCOMPARE(head.v, MatrixD(layer.v.middleCols(g * d, d).cast<double>()));
    }
    QVERIFY(input.heads[0].k != input.heads[2].k);
}

// Property: a replaced layer's hook receives each query head with its group's keys and values
// (those the exact run captured); exact softmax in the hook gives the model's own logits, a hook
// returning zeros changes them.
void TestLlamaModel::replacedLayerGetsItsGroup()
{
    const QString fixture = QStringLiteral("tiny-llama-gqa-f32");
    const auto model = loadLanguageModel(fixturePath(fixture));
    const std::vector<int> ids = referenceTokens(fixture);
    const ForwardResult exact = model->forward(ids);
    const int d = model->headDim();
    int calls = 0;
    ForwardOptions options;
    options.replaced = {false, true};
    options.replacement = [&](int layer, int head, const Matrix<float>& q, const Matrix<float>& k,
                              const Matrix<float>& v) -> Matrix<float> {
        ++calls;
        const LayerQkv& captured = exact.layers[std::size_t(layer)];
        const int g = head / 2;
        if (q != captured.q.middleCols(head * d, d) || k != captured.k.middleCols(g * d, d) ||
            v != captured.v.middleCols(g * d, d))
            return Matrix<float>::Constant(q.rows(), d, std::nanf(""));
        const MatrixD p = attentionByHand(captured, 4, head, 0);
        return (p * v.cast<double>()).cast<float>();
    };
    const ForwardResult replaced = model->forward(ids, options);
    QCOMPARE(calls, 4);
    QVERIFY(replaced.logits.allFinite());
    QVERIFY((replaced.logits - exact.logits).cwiseAbs().maxCoeff() < 1e-4f);
    options.replacement = [](int, int, const Matrix<float>& q, const Matrix<float>&,
                             const Matrix<float>&) -> Matrix<float> {
        return Matrix<float>::Zero(q.rows(), q.cols());
    };
    QVERIFY((model->forward(ids, options).logits - exact.logits).cwiseAbs().maxCoeff() > 1e-2f);
}

// Property: the head survey of a GQA model tells each query head its key/value head (0, 0, 1, 1
// for 4 query heads and 2 key/value heads), for the Heads page to mark the groups; heads that
// share their keys see the same key norms. A model without groups marks none.
void TestLlamaModel::headSurveyMarksGroups()
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = fixturePath(QStringLiteral("tiny-llama-gqa-f32"));
    spec.input.text = QStringLiteral("the cat sat on the mat");
    spec.causal = true;
    spec.exactMethod = true;
    const std::vector<HeadSurveyEntry> entries = surveyHeads(spec, ComputeOptions(), 16);
    QCOMPARE(entries.size(), std::size_t(8));
    for (const HeadSurveyEntry& entry : entries)
        QCOMPARE(entry.keyValueHead, entry.head / 2);
    QCOMPARE(entries[0].meanKeyNorm, entries[1].meanKeyNorm);
    QVERIFY(entries[0].meanKeyNorm != entries[2].meanKeyNorm);
    spec.input.modelPath = fixturePath(QStringLiteral("tiny-llama-bf16"));
    for (const HeadSurveyEntry& entry : surveyHeads(spec, ComputeOptions(), 16))
        QCOMPARE(entry.keyValueHead, -1);
}

// Property: the scaled inverse frequencies follow transformers' formulas: linear divides every
// one by the factor; llama3 keeps short wavelengths, divides long ones, interpolates between.
void TestLlamaModel::aPassThatStopsHoldsItsLayers_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::newRow("llama") << "tiny-llama-gqa-f32";
    QTest::newRow("gpt-neox") << "tiny-pythia-sequential-f32";
    QTest::newRow("gpt2") << "tiny-gpt2-prefixed-f32";
}

void TestLlamaModel::aPassThatStopsHoldsItsLayers()
{
    QFETCH(QString, fixture);
    const std::shared_ptr<const LanguageModel> model = loadModel(fixturePath(fixture));
    const QString text = QStringLiteral("at the theatre");  // GPT-2's reads 32 tokens at most
    const std::vector<int> ids = modelTokens(*model, text, false).ids;
    const ForwardResult whole = model->forward(ids);
    QVERIFY(model->layers() >= 2);
    for (int last = 0; last < model->layers(); ++last) {
        ForwardOptions options;
        options.lastLayer = last;
        options.logits = false;
        const ForwardResult stopped = model->forward(ids, options);
        QCOMPARE(int(stopped.layers.size()), last + 1);
        QCOMPARE(stopped.logits.size(), Eigen::Index(0));
        for (int l = 0; l <= last; ++l) {
            QCOMPARE(stopped.layers[std::size_t(l)].q, whole.layers[std::size_t(l)].q);
            QCOMPARE(stopped.layers[std::size_t(l)].k, whole.layers[std::size_t(l)].k);
            QCOMPARE(stopped.layers[std::size_t(l)].v, whole.layers[std::size_t(l)].v);
        }
    }

    // The text read for the first time: a pass that stops at the layer asked for, kept for it
    // and the layers below; the next layer up, or the logits, run the whole pass.
    const auto first = cachedLayers(model, ids, 0);
    QCOMPARE(first->layers.size(), std::size_t(1));
    QCOMPARE(cachedLayers(model, ids, 0).get(), first.get());
    const auto later = cachedLayers(model, ids, 1);
    QCOMPARE(int(later->layers.size()), model->layers());
    QCOMPARE(later->logits, whole.logits);
    QCOMPARE(later->layers[0].q, first->layers[0].q);  // layer 0 as it was shown
    QCOMPARE(cachedForward(model, ids).get(), later.get());
    QCOMPARE(cachedLayers(model, ids, 0).get(), later.get());
    // The model input of a new text: its layer's heads from a pass that stopped there.
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = fixturePath(fixture);
    spec.input.text = text + QStringLiteral(" again");
    spec.input.layer = 1;
    const AttentionInput input = buildInput(spec.input);
    const std::vector<int> againIds = modelTokens(*model, spec.input.text, false).ids;
    QCOMPARE(int(cachedLayers(model, againIds, 1)->layers.size()), 2);
    const AttentionInput expected =
        layerInput(model->forward(againIds), 1, model->heads(), input.labels);
    for (std::size_t h = 0; h < input.heads.size(); ++h)
        QCOMPARE(input.heads[h].q, expected.heads[h].q);
}

void TestLlamaModel::ropeScaling()
{
    RopeSettings rope;
    rope.theta = 50000;
    rope.rotaryDims = 12;
    const std::vector<double> plain = rope.inverseFrequencies();
    QCOMPARE(plain.size(), std::size_t(6));
    QCOMPARE(plain[1], std::pow(50000.0, -2.0 / 12));
    rope.scaling = RopeScalingType::Linear;
    rope.factor = 2;
    QCOMPARE(rope.inverseFrequencies()[3], plain[3] / 2);
    rope.scaling = RopeScalingType::Llama3;
    rope.factor = 8;
    rope.lowFrequencyFactor = 1;
    rope.highFrequencyFactor = 8;
    rope.originalPositions = 64;
    const std::vector<double> llama3 = rope.inverseFrequencies();
    QCOMPARE(llama3[0], plain[0]);      // wavelength 6.3 < 64 / 8
    QCOMPARE(llama3[2], plain[2] / 8);  // wavelength 232 > 64
    const double t = (64 / (2 * M_PI / plain[1]) - 1) / (8 - 1);
    QVERIFY(std::abs(llama3[1] - ((1 - t) * plain[1] / 8 + t * plain[1])) < 1e-15);
    QVERIFY(llama3[1] < plain[1] && llama3[1] > plain[1] / 8);
}

void TestLlamaModel::badCheckpoint_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("file");  // the file the message starts with
    QTest::addColumn<QString>("expected");
    const QString llama = QStringLiteral("tiny-llama-gqa-f32");
    const QString shards = QStringLiteral("tiny-llama-gqa-2-shards");
    QTest::newRow("unknown model_type") << llama << "model_type falcon"
                                        << "config.json"
                                        << "model_type is \"falcon\"; Attention Lab runs the model "
                                           "types \"gpt2\", \"vit\", \"llama\", \"mistral\", "
                                           "\"qwen2\", \"gpt_neox\"";
    QTest::newRow("unknown rope scaling") << llama << "rope yarn"
                                          << "config.json"
                                          << "the rope scaling type is \"yarn\"";
    QTest::newRow("old-style rope type") << llama << "rope dynamic type"
                                         << "config.json"
                                         << "the rope scaling type is \"dynamic\"";
    QTest::newRow("kv heads not dividing")
        << llama << "config num_key_value_heads 3"
        << "config.json"
        << "num_attention_heads (4) is not a multiple of num_key_value_heads (3)";
    QTest::newRow("shape disagrees")
        << llama << "config intermediate_size 40"
        << "model.safetensors"
        << "tensor model.layers.0.mlp.gate_proj.weight has shape [32, 16], expected [40, 16]";
    QTest::newRow("other activation") << llama << "activation gelu"
                                      << "config.json"
                                      << "hidden_act is \"gelu\"";
    QTest::newRow("shard missing")
        << shards << "remove " + kShard2 << kIndex << "names the shard " + kShard2;
    QTest::newRow("tensor in no shard") << shards << "unlist model.norm.weight" << kIndex
                                        << "the tensor model.norm.weight is in none of the "
                                           "weights files";
    QTest::newRow("tensor not where the index says")
        << shards << "move model.norm.weight" << kShard2
        << "does not hold the tensor model.norm.weight";
    QTest::newRow("tensor in two shards") << shards << "copy model.norm.weight"
                                          << "either shard"
                                          << "the tensor model.norm.weight, which";
    QTest::newRow("index not JSON") << shards << "index garbage" << kIndex << "not JSON";
    QTest::newRow("neox activation") << "tiny-pythia-parallel-f32"
                                     << "activation relu"
                                     << "config.json"
                                     << "hidden_act is \"relu\"";
}

// Property: each damage is refused with InputError whose message starts with the file at fault
// and says what is wrong.
void TestLlamaModel::badCheckpoint()
{
    QFETCH(QString, fixture);
    QFETCH(QString, damage);
    QFETCH(QString, file);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString folder = dir.path();
    copyFixture(fixture, folder);
    const QStringList words = damage.split(u' ');
    const QString shard1 = folder + QLatin1Char('/') + kShard1;
    const QString shard2 = folder + QLatin1Char('/') + kShard2;
    if (words[0] == QLatin1String("model_type")) {
        editConfig(folder,
                   [&](QJsonObject& c) { c.insert(QStringLiteral("model_type"), words[1]); });
    } else if (words[0] == QLatin1String("rope")) {
        const QString key = words.size() > 2 ? words[2] : QStringLiteral("rope_type");
        editConfig(folder, [&](QJsonObject& c) {
            c.insert(QStringLiteral("rope_scaling"),
                     QJsonObject{{key, words[1]}, {QStringLiteral("factor"), 2.0}});
        });
    } else if (words[0] == QLatin1String("activation")) {
        editConfig(folder,
                   [&](QJsonObject& c) { c.insert(QStringLiteral("hidden_act"), words[1]); });
    } else if (words[0] == QLatin1String("unlist")) {  // in neither the index nor a shard
        editJson(folder + QLatin1Char('/') + kIndex, [&](QJsonObject& index) {
            QJsonObject map = index.value(QStringLiteral("weight_map")).toObject();
            map.remove(words[1]);
            index.insert(QStringLiteral("weight_map"), map);
        });
        QList<RawTensor> tensors = rawTensorsOf(shard2);
        tensors.removeIf([&](const RawTensor& t) { return t.name == words[1]; });
        writeBytes(shard2, safetensorsOf(tensors));
    } else if (words[0] == QLatin1String("move")) {  // the index still says shard 2
        moveTensor(shard2, shard1, words[1], false);
    } else if (words[0] == QLatin1String("copy")) {
        moveTensor(shard2, shard1, words[1], true);
    } else if (damage == QLatin1String("index garbage")) {
        writeBytes(folder + QLatin1Char('/') + kIndex, "{\"weight_map\": {");
    } else if (!damageCheckpoint(folder, words)) {
        QFAIL(qPrintable(damage));
    }
    const QString message = thrownMessage<InputError>([&] { loadLanguageModel(folder); });
    const QStringList named = file == QLatin1String("either shard")
                                  ? QStringList{shard1, shard2}
                                  : QStringList{folder + QLatin1Char('/') + file};
    QVERIFY2(message.startsWith(named.front()) || message.startsWith(named.back()),
             qPrintable(message));
    QVERIFY2(message.contains(expected), qPrintable(message));
}

// Property: a model whose float weights exceed the budget is refused before they are read, with
// ResourceError naming the folder and the size it needs; within the budget it loads.
void TestLlamaModel::overMemoryBudget()
{
    const QString folder = fixturePath(QStringLiteral("tiny-llama-gqa-f32"));
    const double bytes = CheckpointWeights(folder).floatBytes();
    QVERIFY(bytes > 60000 && bytes < 80000);  // 4 bytes for each of the checkpoint's floats
    const QString message = thrownMessage<ResourceError>(
        [&] { loadLlamaModel(folder, ModelArchitecture::Llama, MemoryBudget(qint64(bytes) - 1)); });
    QVERIFY2(message.contains(folder) && message.contains(formatBytes(bytes)), qPrintable(message));
    QVERIFY(loadLlamaModel(folder, ModelArchitecture::Llama, MemoryBudget(qint64(bytes))));
}

void TestLlamaModel::shardIndex_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("expected");  // empty: accepted
    QTest::newRow("valid") << QByteArray(R"({"metadata": {}, "weight_map": {"a": "s1.safetensors",
                                            "b": "s2.safetensors"}})")
                           << QString();
    QTest::newRow("array") << QByteArray("[]") << "not a JSON object";
    QTest::newRow("no map") << QByteArray(R"({"metadata": {}})") << "weight_map is missing";
    QTest::newRow("empty map") << QByteArray(R"({"weight_map": {}})")
                               << "weight_map names no tensor";
    QTest::newRow("number") << QByteArray(R"({"weight_map": {"a": 3}})") << "the shard 3";
    QTest::newRow("path") << QByteArray(R"({"weight_map": {"a": "../x.safetensors"}})")
                          << "the name of a file of the folder";
    QTest::newRow("subfolder") << QByteArray(R"({"weight_map": {"a": "sub/x.safetensors"}})")
                               << "the name of a file of the folder";
}

// Property: parseShardIndex accepts a weight_map of file names and refuses anything else naming
// the index file.
void TestLlamaModel::shardIndex()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, expected);
    const QString path = QStringLiteral("m/model.safetensors.index.json");
    const QString message = thrownMessage<InputError>([&] {
        const std::map<QString, QString> map = parseShardIndex(json, path);
        QCOMPARE(map.at(QStringLiteral("b")), QStringLiteral("s2.safetensors"));
    });
    if (expected.isEmpty()) {
        QVERIFY2(message.isEmpty(), qPrintable(message));
        return;
    }
    QVERIFY2(blames(message, path, expected), qPrintable(message));
}

// Property: compute --model on the GQA fixture writes metrics.json with the architecture, the
// key/value head of each query head and the RoPE settings, and --save-qkv queries, keys and
// values as H x L x d: query head h's own queries (after RoPE, as the forward pass captured them)
// beside its group's keys and values, repeated for the heads of a group.
void TestLlamaModel::computeWritesModelMetrics()
{
    const QString folder = fixturePath(QStringLiteral("tiny-llama-gqa-f32"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath(QStringLiteral("out"));
    const QString text = QStringLiteral("the cat sat on the mat");
    const AppRun run = runAttentionLab(
        {"compute", "--model", folder, "--layer", "1", "--text", text, "--save-qkv", "--out", out},
        dir.path(), 60000);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QFile file(out + QStringLiteral("/metrics.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject metrics = QJsonDocument::fromJson(file.readAll()).object();
    const QJsonObject model = metrics.value(QStringLiteral("model")).toObject();
    QCOMPARE(model.value(QStringLiteral("architecture")).toString(), QStringLiteral("llama"));
    QCOMPARE(model.value(QStringLiteral("query_heads")).toInt(), 4);
    QCOMPARE(model.value(QStringLiteral("key_value_heads")).toInt(), 2);
    QCOMPARE(model.value(QStringLiteral("key_value_head_of_query_head")).toArray(),
             (QJsonArray{0, 0, 1, 1}));
    const QJsonObject rope = model.value(QStringLiteral("rope")).toObject();
    QCOMPARE(rope.value(QStringLiteral("theta")).toDouble(), 50000.0);
    QCOMPARE(rope.value(QStringLiteral("rotary_dims")).toInt(), 12);
    const QJsonObject scaling = rope.value(QStringLiteral("scaling")).toObject();
    QCOMPARE(scaling.value(QStringLiteral("rope_type")).toString(), QStringLiteral("llama3"));
    QCOMPARE(scaling.value(QStringLiteral("original_max_position_embeddings")).toDouble(), 64.0);

    const auto language = loadLanguageModel(folder);
    const std::vector<int> ids = language->tokenizer().encode(text);
    const ForwardResult forward = language->forward(ids);
    const LayerQkv& layer = forward.layers[1];
    const Eigen::Index length = Eigen::Index(ids.size());
    const NpyArray queries = readNpy(out + QStringLiteral("/queries.npy"));
    const NpyArray keys = readNpy(out + QStringLiteral("/keys.npy"));
    const NpyArray values = readNpy(out + QStringLiteral("/values.npy"));
    for (const NpyArray* array : {&queries, &keys, &values})
        QCOMPARE(array->shape, (std::vector<qint64>{4, length, 12}));
    // Entry (h, i, j) of the files against the forward pass run here (to float rounding: the
    // program may split its products over another number of threads).
    const auto at = [&](qint64 index) {
        return std::tuple{int(index / (length * 12)), Eigen::Index(index / 12 % length),
                          Eigen::Index(index % 12)};
    };
    QVERIFY(scaledError(queries, [&](qint64 index) {
                const auto [h, i, j] = at(index);
                return layer.q(i, h * 12 + j);
            }) < 1e-5);
    QVERIFY(scaledError(keys, [&](qint64 index) {
                const auto [h, i, j] = at(index);
                return layer.k(i, h / 2 * 12 + j);
            }) < 1e-5);
    QVERIFY(scaledError(values, [&](qint64 index) {
                const auto [h, i, j] = at(index);
                return layer.v(i, h / 2 * 12 + j);
            }) < 1e-5);
    // Heads 0 and 1 share key/value head 0: their slices of keys.npy are the same numbers.
    for (qint64 e = 0; e < length * 12; ++e)
        QCOMPARE(keys.values[std::size_t(e)], keys.values[std::size_t(length * 12 + e)]);
}

// A Llama folder whose tokenizer.json's post-processor puts BOS first (as Llama 2's and 3's do)
// reads its text with BOS as token 0, labelled with its content, so that the maps show the
// attention sink; without the template no BOS is added (as Qwen2's file says). A text longer than
// the model's positions, cut with keepLast, keeps BOS first and then its last tokens.
void TestLlamaModel::templateBosIsTheFirstToken()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    copyFixture(QStringLiteral("tiny-llama-gqa-f32"), dir.path());
    const QString text = QStringLiteral("The cat sat");
    const std::vector<int> plain = modelTokens(*loadModel(dir.path()), text, false).ids;
    QVERIFY(!plain.empty() && plain.front() != 268);
    // id 268 is the fixture tokenizer's one special token, <|endoftext|>.
    editJson(dir.path() + QStringLiteral("/tokenizer.json"), [](QJsonObject& json) {
        const QJsonObject bos{{QStringLiteral("id"), QStringLiteral("<|endoftext|>")},
                              {QStringLiteral("type_id"), 0}};
        const QJsonObject sequence{{QStringLiteral("id"), QStringLiteral("A")},
                                   {QStringLiteral("type_id"), 0}};
        json.insert(
            QStringLiteral("post_processor"),
            QJsonObject{
                {QStringLiteral("type"), QStringLiteral("TemplateProcessing")},
                {QStringLiteral("single"),
                 QJsonArray{QJsonObject{{QStringLiteral("SpecialToken"), bos}},
                            QJsonObject{{QStringLiteral("Sequence"), sequence}}}},
                {QStringLiteral("pair"), QJsonArray{}},
                {QStringLiteral("special_tokens"),
                 QJsonObject{{QStringLiteral("<|endoftext|>"),
                              QJsonObject{{QStringLiteral("id"), QStringLiteral("<|endoftext|>")},
                                          {QStringLiteral("ids"), QJsonArray{268}},
                                          {QStringLiteral("tokens"),
                                           QJsonArray{QStringLiteral("<|endoftext|>")}}}}}}});
    });
    // A new folder, so that the model cache does not give back the model read above.
    QTemporaryDir withBos;
    QVERIFY(withBos.isValid());
    for (const QString& name : QDir(dir.path()).entryList(QDir::Files))
        QVERIFY(QFile::copy(dir.filePath(name), withBos.filePath(name)));
    const ModelTokens tokens = modelTokens(*loadModel(withBos.path()), text, false);
    QCOMPARE(int(tokens.ids.size()), int(plain.size()) + 1);
    QCOMPARE(tokens.ids.front(), 268);
    QCOMPARE(tokens.labels.front(), QStringLiteral("<|endoftext|>"));
    QVERIFY(std::equal(plain.begin(), plain.end(), tokens.ids.begin() + 1));

    const std::shared_ptr<const LanguageModel> model = loadModel(withBos.path());
    const QString longText = text.repeated(40);
    const std::vector<int> whole = model->tokenizer().encode(longText);
    const int positions = model->positions();
    QVERIFY(int(whole.size()) > positions + 1);
    QVERIFY_THROWS_EXCEPTION(InputError, modelTokens(*model, longText, false));
    const ModelTokens cut = modelTokens(*model, longText, true);
    QCOMPARE(int(cut.ids.size()), positions);
    QCOMPARE(cut.ids.front(), 268);
    QVERIFY(std::equal(cut.ids.begin() + 1, cut.ids.end(), whole.end() - (positions - 1)));
    QCOMPARE(cut.labels.size(), positions);
    QCOMPARE(cut.notes.size(), 1);
    QVERIFY2(cut.notes.front().contains(QStringLiteral("after <|endoftext|>")),
             qPrintable(cut.notes.front()));
}

// Property: compute --model with a --memory-budget below the model's float weights exits with 3,
// names the folder and the size, and writes nothing.

void TestLlamaModel::computeRefusesOverBudget()
{
    const QString folder = fixturePath(QStringLiteral("tiny-llama-gqa-f32"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath(QStringLiteral("out"));
    const AppRun run = runAttentionLab({"compute", "--model", folder, "--layer", "0", "--text",
                                        "the cat", "--memory-budget", "60000", "--out", out},
                                       dir.path(), 60000);
    QVERIFY2(run.finished && run.exitCode == 3, qPrintable(run.describe()));
    const double bytes = CheckpointWeights(folder).floatBytes();
    QVERIFY2(run.err.contains(folder.toUtf8()) && run.err.contains(formatBytes(bytes).toUtf8()),
             qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(out));
}

QTEST_GUILESS_MAIN(TestLlamaModel)
#include "test_llama_model.moc"

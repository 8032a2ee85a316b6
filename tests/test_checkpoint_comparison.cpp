// Two checkpoints of one model compared as an approximation is (InputSpec::comparisonModelPath,
// core/attention/approximations/checkpoint_attention, compareCheckpoints in core/sweeps/
// downstream, compute and model-eval --compare-model):
// - a file compared with itself gives P^ = P exactly (the output to float rounding), the
//   predictions all agree;
// - a Q4_0 file against the Q8_0 file of the same checkpoint (tests/data/gguf) gives the relative
//   Frobenius error of their attention that the float64 references of the two files give, to 1e-4;
//   and the downstream comparison the top-1 agreement and KL of their reference logits;
// - two files that differ in architecture, shape or tokenizer are refused with the reason;
// - the norm multiplier scales both checkpoints' queries and keys; the two models' float weights
//   must fit in the memory budget together; a missing second checkpoint is named as such; the two
//   models of a comparison stay loaded together while a third comes and goes;
// - compute --compare-model writes the second checkpoint's attention as attention_approx.npy and
//   method "checkpoint" in metrics.json; model-eval --compare-model a first row "checkpoint";
//   a refused pair exits with status 2 and writes nothing.

#include "errors.h"
#include "experiment.h"
#include "gguf_support.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "model/gguf_file.h"
#include "model_support.h"
#include "sweeps/downstream.h"
#include "app_process.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnlab;
using namespace attnlab::test;

namespace {

// The reference of a quantized fixture (tests/data/gguf/reference/<name>/<array>).
NpyArray ggufReference(const QString& name, const QString& array)
{
    return readNpy(kGgufFixtures + QStringLiteral("/reference/") + name + QLatin1Char('/') + array);
}

// The model input of layer `layer` of `first` on a short text, with `second` compared.
ExperimentSpec comparisonSpec(const QString& first, const QString& second, int layer)
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = ggufFixture(first);
    spec.input.comparisonModelPath = ggufFixture(second);
    spec.input.layer = layer;
    spec.input.text = QStringLiteral("the theatre at when the");
    spec.causal = true;
    return spec;
}

}  // namespace

class TestCheckpointComparison : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // P^ = P to the last bit (the same rows on the same queries and keys); O^ = O to float
    // rounding, as the approximate side streams its output (online softmax) where the exact side
    // multiplies the rows of P.
    void aFileAgainstItselfIsExact()
    {
        const ExperimentSpec spec = comparisonSpec("llama-q4_k", "llama-q4_k", 0);
        const AttentionInput input = buildInput(spec.input);
        QCOMPARE(input.comparison.size(), input.heads.size());
        const ExperimentResult result = compute(spec, input);
        QCOMPARE(result.metrics.maxAbsError, 0.0);
        QVERIFY(result.metrics.relFrobeniusOutput <= 1e-6);
        QCOMPARE(result.metrics.meanKl, 0.0);
        for (const ResultWarning& warning : result.warnings)
            QVERIFY2(warning.code == QLatin1String("input"), qPrintable(warning.message));
        const auto model = loadModel(spec.input.modelPath);
        const auto forward = cachedForward(model, modelTokens(*model, spec.input.text, false).ids);
        const DownstreamComparison downstream =
            compareCheckpoints(*forward, *forward, model->heads());
        QCOMPARE(downstream.top1Agreement, 1.0);
        QCOMPARE(downstream.maxKl, 0.0);
        QCOMPARE(downstream.relFrobeniusAttentionMean, 0.0);
    }

    // Q4_0 against Q8_0 (the same random checkpoint, two quantizations): what their references,
    // computed in float64 on ggml's dequantized values, say.
    void quantizationsAgainstEachOtherAsTheReferencesSay()
    {
        const auto first = loadModel(ggufFixture(QStringLiteral("llama-q8_0")));
        const auto second = loadModel(ggufFixture(QStringLiteral("llama-q4_0")));
        const std::vector<int> ids =
            referenceTokensIn(kGgufFixtures + QStringLiteral("/reference/llama-q8_0"));
        const auto a = first->forward(ids);
        const auto b = second->forward(ids);
        const DownstreamComparison downstream = compareCheckpoints(a, b, first->heads());
        QCOMPARE(downstream.relFrobeniusPerLayer.size(), std::size_t(2));
        for (int layer = 0; layer < 2; ++layer) {
            const NpyArray p =
                ggufReference("llama-q8_0", QStringLiteral("attention_layer%1.npy").arg(layer));
            const NpyArray q =
                ggufReference("llama-q4_0", QStringLiteral("attention_layer%1.npy").arg(layer));
            // The mean over the heads of |P_2 - P_1|_F / |P_1|_F.
            const qint64 cells = p.shape[1] * p.shape[2];
            double mean = 0;
            for (qint64 h = 0; h < p.shape[0]; ++h) {
                double error = 0, norm = 0;
                for (qint64 i = h * cells; i < (h + 1) * cells; ++i) {
                    error += (q.values[std::size_t(i)] - p.values[std::size_t(i)]) *
                             (q.values[std::size_t(i)] - p.values[std::size_t(i)]);
                    norm += p.values[std::size_t(i)] * p.values[std::size_t(i)];
                }
                mean += std::sqrt(error / norm) / double(p.shape[0]);
            }
            QVERIFY(mean > 0.05);  // the quantizations differ visibly
            QVERIFY2(std::abs(downstream.relFrobeniusPerLayer[std::size_t(layer)] - mean) <= 1e-4,
                     qPrintable(QStringLiteral("layer %1: %2 against %3")
                                    .arg(layer)
                                    .arg(downstream.relFrobeniusPerLayer[std::size_t(layer)])
                                    .arg(mean)));
        }
        // Top-1 agreement from the two references' logits.
        const NpyArray logitsA = ggufReference("llama-q8_0", QStringLiteral("logits.npy"));
        const NpyArray logitsB = ggufReference("llama-q4_0", QStringLiteral("logits.npy"));
        const qint64 vocabulary = logitsA.shape[1];
        int agreeing = 0;
        for (qint64 i = 0; i < logitsA.shape[0]; ++i) {
            const auto top = [&](const NpyArray& logits) {
                const auto row = logits.values.begin() + i * vocabulary;
                return std::max_element(row, row + vocabulary) - row;
            };
            agreeing += top(logitsA) == top(logitsB);
        }
        QCOMPARE(downstream.top1Agreement, double(agreeing) / double(logitsA.shape[0]));
        QVERIFY(downstream.meanKl > 0);
        // compute() on one layer: the metrics of the same attention.
        const ExperimentSpec spec = comparisonSpec("llama-q8_0", "llama-q4_0", 1);
        const ExperimentResult result = compute(spec, buildInput(spec.input));
        QVERIFY(result.metrics.relFrobeniusAttention > 0.05);
        QVERIFY(result.heads.front().attentionApprox.rows() == result.labels.size());
    }

    // The norm multiplier is the input's: both checkpoints' queries and keys get it (a file
    // against itself stays exact at any multiplier).
    void theNormMultiplierScalesBothCheckpoints()
    {
        ExperimentSpec spec = comparisonSpec("llama-q8_0", "llama-q8_0", 1);
        spec.input.normMultiplier = 2.5;
        const AttentionInput input = buildInput(spec.input);
        ExperimentSpec plain = spec;
        plain.input.normMultiplier = 1;
        const AttentionInput unscaled = buildInput(plain.input);
        QCOMPARE(input.comparison.front().q, (2.5 * unscaled.comparison.front().q).eval());
        QCOMPARE(input.comparison.front().k, (2.5 * unscaled.comparison.front().k).eval());
        QCOMPARE(input.comparison.front().v, unscaled.comparison.front().v);
        QCOMPARE(compute(spec, input).metrics.maxAbsError, 0.0);
    }

    // Two checkpoints are held at once: a budget that holds either model's float weights but not
    // both refuses the pair, saying so; a missing second checkpoint is named as the second.
    void thePairMustFitTheBudgetAndExist()
    {
        const ExperimentSpec spec = comparisonSpec("llama-q8_0", "llama-q4_0", 0);
        const qint64 one = qint64(GgufFile(spec.input.modelPath).floatBytes());
        QCOMPARE(qint64(GgufFile(spec.input.comparisonModelPath).floatBytes()), one);
        const MemoryBudget budget(one * 3 / 2);
        ExperimentSpec alone = spec;
        alone.input.comparisonModelPath.clear();
        buildInput(alone.input, nullptr, budget);  // one model fits
        const QString message =
            thrownMessage<ResourceError>([&] { buildInput(spec.input, nullptr, budget); });
        QVERIFY2(message.startsWith(QStringLiteral("The weights of llama-q8_0.gguf and "
                                                   "llama-q4_0.gguf in float (two checkpoints "
                                                   "compared)")),
                 qPrintable(message));
        QVERIFY(message.contains(QStringLiteral("raise the memory budget")));

        ExperimentSpec missing = spec;
        missing.input.comparisonModelPath = m_dir.filePath(QStringLiteral("gone.gguf"));
        QCOMPARE(thrownMessage<InputError>([&] { buildInput(missing.input); }),
                 missing.input.comparisonModelPath +
                     QStringLiteral(": no such model folder or .gguf file (the second checkpoint, "
                                    "compared with llama-q8_0.gguf)"));
    }

    // The model cache keeps the models asked for last: the first model of a comparison, asked for
    // again, survives a third model's load (it was evicted in the order of first loading).
    void theModelsOfAComparisonStayLoaded()
    {
        const auto first = loadModel(ggufFixture("llama-q5_0"));
        const auto second = loadModel(ggufFixture("llama-q5_1"));
        QCOMPARE(loadModel(ggufFixture("llama-q5_0")).get(), first.get());
        QVERIFY(loadModel(ggufFixture("llama-q4_1")).get() != nullptr);
        QCOMPARE(loadModel(ggufFixture("llama-q5_0")).get(), first.get());
        QVERIFY(second);
    }

    void refusesOtherModels_data()
    {
        QTest::addColumn<QString>("second");
        QTest::addColumn<QString>("reason");
        QTest::newRow("architecture")
            << ggufFixture("qwen2-q4_k_m") << "its architecture is qwen2, not llama";
        QTest::newRow("shape") << ggufFixture("llama-q4_k") << "its number of layers is 1, not 2";
        // The same weights with two tokens' strings swapped: another tokenizer.
        QByteArray swapped = fileBytes(ggufFixture("llama-q4_0"));
        const QByteArray ab = GgufBuilder::text("a") + GgufBuilder::text("b");
        QVERIFY(swapped.count(ab) == 1);
        swapped.replace(ab, GgufBuilder::text("b") + GgufBuilder::text("a"));
        const QString path = m_dir.filePath(QStringLiteral("swapped.gguf"));
        writeBytes(path, swapped);
        QTest::newRow("tokenizer") << path
                                   << "its tokenizer cuts the text differently (token 0 is id 65 "
                                      "(\"a\") there, id 64 (\"a\") here)";
    }
    void refusesOtherModels()
    {
        QFETCH(QString, second);
        QFETCH(QString, reason);
        ExperimentSpec spec = comparisonSpec("llama-q8_0", "llama-q8_0", 0);
        spec.input.comparisonModelPath = second;
        spec.input.text = QStringLiteral("a the at");
        const QString message = thrownMessage<InputError>([&] { buildInput(spec.input); });
        QVERIFY2(message.startsWith(QFileInfo(second).fileName() +
                                    QStringLiteral(" cannot be compared with llama-q8_0.gguf")) &&
                     message.contains(reason),
                 qPrintable(message));
    }

    void commandLine()
    {
        REQUIRE_ATTENTION_LAB();
        const QString out = m_dir.filePath(QStringLiteral("compared"));
        const QStringList model{"--model", ggufFixture("llama-q8_0"), "--text",
                                "the theatre at when"};
        const AppRun run = runAttentionLab(QStringList{"compute"} + model +
                                               QStringList{"--layer", "1", "--compare-model",
                                                           ggufFixture("llama-q4_0"), "--out", out},
                                           QString(), 120000);
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
        QVERIFY(run.out.contains("llama-q4_0.gguf vs exact"));
        const QJsonObject metrics =
            QJsonDocument::fromJson(fileBytes(out + QStringLiteral("/metrics.json"))).object();
        QCOMPARE(metrics[QStringLiteral("spec")][QStringLiteral("method")].toString(),
                 QStringLiteral("checkpoint"));
        QCOMPARE(metrics[QStringLiteral("spec")][QStringLiteral("input")]
                        [QStringLiteral("comparison_model")]
                            .toString(),
                 ggufFixture("llama-q4_0"));
        QVERIFY(QFileInfo::exists(out + QStringLiteral("/attention_approx.npy")));
        const QString csv = m_dir.filePath(QStringLiteral("eval.csv"));
        const AppRun eval = runAttentionLab(
            QStringList{"model-eval"} + model +
                QStringList{"--methods", "favor-positive", "--features", "16", "--compare-model",
                            ggufFixture("llama-q4_0"), "--out", csv},
            QString(), 120000);
        QVERIFY2(eval.finished && eval.exitCode == 0, qPrintable(eval.describe()));
        const QStringList lines =
            QString::fromUtf8(fileBytes(csv)).split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[1].startsWith(QStringLiteral("checkpoint,0,all,0,")), qPrintable(lines[1]));
        QVERIFY(lines[2].startsWith(QStringLiteral("favor-positive,16,all,")));
        // The progress counts the method's rows; the checkpoint row is said on its own line.
        QVERIFY2(eval.err.contains("[1/1] favor-positive") && !eval.err.contains("[2/1]"),
                 qPrintable(eval.describe()));
        const QString refused = m_dir.filePath(QStringLiteral("refused"));
        const AppRun bad = runAttentionLab(
            QStringList{"compute"} + model +
                QStringList{"--compare-model", ggufFixture("qwen2-q4_k_m"), "--out", refused},
            QString(), 120000);
        QVERIFY2(refusedNaming(bad, QStringLiteral("its architecture is qwen2, not llama")),
                 qPrintable(bad.describe()));
        QVERIFY(!QFileInfo::exists(refused));
    }
};

QTEST_GUILESS_MAIN(TestCheckpointComparison)
#include "test_checkpoint_comparison.moc"

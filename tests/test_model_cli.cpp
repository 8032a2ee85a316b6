// Model input on the command line, run as processes: `compute` without input options runs the
// built-in model; `compute --model PATH --layer N` writes every head of that layer, causal, with
// the model's tokens, and --save-qkv the queries, keys and values it ran on (checked here against
// the attention it wrote, recomputed from them); `model-eval` writes one CSV row per (method, m,
// layers, seed) whose exact rows agree with the model and whose approximate rows do not; the
// built-in ViT does the same on images ([CLS] and patches, no mask; classes instead of next
// tokens), and `render` draws its image overlay (the [CLS] row, or the rollout); bad models,
// layers, texts and images exit 2 naming what is wrong and write nothing.

#include "app_process.h"
#include "inputs/builtin_models.h"
#include "io/npy.h"

#include <QImage>
#include <QJsonArray>
#include <QTest>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>

using namespace attnlab;
using namespace attnlab::test;

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A tiny GPT-2 with random weights (tests/data/models/make_fixtures.py): 2 layers, 2 heads,
// n_embd 16, n_positions 32.
const QString kTinyModel = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-gpt2-f16");
constexpr int kTinyHeads = 2;
constexpr int kTinyPositions = 32;
constexpr int kTimeoutMs = 120'000;
// A shipped sample of the built-in ViT (resources/models/fashion-vit: 28 x 28 grayscale, patches
// of 4: 49 patches and [CLS]; 4 layers of 4 heads).
const QString kSamples =
    QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/models/fashion-vit/samples");
const QString kSample = kSamples + QStringLiteral("/03-dress.png");
constexpr int kVitTokens = 50;

QJsonObject readJson(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                          : QJsonObject();
}

// Head h of an H x L x c array.
Matrix headOf(const NpyArray& array, qint64 h)
{
    const qint64 rows = array.shape[1];
    const qint64 cols = array.shape[2];
    return Eigen::Map<const Matrix>(array.values.data() + h * rows * cols, rows, cols);
}

// Softmax attention P = softmax(s Q K^T (+ causal mask)) of one head, in double.
Matrix softmaxAttention(const Matrix& q, const Matrix& k, double scale, bool causal)
{
    Matrix p = scale * q * k.transpose();
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
        const Eigen::Index visible = causal ? i + 1 : p.cols();
        const double top = p.row(i).head(visible).maxCoeff();
        for (Eigen::Index j = 0; j < p.cols(); ++j)
            p(i, j) = j < visible ? std::exp(p(i, j) - top) : 0.0;
        p.row(i) /= p.row(i).sum();
    }
    return p;
}

QStringList csvLines(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

}  // namespace

class TestModelCli : public QObject {
    Q_OBJECT

private slots:
    void defaultComputeRunsTheBuiltinModel();
    void modelLayerWritesEveryHeadCausal();
    void textWithoutModelKeepsRandomEmbeddings();
    void longTextIsRefusedOrCut();
    void badModelArgumentsExitTwo_data();
    void badModelArgumentsExitTwo();
    void modelEvalWritesOneRowPerCase();
    void modelEvalRefusesBadArguments_data();
    void modelEvalRefusesBadArguments();
    void methodsWithoutACausalFormAreSkippedOrExplained();
    void keepLastWarnsInEveryCommand();
    void computeRunsTheBuiltinVit();
    void modelEvalComparesClasses();
    void modelEvalSkipsAFoldersUnreadableImages();
    void modelEvalSaysNystromPastTheTokens();
    void modelEvalRefusesWhatExceedsTheBudget();
    void modelEvalSaysAWindowHoldsTheText();
    void renderDrawsTheVitOverlay();

private:
    QTemporaryDir m_dir;
};

// Property: `compute --out DIR` alone runs the built-in model on its example sentence: the spec
// says model input of the default built-in model (by its id), the tokens are BPE pieces (leading
// spaces shown as ␣), every head of the layer is written (3-D arrays), and attention is causal
// (rows sum to 1, nothing above the diagonal).
void TestModelCli::defaultComputeRunsTheBuiltinModel()
{
    const QString out = m_dir.filePath(QStringLiteral("default"));
    const AppRun run = runAttentionLab({"compute", "--out", out}, m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject json = readJson(out + "/metrics.json");
    const QJsonObject input = json.value("spec").toObject().value("input").toObject();
    QCOMPARE(input.value("kind").toString(), QStringLiteral("model"));
    QCOMPARE(input.value("model").toString(), QString::fromLatin1(kDefaultTextModel));
    QVERIFY(json.value("spec").toObject().value("causal").toBool());
    const QJsonArray tokens = json.value("tokens").toArray();
    QVERIFY(tokens.size() > 5);
    QVERIFY(std::any_of(tokens.begin(), tokens.end(), [](const QJsonValue& token) {
        return token.toString().startsWith(QStringLiteral("␣"));
    }));

    const NpyArray p = readNpy(out + "/attention_exact.npy");
    QCOMPARE(p.shape.size(), std::size_t(3));
    QVERIFY(p.shape[0] > 1);  // every head of the layer
    QCOMPARE(p.shape[1], qint64(tokens.size()));
    for (qint64 h = 0; h < p.shape[0]; ++h) {
        const Matrix head = headOf(p, h);
        for (Eigen::Index i = 0; i < head.rows(); ++i) {
            QVERIFY(std::abs(head.row(i).sum() - 1.0) < 1e-5);
            if (i + 1 < head.cols())
                QCOMPARE(head.row(i).tail(head.cols() - i - 1).cwiseAbs().maxCoeff(), 0.0);
        }
    }
    QVERIFY2(unexplainedNonFinite(out).isEmpty(), qPrintable(unexplainedNonFinite(out).join("\n")));
}

// Property: --model PATH --layer 1 --save-qkv writes queries, keys and values as H x L x d, and
// the exact attention it writes is causal softmax(Q K^T / sqrt(d)) of exactly those (to float
// precision, 1e-5); the approximation is causal too.
void TestModelCli::modelLayerWritesEveryHeadCausal()
{
    const QString out = m_dir.filePath(QStringLiteral("layer"));
    const AppRun run = runAttentionLab({"compute", "--model", kTinyModel, "--layer", "1", "--text",
                                        "the cat sat on the mat", "--save-qkv", "--out", out},
                                       m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const NpyArray q = readNpy(out + "/queries.npy");
    const NpyArray k = readNpy(out + "/keys.npy");
    const NpyArray v = readNpy(out + "/values.npy");
    const NpyArray p = readNpy(out + "/attention_exact.npy");
    const NpyArray pApprox = readNpy(out + "/attention_approx.npy");
    QCOMPARE(q.shape.size(), std::size_t(3));
    QCOMPARE(q.shape[0], qint64(kTinyHeads));
    QCOMPARE(k.shape, q.shape);
    QCOMPARE(v.shape[1], q.shape[1]);
    QCOMPARE(p.shape, (std::vector<qint64>{kTinyHeads, q.shape[1], q.shape[1]}));
    const double scale = 1.0 / std::sqrt(double(q.shape[2]));
    for (qint64 h = 0; h < kTinyHeads; ++h) {
        const Matrix expected = softmaxAttention(headOf(q, h), headOf(k, h), scale, true);
        QVERIFY2((headOf(p, h) - expected).cwiseAbs().maxCoeff() < 1e-5,
                 qPrintable(QStringLiteral("head %1").arg(h)));
        const Matrix approx = headOf(pApprox, h);
        for (Eigen::Index i = 0; i + 1 < approx.rows(); ++i)
            QCOMPARE(approx.row(i).tail(approx.cols() - i - 1).cwiseAbs().maxCoeff(), 0.0);
    }
    const QJsonObject json = readJson(out + "/metrics.json");
    QCOMPARE(json.value("spec").toObject().value("input").toObject().value("layer").toInt(), 1);
    QCOMPARE(json.value("tokens").toArray().size(), int(q.shape[1]));
}

// Property: --text without --model keeps the random-embedding input (existing scripts keep
// working): word tokens, one head, non-causal unless asked.
void TestModelCli::textWithoutModelKeepsRandomEmbeddings()
{
    const QString out = m_dir.filePath(QStringLiteral("text"));
    const AppRun run = runAttentionLab({"compute", "--text", "The cat sat.", "--out", out},
                                       m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject json = readJson(out + "/metrics.json");
    QCOMPARE(json.value("spec").toObject().value("input").toObject().value("kind").toString(),
             QStringLiteral("text"));
    QCOMPARE(json.value("tokens").toArray(), (QJsonArray{"The", "cat", "sat", "."}));
    QVERIFY(!json.value("spec").toObject().value("causal").toBool());
}

// Property: a text longer than n_positions is refused with exit 2, naming both counts and the way
// around it; with --keep-last it runs on the last n_positions tokens and says so (stderr and a
// warning in metrics.json).
void TestModelCli::longTextIsRefusedOrCut()
{
    const QString text = QStringLiteral("abc ").repeated(kTinyPositions);  // over 32 tokens
    const QString refused = m_dir.filePath(QStringLiteral("long-refused"));
    const AppRun run =
        runAttentionLab({"compute", "--model", kTinyModel, "--text", text, "--out", refused},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(run, QStringLiteral("at most 32")) && run.err.contains("--keep-last"),
             qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(refused + "/metrics.json"));

    const QString cut = m_dir.filePath(QStringLiteral("long-cut"));
    const AppRun kept = runAttentionLab(
        {"compute", "--model", kTinyModel, "--text", text, "--keep-last", "--out", cut},
        m_dir.path(), kTimeoutMs);
    QVERIFY2(kept.finished && kept.exitCode == 0, qPrintable(kept.describe()));
    QVERIFY2(kept.out.contains("dropped"), kept.out.constData());
    const QJsonObject json = readJson(cut + "/metrics.json");
    QCOMPARE(json.value("tokens").toArray().size(), kTinyPositions);
    QCOMPARE(json.value("warnings").toArray().first().toObject().value("code").toString(),
             QStringLiteral("input"));
}

void TestModelCli::badModelArgumentsExitTwo_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("no such folder")
        << QStringList{"--model", "no/such/model"} << QStringLiteral("no/such/model");
    QTest::newRow("folder without config")
        << QStringList{"--model", QStringLiteral(ATTNLAB_TEST_DATA)}
        << QStringLiteral("config.json");
    QTest::newRow("a model folder's config.json")
        << QStringList{"--model", kTinyModel + "/config.json"}
        << kTinyModel +
               "/config.json: a file, not a model folder (give the folder that holds "
               "config.json: " +
               kTinyModel + "), nor a GGUF file";
    QTest::newRow("a file that is not a model")
        << QStringList{"--model", kSample}
        << kSample + ": a file, not a model folder (give the folder that holds config.json), nor "
                     "a GGUF file (it does not start with \"GGUF\")";
    QTest::newRow("layer past the last")
        << QStringList{"--model", kTinyModel, "--layer", "2"} << QStringLiteral("layers 0 to 1");
    QTest::newRow("model and image")
        << QStringList{"--model", kTinyModel, "--image", "x.png"} << QStringLiteral("--image");
    QTest::newRow("layer with random input")
        << QStringList{"--random", "4", "--layer", "1"} << QStringLiteral("--layer");
    QTest::newRow("heads with model")
        << QStringList{"--model", kTinyModel, "--heads", "3"} << QStringLiteral("--heads");
    QTest::newRow("ViT without image")
        << QStringList{"--model", "builtin-vit"} << QStringLiteral("--image FILE");
    QTest::newRow("ViT and text") << QStringList{"--model", "builtin-vit", "--text", "a b"}
                                  << QStringLiteral("--text");
    QTest::newRow("ViT, causal") << QStringList{"--model", "builtin-vit", "--image", kSample,
                                                "--causal"}
                                 << QStringLiteral("--causal");
    QTest::newRow("ViT, patch size")
        << QStringList{"--model", "builtin-vit", "--image", kSample, "--patch", "7"}
        << QStringLiteral("--patch");
    QTest::newRow("ViT layer past the last")
        << QStringList{"--model", "builtin-vit", "--image", kSample, "--layer", "4"}
        << QStringLiteral("layers 0 to 3");
    QTest::newRow("ViT, an image that is not one")
        << QStringList{"--model", "builtin-vit", "--image", kTinyModel + "/config.json"}
        << QStringLiteral("config.json: cannot read the image");
}

// Property: bad model arguments exit 2 with one line naming the argument or file, and write
// nothing.
void TestModelCli::badModelArgumentsExitTwo()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString out = m_dir.filePath(QStringLiteral("bad-%1").arg(QTest::currentDataTag()));
    const AppRun run = runAttentionLab(
        QStringList{"compute"} + arguments + QStringList{"--out", out}, m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QCOMPARE(run.err.trimmed().count('\n'), 0);  // one line
    QVERIFY(!QFileInfo::exists(out));
}

// Property: model-eval writes the header of the issue and one row per (method, m, layers, seed):
// the exact method once per layer set (no m, no seeds) with agreement 1 and KL about 0 (the
// streaming kernel against the model's own attention: float rounding only); FAVOR+ for every m,
// set and seed, with KL > 0 and relative attention errors in (0, 1). --plot writes a PNG that is
// not blank.
void TestModelCli::modelEvalWritesOneRowPerCase()
{
    const QString csv = m_dir.filePath(QStringLiteral("eval/eval.csv"));
    const QString plot = m_dir.filePath(QStringLiteral("eval/eval.png"));
    const AppRun run = runAttentionLab(
        {"model-eval", "--model", kTinyModel, "--text", "in the beginning was the word",
         "--methods", "exact,favor-positive", "--features", "8,16", "--layers", "all,0", "--seeds",
         "2", "--out", csv, "--plot", plot},
        m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QStringList lines = csvLines(csv);
    QCOMPARE(lines.first(), QStringLiteral("method,m,layers,seed,tokens,top1_agreement,mean_kl,"
                                           "max_kl,rel_frobenius_attention_mean,window"));
    QCOMPARE(lines.size(), 1 + 2 + 2 * 2 * 2);
    int exactRows = 0;
    for (const QString& line : lines.mid(1)) {
        const QStringList f = line.split(QLatin1Char(','));
        QCOMPARE(f.size(), 10);
        QVERIFY2(f[2] == QLatin1String("all") || f[2] == QLatin1String("0"), qPrintable(line));
        if (f[0] == QLatin1String("exact")) {
            ++exactRows;
            QCOMPARE(f[5].toDouble(), 1.0);
            QVERIFY2(f[6].toDouble() < 1e-6, qPrintable(line));
        } else {
            QCOMPARE(f[0], QStringLiteral("favor-positive"));
            QVERIFY2(f[6].toDouble() > 0, qPrintable(line));
            QVERIFY2(f[8].toDouble() > 0 && f[8].toDouble() < 1, qPrintable(line));
        }
    }
    QCOMPARE(exactRows, 2);
    const QImage image(plot);
    QVERIFY(!image.isNull());
    // Not blank: lines, markers, labels and legend colour a good part of it.
    int inked = 0;
    for (int y = 0; y < image.height(); y += 4)
        for (int x = 0; x < image.width(); x += 4)
            inked += qGray(image.pixel(x, y)) < 200;
    QVERIFY2(inked > 1000, qPrintable(QString::number(inked)));
}

void TestModelCli::modelEvalRefusesBadArguments_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("layer out of range")
        << QStringList{"--model", kTinyModel, "--layers", "5"} << QStringLiteral("--layers");
    QTest::newRow("unknown method")
        << QStringList{"--model", kTinyModel, "--methods", "magic"} << QStringLiteral("magic");
    QTest::newRow("zero features")
        << QStringList{"--model", kTinyModel, "--features", "0"} << QStringLiteral("--features");
    QTest::newRow("local's window given apart from --features")
        << QStringList{"--model", kTinyModel, "--methods", "elu,local", "--window", "16"}
        << QStringLiteral("--window: model-eval sweeps local's w with --features");
    QTest::newRow("predictions in the CSV's place")
        << QStringList{"--model",   "builtin-vit", "--image",       kSamples + "/01-trouser.png",
                       "--methods", "exact",       "--predictions", "same.csv"}
        << QStringLiteral("--out, --predictions: both name");
    QTest::newRow("predictions in the heads file's place")
        << QStringList{"--model",   "builtin-vit", "--image",       kSamples + "/01-trouser.png",
                       "--methods", "exact",       "--predictions", "bad-eval-heads.csv"}
        << QStringLiteral("--out's heads file, --predictions: both name");
    QTest::newRow("image without a model: the built-in ViT reads it")
        << QStringList{"--image", "x.png"} << QStringLiteral("x.png: no such image file");
    QTest::newRow("GPT-2 and images")
        << QStringList{"--model", kTinyModel, "--images", "a.png"} << QStringLiteral("GPT-2");
    QTest::newRow("ViT without images")
        << QStringList{"--model", "builtin-vit"} << QStringLiteral("--image-folder");
    QTest::newRow("ViT and text") << QStringList{"--model", "builtin-vit", "--text", "a b"}
                                  << QStringLiteral("--text");
    QTest::newRow("an image as the folder")
        << QStringList{"--model", "builtin-vit", "--image-folder", kSample}
        << kSample + QStringLiteral(": a file, not a folder of images");
    QTest::newRow("a folder without images")
        << QStringList{"--model", "builtin-vit", "--image-folder",
                       QStringLiteral(ATTNLAB_TEST_DATA)}
        << QStringLiteral("no image files");
}

// Property: bad model-eval arguments exit 2 naming the argument, and write no CSV.
void TestModelCli::modelEvalRefusesBadArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString tag = QString::fromLatin1(QTest::currentDataTag());
    const QString csv = m_dir.filePath(tag.startsWith(QLatin1String("predictions in the CSV"))
                                           ? QStringLiteral("same.csv")
                                       : tag.startsWith(QLatin1String("predictions in the heads"))
                                           ? QStringLiteral("bad-eval.csv")
                                           : QStringLiteral("bad-eval-%1.csv").arg(tag));
    const AppRun run =
        runAttentionLab(QStringList{"model-eval"} + arguments + QStringList{"--out", csv},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(csv));
}

// Property: `compute --model builtin-vit --image F --layer 2 --save-qkv` writes every head of the
// layer over [CLS] and the 7 x 7 patches (labels "[CLS]", "(row, col)", the patch grid), not
// causal: the exact attention is softmax(Q K^T / sqrt(d)) of the queries and keys it wrote, with
// weight above the diagonal, and so is the approximation.
// Property: a language model's attention is causal without --causal: a method without a causal
// form is refused with that reason (not "leave out --causal", never given), and among other
// methods it is left out with a warning while they run.
void TestModelCli::methodsWithoutACausalFormAreSkippedOrExplained()
{
    const QString out = m_dir.filePath(QStringLiteral("no-causal-form"));
    const AppRun compute =
        runAttentionLab({"compute", "--model", kTinyModel, "--text", "in the beginning", "--method",
                         "nystrom", "--out", out},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(compute, QStringLiteral("language model's attention is causal")) &&
                 !compute.err.contains("--causal"),
             qPrintable(compute.describe()));
    QVERIFY(!QFileInfo::exists(out));

    const QString csv = m_dir.filePath(QStringLiteral("no-causal-form/eval.csv"));
    const AppRun eval =
        runAttentionLab({"model-eval", "--model", kTinyModel, "--text", "in the beginning",
                         "--methods", "favor-positive,nystrom", "--features", "8", "--out", csv},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(eval.finished && eval.exitCode == 0, qPrintable(eval.describe()));
    QVERIFY2(eval.err.contains("nystrom left out"), qPrintable(eval.describe()));
    const QStringList lines = csvLines(csv);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[1].startsWith("favor-positive,"), qPrintable(lines[1]));

    const AppRun alone =
        runAttentionLab({"model-eval", "--model", kTinyModel, "--text", "in the beginning",
                         "--methods", "nystrom", "--out", csv + "2"},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(alone, QStringLiteral("language model")), qPrintable(alone.describe()));

    // render --methods leaves them out as errors and model-eval do, with the warning (it left
    // them out silently), and says which when none is left ("Tick the methods to compare.").
    const AppRun render = runAttentionLab(
        {"render", "--model", kTinyModel, "--text", "in the beginning", "--methods", "nystrom,elu",
         "--out", m_dir.filePath(QStringLiteral("no-causal-render"))},
        m_dir.path(), kTimeoutMs);
    QVERIFY2(render.finished && render.exitCode == 0, qPrintable(render.describe()));
    QCOMPARE(render.err, QByteArray("warning: --methods: nystrom left out: it has no causal form, "
                                    "and a language model's attention is causal\n"));
    const AppRun none = runAttentionLab(
        {"render", "--model", kTinyModel, "--text", "in the beginning", "--methods",
         "nystrom,linformer", "--out", m_dir.filePath(QStringLiteral("no-causal-render2"))},
        m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(none, QStringLiteral("--methods: nystrom, linformer have no causal "
                                                "form, and a language model's attention is "
                                                "causal")),
             qPrintable(none.describe()));
    QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("no-causal-render2"))));
}

// Property: --keep-last warns that it dropped tokens in every command that takes it, as compute
// does: steps on stdout with its other warnings, errors on stderr before its sweep, and
// model-eval without --model (the built-in model reads the text) takes it at all.
void TestModelCli::keepLastWarnsInEveryCommand()
{
    const QString text = QStringLiteral("abc ").repeated(kTinyPositions);  // over 32 tokens
    const AppRun steps = runAttentionLab({"steps", "--model", kTinyModel, "--text", text,
                                          "--keep-last", "--out", m_dir.filePath("kept-steps")},
                                         m_dir.path(), kTimeoutMs);
    QVERIFY2(steps.finished && steps.exitCode == 0, qPrintable(steps.describe()));
    QVERIFY2(steps.out.contains("L = 32") && steps.out.contains("warning: The text has") &&
                 steps.out.contains("tokens were dropped"),
             qPrintable(steps.describe()));
    const AppRun errors =
        runAttentionLab({"errors", "--model", kTinyModel, "--text", text, "--keep-last",
                         "--methods", "elu", "--out", m_dir.filePath("kept-errors.csv")},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(errors.finished && errors.exitCode == 0, qPrintable(errors.describe()));
    QVERIFY2(errors.err.startsWith("warning: The text has") &&
                 errors.err.contains("tokens were dropped"),
             qPrintable(errors.describe()));
    const AppRun eval =
        runAttentionLab({"model-eval", "--text", "And God said", "--keep-last", "--methods", "elu",
                         "--out", m_dir.filePath("kept-eval.csv")},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(eval.finished && eval.exitCode == 0, qPrintable(eval.describe()));
}

void TestModelCli::computeRunsTheBuiltinVit()
{
    const QString out = m_dir.filePath(QStringLiteral("vit"));
    const AppRun run = runAttentionLab({"compute", "--model", "builtin-vit", "--image", kSample,
                                        "--layer", "2", "--save-qkv", "--out", out},
                                       m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject json = readJson(out + "/metrics.json");
    const QJsonObject spec = json.value("spec").toObject();
    QCOMPARE(spec.value("input").toObject().value("model").toString(),
             QStringLiteral("builtin-vit"));
    QCOMPARE(spec.value("input").toObject().value("image").toString(), kSample);
    QVERIFY(!spec.value("causal").toBool());
    const QJsonArray tokens = json.value("tokens").toArray();
    QCOMPARE(tokens.size(), kVitTokens);
    QCOMPARE(tokens.at(0).toString(), QStringLiteral("[CLS]"));
    QCOMPARE(tokens.at(9).toString(), QStringLiteral("(1, 1)"));
    QCOMPARE(json.value("patch_grid").toArray(), (QJsonArray{7, 7}));

    const NpyArray q = readNpy(out + "/queries.npy");
    const NpyArray k = readNpy(out + "/keys.npy");
    const NpyArray p = readNpy(out + "/attention_exact.npy");
    const NpyArray pApprox = readNpy(out + "/attention_approx.npy");
    QCOMPARE(q.shape, (std::vector<qint64>{4, kVitTokens, 32}));
    QCOMPARE(p.shape, (std::vector<qint64>{4, kVitTokens, kVitTokens}));
    for (qint64 h = 0; h < 4; ++h) {
        const Matrix expected =
            softmaxAttention(headOf(q, h), headOf(k, h), 1 / std::sqrt(32.0), false);
        QVERIFY2((headOf(p, h) - expected).cwiseAbs().maxCoeff() < 1e-5,
                 qPrintable(QStringLiteral("head %1").arg(h)));
        QVERIFY(headOf(p, h)(0, kVitTokens - 1) > 0);
        QVERIFY(headOf(pApprox, h)(0, kVitTokens - 1) != 0);
    }
    QVERIFY2(unexplainedNonFinite(out).isEmpty(), qPrintable(unexplainedNonFinite(out).join("\n")));
}

// Property: model-eval on the built-in ViT's samples writes the text's CSV columns, with tokens =
// 49 patches + 1; exact attention agrees on every image (KL about 0), FAVOR+ with m = 16 gives
// KL > 0; --predictions writes one line per image and row, whose exact class is the one in the
// sample's name for the samples the training script classified right; --image-folder reads the
// folder's PNG files, in name order.
void TestModelCli::modelEvalComparesClasses()
{
    const QString csv = m_dir.filePath(QStringLiteral("vit-eval/eval.csv"));
    const QString predictions = m_dir.filePath(QStringLiteral("vit-eval/classes.csv"));
    const QStringList images{kSamples + "/01-trouser.png", kSamples + "/05-sandal.png",
                             kSamples + "/09-ankle-boot.png"};
    const AppRun run =
        runAttentionLab({"model-eval", "--model", "builtin-vit", "--images", images.join(','),
                         "--methods", "exact,favor-positive", "--features", "16", "--layers",
                         "all,1", "--predictions", predictions, "--out", csv},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QStringList lines = csvLines(csv);
    QCOMPARE(lines.first(), QStringLiteral("method,m,layers,seed,tokens,top1_agreement,mean_kl,"
                                           "max_kl,rel_frobenius_attention_mean,window"));
    QCOMPARE(lines.size(), 1 + 2 + 2);
    for (const QString& line : lines.mid(1)) {
        const QStringList f = line.split(QLatin1Char(','));
        QCOMPARE(f[4].toInt(), kVitTokens);
        if (f[0] == QLatin1String("exact")) {
            QCOMPARE(f[5].toDouble(), 1.0);
            QVERIFY2(f[7].toDouble() < 1e-6, qPrintable(line));
        } else {
            QVERIFY2(f[6].toDouble() > 0 && f[8].toDouble() > 0, qPrintable(line));
        }
    }
    const QStringList classes = csvLines(predictions);
    QCOMPARE(classes.first(), QStringLiteral("image,method,m,layers,seed,exact_class,exact_label,"
                                             "approx_class,approx_label,kl"));
    QCOMPARE(classes.size(), 1 + 3 * 4);
    for (const QString& line : classes.mid(1)) {
        const QStringList f = line.split(QLatin1Char(','));
        QVERIFY(images.contains(f[0]));
        // These three samples were classified right by the training script (samples.csv).
        QCOMPARE(f[5].toInt(), QFileInfo(f[0]).fileName().left(2).toInt());
    }

    const QString folderCsv = m_dir.filePath(QStringLiteral("vit-eval/folder.csv"));
    const QString folderClasses = m_dir.filePath(QStringLiteral("vit-eval/folder-classes.csv"));
    const AppRun folder =
        runAttentionLab({"model-eval", "--model", "builtin-vit", "--image-folder", kSamples,
                         "--methods", "exact", "--predictions", folderClasses, "--out", folderCsv},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(folder.finished && folder.exitCode == 0, qPrintable(folder.describe()));
    const QStringList folderLines = csvLines(folderClasses);
    QCOMPARE(folderLines.size(), 1 + 10);
    QVERIFY(folderLines.at(1).startsWith(kSamples + "/00-"));
    QVERIFY(folderLines.at(10).startsWith(kSamples + "/09-"));
}

// Property: --image-folder skips a file of the folder that cannot be read (a corrupt PNG), with
// one warning on stderr naming it and why, and goes on over the others: the summary counts the 3
// images read, --predictions has their lines only. A folder of which no image can be read is
// refused with exit status 2, naming the folder, and nothing is written.
void TestModelCli::modelEvalSkipsAFoldersUnreadableImages()
{
    const QString folder = m_dir.filePath(QStringLiteral("one-corrupt"));
    QVERIFY(QDir().mkpath(folder));
    for (const char* name : {"01-trouser.png", "05-sandal.png", "09-ankle-boot.png"})
        QVERIFY(QFile::copy(kSamples + "/" + name, folder + "/" + name));
    const QString corrupt = folder + QStringLiteral("/02-corrupt.png");
    QFile file(corrupt);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("\x89PNG\r\n\x1a\nnot the rest of a PNG");
    file.close();
    const QString csv = m_dir.filePath(QStringLiteral("skip/eval.csv"));
    const QString predictions = m_dir.filePath(QStringLiteral("skip/classes.csv"));
    const AppRun run =
        runAttentionLab({"model-eval", "--model", "builtin-vit", "--image-folder", folder,
                         "--methods", "exact", "--predictions", predictions, "--out", csv},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QString err = QString::fromUtf8(run.err);
    QCOMPARE(err.count(QStringLiteral("warning: ")), 1);
    QVERIFY2(err.contains(QStringLiteral("warning: %1: cannot read the image: ").arg(corrupt)) &&
                 err.contains(QStringLiteral("; skipped, the folder's other images are read\n")),
             qPrintable(run.describe()));
    QVERIFY2(run.out.contains(", 3 images of 50 tokens: 1 row"), run.out.constData());
    const QStringList lines = csvLines(predictions);
    QCOMPARE(lines.size(), 1 + 3);
    for (const QString& line : lines.mid(1))
        QVERIFY2(!line.contains(QStringLiteral("02-corrupt")), qPrintable(line));

    QVERIFY(QFile::remove(folder + "/01-trouser.png") && QFile::remove(folder + "/05-sandal.png") &&
            QFile::remove(folder + "/09-ankle-boot.png"));
    const QString never = m_dir.filePath(QStringLiteral("skip/never.csv"));
    const AppRun none = runAttentionLab({"model-eval", "--model", "builtin-vit", "--image-folder",
                                         folder, "--methods", "exact", "--out", never},
                                        m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(none, folder +
                                     QStringLiteral(": none of the folder's image files can "
                                                    "be read (1 tried; the first: ") +
                                     corrupt),
             qPrintable(none.describe()));
    QVERIFY(!QFileInfo::exists(never));
}

// Property: Nystrom takes at most L landmarks: on the built-in ViT's 50 tokens, model-eval's rows
// at m = 64 and 256 are the row of m = 50 but for m, and a warning on stderr says so once,
// naming the m past L (m = 16 and 50 are not named).
void TestModelCli::modelEvalSaysNystromPastTheTokens()
{
    const QString csv = m_dir.filePath(QStringLiteral("vit-eval/nystrom.csv"));
    const AppRun run =
        runAttentionLab({"model-eval", "--model", "builtin-vit", "--image", kSample, "--methods",
                         "nystrom", "--features", "16,50,64,256", "--out", csv},
                        m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QString warning = QStringLiteral("warning: Nystr\u00f6m takes at most L landmarks: "
                                           "m = 64 and 256 act as m = L = 50, with the same "
                                           "result and cost.\n");
    QCOMPARE(QString::fromUtf8(run.err).count(QStringLiteral("takes at most L landmarks")), 1);
    QVERIFY2(QString::fromUtf8(run.err).contains(warning), qPrintable(run.describe()));
    const QStringList lines = csvLines(csv);
    QCOMPARE(lines.size(), 1 + 4);
    const auto withoutM = [](const QString& line) {
        QStringList f = line.split(QLatin1Char(','));
        f.removeAt(1);
        return f;
    };
    QVERIFY(withoutM(lines[1]) != withoutM(lines[2]));
    QCOMPARE(withoutM(lines[3]), withoutM(lines[2]));
    QCOMPARE(withoutM(lines[4]), withoutM(lines[2]));
}

// Property: an m whose random features (W of every replaced head) exceed the memory budget is
// refused before the work with exit 3, saying the way around it, and writes no CSV.
void TestModelCli::modelEvalRefusesWhatExceedsTheBudget()
{
    const QString csv = m_dir.filePath(QStringLiteral("huge-eval.csv"));
    const AppRun run = runAttentionLab(
        {"model-eval", "--model", kTinyModel, "--text", "in the beginning was the word",
         "--features", "1000000", "--memory-budget", "256M", "--out", csv},
        m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 3, qPrintable(run.describe()));
    QVERIFY2(run.err.contains("over the memory budget") && run.err.contains("--features"),
             qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(csv));
}

// Property: local's window w from --features that holds every key of the text is said on stderr
// (the method is exact there), and the CSV's window column gives the w each row ran with; the
// summary counts "1 row".
void TestModelCli::modelEvalSaysAWindowHoldsTheText()
{
    const QString csv = m_dir.filePath(QStringLiteral("window-eval.csv"));
    const AppRun run = runAttentionLab(
        {"model-eval", "--model", kTinyModel, "--text", "in the beginning was the word",
         "--methods", "local", "--features", "200", "--out", csv},
        m_dir.path(), kTimeoutMs);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY2(run.err.contains("warning: local with w = 200 (from --features): the window holds "
                              "every key"),
             qPrintable(run.describe()));
    QVERIFY2(run.out.contains(": 1 row\n"), qPrintable(run.describe()));
    const QStringList lines = csvLines(csv);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[1].startsWith(QStringLiteral("local,200,")) &&
                 lines[1].endsWith(QStringLiteral(",200")),
             qPrintable(lines[1]));
}

// `render` of the built-in ViT writes the image overlay beside the heatmaps, as wide as the three
// panels need; --rollout draws another picture (the rollout over 4 layers, not layer 3's head);
// --rollout without a ViT is refused naming the option, and writes nothing.
void TestModelCli::renderDrawsTheVitOverlay()
{
    const QStringList common{"render",  "--model", "builtin-vit", "--image", kSample,
                             "--layer", "3",       "--method",    "nystrom", "--features",
                             "8",       "--size",  "400x300"};
    QStringList pictures;
    for (const bool rollout : {false, true}) {
        const QString out = m_dir.filePath(rollout ? "render-rollout" : "render-head");
        const AppRun run = runAttentionLab(common + QStringList{"--out", out} +
                                               (rollout ? QStringList{"--rollout"} : QStringList{}),
                                           m_dir.path(), kTimeoutMs);
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
        const QImage overlay(out + "/image_overlay.png");
        QCOMPARE(overlay.size(), QSize(2 * 800, 2 * 225));  // 2 x (2 w, 3 h / 4), at twice the size
        QVERIFY(QFile::exists(out + "/attention_exact.png"));
        pictures.append(out + "/image_overlay.png");
    }
    QVERIFY(QImage(pictures[0]) != QImage(pictures[1]));

    const QString refused = m_dir.filePath(QStringLiteral("render-refused"));
    const AppRun run = runAttentionLab({"render", "--random", "16", "--rollout", "--out", refused},
                                       m_dir.path(), kTimeoutMs);
    QVERIFY2(refusedNaming(run, QStringLiteral("--rollout")), qPrintable(run.describe()));
    QVERIFY(!QFile::exists(refused));
}

QTEST_GUILESS_MAIN(TestModelCli)
#include "test_model_cli.moc"

// `attention-lab fit-features` and `--feature-map` as processes: a fit of the tiny Llama's heads
// written as a feature-map file that compute, model-eval, render and generate take with methods
// hedgehog and hedgehog-window; model-eval's per-head CSV and compute's metrics.json with the
// rows' entropies and monotonicity; bad input (a file for another model, a text too short, a loss
// that is not a number, no maps at all) exits 2 with a message naming the file or option and
// writes nothing.

#include "app_process.h"
#include "fitting/feature_map_file.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace attnlab;
using namespace attnlab::test;

namespace {

const QString kTinyLlama = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-llama-gqa-f32");
const QString kTinyQwen = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-qwen2-f32");
constexpr int kTimeout = 120000;

// A text of about `words` words, a sentence said again and again.
QString repeatedText(int words)
{
    QString text;
    for (int w = 0; w < words; w += 10)
        text += QStringLiteral("In the beginning God created the heaven and the earth. ");
    return text;
}

QJsonObject readJson(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                          : QJsonObject();
}

void writeText(const QString& path, const QString& text)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text.toUtf8());
}

}  // namespace

class TestFitCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void fitWritesTheMapsAndTheCurves();
    void theMapsServeEveryCommand();
    void modelEvalWritesThePerHeadCsv();
    void badInputExitsTwoWritingNothing_data();
    void badInputExitsTwoWritingNothing();

private:
    QTemporaryDir m_dir;
    QString m_text;
    QString m_maps;
};

void TestFitCli::initTestCase()
{
    REQUIRE_ATTENTION_LAB();
    QVERIFY(m_dir.isValid());
    m_text = m_dir.filePath(QStringLiteral("training.txt"));
    writeText(m_text, repeatedText(500));
    m_maps = m_dir.filePath(QStringLiteral("maps/tiny.safetensors"));
}

void TestFitCli::fitWritesTheMapsAndTheCurves()
{
    // Every head of both layers fitted (4 query heads on 2 key/value heads), the file names the
    // model and its shape, the curves have a line per head and step, stdout each head's KL.
    const QString curves = m_dir.filePath(QStringLiteral("curves.csv"));
    const AppRun run =
        runAttentionLab({"fit-features", "--model", kTinyLlama, "--text-file", m_text, "--steps",
                         "20", "--window", "8", "--out", m_maps, "--curves", curves},
                        {}, kTimeout);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(run.out.contains("8 heads fitted"));
    QVERIFY2(run.out.contains(", 20 steps\n"), run.out.constData());
    QVERIFY(run.out.contains("layer 1, head 3: mean row KL"));
    const std::shared_ptr<const FittedFeatureMaps> maps = readFeatureMaps(m_maps);
    QCOMPARE(maps->model, QStringLiteral("tiny-llama-gqa-f32"));
    QCOMPARE(maps->fitted.size(), std::size_t(8));
    QCOMPARE(maps->headDim, 12);
    QCOMPARE(maps->window, 8);
    QCOMPARE(maps->steps, 20);
    QCOMPARE(maps->trainingText, QStringLiteral("training.txt"));
    QFile file(curves);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
    QCOMPARE(lines.front(), QByteArray("layer,head,step,kl"));
    QCOMPARE(lines.size(), 1 + 8 * 20);
}

void TestFitCli::theMapsServeEveryCommand()
{
    // compute (metrics.json with the entropies, monotonicity and the weight by rank), render and
    // generate take the file with hedgehog and hedgehog-window.
    const QString out = m_dir.filePath(QStringLiteral("compute"));
    AppRun run = runAttentionLab({"compute", "--model", kTinyLlama, "--layer", "1", "--text",
                                  "The cat sat on the mat and the dog sat on the log.", "--method",
                                  "hedgehog", "--feature-map", m_maps, "--out", out},
                                 {}, kTimeout);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject metrics = readJson(out + QStringLiteral("/metrics.json"));
    QCOMPARE(metrics.value(QStringLiteral("spec")).toObject().value(QStringLiteral("feature_map")),
             QJsonValue(m_maps));
    const QJsonObject overall = metrics.value(QStringLiteral("metrics")).toObject();
    for (const char* key : {"entropy_exact", "entropy_approx", "monotonicity"})
        QVERIFY2(overall.value(QLatin1String(key)).isDouble(), key);
    QVERIFY(overall.value(QStringLiteral("monotonicity")).toDouble() <= 1.0);
    const int length = metrics.value(QStringLiteral("L")).toInt();
    QCOMPARE(overall.value(QStringLiteral("weight_by_rank_exact")).toArray().size(),
             std::min(length, 32));
    QVERIFY(QFile::exists(out + QStringLiteral("/features_q.npy")));

    run = runAttentionLab({"render", "--model", kTinyLlama, "--text", "The cat sat on the mat.",
                           "--method", "hedgehog-window", "--window", "3", "--feature-map", m_maps,
                           "--out", m_dir.filePath(QStringLiteral("render")), "--format", "png"},
                          {}, kTimeout);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(QFile::exists(m_dir.filePath(QStringLiteral("render/attention_approx.png"))));

    for (const char* method : {"hedgehog", "hedgehog-window"}) {
        const QString folder = m_dir.filePath(QStringLiteral("generate-") + QLatin1String(method));
        run = runAttentionLab(
            {"generate", "--model", kTinyLlama, "--prompt", "In the beginning", "--tokens", "6",
             "--method", method, "--window", "4", "--feature-map", m_maps, "--out", folder},
            {}, kTimeout);
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
        // tokens.json records the maps' file and their features C = 2 d_f, as metrics.json does.
        const QJsonObject recorded = readJson(folder + QStringLiteral("/tokens.json"))
                                         .value(QStringLiteral("method"))
                                         .toObject();
        QCOMPARE(recorded.value(QStringLiteral("feature_map")).toString(), m_maps);
        QCOMPARE(recorded.value(QStringLiteral("features")).toInt(),
                 metrics.value(QStringLiteral("features")).toInt());
    }
}

void TestFitCli::modelEvalWritesThePerHeadCsv()
{
    // model-eval writes <out>-heads.csv beside its CSV: one line per replaced head and row, with
    // the head's entropies and monotonicity (exact attention: monotonicity 1, both entropies
    // equal).
    const QString csv = m_dir.filePath(QStringLiteral("eval/model-eval.csv"));
    const AppRun run = runAttentionLab(
        {"model-eval", "--model", kTinyLlama, "--text", "In the beginning God created", "--methods",
         "exact,hedgehog,elu", "--feature-map", m_maps, "--layers", "all,1", "--out", csv},
        {}, kTimeout);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QFile file(m_dir.filePath(QStringLiteral("eval/model-eval-heads.csv")));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
    QCOMPARE(lines.front(),
             QByteArray("layer,head,method,m,layers,seed,entropy_exact,entropy_approx,"
                        "monotonicity"));
    // Three methods, each with all (2 layers of 4 heads) and layer 1 alone (4 heads).
    QCOMPARE(lines.size(), 1 + 3 * (8 + 4));
    int exactLines = 0;
    for (const QByteArray& line : lines.mid(1)) {
        const QList<QByteArray> fields = line.split(',');
        QCOMPARE(fields.size(), 9);
        if (fields[2] != "exact")
            continue;
        ++exactLines;
        QVERIFY(std::abs(fields[8].toDouble() - 1.0) < 1e-9);
        QVERIFY(std::abs(fields[6].toDouble() - fields[7].toDouble()) < 1e-5);
    }
    QCOMPARE(exactLines, 12);

    // The CSV's m of hedgehog is its maps' features C = 2 d_f (not 0); hedgehog-window's window
    // from --features is in its window column, and a window that holds the whole text is said
    // to make the method exact.
    const QString windowCsv = m_dir.filePath(QStringLiteral("eval/window.csv"));
    const AppRun window =
        runAttentionLab({"model-eval", "--model", kTinyLlama, "--text",
                         "In the beginning God created", "--methods", "hedgehog,hedgehog-window",
                         "--features", "2,64", "--feature-map", m_maps, "--out", windowCsv},
                        {}, kTimeout);
    QVERIFY2(window.finished && window.exitCode == 0, qPrintable(window.describe()));
    QVERIFY2(window.err.contains("hedgehog-window with w = 64 (from --features): the window holds "
                                 "every key"),
             qPrintable(window.describe()));
    QVERIFY2(!window.err.contains("w = 2, 64"), qPrintable(window.describe()));
    QFile rows(windowCsv);
    QVERIFY(rows.open(QIODevice::ReadOnly));
    const QList<QByteArray> csvLines = rows.readAll().trimmed().split('\n');
    QCOMPARE(csvLines.size(), 1 + 1 + 2);
    const QList<QByteArray> hedgehog = csvLines[1].split(',');
    QCOMPARE(hedgehog[0], QByteArray("hedgehog"));
    QVERIFY2(hedgehog[1].toInt() > 0 && hedgehog[1].toInt() % 2 == 0, csvLines[1].constData());
    QCOMPARE(hedgehog.last(), QByteArray());
    QCOMPARE(csvLines[2].split(',').last(), QByteArray("2"));
    QCOMPARE(csvLines[3].split(',').last(), QByteArray("64"));
}

void TestFitCli::badInputExitsTwoWritingNothing_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("expected");
    const QString out = QStringLiteral("OUT");
    QTest::newRow("maps of another model")
        << QStringList{"compute",  "--model",       kTinyQwen, "--text", "a b c", "--method",
                       "hedgehog", "--feature-map", "MAPS",    "--out",  out}
        << "tiny-llama-gqa-f32";
    QTest::newRow("no maps") << QStringList{"compute",  "--model",  kTinyLlama, "--text", "a b c",
                                            "--method", "hedgehog", "--out",    out}
                             << "no fitted feature maps";
    QTest::newRow("not a feature-map file")
        << QStringList{"model-eval", "--model",   kTinyLlama,    "--text",
                       "a b c",      "--methods", "hedgehog",    "--feature-map",
                       "TEXT",       "--out",     out + "/e.csv"}
        << "TEXT";
    QTest::newRow("text too short") << QStringList{"fit-features",        "--model", kTinyLlama,
                                                   "--text-file",         "SHORT",   "--out",
                                                   "DIR/maps.safetensors"}
                                    << "at least 512";
    QTest::newRow("fit diverges") << QStringList{"fit-features",
                                                 "--model",
                                                 kTinyLlama,
                                                 "--text-file",
                                                 "TEXT",
                                                 "--steps",
                                                 "40",
                                                 "--learning-rate",
                                                 "10000",
                                                 "--out",
                                                 "DIR/maps.safetensors"}
                                  << "diverged at step";
    QTest::newRow("odd feature count")
        << QStringList{"fit-features", "--model", kTinyLlama, "--text-file",         "TEXT",
                       "--features",   "7",       "--out",    "DIR/maps.safetensors"}
        << "--features";
    QTest::newRow("a ViT") << QStringList{"fit-features",        "--model", "builtin-vit",
                                          "--text-file",         "TEXT",    "--out",
                                          "DIR/maps.safetensors"}
                           << "ViT";
    // The maps and the curves in one file: the curves were written, then overwritten.
    QTest::newRow("--curves is --out") << QStringList{"fit-features",
                                                      "--model",
                                                      kTinyLlama,
                                                      "--text-file",
                                                      "TEXT",
                                                      "--steps",
                                                      "3",
                                                      "--out",
                                                      "DIR/same.safetensors",
                                                      "--curves",
                                                      "DIR/same.safetensors"}
                                       << "--out, --curves: both name";
    QTest::newRow("empty --out")
        << QStringList{"fit-features", "--model", kTinyLlama, "--text-file", "TEXT", "--out", ""}
        << "--out: expected a file name such as maps.safetensors, got an empty value";
    // A window w as long as the training windows (the tiny model's 64 positions): no key lies
    // outside it, and gamma went silently to exp(-40).
    QTest::newRow("--window past the context")
        << QStringList{"fit-features", "--model", kTinyLlama, "--text-file",         "TEXT",
                       "--window",     "64",      "--out",    "DIR/maps.safetensors"}
        << "--window: 64 is not below the 64 tokens";
    QTest::newRow("--layers all,0")
        << QStringList{"fit-features", "--model", kTinyLlama, "--text-file",         "TEXT",
                       "--layers",     "all,0",   "--out",    "DIR/maps.safetensors"}
        << "--layers: \"all,0\" mixes all with layer numbers";
}

void TestFitCli::badInputExitsTwoWritingNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, expected);
    QTemporaryDir folder;
    const QString shortText = folder.filePath(QStringLiteral("short.txt"));
    writeText(shortText, repeatedText(30));
    const QString out = folder.filePath(QStringLiteral("out"));
    for (QString& argument : arguments) {
        argument.replace(QStringLiteral("OUT"), out);
        argument.replace(QStringLiteral("DIR"), folder.path());
        if (argument == QLatin1String("MAPS"))
            argument = m_maps;
        if (argument == QLatin1String("TEXT"))
            argument = m_text;
        if (argument == QLatin1String("SHORT"))
            argument = shortText;
    }
    expected.replace(QStringLiteral("TEXT"), m_text);
    const auto before = folderSnapshot(folder.path());
    const AppRun run = runAttentionLab(arguments, {}, kTimeout);
    QVERIFY2(refusedNaming(run, expected), qPrintable(run.describe()));
    QCOMPARE(run.err.count('\n'), 1);
    QVERIFY2(changedEntries(before, folderSnapshot(folder.path())).isEmpty(),
             qPrintable(changedEntries(before, folderSnapshot(folder.path())).join(", ")));
}

QTEST_GUILESS_MAIN(TestFitCli)
#include "test_fit_cli.moc"

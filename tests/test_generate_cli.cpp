// `attention-lab generate`, run as a process: it writes tokens.json (the prompt and both
// continuations, ids and text) and steps.csv (one line per token with the columns the README
// lists, the memory as the formulas give it), and with --plot three charts that are drawn, not
// blank (a later run without --plot removes them); the same options give the same files; bad
// input (an empty prompt, more tokens than the model's context, a method without a causal or a
// recurrent form, ...) exits 2 with one line naming what is wrong and writes nothing.

#include "app_process.h"

#include <QImage>
#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace attnlab;
using namespace attnlab::test;

namespace {

constexpr int kTimeoutMs = 120'000;
// The default built-in model (resources/models/kjv-llama): 2 layers of 4 query heads over 2
// key/value heads of d = 48, 1024 positions.
constexpr double kLayers = 2, kHeads = 4, kKeyValueHeads = 2, kHeadDim = 48;
const QString kPrompt = QStringLiteral("In the beginning God created");

QByteArray readFile(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QJsonObject readJson(const QString& path)
{
    return QJsonDocument::fromJson(readFile(path)).object();
}

std::vector<int> ids(const QJsonValue& value)
{
    std::vector<int> list;
    for (const QJsonValue id : value.toObject()[QStringLiteral("ids")].toArray())
        list.push_back(id.toInt());
    return list;
}

AppRun generate(const QStringList& arguments, const QString& folder)
{
    return runAttentionLab(QStringList{"generate"} + arguments, folder, kTimeoutMs);
}

}  // namespace

class TestGenerateCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { REQUIRE_ATTENTION_LAB(); }
    void writesTokensStepsAndCharts();
    void sameOptionsGiveTheSameTokens();
    void runWithoutPlotRemovesEarlierCharts();
    void badInputExitsTwoAndWritesNothing_data();
    void badInputExitsTwoAndWritesNothing();
    void outputInTheWayIsRefusedBeforeTheWork();
    void featuresPastTheBudgetAreRefused();
    void oneTokenRecordsWhatRan();

private:
    QTemporaryDir m_dir;
};

// Property: a run writes tokens.json with the prompt's ids and both continuations of --tokens
// ids each, their text the decoded ids; steps.csv with the header of the README and a line per
// token, positions P - 1, P, ..., the cache 2 (P + k) d floats per key/value head and layer, the
// state of FAVOR+ with m = 32 (C d + C floats per query head and layer) flat, KL >= 0, times > 0;
// and with --plot three PNG charts of the size asked, each with enough ink to be a drawn chart.
void TestGenerateCli::writesTokensStepsAndCharts()
{
    const QString out = m_dir.filePath(QStringLiteral("run"));
    const AppRun run =
        generate({"--prompt", kPrompt, "--tokens", "12", "--method", "favor-positive", "--features",
                  "32", "--seed", "3", "--plot", "--out", out},
                 m_dir.path());
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.out).contains(QStringLiteral("wrote")),
             qPrintable(run.describe()));

    const QJsonObject tokens = readJson(out + QStringLiteral("/tokens.json"));
    const std::vector<int> prompt = ids(tokens[QStringLiteral("prompt")]);
    QVERIFY(!prompt.empty());
    QCOMPARE(tokens[QStringLiteral("prompt")].toObject()[QStringLiteral("text")].toString(),
             kPrompt);
    QCOMPARE(ids(tokens[QStringLiteral("exact")]).size(), std::size_t(12));
    QCOMPARE(ids(tokens[QStringLiteral("approximate")]).size(), std::size_t(12));
    QCOMPARE(tokens[QStringLiteral("exact")].toObject()[QStringLiteral("tokens")].toArray().size(),
             12);
    QCOMPARE(tokens[QStringLiteral("method")].toObject()[QStringLiteral("name")].toString(),
             QStringLiteral("favor-positive"));
    QCOMPARE(tokens[QStringLiteral("method")].toObject()[QStringLiteral("features")].toInt(), 32);

    const QStringList lines = QString::fromUtf8(readFile(out + QStringLiteral("/steps.csv")))
                                  .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13);
    QCOMPARE(lines.front(),
             QStringLiteral("step,position,exact_ms,approx_ms,exact_attention_ms,"
                            "approx_attention_ms,kl,same_token,cache_bytes,state_bytes,"
                            "exact_token,approx_token,forced_same_token"));
    const double p = double(prompt.size());
    const std::vector<int> exact = ids(tokens[QStringLiteral("exact")]);
    for (int k = 0; k < 12; ++k) {
        const QStringList fields = lines[k + 1].split(QLatin1Char(','));
        QCOMPARE(fields.size(), 13);
        QCOMPARE(fields[0].toInt(), k);
        QCOMPARE(fields[1].toInt(), int(p) - 1 + k);
        for (int c = 2; c < 6; ++c)
            QVERIFY2(fields[c].toDouble() > 0, qPrintable(lines[k + 1]));
        QVERIFY(fields[6].toDouble() >= 0);
        QCOMPARE(fields[8].toDouble(), 4 * 2 * (p + k) * kHeadDim * kKeyValueHeads * kLayers);
        QCOMPARE(fields[9].toDouble(), 4 * (32 * kHeadDim + 32) * kHeads * kLayers);
        QCOMPARE(fields[10].toInt(), exact[std::size_t(k)]);
    }

    for (const char* name : {"kl.png", "cost.png", "memory.png"}) {
        const QImage image(out + QLatin1Char('/') + QLatin1String(name));
        QVERIFY2(!image.isNull(), name);
        QCOMPARE(image.size(), QSize(2000, 1120));
        int inked = 0;
        for (int y = 0; y < image.height(); y += 4)
            for (int x = 0; x < image.width(); x += 4)
                inked += qGray(image.pixel(x, y)) < 200;
        QVERIFY2(inked > 1000, qPrintable(QStringLiteral("%1: %2").arg(name).arg(inked)));
    }
}

// Property: the run is deterministic: W from --seed, the draws from --sample-seed; the same
// options twice give the same tokens.json.
void TestGenerateCli::sameOptionsGiveTheSameTokens()
{
    const QStringList arguments{"--prompt",      kPrompt, "--tokens", "10", "--method",      "elu",
                                "--temperature", "1.3",   "--top-k",  "40", "--sample-seed", "9"};
    QByteArray first;
    for (const char* name : {"first", "second"}) {
        const QString out = m_dir.filePath(QLatin1String(name));
        const AppRun run = generate(arguments + QStringList{"--out", out}, m_dir.path());
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
        const QByteArray tokens = readFile(out + QStringLiteral("/tokens.json"));
        QVERIFY(!tokens.isEmpty());
        if (first.isEmpty())
            first = tokens;
        else
            QCOMPARE(tokens, first);
    }
    QVERIFY(readJson(m_dir.filePath(QStringLiteral("first/tokens.json")))
                .value(QStringLiteral("sampling"))
                .toObject()
                .value(QStringLiteral("top_k"))
                .toInt() == 40);
}

// Property: a run without --plot into the folder of a run with it removes that run's charts,
// which would otherwise be read as this run's, and writes its own tokens.json and steps.csv.
void TestGenerateCli::runWithoutPlotRemovesEarlierCharts()
{
    const QString out = m_dir.filePath(QStringLiteral("replotted"));
    const QStringList arguments{"--prompt", kPrompt, "--method", "elu", "--out", out};
    AppRun run = generate(arguments + QStringList{"--tokens", "2", "--plot"}, m_dir.path());
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    for (const char* name : {"kl.png", "cost.png", "memory.png"})
        QVERIFY2(QFileInfo::exists(out + QLatin1Char('/') + QLatin1String(name)), name);

    run = generate(arguments + QStringList{"--tokens", "3"}, m_dir.path());
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    for (const char* name : {"kl.png", "cost.png", "memory.png"})
        QVERIFY2(!QFileInfo::exists(out + QLatin1Char('/') + QLatin1String(name)), name);
    QCOMPARE(ids(readJson(out + QStringLiteral("/tokens.json"))[QStringLiteral("exact")]).size(),
             std::size_t(3));
}

void TestGenerateCli::badInputExitsTwoAndWritesNothing_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("empty prompt") << QStringList{"--prompt", ""} << "--prompt";
    QTest::newRow("no prompt") << QStringList{"--tokens", "4"} << "--prompt";
    QTest::newRow("past the context")
        << QStringList{"--prompt", kPrompt, "--tokens", "1100"} << "1024 positions";
    QTest::newRow("zero tokens") << QStringList{"--prompt", kPrompt, "--tokens", "0"} << "--tokens";
    QTest::newRow("no causal form")
        << QStringList{"--prompt", kPrompt, "--method", "nystrom"} << "no causal form";
    QTest::newRow("no recurrent form")
        << QStringList{"--prompt", kPrompt, "--method", "scatterbrain"} << "no recurrent form";
    QTest::newRow("exact") << QStringList{"--prompt", kPrompt, "--method", "exact"}
                           << "--method exact";
    QTest::newRow("unknown method")
        << QStringList{"--prompt", kPrompt, "--method", "magic"} << "magic";
    QTest::newRow("layer") << QStringList{"--prompt", kPrompt, "--layers", "0,9"} << "--layers";
    QTest::newRow("greedy and sampling")
        << QStringList{"--prompt", kPrompt, "--greedy", "--temperature", "2"} << "--greedy";
    QTest::newRow("temperature") << QStringList{"--prompt", kPrompt, "--temperature", "0"}
                                 << "--temperature";
    QTest::newRow("top-k") << QStringList{"--prompt", kPrompt, "--top-k", "-1"} << "--top-k";
    QTest::newRow("a ViT") << QStringList{"--prompt", kPrompt, "--model", "builtin-vit"} << "ViT";
    QTest::newRow("features") << QStringList{"--prompt", kPrompt, "--features", "0"}
                              << "--features";
}

// Property: bad input exits 2 with one line on stderr naming what is wrong, and the --out folder
// is not even created.
void TestGenerateCli::badInputExitsTwoAndWritesNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString out = m_dir.filePath(QStringLiteral("bad-%1").arg(QTest::currentDataTag()));
    const AppRun run = generate(arguments + QStringList{"--out", out}, m_dir.path());
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QCOMPARE(run.err.count('\n'), 1);
    QVERIFY(!QFileInfo::exists(out));
}

// Property: an --out that is a file, or a folder that cannot be made, is refused before any
// token is generated, exit 2 naming --out; the file is left as it was.
void TestGenerateCli::outputInTheWayIsRefusedBeforeTheWork()
{
    const QString file = m_dir.filePath(QStringLiteral("a-file"));
    {
        QFile made(file);
        QVERIFY(made.open(QIODevice::WriteOnly));
        made.write("kept");
    }
    for (const QString& out : {file, file + QStringLiteral("/inside")}) {
        const AppRun run =
            generate({"--prompt", kPrompt, "--tokens", "2", "--out", out}, m_dir.path());
        QVERIFY2(refusedNaming(run, QStringLiteral("--out")), qPrintable(run.describe()));
        QVERIFY2(!run.err.contains("[1/2 tokens]"), qPrintable(run.describe()));
    }
    QCOMPARE(readFile(file), QByteArray("kept"));
}

// Property: an m whose random features, caches and states exceed the memory budget is refused
// before W is drawn with exit 3, saying the way around it; nothing is written.
void TestGenerateCli::featuresPastTheBudgetAreRefused()
{
    const QString out = m_dir.filePath(QStringLiteral("huge"));
    const AppRun run = generate({"--prompt", kPrompt, "--tokens", "1", "--features", "1000000",
                                 "--memory-budget", "1G", "--out", out},
                                m_dir.path());
    QVERIFY2(run.finished && run.exitCode == 3, qPrintable(run.describe()));
    QVERIFY2(run.err.contains("over the memory budget") && run.err.contains("--features"),
             qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(out));
}

// Property: tokens.json records what ran: FAVOR++ always with its fixed A (causal attention
// cannot use A*, which looks ahead); the summary of one token reads in the singular.
void TestGenerateCli::oneTokenRecordsWhatRan()
{
    const QString out = m_dir.filePath(QStringLiteral("plusplus"));
    const AppRun run =
        generate({"--prompt", kPrompt, "--tokens", "1", "--method", "favor-plusplus", "--out", out},
                 m_dir.path());
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject method =
        readJson(out + QStringLiteral("/tokens.json"))[QStringLiteral("method")].toObject();
    QCOMPARE(method[QStringLiteral("favor_fixed_a")].toInt(), 1);
    const QString summary = QString::fromUtf8(run.out);
    QVERIFY2(summary.contains(QStringLiteral(" of 1 step\n")) &&
                 !summary.contains(QStringLiteral("1 tokens")) &&
                 !summary.contains(QStringLiteral("1 steps")),
             qPrintable(run.describe()));
}

QTEST_GUILESS_MAIN(TestGenerateCli)
#include "test_generate_cli.moc"

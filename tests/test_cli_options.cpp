// The options the subcommands share, run as processes: --help-all, the options only a model
// takes when the model is the built-in default, options of one kind of input given with another,
// outputs in the way of each other or under a file, an option given twice.

#include "cli_support.h"

using namespace attnlab;
using namespace attnlab::test;

class TestCliOptions : public CliFixture {
    Q_OBJECT

private slots:
    void initTestCase() { checkFixture(); }
    void subcommandHelpAllIsHelp_data();
    void subcommandHelpAllIsHelp();
    void modelOptionsAskForTheBuiltInModel_data();
    void modelOptionsAskForTheBuiltInModel();
    void optionsOfAnotherInputAreRefused_data();
    void optionsOfAnotherInputAreRefused();
    void outUnderAFileIsRefusedNamingIt();
    void outputsNamingOneFileAreRefused();
    void computeSummaryCountsHeads();
    void repeatedOptionIsRefusedUnlessItAgrees();
    void whiteSpaceIsATextToAModel();
    void renderHoldsTheErrorScaleItIsGiven();
};

void TestCliOptions::subcommandHelpAllIsHelp_data()
{
    QTest::addColumn<QString>("subcommand");
    for (const char* subcommand : {"compute", "render", "bench", "steps", "errors", "model-eval",
                                   "generate", "fit-features"})
        QTest::newRow(subcommand) << QString::fromLatin1(subcommand);
}

// Property: `attention-lab <subcommand> --help-all` prints the same help as --help and exits 0
// (it was refused as an unknown option, or asked for --out), and neither help advertises
// --help-all as Qt's "help including Qt specific options": the subcommands take none.
void TestCliOptions::subcommandHelpAllIsHelp()
{
    QFETCH(QString, subcommand);
    const AppRun help = runApp({subcommand, "--help"});
    const AppRun all = runApp({subcommand, "--help-all"});
    QVERIFY2(all.finished && all.exitCode == 0, qPrintable(all.describe()));
    QCOMPARE(all.out, help.out);
    QVERIFY2(all.err.isEmpty(), qPrintable(all.describe()));
    QVERIFY2(help.out.contains("--help") && !help.out.contains("--help-all") &&
                 !help.out.contains("Qt specific"),
             qPrintable(help.describe()));
}

void TestCliOptions::modelOptionsAskForTheBuiltInModel_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("layer");  // -1: the example's own
    QTest::newRow("--layer 0 alone") << QStringList{"--layer", "0"} << 0;
    QTest::newRow("--keep-last alone") << QStringList{"--keep-last"} << -1;
    QTest::newRow("--text with --keep-last")
        << QStringList{"--text", "And God said", "--keep-last"} << 0;
    QTest::newRow("--text with --layer 1")
        << QStringList{"--text", "And God said", "--layer", "1"} << 1;
}

// Property: compute reads the built-in model without --model when no input option is given, so
// the options only a model takes (--layer, --keep-last) are taken there too (they were refused
// as "only for model input"), and with --text they ask for the built-in model to read the text.
void TestCliOptions::modelOptionsAskForTheBuiltInModel()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, layer);
    const QString out = m_dir.filePath(QStringLiteral("implicit_model_%1").arg(++m_folders));
    const AppRun run = compute(arguments + QStringList{"--out", out, "--no-matrices"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject input =
        readJson(out + QStringLiteral("/metrics.json"))["spec"].toObject()["input"].toObject();
    QCOMPARE(input["kind"].toString(), QStringLiteral("model"));
    if (layer >= 0)
        QCOMPARE(input["layer"].toInt(-1), layer);
}

void TestCliOptions::optionsOfAnotherInputAreRefused_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("--norm with a model")
        << QStringList{"--model", "builtin-kjv-gpt2", "--norm", "3"} << "--norm";
    QTest::newRow("--clusters with text")
        << QStringList{"--text", "hi there", "--clusters", "2"} << "--clusters";
    QTest::newRow("--tokens with random")
        << QStringList{"--random", "5", "--tokens", "characters"} << "--tokens";
    QTest::newRow("--patch with text") << QStringList{"--text", "hi", "--patch", "4"} << "--patch";
    QTest::newRow("--no-positional with random")
        << QStringList{"--random", "5", "--no-positional"} << "--no-positional";
    QTest::newRow("--layer with random")
        << QStringList{"--random", "5", "--layer", "0"} << "--layer";
    QTest::newRow("--keep-last with --heads")
        << QStringList{"--text", "hi", "--heads", "2", "--keep-last"} << "--keep-last";
}

// Property: an option of one kind of input given with another, which would have no effect (it
// was silently ignored), is refused with exit 2 naming it, and nothing is written.
void TestCliOptions::optionsOfAnotherInputAreRefused()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString out = m_dir.filePath(QStringLiteral("other_input_%1").arg(++m_folders));
    const AppRun run = compute(arguments + QStringList{"--out", out});
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QVERIFY2(isOneLine(run.err), qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(out));
}

// Property: an output folder under an existing regular file (compute's --out DIR, errors' --out
// FILE.csv) is refused with exit 2, naming the option and the file in the way (it was exit 1,
// "cannot create the directory").
void TestCliOptions::outUnderAFileIsRefusedNamingIt()
{
    const QString folder = newFolder(QStringLiteral("outunder"));
    const QString file = folder + "/results";
    writeBytes(file, "precious results\n");
    const QString inTheWay = QStringLiteral("the file %1 is in the way").arg(file);
    const AppRun run = compute({"--text", "hi", "--out", file + "/sub"});
    QVERIFY2(refusedNaming(run, QStringLiteral("--out")) &&
                 QString::fromUtf8(run.err).contains(inTheWay),
             qPrintable(run.describe()));
    const AppRun errors =
        runApp({"errors", "--text", "hi there", "--methods", "elu", "--out", file + "/x.csv"});
    QVERIFY2(refusedNaming(errors, QStringLiteral("--out")) &&
                 QString::fromUtf8(errors.err).contains(inTheWay),
             qPrintable(errors.describe()));
    QCOMPARE(entriesOf(folder), QStringList{"results"});
}

// Property: a table command's --out and --plot naming one file is refused with exit 2 naming
// both options, before anything is computed or written (the plot overwrote the CSV).
void TestCliOptions::outputsNamingOneFileAreRefused()
{
    const QString folder = newFolder(QStringLiteral("onefile"));
    const QString path = folder + "/sweep.png";
    const AppRun run =
        runApp({"errors", "--text", "hi there", "--methods", "elu", "--out", path, "--plot", path});
    QVERIFY2(refusedNaming(run, QStringLiteral("--out, --plot")), qPrintable(run.describe()));
    QVERIFY(entriesOf(folder).isEmpty());
}

// Property: compute's summary line counts its heads in words: "1 head", "2 heads" (it said
// "head(s)").
void TestCliOptions::computeSummaryCountsHeads()
{
    for (const int heads : {1, 2}) {
        const QString out = m_dir.filePath(QStringLiteral("heads_%1").arg(++m_folders));
        const AppRun run =
            compute({"--random", "6", "--heads", QString::number(heads), "--out", out});
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
        const QString counted =
            heads == 1 ? QStringLiteral(", 1 head: ") : QStringLiteral(", 2 heads: ");
        QVERIFY2(QString::fromUtf8(run.out).contains(counted), qPrintable(run.describe()));
    }
}

// Property: an option given twice with different values is refused with exit 2, naming it and
// both values, and nothing is written (the last value was taken without a word); given twice
// with the same value it runs.
void TestCliOptions::repeatedOptionIsRefusedUnlessItAgrees()
{
    const QString out = m_dir.filePath(QStringLiteral("repeated_%1").arg(++m_folders));
    const AppRun run =
        compute({"--random", "6", "--features", "8", "--features", "16", "--out", out});
    QVERIFY2(refusedNaming(run, QStringLiteral("--features")) &&
                 QString::fromUtf8(run.err).contains(QStringLiteral("\"8\", \"16\"")),
             qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(out));
    const AppRun same =
        compute({"--random", "6", "--features", "8", "--features", "8", "--out", out});
    QVERIFY2(same.finished && same.exitCode == 0, qPrintable(same.describe()));
}

// Property: a text of white space only is read by a model's tokenizer (GPT-2 has a token for
// "\n"; it was refused as empty), and refused, naming --text, where words or characters drop
// it; an empty text is refused for every input.
void TestCliOptions::whiteSpaceIsATextToAModel()
{
    const QString out = m_dir.filePath(QStringLiteral("white_%1").arg(++m_folders));
    const AppRun model = compute({"--model", "builtin-kjv-gpt2", "--text", "\n", "--out", out});
    QVERIFY2(model.finished && model.exitCode == 0, qPrintable(model.describe()));
    QVERIFY(QFileInfo::exists(out + QStringLiteral("/metrics.json")));
    const QString words = m_dir.filePath(QStringLiteral("white_%1").arg(++m_folders));
    const AppRun refused = compute({"--text", "  \n", "--out", words});
    QVERIFY2(refusedNaming(refused, QStringLiteral("--text")) &&
                 QString::fromUtf8(refused.err).contains(QStringLiteral("white space")),
             qPrintable(refused.describe()));
    const AppRun empty = compute({"--model", "builtin-kjv-gpt2", "--text", "", "--out", words});
    QVERIFY2(refusedNaming(empty, QStringLiteral("--text")), qPrintable(empty.describe()));
    QVERIFY(!QFileInfo::exists(words));
}

namespace {

// The largest number among the texts of an SVG figure (its tick labels), or -1 when it has none.
double largestNumberIn(const QString& svgPath)
{
    const QString svg = QString::fromUtf8(readBytes(svgPath));
    const QRegularExpression number(QStringLiteral(">(-?[0-9]+(\\.[0-9]+)?)</text>"));
    double largest = -1;
    for (const QRegularExpressionMatch& match : number.globalMatch(svg))
        largest = std::max(largest, match.captured(1).toDouble());
    return largest;
}

}  // namespace

// Property: render --error-scale A draws the error map on [-A, A]: at A = 7 its colour scale is
// labelled up to at least 4 (the errors of attention weights stay below 1, and so do the labels
// of a scale that follows them), and says the scale is held. A value that is not a number > 0, or
// is one past what a colour scale can hold (it kept the data's range, labelled "held"), is
// refused, naming the option, with nothing written.
void TestCliOptions::renderHoldsTheErrorScaleItIsGiven()
{
    const QStringList common{"--model",    "builtin-kjv-gpt2",
                             "--text",     "And God said, Let there be",
                             "--method",   "favor-positive",
                             "--features", "8",
                             "--format",   "svg"};
    const QString held = m_dir.filePath(QStringLiteral("held_%1").arg(++m_folders));
    const AppRun run =
        runApp(QStringList{"render"} + common + QStringList{"--error-scale", "7", "--out", held});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QString heldSvg = held + QStringLiteral("/attention_error.svg");
    QVERIFY(QString::fromUtf8(readBytes(heldSvg)).contains(QStringLiteral("scale held")));
    const double heldTop = largestNumberIn(heldSvg);
    QVERIFY2(heldTop >= 4 && heldTop <= 7, qPrintable(QString::number(heldTop)));

    const QString own = m_dir.filePath(QStringLiteral("held_%1").arg(++m_folders));
    const AppRun free = runApp(QStringList{"render"} + common + QStringList{"--out", own});
    QVERIFY2(free.finished && free.exitCode == 0, qPrintable(free.describe()));
    const QString ownSvg = own + QStringLiteral("/attention_error.svg");
    QVERIFY(!QString::fromUtf8(readBytes(ownSvg)).contains(QStringLiteral("scale held")));
    const double ownTop = largestNumberIn(ownSvg);
    QVERIFY2(ownTop > 0 && ownTop < 2, qPrintable(QString::number(ownTop)));

    for (const char* bad : {"0", "-1", "nan", "wide", "1e300", "1e-300"}) {
        const QString out = m_dir.filePath(QStringLiteral("held_%1").arg(++m_folders));
        const AppRun refused = runApp(QStringList{"render"} + common +
                                      QStringList{"--error-scale", bad, "--out", out});
        QVERIFY2(refusedNaming(refused, QStringLiteral("--error-scale")),
                 qPrintable(refused.describe()));
        QVERIFY(!QFileInfo::exists(out));
    }
}

QTEST_GUILESS_MAIN(TestCliOptions)
#include "test_cli_options.moc"

// The command line's usage and refusals, run as processes: help texts, exit statuses and
// messages for bad usage, bad files and memory, all-or-nothing writing, extreme norms, `render`,
// the headless demo and `--screenshot`.

#include "cli_support.h"

using namespace attnlab;
using namespace attnlab::test;

class TestCliUsage : public CliFixture {
    Q_OBJECT

private slots:
    void initTestCase() { checkFixture(); }

    void computeHelpListsEveryOption_data();
    void computeHelpListsEveryOption();
    void computeWithoutOptionsReadsTheLayerItsHelpNames();
    void topLevelHelpListsEverySubcommand_data();
    void topLevelHelpListsEverySubcommand();
    void topLevelHelpListsTheWindowOptions_data();
    void topLevelHelpListsTheWindowOptions();
    void withoutADisplayTheProgramDoesNotCrash_data();
    void withoutADisplayTheProgramDoesNotCrash();
    void subcommandHelpNamesTheProgramAndTheSubcommand_data();
    void subcommandHelpNamesTheProgramAndTheSubcommand();
    void badUsageExitsTwoAndWritesNothing_data();
    void badUsageExitsTwoAndWritesNothing();
    void badFileExitsTwoNamingIt_data();
    void badFileExitsTwoNamingIt();
    void textFileFromADeviceIsBounded();
    void matricesOverBudgetAreRefused();
    void noMatricesStaysWithinTheBudget();
    void noMatricesGivesTheSameMetrics();
    void outNamingAFileFailsAndKeepsIt();
    void failedRunKeepsPreviousFiles();
    void failedWriteKeepsPreviousFiles();
    void extremeNormsGiveNoSilentNaN_data();
    void extremeNormsGiveNoSilentNaN();
    void renderWritesEveryFigureInEveryFormat();
    void renderDrawsImageOverlayAndQueryRow();
    void renderRefusesBadArguments_data();
    void renderRefusesBadArguments();
    void theHeadlessDemoWritesArraysAndFigures();
    void screenshotSavesTheWindow();
    void screenshotOfABadSessionExitsTwo();
    void aHugeRunIsAnnouncedBeforeItStarts();
    void progressIsReportedOnlyWhenAsked();
};

// Property: `compute --help` exits 0 and shows every option under the name the error messages
// and the documentation use, "--name" ("-q", "-k", "-v", "-d": Qt writes one-letter names with
// one dash, beside their long aliases).
void TestCliUsage::computeHelpListsEveryOption_data()
{
    QTest::addColumn<QString>("name");
    for (const char* name : {"text",
                             "text-file",
                             "tokens",
                             "no-positional",
                             "image",
                             "patch",
                             "image-size",
                             "random",
                             "norm",
                             "clusters",
                             "q",
                             "k",
                             "v",
                             "d",
                             "heads",
                             "input-projection",
                             "input-seed",
                             "norm-multiplier",
                             "method",
                             "features",
                             "projection",
                             "row-norm",
                             "seed",
                             "scale",
                             "causal",
                             "chunk",
                             "relu-epsilon",
                             "elu-on-scaled",
                             "precision",
                             "threads",
                             "out",
                             "no-matrices",
                             "no-features",
                             "progress",
                             "memory-budget",
                             "help"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestCliUsage::computeHelpListsEveryOption()
{
    QFETCH(QString, name);
    const AppRun run = compute({"--help"});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QCOMPARE(run.exitCode, 0);
    const QString help = QString::fromUtf8(run.out);
    const QString dashes = name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--");
    const QRegularExpression option(
        QStringLiteral("(?<![\\w-])%1%2(?![\\w-])").arg(dashes, QRegularExpression::escape(name)));
    QVERIFY2(option.match(help).hasMatch(),
             qPrintable(QStringLiteral("%1%2 is not in the help:\n%3").arg(dashes, name, help)));
}

// Property: `attention-lab --help` exits 0 and lists the compute command.
// Property: `compute` with no input option reads the built-in example at the layer its --layer
// help names for that case (the help said "default 0" while the example read layer 1).
void TestCliUsage::computeWithoutOptionsReadsTheLayerItsHelpNames()
{
    const AppRun help = compute({"--help"});
    QVERIFY2(help.finished && help.exitCode == 0, qPrintable(help.describe()));
    const QRegularExpressionMatch named =
        QRegularExpression(QStringLiteral("example's\\s+layer\\s+(\\d+)"))
            .match(QString::fromUtf8(help.out));
    QVERIFY2(named.hasMatch(), qPrintable(help.describe()));
    const QString out = m_dir.filePath(QStringLiteral("no-options"));
    const AppRun run = compute({"--out", out, "--no-matrices"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject input =
        readJson(out + QStringLiteral("/metrics.json"))["spec"].toObject()["input"].toObject();
    QCOMPARE(input["kind"].toString(), QStringLiteral("model"));
    QCOMPARE(input["layer"].toInt(-1), named.captured(1).toInt());
}

// The subcommands, as the usage lists them.
const char* const kSubcommands[] = {"compute", "render",     "bench",    "steps",
                                    "errors",  "model-eval", "generate", "fit-features"};

namespace {

// One row per subcommand, in the column "subcommand".
void addSubcommandRows()
{
    QTest::addColumn<QString>("subcommand");
    for (const char* subcommand : kSubcommands)
        QTest::newRow(subcommand) << QString::fromLatin1(subcommand);
}

}  // namespace

void TestCliUsage::topLevelHelpListsEverySubcommand_data()
{
    addSubcommandRows();
}

// Property: `--help` lists every subcommand, each at the start of a line of the Commands list.
void TestCliUsage::topLevelHelpListsEverySubcommand()
{
    QFETCH(QString, subcommand);
    const AppRun run = runApp({"--help"});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(QRegularExpression(QStringLiteral("(^|\\n)  %1\\s").arg(subcommand))
                 .match(QString::fromUtf8(run.out))
                 .hasMatch(),
             qPrintable(run.describe()));
}

// Property: `--help` lists the window's own options, which the README shows, under the names the
// window's parser takes.
void TestCliUsage::topLevelHelpListsTheWindowOptions_data()
{
    QTest::addColumn<QString>("name");
    for (const char* name :
         {"session", "scenario", "presentation", "theme", "screenshot", "size", "version"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestCliUsage::topLevelHelpListsTheWindowOptions()
{
    QFETCH(QString, name);
    const AppRun run = runApp({"--help"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.out).contains(QStringLiteral("--") + name),
             qPrintable(run.describe()));
}

// Property: with no display (no DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM) nothing aborts in
// Qt's platform plugin: --version prints the version, an unknown option (with the usage), a bad
// value or a word that is neither a command nor a session file (with the usage) exits 2, and the
// window itself is refused with exit 1 and the reason.
void TestCliUsage::withoutADisplayTheProgramDoesNotCrash_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("expected");  // in stdout for exit 0, in stderr otherwise
    QTest::newRow("--version") << QStringList{"--version"} << 0 << QStringLiteral(ATTNLAB_VERSION);
    QTest::newRow("-v") << QStringList{"-v"} << 0 << QStringLiteral(ATTNLAB_VERSION);
    QTest::newRow("--help") << QStringList{"--help"} << 0 << QStringLiteral("--scenario");
    QTest::newRow("--foo") << QStringList{"--foo"} << 2 << QStringLiteral("foo");
    QTest::newRow("--foo usage") << QStringList{"--foo"} << 2 << QStringLiteral("Usage:");
    QTest::newRow("the window") << QStringList{} << 1 << QStringLiteral("no display");
    QTest::newRow("a session") << QStringList{"some.attnlab"} << 1 << QStringLiteral("DISPLAY");
    QTest::newRow("a bad --size") << QStringList{"--size", "big"} << 2 << QStringLiteral("--size");
    QTest::newRow("a mistyped command")
        << QStringList{"benhc"} << 2 << QStringLiteral("\"benhc\" is not a command");
    QTest::newRow("help") << QStringList{"help"} << 2 << QStringLiteral("Commands:");
}

void TestCliUsage::withoutADisplayTheProgramDoesNotCrash()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, expected);
    const AppRun run = runAttentionLab(arguments, QString(), 60000, {}, AppDisplay::None);
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QCOMPARE(run.exitCode, exitCode);
    QVERIFY2(QString::fromUtf8(exitCode == 0 ? run.out : run.err).contains(expected),
             qPrintable(run.describe()));
}

void TestCliUsage::subcommandHelpNamesTheProgramAndTheSubcommand_data()
{
    addSubcommandRows();
}

// Property: `attention-lab <subcommand> --help` exits 0 and its usage line names the program as
// people type it, and the subcommand: "Usage: attention-lab <subcommand> [options]".
void TestCliUsage::subcommandHelpNamesTheProgramAndTheSubcommand()
{
    QFETCH(QString, subcommand);
    const AppRun run = runApp({subcommand, "--help"});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QCOMPARE(run.exitCode, 0);
    const QString usage = QString::fromUtf8(run.out).section(QLatin1Char('\n'), 0, 0);
    const QString expected = QStringLiteral("Usage: attention-lab %1 [options]").arg(subcommand);
    QVERIFY2(usage.startsWith(expected), qPrintable(usage));
}

// ---------------------------------------------------------------------------------------------
// Bad usage and bad files

// Property: bad usage exits 2 with exactly one line on stderr naming the argument at fault; the
// --out folder is not created and nothing is written anywhere (the working folder stays empty).
// {Q} and {K} stand for valid .npy files, so only the option at fault is wrong.
void TestCliUsage::badUsageExitsTwoAndWritesNothing_data()
{
    // "--out {OUT}" is appended unless the arguments hold "{OUT}" or "no-out".
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("features 0") << QStringList{"--features", "0"} << "--features";
    QTest::newRow("features abc") << QStringList{"--features", "abc"} << "--features";
    QTest::newRow("features 2.5") << QStringList{"--features", "2.5"} << "--features";
    QTest::newRow("method nope") << QStringList{"--method", "nope"} << "--method";
    QTest::newRow("projection nope") << QStringList{"--projection", "nope"} << "--projection";
    QTest::newRow("row-norm nope") << QStringList{"--row-norm", "nope"} << "--row-norm";
    QTest::newRow("precision half") << QStringList{"--precision", "half"} << "--precision";
    QTest::newRow("tokens bytes") << QStringList{"--tokens", "bytes"} << "--tokens";
    QTest::newRow("input-projection nope")
        << QStringList{"--input-projection", "nope"} << "--input-projection";
    QTest::newRow("unknown option") << QStringList{"--frobnicate"} << "frobnicate";
    QTest::newRow("option without value") << QStringList{"--out", "{OUT}", "--random"} << "random";
    QTest::newRow("positional argument") << QStringList{"stray"} << "stray";
    QTest::newRow("missing --out") << QStringList{"no-out"} << "--out";
    QTest::newRow("empty --out") << QStringList{"no-out", "--out", ""} << "--out";
    QTest::newRow("--text and --random")
        << QStringList{"--text", "hi", "--random", "5"} << "--random";
    QTest::newRow("--text and --image")
        << QStringList{"--text", "hi", "--image", "x.png"} << "--image";
    QTest::newRow("--q without --k") << QStringList{"--q", "{Q}"} << "--k";
    QTest::newRow("--k without --q") << QStringList{"--k", "{K}"} << "--q";
    QTest::newRow("--v without --q") << QStringList{"--v", "{K}"} << "--v";
    QTest::newRow("--heads with --q")
        << QStringList{"--q", "{Q}", "--k", "{K}", "--heads", "2"} << "--heads";
    QTest::newRow("--d with --q") << QStringList{"--q", "{Q}", "--k", "{K}", "--d", "8"} << "--d";
    QTest::newRow("scale -1") << QStringList{"--scale", "-1"} << "--scale";
    QTest::newRow("scale 0") << QStringList{"--scale", "0"} << "--scale";
    QTest::newRow("scale nan") << QStringList{"--scale", "nan"} << "--scale";
    QTest::newRow("scale inf") << QStringList{"--scale", "inf"} << "--scale";
    QTest::newRow("threads -2") << QStringList{"--threads", "-2"} << "--threads";
    QTest::newRow("memory-budget lots")
        << QStringList{"--memory-budget", "lots"} << "--memory-budget";
    QTest::newRow("memory-budget 0") << QStringList{"--memory-budget", "0"} << "--memory-budget";
    QTest::newRow("random 0") << QStringList{"--random", "0"} << "--random";
    QTest::newRow("random huge") << QStringList{"--random", "99999999999"} << "--random";
    QTest::newRow("d 0") << QStringList{"--d", "0"} << "--d";
    QTest::newRow("heads 0") << QStringList{"--heads", "0"} << "--heads";
    QTest::newRow("norm -1") << QStringList{"--random", "5", "--norm", "-1"} << "--norm";
    QTest::newRow("norm-multiplier 0")
        << QStringList{"--norm-multiplier", "0"} << "--norm-multiplier";
    QTest::newRow("patch 0") << QStringList{"--patch", "0"} << "--patch";
    QTest::newRow("seed -1") << QStringList{"--seed", "-1"} << "--seed";
    QTest::newRow("chunk 0") << QStringList{"--chunk", "0"} << "--chunk";
    QTest::newRow("relu-epsilon -1") << QStringList{"--relu-epsilon", "-1"} << "--relu-epsilon";
}

void TestCliUsage::badUsageExitsTwoAndWritesNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString qPath = saveArray("usage_q.npy", {4, 3}, [](qint64 p) { return double(p); });
    const QString kPath = saveArray("usage_k.npy", {4, 3}, [](qint64 p) { return -double(p); });
    const QString work = newFolder(QStringLiteral("usage"));
    const QString out = work + "/out";
    QStringList args;
    for (const QString& argument : arguments) {
        if (argument != QLatin1String("no-out"))
            args.append(QString(argument)
                            .replace("{Q}", qPath)
                            .replace("{K}", kPath)
                            .replace("{OUT}", out));
    }
    if (!arguments.contains(QStringLiteral("no-out")) &&
        !arguments.contains(QStringLiteral("{OUT}")))
        args << "--out" << out;

    const AppRun run = compute(args, work);
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QVERIFY2(isOneLine(run.err), qPrintable(run.describe()));
    QVERIFY2(!QFileInfo::exists(out), qPrintable(out));
    QVERIFY2(entriesOf(work).isEmpty(), qPrintable(entriesOf(work).join(", ")));
}

// Property: an input file that cannot be used exits 2 with one line on stderr naming the file;
// nothing is written.
void TestCliUsage::badFileExitsTwoNamingIt_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("missing --q file") << "missing-q";
    QTest::newRow(".npy with bad magic") << "bad-magic";
    QTest::newRow("truncated .npy") << "truncated-npy";
    QTest::newRow(".npy with NaN") << "nan";
    QTest::newRow(".npy of 1 dimension") << "one-d";
    QTest::newRow(".npy of int32") << "int32";
    QTest::newRow("--q is a folder") << "folder-q";
    QTest::newRow("Q and K of different shapes") << "mismatch";
    QTest::newRow("V of another length") << "v-length";
    QTest::newRow("corrupt --image") << "corrupt-image";
    QTest::newRow("truncated --image") << "truncated-image";
    QTest::newRow("empty --image") << "empty-image";
    QTest::newRow("missing --image") << "missing-image";
    QTest::newRow("--image declaring 30000 x 30000") << "huge-image";
    QTest::newRow("image smaller than a patch") << "tiny-image";
    QTest::newRow("missing --text-file") << "missing-text";
    QTest::newRow("--text-file not UTF-8") << "latin1-text";
    QTest::newRow("--text-file without tokens") << "blank-text";
}

void TestCliUsage::badFileExitsTwoNamingIt()
{
    QFETCH(QString, kind);
    const QString work = newFolder(QStringLiteral("badfile"));
    const QString files = newFolder(QStringLiteral("badfile_inputs"));
    const QString out = work + "/out";
    const QString good = saveArray(QStringLiteral("good_%1.npy").arg(m_folders), {5, 3},
                                   [](qint64 p) { return std::sin(double(p)); });
    const auto npy = [&](const QString& name, const std::vector<qint64>& arrayShape,
                         double poison = 0) {
        const QString path = files + "/" + name;
        qint64 count = 1;
        for (const qint64 dim : arrayShape)
            count *= dim;
        std::vector<double> values(std::size_t(count), 0.5);
        if (poison != 0)
            values[std::size_t(count / 2)] = poison;
        saveNpy(path, values.data(), arrayShape, NpyDtype::Float64);
        return path;
    };
    QString culprit;
    QStringList args;
    if (kind == "missing-q") {
        culprit = files + "/absent.npy";
        args = {"--q", culprit, "--k", good};
    } else if (kind == "bad-magic") {
        culprit = files + "/magic.npy";
        QByteArray bytes = readBytes(good);
        bytes[1] = 'X';
        writeBytes(culprit, bytes);
        args = {"--q", culprit, "--k", good};
    } else if (kind == "truncated-npy") {
        culprit = files + "/short.npy";
        const QByteArray bytes = readBytes(good);
        writeBytes(culprit, bytes.left(bytes.size() - 12));
        args = {"--q", good, "--k", culprit};
    } else if (kind == "nan") {
        culprit = npy("nan.npy", {5, 3}, std::numeric_limits<double>::quiet_NaN());
        args = {"--q", culprit, "--k", good};
    } else if (kind == "one-d") {
        culprit = npy("flat.npy", {15});
        args = {"--q", culprit, "--k", good};
    } else if (kind == "int32") {
        culprit = QStringLiteral(ATTNLAB_TEST_DATA "/npy/int32.npy");
        args = {"--q", good, "--k", culprit};
    } else if (kind == "folder-q") {
        culprit = files;
        args = {"--q", culprit, "--k", good};
    } else if (kind == "mismatch") {
        culprit = npy("wide.npy", {5, 4});
        args = {"--q", good, "--k", culprit};
    } else if (kind == "v-length") {
        culprit = npy("values.npy", {6, 3});
        args = {"--q", good, "--k", good, "--v", culprit};
    } else if (kind == "corrupt-image") {
        culprit = files + "/noise.png";
        QByteArray bytes;
        for (int i = 0; i < 3000; ++i)
            bytes.append(char((i * 7919) >> 3));
        writeBytes(culprit, bytes);
        args = {"--image", culprit};
    } else if (kind == "truncated-image") {
        culprit = files + "/cut.png";
        const QByteArray png = pngImage(64, 64, noisePixel);
        writeBytes(culprit, png.left(png.size() / 2));
        args = {"--image", culprit};
    } else if (kind == "empty-image") {
        culprit = files + "/empty.png";
        writeBytes(culprit, QByteArray());
        args = {"--image", culprit};
    } else if (kind == "missing-image") {
        culprit = files + "/absent.png";
        args = {"--image", culprit};
    } else if (kind == "huge-image") {
        culprit = files + "/huge.png";
        writeBytes(culprit, pngDeclaring(30000, 30000));
        args = {"--image", culprit};
    } else if (kind == "tiny-image") {
        // 40 x 4 pixels scaled to 20 x 2: not one row of 16-pixel patches.
        culprit = files + "/thin.png";
        writeBytes(culprit, pngImage(40, 4, noisePixel));
        args = {"--image", culprit, "--image-size", "20", "--patch", "16"};
    } else if (kind == "missing-text") {
        culprit = files + "/absent.txt";
        args = {"--text-file", culprit};
    } else if (kind == "latin1-text") {
        culprit = files + "/latin1.txt";
        writeBytes(culprit, QByteArray("caf\xe9 cr\xe8me"));
        args = {"--text-file", culprit};
    } else if (kind == "blank-text") {
        culprit = files + "/blank.txt";
        writeBytes(culprit, QByteArray(" \n\t\r\n"));
        args = {"--text-file", culprit};
    } else {
        QFAIL("unknown kind");
    }
    const AppRun run = compute(args + QStringList{"--out", out}, work);
    QVERIFY2(refusedNaming(run, culprit),
             qPrintable(QStringLiteral("%1 not named:\n%2").arg(culprit, run.describe())));
    QVERIFY2(isOneLine(run.err), qPrintable(run.describe()));
    QVERIFY2(!QFileInfo::exists(out), qPrintable(out));
    QVERIFY(entriesOf(work).isEmpty());
}

// AddressSanitizer's build: GCC says so with __SANITIZE_ADDRESS__, clang 14 with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ADDRESS_SANITIZER
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ADDRESS_SANITIZER
#endif
#endif

// Property: --text-file reads at most its limit (256 MiB) even from a device whose size is not
// known in advance: /dev/zero (endless NUL bytes) is refused with exit 2 naming it, not read
// until memory runs out. The child runs with a 2 GiB address-space limit so that a failure of
// this property cannot take the machine's memory.
void TestCliUsage::textFileFromADeviceIsBounded()
{
#if !defined(Q_OS_UNIX)
    QSKIP("needs /dev/zero and setrlimit");
#elif defined(UNDER_ADDRESS_SANITIZER)
    QSKIP("AddressSanitizer reserves terabytes of address space: no address-space limit can apply");
#else
    if (!QFile::exists(QStringLiteral("/dev/zero")))
        QSKIP("no /dev/zero");
    const QString work = newFolder(QStringLiteral("devzero"));
    const QString out = work + "/out";
    const AppRun run = runApp({"compute", "--text-file", "/dev/zero", "--out", out}, work, [] {
        const rlim_t limit = rlim_t(2) << 30;
        const rlimit bound = {limit, limit};
        setrlimit(RLIMIT_AS, &bound);
    });
    QVERIFY2(refusedNaming(run, QStringLiteral("/dev/zero")), qPrintable(run.describe()));
    QVERIFY(entriesOf(work).isEmpty());
#endif
}

// ---------------------------------------------------------------------------------------------
// Memory

// Property: L x L matrices over --memory-budget are refused with exit 3, one line on stderr that
// names the ways around it (--no-matrices, --memory-budget), and nothing written.
void TestCliUsage::matricesOverBudgetAreRefused()
{
    const QString work = newFolder(QStringLiteral("budget"));
    const QString out = work + "/out";
    const AppRun run =
        compute({"--random", "3000", "--d", "16", "--memory-budget", "64M", "--out", out}, work);
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QVERIFY2(run.exitCode == 3, qPrintable(run.describe()));
    const QString err = QString::fromUtf8(run.err);
    QVERIFY2(
        err.contains("--no-matrices") && err.contains("--memory-budget") && err.count('\n') == 1,
        qPrintable(err));
    QVERIFY(!QFileInfo::exists(out));
    QVERIFY(entriesOf(work).isEmpty());
}

// Property: the same request with --no-matrices exits 0 within the budget and writes the outputs,
// the features, W and metrics.json, whose metrics (including those of P) are still computed, and
// no attention_*.npy or kernel_*.npy.
void TestCliUsage::noMatricesStaysWithinTheBudget()
{
    const QString out = newFolder(QStringLiteral("nomatrices"));
    const AppRun run = compute(
        {"--random", "3000", "--d", "16", "--memory-budget", "64M", "--no-matrices", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(entriesOf(out),
             (QStringList{"features_k.npy", "features_q.npy", "metrics.json", "output_approx.npy",
                          "output_exact.npy", "projection.npy"}));
    QCOMPARE(readArray(out + "/output_exact.npy").shape, shape({3000, 16}));
    const QJsonObject metrics = readJson(out + "/metrics.json").value("metrics").toObject();
    for (const QString& key : kMetricKeys)
        QVERIFY2(metrics.value(key).isDouble(), qPrintable(key));
    QVERIFY(metrics.value("rel_frobenius_attention").toDouble() > 0);
}

// Property: --no-matrices changes what is kept, not what is computed: the metrics and the
// outputs equal those of a run with the matrices.
void TestCliUsage::noMatricesGivesTheSameMetrics()
{
    const QString with = newFolder(QStringLiteral("withmatrices"));
    const QString without = newFolder(QStringLiteral("withoutmatrices"));
    const QStringList options = {"--random", "100", "--d", "16", "--causal"};
    const AppRun a = compute(options + QStringList{"--out", with});
    const AppRun b = compute(options + QStringList{"--no-matrices", "--out", without});
    QVERIFY2(a.finished && a.exitCode == 0, qPrintable(a.describe()));
    QVERIFY2(b.finished && b.exitCode == 0, qPrintable(b.describe()));
    const QJsonObject metricsA = readJson(with + "/metrics.json").value("metrics").toObject();
    const QJsonObject metricsB = readJson(without + "/metrics.json").value("metrics").toObject();
    for (const QString& key : kMetricKeys) {
        const double x = metricsA.value(key).toDouble();
        const double y = metricsB.value(key).toDouble();
        QVERIFY2(std::abs(x - y) <= 1e-12 * std::max(std::abs(x), 1e-300),
                 qPrintable(QStringLiteral("%1: %2 vs %3").arg(key).arg(x).arg(y)));
    }
    QCOMPARE(readBytes(with + "/output_approx.npy"), readBytes(without + "/output_approx.npy"));
    QCOMPARE(readBytes(with + "/output_exact.npy"), readBytes(without + "/output_exact.npy"));
}

// ---------------------------------------------------------------------------------------------
// All or nothing

// Property: --out naming an existing regular file is refused (exit 2, a message naming it and
// saying a file is in the way) and leaves the file unchanged, with no temporary file beside it.
void TestCliUsage::outNamingAFileFailsAndKeepsIt()
{
    const QString folder = newFolder(QStringLiteral("outfile"));
    const QString path = folder + "/results";
    const QByteArray content("precious results\n");
    writeBytes(path, content);
    const AppRun run = compute({"--out", path});
    QVERIFY2(refusedNaming(run, QStringLiteral("--out")), qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.err).contains(path + QStringLiteral(" is in the way")),
             qPrintable(run.describe()));
    QVERIFY(QFileInfo(path).isFile());
    QCOMPARE(readBytes(path), content);
    QCOMPARE(entriesOf(folder), QStringList{"results"});
}

// Property: a run that fails (bad --method) leaves a previous run's files in DIR byte for byte.
void TestCliUsage::failedRunKeepsPreviousFiles()
{
    const QString out = newFolder(QStringLiteral("previous"));
    const AppRun first = compute({"--out", out});
    QVERIFY2(first.finished && first.exitCode == 0, qPrintable(first.describe()));
    const std::map<QString, QByteArray> before = snapshot(out);
    QCOMPARE(int(before.size()), kAllFiles.size());
    const AppRun second = compute({"--method", "nope", "--heads", "2", "--out", out});
    QVERIFY2(second.finished && second.exitCode == 2, qPrintable(second.describe()));
    QVERIFY(snapshot(out) == before);
}

// Property: a run whose writing fails part-way (a folder is in the way of projection.npy, the
// last array written) replaces none of a previous run's files and leaves no temporary file: the
// files are written all or none. The exit status is 1 (an output that could not be written) and
// the message names the file.
void TestCliUsage::failedWriteKeepsPreviousFiles()
{
    const QString out = newFolder(QStringLiteral("blocked"));
    const AppRun first = compute({"--method", "elu", "--out", out});
    QVERIFY2(first.finished && first.exitCode == 0, qPrintable(first.describe()));
    QVERIFY(!QFile::exists(out + "/projection.npy"));
    QVERIFY(QDir(out).mkdir("projection.npy"));
    const std::map<QString, QByteArray> before = snapshot(out);

    const AppRun second = compute({"--method", "favor-positive", "--out", out});
    QVERIFY2(second.finished && !second.crashed, qPrintable(second.describe()));
    QVERIFY2(second.exitCode == 1, qPrintable(second.describe()));
    QVERIFY2(QString::fromUtf8(second.err).contains("projection.npy"),
             qPrintable(second.describe()));
    QVERIFY(snapshot(out) == before);
}

// ---------------------------------------------------------------------------------------------
// Extreme inputs

// Property: an accepted request never yields silent NaN: when queries and keys are so long that
// s q.k overflows the arithmetic, the command either refuses the input (exit 2, naming the option)
// or exits 0 with every row of P finite and summing to 1 and a finite exact output.
void TestCliUsage::extremeNormsGiveNoSilentNaN_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("option");
    QTest::newRow("norm multiplier 1e300")
        << QStringList{"--norm-multiplier", "1e300"} << "--norm-multiplier";
    QTest::newRow("random norm 1e200, double")
        << QStringList{"--random", "10", "--norm", "1e200", "--precision", "double"} << "--norm";
    QTest::newRow("random norm 1e20, float")
        << QStringList{"--random", "10", "--d", "16", "--norm", "1e20"} << "--norm";
}

void TestCliUsage::extremeNormsGiveNoSilentNaN()
{
    QFETCH(QStringList, options);
    QFETCH(QString, option);
    const QString out = newFolder(QStringLiteral("extreme"));
    const AppRun run = compute(options + QStringList{"--out", out});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    if (run.exitCode == 2) {
        QVERIFY2(QString::fromUtf8(run.err).contains(option), qPrintable(run.describe()));
        return;
    }
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    const Matrix p = sliceOf(readArray(out + "/attention_exact.npy"));
    const Matrix o = sliceOf(readArray(out + "/output_exact.npy"));
    QVERIFY2(p.allFinite(), "attention_exact.npy holds NaN or inf");
    for (Eigen::Index i = 0; i < p.rows(); ++i)
        QVERIFY(std::abs(p.row(i).sum() - 1) <= 1e-5);
    QVERIFY2(o.allFinite(), "output_exact.npy holds NaN or inf");
}

// ---------------------------------------------------------------------------------------------
// render and --screenshot

// Property: `render` writes the exact, approximate and error heatmaps in each format asked for:
// PNGs at twice --size, valid SVG (with the title as text) and PDF.
void TestCliUsage::renderWritesEveryFigureInEveryFormat()
{
    const QString out = newFolder(QStringLiteral("render"));
    const AppRun run =
        runApp({"render", "--out", out, "--format", "png,svg,pdf", "--size", "500x400"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    for (const QString name : {"attention_exact", "attention_approx", "attention_error"}) {
        const QImage png(out + "/" + name + ".png");
        QVERIFY2(!png.isNull(), qPrintable(name));
        QCOMPARE(png.size(), QSize(1000, 800));
        QSvgRenderer svg(out + "/" + name + ".svg");
        QVERIFY2(svg.isValid(), qPrintable(name));
        const QByteArray pdf = readBytes(out + "/" + name + ".pdf");
        QVERIFY(pdf.startsWith("%PDF-") && pdf.trimmed().endsWith("%%EOF"));
    }
    QVERIFY(readBytes(out + "/attention_exact.svg").contains("Exact softmax attention P"));
    // Only the figures: no staging folder is left behind.
    QCOMPARE(QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).size(), 9);
}

// Property: image input adds the overlay of the chosen patch; --query adds the row figure.
void TestCliUsage::renderDrawsImageOverlayAndQueryRow()
{
    const QString out = newFolder(QStringLiteral("render-image"));
    const QString image = m_dir.filePath(QStringLiteral("render.png"));
    writeBytes(image, pngImage(96, 64, noisePixel));
    const AppRun run = runApp({"render", "--image", image, "--out", out, "--query", "5"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    for (const QString name :
         {"attention_exact", "attention_approx", "attention_error", "query_row", "image_overlay"})
        QVERIFY2(!QImage(out + "/" + name + ".png").isNull(), qPrintable(name));
}

void TestCliUsage::renderRefusesBadArguments_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("format") << QStringList{"--format", "bmp"} << "--format";
    QTest::newRow("size") << QStringList{"--size", "big"} << "--size";
    QTest::newRow("query out of range") << QStringList{"--query", "9999"} << "--query";
    QTest::newRow("head out of range") << QStringList{"--head", "99"} << "--head";
    QTest::newRow("error kind") << QStringList{"--error", "squared"} << "--error";
    QTest::newRow("colours") << QStringList{"--colors", "jet"} << "--colors";
    QTest::newRow("exact method") << QStringList{"--method", "exact"} << "--method";
    QTest::newRow("QApplication's -style") << QStringList{"--style", "fusion"} << "'style'";
}

// Property: bad render arguments exit 2 with a message naming the option, and write nothing.
void TestCliUsage::renderRefusesBadArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString out = m_dir.filePath(QStringLiteral("render-bad-%1").arg(m_folders++));
    const AppRun run = runApp(QStringList{"render", "--out", out} + arguments);
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(out));
}

// Property: --screenshot opens the window offscreen, waits for the default example and saves the
// whole window at the size asked for.
// Property: the headless demo, which ./scripts/run runs without a display (scripts/demo), writes
// the default example's arrays and, beside them, the figures the window shows as PNG, and names
// the PNG files it wrote.
void TestCliUsage::theHeadlessDemoWritesArraysAndFigures()
{
    const QString out = newFolder(QStringLiteral("demo"));
    QProcess demo;
    demo.start(
        QStringLiteral("bash"),
        {QDir::cleanPath(QStringLiteral(ATTNLAB_TEST_DATA "/../../scripts/demo")), kApp, out});
    QVERIFY(demo.waitForFinished(120'000));
    const QString printed = QString::fromUtf8(demo.readAllStandardOutput());
    QVERIFY2(demo.exitStatus() == QProcess::NormalExit && demo.exitCode() == 0,
             qPrintable(printed + QString::fromUtf8(demo.readAllStandardError())));
    for (const QString name : {"attention_exact.npy", "attention_approx.npy", "metrics.json"})
        QVERIFY2(QFileInfo::exists(out + "/" + name), qPrintable(name));
    for (const QString name :
         {"attention_exact.png", "attention_approx.png", "attention_error.png"}) {
        QVERIFY2(!QImage(out + "/" + name).isNull(), qPrintable(name));
        QVERIFY2(printed.contains(name), qPrintable(printed));
    }
}

void TestCliUsage::screenshotSavesTheWindow()
{
    const QString path = m_dir.filePath(QStringLiteral("window.png"));
    const AppRun run = runApp({"--screenshot", path, "--size", "1400x900"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QImage image(path);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1400, 900));
}

// Property: a session that cannot be read ends the screenshot with exit 2, naming the file.
void TestCliUsage::screenshotOfABadSessionExitsTwo()
{
    const QString session = m_dir.filePath(QStringLiteral("broken.attnlab"));
    writeBytes(session, "{ not json");
    const QString path = m_dir.filePath(QStringLiteral("never.png"));
    const AppRun run = runApp({"--session", session, "--screenshot", path});
    QVERIFY2(refusedNaming(run, session), qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(path));
}

// Property: `compute --features 1048576` on the built-in example (4 heads of L = 48: a run the
// cost model expects to take about a minute and 6.6 GiB) says so on stderr, in one line with
// the expected time, memory and shape, before it computes anything: the line is there while
// stdout is still empty, and the run is then stopped.
void TestCliUsage::aHugeRunIsAnnouncedBeforeItStarts()
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    process.setProcessEnvironment(environment);
    process.start(kApp, {"compute", "--features", "1048576", "--out", m_dir.filePath("huge")});
    QVERIFY(process.waitForStarted(10000));
    QByteArray err;
    const QRegularExpression announcement(QStringLiteral(
        "attention-lab compute: this run is expected to take about [0-9.]+ s and [0-9.]+ GiB "
        "\\(m = 1048576 features for L = [0-9]+, 4 heads\\): [^\\n]*--features[^\\n]*\\n"));
    QElapsedTimer clock;
    clock.start();
    while (!announcement.match(QString::fromUtf8(err)).hasMatch() && clock.elapsed() < 30000 &&
           process.state() == QProcess::Running) {
        process.waitForReadyRead(200);
        err += process.readAllStandardError();
    }
    const QByteArray out = process.readAllStandardOutput();
    process.kill();
    process.waitForFinished(10000);
    QVERIFY2(announcement.match(QString::fromUtf8(err)).hasMatch(), err.constData());
    QVERIFY2(out.isEmpty(), out.constData());
    QVERIFY(!QFileInfo::exists(m_dir.filePath("huge/metrics.json")));
}

// Property: with stderr not a terminal (a pipe, as here) compute reports no progress unless
// --progress asks for it; with it, one line a step up to 100% and the writing. A small run is
// not announced.
void TestCliUsage::progressIsReportedOnlyWhenAsked()
{
    const QStringList arguments{"--text", "The cat sat on the mat.", "--heads", "2",
                                "--out",  m_dir.filePath("progress")};
    const AppRun quiet = compute(arguments);
    QVERIFY2(quiet.finished && quiet.exitCode == 0, qPrintable(quiet.describe()));
    QVERIFY2(!quiet.err.contains("attention-lab compute:"), qPrintable(quiet.describe()));

    const AppRun reported = compute(arguments + QStringList{"--progress"});
    QVERIFY2(reported.finished && reported.exitCode == 0, qPrintable(reported.describe()));
    const QStringList lines = QString::fromUtf8(reported.err).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines,
             QStringList({"attention-lab compute: 25% (head 1 of 2: output done)",
                          "attention-lab compute: 50% (head 1 of 2: matrices and metrics done)",
                          "attention-lab compute: 75% (head 2 of 2: output done)",
                          "attention-lab compute: 100% (head 2 of 2: matrices and metrics done)",
                          "attention-lab compute: writing the files"}));
}

QTEST_GUILESS_MAIN(TestCliUsage)
#include "test_cli_usage.moc"

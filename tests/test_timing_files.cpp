// The timing sweep's files and command line: JSON round trips of specs and results, the CSV, and
// `attention-lab bench` run as a process (its CSV, plot, session and refusals).

#include "app_process.h"
#include "timing_support.h"

using namespace attnlab;
using namespace attnlab::test;

namespace {

// Runs `attention-lab bench` with `arguments` for at most 60 s.
AppRun bench(const QStringList& arguments)
{
    return runAttentionLab(QStringList{"bench"} + arguments, QString(), 60000);
}

}  // namespace

class TestTimingFiles : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        REQUIRE_ATTENTION_LAB();
    }

    void jsonRoundTrip();
    void jsonRefusalsNameTheField_data();
    void jsonRefusalsNameTheField();
    void cliWritesCsv();
    void cliCausalAndAll();
    void cliWritesPlotAndSession();
    void cliBadArguments_data();
    void cliBadArguments();
    void cliWithoutOut();
    void cliOutInADirectoryInTheWay();

private:
    QTemporaryDir m_dir;
};

// ---------------------------------------------------------------------------------------------
// JSON

// Property: SweepSpec and SweepResult survive toJson/fromJson unchanged, NaN numbers included
// (written as null).
void TestTimingFiles::jsonRoundTrip()
{
    SweepSpec spec;
    spec.methods = {{Method::FavorTrig, true}, {Method::ExactMaterialised, false}};
    spec.lengths = {128, 4096, 65536};
    spec.headDim = 32;
    spec.features = 128;
    spec.threads = 2;
    spec.repetitions = 5;
    spec.budget = MemoryBudget(qint64(3) << 30);
    const SweepSpec specBack = SweepSpec::fromJson(spec.toJson());
    QVERIFY(specBack.methods == spec.methods);
    QVERIFY(specBack.lengths == spec.lengths);
    QCOMPARE(specBack.headDim, 32);
    QCOMPARE(specBack.features, 128);
    QCOMPARE(specBack.threads, 2);
    QCOMPARE(specBack.repetitions, 5);
    QCOMPARE(specBack.budget.bytes(), qint64(3) << 30);

    SweepResult result;
    result.spec = spec;
    result.sgemmGflops = 87.5;
    result.threads = 2;
    SweepPoint ok = point(spec.methods[0], 128, 1.5e-3);
    ok.secondsMin = 1.25e-3;
    ok.secondsMax = 2e-3;
    ok.gflops = 12.3;
    ok.peakBytes = 4096;
    result.points = {ok, point(spec.methods[1], 65536, kNaN, PointStatus::SkippedMemory),
                     point(spec.methods[0], 65536, kNaN, PointStatus::Cancelled)};
    const SweepResult back = SweepResult::fromJson(result.toJson());
    QCOMPARE(back.sgemmGflops, 87.5);
    QCOMPARE(back.threads, 2);
    QVERIFY(back.spec.lengths == spec.lengths);
    QCOMPARE(back.points.size(), result.points.size());
    for (std::size_t i = 0; i < back.points.size(); ++i) {
        const SweepPoint& a = result.points[i];
        const SweepPoint& b = back.points[i];
        QVERIFY(a.method == b.method);
        QCOMPARE(a.length, b.length);
        QCOMPARE(a.status, b.status);
        for (const auto& [x, y] : {std::pair{a.secondsMedian, b.secondsMedian},
                                   {a.secondsMin, b.secondsMin},
                                   {a.secondsMax, b.secondsMax},
                                   {a.gflops, b.gflops},
                                   {a.workingSetBytes, b.workingSetBytes},
                                   {a.peakBytes, b.peakBytes}})
            QVERIFY2(sameNumber(x, y), qPrintable(QStringLiteral("%1 vs %2").arg(x).arg(y)));
    }
    QVERIFY(result.toJson()
                .value("points")
                .toArray()
                .at(1)
                .toObject()
                .value("seconds_median")
                .isNull());
    result.sgemmGflops = kNaN;
    QVERIFY(std::isnan(SweepResult::fromJson(result.toJson()).sgemmGflops));
}

// Property: fromJson refuses a wrong type or value with InputError, and the message starts with
// the field's path.
void TestTimingFiles::jsonRefusalsNameTheField_data()
{
    QTest::addColumn<QString>("path");  // "spec.<key>" or "points.<key>" to change, or ""
    QTest::addColumn<QJsonValue>("value");
    QTest::addColumn<QString>("named");
    QTest::newRow("d text") << "spec.d" << QJsonValue("64") << "spec.d";
    QTest::newRow("d zero") << "spec.d" << QJsonValue(0) << "spec.d";
    QTest::newRow("features fraction") << "spec.features" << QJsonValue(2.5) << "spec.features";
    QTest::newRow("repetitions zero") << "spec.repetitions" << QJsonValue(0) << "spec.repetitions";
    QTest::newRow("threads negative") << "spec.threads" << QJsonValue(-1) << "spec.threads";
    QTest::newRow("lengths not array") << "spec.lengths" << QJsonValue(5) << "spec.lengths";
    QTest::newRow("lengths descending")
        << "spec.lengths" << QJsonValue(QJsonArray{256, 128}) << "spec.lengths[1]";
    QTest::newRow("length text") << "spec.lengths" << QJsonValue(QJsonArray{"x"})
                                 << "spec.lengths[0]";
    QTest::newRow("method unknown")
        << "spec.methods" << QJsonValue(QJsonArray{QJsonObject{{"algorithm", "fast"}}})
        << "spec.methods[0].algorithm";
    QTest::newRow("method causal text")
        << "spec.methods"
        << QJsonValue(QJsonArray{QJsonObject{{"algorithm", "elu"}, {"causal", "yes"}}})
        << "spec.methods[0].causal";
    QTest::newRow("budget zero") << "spec.memory_budget_bytes" << QJsonValue(0)
                                 << "spec.memory_budget_bytes";
    QTest::newRow("sgemm text") << "sgemm_gflops" << QJsonValue("fast") << "sgemm_gflops";
    QTest::newRow("status unknown") << "points.status" << QJsonValue("done") << "points[0].status";
    QTest::newRow("seconds text") << "points.seconds_median" << QJsonValue("1 ms")
                                  << "points[0].seconds_median";
    QTest::newRow("length zero") << "points.length" << QJsonValue(0) << "points[0].length";
    QTest::newRow("algorithm missing")
        << "points.algorithm" << QJsonValue(QJsonValue::Undefined) << "points[0].algorithm";
}

void TestTimingFiles::jsonRefusalsNameTheField()
{
    QFETCH(QString, path);
    QFETCH(QJsonValue, value);
    QFETCH(QString, named);
    SweepResult result;
    result.spec.methods = {kFavor};
    result.spec.lengths = {128};
    result.sgemmGflops = 50;
    result.points = {point(kFavor, 128, 1e-3)};
    QJsonObject json = result.toJson();
    const auto set = [&](QJsonObject& object, const QString& key) {
        if (value.isUndefined())
            object.remove(key);
        else
            object[key] = value;
    };
    if (path.startsWith("spec.")) {
        QJsonObject spec = json.value("spec").toObject();
        set(spec, path.mid(5));
        json["spec"] = spec;
    } else if (path.startsWith("points.")) {
        QJsonObject first = json.value("points").toArray().at(0).toObject();
        set(first, path.mid(7));
        json["points"] = QJsonArray{first};
    } else {
        set(json, path);
    }
    const QString message = thrownMessage<InputError>([&] { SweepResult::fromJson(json); });
    const auto names = [](const QString& text, const QString& field) {
        return text.startsWith(field + ' ') || text.startsWith(field + ':');
    };
    QVERIFY2(names(message, named), qPrintable(message));
    if (path.startsWith("spec.")) {
        // The spec alone names the field without the prefix.
        const QString alone =
            thrownMessage<InputError>([&] { SweepSpec::fromJson(json.value("spec").toObject()); });
        QVERIFY2(names(alone, named.mid(5)), qPrintable(alone));
    }
}

// ---------------------------------------------------------------------------------------------
// The command line

// Property: a short `bench` exits 0, writes a well-formed CSV (into a folder that did not exist),
// reports every point on stderr and a summary on stdout (the sgemm rate, a slope per method, the
// crossover against exact streaming).
void TestTimingFiles::cliWritesCsv()
{
    const QString out = m_dir.filePath("new/folder/sweep.csv");
    const AppRun run =
        bench({"--methods", "exact-streaming,favor-positive,elu", "--lengths", "64:256", "--d",
               "16", "--features", "32", "--reps", "2", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QByteArray csv = readBytes(out);
    const QString problem = csvProblem(csv, 9);
    QVERIFY2(problem.isEmpty(), qPrintable(problem + "\n" + csv));
    QVERIFY(csv.contains("\nexact-streaming,0,64,16,,"));
    QVERIFY(csv.contains("\nfavor-positive,0,256,16,32,"));
    QCOMPARE(run.err.count("(median of 2)"), 9);
    QVERIFY2(run.err.contains("favor-positive L=128: "), run.err.constData());
    QVERIFY2(run.out.contains("sgemm: "), run.out.constData());
    QVERIFY2(run.out.contains("favor-positive: slope "), run.out.constData());
    QVERIFY2(run.out.contains("than exact-streaming"), run.out.constData());
    // Nothing but the CSV in its folder: no temporary file left.
    QCOMPARE(QDir(QFileInfo(out).absolutePath()).entryList(QDir::Files | QDir::Hidden),
             QStringList{"sweep.csv"});
}

// Property: --causal makes every method causal, NAME:causal one method, duplicates are
// dropped, and "all" gives every algorithm.
void TestTimingFiles::cliCausalAndAll()
{
    const QString out = m_dir.filePath("causal.csv");
    AppRun run =
        bench({"--methods", "favor-positive,elu:causal,favor-positive:causal", "--causal",
               "--lengths", "32", "--d", "8", "--features", "8", "--reps", "1", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QByteArray csv = readBytes(out);
    QVERIFY2(csvProblem(csv, 2).isEmpty(), csv.constData());
    QVERIFY(csv.contains("\nfavor-positive,1,32,"));
    QVERIFY(csv.contains("\nelu,1,32,"));

    run = bench({"--methods", "all,elu:causal", "--lengths", "32", "--d", "8", "--features", "8",
                 "--reps", "1", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    csv = readBytes(out);
    const int algorithms = int(methodRegistry().size());
    QVERIFY2(csvProblem(csv, algorithms + 1).isEmpty(), csv.constData());
    for (const MethodInfo& info : methodRegistry())
        QVERIFY(csv.contains("\n" + info.name.toLatin1() + ",0,32,"));
    QVERIFY(csv.contains("\nelu,1,32,"));
}

// Property: --plot draws the chart in the format of its suffix, and --save-session writes a session
// that opens on the Timing page with the very points of the CSV.
void TestTimingFiles::cliWritesPlotAndSession()
{
    const QString out = m_dir.filePath("plotted/sweep.csv");
    const QString png = m_dir.filePath("plotted/sweep.png");
    const QString svg = m_dir.filePath("plotted/sweep.svg");
    const QString session = m_dir.filePath("plotted/sweep.attnlab");
    const QStringList sweep{
        "--methods", "exact-streaming,elu:causal", "--lengths", "64,128", "--d", "8", "--reps",
        "1"};
    AppRun run = bench(sweep + QStringList{"--out", out, "--plot", png, "--save-session", session});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(3200, 1400));  // 1600 x 700 at twice the resolution

    const Session opened = readSession(session);
    QCOMPARE(opened.view.value("page").toString(), QStringLiteral("timing"));
    const QJsonObject timing = opened.view.value("timing").toObject();
    QCOMPARE(timing.value("min_length").toInt(), 64);
    QCOMPARE(timing.value("max_length").toInt(), 128);
    QVERIFY(timing.value("non_causal").toBool());
    QVERIFY(timing.value("causal").toBool());
    const SweepResult result = SweepResult::fromJson(timing.value("result").toObject());
    // The CSV rows (after the sgemm line and the header) are the session's points, in order;
    // the CSV prints 6 significant digits.
    const QList<QByteArray> lines = readBytes(out).trimmed().split('\n');
    QCOMPARE(lines.size(), 2 + 4);
    QCOMPARE(result.points.size(), std::size_t(4));
    for (int i = 0; i < 4; ++i) {
        const QList<QByteArray> fields = lines[2 + i].split(',');
        const SweepPoint& point = result.points[std::size_t(i)];
        QCOMPARE(fields[2].toLongLong(), qlonglong(point.length));
        QCOMPARE(fields[1] == "1", point.method.causal);
        QVERIFY(std::abs(fields[7].toDouble() / point.secondsMedian - 1) < 1e-5);
    }

    run = bench(sweep + QStringList{"--out", out, "--plot", svg});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(readBytes(svg).contains("<svg"));
}

// Property: a bad value exits 2, before anything is measured, with one line on stderr naming
// the option, and writes no CSV.
void TestTimingFiles::cliBadArguments_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("plot suffix") << QStringList{"--plot", "chart.gif"} << "--plot";
    QTest::newRow("plot without suffix") << QStringList{"--plot", "chart"} << "--plot";
    QTest::newRow("unknown method") << QStringList{"--methods", "favor-fast"} << "--methods";
    QTest::newRow("empty method") << QStringList{"--methods", "elu,,favor-trig"} << "--methods";
    QTest::newRow("bad causal suffix") << QStringList{"--methods", "elu:acausal"} << "--methods";
    QTest::newRow("range reversed") << QStringList{"--lengths", "10:5"} << "--lengths";
    QTest::newRow("lengths text") << QStringList{"--lengths", "abc"} << "--lengths";
    QTest::newRow("length zero") << QStringList{"--lengths", "0,128"} << "--lengths";
    QTest::newRow("range of three") << QStringList{"--lengths", "1:2:3"} << "--lengths";
    QTest::newRow("reps 0") << QStringList{"--reps", "0"} << "--reps";
    QTest::newRow("d 0") << QStringList{"--d", "0"} << "--d";
    QTest::newRow("features 0") << QStringList{"--features", "0"} << "--features";
    QTest::newRow("threads -1") << QStringList{"--threads", "-1"} << "--threads";
    QTest::newRow("points per octave 0")
        << QStringList{"--points-per-octave", "0"} << "--points-per-octave";
    QTest::newRow("points per octave with a list")
        << QStringList{"--lengths", "64,128", "--points-per-octave", "2"} << "--points-per-octave";
    QTest::newRow("memory budget") << QStringList{"--memory-budget", "lots"} << "--memory-budget";
    QTest::newRow("session folder") << QStringList{"--save-session", "folder/"} << "--save-session";
}

void TestTimingFiles::cliBadArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString folder = m_dir.filePath(QStringLiteral("bad_%1").arg(QTest::currentDataTag()));
    const QString out = folder + "/sweep.csv";
    const AppRun run = bench(arguments + QStringList{"--out", out});
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QCOMPARE(QString::fromUtf8(run.err).trimmed().count('\n'), 0);
    QVERIFY(!QFile::exists(out));
}

// Property: without --out, bench exits 2 naming --out, before measuring anything.
void TestTimingFiles::cliWithoutOut()
{
    const AppRun run = bench({"--lengths", "64", "--d", "8"});
    QVERIFY2(refusedNaming(run, QStringLiteral("--out")), qPrintable(run.describe()));
}

// Property: when a directory stands where the CSV should go, bench exits 1 naming the path
// (before the sweep runs), and the directory is left alone.
void TestTimingFiles::cliOutInADirectoryInTheWay()
{
    const QString out = m_dir.filePath("taken.csv");
    QVERIFY(QDir().mkpath(out + "/inside"));
    QElapsedTimer timer;
    timer.start();
    const AppRun run = bench({"--lengths", "64", "--d", "8", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 1, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(out.toUtf8()), run.err.constData());
    QVERIFY(QFileInfo(out).isDir());
    QVERIFY(QFileInfo::exists(out + "/inside"));
    QVERIFY(timer.elapsed() < 5000);
}

QTEST_GUILESS_MAIN(TestTimingFiles)
#include "test_timing_files.moc"

// `attention-lab compute`, run as a process: the files it writes and what they hold (checked
// against the formulas of DESIGN.md, recomputed here from the inputs), its options, its exit
// statuses and messages for bad usage, bad files and memory, and its all-or-nothing writing.

#include "app_process.h"
#include "io/npy.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include <Eigen/Core>

#ifdef Q_OS_UNIX
#include <sys/resource.h>
#endif

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace attnlab {
QString defaultText();  // core/inputs/inputs.h, whose Matrix would clash with this file's
}

using namespace attnlab;
using namespace attnlab::test;

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

const QString kApp = QStringLiteral(ATTNLAB_APP);

// Every file a favor-* run writes.
const QStringList kAllFiles = {
    "attention_exact.npy", "attention_approx.npy", "kernel_exact.npy", "kernel_approx.npy",
    "output_exact.npy",    "output_approx.npy",    "features_q.npy",   "features_k.npy",
    "projection.npy",      "metrics.json"};

const QStringList kMetricKeys = {"max_abs",    "mean_abs", "rel_frobenius_attention",
                                 "rel_frobenius_output", "mean_tv", "mean_kl",
                                 "kernel_mse", "nonpositive_rows"};

// Runs attention-lab with `arguments`, in `workingDirectory` when given, for at most 60 s.
// childSetup, when given, runs in the child before the program starts (Unix only).
AppRun runApp(const QStringList& arguments, const QString& workingDirectory = QString(),
              const std::function<void()>& childSetup = {})
{
    return runAttentionLab(arguments, workingDirectory, 60000, childSetup);
}

// "compute" followed by the arguments.
AppRun compute(const QStringList& arguments, const QString& workingDirectory = QString())
{
    return runApp(QStringList{"compute"} + arguments, workingDirectory);
}

QByteArray readBytes(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QJsonObject readJson(const QString& path)
{
    return QJsonDocument::fromJson(readBytes(path)).object();
}

// The contents of every file in `directory`, by name (sub-directories as empty entries).
std::map<QString, QByteArray> snapshot(const QString& directory)
{
    std::map<QString, QByteArray> files;
    const QFileInfoList entries =
        QDir(directory).entryInfoList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
    for (const QFileInfo& entry : entries)
        files[entry.fileName()] = entry.isFile() ? readBytes(entry.filePath()) : QByteArray();
    return files;
}

QStringList entriesOf(const QString& directory)
{
    return QDir(directory).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot,
                                     QDir::Name);
}

NpyArray readArray(const QString& path)
{
    NpyReadOptions options;
    options.requireFinite = false;
    return readNpy(path, options);
}

// Slice h of a 3-D array, or the array itself when it is 2-D (h = 0).
Matrix sliceOf(const NpyArray& array, qint64 h = 0)
{
    const bool threeD = array.shape.size() == 3;
    const qint64 rows = array.shape[threeD ? 1 : 0];
    const qint64 cols = array.shape.size() >= 2 ? array.shape[threeD ? 2 : 1] : 1;
    return Eigen::Map<const Matrix>(array.values.data() + h * rows * cols, rows, cols);
}

std::vector<qint64> shape(std::initializer_list<qint64> dims)
{
    return std::vector<qint64>(dims);
}

// max over the entries of |a - b| / max(|b|, floor).
double maxRelativeError(const Matrix& a, const Matrix& b, double floor = 1e-300)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j)
            worst = std::max(worst,
                             std::abs(a(i, j) - b(i, j)) / std::max(std::abs(b(i, j)), floor));
    return worst;
}

double maxAbsError(const Matrix& a, const Matrix& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    return (a - b).cwiseAbs().maxCoeff();
}

// Row-normalises a: row i divided by its sum.
Matrix rowNormalised(const Matrix& a)
{
    Matrix p = a;
    for (Eigen::Index i = 0; i < p.rows(); ++i)
        p.row(i) /= p.row(i).sum();
    return p;
}

std::array<quint8, 3> noisePixel(int x, int y)
{
    const quint32 h = quint32(x) * 2654435761u ^ quint32(y) * 40503u;
    return {quint8(h >> 8), quint8(h >> 16), quint8(h >> 24)};
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void defaultRunWritesEveryFile();
    void textRunArraysAreConsistent();
    void fileInputFollowsTheFormulas_data();
    void fileInputFollowsTheFormulas();
    void causalMasksEntriesAboveTheDiagonal();
    void headsAddALeadingAxis();
    void doublePrecisionWritesFloat64();
    void exactMethodComparesStreamingWithMaterialised();
    void featureCountOfEveryMap_data();
    void featureCountOfEveryMap();

    void textFileInput_data();
    void textFileInput();
    void randomInput();
    void threeDimensionalFilesGiveHeads();
    void imageInput_data();
    void imageInput();

    void sameArgumentsGiveIdenticalFiles_data();
    void sameArgumentsGiveIdenticalFiles();
    void seedChangesOnlyTheProjection();

    void computeHelpListsEveryOption_data();
    void computeHelpListsEveryOption();
    void topLevelHelpListsCompute();
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

private:
    // A new empty folder inside the temporary folder.
    QString newFolder(const QString& name);
    // Saves an array f(0), f(1), ... (C order) as float64 and returns its path.
    QString saveArray(const QString& name, const std::vector<qint64>& arrayShape,
                      const std::function<double(qint64)>& f);

    QTemporaryDir m_dir;
    int m_folders = 0;
};

void TestCli::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFileInfo(kApp).isExecutable(), qPrintable(kApp));
}

QString TestCli::newFolder(const QString& name)
{
    const QString path = m_dir.filePath(QStringLiteral("%1_%2").arg(name).arg(++m_folders));
    if (!QDir().mkpath(path))
        qFatal("cannot create %s", qPrintable(path));
    return path;
}

QString TestCli::saveArray(const QString& name, const std::vector<qint64>& arrayShape,
                           const std::function<double(qint64)>& f)
{
    qint64 count = 1;
    for (const qint64 dim : arrayShape)
        count *= dim;
    std::vector<double> values(std::size_t(count), 0.0);
    for (qint64 p = 0; p < count; ++p)
        values[std::size_t(p)] = f(p);
    const QString path = m_dir.filePath(name);
    saveNpy(path, values.data(), arrayShape, NpyDtype::Float64);
    return path;
}

// ---------------------------------------------------------------------------------------------

// Property: `compute --out DIR` with the default example exits 0 and writes exactly the ten
// documented files (no temporary file left behind), creating DIR.
void TestCli::defaultRunWritesEveryFile()
{
    const QString out = m_dir.filePath(QStringLiteral("default/nested"));
    const AppRun run = compute({"--out", out});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QCOMPARE(run.exitCode, 0);
    QStringList expected = kAllFiles;
    expected.sort();
    QCOMPARE(entriesOf(out), expected);
}

// Property: the arrays of the default sentence read with random embeddings agree with each other
// and with metrics.json: float32, P and A are L x L with L the number of tokens, every row of P
// sums to 1, P_ij = A_ij / sum_j A_ij and P^_ij = A^_ij / sum_j A^_ij (1e-5), A^ = phi(Q) phi(K)^T,
// W is m x d = 64 x 64, phi(Q) is L x m, the outputs L x 64; metrics.json has every metric (equal
// to the metric recomputed from the arrays), the warnings array and the spec with its method.
void TestCli::textRunArraysAreConsistent()
{
    const QString out = newFolder(QStringLiteral("arrays"));
    const AppRun run = compute({"--text", defaultText(), "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));

    const QJsonObject json = readJson(out + "/metrics.json");
    const QJsonArray tokens = json.value("tokens").toArray();
    const qint64 L = tokens.size();
    QCOMPARE(L, qint64(18));  // "The cat sat on the mat because the mat was warm, and the cat..."
    QCOMPARE(tokens.first().toString(), QStringLiteral("The"));
    QCOMPARE(tokens.last().toString(), QStringLiteral("."));

    std::map<QString, NpyArray> arrays;
    for (const QString& name : kAllFiles) {
        if (!name.endsWith(QLatin1String(".npy")))
            continue;
        arrays[name] = readArray(out + "/" + name);
        QVERIFY2(arrays[name].dtype == NpyDtype::Float32, qPrintable(name));
        QVERIFY2(arrays[name].shape.size() == 2, qPrintable(name));
    }
    for (const char* name : {"attention_exact.npy", "attention_approx.npy", "kernel_exact.npy",
                             "kernel_approx.npy"})
        QCOMPARE(arrays[name].shape, shape({L, L}));
    QCOMPARE(arrays["output_exact.npy"].shape, shape({L, 64}));
    QCOMPARE(arrays["output_approx.npy"].shape, shape({L, 64}));
    QCOMPARE(arrays["features_q.npy"].shape, shape({L, 64}));
    QCOMPARE(arrays["features_k.npy"].shape, shape({L, 64}));
    QCOMPARE(arrays["projection.npy"].shape, shape({64, 64}));

    const Matrix p = sliceOf(arrays["attention_exact.npy"]);
    const Matrix pApprox = sliceOf(arrays["attention_approx.npy"]);
    const Matrix a = sliceOf(arrays["kernel_exact.npy"]);
    const Matrix aApprox = sliceOf(arrays["kernel_approx.npy"]);
    const Matrix fq = sliceOf(arrays["features_q.npy"]);
    const Matrix fk = sliceOf(arrays["features_k.npy"]);
    QVERIFY(p.allFinite() && a.allFinite() && aApprox.allFinite() && fq.allFinite());
    for (Eigen::Index i = 0; i < L; ++i) {
        QVERIFY2(std::abs(p.row(i).sum() - 1) <= 1e-5, qPrintable(QString::number(i)));
        QVERIFY2(std::abs(pApprox.row(i).sum() - 1) <= 1e-5, qPrintable(QString::number(i)));
    }
    QVERIFY((p.array() > 0).all());
    QVERIFY(maxAbsError(p, rowNormalised(a)) <= 1e-5);
    QVERIFY(maxAbsError(pApprox, rowNormalised(aApprox)) <= 1e-5);
    QVERIFY(maxRelativeError(fq * fk.transpose(), aApprox, 1e-3) <= 1e-4);
    // FAVOR+ positive features are positive.
    QVERIFY((fq.array() > 0).all() && (fk.array() > 0).all());

    const QJsonObject metrics = json.value("metrics").toObject();
    for (const QString& key : kMetricKeys)
        QVERIFY2(metrics.value(key).isDouble(), qPrintable(key));
    QVERIFY(json.value("warnings").isArray());
    QCOMPARE(json.value("spec").toObject().value("method").toString(),
             QStringLiteral("favor-positive"));
    QCOMPARE(json.value("scale").toDouble(), 0.125);  // 1 / sqrt(64)
    // The metrics as defined in metrics.h, from the arrays (float32, so 1e-4 relative).
    const Matrix diff = pApprox - p;
    const double tv = 0.5 * diff.cwiseAbs().sum() / double(L);
    QVERIFY(std::abs(metrics.value("max_abs").toDouble() - diff.cwiseAbs().maxCoeff()) <= 1e-6);
    QVERIFY(std::abs(metrics.value("mean_tv").toDouble() - tv) <= 1e-4 * tv);
    const double rel = diff.norm() / p.norm();
    QVERIFY(std::abs(metrics.value("rel_frobenius_attention").toDouble() - rel) <= 1e-4 * rel);
    QCOMPARE(metrics.value("nonpositive_rows").toDouble(), 0.0);
}

// Property: on Q, K, V from .npy files, in double precision with an explicit scale s, every array
// follows DESIGN.md section 2, recomputed here from the files and W: A_ij = exp(s q_i.k_j) (0
// above the diagonal when causal), P = D^-1 A, O = P V, phi(x) = m^-1/2 exp(W x' - |x'|^2 / 2)
// with x' = sqrt(s) x, A^ = phi(Q) phi(K)^T (masked), P^ = D^-1 A^, O^ = P^ V; W has orthonormal
// rows within each block of d rows; and the metrics of metrics.json are the definitions of
// metrics.h applied to these matrices.
void TestCli::fileInputFollowsTheFormulas_data()
{
    QTest::addColumn<bool>("causal");
    QTest::newRow("non-causal") << false;
    QTest::newRow("causal") << true;
}

void TestCli::fileInputFollowsTheFormulas()
{
    QFETCH(bool, causal);
    constexpr qint64 L = 7;
    constexpr qint64 d = 4;
    constexpr qint64 dv = 3;
    constexpr qint64 m = 8;
    constexpr double s = 0.3;
    const QString qPath = saveArray("formula_q.npy", {L, d},
                                    [](qint64 p) { return std::sin(1.3 * double(p) + 0.2); });
    const QString kPath = saveArray("formula_k.npy", {L, d},
                                    [](qint64 p) { return 0.8 * std::cos(0.7 * double(p)); });
    const QString vPath = saveArray("formula_v.npy", {L, dv},
                                    [](qint64 p) { return double(p % 5) - 1.5; });
    const QString out = newFolder(QStringLiteral("formula"));
    QStringList args = {"--q", qPath, "--k", kPath, "--v", vPath, "--precision", "double",
                        "--scale", "0.3", "--features", "8", "--out", out};
    if (causal)
        args << "--causal";
    const AppRun run = compute(args);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));

    const Matrix q = sliceOf(readArray(qPath));
    const Matrix k = sliceOf(readArray(kPath));
    const Matrix v = sliceOf(readArray(vPath));
    const Matrix w = sliceOf(readArray(out + "/projection.npy"));
    QCOMPARE(w.rows(), Eigen::Index(m));
    QCOMPARE(w.cols(), Eigen::Index(d));
    for (Eigen::Index block = 0; block < m; block += d) {
        const Matrix rows = w.middleRows(block, d);
        const Matrix gram = rows * rows.transpose();
        for (Eigen::Index i = 0; i < d; ++i)
            for (Eigen::Index j = 0; j < d; ++j)
                if (i != j)
                    QVERIFY(std::abs(gram(i, j)) <= 1e-12 * std::sqrt(gram(i, i) * gram(j, j)));
    }

    const auto masked = [&](Matrix a) {
        if (causal)
            for (Eigen::Index i = 0; i < a.rows(); ++i)
                for (Eigen::Index j = i + 1; j < a.cols(); ++j)
                    a(i, j) = 0;
        return a;
    };
    const auto features = [&](const Matrix& x) {
        Matrix phi(x.rows(), m);
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
            const Eigen::VectorXd xs = std::sqrt(s) * x.row(i).transpose();
            for (Eigen::Index r = 0; r < m; ++r)
                phi(i, r) =
                    std::exp(w.row(r).dot(xs) - xs.squaredNorm() / 2) / std::sqrt(double(m));
        }
        return phi;
    };
    const Matrix a = masked((s * q * k.transpose()).array().exp().matrix());
    const Matrix p = rowNormalised(a);
    const Matrix o = p * v;
    const Matrix fq = features(q);
    const Matrix fk = features(k);
    const Matrix aApprox = masked(fq * fk.transpose());
    const Matrix pApprox = rowNormalised(aApprox);
    const Matrix oApprox = pApprox * v;

    const std::map<QString, const Matrix*> expected = {
        {"kernel_exact.npy", &a},        {"attention_exact.npy", &p},
        {"output_exact.npy", &o},        {"features_q.npy", &fq},
        {"features_k.npy", &fk},         {"kernel_approx.npy", &aApprox},
        {"attention_approx.npy", &pApprox}, {"output_approx.npy", &oApprox}};
    for (const auto& [name, matrix] : expected) {
        const NpyArray array = readArray(out + "/" + name);
        QVERIFY2(array.dtype == NpyDtype::Float64, qPrintable(name));
        const Matrix actual = sliceOf(array);
        const double error = maxRelativeError(actual, *matrix, 1e-12);
        QVERIFY2(error <= 1e-9,
                 qPrintable(QStringLiteral("%1: relative error %2").arg(name).arg(error)));
    }
    if (causal) {
        const Matrix written = sliceOf(readArray(out + "/attention_approx.npy"));
        for (Eigen::Index i = 0; i < L; ++i)
            for (Eigen::Index j = i + 1; j < L; ++j)
                QCOMPARE(written(i, j), 0.0);
    }

    // Metrics over the unmasked entries.
    double maxAbs = 0, sumAbs = 0, sumKl = 0, sumKernel = 0;
    qint64 entries = 0;
    for (Eigen::Index i = 0; i < L; ++i) {
        for (Eigen::Index j = 0; j < (causal ? i + 1 : L); ++j) {
            const double e = std::abs(pApprox(i, j) - p(i, j));
            maxAbs = std::max(maxAbs, e);
            sumAbs += e;
            sumKl += p(i, j) * std::log(p(i, j) / pApprox(i, j));
            sumKernel += (aApprox(i, j) - a(i, j)) * (aApprox(i, j) - a(i, j));
            ++entries;
        }
    }
    const std::map<QString, double> metrics = {
        {"max_abs", maxAbs},
        {"mean_abs", sumAbs / double(entries)},
        {"rel_frobenius_attention", (pApprox - p).norm() / p.norm()},
        {"rel_frobenius_output", (oApprox - o).norm() / o.norm()},
        {"mean_tv", 0.5 * sumAbs / double(L)},
        {"mean_kl", sumKl / double(L)},
        {"kernel_mse", sumKernel / double(entries)},
        {"nonpositive_rows", 0.0}};
    const QJsonObject json = readJson(out + "/metrics.json");
    QCOMPARE(json.value("scale").toDouble(), s);
    const QJsonObject written = json.value("metrics").toObject();
    for (const auto& [key, value] : metrics) {
        const double actual = written.value(key).toDouble(std::numeric_limits<double>::quiet_NaN());
        QVERIFY2(std::abs(actual - value) <= 1e-9 * std::max(std::abs(value), 1e-6),
                 qPrintable(QStringLiteral("%1 is %2, expected %3")
                                .arg(key)
                                .arg(actual)
                                .arg(value)));
    }
}

// Property: with --causal every entry above the diagonal of P and P^ (and of A and A^) is exactly
// 0, the diagonal is positive, and the rows still sum to 1.
void TestCli::causalMasksEntriesAboveTheDiagonal()
{
    const QString out = newFolder(QStringLiteral("causal"));
    const AppRun run = compute({"--text", defaultText(), "--causal", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    for (const char* name :
         {"attention_exact.npy", "attention_approx.npy", "kernel_exact.npy", "kernel_approx.npy"}) {
        const Matrix m = sliceOf(readArray(out + "/" + name));
        QCOMPARE(m.rows(), Eigen::Index(18));
        for (Eigen::Index i = 0; i < m.rows(); ++i) {
            QVERIFY2(m(i, i) > 0, qPrintable(QStringLiteral("%1 (%2, %2)").arg(name).arg(i)));
            for (Eigen::Index j = i + 1; j < m.cols(); ++j)
                QVERIFY2(m(i, j) == 0.0, qPrintable(QStringLiteral("%1 (%2, %3) = %4")
                                                        .arg(name)
                                                        .arg(i)
                                                        .arg(j)
                                                        .arg(m(i, j))));
            if (QByteArray(name).startsWith("attention"))
                QVERIFY(std::abs(m.row(i).sum() - 1) <= 1e-5);
        }
    }
    QCOMPARE(readJson(out + "/metrics.json").value("spec").toObject().value("causal").toBool(),
             true);
}

// Property: --heads 3 gives every array a leading head axis of 3: (3, L, L), (3, L, m),
// (3, L, d), W (3, m, d); each head has its own attention and its own W.
void TestCli::headsAddALeadingAxis()
{
    const QString out = newFolder(QStringLiteral("heads"));
    const AppRun run = compute({"--heads", "3", "--d", "16", "--features", "24", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const qint64 L = 18;
    const std::map<QString, std::vector<qint64>> shapes = {
        {"attention_exact.npy", {3, L, L}}, {"attention_approx.npy", {3, L, L}},
        {"kernel_exact.npy", {3, L, L}},    {"kernel_approx.npy", {3, L, L}},
        {"output_exact.npy", {3, L, 16}},   {"output_approx.npy", {3, L, 16}},
        {"features_q.npy", {3, L, 24}},     {"features_k.npy", {3, L, 24}},
        {"projection.npy", {3, 24, 16}}};
    for (const auto& [name, expected] : shapes)
        QVERIFY2(readArray(out + "/" + name).shape == expected, qPrintable(name));
    const NpyArray p = readArray(out + "/attention_exact.npy");
    const NpyArray w = readArray(out + "/projection.npy");
    for (qint64 h = 0; h < 3; ++h) {
        for (Eigen::Index i = 0; i < L; ++i)
            QVERIFY(std::abs(sliceOf(p, h).row(i).sum() - 1) <= 1e-5);
        for (qint64 g = h + 1; g < 3; ++g) {
            QVERIFY(maxAbsError(sliceOf(p, h), sliceOf(p, g)) > 1e-3);
            QVERIFY(maxAbsError(sliceOf(w, h), sliceOf(w, g)) > 1e-3);
        }
    }
    QCOMPARE(readJson(out + "/metrics.json").value("per_head").toArray().size(), 3);
}

// Property: --precision double writes every array as float64 ('<f8').
void TestCli::doublePrecisionWritesFloat64()
{
    const QString out = newFolder(QStringLiteral("double"));
    const AppRun run = compute({"--precision", "double", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    for (const QString& name : kAllFiles) {
        if (name.endsWith(QLatin1String(".npy")))
            QVERIFY2(readArray(out + "/" + name).dtype == NpyDtype::Float64, qPrintable(name));
    }
}

// Property: --method exact exits 0, writes the streaming output as output_approx, equal to the
// materialised output_exact within 1e-5 relative (Frobenius), and writes no approximate
// matrices, features or projection.
void TestCli::exactMethodComparesStreamingWithMaterialised()
{
    const QString out = newFolder(QStringLiteral("exact"));
    const AppRun run = compute({"--method", "exact", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const Matrix o = sliceOf(readArray(out + "/output_exact.npy"));
    const Matrix streamed = sliceOf(readArray(out + "/output_approx.npy"));
    QCOMPARE(streamed.rows(), o.rows());
    QCOMPARE(streamed.cols(), o.cols());
    QVERIFY((streamed - o).norm() <= 1e-5 * o.norm());
    for (const char* name : {"attention_approx.npy", "kernel_approx.npy", "features_q.npy",
                             "features_k.npy", "projection.npy"})
        QVERIFY2(!QFile::exists(out + "/" + name), name);
    QVERIFY(QFile::exists(out + "/attention_exact.npy"));
    QVERIFY(QFile::exists(out + "/metrics.json"));
    const QJsonObject json = readJson(out + "/metrics.json");
    QCOMPARE(json.value("spec").toObject().value("method").toString(), QStringLiteral("exact"));
    QVERIFY(json.value("metrics").toObject().value("rel_frobenius_output").toDouble(1) <= 1e-5);
}

// Property: every feature map runs and phi(Q), phi(K) have the documented number of columns for
// d = 8, m = 16: m (positive, ReLU), 2m (hyperbolic, trigonometric), d (elu+1),
// 1 + d + d (d + 1) / 2 = 45 (Taylor2). The maps that draw W write it (m x d); the others do not.
void TestCli::featureCountOfEveryMap_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<qint64>("columns");
    QTest::addColumn<bool>("drawsProjection");
    QTest::newRow("favor-positive") << "favor-positive" << qint64(16) << true;
    QTest::newRow("favor-hyperbolic") << "favor-hyperbolic" << qint64(32) << true;
    QTest::newRow("favor-trig") << "favor-trig" << qint64(32) << true;
    QTest::newRow("favor-relu") << "favor-relu" << qint64(16) << true;
    QTest::newRow("elu") << "elu" << qint64(8) << false;
    QTest::newRow("taylor2") << "taylor2" << qint64(1 + 8 + 8 * 9 / 2) << false;
}

void TestCli::featureCountOfEveryMap()
{
    QFETCH(QString, method);
    QFETCH(qint64, columns);
    QFETCH(bool, drawsProjection);
    const QString out = newFolder(method);
    const AppRun run = compute({"--method", method, "--d", "8", "--features", "16", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(readArray(out + "/features_q.npy").shape, shape({18, columns}));
    QCOMPARE(readArray(out + "/features_k.npy").shape, shape({18, columns}));
    QCOMPARE(QFile::exists(out + "/projection.npy"), drawsProjection);
    if (drawsProjection)
        QCOMPARE(readArray(out + "/projection.npy").shape, shape({16, 8}));
    const QJsonObject json = readJson(out + "/metrics.json");
    QCOMPARE(json.value("spec").toObject().value("method").toString(), method);
    QCOMPARE(json.value("features").toDouble(), double(columns));
    const Matrix p = sliceOf(readArray(out + "/attention_approx.npy"));
    for (Eigen::Index i = 0; i < p.rows(); ++i)
        QVERIFY(std::abs(p.row(i).sum() - 1) <= 1e-4);
}

// ---------------------------------------------------------------------------------------------
// Inputs

// Property: --text-file reads UTF-8 (accents, CJK, emoji), skips a byte-order mark, treats CRLF
// line ends as white space, and the tokens of metrics.json are those of the text.
void TestCli::textFileInput_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("tokens");
    QTest::newRow("accents") << QStringLiteral(u"Na\u00efve caf\u00e9, se\u00f1or.\n").toUtf8()
                             << QStringList{QStringLiteral(u"Na\u00efve"),
                                            QStringLiteral(u"caf\u00e9"), ",",
                                            QStringLiteral(u"se\u00f1or"), "."};
    QTest::newRow("CJK and emoji")
        << QStringLiteral(u"\u65e5\u672c \U0001F355!").toUtf8()
        << QStringList{QStringLiteral(u"\u65e5"), QStringLiteral(u"\u672c"),
                       QStringLiteral(u"\U0001F355"), "!"};
    QTest::newRow("byte-order mark and CRLF")
        << QByteArray("\xEF\xBB\xBFone\r\ntwo\r\n") << QStringList{"one", "two"};
}

void TestCli::textFileInput()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, tokens);
    const QString folder = newFolder(QStringLiteral("textfile"));
    const QString path = folder + QStringLiteral(u"/t\u00e9xt.txt");
    writeBytes(path, bytes);
    const QString out = folder + "/out";
    const AppRun run = compute({"--text-file", path, "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject json = readJson(out + "/metrics.json");
    QStringList written;
    for (const QJsonValue& token : json.value("tokens").toArray())
        written.append(token.toString());
    QCOMPARE(written, tokens);
    const qint64 L = tokens.size();
    QCOMPARE(readArray(out + "/attention_exact.npy").shape, shape({L, L}));
}

// Property: --random 50 --d 16 --norm 2 gives L = 50 positions labelled 0..49, d = 16, and
// |q_i| = |k_j| = 2 at s = 1/4 bounds every s q_i.k_j to [-1, 1], so every entry of A lies in
// [1/e, e].
void TestCli::randomInput()
{
    const QString out = newFolder(QStringLiteral("random"));
    const AppRun run = compute({"--random", "50", "--d", "16", "--norm", "2", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject json = readJson(out + "/metrics.json");
    const QJsonArray tokens = json.value("tokens").toArray();
    QCOMPARE(tokens.size(), 50);
    QCOMPARE(tokens.at(49).toString(), QStringLiteral("49"));
    QCOMPARE(json.value("scale").toDouble(), 0.25);
    QCOMPARE(json.value("spec").toObject().value("input").toObject().value("row_norm").toDouble(),
             2.0);
    const Matrix a = sliceOf(readArray(out + "/kernel_exact.npy"));
    QCOMPARE(a.rows(), Eigen::Index(50));
    QVERIFY(a.minCoeff() >= std::exp(-1.0) * (1 - 1e-5));
    QVERIFY(a.maxCoeff() <= std::exp(1.0) * (1 + 1e-5));
    QCOMPARE(readArray(out + "/projection.npy").shape, shape({64, 16}));
    QCOMPARE(readArray(out + "/output_exact.npy").shape, shape({50, 16}));
}

// Property: 3-D .npy files (H x L x d) give H heads, each with the attention of its own slice
// (recomputed here: P = softmax(s Q_h K_h^T), V = K without --v).
void TestCli::threeDimensionalFilesGiveHeads()
{
    const QString qPath = saveArray("heads_q.npy", {2, 5, 3},
                                    [](qint64 p) { return std::sin(0.9 * double(p)); });
    const QString kPath = saveArray("heads_k.npy", {2, 5, 3},
                                    [](qint64 p) { return std::cos(1.7 * double(p)); });
    const QString out = newFolder(QStringLiteral("files3d"));
    const AppRun run = compute({"--q", qPath, "--k", kPath, "--precision", "double", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const NpyArray q = readArray(qPath);
    const NpyArray k = readArray(kPath);
    const NpyArray p = readArray(out + "/attention_exact.npy");
    const NpyArray o = readArray(out + "/output_exact.npy");
    QCOMPARE(p.shape, shape({2, 5, 5}));
    QCOMPARE(o.shape, shape({2, 5, 3}));
    const double s = 1 / std::sqrt(3.0);
    for (qint64 h = 0; h < 2; ++h) {
        const Matrix expected =
            rowNormalised((s * sliceOf(q, h) * sliceOf(k, h).transpose()).array().exp().matrix());
        QVERIFY(maxAbsError(sliceOf(p, h), expected) <= 1e-12);
        QVERIFY(maxAbsError(sliceOf(o, h), expected * sliceOf(k, h)) <= 1e-12);
    }
}

// Property: --image splits a PNG into a patch grid: a 64 x 48 image at --image-size 64 with
// 16-pixel patches is 3 rows x 4 columns (tokens "(0, 0)" .. "(2, 3)" in raster order); at the
// default size 224 it becomes 224 x 168 pixels, 10 x 14 patches.
void TestCli::imageInput_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::newRow("image size 64") << QStringList{"--image-size", "64", "--patch", "16"} << 3 << 4;
    QTest::newRow("default size") << QStringList{} << 10 << 14;
    QTest::newRow("patch 8, size 32")
        << QStringList{"--image-size", "32", "--patch", "8"} << 3 << 4;
}

void TestCli::imageInput()
{
    QFETCH(QStringList, options);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const QString folder = newFolder(QStringLiteral("image"));
    const QString path = folder + "/picture.png";
    writeBytes(path, pngImage(64, 48, noisePixel));
    const QString out = folder + "/out";
    const AppRun run = compute(QStringList{"--image", path, "--out", out} + options);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject json = readJson(out + "/metrics.json");
    QCOMPARE(json.value("patch_grid").toArray(), (QJsonArray{rows, cols}));
    const QJsonArray tokens = json.value("tokens").toArray();
    QCOMPARE(tokens.size(), rows * cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            QCOMPARE(tokens.at(r * cols + c).toString(), QStringLiteral("(%1, %2)").arg(r).arg(c));
    const qint64 L = rows * cols;
    QCOMPARE(readArray(out + "/attention_exact.npy").shape, shape({L, L}));
}

// ---------------------------------------------------------------------------------------------
// Determinism and seeds

// Property (DESIGN.md: compute is deterministic for a given spec): the same arguments give
// byte-identical .npy files, and the same metrics.json apart from the timings, whatever the
// engine threads do.
void TestCli::sameArgumentsGiveIdenticalFiles_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::newRow("default") << QStringList{};
    // Many row blocks, so that the engine threads share the work.
    QTest::newRow("random, causal, trig, 2 heads")
        << QStringList{"--random", "1000", "--d", "16", "--causal", "--method", "favor-trig",
                       "--heads", "2", "--chunk", "50"};
    QTest::newRow("double, hyperbolic, iid")
        << QStringList{"--precision", "double", "--method", "favor-hyperbolic", "--projection",
                       "iid", "--seed", "3"};
}

void TestCli::sameArgumentsGiveIdenticalFiles()
{
    QFETCH(QStringList, options);
    const QString first = newFolder(QStringLiteral("same_a"));
    const QString second = newFolder(QStringLiteral("same_b"));
    const AppRun a = compute(options + QStringList{"--out", first});
    QVERIFY2(a.finished && a.exitCode == 0, qPrintable(a.describe()));
    const AppRun b = compute(options + QStringList{"--out", second});
    QVERIFY2(b.finished && b.exitCode == 0, qPrintable(b.describe()));
    const std::map<QString, QByteArray> filesA = snapshot(first);
    const std::map<QString, QByteArray> filesB = snapshot(second);
    QCOMPARE(entriesOf(first), entriesOf(second));
    for (const auto& [name, bytes] : filesA) {
        if (name.endsWith(QLatin1String(".npy")))
            QVERIFY2(bytes == filesB.at(name), qPrintable(name));
    }
    QJsonObject jsonA = readJson(first + "/metrics.json");
    QJsonObject jsonB = readJson(second + "/metrics.json");
    jsonA.remove("seconds");
    jsonB.remove("seconds");
    QCOMPARE(jsonA, jsonB);
}

// Property: --seed draws W only: another seed gives another projection.npy and approximation,
// and the same exact attention; --input-seed changes the input, hence exact attention.
void TestCli::seedChangesOnlyTheProjection()
{
    const QString base = newFolder(QStringLiteral("seed0"));
    const QString seeded = newFolder(QStringLiteral("seed1"));
    const QString inputSeeded = newFolder(QStringLiteral("inputseed1"));
    const AppRun a = compute({"--text", defaultText(), "--out", base});
    const AppRun b = compute({"--text", defaultText(), "--seed", "1", "--out", seeded});
    const AppRun c = compute({"--text", defaultText(), "--input-seed", "1", "--out", inputSeeded});
    for (const AppRun* run : {&a, &b, &c})
        QVERIFY2(run->finished && run->exitCode == 0, qPrintable(run->describe()));
    QVERIFY(readBytes(base + "/projection.npy") != readBytes(seeded + "/projection.npy"));
    QVERIFY(readBytes(base + "/attention_approx.npy") !=
            readBytes(seeded + "/attention_approx.npy"));
    QCOMPARE(readBytes(base + "/attention_exact.npy"), readBytes(seeded + "/attention_exact.npy"));
    QCOMPARE(readBytes(base + "/projection.npy"), readBytes(inputSeeded + "/projection.npy"));
    QVERIFY(readBytes(base + "/attention_exact.npy") !=
            readBytes(inputSeeded + "/attention_exact.npy"));
}

// ---------------------------------------------------------------------------------------------
// Help

// Property: `compute --help` exits 0 and shows every option under the name the error messages
// and the documentation use, "--name" ("-q", "-k", "-v", "-d": Qt writes one-letter names with
// one dash, beside their long aliases).
void TestCli::computeHelpListsEveryOption_data()
{
    QTest::addColumn<QString>("name");
    for (const char* name :
         {"text", "text-file", "tokens", "no-positional", "image", "patch", "image-size",
          "random", "norm", "clusters", "q", "k", "v", "d", "heads", "input-projection",
          "input-seed", "norm-multiplier", "method", "features", "projection", "row-norm", "seed",
          "scale", "causal", "chunk", "relu-epsilon", "elu-on-scaled", "precision", "threads",
          "out", "no-matrices", "no-features", "memory-budget", "help"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestCli::computeHelpListsEveryOption()
{
    QFETCH(QString, name);
    const AppRun run = compute({"--help"});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QCOMPARE(run.exitCode, 0);
    const QString help = QString::fromUtf8(run.out);
    const QString dashes = name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--");
    const QRegularExpression option(QStringLiteral("(?<![\\w-])%1%2(?![\\w-])")
                                        .arg(dashes, QRegularExpression::escape(name)));
    QVERIFY2(option.match(help).hasMatch(),
             qPrintable(QStringLiteral("%1%2 is not in the help:\n%3").arg(dashes, name, help)));
}

// Property: `attention-lab --help` exits 0 and lists the compute command.
void TestCli::topLevelHelpListsCompute()
{
    const AppRun run = runApp({"--help"});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(QRegularExpression(QStringLiteral("(^|\\s)compute\\s")).match(
                 QString::fromUtf8(run.out)).hasMatch(),
             qPrintable(run.describe()));
}

void TestCli::subcommandHelpNamesTheProgramAndTheSubcommand_data()
{
    QTest::addColumn<QString>("subcommand");
    for (const char* subcommand : {"compute", "render", "bench", "steps", "errors", "model-eval"})
        QTest::newRow(subcommand) << QString::fromLatin1(subcommand);
}

// Property: `attention-lab <subcommand> --help` exits 0 and its usage line names the program as
// people type it, and the subcommand: "Usage: attention-lab <subcommand> [options]".
void TestCli::subcommandHelpNamesTheProgramAndTheSubcommand()
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
void TestCli::badUsageExitsTwoAndWritesNothing_data()
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
    QTest::newRow("option without value")
        << QStringList{"--out", "{OUT}", "--random"} << "random";
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
    QTest::newRow("memory-budget lots") << QStringList{"--memory-budget", "lots"}
                                        << "--memory-budget";
    QTest::newRow("memory-budget 0") << QStringList{"--memory-budget", "0"} << "--memory-budget";
    QTest::newRow("random 0") << QStringList{"--random", "0"} << "--random";
    QTest::newRow("random huge") << QStringList{"--random", "99999999999"} << "--random";
    QTest::newRow("d 0") << QStringList{"--d", "0"} << "--d";
    QTest::newRow("heads 0") << QStringList{"--heads", "0"} << "--heads";
    QTest::newRow("norm -1") << QStringList{"--random", "5", "--norm", "-1"} << "--norm";
    QTest::newRow("norm-multiplier 0") << QStringList{"--norm-multiplier", "0"}
                                       << "--norm-multiplier";
    QTest::newRow("patch 0") << QStringList{"--patch", "0"} << "--patch";
    QTest::newRow("seed -1") << QStringList{"--seed", "-1"} << "--seed";
    QTest::newRow("chunk 0") << QStringList{"--chunk", "0"} << "--chunk";
    QTest::newRow("relu-epsilon -1") << QStringList{"--relu-epsilon", "-1"} << "--relu-epsilon";
}

void TestCli::badUsageExitsTwoAndWritesNothing()
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
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QVERIFY2(run.exitCode == 2, qPrintable(run.describe()));
    const QString err = QString::fromUtf8(run.err);
    QVERIFY2(err.endsWith('\n') && err.count('\n') == 1, qPrintable(run.describe()));
    QVERIFY2(err.contains(named), qPrintable(run.describe()));
    QVERIFY2(!QFileInfo::exists(out), qPrintable(out));
    QVERIFY2(entriesOf(work).isEmpty(), qPrintable(entriesOf(work).join(", ")));
}

// Property: an input file that cannot be used exits 2 with one line on stderr naming the file;
// nothing is written.
void TestCli::badFileExitsTwoNamingIt_data()
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

void TestCli::badFileExitsTwoNamingIt()
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
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QVERIFY2(run.exitCode == 2, qPrintable(run.describe()));
    const QString err = QString::fromUtf8(run.err);
    QVERIFY2(err.endsWith('\n') && err.count('\n') == 1, qPrintable(run.describe()));
    QVERIFY2(err.contains(culprit), qPrintable(QStringLiteral("%1 not named:\n%2")
                                                   .arg(culprit, run.describe())));
    QVERIFY2(!QFileInfo::exists(out), qPrintable(out));
    QVERIFY(entriesOf(work).isEmpty());
}

// Property: --text-file reads at most its limit (256 MiB) even from a device whose size is not
// known in advance: /dev/zero (endless NUL bytes) is refused with exit 2 naming it, not read
// until memory runs out. The child runs with a 2 GiB address-space limit so that a failure of
// this property cannot take the machine's memory.
void TestCli::textFileFromADeviceIsBounded()
{
#if !defined(Q_OS_UNIX)
    QSKIP("needs /dev/zero and setrlimit");
#elif defined(__SANITIZE_ADDRESS__)
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
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QVERIFY2(run.exitCode == 2, qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.err).contains("/dev/zero"), qPrintable(run.describe()));
    QVERIFY(entriesOf(work).isEmpty());
#endif
}

// ---------------------------------------------------------------------------------------------
// Memory

// Property: L x L matrices over --memory-budget are refused with exit 3, one line on stderr that
// names the way around it (--no-matrices), and nothing written.
void TestCli::matricesOverBudgetAreRefused()
{
    const QString work = newFolder(QStringLiteral("budget"));
    const QString out = work + "/out";
    const AppRun run = compute(
        {"--random", "3000", "--d", "16", "--memory-budget", "64M", "--out", out}, work);
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QVERIFY2(run.exitCode == 3, qPrintable(run.describe()));
    const QString err = QString::fromUtf8(run.err);
    QVERIFY2(err.contains("--no-matrices") && err.count('\n') == 1, qPrintable(err));
    QVERIFY(!QFileInfo::exists(out));
    QVERIFY(entriesOf(work).isEmpty());
}

// Property: the same request with --no-matrices exits 0 within the budget and writes the outputs,
// the features, W and metrics.json, whose metrics (including those of P) are still computed, and
// no attention_*.npy or kernel_*.npy.
void TestCli::noMatricesStaysWithinTheBudget()
{
    const QString out = newFolder(QStringLiteral("nomatrices"));
    const AppRun run = compute({"--random", "3000", "--d", "16", "--memory-budget", "64M",
                             "--no-matrices", "--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(entriesOf(out), (QStringList{"features_k.npy", "features_q.npy", "metrics.json",
                                          "output_approx.npy", "output_exact.npy",
                                          "projection.npy"}));
    QCOMPARE(readArray(out + "/output_exact.npy").shape, shape({3000, 16}));
    const QJsonObject metrics = readJson(out + "/metrics.json").value("metrics").toObject();
    for (const QString& key : kMetricKeys)
        QVERIFY2(metrics.value(key).isDouble(), qPrintable(key));
    QVERIFY(metrics.value("rel_frobenius_attention").toDouble() > 0);
}

// Property: --no-matrices changes what is kept, not what is computed: the metrics and the
// outputs equal those of a run with the matrices.
void TestCli::noMatricesGivesTheSameMetrics()
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

// Property: --out naming an existing regular file fails (non-zero exit, a message naming it) and
// leaves the file unchanged, with no temporary file beside it.
void TestCli::outNamingAFileFailsAndKeepsIt()
{
    const QString folder = newFolder(QStringLiteral("outfile"));
    const QString path = folder + "/results";
    const QByteArray content("precious results\n");
    writeBytes(path, content);
    const AppRun run = compute({"--out", path});
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    QVERIFY2(run.exitCode != 0, qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.err).contains(path), qPrintable(run.describe()));
    QVERIFY(QFileInfo(path).isFile());
    QCOMPARE(readBytes(path), content);
    QCOMPARE(entriesOf(folder), QStringList{"results"});
}

// Property: a run that fails (bad --method) leaves a previous run's files in DIR byte for byte.
void TestCli::failedRunKeepsPreviousFiles()
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
void TestCli::failedWriteKeepsPreviousFiles()
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
void TestCli::extremeNormsGiveNoSilentNaN_data()
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

void TestCli::extremeNormsGiveNoSilentNaN()
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
void TestCli::renderWritesEveryFigureInEveryFormat()
{
    const QString out = newFolder(QStringLiteral("render"));
    const AppRun run = runApp({"render", "--out", out, "--format", "png,svg,pdf", "--size",
                            "500x400"});
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
    QCOMPARE(QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).size(),
             9);
}

// Property: image input adds the overlay of the chosen patch; --query adds the row figure.
void TestCli::renderDrawsImageOverlayAndQueryRow()
{
    const QString out = newFolder(QStringLiteral("render-image"));
    const QString image = m_dir.filePath(QStringLiteral("render.png"));
    writeBytes(image, pngImage(96, 64, noisePixel));
    const AppRun run = runApp({"render", "--image", image, "--out", out, "--query", "5"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    for (const QString name : {"attention_exact", "attention_approx", "attention_error",
                               "query_row", "image_overlay"})
        QVERIFY2(!QImage(out + "/" + name + ".png").isNull(), qPrintable(name));
}

void TestCli::renderRefusesBadArguments_data()
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
}

// Property: bad render arguments exit 2 with a message naming the option, and write nothing.
void TestCli::renderRefusesBadArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const QString out = m_dir.filePath(QStringLiteral("render-bad-%1").arg(m_folders++));
    const AppRun run = runApp(QStringList{"render", "--out", out} + arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.err).contains(named), qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(out));
}

// Property: --screenshot opens the window offscreen, waits for the default example and saves the
// whole window at the size asked for.
// Property: the headless demo, which ./scripts/run runs without a display (scripts/demo), writes
// the default example's arrays and, beside them, the figures the window shows as PNG, and names
// the PNG files it wrote.
void TestCli::theHeadlessDemoWritesArraysAndFigures()
{
    const QString out = newFolder(QStringLiteral("demo"));
    QProcess demo;
    demo.start(QStringLiteral("bash"),
               {QDir::cleanPath(QStringLiteral(ATTNLAB_TEST_DATA "/../../scripts/demo")), kApp,
                out});
    QVERIFY(demo.waitForFinished(120'000));
    const QString printed = QString::fromUtf8(demo.readAllStandardOutput());
    QVERIFY2(demo.exitStatus() == QProcess::NormalExit && demo.exitCode() == 0,
             qPrintable(printed + QString::fromUtf8(demo.readAllStandardError())));
    for (const QString name : {"attention_exact.npy", "attention_approx.npy", "metrics.json"})
        QVERIFY2(QFileInfo::exists(out + "/" + name), qPrintable(name));
    for (const QString name : {"attention_exact.png", "attention_approx.png",
                               "attention_error.png"}) {
        QVERIFY2(!QImage(out + "/" + name).isNull(), qPrintable(name));
        QVERIFY2(printed.contains(name), qPrintable(printed));
    }
}

void TestCli::screenshotSavesTheWindow()
{
    const QString path = m_dir.filePath(QStringLiteral("window.png"));
    const AppRun run = runApp({"--screenshot", path, "--size", "1400x900"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QImage image(path);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1400, 900));
}

// Property: a session that cannot be read ends the screenshot with exit 2, naming the file.
void TestCli::screenshotOfABadSessionExitsTwo()
{
    const QString session = m_dir.filePath(QStringLiteral("broken.attnlab"));
    writeBytes(session, "{ not json");
    const QString path = m_dir.filePath(QStringLiteral("never.png"));
    const AppRun run = runApp({"--session", session, "--screenshot", path});
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.err).contains(session), qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(path));
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"

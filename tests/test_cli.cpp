// `attention-lab compute`, run as a process: the files it writes and what they hold (checked
// against the formulas of docs/design.md, recomputed here from the inputs), its inputs and options,
// and runs that repeat bit for bit.

#include "cli_support.h"

using namespace attnlab;
using namespace attnlab::test;

class TestCli : public CliFixture {
    Q_OBJECT

private slots:
    void initTestCase() { checkFixture(); }

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
};

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
    for (const char* name :
         {"attention_exact.npy", "attention_approx.npy", "kernel_exact.npy", "kernel_approx.npy"})
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
// follows docs/design.md 2.2-2.5, recomputed here from the files and W: A_ij = exp(s q_i.k_j) (0
// above the diagonal when causal), P = D^-1 A, O = P V, phi(x) = m^-1/2 exp(W x' - |x'|^2 / 2)
// with x' = sqrt(s) x, A^ = phi(Q) phi(K)^T (masked), P^ = D^-1 A^, O^ = P^ V; W has orthonormal
// rows within each block of d rows; and the metrics of metrics.json are the definitions of
// metrics.h applied to these matrices.
void TestCli::fileInputFollowsTheFormulas_data()
{
    addFullAndCausalRows("non-causal");
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
    const QString vPath =
        saveArray("formula_v.npy", {L, dv}, [](qint64 p) { return double(p % 5) - 1.5; });
    const QString out = newFolder(QStringLiteral("formula"));
    QStringList args = {"--q",    qPath,     "--k", kPath,        "--v", vPath,   "--precision",
                        "double", "--scale", "0.3", "--features", "8",   "--out", out};
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

    const std::map<QString, const Matrix*> expected = {{"kernel_exact.npy", &a},
                                                       {"attention_exact.npy", &p},
                                                       {"output_exact.npy", &o},
                                                       {"features_q.npy", &fq},
                                                       {"features_k.npy", &fk},
                                                       {"kernel_approx.npy", &aApprox},
                                                       {"attention_approx.npy", &pApprox},
                                                       {"output_approx.npy", &oApprox}};
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
        QVERIFY2(
            std::abs(actual - value) <= 1e-9 * std::max(std::abs(value), 1e-6),
            qPrintable(QStringLiteral("%1 is %2, expected %3").arg(key).arg(actual).arg(value)));
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
                QVERIFY2(
                    m(i, j) == 0.0,
                    qPrintable(
                        QStringLiteral("%1 (%2, %3) = %4").arg(name).arg(i).arg(j).arg(m(i, j))));
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
    const QString qPath =
        saveArray("heads_q.npy", {2, 5, 3}, [](qint64 p) { return std::sin(0.9 * double(p)); });
    const QString kPath =
        saveArray("heads_k.npy", {2, 5, 3}, [](qint64 p) { return std::cos(1.7 * double(p)); });
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

// Property (docs/design.md 1.2: compute is deterministic for a spec): the same arguments give
// byte-identical .npy files, and the same metrics.json apart from the timings, whatever the
// engine threads do.
void TestCli::sameArgumentsGiveIdenticalFiles_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::newRow("default") << QStringList{};
    // Many row blocks, so that the engine threads share the work.
    QTest::newRow("random, causal, trig, 2 heads")
        << QStringList{"--random",   "1000",    "--d", "16",      "--causal", "--method",
                       "favor-trig", "--heads", "2",   "--chunk", "50"};
    QTest::newRow("double, hyperbolic, iid")
        << QStringList{"--precision",  "double", "--method", "favor-hyperbolic",
                       "--projection", "iid",    "--seed",   "3"};
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

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"

// Numerics at the edges (issue 8), run against the built program: very large norms and scales
// (exp overflows), tiny scales, identical keys, zero-length rows and one-token inputs, for every
// method in float and double. Property: the command refuses the request naming the option at
// fault (exit 2), or writes outputs in which no NaN or infinity appears without a warning in
// metrics.json saying why, with every row of P and P^ summing to 1 where it is finite.

#include "app_process.h"
#include "io/npy.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnlab;
using namespace attnlab::test;

namespace {

const QStringList kMethods = {
    "favor-positive", "favor-hyperbolic", "favor-trig", "favor-relu", "elu", "taylor2", "exact"};

// The largest |sum_j P_ij - 1| over the rows of an L x L (or H x L x L) attention file.
double worstRowSumError(const QString& path)
{
    NpyReadOptions options;
    options.requireFinite = false;
    const NpyArray p = readNpy(path, options);
    const qint64 length = p.shape.back();
    double worst = 0;
    for (qint64 row = 0; row * length < qint64(p.values.size()); ++row) {
        double sum = 0;
        for (qint64 j = 0; j < length; ++j)
            sum += p.values[std::size_t(row * length + j)];
        worst = std::max(worst, std::abs(sum - 1));
    }
    return worst;
}

}  // namespace

class TestEdgeNumerics : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void noSilentNonFinite_data();
    void noSilentNonFinite();

private:
    // Saves an L x d float64 array whose row i is row(i) and returns its path.
    QString saveRows(const QString& name, qint64 rows, qint64 cols,
                     const std::function<double(qint64, qint64)>& value);

    QTemporaryDir m_dir;
    int m_runs = 0;
};

void TestEdgeNumerics::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFileInfo(QStringLiteral(ATTNLAB_APP)).isExecutable(), ATTNLAB_APP);
}

QString TestEdgeNumerics::saveRows(const QString& name, qint64 rows, qint64 cols,
                                   const std::function<double(qint64, qint64)>& value)
{
    std::vector<double> values(std::size_t(rows * cols));
    for (qint64 i = 0; i < rows; ++i)
        for (qint64 j = 0; j < cols; ++j)
            values[std::size_t(i * cols + j)] = value(i, j);
    const QString path = m_dir.filePath(name);
    saveNpy(path, values.data(), {rows, cols}, NpyDtype::Float64);
    return path;
}

void TestEdgeNumerics::noSilentNonFinite_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("refusable");  // the option a refusal (exit 2) must name; "": none

    // Q = K: 6 rows that are all the same vector (identical keys and queries), and 6 keys of
    // which 5 are identical and one far from them, with small queries.
    const QString same = saveRows("same.npy", 6, 8, [](qint64, qint64 j) { return 0.3 * (j + 1); });
    const QString outlierKeys = saveRows("outlier_k.npy", 6, 8, [](qint64 i, qint64 j) {
        return i == 5 ? 40.0 * (j % 2 ? 1 : -1) : 0.5;
    });
    const QString smallQueries =
        saveRows("small_q.npy", 6, 8, [](qint64 i, qint64 j) { return 1e-3 * (i - j); });
    const QString zeros = saveRows("zeros.npy", 4, 8, [](qint64, qint64) { return 0.0; });

    struct Condition {
        const char* name;
        QStringList options;
        QString refusable;
    };
    const std::vector<Condition> conditions = {
        {"norm multiplier 30 (|x'|^2 ~ 900: exp overflows)", {"--norm-multiplier", "30"}, ""},
        {"norm multiplier 1e4", {"--norm-multiplier", "1e4"}, "--norm-multiplier"},
        {"norm multiplier 1e9", {"--norm-multiplier", "1e9"}, "--norm-multiplier"},
        {"scale 1e6", {"--random", "12", "--d", "8", "--scale", "1e6"}, "--scale"},
        {"scale 1e-300", {"--random", "12", "--d", "8", "--scale", "1e-300"}, ""},
        {"scale 1e-30, norm 1e10",
         {"--random", "12", "--d", "8", "--scale", "1e-30", "--norm", "1e10"},
         "--norm"},
        {"random rows of norm 0", {"--random", "8", "--d", "8", "--norm", "0"}, ""},
        {"identical queries and keys", {"--q", same, "--k", same}, ""},
        {"identical queries and keys, causal", {"--q", same, "--k", same, "--causal"}, ""},
        {"identical keys and one far key", {"--q", smallQueries, "--k", outlierKeys}, ""},
        {"all-zero queries and keys", {"--q", zeros, "--k", zeros}, ""},
        {"one token", {"--text", "cat"}, ""},
        {"one token, causal", {"--text", "cat", "--causal"}, ""},
        {"one random row, norm 20", {"--random", "1", "--norm", "20"}, "--norm"},
    };
    for (const Condition& condition : conditions) {
        for (const QString& method : kMethods) {
            for (const QString precision : {"float", "double"}) {
                QTest::addRow("%s, %s, %s", condition.name, qPrintable(method),
                              qPrintable(precision))
                    << condition.options + QStringList{"--method", method,       "--precision",
                                                       precision,  "--features", "16"}
                    << condition.refusable;
            }
        }
    }
}

void TestEdgeNumerics::noSilentNonFinite()
{
    QFETCH(QStringList, options);
    QFETCH(QString, refusable);
    const QString out = m_dir.filePath(QStringLiteral("out_%1").arg(++m_runs));
    const AppRun run =
        runAttentionLab(QStringList{"compute", "--out", out} + options, m_dir.path(), 60000);
    QVERIFY2(run.finished && !run.crashed, qPrintable(run.describe()));
    if (run.exitCode == 2 && !refusable.isEmpty()) {
        QVERIFY2(QString::fromUtf8(run.err).contains(refusable), qPrintable(run.describe()));
        QVERIFY(!QFileInfo::exists(out));
        return;
    }
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    const QStringList problems = unexplainedNonFinite(out);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n') + '\n' + run.describe()));
    for (const QString name : {"attention_exact.npy", "attention_approx.npy"}) {
        if (!QFileInfo::exists(out + '/' + name))
            continue;
        // P^ of a map whose features can be negative (trig) still sums to 1 where its
        // denominator is not 0; a warning names the rows where it is not positive.
        const double error = worstRowSumError(out + '/' + name);
        QVERIFY2(error <= 1e-3 || (name == QLatin1String("attention_approx.npy") &&
                                   QString::fromUtf8(run.out).contains("non-positive")),
                 qPrintable(QStringLiteral("%1: a row sums to 1 +- %2\n%3")
                                .arg(name)
                                .arg(error)
                                .arg(run.describe())));
    }
}

QTEST_GUILESS_MAIN(TestEdgeNumerics)
#include "test_edge_numerics.moc"

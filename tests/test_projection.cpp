// The random generator and the random projection W: known answers, distributions, orthogonality,
// row norms and bit-for-bit reproducibility.

#include "attention/projection.h"
#include "attention/random.h"
#include "cancellation.h"
#include "errors.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace attnlab;

class TestProjection : public QObject {
    Q_OBJECT

private slots:
    void xoshiroMatchesReferenceOutputs();
    void uniformIsInOpenUnitInterval();
    void normalPassesKolmogorovSmirnov();
    void orthogonalRowsWithinEachBlock_data();
    void orthogonalRowsWithinEachBlock();
    void simplexRowsWithinEachBlock_data();
    void simplexRowsWithinEachBlock();
    void sqrtDRowNormsAreExact();
    void chiRowNormsHaveChiSquaredMoments();
    void orthogonalEntriesAreStandardNormal();
    void signCorrectionMakesOrientationUniform();
    void sameSeedGivesSameBits();
    void aHugeDrawStopsAtTheFirstPollThatSaysCancel_data();
    void aHugeDrawStopsAtTheFirstPollThatSaysCancel();
};

void TestProjection::xoshiroMatchesReferenceOutputs()
{
    // The reference xoshiro256** (Blackman and Vigna) from state {1, 2, 3, 4}; the first three
    // follow by hand from the update rule, the rest are the published test vector.
    Rng rng = Rng::fromState(1, 2, 3, 4);
    const std::uint64_t expected[] = {11520ULL,
                                      0ULL,
                                      1509978240ULL,
                                      1215971899390074240ULL,
                                      1216172134540287360ULL,
                                      607988272756665600ULL,
                                      16172922978634559625ULL,
                                      8476171486693032832ULL,
                                      10595114339597558777ULL,
                                      2904607092377533576ULL};
    for (const std::uint64_t value : expected)
        QCOMPARE(rng.nextBits(), value);
}

void TestProjection::uniformIsInOpenUnitInterval()
{
    Rng rng(7);
    double sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
        const double u = rng.uniform();
        QVERIFY(u > 0.0 && u < 1.0);
        sum += u;
    }
    // Mean 1/2, standard error sqrt(1/12 / n); 5 standard errors.
    QVERIFY(std::abs(sum / n - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
}

void TestProjection::normalPassesKolmogorovSmirnov()
{
    // D_n = sup |F_n(x) - Phi(x)| against the 0.1% critical value 1.95 / sqrt(n).
    const int n = 200000;
    std::vector<double> samples(n);
    Rng rng(12345, RandomStream::RandomInput);
    for (double& x : samples)
        x = rng.normal();
    std::sort(samples.begin(), samples.end());
    double d = 0;
    for (int i = 0; i < n; ++i) {
        const double cdf = 0.5 * std::erfc(-samples[i] / std::sqrt(2.0));
        d = std::max({d, std::abs(cdf - double(i) / n), std::abs(cdf - double(i + 1) / n)});
    }
    QVERIFY2(d < 1.95 / std::sqrt(double(n)), qPrintable(QString::number(d)));
    double sum = 0, sumSquares = 0, sumFourth = 0;
    for (const double x : samples) {
        sum += x;
        sumSquares += x * x;
        sumFourth += x * x * x * x;
    }
    // Mean 0 (se 1/sqrt(n)), variance 1 (se sqrt(2/n)), fourth moment 3 (se sqrt(96/n)).
    QVERIFY(std::abs(sum / n) < 5 / std::sqrt(double(n)));
    QVERIFY(std::abs(sumSquares / n - 1) < 5 * std::sqrt(2.0 / n));
    QVERIFY(std::abs(sumFourth / n - 3) < 5 * std::sqrt(96.0 / n));
}

void TestProjection::orthogonalRowsWithinEachBlock_data()
{
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("d");
    QTest::newRow("m = d") << 16 << 16;
    QTest::newRow("m a multiple of d") << 64 << 16;
    QTest::newRow("m not a multiple of d") << 100 << 32;
    QTest::newRow("m < d") << 5 << 32;
}

void TestProjection::orthogonalRowsWithinEachBlock()
{
    QFETCH(int, m);
    QFETCH(int, d);
    for (const RowNorm norm : {RowNorm::Chi, RowNorm::SqrtD}) {
        const MatrixD w = randomProjection(m, d, ProjectionKind::Orthogonal, norm, 3);
        QCOMPARE(w.rows(), Eigen::Index(m));
        QCOMPARE(w.cols(), Eigen::Index(d));
        MatrixD unit = w;
        for (Eigen::Index i = 0; i < m; ++i)
            unit.row(i).normalize();
        double largestInBlock = 0;
        double largestAcrossBlocks = 0;
        for (int i = 0; i < m; ++i) {
            for (int j = i + 1; j < m; ++j) {
                const double dot = std::abs(unit.row(i).dot(unit.row(j)));
                if (i / d == j / d)
                    largestInBlock = std::max(largestInBlock, dot);
                else
                    largestAcrossBlocks = std::max(largestAcrossBlocks, dot);
            }
        }
        QVERIFY2(largestInBlock < 1e-12, qPrintable(QString::number(largestInBlock)));
        // Blocks are independent draws: rows of different blocks are not orthogonal.
        if (m > d)
            QVERIFY(largestAcrossBlocks > 1e-3);
    }
}

void TestProjection::simplexRowsWithinEachBlock_data()
{
    orthogonalRowsWithinEachBlock_data();
}

void TestProjection::simplexRowsWithinEachBlock()
{
    // Property: the unit rows of a simplex block have pairwise dot products -1/(d - 1) (the
    // vertices of a regular simplex), those of a full block sum to 0; the row lengths are those
    // of orthogonal rows of the same seed (the same chi draws), and d = 1 gives orthogonal rows.
    QFETCH(int, m);
    QFETCH(int, d);
    const MatrixD w = randomProjection(m, d, ProjectionKind::Simplex, RowNorm::Chi, 3);
    const MatrixD orthogonal = randomProjection(m, d, ProjectionKind::Orthogonal, RowNorm::Chi, 3);
    QCOMPARE(w.rows(), Eigen::Index(m));
    QCOMPARE(w.cols(), Eigen::Index(d));
    MatrixD unit = w;
    for (Eigen::Index i = 0; i < m; ++i) {
        QVERIFY(std::abs(w.row(i).norm() - orthogonal.row(i).norm()) < 1e-12 * w.row(i).norm());
        unit.row(i).normalize();
    }
    double largestError = 0;
    for (int i = 0; i < m; ++i)
        for (int j = i + 1; j < m && j / d == i / d; ++j)
            largestError =
                std::max(largestError, std::abs(unit.row(i).dot(unit.row(j)) + 1.0 / (d - 1)));
    QVERIFY2(largestError < 1e-12, qPrintable(QString::number(largestError)));
    for (int block = 0; (block + 1) * d <= m; ++block)
        QVERIFY(unit.middleRows(block * d, d).colwise().sum().norm() < 1e-12);
    QCOMPARE(randomProjection(4, 1, ProjectionKind::Simplex, RowNorm::Chi, 3),
             randomProjection(4, 1, ProjectionKind::Orthogonal, RowNorm::Chi, 3));
}

void TestProjection::sqrtDRowNormsAreExact()
{
    for (const ProjectionKind kind : {ProjectionKind::Orthogonal, ProjectionKind::Iid}) {
        const MatrixD w = randomProjection(70, 24, kind, RowNorm::SqrtD, 11);
        for (Eigen::Index i = 0; i < w.rows(); ++i)
            QVERIFY(std::abs(w.row(i).norm() - std::sqrt(24.0)) < 1e-12);
    }
}

void TestProjection::chiRowNormsHaveChiSquaredMoments()
{
    // |w_i|^2 ~ chi^2_d: mean d, variance 2d. With n rows the sample mean has se sqrt(2d / n)
    // and the sample variance se about sqrt(8d^2 + 48d) / sqrt(n) (fourth moment of chi^2_d).
    const int d = 32;
    const int m = 32 * 256;
    for (const ProjectionKind kind : {ProjectionKind::Orthogonal, ProjectionKind::Iid}) {
        const MatrixD w = randomProjection(m, d, kind, RowNorm::Chi, 5);
        const Eigen::ArrayXd norms2 = w.rowwise().squaredNorm().array();
        const double mean = norms2.mean();
        const double variance = (norms2 - mean).square().mean();
        QVERIFY2(std::abs(mean - d) < 5 * std::sqrt(2.0 * d / m),
                 qPrintable(QString::number(mean)));
        QVERIFY2(
            std::abs(variance - 2.0 * d) < 5 * std::sqrt(8.0 * d * d + 48.0 * d) / std::sqrt(m),
            qPrintable(QString::number(variance)));
    }
}

void TestProjection::orthogonalEntriesAreStandardNormal()
{
    // With chi norms every row of an orthogonal block is marginally N(0, I_d): the entries have
    // mean 0 and variance 1 (se 1/sqrt(n) and sqrt(2/n)).
    const MatrixD w = randomProjection(16 * 400, 16, ProjectionKind::Orthogonal, RowNorm::Chi, 9);
    const double n = double(w.size());
    const double mean = w.mean();
    const double variance = (w.array() - mean).square().sum() / n;
    QVERIFY(std::abs(mean) < 5 / std::sqrt(n));
    QVERIFY(std::abs(variance - 1) < 5 * std::sqrt(2 / n));
}

void TestProjection::signCorrectionMakesOrientationUniform()
{
    // Householder QR alone makes the first column of Q point against g_11 every time; with the
    // sign(diag R) correction W_00 is positive with probability 1/2 (binomial, 5 se).
    const int trials = 4000;
    int positive = 0;
    for (int seed = 0; seed < trials; ++seed) {
        const MatrixD w = randomProjection(8, 8, ProjectionKind::Orthogonal, RowNorm::SqrtD, seed);
        positive += w(0, 0) > 0;
    }
    QVERIFY2(std::abs(double(positive) / trials - 0.5) < 5 * std::sqrt(0.25 / trials),
             qPrintable(QString::number(positive)));
}

void TestProjection::sameSeedGivesSameBits()
{
    for (const ProjectionKind kind : projectionKinds()) {
        const MatrixD a = randomProjection(96, 64, kind, RowNorm::Chi, 42);
        const MatrixD b = randomProjection(96, 64, kind, RowNorm::Chi, 42);
        QVERIFY(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0);
        QVERIFY(a != randomProjection(96, 64, kind, RowNorm::Chi, 43));
        QVERIFY(a != randomProjection(96, 64, kind, RowNorm::Chi, 42, 1));
    }
}

void TestProjection::aHugeDrawStopsAtTheFirstPollThatSaysCancel_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("orthogonal") << int(ProjectionKind::Orthogonal);
    QTest::newRow("iid") << int(ProjectionKind::Iid);
    QTest::newRow("simplex") << int(ProjectionKind::Simplex);
}

// Property: drawing W polls the calling thread's CancellationScope at least once every 1024 rows
// (every block of d rows for orthogonal and simplex rows), and the first poll that says cancel
// ends the draw with Cancelled. With m = 2^20 rows of d = 64 (seconds of work) a cancel after the
// 10th poll stops it after 10 polls; without a scope the draw polls nothing and completes.
void TestProjection::aHugeDrawStopsAtTheFirstPollThatSaysCancel()
{
    QFETCH(int, kind);
    const int m = 1 << 20, d = 64;
    int polls = 0;
    {
        const CancellationScope scope([&polls] { return ++polls > 10; });
        QVERIFY_THROWS_EXCEPTION(Cancelled,
                                 randomProjection(m, d, ProjectionKind(kind), RowNorm::Chi, 1, 0));
    }
    QCOMPARE(polls, 11);

    // A whole draw of 8192 rows polls at least once every 1024 rows.
    polls = 0;
    {
        const CancellationScope scope([&polls] { return ++polls < 0; });
        randomProjection(8192, d, ProjectionKind(kind), RowNorm::Chi, 1, 0);
    }
    QVERIFY2(polls >= 8192 / 1024, qPrintable(QString::number(polls)));
    throwIfCancelled();  // the scope has ended: nothing is installed
}

QTEST_GUILESS_MAIN(TestProjection)
#include "test_projection.moc"

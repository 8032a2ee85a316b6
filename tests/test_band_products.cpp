// The band products of local attention and Scatterbrain (band_products.h), in float (the AVX2
// kernels on this machine) and double (Eigen), against dot products and sums written here in
// double: every key of every group's range, for shapes that leave partial groups of rows, partial
// panels of keys and value columns that are not a multiple of 8.

#include "attention/band_products.h"

#include <QTest>

#include <cmath>
#include <random>

using namespace attnlab;

namespace {

MatrixD randomMatrix(Eigen::Index rows, Eigen::Index cols, unsigned seed)
{
    std::mt19937 generator(seed);
    std::normal_distribution<double> normal;
    MatrixD x(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j)
            x(i, j) = normal(generator);
    return x;
}

// The ranges of a block of rows: a sliding window, or (causal Scatterbrain's shape) from a fixed
// first key to the window's last.
KeyRanges rangesOf(const SlidingWindow& window, Eigen::Index begin, Eigen::Index rows,
                   bool fixedFirst)
{
    if (!fixedFirst)
        return windowRanges(window, begin, rows);
    const Eigen::Index first = window.first(begin) / 7 * 7;  // any key at or before the window's
    return keyRanges(
        begin, rows, [&](Eigen::Index) { return first; },
        [&](Eigen::Index i) { return window.last(i); });
}

struct Shape {
    Eigen::Index length, dims, valueDims, width, begin, rows;
    bool causal, fixedFirst;
};

// The largest |computed - expected| / (|expected| scale) over every key of every group's range,
// for bandScores (scores) and bandTimes (weighted sums).
template <typename T>
std::pair<double, double> bandErrors(const Shape& shape)
{
    const MatrixD a = randomMatrix(shape.rows, shape.dims, 1);
    const MatrixD x = randomMatrix(shape.length, shape.dims, 2);
    const MatrixD v = randomMatrix(shape.length, shape.valueDims, 3);
    const SlidingWindow window{shape.width, shape.causal, shape.length};
    const KeyRanges ranges = rangesOf(window, shape.begin, shape.rows, shape.fixedFirst);
    const double factor = 0.3;

    // The keys set in two blocks, the second starting at a panel boundary.
    const Matrix<T> keysT = x.cast<T>();
    BandKeys<T> keys(shape.length, shape.dims);
    const Eigen::Index split = std::min(shape.length, 3 * kBandPanelKeys);
    keys.set(0, keysT.topRows(split));
    if (split < shape.length)
        keys.set(split, keysT.bottomRows(shape.length - split));

    Matrix<T> scores = Matrix<T>::Constant(shape.rows, ranges.spanCols, T(NAN));
    bandScores<T>(a.cast<T>(), keys, T(factor), ranges, scores);
    double scoreError = 0;
    MatrixD weights = MatrixD::Zero(shape.rows, ranges.spanCols);
    for (Eigen::Index r = 0; r < shape.rows; ++r) {
        const Eigen::Index group = r / kBandGroupRows * kBandGroupRows;
        const Eigen::Index n = std::min(kBandGroupRows, shape.rows - group);
        for (Eigen::Index j = ranges.groupFirst(group, n); j <= ranges.groupLast(group, n); ++j) {
            const double expected = factor * a.row(r).dot(x.row(j));
            const double got = double(scores(r, j - ranges.spanFirst));
            // A key left unwritten (still NaN) counts as an infinite error.
            const double error = std::abs(got - expected) / std::sqrt(double(shape.dims));
            scoreError = std::isnan(error) ? INFINITY : std::max(scoreError, error);
            weights(r, j - ranges.spanFirst) = std::exp(-0.1 * double(j % 5)) * (1 + r % 3);
        }
    }

    Matrix<T> sums(shape.rows, shape.valueDims);
    bandTimes<T>(weights.cast<T>(), ranges, v.cast<T>(), sums);
    double sumError = 0;
    for (Eigen::Index r = 0; r < shape.rows; ++r) {
        const Eigen::Index group = r / kBandGroupRows * kBandGroupRows;
        const Eigen::Index n = std::min(kBandGroupRows, shape.rows - group);
        VectorD expected = VectorD::Zero(shape.valueDims);
        double scale = 0;
        for (Eigen::Index j = ranges.groupFirst(group, n); j <= ranges.groupLast(group, n); ++j) {
            expected += weights(r, j - ranges.spanFirst) * v.row(j).transpose();
            scale += std::abs(weights(r, j - ranges.spanFirst));
        }
        const VectorD got = sums.row(r).template cast<double>().transpose();
        const double error = (got - expected).cwiseAbs().maxCoeff() / scale;
        sumError = std::isnan(error) ? INFINITY : std::max(sumError, error);
    }
    return {scoreError, sumError};
}

}  // namespace

Q_DECLARE_METATYPE(Shape)

class TestBandProducts : public QObject {
    Q_OBJECT

private slots:
    void productsMatchTheirDefinition_data();
    void productsMatchTheirDefinition();
    void rangesCoverWholePanels();
};

void TestBandProducts::productsMatchTheirDefinition_data()
{
    QTest::addColumn<Shape>("shape");
    // Key dimensions below, at and above the 8-wide transposes (13, 64, 256), values of 5, 8, 13,
    // 37 and 64 columns; L not a multiple of 16; blocks at the start, in the middle and at the
    // end, with 48 rows (whole groups) and 17 (a partial one); windows narrower than a panel and
    // wider than the block; ranges from a fixed first key.
    const Shape shapes[] = {
        {100, 13, 5, 9, 0, 17, false, false},       {100, 64, 37, 9, 40, 48, true, false},
        {150, 16, 13, 40, 103, 47, false, false},   {150, 256, 8, 33, 60, 48, true, true},
        {1000, 64, 64, 256, 480, 48, false, false}, {1000, 64, 64, 256, 952, 48, true, false},
        {77, 8, 16, 200, 0, 77, false, false},      {500, 24, 21, 32, 96, 48, true, true},
    };
    for (const Shape& s : shapes)
        QTest::addRow("L=%lld d=%lld dv=%lld w=%lld rows %lld+%lld%s%s", (long long)s.length,
                      (long long)s.dims, (long long)s.valueDims, (long long)s.width,
                      (long long)s.begin, (long long)s.rows, s.causal ? " causal" : "",
                      s.fixedFirst ? " fixed first" : "")
            << s;
}

void TestBandProducts::productsMatchTheirDefinition()
{
    // Errors relative to the size of a dot product (sqrt(d), entries of unit variance) and of a
    // weighted sum (the sum of |weights|): double to rounding, float to float accuracy.
    QFETCH(Shape, shape);
    const auto [scoresDouble, sumsDouble] = bandErrors<double>(shape);
    QVERIFY2(scoresDouble < 1e-13, qPrintable(QString::number(scoresDouble)));
    QVERIFY2(sumsDouble < 1e-13, qPrintable(QString::number(sumsDouble)));
    const auto [scoresFloat, sumsFloat] = bandErrors<float>(shape);
    QVERIFY2(scoresFloat < 1e-5, qPrintable(QString::number(scoresFloat)));
    QVERIFY2(sumsFloat < 1e-5, qPrintable(QString::number(sumsFloat)));
}

void TestBandProducts::rangesCoverWholePanels()
{
    // The span starts on a panel and covers every row's range in whole panels; groups take the
    // union of their rows' ranges.
    const SlidingWindow window{33, false, 1000};
    const KeyRanges ranges = windowRanges(window, 100, 20);
    QCOMPARE(ranges.spanFirst % kBandPanelKeys, 0);
    QCOMPARE(ranges.spanCols % kBandPanelKeys, 0);
    QVERIFY(ranges.spanFirst <= window.first(100));
    QVERIFY(ranges.spanFirst + ranges.spanCols > window.last(119));
    QCOMPARE(ranges.groupFirst(6, 6), window.first(106));
    QCOMPARE(ranges.groupLast(6, 6), window.last(111));
    QCOMPARE(ranges.groupLast(18, 2), window.last(119));
}

QTEST_GUILESS_MAIN(TestBandProducts)
#include "test_band_products.moc"

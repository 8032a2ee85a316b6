// The row properties Hedgehog names (core/attention/row_properties.h): Spearman's rank
// correlation of known rankings and of long rows against ranks formed by a comparison sort; the
// entropies, monotonicity and weight by rank of hand-made rows; float rows' entropies against the
// same rows in double; P's side recorded and read back gives the same sums to the last bit.

#include "attention/random.h"
#include "attention/row_properties.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

using namespace attnlab;

class TestRowProperties : public QObject {
    Q_OBJECT

private slots:
    void spearmanCorrelationOfKnownRankings();
    void spearmanCorrelationOfLongRowsMatchesComparisonSort();
    void rowPropertiesOfHandMadeRows();
    void floatRowsEntropiesMatchDouble();
    void recordedExactSideGivesTheSameSums();
};

void TestRowProperties::spearmanCorrelationOfKnownRankings()
{
    VectorD x(4), y(4);
    x << 1, 2, 3, 4;
    y << 10, 20, 35, 40;
    QCOMPARE(spearmanCorrelation(x, y), 1.0);
    QCOMPARE(spearmanCorrelation(x, VectorD(-y)), -1.0);
    // Ties at their mean rank: ranks of x (1, 2.5, 2.5, 4), of y (1, 3, 2, 4); centred, their
    // products sum to 4.5 and their squares to 4.5 and 5: rho = 4.5 / sqrt(22.5).
    x << 1, 2, 2, 3;
    y << 1, 3, 2, 4;
    QVERIFY(std::abs(spearmanCorrelation(x, y) - 4.5 / std::sqrt(22.5)) < 1e-15);
    QVERIFY(std::isnan(spearmanCorrelation(VectorD::Constant(4, 2.0), y)));
    QVERIFY(std::isnan(spearmanCorrelation(x.head(2), y.head(2))));
}

void TestRowProperties::spearmanCorrelationOfLongRowsMatchesComparisonSort()
{
    // 3000 entries of both signs, with zeros of both signs, float-rounded values (as the engine's
    // rows are) and runs of ties: the radix-sorted ranks give the Pearson correlation of ranks
    // formed here by std::sort and a scan for ties.
    Rng rng(7);
    const Eigen::Index n = 3000;
    VectorD x(n), y(n);
    for (Eigen::Index j = 0; j < n; ++j) {
        x[j] = double(float(rng.normal()));
        y[j] = double(float(x[j] + 0.5 * rng.normal()));
    }
    for (Eigen::Index j = 0; j < n; j += 7)
        x[j] = j % 2 ? 0.0 : -0.0;
    for (Eigen::Index j = 0; j < n; j += 5)
        y[j] = double(float(0.25 * std::round(4 * y[j])));
    const auto ranks = [](const VectorD& values) {
        std::vector<Eigen::Index> order(std::size_t(values.size()));
        std::iota(order.begin(), order.end(), Eigen::Index(0));
        std::sort(order.begin(), order.end(),
                  [&](Eigen::Index a, Eigen::Index b) { return values[a] < values[b]; });
        VectorD rank(values.size());
        for (std::size_t first = 0; first < order.size();) {
            std::size_t last = first;
            while (last + 1 < order.size() && values[order[last + 1]] == values[order[first]])
                ++last;
            for (std::size_t k = first; k <= last; ++k)
                rank[order[k]] = 0.5 * double(first + last) + 1;
            first = last + 1;
        }
        return rank;
    };
    const VectorD rx = ranks(x), ry = ranks(y);
    const VectorD cx = rx.array() - rx.mean(), cy = ry.array() - ry.mean();
    const double expected = cx.dot(cy) / std::sqrt(cx.squaredNorm() * cy.squaredNorm());
    QVERIFY(expected > 0.5 && expected < 0.99);
    QVERIFY(std::abs(spearmanCorrelation(x, y) - expected) < 1e-12);
}

void TestRowProperties::rowPropertiesOfHandMadeRows()
{
    // Two causal rows of four keys (rows 2 and 3 of a sequence), P and P^ written out: the mean
    // entropies, the mean Spearman correlation over the rows with three keys or more, and the
    // weight by rank (keys sorted by P, the largest first).
    Matrix<double> p(2, 4), pApprox(2, 4);
    p << 0.7, 0.2, 0.1, 0, 0.1, 0.2, 0.3, 0.4;
    pApprox << 0.2, 0.5, 0.3, 0, 0.4, 0.3, 0.2, 0.1;
    RowPropertiesAccumulator accumulator;
    accumulator.addRows<double>(2, true, p, pApprox);
    const RowProperties properties = accumulator.properties();
    const auto h = [](std::initializer_list<double> row) {
        double sum = 0;
        for (const double value : row)
            sum -= value * std::log(value);
        return sum;
    };
    QVERIFY(std::abs(properties.entropyExact - (h({0.7, 0.2, 0.1}) + h({0.1, 0.2, 0.3, 0.4})) / 2) <
            1e-15);
    QVERIFY(std::abs(properties.entropyApprox -
                     (h({0.2, 0.5, 0.3}) + h({0.4, 0.3, 0.2, 0.1})) / 2) < 1e-15);
    // Row 2: ranks of P (3, 2, 1) against P^ (1, 3, 2): rho = -0.5; row 3: reversed, -1.
    QVERIFY(std::abs(properties.monotonicity - (-0.5 - 1.0) / 2) < 1e-15);
    QCOMPARE(properties.rankCurveExact.size(), std::size_t(4));
    QVERIFY(std::abs(properties.rankCurveExact[0] - (0.7 + 0.4) / 2) < 1e-15);
    QVERIFY(std::abs(properties.rankCurveApprox[0] - (0.2 + 0.1) / 2) < 1e-15);
    QVERIFY(std::abs(properties.rankCurveApprox[3] - 0.4) < 1e-15);  // row 3 alone has rank 3
}

void TestRowProperties::floatRowsEntropiesMatchDouble()
{
    // 64 rows of 4096 keys, softmax of scores with spread 3 (some entries far below 1e-30, a few
    // exact zeros), in float against the same rows in double: the entropies' terms are taken in
    // the matrix's precision and summed in double, so the float means agree to float rounding,
    // about 1e-7 relative per term (1e-5 leaves room). A row with a negative entry of P^ has no
    // entropy.
    Rng rng(11);
    const Eigen::Index rows = 64, keys = 4096;
    MatrixD p(rows, keys), pApprox(rows, keys);
    for (Eigen::Index i = 0; i < rows; ++i) {
        for (Eigen::Index j = 0; j < keys; ++j) {
            p(i, j) = std::exp(3 * rng.normal());
            pApprox(i, j) = p(i, j) * std::exp(0.3 * rng.normal());
        }
        p(i, i) = 0;
        p.row(i) /= p.row(i).sum();
        pApprox.row(i) /= pApprox.row(i).sum();
    }
    const Matrix<float> pFloat = p.cast<float>();
    Matrix<float> pApproxFloat = pApprox.cast<float>();
    RowPropertiesAccumulator inDouble, inFloat;
    inDouble.addRows<double>(0, false, p, pApprox);
    inFloat.addRows<float>(0, false, pFloat, pApproxFloat);
    const RowProperties d = inDouble.properties(), f = inFloat.properties();
    QVERIFY(d.entropyExact > 1 && d.entropyApprox > 1);
    QVERIFY(std::abs(f.entropyExact - d.entropyExact) < 1e-5 * d.entropyExact);
    QVERIFY(std::abs(f.entropyApprox - d.entropyApprox) < 1e-5 * d.entropyApprox);
    QVERIFY(std::abs(f.monotonicity - d.monotonicity) < 1e-3);

    pApproxFloat(5, 7) = -1e-6f;
    RowPropertiesAccumulator negative;
    negative.addRows<float>(0, false, pFloat, pApproxFloat);
    QVERIFY(std::isnan(negative.properties().entropyApprox));
    QCOMPARE(negative.properties().entropyExact, f.entropyExact);
}

void TestRowProperties::recordedExactSideGivesTheSameSums()
{
    // 1030 causal rows of float weights in blocks of 100 (stride 3 over the rows: rows 0, 3, ...),
    // with ties (values drawn from 40 levels, and zeros): the sums with P's entropies, ranks and
    // keys of largest weight recorded in a first pass and read back in a second, beside another
    // P^, are those computed from P, to the last bit.
    Rng rng(5);
    const Eigen::Index length = 1030;
    Matrix<float> p(length, length), first(length, length), second(length, length);
    for (Eigen::Index i = 0; i < length; ++i) {
        for (Eigen::Index j = 0; j < length; ++j) {
            p(i, j) = j <= i && j % 7 != 3 ? float(std::floor(40 * rng.uniform())) : 0.0f;
            first(i, j) = j <= i ? float(rng.uniform()) : 0.0f;
            second(i, j) = j <= i ? float(rng.uniform()) : 0.0f;
        }
    }
    ExactRowProperties exactSide(length);
    RowPropertiesAccumulator recording, fromP, reading;
    for (Eigen::Index begin = 0; begin < length; begin += 100) {
        const Eigen::Index rows = std::min<Eigen::Index>(100, length - begin);
        recording.addRows<float>(begin, true, p.middleRows(begin, rows),
                                 first.middleRows(begin, rows), {nullptr, &exactSide});
        fromP.addRows<float>(begin, true, p.middleRows(begin, rows),
                             second.middleRows(begin, rows));
        reading.addRows<float>(begin, true, p.middleRows(begin, rows),
                               second.middleRows(begin, rows), {&exactSide, nullptr});
    }
    const RowProperties a = fromP.properties(), b = reading.properties();
    QVERIFY(std::isfinite(a.monotonicity) && std::abs(a.monotonicity) < 0.2);
    QCOMPARE(std::memcmp(&a.entropyExact, &b.entropyExact, sizeof(double)), 0);
    QCOMPARE(std::memcmp(&a.entropyApprox, &b.entropyApprox, sizeof(double)), 0);
    QCOMPARE(std::memcmp(&a.monotonicity, &b.monotonicity, sizeof(double)), 0);
    QVERIFY(a.rankCurveExact == b.rankCurveExact);
    QVERIFY(a.rankCurveApprox == b.rankCurveApprox);
    QCOMPARE(recording.properties().entropyExact, a.entropyExact);
}

QTEST_GUILESS_MAIN(TestRowProperties)
#include "test_row_properties.moc"

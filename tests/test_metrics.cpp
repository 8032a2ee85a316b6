// The metrics of P^ against P (core/attention/metrics.h) on hand-made rows: the error maps by
// their definitions; the mean KL, the generalised KL sum_j [P log(P / P^) - P + P^], >= 0 where P^
// equals P up to rounding and where P^'s rows do not sum to 1, summed term by term here from its
// definition.

#include "attention/exact_attention.h"
#include "attention/metrics.h"
#include "head_support.h"

#include <QTest>

#include <cmath>

using namespace attnlab;
using namespace attnlab::test;

class TestMetrics : public QObject {
    Q_OBJECT

private slots:
    void errorMapsFollowTheirDefinitions();
    void klOfRowsEqualUpToRoundingIsNotNegative();
    void klOfRowsNotSummingToOneIsTheGeneralisedKl_data();
    void klOfRowsNotSummingToOneIsTheGeneralisedKl();
};

// Property: KL(P || P^) >= 0 (Gibbs' inequality) even where P^ equals P up to float rounding, its
// rows summing to 1 + 1e-7 (as float rows do), which made the plain sum -1e-7.
void TestMetrics::klOfRowsEqualUpToRoundingIsNotNegative()
{
    const HeadTensors head = randomHead(25, 8, 1.0, 4);
    const MaterialisedAttention<double> exact =
        materialisedAttention(head.q, head.k, head.v, 0.35, false);
    const MatrixD approx = exact.attention * (1.0 + 1e-7);
    MetricsAccumulator sums;
    sums.addAttentionRows<double>(0, false, exact.attention, approx, nullptr, nullptr);
    const double kl = sums.metrics().meanKl;
    QVERIFY2(kl >= 0.0 && kl < 1e-12, qPrintable(QString::number(kl)));
}

// Property: where P^'s rows need not sum to 1 (Nystrom, Linformer), the mean KL is the
// generalised KL, mean_i sum_j [P_ij log(P_ij / P^_ij) - P_ij + P^_ij], summed here term by term
// from its definition; it is > 0 where P^ = 1.2 P, whose plain sum of P_ij log(P_ij / P^_ij) is
// log(1 / 1.2) < 0 in every row. Float rows are compared at float's precision (1e-6).
void TestMetrics::klOfRowsNotSummingToOneIsTheGeneralisedKl_data()
{
    QTest::addColumn<bool>("single");
    QTest::newRow("double") << false;
    QTest::newRow("float") << true;
}

void TestMetrics::klOfRowsNotSummingToOneIsTheGeneralisedKl()
{
    QFETCH(bool, single);
    MatrixD exact(3, 3), approx(3, 3);
    exact << 0.5, 0.3, 0.2, 0.1, 0.1, 0.8, 0.25, 0.25, 0.5;
    approx << 0.6, 0.4, 0.3, 0.05, 0.1, 0.5, 0.3, 0.3, 0.6;  // rows sum to 1.3, 0.65, 1.2
    if (single) {  // the float values, in double for the definition's sum
        exact = exact.cast<float>().cast<double>();
        approx = approx.cast<float>().cast<double>();
    }
    double expected = 0;
    for (Eigen::Index i = 0; i < 3; ++i)
        for (Eigen::Index j = 0; j < 3; ++j)
            expected +=
                exact(i, j) * std::log(exact(i, j) / approx(i, j)) - exact(i, j) + approx(i, j);
    expected /= 3;
    MetricsAccumulator sums;
    if (single)
        sums.addAttentionRows<float>(0, false, exact.cast<float>(), approx.cast<float>(), nullptr,
                                     nullptr);
    else
        sums.addAttentionRows<double>(0, false, exact, approx, nullptr, nullptr);
    const double kl = sums.metrics().meanKl;
    QVERIFY2(std::abs(kl - expected) <= (single ? 1e-6 : 1e-15),
             qPrintable(QStringLiteral("%1 against %2").arg(kl).arg(expected)));

    // P^ = 1.2 P: row i's generalised KL is (log(1 / 1.2) + 0.2) sum_j P_ij (0.0176784... where
    // the row sums to 1; float's rows sum to 1 within 1e-7).
    MetricsAccumulator scaled;
    scaled.addAttentionRows<double>(0, false, exact, 1.2 * exact, nullptr, nullptr);
    const double scaledKl = scaled.metrics().meanKl;
    QVERIFY2(std::abs(scaledKl - (0.2 - std::log(1.2)) * exact.sum() / 3) < 1e-14,
             qPrintable(QString::number(scaledKl)));
}

void TestMetrics::errorMapsFollowTheirDefinitions()
{
    MatrixD exact(2, 2), approx(2, 2);
    exact << 0.5, 0.5, 1.0, 0.0;
    approx << 0.6, 0.4, 0.75, 0.25;
    MatrixD expected(2, 2);
    expected << 0.1, -0.1, -0.25, 0.25;
    QVERIFY((attentionError(exact, approx, ErrorKind::Signed) - expected).norm() < 1e-15);
    QVERIFY((attentionError(exact, approx, ErrorKind::Absolute) - expected.cwiseAbs()).norm() <
            1e-15);
    // Relative: |error| / P, and 0 where P = 0.
    expected << 0.2, 0.2, 0.25, 0.0;
    QVERIFY((attentionError(exact, approx, ErrorKind::Relative) - expected).norm() < 1e-15);
}

QTEST_GUILESS_MAIN(TestMetrics)
#include "test_metrics.moc"

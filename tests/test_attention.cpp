// Exact attention (materialised and streaming) and linear attention (non-causal, chunked causal,
// recurrent): each form against an independent reference, and the forms against each other.

#include "sweeps/causal_stepper.h"
#include "errors.h"
#include "head_support.h"
#include "attention/exact_attention.h"
#include "experiment.h"
#include "attention/feature_maps.h"
#include "inputs/inputs.h"
#include "attention/linear_attention.h"
#include "parallel.h"
#include "attention/row_ops.h"

#include "fitted_maps_support.h"
#include "test_support.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>

using namespace attnlab;
using namespace attnlab::test;

namespace {

// Random Q, K, V with rows of the given norm (|x'| = norm d^-1/4 at s = 1/sqrt(d)).
// P by the textbook formula, in long double: P_ij = exp(s q_i.k_j) / sum_j' exp(s q_i.k_j').
MatrixD referenceAttention(const MatrixD& q, const MatrixD& k, double s, bool causal)
{
    MatrixD p = MatrixD::Zero(q.rows(), k.rows());
    for (Eigen::Index i = 0; i < q.rows(); ++i) {
        long double sum = 0;
        const Eigen::Index visible = causal ? i + 1 : k.rows();
        for (Eigen::Index j = 0; j < visible; ++j)
            sum += std::exp((long double)(s * q.row(i).dot(k.row(j))));
        for (Eigen::Index j = 0; j < visible; ++j)
            p(i, j) = double(std::exp((long double)(s * q.row(i).dot(k.row(j)))) / sum);
    }
    return p;
}

// max |a - b| / max |b|.
double relativeError(const MatrixD& a, const MatrixD& b)
{
    return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

template <typename T>
Matrix<T> cast(const MatrixD& m)
{
    return m.cast<T>();
}

// O^ by the masked quadratic form: P^ formed row by row, then P^ V.
template <typename T>
MatrixD maskedQuadraticOutput(const FeatureMap<T>& phi, const HeadTensors& head, bool causal)
{
    const Matrix<T> q = cast<T>(head.q), k = cast<T>(head.k), v = cast<T>(head.v);
    FeatureMapRows<T> rows(phi, q, k, causal);
    Matrix<T> p(q.rows(), k.rows());
    rows.rows(0, p);
    return (p * v).template cast<double>();
}

template <typename T>
MatrixD recurrentOutput(const FeatureMap<T>& phi, const HeadTensors& head)
{
    CausalStepper<T> stepper(phi, cast<T>(head.q), cast<T>(head.k), cast<T>(head.v));
    MatrixD out(head.q.rows(), head.v.cols());
    for (Eigen::Index i = 0; i < stepper.length(); ++i) {
        stepper.step();
        out.row(i) = stepper.output().transpose();
    }
    return out;
}

// A spec of random input: L rows of dimension d.
ExperimentSpec randomSpec(int length, int headDim)
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = length;
    spec.input.headDim = headDim;
    return spec;
}

// The same double to the last bit (NaN equal to NaN).
bool sameBits(double a, double b)
{
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// The same row properties to the last bit: entropies, monotonicity and both rank curves.
bool sameRowProperties(const RowProperties& a, const RowProperties& b)
{
    const auto sameCurve = [](const std::vector<double>& x, const std::vector<double>& y) {
        return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), sameBits);
    };
    return sameBits(a.entropyExact, b.entropyExact) && sameBits(a.entropyApprox, b.entropyApprox) &&
           sameBits(a.monotonicity, b.monotonicity) &&
           sameCurve(a.rankCurveExact, b.rankCurveExact) &&
           sameCurve(a.rankCurveApprox, b.rankCurveApprox);
}

}  // namespace

class TestAttention : public QObject {
    Q_OBJECT

private slots:
    void init() { setEngineThreads(2); }

    void exactMatchesTextbookFormula_data();
    void exactMatchesTextbookFormula();
    void streamingEqualsMaterialised_data();
    void streamingEqualsMaterialised();
    void exactRowsSumToOneAndMaskIsExactlyZero();
    void causalFormsAgree_data();
    void causalFormsAgree();
    void nonCausalLinearEqualsMaskedQuadratic_data();
    void nonCausalLinearEqualsMaskedQuadratic();
    void threadCountDoesNotChangeResults();
    void stepperFinalStateIsTheKeySummary();
    void stepperSeekBackGivesIdenticalState();
    void keyScalesSpanningManyOrdersOfMagnitude();
    void trigReportsNonPositiveDenominators();
    void kernelBeyondThePrecisionHasNoMse_data();
    void kernelBeyondThePrecisionHasNoMse();
    void overflowWarningsCountInTheRightNumber();
    void computeStopsWhenCancelled();
    void aHugeRunIsAnnouncedWithItsExpectedCost();
    void theExpectedCostHoldsWhatTheBudgetAsks();
    void kernelsAreKeptOnlyWhenAsked();
    void keptExactSideGivesTheSameResult_data();
    void keptExactSideGivesTheSameResult();
    void keptExactSideIsRefusedWhenItDiffers();
    void enginePyramidsAreThoseOfTheMatrices();
    void pyramidLevelsAreTwoByTwoSignedExtremes();
    void expShiftedSumIsExpWithin2UlpAndItsSum();
};

void TestAttention::exactMatchesTextbookFormula_data()
{
    addFullAndCausalRows();
}

void TestAttention::exactMatchesTextbookFormula()
{
    QFETCH(bool, causal);
    const HeadTensors head = randomHead(37, 8, 3.0, 1);
    const double s = 0.4;
    const MaterialisedAttention<double> exact =
        materialisedAttention(head.q, head.k, head.v, s, causal);
    const MatrixD reference = referenceAttention(head.q, head.k, s, causal);
    QVERIFY(relativeError(exact.attention, reference) < 1e-13);
    QVERIFY(relativeError(exact.output, reference * head.v) < 1e-13);
}

void TestAttention::streamingEqualsMaterialised_data()
{
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<bool>("useDouble");
    // 300 and 700 are not multiples of the query (64) or key (256) tiles; 700 spans 3 key tiles.
    for (const int length : {1, 5, 300, 700}) {
        for (const bool causal : {false, true}) {
            for (const bool useDouble : {false, true}) {
                QTest::newRow(qPrintable(QStringLiteral("L=%1 %2 %3")
                                             .arg(length)
                                             .arg(causal ? "causal" : "full")
                                             .arg(useDouble ? "double" : "float")))
                    << length << causal << useDouble;
            }
        }
    }
}

void TestAttention::streamingEqualsMaterialised()
{
    QFETCH(int, length);
    QFETCH(bool, causal);
    QFETCH(bool, useDouble);
    // Norm 6 in d = 32 makes s q.k span about +-6: peaked rows where the online rescaling matters.
    const HeadTensors head = randomHead(length, 32, 6.0, 2);
    const double s = 1 / std::sqrt(32.0);
    double error;
    if (useDouble) {
        const MatrixD streamed = streamingAttention(head.q, head.k, head.v, s, causal);
        error = relativeError(streamed,
                              materialisedAttention(head.q, head.k, head.v, s, causal).output);
        QVERIFY2(error < 1e-12, qPrintable(QString::number(error)));
    } else {
        const Matrix<float> q = cast<float>(head.q), k = cast<float>(head.k),
                            v = cast<float>(head.v);
        const MatrixD streamed = streamingAttention(q, k, v, s, causal).cast<double>();
        error = relativeError(streamed,
                              materialisedAttention(q, k, v, s, causal).output.cast<double>());
        QVERIFY2(error < 1e-5, qPrintable(QString::number(error)));
    }
}

void TestAttention::exactRowsSumToOneAndMaskIsExactlyZero()
{
    const HeadTensors head = randomHead(90, 16, 5.0, 3);
    const Matrix<float> q = cast<float>(head.q), k = cast<float>(head.k);
    for (const bool causal : {false, true}) {
        Matrix<float> p(90, 90);
        exactAttentionRows<float>(q, k, 0.25, causal, 0, p);
        for (Eigen::Index i = 0; i < p.rows(); ++i) {
            QVERIFY(std::abs(p.row(i).cast<double>().sum() - 1) < 1e-6);
            for (Eigen::Index j = i + 1; causal && j < p.cols(); ++j)
                QCOMPARE(p(i, j), 0.0f);
        }
    }
}

void TestAttention::causalFormsAgree_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("chunk");
    QTest::addColumn<bool>("useDouble");
    for (const MethodInfo& info : featureMapMethods()) {
        // chunk 10 divides 50; 7 and 64 do not (64 > L); 700 rows with chunk 16 span several
        // windows of the parallel scan.
        for (const auto& [length, chunk] :
             {std::pair{50, 10}, std::pair{50, 7}, std::pair{50, 64}, std::pair{700, 16}}) {
            for (const bool useDouble : {false, true}) {
                QTest::newRow(qPrintable(QStringLiteral("%1 L=%2 chunk=%3 %4")
                                             .arg(info.name)
                                             .arg(length)
                                             .arg(chunk)
                                             .arg(useDouble ? "double" : "float")))
                    << int(info.method) << length << chunk << useDouble;
            }
        }
    }
}

void TestAttention::causalFormsAgree()
{
    // Recurrent == chunked == masked quadratic form: 1e-5 relative in float, 1e-10 in double.
    QFETCH(int, kind);
    QFETCH(int, length);
    QFETCH(int, chunk);
    QFETCH(bool, useDouble);
    const int d = 16;
    const HeadTensors head = randomHead(length, d, 1.2, 4);
    ApproximationSpec mapSpec;
    mapSpec.kind = Method(kind);
    mapSpec.features = 32;
    mapSpec.seed = 5;
    mapSpec = withFittedMaps(mapSpec, d);
    const double s = 1 / std::sqrt(double(d));
    const double tolerance = useDouble ? 1e-10 : 1e-5;
    MatrixD chunked, recurrent, quadratic;
    if (useDouble) {
        const auto phi = makeFeatureMap<double>(mapSpec, d, s);
        const auto result = linearAttention<double>(*phi, head.q, head.k, head.v, true, chunk);
        QVERIFY(result.nonPositiveRows.empty());
        chunked = result.output;
        recurrent = recurrentOutput(*phi, head);
        quadratic = maskedQuadraticOutput(*phi, head, true);
    } else {
        const auto phi = makeFeatureMap<float>(mapSpec, d, s);
        const auto result = linearAttention<float>(*phi, cast<float>(head.q), cast<float>(head.k),
                                                   cast<float>(head.v), true, chunk);
        QVERIFY(result.nonPositiveRows.empty());
        chunked = result.output.cast<double>();
        recurrent = recurrentOutput(*phi, head);
        quadratic = maskedQuadraticOutput(*phi, head, true);
    }
    const double chunkedVsQuadratic = relativeError(chunked, quadratic);
    const double recurrentVsQuadratic = relativeError(recurrent, quadratic);
    QVERIFY2(chunkedVsQuadratic < tolerance, qPrintable(QString::number(chunkedVsQuadratic)));
    QVERIFY2(recurrentVsQuadratic < tolerance, qPrintable(QString::number(recurrentVsQuadratic)));
}

void TestAttention::nonCausalLinearEqualsMaskedQuadratic_data()
{
    QTest::addColumn<int>("kind");
    for (const MethodInfo& info : featureMapMethods())
        QTest::newRow(qPrintable(info.name)) << int(info.method);
}

void TestAttention::nonCausalLinearEqualsMaskedQuadratic()
{
    // phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1) == (D^-1 phi(Q) phi(K)^T) V; 600 rows span
    // several key blocks summed on different threads.
    QFETCH(int, kind);
    const int d = 16;
    const HeadTensors head = randomHead(600, d, 1.2, 6);
    ApproximationSpec mapSpec;
    mapSpec.kind = Method(kind);
    mapSpec.features = 32;
    mapSpec = withFittedMaps(mapSpec, d);
    const auto phi = makeFeatureMap<double>(mapSpec, d, 1 / std::sqrt(double(d)));
    const auto linear = linearAttention<double>(*phi, head.q, head.k, head.v, false);
    const double error = relativeError(linear.output, maskedQuadraticOutput(*phi, head, false));
    QVERIFY2(error < 1e-10, qPrintable(QString::number(error)));
}

void TestAttention::threadCountDoesNotChangeResults()
{
    // One thread and two threads give the same outputs up to float rounding.
    ExperimentSpec spec = randomSpec(1000, 32);
    const AttentionInput input = buildInput(spec.input);
    ComputeOptions options;
    options.matrices = false;
    for (const bool causal : {false, true}) {
        spec.causal = causal;
        spec.threads = 1;
        const ExperimentResult one = compute(spec, input, options);
        spec.threads = 2;
        const ExperimentResult two = compute(spec, input, options);
        QVERIFY(relativeError(two.heads[0].outputApprox, one.heads[0].outputApprox) < 1e-5);
        QVERIFY(relativeError(two.heads[0].outputExact, one.heads[0].outputExact) < 1e-5);
    }
}

void TestAttention::stepperFinalStateIsTheKeySummary()
{
    // After L steps S_L = phi(K)^T V and z_L = phi(K)^T 1 (phi at true scale).
    const int d = 8;
    const HeadTensors head = randomHead(40, d, 2.0, 7);
    for (const MethodInfo& info : featureMapMethods()) {
        ApproximationSpec mapSpec;
        mapSpec.kind = info.method;
        mapSpec.features = 16;
        mapSpec = withFittedMaps(mapSpec, d);
        const auto phi = makeFeatureMap<double>(mapSpec, d, 1 / std::sqrt(double(d)));
        CausalStepper<double> stepper(*phi, head.q, head.k, head.v);
        stepper.seek(stepper.length());
        const MatrixD features = trueScaleFeatures(*phi, head.k);
        QVERIFY(relativeError(stepper.state(), features.transpose() * head.v) < 1e-12);
        QVERIFY(relativeError(stepper.normalizer(), features.colwise().sum().transpose()) < 1e-12);
    }
}

void TestAttention::stepperSeekBackGivesIdenticalState()
{
    // Stepping forward to i and back to j gives bit for bit the state of stepping from 0 to j.
    const int d = 8;
    const HeadTensors head = randomHead(50, d, 3.0, 8);
    ApproximationSpec mapSpec;
    mapSpec.features = 16;
    const auto phi = makeFeatureMap<float>(mapSpec, d, 1 / std::sqrt(double(d)));
    const Matrix<float> q = cast<float>(head.q), k = cast<float>(head.k), v = cast<float>(head.v);
    CausalStepper<float> wandering(*phi, q, k, v);
    for (const Eigen::Index target : {Eigen::Index(37), Eigen::Index(3), Eigen::Index(50),
                                      Eigen::Index(22), Eigen::Index(0), Eigen::Index(8)}) {
        wandering.seek(target);
        CausalStepper<float> fresh(*phi, q, k, v);
        for (Eigen::Index i = 0; i < target; ++i)
            fresh.step();
        QCOMPARE(wandering.position(), target);
        QVERIFY(wandering.state() == fresh.state());
        QVERIFY(wandering.normalizer() == fresh.normalizer());
        if (target > 0)
            QVERIFY(wandering.output() == fresh.output());
    }
}

void TestAttention::keyScalesSpanningManyOrdersOfMagnitude()
{
    // Keys whose norms grow along the sequence push the running key scale up chunk after chunk
    // (the rescaling of S and z); positive features must still agree with the masked form and
    // with the unstabilised estimator computed in double.
    const int d = 8, length = 120;
    HeadTensors head = randomHead(length, d, 1.0, 9);
    for (Eigen::Index i = 0; i < length; ++i)
        head.k.row(i) *= 1.0 + 6.0 * double(i) / length;
    ApproximationSpec mapSpec;
    mapSpec.features = 16;
    const double s = 1 / std::sqrt(double(d));
    const auto phi = makeFeatureMap<double>(mapSpec, d, s);
    const auto chunked = linearAttention<double>(*phi, head.q, head.k, head.v, true, 16);
    const MatrixD phiQ = trueScaleFeatures(*phi, head.q), phiK = trueScaleFeatures(*phi, head.k);
    MatrixD direct(length, d);
    for (Eigen::Index i = 0; i < length; ++i) {
        const VectorD weights = phiK.topRows(i + 1) * phiQ.row(i).transpose();
        direct.row(i) = (weights.transpose() * head.v.topRows(i + 1)) / weights.sum();
    }
    QVERIFY(relativeError(chunked.output, direct) < 1e-10);
    QVERIFY(relativeError(recurrentOutput(*phi, head), direct) < 1e-10);
}

void TestAttention::trigReportsNonPositiveDenominators()
{
    // With large norms trigonometric features give denominators <= 0 on some rows: they are
    // reported, and no output is NaN or infinite.
    const int d = 16;
    const HeadTensors head = randomHead(200, d, 12.0, 10);
    ApproximationSpec mapSpec;
    mapSpec.kind = Method::FavorTrig;
    mapSpec.features = 8;
    const auto phi = makeFeatureMap<double>(mapSpec, d, 1 / std::sqrt(double(d)));
    for (const bool causal : {false, true}) {
        const auto result = linearAttention<double>(*phi, head.q, head.k, head.v, causal, 16);
        QVERIFY(!result.nonPositiveRows.empty());
        QVERIFY(result.output.allFinite());
    }
}

// With |x'| = 20 some s q.k pass 88.7, where exp overflows float: the entries of A and A^ beyond
// float's range are counted with the overflow warning, and the kernel MSE, which the kernel files
// (inf there) cannot give, is not a number, whichever way the method forms A^. In double, or at
// the default norm, nothing overflows and the MSE is a finite number.
void TestAttention::kernelBeyondThePrecisionHasNoMse_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<bool>("inFloat");
    QTest::addColumn<double>("norm");
    QTest::addColumn<bool>("overflows");
    for (const char* method : {"taylor2", "favor-positive"}) {
        QTest::addRow("%s, float, |x'| = 20", method)
            << QString::fromLatin1(method) << true << 20.0 << true;
        QTest::addRow("%s, double, |x'| = 20", method)
            << QString::fromLatin1(method) << false << 20.0 << false;
        QTest::addRow("%s, float, |x'| = 1", method)
            << QString::fromLatin1(method) << true << 1.0 << false;
    }
}

void TestAttention::kernelBeyondThePrecisionHasNoMse()
{
    QFETCH(QString, method);
    QFETCH(bool, inFloat);
    QFETCH(double, norm);
    QFETCH(bool, overflows);
    ExperimentSpec spec = randomSpec(64, 16);
    spec.input.normMultiplier = norm;
    spec.precision = inFloat ? Precision::Float : Precision::Double;
    QVERIFY(spec.setMethod(method));
    const ExperimentResult result = compute(spec, buildInput(spec.input));
    const AttentionMetrics& metrics = result.heads.front().metrics;
    const bool warned = std::any_of(result.warnings.begin(), result.warnings.end(),
                                    [](const auto& w) { return w.code == "overflow"; });
    QCOMPARE(metrics.kernelOverflow > 0, overflows);
    QCOMPARE(warned, overflows);
    QCOMPARE(std::isnan(metrics.kernelMse), overflows);
}

void TestAttention::overflowWarningsCountInTheRightNumber()
{
    // Exact attention in float with s = 1 on three positions: q_i.k_j = 100 (exp(100) is past
    // float) for the first `large` queries and keys, else 0, so large^2 entries of A overflow.
    // The warning reads "1 entry ... exceeds", "4 entries ... exceed" ("1 entries" before).
    for (const auto& [large, expected] :
         {std::pair{1, "1 entry of the kernel matrices A or A^ exceeds the float range"},
          std::pair{2, "4 entries of the kernel matrices A or A^ exceed the float range"}}) {
        ExperimentSpec spec = randomSpec(3, 2);
        QVERIFY(spec.setMethod(QStringLiteral("exact")));
        spec.scale = 1.0;
        AttentionInput input;
        input.labels = QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")};
        HeadTensors head{MatrixD::Zero(3, 2), MatrixD::Zero(3, 2), MatrixD::Identity(3, 2)};
        head.q.col(0).head(large).setConstant(10);
        head.k.col(0).head(large).setConstant(10);
        input.heads.push_back(head);
        const ExperimentResult result = compute(spec, input);
        const auto warning =
            std::find_if(result.warnings.begin(), result.warnings.end(),
                         [](const auto& w) { return w.code == QLatin1String("overflow"); });
        QVERIFY(warning != result.warnings.end());
        QVERIFY2(warning->message.startsWith(QLatin1String(expected)),
                 qPrintable(warning->message));
    }
}

void TestAttention::computeStopsWhenCancelled()
{
    // A cancel request before the start, or one arriving after a few polls (in the middle of
    // the row blocks), ends compute with Cancelled.
    ExperimentSpec spec = randomSpec(2000, 16);
    const AttentionInput input = buildInput(spec.input);
    ComputeOptions options;
    options.cancelled = [] { return true; };
    QVERIFY_THROWS_EXCEPTION(Cancelled, compute(spec, input, options));
    std::atomic<int> polls = 0;
    options.cancelled = [&polls] { return ++polls > 5; };
    QVERIFY_THROWS_EXCEPTION(Cancelled, compute(spec, input, options));
    QVERIFY(polls > 5);
    options.cancelled = [] { return false; };
    QCOMPARE(compute(spec, input, options).heads.size(), std::size_t(1));
}

// Property: expectedComputeCost follows its header's formulas (the memory of an iid W without
// matrices or kept features, worked out here term by term), and largeRunNotice announces a run
// above 5 s or 1 GiB with its cost and shape, and nothing for the default m. m = 2^20 on 4 heads
// of L = 25, d = 64 (the built-in example's shape, which ran 112 s and 5.9 GB unannounced) is
// far above both bounds.
void TestAttention::aHugeRunIsAnnouncedWithItsExpectedCost()
{
    ExperimentSpec spec = randomSpec(25, 64);
    spec.input.heads = 4;
    const AttentionInput input = buildInput(spec.input);
    ComputeOptions options;
    QVERIFY(largeRunNotice(expectedComputeCost(spec, input, options), spec, input).isEmpty());

    spec.approximation.features = 1 << 20;
    const ComputeCost huge = expectedComputeCost(spec, input, options);
    QVERIFY2(huge.seconds > 20 && huge.bytes > 4.0 * (1 << 30),
             qPrintable(QStringLiteral("%1 s, %2 bytes").arg(huge.seconds).arg(huge.bytes)));
    const QString notice = largeRunNotice(huge, spec, input);
    QVERIFY2(notice.startsWith(QLatin1String("expected to take about ")) &&
                 notice.contains(QLatin1String(" GiB (m = 1048576 features for L = 25, 4 heads)")),
             qPrintable(notice));

    // One head, iid W (m x d, double, kept; and in the working memory W again with its copy in
    // float), the features of queries and keys (2 L C floats), the map's working set.
    spec.input.heads = 1;
    spec.approximation.features = 65536;
    spec.approximation.projection = ProjectionKind::Iid;
    const AttentionInput oneHead = buildInput(spec.input);
    options.matrices = false;
    options.features = false;
    const double m = 65536, d = 64, length = 25;
    const double expected =
        m * d * 8 + m * d * (8 + 4) + 2 * length * m * 4 +
        methodInfo(Method::FavorPositive).workingSetFloats(costShapeOf(spec, oneHead)) * 4;
    QCOMPARE(expectedComputeCost(spec, oneHead, options).bytes, expected);
}

// Property: a run's expected memory (the large-run notice's) is at least what the memory budget
// asks of it, so a budget of exactly the expected bytes lets it run. At L = 1500 with kernels and
// pyramids the matrices dominate: 28 bytes an entry with the pyramids (float P, P^; double A,
// A^), which the expected cost counted as 24.
void TestAttention::theExpectedCostHoldsWhatTheBudgetAsks()
{
    const ExperimentSpec spec = randomSpec(1500, 16);
    const AttentionInput input = buildInput(spec.input);
    ComputeOptions options;
    options.kernels = true;
    options.pyramids = true;
    const ComputeCost cost = expectedComputeCost(spec, input, options);
    QVERIFY(cost.bytes > 1500.0 * 1500.0 * 28);
    options.budget = MemoryBudget(qint64(std::ceil(cost.bytes)));
    try {
        compute(spec, input, options);
    } catch (const ResourceError& error) {
        QFAIL(qPrintable(QStringLiteral("refused within its expected %1 bytes: %2")
                             .arg(cost.bytes)
                             .arg(QString::fromUtf8(error.what()))));
    }
}

void TestAttention::kernelsAreKeptOnlyWhenAsked()
{
    // kernels = false keeps P and P^ but not A and A^; the kernel MSE is still computed.
    ExperimentSpec spec;
    const AttentionInput input = buildInput(spec.input);
    ComputeOptions options;
    options.kernels = false;
    const ExperimentResult result = compute(spec, input, options);
    const HeadResult& head = result.heads.front();
    QCOMPARE(head.attentionExact.rows(), input.length());
    QCOMPARE(head.attentionApprox.rows(), input.length());
    QCOMPARE(head.kernelExact.size(), Eigen::Index(0));
    QCOMPARE(head.kernelApprox.size(), Eigen::Index(0));
    QVERIFY(std::isfinite(head.metrics.kernelMse));
}

// Metrics, P^, the outputs and A of a result are identical (not merely close) whether the exact
// side was computed or taken over from a result of the same input with another seed, m and
// feature map, the row properties too (P's entropies and ranks kept; at L = 600 over every
// other row); and P, P's pyramid and P's side of the row properties are shared, not copied,
// also by a result that took them over in its turn.
void TestAttention::keptExactSideGivesTheSameResult_data()
{
    QTest::addColumn<bool>("causal");
    QTest::addColumn<QString>("precision");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("heads");
    QTest::newRow("float") << false << "float" << 200 << 2;
    QTest::newRow("causal double") << true << "double" << 200 << 2;
    QTest::newRow("causal float, L = 600") << true << "float" << 600 << 1;
}

void TestAttention::keptExactSideGivesTheSameResult()
{
    QFETCH(bool, causal);
    QFETCH(QString, precision);
    QFETCH(int, length);
    QFETCH(int, heads);
    ExperimentSpec before;
    before.input.kind = InputKind::Random;
    before.input.length = length;
    before.input.heads = heads;
    before.causal = causal;
    QVERIFY(parsePrecision(precision, &before.precision));
    const AttentionInput input = buildInput(before.input);
    ComputeOptions options;
    options.pyramids = true;
    const auto previous = std::make_shared<const ExperimentResult>(compute(before, input, options));
    QVERIFY(!previous->exactKept);

    ExperimentSpec after = before;
    after.approximation.seed = 99;
    after.approximation.features = 40;
    QVERIFY(after.setMethod(QStringLiteral("favor-hyperbolic")));
    const ExperimentResult fresh = compute(after, input, options);
    ComputeOptions reusing = options;
    reusing.sameInputAs = previous;
    const auto kept = std::make_shared<const ExperimentResult>(compute(after, input, reusing));
    QVERIFY(kept->exactKept);
    ExperimentSpec third = before;
    third.approximation.seed = 7;
    reusing.sameInputAs = kept;
    const ExperimentResult keptTwice = compute(third, input, reusing);
    QVERIFY(keptTwice.exactKept);
    QVERIFY(sameRowProperties(keptTwice.metrics.properties,
                              compute(third, input, options).metrics.properties));
    for (std::size_t h = 0; h < fresh.heads.size(); ++h) {
        const HeadResult& a = fresh.heads[h];
        const HeadResult& b = kept->heads[h];
        QVERIFY(b.attentionExact.toDouble() == a.attentionExact.toDouble());
        QVERIFY(b.attentionApprox.toDouble() == a.attentionApprox.toDouble());
        QVERIFY(b.outputExact == a.outputExact);
        QVERIFY(b.outputApprox == a.outputApprox);
        QVERIFY(b.kernelExact == a.kernelExact);
        QCOMPARE(b.metrics.meanKl, a.metrics.meanKl);
        QCOMPARE(b.metrics.kernelMse, a.metrics.kernelMse);
        QCOMPARE(b.metrics.relFrobeniusOutput, a.metrics.relFrobeniusOutput);
        QVERIFY(sameRowProperties(b.metrics.properties, a.metrics.properties));
        QCOMPARE(b.exactPyramid.get(), previous->heads[h].exactPyramid.get());
        QCOMPARE(b.attentionExact.as<float>(), previous->heads[h].attentionExact.as<float>());
        QCOMPARE(b.attentionExact.as<double>(), previous->heads[h].attentionExact.as<double>());
        QVERIFY(previous->heads[h].exactRowProperties);
        QCOMPARE(b.exactRowProperties.get(), previous->heads[h].exactRowProperties.get());
        QCOMPARE(keptTwice.heads[h].exactRowProperties.get(),
                 previous->heads[h].exactRowProperties.get());
    }
    QCOMPARE(kept->metrics.meanTotalVariation, fresh.metrics.meanTotalVariation);
    QCOMPARE(kept->metrics.maxAbsError, fresh.metrics.maxAbsError);
    QVERIFY(sameRowProperties(kept->metrics.properties, fresh.metrics.properties));
    QVERIFY(std::isfinite(fresh.metrics.properties.monotonicity));
    QCOMPARE(fresh.metrics.properties.rankCurveExact.size(), std::size_t(kRankCurveLength));
}

// A previous result whose exact side differs (scale, mask, precision), or that kept no
// matrices, is not taken over.
void TestAttention::keptExactSideIsRefusedWhenItDiffers()
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = 64;
    const AttentionInput input = buildInput(spec.input);
    ComputeOptions options;
    options.sameInputAs = std::make_shared<const ExperimentResult>(compute(spec, input));
    QVERIFY(compute(spec, input, options).exactKept);
    ExperimentSpec scaled = spec;
    scaled.scale = 0.5;
    ExperimentSpec causal = spec;
    causal.causal = true;
    ExperimentSpec inDouble = spec;
    inDouble.precision = Precision::Double;
    for (const ExperimentSpec& other : {scaled, causal, inDouble}) {
        const ExperimentResult result = compute(other, input, options);
        QVERIFY(!result.exactKept);
        QVERIFY(result.heads[0].attentionExact.toDouble() ==
                compute(other, input).heads[0].attentionExact.toDouble());
    }
    ComputeOptions noMatrices;
    noMatrices.matrices = false;
    options.sameInputAs =
        std::make_shared<const ExperimentResult>(compute(spec, input, noMatrices));
    QVERIFY(!compute(spec, input, options).exactKept);
}

// The pyramids the engine builds in its row pass are those of P, P^ and P^ - P built afresh.
void TestAttention::enginePyramidsAreThoseOfTheMatrices()
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = 300;  // levels 1 to 3; an odd number of rows at level 2
    spec.causal = true;
    const AttentionInput input = buildInput(spec.input);
    ComputeOptions options;
    options.pyramids = true;
    const HeadResult head = compute(spec, input, options).heads.front();
    const Matrix<float> exact = *head.attentionExact.as<float>();
    const Matrix<float> approx = *head.attentionApprox.as<float>();
    const Matrix<float> error = approx - exact;
    const std::pair<const DetailPyramid*, DetailPyramid> cases[] = {
        {head.exactPyramid.get(), DetailPyramid::of(exact)},
        {head.approxPyramid.get(), DetailPyramid::of(approx)},
        {head.errorPyramid.get(), DetailPyramid::of(error)}};
    for (const auto& [built, expected] : cases) {
        QVERIFY(built);
        QCOMPARE(built->levelCount(), 3);
        QCOMPARE(built->levelCount(), expected.levelCount());
        for (int level = 1; level <= built->levelCount(); ++level)
            QVERIFY(built->level(level) == expected.level(level));
        QCOMPARE(built->lower(), expected.lower());
        QCOMPARE(built->upper(), expected.upper());
        QCOMPARE(built->smallestMagnitude(), expected.smallestMagnitude());
    }
    QCOMPARE(head.errorPyramid->lower(), double(error.minCoeff()));
    QCOMPARE(head.errorPyramid->smallestMagnitude(), double(error.cwiseAbs().minCoeff()));
}

// Every cell of level l is the entry of largest magnitude (with its sign) among the level-0
// cells it covers, found here by brute force; NaN counts only where a block is all NaN.
void TestAttention::pyramidLevelsAreTwoByTwoSignedExtremes()
{
    std::mt19937 random(7);
    std::normal_distribution<double> normal;
    MatrixD matrix(261, 133);
    for (double& value : matrix.reshaped())
        value = normal(random);
    matrix.block(0, 0, 4, 4).setConstant(std::nan(""));  // one all-NaN block at level 2
    matrix(10, 10) = std::nan("");
    const DetailPyramid pyramid = DetailPyramid::of(matrix);
    QCOMPARE(pyramid.levelCount(), 3);  // 131 x 67, 66 x 34, 33 x 17
    for (int level = 1; level <= pyramid.levelCount(); ++level) {
        const Matrix<float>& cells = pyramid.level(level);
        const Eigen::Index side = Eigen::Index(1) << level;
        QCOMPARE(cells.rows(), (matrix.rows() + side - 1) / side);
        QCOMPARE(cells.cols(), (matrix.cols() + side - 1) / side);
        for (Eigen::Index i = 0; i < cells.rows(); ++i) {
            for (Eigen::Index j = 0; j < cells.cols(); ++j) {
                double extreme = std::nan("");
                for (Eigen::Index r = i * side; r < std::min(matrix.rows(), (i + 1) * side); ++r)
                    for (Eigen::Index c = j * side; c < std::min(matrix.cols(), (j + 1) * side);
                         ++c)
                        if (std::isnan(extreme) || std::abs(matrix(r, c)) > std::abs(extreme))
                            extreme = matrix(r, c);
                if (std::isnan(extreme))
                    QVERIFY(std::isnan(cells(i, j)));
                else
                    QCOMPARE(cells(i, j), float(extreme));
            }
        }
    }
    const MatrixD finite = matrix.unaryExpr([](double x) { return std::isnan(x) ? 0.0 : x; });
    QCOMPARE(pyramid.upper(), finite.maxCoeff());
    QCOMPARE(pyramid.lower(), finite.minCoeff());
}

// Property: expShiftedSum (the streaming kernel's exponential) gives exp(x - shift) within 2 ulp
// (checked against std::exp in double) for arguments from -87 to 0, over a length that is not a
// multiple of the vector width, returns the sum of what it wrote, and gives the smallest normal
// number for -inf (a masked score), as Eigen's exp does; the double overload is Eigen's exp.
void TestAttention::expShiftedSumIsExpWithin2UlpAndItsSum()
{
    const Eigen::Index n = 100'003;
    const float shift = 3.5f;
    std::vector<float> x(std::size_t(n) + 1);
    for (Eigen::Index j = 0; j < n; ++j)
        x[std::size_t(j)] = shift - 87.0f * float(j) / float(n - 1);
    x[std::size_t(n)] = minusInfinity<float>();
    std::vector<float> y = x;
    const float sum = expShiftedSum(y.data(), n + 1, shift);
    double worstUlps = 0;
    double expected = 0;
    for (Eigen::Index j = 0; j < n; ++j) {
        const double exact = std::exp(double(x[std::size_t(j)]) - double(shift));
        const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);
        worstUlps = std::max(worstUlps, std::abs(double(y[std::size_t(j)]) - exact) / ulp);
        expected += y[std::size_t(j)];
    }
    QVERIFY2(worstUlps <= 2.0, qPrintable(QString::number(worstUlps)));
    QCOMPARE(y[std::size_t(n)], std::numeric_limits<float>::min());
    expected += y[std::size_t(n)];
    // Each of the 8 lanes adds n / 8 floats: the recursive summation bound is (n / 8) 2^-24.
    QVERIFY2(std::abs(sum - expected) <= double(n / 8) * 0x1p-24 * expected,
             qPrintable(QStringLiteral("%1 %2").arg(sum).arg(expected)));

    std::vector<double> xd{0.0, -1.0, -30.0};
    const double sumd = expShiftedSum(xd.data(), Eigen::Index(xd.size()), 1.0);
    QCOMPARE(xd[1], std::exp(-2.0));
    QCOMPARE(sumd, std::exp(-1.0) + std::exp(-2.0) + std::exp(-31.0));
}

QTEST_GUILESS_MAIN(TestAttention)
#include "test_attention.moc"

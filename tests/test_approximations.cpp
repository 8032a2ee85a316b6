// The approximations beyond the feature maps, FAVOR++ and FAVOR#: each against an independent
// double-precision implementation written here from its paper's formula (to 1e-10), in both its
// non-causal and causal forms where it has them; the random ones also statistically, with
// tolerances derived from their variance.

#include "attention/approximation.h"
#include "attention/approximations/favor_sharp_attention.h"
#include "attention/maps/optimal_positive_random_features.h"
#include "errors.h"
#include "fitted_maps_support.h"
#include "head_support.h"
#include "experiment.h"
#include "inputs/inputs.h"
#include "parallel.h"

#include <QTest>

#include <Eigen/SVD>

#include <cmath>

using namespace attnlab;
using namespace attnlab::test;

namespace {

double relativeError(const MatrixD& a, const MatrixD& b)
{
    return (a - b).norm() / b.norm();
}

// Rows of x normalised to sum 1.
MatrixD normalisedRows(MatrixD x)
{
    for (Eigen::Index i = 0; i < x.rows(); ++i)
        x.row(i) /= x.row(i).sum();
    return x;
}

// softmax(s x y^T) row by row, straight from the definition.
MatrixD softmaxOf(const MatrixD& x, const MatrixD& y, double s)
{
    MatrixD a(x.rows(), y.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        double top = -INFINITY;
        for (Eigen::Index j = 0; j < y.rows(); ++j)
            top = std::max(top, s * x.row(i).dot(y.row(j)));
        for (Eigen::Index j = 0; j < y.rows(); ++j)
            a(i, j) = std::exp(s * x.row(i).dot(y.row(j)) - top);
    }
    return normalisedRows(a);
}

// What an approximation of spec computes on head: P^ (every row) and O^, in double.
struct Computed {
    MatrixD p;
    MatrixD kernel;
    MatrixD output;
    std::unique_ptr<Approximation<double>> approximation;
};

Computed computed(const ApproximationSpec& spec, const HeadTensors& head, double s, bool causal)
{
    Computed c;
    c.approximation = makeApproximation<double>(spec, int(head.q.cols()), head.k.rows(), s);
    c.approximation->fit(head.q, head.k, causal);
    c.output = c.approximation->output(head.q, head.k, head.v, causal, 16).output;
    c.p.resize(head.q.rows(), head.k.rows());
    const auto rows = c.approximation->rows(head.q, head.k, causal);
    MatrixD block;
    for (Eigen::Index begin = 0; begin < head.q.rows(); begin += 7) {
        const Eigen::Index n = std::min<Eigen::Index>(7, head.q.rows() - begin);
        MatrixD part(n, head.k.rows());
        rows->rows(begin, part, methodInfo(spec.kind).hasKernel ? &block : nullptr);
        c.p.middleRows(begin, n) = part;
        if (methodInfo(spec.kind).hasKernel) {
            c.kernel.conservativeResize(head.q.rows(), head.k.rows());
            c.kernel.middleRows(begin, n) = block;
        }
    }
    return c;
}

// The keys of the window of query i (band_products.h's SlidingWindow, written again).
std::pair<Eigen::Index, Eigen::Index> windowOf(Eigen::Index i, Eigen::Index w, bool causal,
                                               Eigen::Index length)
{
    const Eigen::Index first = causal ? i - w + 1 : i - (w - 1) / 2;
    const Eigen::Index last = causal ? i : i + w / 2;
    return {std::max<Eigen::Index>(first, 0), std::min(last, length - 1)};
}

// The iterative pseudo-inverse of Nystromformer's code: Z_0 = A^T / max column sum,
// Z <- 1/4 Z (13 I - A Z (15 I - A Z (7 I - A Z))).
MatrixD iterativePinv(const MatrixD& a, int iterations)
{
    const MatrixD identity = MatrixD::Identity(a.rows(), a.cols());
    MatrixD z = a.transpose() / a.colwise().sum().maxCoeff();
    for (int n = 0; n < iterations; ++n) {
        const MatrixD az = a * z;
        z = 0.25 * z * (13 * identity - az * (15 * identity - az * (7 * identity - az)));
    }
    return z;
}

// FAVOR+ positive features of the rows of x at true scale, from W: m^-1/2 exp(W x' - |x'|^2/2).
MatrixD positiveFeatures(const MatrixD& x, const MatrixD& w, double s)
{
    MatrixD phi(x.rows(), w.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const VectorD xs = std::sqrt(s) * x.row(i).transpose();
        phi.row(i) = ((w * xs).array() - xs.squaredNorm() / 2).exp().transpose() /
                     std::sqrt(double(w.rows()));
    }
    return phi;
}

// FAVOR++ features (1 - 4A)^(d/4) m^-1/2 exp(A |w|^2 + sqrt(1 - 4A) w.x' - |x'|^2 / 2).
MatrixD optimalPositiveFeatures(const MatrixD& x, const MatrixD& w, double s, double a)
{
    const double d = double(x.cols());
    MatrixD phi(x.rows(), w.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const VectorD xs = std::sqrt(s) * x.row(i).transpose();
        for (Eigen::Index k = 0; k < w.rows(); ++k)
            phi(i, k) = std::pow(1 - 4 * a, d / 4) / std::sqrt(double(w.rows())) *
                        std::exp(a * w.row(k).squaredNorm() +
                                 std::sqrt(1 - 4 * a) * w.row(k).dot(xs) - xs.squaredNorm() / 2);
    }
    return phi;
}

// FAVOR++'s A* for queries q and keys k at scale s, from rho = sum_ij |x'_i + y'_j|^2 / (d L L_k)
// by the explicit double sum: A* = (1 - 2 rho - sqrt((2 rho + 1)^2 + 8 rho)) / 16.
double optimalAByDoubleSum(const MatrixD& q, const MatrixD& k, double s)
{
    double rho = 0;
    for (Eigen::Index i = 0; i < q.rows(); ++i)
        for (Eigen::Index j = 0; j < k.rows(); ++j)
            rho += s * (q.row(i) + k.row(j)).squaredNorm();
    rho /= double(q.cols() * q.rows() * k.rows());
    return (1 - 2 * rho - std::sqrt((2 * rho + 1) * (2 * rho + 1) + 8 * rho)) / 16;
}

// The paper's objective for A: the mean over every (query, key) pair of the log second moment of
// one feature product, sum_ij [d log(1 - 4A) - d/2 log(1 - 8A) + 2 (1 - 4A) |x'_i + y'_j|^2 /
// (1 - 8A) - |x'_i|^2 - |y'_j|^2] / (L L_k), by the explicit double sum.
double meanLogSecondMoment(const MatrixD& q, const MatrixD& k, double s, double a)
{
    const double d = double(q.cols());
    double sum = 0;
    for (Eigen::Index i = 0; i < q.rows(); ++i) {
        for (Eigen::Index j = 0; j < k.rows(); ++j) {
            const VectorD x = std::sqrt(s) * q.row(i).transpose();
            const VectorD y = std::sqrt(s) * k.row(j).transpose();
            sum += d * std::log(1 - 4 * a) - d / 2 * std::log(1 - 8 * a) +
                   2 * (1 - 4 * a) * (x + y).squaredNorm() / (1 - 8 * a) - x.squaredNorm() -
                   y.squaredNorm();
        }
    }
    return sum / double(q.rows() * k.rows());
}

// A random head whose queries are long in the first half of their coordinates and short in the
// second, and whose keys the other way round (factor f): the case FAVOR#'s Psi balances.
HeadTensors unbalancedHead(int length, int d, double f, std::uint64_t seed)
{
    HeadTensors head = randomHead(length, d, 1.0, seed);
    for (int l = 0; l < d; ++l) {
        head.q.col(l) *= l < d / 2 ? f : 1 / f;
        head.k.col(l) *= l < d / 2 ? 1 / f : f;
    }
    return head;
}

}  // namespace

class TestApproximations : public QObject {
    Q_OBJECT

private slots:
    void localMatchesTheWindowedSoftmax_data();
    void localMatchesTheWindowedSoftmax();
    void nystromMatchesThePaper_data();
    void nystromMatchesThePaper();
    void nystromWithEveryLandmarkIsExact();
    void nystromPastTheLengthRunsAsAtTheLength();
    void aWindowCoveringEveryPairIsSaid_data();
    void aWindowCoveringEveryPairIsSaid();
    void linformerMatchesThePaper();
    void linformerProjectionsAreJohnsonLindenstrauss();
    void scatterbrainMatchesSparsePlusLowRank_data();
    void scatterbrainMatchesSparsePlusLowRank();
    void scatterbrainIsUnbiasedOutsideTheWindow();
    void favorPlusPlusMatchesThePaper_data();
    void favorPlusPlusMatchesThePaper();
    void favorPlusPlusOptimalAMinimisesTheObjective();
    void favorPlusPlusIsUnbiasedWithItsClosedFormMse();
    void favorDenseMatchesThePaper();
    void favorDenseIsUnbiasedAndBeatsFavorPlusPlusOnUnbalancedHeads();
    void methodsWithoutACausalFormRefuseIt();
    void floatAgreesWithDouble_data();
    void floatAgreesWithDouble();
};

void TestApproximations::localMatchesTheWindowedSoftmax_data()
{
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("length");
    // Windows shorter than a query block (64), longer, odd and even, and wider than L.
    for (const bool causal : {false, true})
        for (const auto& [w, length] :
             {std::pair{5, 150}, std::pair{8, 150}, std::pair{97, 150}, std::pair{400, 60}})
            QTest::addRow("%s w=%d L=%d", causal ? "causal" : "centred", w, length)
                << causal << w << length;
}

void TestApproximations::localMatchesTheWindowedSoftmax()
{
    // P^_ij = exp(s q_i.k_j) / sum over the window, 0 outside; A^ = exp(s q_i.k_j) inside.
    QFETCH(bool, causal);
    QFETCH(int, window);
    QFETCH(int, length);
    const HeadTensors head = randomHead(length, 8, 2.5, 11);
    const double s = 0.35;
    ApproximationSpec spec;
    spec.kind = Method::Local;
    spec.setValue(windowParameter(), window);
    const Computed c = computed(spec, head, s, causal);
    MatrixD kernel = MatrixD::Zero(length, length);
    for (Eigen::Index i = 0; i < length; ++i) {
        const auto [first, last] = windowOf(i, window, causal, length);
        QVERIFY(last - first + 1 == std::min<Eigen::Index>(window, length) || first == 0 ||
                last == length - 1);
        for (Eigen::Index j = first; j <= last; ++j)
            kernel(i, j) = std::exp(s * head.q.row(i).dot(head.k.row(j)));
    }
    const MatrixD p = normalisedRows(kernel);
    QVERIFY2(relativeError(c.p, p) < 1e-12, qPrintable(QString::number(relativeError(c.p, p))));
    QVERIFY(relativeError(c.kernel, kernel) < 1e-12);
    QVERIFY(relativeError(c.output, p * head.v) < 1e-12);
}

void TestApproximations::nystromMatchesThePaper_data()
{
    QTest::addColumn<bool>("exactPinv");
    QTest::addColumn<int>("landmarks");
    QTest::addColumn<int>("length");
    // m dividing L and not, one landmark.
    for (const bool exact : {false, true})
        for (const auto& [m, length] : {std::pair{8, 96}, std::pair{7, 100}, std::pair{1, 30}})
            QTest::addRow("%s m=%d L=%d", exact ? "exact" : "iterative", m, length)
                << exact << m << length;
}

void TestApproximations::nystromMatchesThePaper()
{
    // Landmarks the segment means; P^ = softmax(s Q K~^T) pinv(softmax(s Q~ K~^T)) softmax(s Q~
    // K^T).
    QFETCH(bool, exactPinv);
    QFETCH(int, landmarks);
    QFETCH(int, length);
    const HeadTensors head = randomHead(length, 6, 1.5, 12);
    const double s = 0.5;
    ApproximationSpec spec;
    spec.kind = Method::Nystrom;
    spec.features = landmarks;
    spec.setValue(pinvParameter(), exactPinv ? 1 : 0);
    const Computed c = computed(spec, head, s, false);

    MatrixD qTilde(landmarks, 6), kTilde(landmarks, 6);
    for (int t = 0; t < landmarks; ++t) {
        const int first = t * length / landmarks, end = (t + 1) * length / landmarks;
        qTilde.row(t).setZero();
        kTilde.row(t).setZero();
        for (int i = first; i < end; ++i) {
            qTilde.row(t) += head.q.row(i) / (end - first);
            kTilde.row(t) += head.k.row(i) / (end - first);
        }
    }
    const MatrixD a = softmaxOf(qTilde, kTilde, s);
    const MatrixD pinv =
        exactPinv ? MatrixD(Eigen::JacobiSVD<MatrixD>(a, Eigen::ComputeFullU | Eigen::ComputeFullV)
                                .solve(MatrixD::Identity(landmarks, landmarks)))
                  : iterativePinv(a, 6);
    const MatrixD p = softmaxOf(head.q, kTilde, s) * pinv * softmaxOf(qTilde, head.k, s);
    QVERIFY2(relativeError(c.p, p) < 1e-10, qPrintable(QString::number(relativeError(c.p, p))));
    QVERIFY(relativeError(c.output, p * head.v) < 1e-10);
    // With the exact inverse the rows sum to 1 (A~ is invertible here).
    if (exactPinv)
        QVERIFY((c.p.rowwise().sum().array() - 1).abs().maxCoeff() < 1e-9);
}

void TestApproximations::nystromWithEveryLandmarkIsExact()
{
    // m = L: the landmarks are the rows themselves and P^ = P P^+ P = P.
    const HeadTensors head = randomHead(20, 4, 1.0, 13);
    ApproximationSpec spec;
    spec.kind = Method::Nystrom;
    spec.features = 20;
    spec.setValue(pinvParameter(), 1);
    const Computed c = computed(spec, head, 0.5, false);
    QVERIFY(relativeError(c.p, softmaxOf(head.q, head.k, 0.5)) < 1e-8);
}

// Property: Nystrom takes at most L landmarks, so m past L is m = L: compute() gives the same P^
// and O^ bit for bit and does the same work, on the same engine threads (one for this small
// input: L = 128, d = 64, one head; m = 65,536 counted as asked took every hardware thread, and
// Eigen split the 128 x 128 products over them), and warns that m acts as L, which m = L does
// not.
void TestApproximations::nystromPastTheLengthRunsAsAtTheLength()
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = 128;
    spec.input.headDim = 64;
    QVERIFY(spec.setMethod(QStringLiteral("nystrom")));
    const AttentionInput input = buildInput(spec.input);
    const auto run = [&](int m, int* threads) {
        spec.approximation.features = m;
        setEngineThreads(0);
        const ExperimentResult result = compute(spec, input);
        *threads = engineThreads();
        setEngineThreads(0);
        return result;
    };
    int threadsAtLength = 0, threadsPast = 0;
    const ExperimentResult atLength = run(128, &threadsAtLength);
    const ExperimentResult past = run(65536, &threadsPast);
    QCOMPARE(threadsAtLength, 1);
    QCOMPARE(threadsPast, threadsAtLength);
    QVERIFY(past.heads[0].outputApprox == atLength.heads[0].outputApprox);
    QVERIFY(past.heads[0].attentionApprox.toDouble() ==
            atLength.heads[0].attentionApprox.toDouble());
    const auto sizeWarning = [](const ExperimentResult& result) {
        for (const ResultWarning& warning : result.warnings)
            if (warning.code == QLatin1String("size-past-length"))
                return warning.message;
        return QString();
    };
    QVERIFY(sizeWarning(atLength).isEmpty());
    QCOMPARE(sizeWarning(past), QStringLiteral("Nystr\u00f6m takes at most L landmarks: m = 65536 "
                                               "acts as m = L = 128, with the same result and "
                                               "cost."));
}

// Property: local attention and Scatterbrain whose window w holds every key of every query
// (w >= L causal, w >= 2L - 1 centred) are exact to float rounding, and the result says so with
// the warning window-covers-every-pair; one key less and there is no such warning.
void TestApproximations::aWindowCoveringEveryPairIsSaid_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("window");
    QTest::addColumn<bool>("covers");
    for (const char* method : {"local", "scatterbrain"}) {
        QTest::addRow("%s causal w = L", method)
            << QString::fromLatin1(method) << true << 25 << true;
        QTest::addRow("%s causal w = L - 1", method)
            << QString::fromLatin1(method) << true << 24 << false;
        QTest::addRow("%s centred w = 2L - 1", method)
            << QString::fromLatin1(method) << false << 49 << true;
        QTest::addRow("%s centred w = 2L - 2", method)
            << QString::fromLatin1(method) << false << 48 << false;
    }
}

void TestApproximations::aWindowCoveringEveryPairIsSaid()
{
    QFETCH(QString, method);
    QFETCH(bool, causal);
    QFETCH(int, window);
    QFETCH(bool, covers);
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = 25;
    spec.input.headDim = 16;
    spec.causal = causal;
    QVERIFY(spec.setMethod(method));
    spec.approximation.setValue(windowParameter(), window);
    const ExperimentResult result = compute(spec, buildInput(spec.input));
    bool said = false;
    for (const ResultWarning& warning : result.warnings)
        said = said || warning.code == QLatin1String("window-covers-every-pair");
    QCOMPARE(said, covers);
    if (covers)
        QVERIFY2(result.metrics.maxAbsError < 1e-5,
                 qPrintable(QString::number(result.metrics.maxAbsError)));
    else
        QVERIFY2(result.metrics.maxAbsError > 1e-5,
                 qPrintable(QString::number(result.metrics.maxAbsError)));
}

void TestApproximations::linformerMatchesThePaper()
{
    // P^ = softmax(s Q (E K)^T) F and O^ = softmax(s Q (E K)^T) (F V), with the drawn E and F.
    const HeadTensors head = randomHead(90, 8, 1.2, 14);
    const double s = 0.3;
    ApproximationSpec spec;
    spec.kind = Method::Linformer;
    spec.features = 16;
    spec.seed = 3;
    const Computed c = computed(spec, head, s, false);
    const std::vector<DrawnMatrix> drawn = c.approximation->drawnMatrices();
    QCOMPARE(drawn.size(), std::size_t(2));
    QCOMPARE(drawn[0].file, QStringLiteral("projection_keys"));
    QCOMPARE(drawn[1].file, QStringLiteral("projection_values"));
    const MatrixD& e = drawn[0].matrix;
    const MatrixD& f = drawn[1].matrix;
    QCOMPARE(e.rows(), 16);
    QCOMPARE(e.cols(), 90);
    const MatrixD projected = softmaxOf(head.q, e * head.k, s);
    QVERIFY(relativeError(c.p, projected * f) < 1e-12);
    QVERIFY(relativeError(c.output, projected * (f * head.v)) < 1e-12);
    // E K and F V are summed over blocks of keys, one per engine thread: 16 threads cut the 90
    // keys into 15 blocks of 6.
    setEngineThreads(16);
    const Computed threaded = computed(spec, head, s, false);
    setEngineThreads(0);
    QVERIFY(relativeError(threaded.output, projected * (f * head.v)) < 1e-12);
    // Another seed, other projections; each head its own.
    spec.seed = 4;
    QVERIFY((makeApproximation<double>(spec, 8, 90, s)->drawnMatrices()[0].matrix - e).norm() > 1);
    QVERIFY((makeApproximation<double>(spec, 8, 90, s, 1)->drawnMatrices()[0].matrix -
             makeApproximation<double>(spec, 8, 90, s, 0)->drawnMatrices()[0].matrix)
                .norm() > 1);
}

void TestApproximations::linformerProjectionsAreJohnsonLindenstrauss()
{
    // Entries N(0, 1/m): E[F^T F] = I. Over n seeds the mean of (F^T F)_jj' has variance 1/(n m)
    // off the diagonal and 2/(n m) on it, so the mean squared deviation from I over the L^2
    // entries is (L (L - 1) + 2 L) / (n m L^2); the statistic is within 15% of that for
    // L^2 = 400 entries (its relative standard deviation is about sqrt(2 / 400) = 7%).
    const int m = 8, length = 20, n = 400;
    MatrixD mean = MatrixD::Zero(length, length);
    ApproximationSpec spec;
    spec.kind = Method::Linformer;
    spec.features = m;
    for (int seed = 0; seed < n; ++seed) {
        spec.seed = std::uint64_t(seed);
        const MatrixD f =
            makeApproximation<double>(spec, 4, length, 1.0)->drawnMatrices()[1].matrix;
        mean += f.transpose() * f / n;
    }
    const double meanSquared =
        (mean - MatrixD::Identity(length, length)).squaredNorm() / (length * length);
    const double expected =
        double(length * (length - 1) + 2 * length) / (double(n) * m * length * length);
    QVERIFY2(std::abs(meanSquared / expected - 1) < 0.15,
             qPrintable(QStringLiteral("%1 against %2").arg(meanSquared).arg(expected)));
}

void TestApproximations::scatterbrainMatchesSparsePlusLowRank_data()
{
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("length");
    QTest::addColumn<double>("growth");
    // Windows narrower and wider than a block of queries, wider than L; L = 700 spans several
    // blocks of keys (their sums added in order) and, causal, of queries. Keys whose norms grow
    // along the sequence (k_i times 1 + growth i / L) give later blocks larger scales, which the
    // sums already made must be brought to.
    for (const bool causal : {false, true}) {
        for (const auto& [w, length] :
             {std::pair{6, 150}, std::pair{70, 150}, std::pair{300, 40}, std::pair{40, 700}})
            QTest::addRow("%s w=%d L=%d", causal ? "causal" : "centred", w, length)
                << causal << w << length << 0.0;
        QTest::addRow("%s w=40 L=700 growing keys", causal ? "causal" : "centred")
            << causal << 40 << 700 << 2.0;
    }
}

void TestApproximations::scatterbrainMatchesSparsePlusLowRank()
{
    // A^_ij = exp(s q_i.k_j) in the window, phi(q_i).phi(k_j) (FAVOR+ positive with the drawn W)
    // elsewhere, 0 beyond i when causal; P^ = D^-1 A^, O^ = P^ V.
    QFETCH(bool, causal);
    QFETCH(int, window);
    QFETCH(int, length);
    QFETCH(double, growth);
    HeadTensors head = randomHead(length, 8, 2.0, 15);
    for (Eigen::Index i = 0; i < length; ++i)
        head.k.row(i) *= 1.0 + growth * double(i) / length;
    const double s = 0.35;
    ApproximationSpec spec;
    spec.kind = Method::Scatterbrain;
    spec.features = 24;
    spec.seed = 2;
    spec.setValue(windowParameter(), window);
    const Computed c = computed(spec, head, s, causal);
    const MatrixD w = c.approximation->projection();
    QCOMPARE(w.rows(), 24);
    const MatrixD phiQ = positiveFeatures(head.q, w, s);
    const MatrixD phiK = positiveFeatures(head.k, w, s);
    MatrixD kernel = MatrixD::Zero(length, length);
    for (Eigen::Index i = 0; i < length; ++i) {
        const auto [first, last] = windowOf(i, window, causal, length);
        for (Eigen::Index j = 0; j < (causal ? i + 1 : length); ++j)
            kernel(i, j) = j >= first && j <= last ? std::exp(s * head.q.row(i).dot(head.k.row(j)))
                                                   : phiQ.row(i).dot(phiK.row(j));
    }
    const MatrixD p = normalisedRows(kernel);
    QVERIFY2(relativeError(c.p, p) < 1e-10, qPrintable(QString::number(relativeError(c.p, p))));
    QVERIFY(relativeError(c.kernel, kernel) < 1e-10);
    const double outputError = relativeError(c.output, p * head.v);
    QVERIFY2(outputError < 1e-10, qPrintable(QString::number(outputError)));
}

void TestApproximations::scatterbrainIsUnbiasedOutsideTheWindow()
{
    // Inside the window A^ is exact; outside it is FAVOR+'s estimate, unbiased: over n seeds the
    // mean of A^_ij lies within 4 standard errors (the sample deviation / sqrt(n)) of A_ij.
    const HeadTensors head = randomHead(30, 6, 1.0, 16);
    const double s = 1 / std::sqrt(6.0);
    const int n = 2000;
    ApproximationSpec spec;
    spec.kind = Method::Scatterbrain;
    spec.features = 8;
    spec.projection = ProjectionKind::Iid;
    spec.setValue(windowParameter(), 5);
    const Eigen::Index row = 12;
    VectorD sum = VectorD::Zero(30), squares = VectorD::Zero(30);
    VectorD exact(30);
    for (Eigen::Index j = 0; j < 30; ++j)
        exact[j] = std::exp(s * head.q.row(row).dot(head.k.row(j)));
    double windowError = 0;  // the largest relative error of a window entry, over every seed
    for (int seed = 0; seed < n; ++seed) {
        spec.seed = std::uint64_t(seed);
        const auto approximation = makeApproximation<double>(spec, 6, 30, s);
        MatrixD p(1, 30), kernel;
        approximation->rows(head.q, head.k, false)->rows(row, p, &kernel);
        sum += kernel.row(0).transpose();
        squares += kernel.row(0).transpose().cwiseAbs2();
        for (Eigen::Index j = 10; j <= 14; ++j)
            windowError = std::max(windowError, std::abs(kernel(0, j) / exact[j] - 1));
    }
    QVERIFY2(windowError < 1e-12, qPrintable(QString::number(windowError)));
    for (Eigen::Index j = 0; j < 30; ++j) {
        if (j >= 10 && j <= 14)
            continue;
        const double mean = sum[j] / n;
        const double deviation = std::sqrt(std::max(0.0, squares[j] / n - mean * mean));
        QVERIFY2(
            std::abs(mean - exact[j]) < 4 * deviation / std::sqrt(double(n)),
            qPrintable(QStringLiteral("key %1: %2 against %3").arg(j).arg(mean).arg(exact[j])));
    }
}

void TestApproximations::favorPlusPlusMatchesThePaper_data()
{
    QTest::addColumn<bool>("causal");
    QTest::addColumn<bool>("fixedA");
    QTest::newRow("optimal A") << false << false;
    QTest::newRow("fixed A") << false << true;
    QTest::newRow("causal") << true << false;
}

void TestApproximations::favorPlusPlusMatchesThePaper()
{
    // O^ = D^-1 phi(Q) phi(K)^T V with the OPRF features of A* (optimalAByDoubleSum).
    // Causal attention, and --favor-fixed-a, use the fixed A (here -0.2) instead.
    QFETCH(bool, causal);
    QFETCH(bool, fixedA);
    const int d = 8, length = 120;
    const HeadTensors head = randomHead(length, d, 2.0, 17);
    const double s = 1 / std::sqrt(double(d));
    ApproximationSpec spec;
    spec.kind = Method::FavorPlusPlus;
    spec.features = 32;
    spec.seed = 6;
    spec.setValue(favorAParameter(), -0.2);
    spec.setValue(favorFixedAParameter(), fixedA ? 1 : 0);
    const Computed c = computed(spec, head, s, causal);
    const double a = causal || fixedA ? -0.2 : optimalAByDoubleSum(head.q, head.k, s);
    const MatrixD w = c.approximation->projection();
    MatrixD kernel = optimalPositiveFeatures(head.q, w, s, a) *
                     optimalPositiveFeatures(head.k, w, s, a).transpose();
    if (causal)
        kernel = kernel.triangularView<Eigen::Lower>();
    const MatrixD p = normalisedRows(kernel);
    QVERIFY2(relativeError(c.p, p) < 1e-10, qPrintable(QString::number(relativeError(c.p, p))));
    QVERIFY(relativeError(c.kernel, kernel) < 1e-10);
    QVERIFY(relativeError(c.output, p * head.v) < 1e-10);
    QVERIFY(std::abs(c.approximation->featureMap()->closedFormParameter() - a) < 1e-12);
}

void TestApproximations::favorPlusPlusOptimalAMinimisesTheObjective()
{
    // A* is the minimum of the mean log second moment over the pairs: the objective, summed
    // pair by pair here, is higher a little to either side of it.
    const HeadTensors head = randomHead(40, 8, 3.0, 18);
    const double s = 1 / std::sqrt(8.0);
    const double optimal = OptimalPositiveRandomFeatures<double>::optimalA(head.q, head.k, s);
    QVERIFY(optimal < 0);
    const double at = meanLogSecondMoment(head.q, head.k, s, optimal);
    for (const double step : {-0.01, 0.01})
        QVERIFY(meanLogSecondMoment(head.q, head.k, s, optimal + step) > at);
    // And at A = 0 (FAVOR+) it is higher still than at A*.
    QVERIFY(meanLogSecondMoment(head.q, head.k, s, 0) > at);
}

void TestApproximations::favorPlusPlusIsUnbiasedWithItsClosedFormMse()
{
    // With iid rows phi(x).phi(y) is unbiased for exp(x'.y') and its MSE is the registry's
    // closed form: over n seeds the mean lies within 4 standard errors of the kernel, and the
    // mean squared error within 4 standard errors (the sample deviation of the squared errors /
    // sqrt(n)) of the closed form.
    const int d = 4, m = 6, n = 20000;
    const double a = -0.15;
    VectorD x(d), y(d);
    x << 0.5, -0.3, 0.4, 0.2;
    y << 0.1, 0.6, -0.2, 0.3;
    const double exact = std::exp(x.dot(y));
    ApproximationSpec spec;
    spec.kind = Method::FavorPlusPlus;
    spec.features = m;
    spec.projection = ProjectionKind::Iid;
    spec.setValue(favorFixedAParameter(), 1);
    spec.setValue(favorAParameter(), a);
    MatrixD rows(2, d);
    rows.row(0) = x.transpose();
    rows.row(1) = y.transpose();
    double sum = 0, squares = 0, errors = 0, errorSquares = 0;
    for (int seed = 0; seed < n; ++seed) {
        spec.seed = std::uint64_t(seed);
        const MatrixD phi = trueScaleFeatures(*makeFeatureMap<double>(spec, d, 1.0), rows);
        const double estimate = phi.row(0).dot(phi.row(1));
        const double error = (estimate - exact) * (estimate - exact);
        sum += estimate;
        squares += estimate * estimate;
        errors += error;
        errorSquares += error * error;
    }
    const double mean = sum / n;
    const double deviation = std::sqrt(squares / n - mean * mean);
    QVERIFY2(std::abs(mean - exact) < 4 * deviation / std::sqrt(double(n)),
             qPrintable(QStringLiteral("%1 against %2").arg(mean).arg(exact)));
    const double mse = errors / n;
    const double mseDeviation = std::sqrt(errorSquares / n - mse * mse);
    const double closedForm = methodInfo(Method::FavorPlusPlus).kernelMse(m, x, y, a);
    QVERIFY2(std::abs(mse - closedForm) < 4 * mseDeviation / std::sqrt(double(n)),
             qPrintable(QStringLiteral("%1 against %2").arg(mse).arg(closedForm)));
    // At A = 0 the closed form is Lemma 2's for FAVOR+ positive.
    QVERIFY(std::abs(methodInfo(Method::FavorPlusPlus).kernelMse(m, x, y, 0) -
                     methodInfo(Method::FavorPositive).kernelMse(m, x, y, 0)) <
            1e-12 * methodInfo(Method::FavorPositive).kernelMse(m, x, y, 0));
}

void TestApproximations::favorDenseMatchesThePaper()
{
    // SADERFs: psi_l = (sum_j k_jl^2 / sum_i q_il^2)^(1/4), q'' = Psi q, k'' = Psi^-1 k; A* of
    // q'', k'' (optimalAByDoubleSum); P^ = D^-1 phi(Q'') phi(K'')^T with FAVOR++'s features of
    // A*, from the approximation's W.
    const int d = 8, length = 100;
    const HeadTensors head = unbalancedHead(length, d, 2.0, 21);
    const double s = 1 / std::sqrt(double(d));
    ApproximationSpec spec;
    spec.kind = Method::FavorSharp;
    spec.features = 32;
    spec.seed = 7;
    const Computed c = computed(spec, head, s, false);
    VectorD psi(d);
    for (int l = 0; l < d; ++l)
        psi[l] = std::pow(head.k.col(l).squaredNorm() / head.q.col(l).squaredNorm(), 0.25);
    const MatrixD q = head.q * psi.asDiagonal();
    const MatrixD k = head.k * psi.cwiseInverse().asDiagonal();
    const double a = optimalAByDoubleSum(q, k, s);
    const MatrixD w = c.approximation->projection();
    const MatrixD kernel =
        optimalPositiveFeatures(q, w, s, a) * optimalPositiveFeatures(k, w, s, a).transpose();
    const MatrixD p = normalisedRows(kernel);
    QVERIFY2(relativeError(c.p, p) < 1e-10, qPrintable(QString::number(relativeError(c.p, p))));
    QVERIFY(relativeError(c.kernel, kernel) < 1e-10);
    QVERIFY(relativeError(c.output, p * head.v) < 1e-10);
    const auto& sharp = dynamic_cast<const FavorSharpAttention<double>&>(*c.approximation);
    QVERIFY((sharp.rescaling().transpose() - psi).cwiseAbs().maxCoeff() < 1e-12);
    QVERIFY(std::abs(sharp.parameterA() - a) < 1e-12);
    QVERIFY(psi[0] < 0.7 && psi[d - 1] > 1.4);  // about 1/2 and 2: the head is unbalanced
}

void TestApproximations::favorDenseIsUnbiasedAndBeatsFavorPlusPlusOnUnbalancedHeads()
{
    // On a head whose queries and keys are long in different coordinates, over n seeds of iid
    // W: FAVOR#'s estimate of one kernel entry exp(s q_0.k_1) has a mean within 4 standard
    // errors of it (Psi and A* depend on the data, not on W: the estimate stays unbiased), and
    // its squared error, averaged over every entry of A and the seeds, is below FAVOR++'s by
    // more than 4 standard errors of their difference (the same W for both).
    const int d = 4, length = 24, m = 8, n = 1500;
    const HeadTensors head = unbalancedHead(length, d, 2.5, 22);
    const double s = 1 / std::sqrt(double(d));
    MatrixD exact(length, length);
    for (int i = 0; i < length; ++i)
        for (int j = 0; j < length; ++j)
            exact(i, j) = std::exp(s * head.q.row(i).dot(head.k.row(j)));
    ApproximationSpec spec;
    spec.features = m;
    spec.projection = ProjectionKind::Iid;
    double sum = 0, squares = 0, differences = 0, differenceSquares = 0;
    for (int seed = 0; seed < n; ++seed) {
        spec.seed = std::uint64_t(seed);
        spec.kind = Method::FavorSharp;
        const MatrixD sharp = computed(spec, head, s, false).kernel;
        spec.kind = Method::FavorPlusPlus;
        const MatrixD plusPlus = computed(spec, head, s, false).kernel;
        sum += sharp(0, 1);
        squares += sharp(0, 1) * sharp(0, 1);
        const double difference =
            ((plusPlus - exact).array().square() - (sharp - exact).array().square()).mean();
        differences += difference;
        differenceSquares += difference * difference;
    }
    const double mean = sum / n;
    const double deviation = std::sqrt(squares / n - mean * mean);
    QVERIFY2(std::abs(mean - exact(0, 1)) < 4 * deviation / std::sqrt(double(n)),
             qPrintable(QStringLiteral("%1 against %2").arg(mean).arg(exact(0, 1))));
    const double gain = differences / n;
    const double gainDeviation = std::sqrt(differenceSquares / n - gain * gain);
    QVERIFY2(gain > 4 * gainDeviation / std::sqrt(double(n)),
             qPrintable(QStringLiteral("FAVOR++ - FAVOR# squared error %1 (standard error %2)")
                            .arg(gain)
                            .arg(gainDeviation / std::sqrt(double(n)))));
}

void TestApproximations::methodsWithoutACausalFormRefuseIt()
{
    // Nystrom and Linformer mix every position in each row, and FAVOR#'s Psi and A* look at every
    // query and key: causal attention is refused with a message that names the method, by the
    // approximation and by compute().
    const HeadTensors head = randomHead(20, 4, 1.0, 19);
    for (const Method method : {Method::Nystrom, Method::Linformer, Method::FavorSharp}) {
        ApproximationSpec spec;
        spec.kind = method;
        spec.features = 4;
        const auto approximation = makeApproximation<double>(spec, 4, 20, 0.5);
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 approximation->output(head.q, head.k, head.v, true, 16));
        ExperimentSpec experiment;
        experiment.input.kind = InputKind::Random;
        experiment.input.length = 20;
        experiment.input.headDim = 4;
        experiment.approximation = spec;
        experiment.causal = true;
        try {
            compute(experiment, buildInput(experiment.input));
            QFAIL("causal attention was not refused");
        } catch (const InputError& e) {
            QVERIFY2(e.message().contains(methodInfo(method).name), qPrintable(e.message()));
        }
    }
}

void TestApproximations::floatAgreesWithDouble_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<bool>("causal");
    for (const MethodInfo& info : approximationMethods())
        for (const bool causal : {false, true})
            if (!info.hasFeatures() && (info.hasCausalForm || !causal))
                QTest::addRow("%s %s", qPrintable(info.name), causal ? "causal" : "full")
                    << int(info.method) << causal;
}

void TestApproximations::floatAgreesWithDouble()
{
    // The float implementation (multi-threaded, 1000 rows: many query blocks) gives the double
    // one's output to float accuracy.
    QFETCH(int, kind);
    QFETCH(bool, causal);
    const HeadTensors head = randomHead(1000, 16, 1.0, 20);
    const double s = 0.25;
    ApproximationSpec spec;
    spec.kind = Method(kind);
    spec.features = 32;
    spec.setValue(windowParameter(), 40);
    spec = withFittedMaps(spec, 16);
    const auto inDouble = makeApproximation<double>(spec, 16, 1000, s);
    const auto inFloat = makeApproximation<float>(spec, 16, 1000, s);
    inDouble->fit(head.q, head.k, causal);
    const MatrixD expected = inDouble->output(head.q, head.k, head.v, causal, 48).output;
    const Matrix<float> q = head.q.cast<float>(), k = head.k.cast<float>();
    inFloat->fit(q, k, causal);
    const Matrix<float> got = inFloat->output(q, k, head.v.cast<float>(), causal, 48).output;
    const double error = relativeError(got.cast<double>(), expected);
    QVERIFY2(error < 1e-4, qPrintable(QString::number(error)));
}

QTEST_GUILESS_MAIN(TestApproximations)
#include "test_approximations.moc"

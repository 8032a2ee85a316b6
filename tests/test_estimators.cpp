// The feature maps as estimators of the softmax kernel exp(x'.y'): their formulas, unbiasedness,
// the mean squared errors of Lemma 2 (Choromanski et al. 2021), the gain from orthogonal rows,
// and the convergence of FAVOR+ attention as m grows. Every statistical check uses fixed seeds
// and a tolerance of a few standard errors estimated from the same samples.

#include "experiment.h"
#include "attention/feature_maps.h"
#include "inputs/inputs.h"
#include "attention/random.h"

#include "fitted_maps_support.h"
#include "test_support.h"

#include <QTest>

#include <cmath>

using namespace attnlab;
using namespace attnlab::test;

namespace {

// The rows of phi for x and y (scale s = 1, so x' = x) at their true scale.
std::pair<VectorD, VectorD> featuresOf(const FeatureMap<double>& phi, const VectorD& x,
                                       const VectorD& y)
{
    MatrixD rows(2, x.size());
    rows.row(0) = x.transpose();
    rows.row(1) = y.transpose();
    const MatrixD features = trueScaleFeatures(phi, rows);
    return {features.row(0).transpose(), features.row(1).transpose()};
}

ApproximationSpec spec(Method kind, int m, ProjectionKind projection, std::uint64_t seed)
{
    ApproximationSpec s;
    s.kind = kind;
    s.features = m;
    s.projection = projection;
    s.seed = seed;
    return s;
}

// A vector of length `norm` in a seeded random direction.
VectorD randomVector(int d, double norm, std::uint64_t seed)
{
    Rng rng(seed, RandomStream::RandomInput);
    VectorD v(d);
    for (double& x : v)
        x = rng.normal();
    return v.normalized() * norm;
}

// Samples of (estimate - exp(x.y))^2 over seeds 0..n-1, and the estimates' mean and standard error.
struct Samples {
    double meanEstimate = 0;
    double estimateStandardError = 0;
    double mse = 0;
    double mseStandardError = 0;
};

Samples sampleEstimator(Method kind, ProjectionKind projection, int m, const VectorD& x,
                        const VectorD& y, int n)
{
    const double exact = std::exp(x.dot(y));
    std::vector<double> estimates(n);
    for (int seed = 0; seed < n; ++seed) {
        const auto phi =
            makeFeatureMap<double>(spec(kind, m, projection, seed), int(x.size()), 1.0);
        const auto [fx, fy] = featuresOf(*phi, x, y);
        estimates[seed] = fx.dot(fy);
    }
    Samples s;
    double sumSquares = 0, sumErrors = 0, sumErrorSquares = 0;
    for (const double e : estimates) {
        s.meanEstimate += e / n;
        sumSquares += e * e;
        const double error = (e - exact) * (e - exact);
        sumErrors += error;
        sumErrorSquares += error * error;
    }
    s.estimateStandardError = std::sqrt((sumSquares / n - s.meanEstimate * s.meanEstimate) / n);
    s.mse = sumErrors / n;
    s.mseStandardError = std::sqrt((sumErrorSquares / n - s.mse * s.mse) / n);
    return s;
}

// Lemma 2 of the Performer paper for iid rows, with z = x + y and SM = exp(x.y).
double lemma2Mse(Method kind, int m, const VectorD& x, const VectorD& y)
{
    const double sm = std::exp(x.dot(y));
    const double z2 = (x + y).squaredNorm();
    const double positive = std::exp(z2) * sm * sm * (1 - std::exp(-z2)) / m;
    switch (kind) {
        case Method::FavorTrig: {
            const double diff = 1 - std::exp(-(x - y).squaredNorm());
            return std::exp(z2) / (sm * sm) * diff * diff / (2.0 * m);
        }
        case Method::FavorPositive: return positive;
        case Method::FavorHyperbolic: return 0.5 * (1 - std::exp(-z2)) * positive;
        default: return std::nan("");
    }
}

}  // namespace

class TestEstimators : public QObject {
    Q_OBJECT

private slots:
    void featureCountMatchesTheMap_data();
    void featureCountMatchesTheMap();
    void featuresFollowTheirFormulas_data();
    void featuresFollowTheirFormulas();
    void taylor2IsExactForItsPolynomial();
    void estimatorsAreUnbiased_data();
    void estimatorsAreUnbiased();
    void mseMatchesLemma2_data();
    void mseMatchesLemma2();
    void orthogonalRowsLowerTheMse_data();
    void orthogonalRowsLowerTheMse();
    void favorAttentionConvergesAsOneOverSqrtM();
};

void TestEstimators::featureCountMatchesTheMap_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("expected");  // for m = 10, d = 6
    QTest::newRow("positive") << int(Method::FavorPositive) << 10;
    QTest::newRow("hyperbolic") << int(Method::FavorHyperbolic) << 20;
    QTest::newRow("trig") << int(Method::FavorTrig) << 20;
    QTest::newRow("relu") << int(Method::FavorRelu) << 10;
    QTest::newRow("elu") << int(Method::Elu) << 6;
    QTest::newRow("taylor2") << int(Method::Taylor2) << 1 + 6 + 21;
    QTest::newRow("hedgehog") << int(Method::Hedgehog) << 2 * 6;  // d_f = d
}

void TestEstimators::featureCountMatchesTheMap()
{
    QFETCH(int, kind);
    QFETCH(int, expected);
    const ApproximationSpec s =
        withFittedMaps(spec(Method(kind), 10, ProjectionKind::Orthogonal, 1), 6);
    QCOMPARE(featureCountOf(s, 6), Eigen::Index(expected));
    QCOMPARE(makeFeatureMap<float>(s, 6, 0.5)->featureCount(), Eigen::Index(expected));
    QCOMPARE(makeFeatureMap<double>(s, 6, 0.5)->featureCount(), Eigen::Index(expected));
}

void TestEstimators::featuresFollowTheirFormulas_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("norm");
    for (const MethodInfo& info : featureMapMethods()) {
        QTest::newRow(qPrintable(info.name + QStringLiteral(" small"))) << int(info.method) << 0.5;
        QTest::newRow(qPrintable(info.name + QStringLiteral(" large"))) << int(info.method) << 6.0;
    }
}

void TestEstimators::featuresFollowTheirFormulas()
{
    // phi computed straight from the formulas of docs/design.md 2.4 (unstabilised) equals the map's
    // mantissa x exp(log-scale), in double; at norm 6 the stabilisation is doing real work.
    QFETCH(int, kind);
    QFETCH(double, norm);
    const int d = 8, m = 12;
    const double s = 0.3;
    const ApproximationSpec mapSpec =
        withFittedMaps(spec(Method(kind), m, ProjectionKind::Orthogonal, 4), d);
    const auto phi = makeFeatureMap<double>(mapSpec, d, s);
    MatrixD x(3, d);
    for (int i = 0; i < 3; ++i)
        x.row(i) = randomVector(d, norm, 100 + i).transpose();
    const MatrixD features = trueScaleFeatures(*phi, x);
    const MatrixD& w = phi->projection();
    for (int i = 0; i < 3; ++i) {
        const VectorD xs = std::sqrt(s) * x.row(i).transpose();
        const double half = xs.squaredNorm() / 2;
        VectorD expected;
        switch (Method(kind)) {
            case Method::FavorPositive:
                expected = ((w * xs).array() - half).exp() / std::sqrt(double(m));
                break;
            case Method::FavorHyperbolic:
                expected.resize(2 * m);
                expected << ((w * xs).array() - half).exp(), ((-(w * xs)).array() - half).exp();
                expected /= std::sqrt(2.0 * m);
                break;
            case Method::FavorPlusPlus: {
                // Not fitted: the fixed A of the spec (the registry's default).
                const double a = favorAParameter().defaultValue;
                expected = (a * w.rowwise().squaredNorm().array() +
                            std::sqrt(1 - 4 * a) * (w * xs).array() - half)
                               .exp() *
                           std::pow(1 - 4 * a, d / 4.0) / std::sqrt(double(m));
                break;
            }
            case Method::FavorTrig:
                expected.resize(2 * m);
                expected << (w * xs).array().cos(), (w * xs).array().sin();
                expected *= std::exp(half) / std::sqrt(double(m));
                break;
            case Method::FavorRelu:
                // The reference implementations' definition: epsilon on the unscaled ReLU.
                expected = (w * xs).array().max(0.0) + 1e-3;
                break;
            case Method::Elu: {
                const Eigen::ArrayXd raw = x.row(i).transpose().array();
                expected = (raw > 0).select(raw + 1, raw.exp());
                break;
            }
            case Method::Taylor2: {
                expected.resize(1 + d + d * (d + 1) / 2);
                int c = 0;
                expected[c++] = 1;
                for (int a = 0; a < d; ++a)
                    expected[c++] = xs[a];
                for (int a = 0; a < d; ++a)
                    for (int b = a; b < d; ++b)
                        expected[c++] = xs[a] * xs[b] * (a == b ? 1 / std::sqrt(2.0) : 1.0);
                break;
            }
            case Method::Hedgehog: {
                // The key map of layer 0, head 0: [exp(W_k x' + b_k), exp(-(W_k x' + b_k))].
                const FittedHeadMaps& maps = mapSpec.fittedMaps->fitted.at({0, 0});
                const VectorD u = maps.keyWeight * xs + maps.keyBias;
                expected.resize(2 * u.size());
                expected << u.array().exp(), (-u).array().exp();
                break;
            }
            default: QFAIL("only the feature maps have features");
        }
        const double error = (features.row(i).transpose() - expected).norm() / expected.norm();
        QVERIFY2(error < 1e-12, qPrintable(QString::number(error)));
    }
}

void TestEstimators::taylor2IsExactForItsPolynomial()
{
    // phi(x).phi(y) = 1 + t + t^2 / 2 with t = x'.y'.
    const int d = 10;
    const double s = 0.25;
    const auto phi = makeFeatureMap<double>(spec(Method::Taylor2, 1, ProjectionKind::Iid, 0), d, s);
    const VectorD x = randomVector(d, 1.3, 1), y = randomVector(d, 2.1, 2);
    const auto [fx, fy] = featuresOf(*phi, x, y);
    const double t = s * x.dot(y);
    QVERIFY(std::abs(fx.dot(fy) - (1 + t + t * t / 2)) < 1e-12);
}

void TestEstimators::estimatorsAreUnbiased_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("projection");
    for (const auto& [name, kind] :
         {std::pair{"positive", Method::FavorPositive},
          std::pair{"hyperbolic", Method::FavorHyperbolic}, std::pair{"trig", Method::FavorTrig}}) {
        QTest::newRow(qPrintable(QStringLiteral("%1 iid").arg(QLatin1String(name))))
            << int(kind) << int(ProjectionKind::Iid);
        QTest::newRow(qPrintable(QStringLiteral("%1 orthogonal").arg(QLatin1String(name))))
            << int(kind) << int(ProjectionKind::Orthogonal);
        QTest::newRow(qPrintable(QStringLiteral("%1 simplex").arg(QLatin1String(name))))
            << int(kind) << int(ProjectionKind::Simplex);
    }
}

void TestEstimators::estimatorsAreUnbiased()
{
    // E phi(x).phi(y) = exp(x.y): the Monte Carlo mean over 20000 independent W lies within 4
    // standard errors (estimated from the same samples) of exp(x.y).
    QFETCH(int, kind);
    QFETCH(int, projection);
    const int d = 16, m = 8, n = 20000;
    const VectorD x = randomVector(d, 0.8, 11), y = randomVector(d, 0.7, 12);
    const Samples s = sampleEstimator(Method(kind), ProjectionKind(projection), m, x, y, n);
    const double exact = std::exp(x.dot(y));
    QVERIFY2(std::abs(s.meanEstimate - exact) < 4 * s.estimateStandardError,
             qPrintable(QStringLiteral("mean %1, exact %2, se %3")
                            .arg(s.meanEstimate)
                            .arg(exact)
                            .arg(s.estimateStandardError)));
}

void TestEstimators::mseMatchesLemma2_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("angle");  // between x and y, in degrees
    for (const auto& [name, kind] :
         {std::pair{"positive", Method::FavorPositive},
          std::pair{"hyperbolic", Method::FavorHyperbolic}, std::pair{"trig", Method::FavorTrig}}) {
        for (const double angle : {30.0, 120.0})
            QTest::newRow(
                qPrintable(QStringLiteral("%1 %2 deg").arg(QLatin1String(name)).arg(angle)))
                << int(kind) << angle;
    }
}

void TestEstimators::mseMatchesLemma2()
{
    // The empirical MSE over 20000 iid draws of W agrees with the closed form of Lemma 2 within
    // 4 standard errors of the empirical MSE (estimated from the squared errors themselves).
    QFETCH(int, kind);
    QFETCH(double, angle);
    const int d = 16, m = 8, n = 20000;
    const double radians = angle * M_PI / 180;
    VectorD x = VectorD::Zero(d), y = VectorD::Zero(d);
    x[0] = 0.9;
    y[0] = 0.8 * std::cos(radians);
    y[1] = 0.8 * std::sin(radians);
    const Samples s = sampleEstimator(Method(kind), ProjectionKind::Iid, m, x, y, n);
    const double expected = lemma2Mse(Method(kind), m, x, y);
    QVERIFY2(std::abs(s.mse - expected) < 4 * s.mseStandardError,
             qPrintable(QStringLiteral("empirical %1 +- %2, Lemma 2 %3")
                            .arg(s.mse)
                            .arg(s.mseStandardError)
                            .arg(expected)));
}

void TestEstimators::orthogonalRowsLowerTheMse_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("positive") << int(Method::FavorPositive);
    QTest::newRow("hyperbolic") << int(Method::FavorHyperbolic);
    QTest::newRow("trig") << int(Method::FavorTrig);
}

void TestEstimators::orthogonalRowsLowerTheMse()
{
    // Theorem 2: at the same m <= d, orthogonal rows give a lower MSE than iid rows. The gap must
    // exceed 3 standard errors of the difference of the two empirical MSEs.
    QFETCH(int, kind);
    const int d = 16, m = 16, n = 20000;
    const VectorD x = randomVector(d, 1.0, 21), y = randomVector(d, 1.0, 22);
    const Samples iid = sampleEstimator(Method(kind), ProjectionKind::Iid, m, x, y, n);
    const Samples orthogonal =
        sampleEstimator(Method(kind), ProjectionKind::Orthogonal, m, x, y, n);
    const double gapError = std::sqrt(iid.mseStandardError * iid.mseStandardError +
                                      orthogonal.mseStandardError * orthogonal.mseStandardError);
    QVERIFY2(iid.mse - orthogonal.mse > 3 * gapError,
             qPrintable(QStringLiteral("iid %1, orthogonal %2, se of the gap %3")
                            .arg(iid.mse)
                            .arg(orthogonal.mse)
                            .arg(gapError)));
}

void TestEstimators::favorAttentionConvergesAsOneOverSqrtM()
{
    // The relative Frobenius error of P^ against P, averaged over 16 seeds, falls as m grows and
    // its log-log slope against m is near -1/2 (the estimator's standard deviation ~ m^-1/2).
    ExperimentSpec experiment;
    experiment.input.kind = InputKind::Random;
    experiment.input.length = 64;
    experiment.input.headDim = 16;
    experiment.approximation.projection = ProjectionKind::Iid;
    experiment.precision = Precision::Double;
    const AttentionInput input = buildInput(experiment.input);
    ComputeOptions options;
    options.matrices = false;
    options.features = false;
    const std::vector<int> ms = {64, 256, 1024, 4096};
    std::vector<double> errors;
    for (const int m : ms) {
        experiment.approximation.features = m;
        double sum = 0;
        for (int seed = 0; seed < 16; ++seed) {
            experiment.approximation.seed = seed;
            sum += compute(experiment, input, options).metrics.relFrobeniusAttention;
        }
        errors.push_back(sum / 16);
    }
    for (std::size_t i = 1; i < errors.size(); ++i)
        QVERIFY(errors[i] < errors[i - 1]);
    // Least-squares slope of log error against log m.
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < ms.size(); ++i) {
        mx += std::log(ms[i]) / ms.size();
        my += std::log(errors[i]) / ms.size();
    }
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < ms.size(); ++i) {
        sxy += (std::log(ms[i]) - mx) * (std::log(errors[i]) - my);
        sxx += (std::log(ms[i]) - mx) * (std::log(ms[i]) - mx);
    }
    const double slope = sxy / sxx;
    QVERIFY2(slope > -0.6 && slope < -0.4, qPrintable(QString::number(slope)));
}

QTEST_GUILESS_MAIN(TestEstimators)
#include "test_estimators.moc"

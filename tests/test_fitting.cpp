// Feature maps fitted to a trained head (Hedgehog, core/fitting): the distillation loss's analytic
// gradient against finite differences; a head whose softmax the map form represents exactly,
// recovered by the fit; hedgehog's and hedgehog-window's outputs against formulas written here
// from the maps' parameters, through the registry's generic paths (parallel, causal chunks,
// recurrent); refusals without maps; the fit of a tiny model's heads (grouped-query attention),
// its refusals and cancellation.

#include "attention/approximation.h"
#include "attention/exact_attention.h"
#include "attention/feature_maps.h"
#include "attention/linear_attention.h"
#include "attention/recurrent_attention.h"
#include "errors.h"
#include "experiment_spec.h"
#include "fitting/distillation.h"
#include "fitting/feature_map_file.h"
#include "fitting/feature_map_fit.h"
#include "model/safetensors.h"
#include "generation/generation.h"
#include "inputs/model_input.h"
#include "sessions/session.h"
#include "sweeps/downstream.h"
#include "model/language_model.h"
#include "parallel.h"

#include "fitted_maps_support.h"
#include "head_support.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

using namespace attnlab;
using namespace attnlab::test;

namespace {

const QString kTinyLlama = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-llama-gqa-f32");

// A random window: L rows of queries and keys of dimension d (entries N(0, 0.5^2)), and the exact
// rows of softmax(Q K^T) (causal or not).
FitWindow randomWindow(Eigen::Index length, int d, bool causal, std::uint64_t seed)
{
    Rng rng(seed, RandomStream::RandomInput, 5);
    FitWindow window;
    window.queries.resize(length, d);
    window.keys.resize(length, d);
    for (MatrixD* m : {&window.queries, &window.keys})
        for (Eigen::Index i = 0; i < m->size(); ++i)
            m->data()[i] = 0.5 * rng.normal();
    window.exact.resize(length, length);
    exactAttentionRows<double>(window.queries, window.keys, 1.0, causal, 0, window.exact);
    return window;
}

// phi(x) = [exp(W x' + b), exp(-(W x' + b))] at its true scale, x' = sqrt(s) x: the map as the
// paper writes it, computed here without the engine.
MatrixD hedgehogFeatures(const MatrixD& x, const MatrixD& weight, const VectorD& bias, double scale)
{
    MatrixD u = std::sqrt(scale) * x * weight.transpose();
    u.rowwise() += bias.transpose();
    MatrixD phi(x.rows(), 2 * weight.rows());
    phi << u.array().exp().matrix(), (-u).array().exp().matrix();
    return phi;
}

// P^ of hedgehog from the maps: A^ = phi_q(Q) phi_k(K)^T, masked, rows normalised.
MatrixD hedgehogRows(const FittedHeadMaps& maps, const MatrixD& q, const MatrixD& k, double scale,
                     bool causal)
{
    MatrixD a = hedgehogFeatures(q, maps.queryWeight, maps.queryBias, scale) *
                hedgehogFeatures(k, maps.keyWeight, maps.keyBias, scale).transpose();
    if (causal)
        a.triangularView<Eigen::StrictlyUpper>().setZero();
    return a.array().colwise() / a.rowwise().sum().array();
}

// P^ of hedgehog-window: exp(s q_i.k_j) for the w latest keys j <= i, gamma phi_q(q_i).phi_k(k_j)
// for the keys before them, rows normalised (causal).
MatrixD windowRows(const FittedHeadMaps& maps, const MatrixD& q, const MatrixD& k, double scale,
                   int w)
{
    const MatrixD mapped = hedgehogFeatures(q, maps.queryWeight, maps.queryBias, scale) *
                           hedgehogFeatures(k, maps.keyWeight, maps.keyBias, scale).transpose();
    MatrixD a = MatrixD::Zero(q.rows(), k.rows());
    for (Eigen::Index i = 0; i < q.rows(); ++i)
        for (Eigen::Index j = 0; j <= i; ++j)
            a(i, j) = j > i - w ? std::exp(scale * q.row(i).dot(k.row(j)))
                                : std::exp(maps.windowLogWeight) * mapped(i, j);
    return a.array().colwise() / a.rowwise().sum().array();
}

double maxDifference(const MatrixD& a, const MatrixD& b)
{
    return (a - b).cwiseAbs().maxCoeff();
}

// A head whose softmax the maps represent exactly, with d = 4, d_f = 1: queries x'_i =
// (0, 1, r_i1, r_i2) and keys y'_j = (a_j, log cosh a_j, 0, 0), so that x'_i.y'_j = log cosh a_j
// and P_ij is proportional to cosh a_j = (e^{a_j} + e^{-a_j}) / 2: exactly the rows of the maps
// W_q = 0, b_q = 0 (phi_q = [1, 1]) and W_k = (1, 0, 0, 0), b_k = 0 (phi_k = [e^a, e^-a]).
HeadFitData representableHead(std::uint64_t seed)
{
    HeadFitData data;
    Rng rng(seed, RandomStream::RandomInput, 11);
    for (int w = 0; w < 3; ++w) {
        const Eigen::Index length = 24;
        FitWindow window;
        window.queries = MatrixD::Zero(length, 4);
        window.keys = MatrixD::Zero(length, 4);
        for (Eigen::Index i = 0; i < length; ++i) {
            window.queries(i, 1) = 1;
            window.queries(i, 2) = rng.normal();
            window.queries(i, 3) = rng.normal();
            const double a = 2 * rng.normal();
            window.keys(i, 0) = a;
            window.keys(i, 1) = std::log(std::cosh(a));
        }
        window.exact.resize(length, length);
        exactAttentionRows<double>(window.queries, window.keys, 1.0, true, 0, window.exact);
        data.windows.push_back(window);
    }
    return data;
}

FittedHeadMaps representableMaps()
{
    FittedHeadMaps maps;
    maps.queryWeight = MatrixD::Zero(1, 4);
    maps.queryBias = VectorD::Zero(1);
    maps.keyWeight = MatrixD::Zero(1, 4);
    maps.keyWeight(0, 0) = 1;
    maps.keyBias = VectorD::Zero(1);
    return maps;
}

std::vector<int> repeatedText(const LanguageModel& model, int tokens)
{
    const std::vector<int> sentence = model.tokenizer().encode(
        QStringLiteral("In the beginning God created the heaven and the earth. "));
    std::vector<int> ids;
    while (int(ids.size()) < tokens)
        ids.insert(ids.end(), sentence.begin(), sentence.end());
    ids.resize(std::size_t(tokens));
    return ids;
}

}  // namespace

class TestFitting : public QObject {
    Q_OBJECT

private slots:
    void init() { setEngineThreads(2); }

    void gradientMatchesFiniteDifferences_data();
    void gradientMatchesFiniteDifferences();
    void representableHeadIsRecovered();
    void windowWeightOfARepresentableHead();
    void hedgehogEqualsItsFormulaThroughTheRegistry_data();
    void hedgehogEqualsItsFormulaThroughTheRegistry();
    void hedgehogWindowEqualsItsFormula();
    void recurrentFormsEqualTheCausalForms();
    void modelRunsUseEachLayersMaps();
    void refusesWithoutFittedMaps();
    void nanLossStopsTheFitAndNamesTheStep();
    void fitsATinyModelWithGroupedQueryHeads();
    void windowsAreSequencesAsTheTokenizerMakesThem();
    void fitRefusesBadRequests();
    void fitCanBeCancelled();
    void fileRoundTrip();
    void sessionKeepsTheFittedMaps();
    void mergingKeepsTheHeadsNotFittedAgain();
    void badFilesAreRefusedNamingTheFile_data();
    void badFilesAreRefusedNamingTheFile();
    void mapsOfAnotherModelOrHeadAreRefusedNamingTheFit();
};

void TestFitting::gradientMatchesFiniteDifferences_data()
{
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("featureDim");
    QTest::newRow("causal, d_f = d") << true << 5;
    QTest::newRow("causal, d_f = 3") << true << 3;
    QTest::newRow("not causal, d_f = 7") << false << 7;
}

void TestFitting::gradientMatchesFiniteDifferences()
{
    // Property: the analytic gradient of l(theta) equals its central differences, entry by entry,
    // to 1e-6 relative to the gradient's largest entry (h = 1e-5: truncation O(h^2 l''') ~ 1e-10).
    QFETCH(bool, causal);
    QFETCH(int, featureDim);
    const int d = 5;
    HeadFitData data;
    data.causal = causal;
    data.windows = {randomWindow(9, d, causal, 1), randomWindow(6, d, causal, 2)};
    const FittedHeadMaps maps = randomFittedMaps(d, 1, 1, featureDim, 3)->fitted.at({0, 0});
    VectorD gradient;
    distillationLoss(maps, data, {}, &gradient);
    const VectorD theta = packParameters(maps);
    QCOMPARE(gradient.size(), theta.size());
    const double h = 1e-5;
    VectorD numeric(theta.size());
    for (Eigen::Index p = 0; p < theta.size(); ++p) {
        FittedHeadMaps shifted = maps;
        VectorD plus = theta, minus = theta;
        plus[p] += h;
        minus[p] -= h;
        unpackParameters(plus, shifted);
        const double up = distillationLoss(shifted, data, {}, nullptr).crossEntropy;
        unpackParameters(minus, shifted);
        const double down = distillationLoss(shifted, data, {}, nullptr).crossEntropy;
        numeric[p] = (up - down) / (2 * h);
    }
    const double error = (gradient - numeric).cwiseAbs().maxCoeff() / numeric.cwiseAbs().maxCoeff();
    QVERIFY2(error < 1e-6, qPrintable(QString::number(error)));
    QVERIFY(numeric.cwiseAbs().maxCoeff() > 1e-3);  // the maps are not at a minimum
}

void TestFitting::representableHeadIsRecovered()
{
    // Property: at the maps that represent the head, the KL is 0 (up to rounding); from maps far
    // from them the fit recovers rows equal to the exact ones: mean row KL below 1e-4 and every
    // entry of P^ within 0.01 of P, on windows the fit did not see as well.
    const HeadFitData data = representableHead(1);
    QVERIFY(distillationLoss(representableMaps(), data, {}, nullptr).kl() < 1e-12);
    FittedHeadMaps start;
    start.queryWeight = MatrixD::Constant(1, 4, 0.4);
    start.queryBias = VectorD::Constant(1, 0.3);
    start.keyWeight = MatrixD::Constant(1, 4, -0.5);
    start.keyBias = VectorD::Constant(1, 0.2);
    const double initial = distillationLoss(start, data, {}, nullptr).kl();
    QVERIFY2(initial > 0.05, qPrintable(QString::number(initial)));
    DistillationSettings settings;
    settings.steps = 1500;
    settings.learningRate = 0.05;
    settings.batchWindows = 3;
    const FittedHeadMaps fitted = fitHeadMaps(start, data, settings, {});
    const double kl = distillationLoss(fitted, data, {}, nullptr).kl();
    QVERIFY2(kl < 1e-4, qPrintable(QString::number(kl)));
    const HeadFitData unseen = representableHead(2);
    for (const FitWindow& window : unseen.windows) {
        const MatrixD rows = hedgehogRows(fitted, window.queries, window.keys, 1.0, true);
        QVERIFY2(maxDifference(rows, window.exact) < 0.01,
                 qPrintable(QString::number(maxDifference(rows, window.exact))));
    }
}

void TestFitting::windowWeightOfARepresentableHead()
{
    // At the exact maps, phi_q.phi_k = 2 cosh a_j while exp(x'.y') = cosh a_j: the window variant's
    // rows are exact for gamma = 1/2, which fitWindowLogWeight finds (log gamma = -log 2).
    const double logGamma = fitWindowLogWeight(representableMaps(), representableHead(1), 5);
    QVERIFY2(std::abs(logGamma + std::log(2.0)) < 1e-9, qPrintable(QString::number(logGamma)));
}

void TestFitting::hedgehogEqualsItsFormulaThroughTheRegistry_data()
{
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("featureDim");
    QTest::newRow("causal") << true << 0;
    QTest::newRow("causal, d_f = 5") << true << 5;
    QTest::newRow("not causal") << false << 0;
}

void TestFitting::hedgehogEqualsItsFormulaThroughTheRegistry()
{
    // The registry's hedgehog (makeApproximation: FeatureMapAttention on the maps of layer 2,
    // head 1) gives the rows and the output of the formula computed here from W and b, in double
    // to 1e-10 and float to 1e-5; the features it exports are phi_q(Q) and phi_k(K).
    QFETCH(bool, causal);
    QFETCH(int, featureDim);
    const int d = 8;
    const HeadTensors head = randomHead(120, d, 2.0, 4);
    const double s = 1 / std::sqrt(double(d));
    ApproximationSpec spec;
    spec.kind = Method::Hedgehog;
    spec.fittedMaps = randomFittedMaps(d, 3, 2, featureDim);
    const FittedHeadMaps& maps = spec.fittedMaps->fitted.at({2, 1});
    const MatrixD expectedRows = hedgehogRows(maps, head.q, head.k, s, causal);
    const MatrixD expectedOutput = expectedRows * head.v;

    const auto inDouble = makeApproximation<double>(spec, d, head.q.rows(), s, HeadSite{2, 1});
    MatrixD rows(head.q.rows(), head.k.rows());
    inDouble->rows(head.q, head.k, causal)->rows(0, rows, nullptr);
    QVERIFY(maxDifference(rows, expectedRows) < 1e-10);
    const MatrixD output = inDouble->output(head.q, head.k, head.v, causal, 16).output;
    QVERIFY(maxDifference(output, expectedOutput) < 1e-10 * expectedOutput.cwiseAbs().maxCoeff());
    const FeatureMap<double>& phi = *inDouble->featureMap();
    QCOMPARE(phi.featureCount(), 2 * Eigen::Index(maps.featureDim()));
    QCOMPARE(featureCountOf(spec, d), phi.featureCount());
    const MatrixD phiQ = hedgehogFeatures(head.q, maps.queryWeight, maps.queryBias, s);
    const MatrixD phiK = hedgehogFeatures(head.k, maps.keyWeight, maps.keyBias, s);
    QVERIFY((trueScaleFeatures(phi, head.q, FeatureSide::Query) - phiQ).norm() <
            1e-10 * phiQ.norm());
    QVERIFY((trueScaleFeatures(phi, head.k, FeatureSide::Key) - phiK).norm() < 1e-10 * phiK.norm());

    const auto inFloat = makeApproximation<float>(spec, d, head.q.rows(), s, HeadSite{2, 1});
    const Matrix<float> outputFloat =
        inFloat
            ->output(head.q.cast<float>(), head.k.cast<float>(), head.v.cast<float>(), causal, 16)
            .output;
    QVERIFY(maxDifference(outputFloat.cast<double>(), expectedOutput) <
            1e-5 * expectedOutput.cwiseAbs().maxCoeff());
    // Another site has other maps: another output.
    const auto other = makeApproximation<double>(spec, d, head.q.rows(), s, HeadSite{1, 1});
    QVERIFY(maxDifference(other->output(head.q, head.k, head.v, causal, 16).output,
                          expectedOutput) > 1e-3);
}

void TestFitting::hedgehogWindowEqualsItsFormula()
{
    // hedgehog-window (Scatterbrain's machinery with the fitted maps and gamma) gives the rows
    // and output of its formula: window w = 7 exact, gamma phi_q.phi_k before it, causal.
    const int d = 8, w = 7;
    const HeadTensors head = randomHead(150, d, 2.0, 5);
    const double s = 1 / std::sqrt(double(d));
    ApproximationSpec spec;
    spec.kind = Method::HedgehogWindow;
    spec.setValue(windowParameter(), w);
    spec.fittedMaps = randomFittedMaps(d, 2, 2);
    const FittedHeadMaps& maps = spec.fittedMaps->fitted.at({1, 0});
    QVERIFY(std::abs(maps.windowLogWeight) > 0.05);  // gamma is not 1
    const MatrixD expectedRows = windowRows(maps, head.q, head.k, s, w);
    const auto approximation = makeApproximation<double>(spec, d, head.q.rows(), s, HeadSite{1, 0});
    MatrixD rows(head.q.rows(), head.k.rows());
    approximation->rows(head.q, head.k, true)->rows(0, rows, nullptr);
    QVERIFY2(maxDifference(rows, expectedRows) < 1e-10,
             qPrintable(QString::number(maxDifference(rows, expectedRows))));
    const MatrixD expectedOutput = expectedRows * head.v;
    const MatrixD output = approximation->output(head.q, head.k, head.v, true, 16).output;
    QVERIFY(maxDifference(output, expectedOutput) < 1e-10 * expectedOutput.cwiseAbs().maxCoeff());
}

void TestFitting::recurrentFormsEqualTheCausalForms()
{
    // A token at a time (makeRecurrentAttention: hedgehog's S_i, z_i; hedgehog-window's sliding
    // cache and the state of the keys that left it) equals the parallel causal form, in float, to
    // 1e-5 relative.
    const int d = 8;
    const HeadTensors head = randomHead(90, d, 2.0, 6);
    const double s = 1 / std::sqrt(double(d));
    for (const Method method : {Method::Hedgehog, Method::HedgehogWindow}) {
        ApproximationSpec spec;
        spec.kind = method;
        spec.setValue(windowParameter(), 11);
        spec.fittedMaps = randomFittedMaps(d, 2, 3);
        const HeadSite site{1, 2};
        const Matrix<float> q = head.q.cast<float>(), k = head.k.cast<float>(),
                            v = head.v.cast<float>();
        const Matrix<float> parallel =
            makeApproximation<float>(spec, d, q.rows(), s, site)->output(q, k, v, true, 16).output;
        const auto recurrence = makeRecurrentAttention(spec, d, s, site);
        Matrix<float> stepped(q.rows(), d);
        for (Eigen::Index i = 0; i < q.rows(); ++i) {
            Eigen::RowVectorXf y(d);
            QVERIFY(recurrence->step(q.row(i), k.row(i), v.row(i), y));
            stepped.row(i) = y;
        }
        const double error =
            (stepped - parallel).cwiseAbs().maxCoeff() / parallel.cwiseAbs().maxCoeff();
        QVERIFY2(error < 1e-5, qPrintable(methodInfo(method).name + QString::number(error)));
    }
}

void TestFitting::modelRunsUseEachLayersMaps()
{
    // In a whole model (the tiny Llama, every layer replaced), the maps of each layer and head:
    // generation's recurrent layers, token by token, give the logits of the forward pass whose
    // replacement runs the parallel causal form with the maps of (layer, head), to 1e-5 of the
    // largest logit; and model-eval's comparison (compareDownstream) reports the KL of those
    // logits against the exact ones.
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(kTinyLlama);
    const int d = model->headDim();
    const double scale = 1 / std::sqrt(double(d));
    const std::vector<int> text = repeatedText(*model, 40);
    for (const Method method : {Method::Hedgehog, Method::HedgehogWindow}) {
        ExperimentSpec spec;
        spec.approximation.kind = method;
        spec.approximation.setValue(windowParameter(), 6);
        spec.approximation.fittedMaps = randomFittedMaps(d, model->layers(), model->heads());
        ForwardOptions options;
        options.replaced.assign(std::size_t(model->layers()), true);
        options.replacement = [&](int layer, int head, const Matrix<float>& q,
                                  const Matrix<float>& k, const Matrix<float>& v) {
            return makeApproximation<float>(spec.approximation, d, q.rows(), scale,
                                            HeadSite{layer, head})
                ->output(q, k, v, true, 16)
                .output;
        };
        const ForwardResult replaced = model->forward(text, options);
        DecodingState state = approximateDecodingState(
            *model, spec.approximation, std::vector<bool>(std::size_t(model->layers()), true), 0);
        ForwardOptions decodeOptions;
        decodeOptions.captureQkv = false;
        const double largest = std::max(1.0, double(replaced.logits.cwiseAbs().maxCoeff()));
        for (std::size_t p = 0; p < text.size(); ++p) {
            const ForwardResult step = model->decode({text[p]}, state, decodeOptions);
            const double error =
                (step.logits.row(0) - replaced.logits.row(Eigen::Index(p))).cwiseAbs().maxCoeff();
            QVERIFY2(error < 1e-5 * largest, qPrintable(QString::number(error)));
        }
        const ForwardResult exact = model->forward(text);
        double kl = 0;
        for (Eigen::Index i = 0; i < exact.logits.rows(); ++i)
            kl += predictionKl(exact.logits.row(i).transpose(), replaced.logits.row(i).transpose());
        kl /= double(exact.logits.rows());
        const std::vector<int> all{0, 1};
        const DownstreamComparison comparison = compareDownstream(*model, text, exact, spec, all);
        QVERIFY2(std::abs(comparison.meanKl - kl) < 1e-6 * std::max(1.0, kl),
                 qPrintable(QStringLiteral("%1 against %2").arg(comparison.meanKl).arg(kl)));
        QVERIFY(kl > 1e-4);  // the maps are not exact
    }
}

void TestFitting::refusesWithoutFittedMaps()
{
    // Without maps, with maps of another head dimension, or for a head they do not hold, both
    // methods refuse with the reason (never the identity maps in silence).
    for (const Method method : {Method::Hedgehog, Method::HedgehogWindow}) {
        ApproximationSpec spec;
        spec.kind = method;
        const auto make = [&] { makeApproximation<float>(spec, 8, 10, 0.5, HeadSite{1, 1}); };
        QString message = thrownMessage<InputError>(make);
        QVERIFY2(message.contains(QStringLiteral("no fitted feature maps")) &&
                     message.contains(QStringLiteral("fit-features")) &&
                     message.contains(methodInfo(method).name),
                 qPrintable(message));
        spec.fittedMaps = randomFittedMaps(6, 2, 2);
        message = thrownMessage<InputError>(make);
        QVERIFY2(
            message.contains(QStringLiteral("d = 6")) && message.contains(QStringLiteral("d = 8")),
            qPrintable(message));
        spec.fittedMaps = randomFittedMaps(8, 1, 2);
        message = thrownMessage<InputError>(make);
        QVERIFY2(message.contains(QStringLiteral("layer 1, head 1")), qPrintable(message));
        QVERIFY(thrownMessage<InputError>([&] {
                    makeRecurrentAttention(spec, 8, 0.5, HeadSite{3, 0});
                }).contains(QStringLiteral("layer 3")));
    }
}

void TestFitting::nanLossStopsTheFitAndNamesTheStep()
{
    // A learning rate so large that the exponentials overflow: the fit stops with a message that
    // names the step and the learning rate it ran with, and does not call a finite loss "not a
    // number" (it said so of the cross-entropy when the gradient had overflowed); what it was
    // given is unchanged.
    HeadFitData data;
    data.windows = {randomWindow(30, 4, true, 3)};
    const FittedHeadMaps start = randomFittedMaps(4, 1, 1)->fitted.at({0, 0});
    const VectorD before = packParameters(start);
    DistillationSettings settings;
    settings.steps = 50;
    settings.learningRate = 1e4;
    const QString message =
        thrownMessage<InputError>([&] { fitHeadMaps(start, data, settings, {}); });
    QVERIFY2(message.contains(QStringLiteral("diverged at step")) &&
                 message.contains(QStringLiteral("learning rate (now 10000)")) &&
                 !message.contains(QStringLiteral("not a number")),
             qPrintable(message));
    QCOMPARE(packParameters(start), before);
}

void TestFitting::fitsATinyModelWithGroupedQueryHeads()
{
    // The tiny Llama (2 layers, 4 query heads on 2 key/value heads, d = 12): every head of the
    // layers asked is fitted, each with its own key map (query heads 0 and 1 share keys, not
    // maps), the KL on the training text falls, the curve has a value per step, and the maps
    // record the model, its shape and the fit. On one engine thread the heads are fitted in turn:
    // the first report's mean KL is head 0's first step and the other heads' starting KLs (a
    // head not begun counted as 0 made the window's curve start at a quarter of the fit's).
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(kTinyLlama);
    FeatureMapFitSpec spec;
    spec.layers = {1};
    spec.distillation.steps = 60;
    spec.trainingText = QStringLiteral("repeated.txt");
    int reports = 0;
    double firstMeanKl = -1;
    const int threads = engineThreads();
    setEngineThreads(1);
    const FeatureMapFit fit = fitFeatureMaps(*model, repeatedText(*model, 600), spec, {},
                                             [&](const FeatureMapFitProgress& p) {
                                                 QVERIFY(p.done <= p.total);
                                                 if (reports++ == 0)
                                                     firstMeanKl = p.meanKl;
                                             });
    setEngineThreads(threads);
    QVERIFY(reports > 0);
    const double expectedFirst = (fit.heads[0].curve.front() + fit.heads[1].initialKl +
                                  fit.heads[2].initialKl + fit.heads[3].initialKl) /
                                 4;
    QVERIFY2(std::abs(firstMeanKl - expectedFirst) <= 1e-6 * expectedFirst,
             qPrintable(QStringLiteral("%1 against %2").arg(firstMeanKl).arg(expectedFirst)));
    QCOMPARE(fit.heads.size(), std::size_t(4));
    QCOMPARE(fit.maps->fitted.size(), std::size_t(4));
    QCOMPARE(fit.maps->model, QStringLiteral("tiny-llama-gqa-f32"));
    QCOMPARE(fit.maps->headDim, 12);
    QCOMPARE(fit.maps->featureDim, 12);
    QCOMPARE(fit.maps->layers, 2);
    QCOMPARE(fit.maps->heads, 4);
    QCOMPARE(fit.windows, 10);  // 600 tokens in windows of the model's 64 positions
    for (const HeadFitRecord& head : fit.heads) {
        QCOMPARE(head.layer, 1);
        QCOMPARE(head.curve.size(), std::size_t(60));
        QVERIFY2(head.finalKl < 0.8 * head.initialKl,
                 qPrintable(QStringLiteral("%1 -> %2").arg(head.initialKl).arg(head.finalKl)));
    }
    QVERIFY((fit.maps->find(1, 0)->keyWeight - fit.maps->find(1, 1)->keyWeight).norm() > 1e-3);
    QVERIFY(!fit.maps->find(0, 0));
    requireFeatureMapsFit(*fit.maps, kTinyLlama, model->info());
    const QString message = thrownMessage<InputError>([&] {
        requireFeatureMapsFit(
            *fit.maps, QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-qwen2-f32"),
            loadLanguageModel(QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-qwen2-f32"))->info());
    });
    QVERIFY2(message.contains(QStringLiteral("tiny-llama-gqa-f32")) &&
                 message.contains(QStringLiteral("tiny-qwen2-f32")),
             qPrintable(message));
}

// The training windows are the model's context (256 tokens at most) and each is a sequence as the
// tokenizer makes one: the built-in Llama's windows each begin with its BOS, followed by the
// text's next 255 ids; GPT-2's tokenizer adds nothing, so its windows are the ids cut at its 128
// positions.
void TestFitting::windowsAreSequencesAsTheTokenizerMakesThem()
{
    const QString text = QStringLiteral("In the beginning God created the heaven and the earth. ");
    for (const char* id : {"builtin-kjv-llama", "builtin-kjv-gpt2"}) {
        const std::shared_ptr<const LanguageModel> model = loadModel(QString::fromLatin1(id));
        const std::vector<int> ids = model->tokenizer().encode(text.repeated(60));
        const int before = model->tokenizer().specialIdsBefore();
        QCOMPARE(before, QByteArray(id) == "builtin-kjv-llama" ? 1 : 0);
        QVERIFY(ids.size() > 600);
        const std::vector<std::vector<int>> windows = fitWindows(*model, ids);
        std::vector<int> joined(ids.begin(), ids.begin() + before);
        for (const std::vector<int>& window : windows) {
            QVERIFY(int(window.size()) <= std::min(model->positions(), kFitWindowTokens));
            QVERIFY(std::equal(ids.begin(), ids.begin() + before, window.begin()));
            joined.insert(joined.end(), window.begin() + before, window.end());
        }
        QCOMPARE(int(windows.front().size()), std::min(model->positions(), kFitWindowTokens));
        QCOMPARE(joined, ids);
    }
}

void TestFitting::fitRefusesBadRequests()
{
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(kTinyLlama);
    FeatureMapFitSpec spec;
    spec.distillation.steps = 2;
    QString message =
        thrownMessage<InputError>([&] { fitFeatureMaps(*model, repeatedText(*model, 300), spec); });
    QVERIFY2(
        message.contains(QStringLiteral("300 tokens")) && message.contains(QStringLiteral("512")),
        qPrintable(message));
    spec.layers = {2};
    message =
        thrownMessage<InputError>([&] { fitFeatureMaps(*model, repeatedText(*model, 600), spec); });
    QVERIFY2(message.contains(QStringLiteral("layer 2")), qPrintable(message));
    spec.layers = {0};
    spec.distillation.learningRate = 1e4;
    spec.distillation.steps = 40;
    message =
        thrownMessage<InputError>([&] { fitFeatureMaps(*model, repeatedText(*model, 600), spec); });
    QVERIFY2(message.contains(QStringLiteral("layer 0, head")) &&
                 message.contains(QStringLiteral("diverged at step")),
             qPrintable(message));
}

void TestFitting::fitCanBeCancelled()
{
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(kTinyLlama);
    FeatureMapFitSpec spec;
    spec.distillation.steps = 100000;
    std::atomic<int> polls = 0;
    QVERIFY_THROWS_EXCEPTION(Cancelled, fitFeatureMaps(*model, repeatedText(*model, 600), spec, {},
                                                       {}, [&] { return ++polls > 50; }));
}

void TestFitting::fileRoundTrip()
{
    // Written and read back: the same heads, to float precision, and the same metadata; the
    // tensors are named by layer, head and side, the metadata say what the maps are.
    QTemporaryDir folder;
    auto maps = std::make_shared<FittedFeatureMaps>(*randomFittedMaps(6, 3, 2, 4));
    maps->fitted.erase({1, 0});
    maps->trainingText = QStringLiteral("kjv-fit.txt");
    maps->steps = 123;
    const QString path = folder.filePath(QStringLiteral("sub/maps.safetensors"));
    writeFeatureMaps(*maps, path);
    const std::shared_ptr<const FittedFeatureMaps> read = readFeatureMaps(path);
    QCOMPARE(read->file, path);
    QCOMPARE(read->model, maps->model);
    QCOMPARE(read->layers, 3);
    QCOMPARE(read->heads, 2);
    QCOMPARE(read->headDim, 6);
    QCOMPARE(read->featureDim, 4);
    QCOMPARE(read->window, maps->window);
    QCOMPARE(read->steps, 123);
    QCOMPARE(read->trainingText, QStringLiteral("kjv-fit.txt"));
    QCOMPARE(read->fitted.size(), std::size_t(5));
    for (const auto& [site, head] : maps->fitted) {
        const FittedHeadMaps* other = read->find(site.first, site.second);
        QVERIFY(other);
        QVERIFY((packParameters(*other) - packParameters(head)).cwiseAbs().maxCoeff() < 1e-6);
        QVERIFY(std::abs(other->windowLogWeight - head.windowLogWeight) < 1e-6);
    }
    const SafetensorsFile file(path);
    QVERIFY(file.find(QStringLiteral("layers.2.heads.1.query.weight")));
    QVERIFY(file.find(QStringLiteral("layers.2.heads.1.key.bias")));
    QCOMPARE(file.metadata().value(QStringLiteral("head_dim")).toString(), QStringLiteral("6"));
    QCOMPARE(file.metadata().value(QStringLiteral("model")).toString(), maps->model);
}

void TestFitting::sessionKeepsTheFittedMaps()
{
    // Maps fitted in the window (no file) are written beside the session, which names the file
    // relative to its folder; reading the session reads them back. A session naming a feature-map
    // file that is missing is refused naming it.
    QTemporaryDir folder;
    Session session;
    session.spec.approximation.kind = Method::Hedgehog;
    session.spec.approximation.fittedMaps = randomFittedMaps(8, 2, 2);
    const QString path = folder.filePath(QStringLiteral("lesson.attnlab"));
    writeSession(path, session);
    const QString beside = folder.filePath(QStringLiteral("lesson.maps.safetensors"));
    QVERIFY(QFile::exists(beside));
    const Session read = readSession(path);
    QCOMPARE(read.spec.featureMapFile, beside);
    QVERIFY(read.spec.approximation.fittedMaps);
    QCOMPARE(read.spec.approximation.fittedMaps->fitted.size(), std::size_t(4));
    QVERIFY((packParameters(read.spec.approximation.fittedMaps->fitted.at({1, 1})) -
             packParameters(session.spec.approximation.fittedMaps->fitted.at({1, 1})))
                .cwiseAbs()
                .maxCoeff() < 1e-6);
    QFile::remove(beside);
    const QString message = thrownMessage<InputError>([&] { readSession(path); });
    QVERIFY2(message.contains(path) && message.contains(beside), qPrintable(message));
}

void TestFitting::mergingKeepsTheHeadsNotFittedAgain()
{
    // Fitting one head again adds it to the session's maps of the same model; maps of another
    // model, or of another d_f, replace them.
    auto kept = std::make_shared<FittedFeatureMaps>(*randomFittedMaps(8, 2, 2, 0, 1));
    auto fresh = std::make_shared<FittedFeatureMaps>(*randomFittedMaps(8, 2, 2, 0, 2));
    fresh->fitted.erase({0, 0});
    fresh->fitted.erase({0, 1});
    fresh->fitted.erase({1, 0});
    std::shared_ptr<const FittedFeatureMaps> merged = mergedFeatureMaps(kept.get(), *fresh);
    QCOMPARE(merged->fitted.size(), std::size_t(4));
    QCOMPARE(packParameters(merged->fitted.at({1, 1})), packParameters(fresh->fitted.at({1, 1})));
    QCOMPARE(packParameters(merged->fitted.at({0, 0})), packParameters(kept->fitted.at({0, 0})));
    fresh->model = QStringLiteral("another");
    QCOMPARE(mergedFeatureMaps(kept.get(), *fresh)->fitted.size(), std::size_t(1));
}

void TestFitting::badFilesAreRefusedNamingTheFile_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not safetensors") << "garbage"
                                     << "header";
    QTest::newRow("another safetensors file") << "content"
                                              << "not a file of fitted feature maps";
    QTest::newRow("missing tensor") << "missing"
                                    << "layers.0.heads.1.key.bias";
    QTest::newRow("wrong shape") << "shape"
                                 << "layers.0.heads.0.query.weight";
    QTest::newRow("not finite") << "nan"
                                << "layers.0.heads.0.query.bias";
    QTest::newRow("head past the metadata") << "past"
                                            << "past the metadata";
    QTest::newRow("unknown tensor") << "unknown"
                                    << "extra.weight";
    QTest::newRow("no head dimension") << "metadata"
                                       << "head_dim";
}

void TestFitting::badFilesAreRefusedNamingTheFile()
{
    QFETCH(QString, what);
    QFETCH(QString, expected);
    QTemporaryDir folder;
    const QString path = folder.filePath(QStringLiteral("bad.safetensors"));
    FittedFeatureMaps maps = *randomFittedMaps(4, 1, 2, 3);
    QByteArray bytes = featureMapFileBytes(maps);
    // The header as JSON, to be edited and written back (data unchanged).
    const quint64 length = qFromLittleEndian<quint64>(bytes.constData());
    QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, qsizetype(length))).object();
    const QByteArray data = bytes.mid(8 + qsizetype(length));
    const auto rewrite = [&](const QByteArray& extraData = {}) {
        QByteArray text = QJsonDocument(header).toJson(QJsonDocument::Compact);
        text.append(QByteArray((8 - text.size() % 8) % 8, ' '));
        bytes = QByteArray(8, '\0');
        qToLittleEndian(quint64(text.size()), bytes.data());
        bytes += text + data + extraData;
    };
    const auto entry = [&](const QString& name) { return header.value(name).toObject(); };
    QJsonObject metadata = header.value(QStringLiteral("__metadata__")).toObject();
    if (what == QLatin1String("garbage")) {
        bytes = QByteArray("not a safetensors file at all");
    } else if (what == QLatin1String("content")) {
        metadata.remove(QStringLiteral("content"));
        header.insert(QStringLiteral("__metadata__"), metadata);
        rewrite();
    } else if (what == QLatin1String("missing")) {
        header.remove(QStringLiteral("layers.0.heads.1.key.bias"));
        rewrite();
    } else if (what == QLatin1String("shape")) {
        QJsonObject weight = entry(QStringLiteral("layers.0.heads.0.query.weight"));
        weight.insert(QStringLiteral("shape"), QJsonArray{4, 3});
        header.insert(QStringLiteral("layers.0.heads.0.query.weight"), weight);
        rewrite();
    } else if (what == QLatin1String("nan")) {
        const QJsonArray offsets = entry(QStringLiteral("layers.0.heads.0.query.bias"))
                                       .value(QStringLiteral("data_offsets"))
                                       .toArray();
        rewrite();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(bytes.data() + bytes.size() - data.size() + offsets[0].toInt(), &nan, 4);
    } else if (what == QLatin1String("past")) {
        metadata.insert(QStringLiteral("heads"), QStringLiteral("1"));
        header.insert(QStringLiteral("__metadata__"), metadata);
        rewrite();
    } else if (what == QLatin1String("unknown")) {
        header.insert(QStringLiteral("extra.weight"),
                      QJsonObject{{"dtype", "F32"},
                                  {"shape", QJsonArray{1}},
                                  {"data_offsets", QJsonArray{data.size(), data.size() + 4}}});
        rewrite(QByteArray(4, '\0'));
    } else if (what == QLatin1String("metadata")) {
        metadata.remove(QStringLiteral("head_dim"));
        header.insert(QStringLiteral("__metadata__"), metadata);
        rewrite();
    }
    writeBytes(path, bytes);
    const QString message = thrownMessage<InputError>([&] { readFeatureMaps(path); });
    QVERIFY2(message.contains(path) && message.contains(expected), qPrintable(message));
}

// Property: maps fitted to another model, or holding no maps for the head asked for, are refused
// saying to fit them (the remedies FitMaps and FitLayers, whose place each front end names), with
// no command-line option in the message (it named fit-features --model and --layers).
void TestFitting::mapsOfAnotherModelOrHeadAreRefusedNamingTheFit()
{
    const std::shared_ptr<const FittedFeatureMaps> maps = randomFittedMaps(4, 2, 2);
    Remedies remedies;
    QString message = thrownMessage<InputError>(
        [&] { requireMapsOfModel(*maps, "/models/other-model", 2, 2, 4); }, &remedies);
    QVERIFY2(message.contains(QStringLiteral("fit them to this model")) &&
                 !message.contains(QStringLiteral("--")),
             qPrintable(message));
    QCOMPARE(remedies, Remedies{Remedy::FitMaps});
    ApproximationSpec spec;
    spec.kind = Method::Hedgehog;
    spec.fittedMaps = maps;
    message = thrownMessage<InputError>([&] { fittedHeadMaps(spec, 4, {3, 0}); }, &remedies);
    QVERIFY2(message.contains(QStringLiteral("no maps for layer 3")) &&
                 message.contains(QStringLiteral("fit that layer too")) &&
                 !message.contains(QStringLiteral("--")),
             qPrintable(message));
    QCOMPARE(remedies, Remedies{Remedy::FitLayers});
}

QTEST_GUILESS_MAIN(TestFitting)
#include "test_fitting.moc"

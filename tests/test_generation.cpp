// Generation with exact and approximate attention, token by token (core/model's decode with its
// key/value cache, core/attention's recurrent forms, core/generation):
// - the exact incremental pass gives the logits of an independent PyTorch forward pass
//   (tests/data/models/make_generation_references.py) at every generated position, on the tiny
//   fixtures (GPT-2, Llama with GQA, Mistral with its window, Qwen2, Pythia) and the built-in
//   model, and the greedy continuation the reference's wherever its top two logits are apart;
// - the incremental logits equal the model's own full forward pass, token by token or read in
//   one call;
// - the recurrent forms (FAVOR+, elu+1, local attention and the other maps) give the parallel
//   causal form's outputs, head by head and through a whole model;
// - the sampler's draws, the memory the runs report, the followed head's state (at the prompt's
//   tokens too, without changing the continuation) and what FollowedSteps gathers of it for the
//   Stepper page, and the refusals of bad input.

#include "attention/approximation.h"
#include "attention/feature_maps.h"
#include "attention/recurrent_attention.h"
#include "errors.h"
#include "generation/followed_steps.h"
#include "generation/generation.h"
#include "generation/token_sampler.h"
#include "inputs/builtin_models.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "model/language_model.h"
#include "model_support.h"
#include "parallel.h"
#include "fitted_maps_support.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <numeric>

using namespace attnlab;
using namespace attnlab::test;

namespace {

// The tolerance for the logits against the float64 reference: the float32 pass differs
// from it by about 1e-6 of the largest logit (test_model, test_llama_model).
constexpr double kReferenceTolerance = 1e-4;
// Where the reference's two largest logits are closer than this, a float32 pass may pick the
// other one.
constexpr double kTieGap = 1e-3;
// The incremental pass against the full pass, both float32: the same products summed in another
// order (a row against the cache rather than blocks of rows), so about 1e-6 of the largest
// logit (up to 20 for the built-in model).
constexpr double kIncrementalTolerance = 2e-5;
// The recurrent form against the parallel causal form, both float32: the state summed key by key
// against the chunked sums; the 1e-5, relative to the largest output entry (1 or more).
constexpr double kRecurrentTolerance = 1e-5;

const QString kBuiltinReference = kModelFixtures + QStringLiteral("/kjv-gpt2-generation");

// What make_generation_references.py wrote for one model.
struct GenerationReference {
    std::vector<int> prompt;
    std::vector<int> continuation;
    std::vector<double> gaps;
    NpyArray logits;  // N x vocab
};

GenerationReference readReference(const QString& folder)
{
    QFile file(folder + QStringLiteral("/generation.json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    GenerationReference reference;
    for (const QJsonValue id : json[QStringLiteral("prompt")].toArray())
        reference.prompt.push_back(id.toInt());
    for (const QJsonValue id : json[QStringLiteral("continuation")].toArray())
        reference.continuation.push_back(id.toInt());
    for (const QJsonValue gap : json[QStringLiteral("top_two_gap")].toArray())
        reference.gaps.push_back(gap.toDouble());
    reference.logits = readNpy(folder + QStringLiteral("/generation_logits.npy"));
    return reference;
}

// The model folder and the folder of its generation reference.
std::pair<QString, QString> folders(const QString& fixture)
{
    if (fixture == QLatin1String(kBuiltinKjvGpt2))
        return {builtinModelFolder(fixture), kBuiltinReference};
    const QString folder = kModelFixtures + QLatin1Char('/') + fixture;
    return {folder, folder + QStringLiteral("/reference")};
}

const char* const kFixtures[] = {
    "tiny-gpt2-prefixed-f32",     "tiny-gpt2-f16",  "tiny-llama-gqa-f32",
    "tiny-mistral-f32",           "tiny-qwen2-f32", "tiny-pythia-parallel-f32",
    "tiny-pythia-sequential-f32", kBuiltinKjvGpt2};

void addFixtureRows()
{
    QTest::addColumn<QString>("fixture");
    for (const char* fixture : kFixtures)
        QTest::newRow(fixture) << QString::fromLatin1(fixture);
}

// The prompt followed by the reference's continuation.
std::vector<int> referenceText(const GenerationReference& reference)
{
    std::vector<int> ids = reference.prompt;
    ids.insert(ids.end(), reference.continuation.begin(), reference.continuation.end());
    return ids;
}

// max |a - b| over two logit rows.
double largestDifference(const Eigen::Ref<const Vector<float>>& a,
                         const Eigen::Ref<const Vector<float>>& b)
{
    return (a - b).cwiseAbs().maxCoeff();
}

// An approximation of the registry's method with its default parameters (m = 16 features keeps
// the tiny models' runs short; any m gives the same agreement between the two forms).
ApproximationSpec approximationOf(Method method)
{
    ApproximationSpec spec;
    spec.kind = method;
    spec.features = 16;
    spec.seed = 7;
    spec.setValue(windowParameter(), 4);
    return spec;
}

// A request for `tokens` tokens after `prompt`, with approximationOf(method) in the replaced
// layers (the spec's defaults otherwise).
GenerationSpec generationSpec(const QString& prompt, int tokens, Method method)
{
    GenerationSpec spec;
    spec.prompt = prompt;
    spec.tokens = tokens;
    spec.approximation = approximationOf(method);
    return spec;
}

// The built-in KJV GPT-2 (4 layers, heads of dimension 64), the model of most tests here.
std::shared_ptr<const LanguageModel> kjvGpt2()
{
    return loadModel(QString::fromLatin1(kBuiltinKjvGpt2));
}

// Adds a followed head's phi(k_i) v_i^T and phi(k_i) to the sums s and z (its own head's map phi)
// and checks that the head reports them as S_i and z_i, with phi(q_i), the denominator
// phi(q_i)^T z_i and, when it reports it, y_i = S_i^T phi(q_i) / phi(q_i)^T z_i (to 1e-5 of their
// largest entries). False, with a message, where they differ.
bool addAndCheck(const FeatureMap<double>& phi, const FollowedHead& head, MatrixD& s, VectorD& z)
{
    const VectorD key = trueScaleFeatures(phi, MatrixD(head.key.transpose())).row(0);
    const VectorD query = trueScaleFeatures(phi, MatrixD(head.query.transpose())).row(0);
    s += key * head.value.transpose();
    z += key;
    const VectorD y = s.transpose() * query / query.dot(z);
    const bool same =
        head.hasState && (head.state - s).cwiseAbs().maxCoeff() < 1e-5 * s.cwiseAbs().maxCoeff() &&
        (head.normalizer - z).cwiseAbs().maxCoeff() < 1e-5 * z.maxCoeff() &&
        (head.queryFeatures - query).cwiseAbs().maxCoeff() < 1e-5 * query.maxCoeff() &&
        std::abs(head.denominator - query.dot(z)) < 1e-5 * query.dot(z) &&
        (head.output.size() == 0 ||
         (head.output - y).cwiseAbs().maxCoeff() <
             kRecurrentTolerance * std::max(1.0, y.cwiseAbs().maxCoeff()));
    if (!same)
        qWarning("the followed head's state differs from the sums of its keys and values");
    return same;
}

}  // namespace

class TestGeneration : public QObject {
    Q_OBJECT

private slots:
    // One engine thread: these tests check numbers, and the models are small (a team of threads
    // per small product would wait on each other on a busy machine).
    void initTestCase() { setEngineThreads(1); }
    void exactDecodingMatchesTheReference_data() { addFixtureRows(); }
    void exactDecodingMatchesTheReference();
    void greedyContinuationMatchesTheReference_data() { addFixtureRows(); }
    void greedyContinuationMatchesTheReference();
    void incrementalLogitsEqualTheFullPass_data() { addFixtureRows(); }
    void incrementalLogitsEqualTheFullPass();
    void recurrentHeadEqualsTheParallelForm_data();
    void recurrentHeadEqualsTheParallelForm();
    void recurrentModelEqualsTheParallelForm_data();
    void recurrentModelEqualsTheParallelForm();
    void samplerFollowsTheDistribution();
    void samplerChoosesByTheSharedDraw();
    void exactApproximationGivesTheSameContinuation();
    void memoryIsTheCacheAgainstTheState_data();
    void memoryIsTheCacheAgainstTheState();
    void followedHeadStateIsTheSumOfItsKeys();
    void followedHeadIsReportedAtThePromptsTokens();
    void followedStepsGatherTheHeadForTheStepper();
    void followedStepsRefuseAHeadWithoutState();
    void badInputIsRefused_data();
    void badInputIsRefused();
    void cancelledStopsBetweenLayers();
    void largeRunIsAnnouncedBeforeW();
};

// Property: fed the reference's own text, the exact incremental pass (prompt read in one call,
// then a token at a time through the key/value cache) gives at every generated position the
// logits of the independent PyTorch pass to 1e-4, and its argmax is the reference's token
// wherever the reference's top two logits are more than 1e-3 apart.
void TestGeneration::exactDecodingMatchesTheReference()
{
    QFETCH(QString, fixture);
    const auto [modelFolder, referenceFolder] = folders(fixture);
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(modelFolder);
    const GenerationReference reference = readReference(referenceFolder);
    const std::vector<int> text = referenceText(reference);
    const Eigen::Index vocabulary = model->vocabularySize();
    QCOMPARE(reference.logits.shape.at(1), qint64(vocabulary));

    DecodingState state = model->decodingState();
    const std::vector<int> prompt(reference.prompt.begin(), reference.prompt.end() - 1);
    ForwardOptions options;
    options.captureQkv = false;
    model->decode(prompt, state, options);
    const TokenSampler greedy(SamplingSettings{});
    for (std::size_t k = 0; k < reference.continuation.size(); ++k) {
        const ForwardResult step = model->decode({text[prompt.size() + k]}, state, options);
        const Vector<float> expected =
            Eigen::Map<const VectorD>(reference.logits.values.data() + k * vocabulary, vocabulary)
                .cast<float>();
        const double error = largestDifference(step.logits.row(0).transpose(), expected);
        QVERIFY2(
            error < kReferenceTolerance,
            qPrintable(QStringLiteral("step %1: |logits - reference| = %2").arg(k).arg(error)));
        if (reference.gaps[k] > kTieGap)
            QCOMPARE(greedy.choose(step.logits.row(0).transpose(), 0), reference.continuation[k]);
    }
    QCOMPARE(state.position(), Eigen::Index(text.size()) - 1);
}

// Property: the Generation's exact continuation (greedy, free-running) is the reference's up to
// its first step whose top two logits are within 1e-3 (where the two may part), and all of it
// when there is none.
void TestGeneration::greedyContinuationMatchesTheReference()
{
    QFETCH(QString, fixture);
    const auto [modelFolder, referenceFolder] = folders(fixture);
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(modelFolder);
    const GenerationReference reference = readReference(referenceFolder);
    GenerationSpec spec;
    spec.promptIds = reference.prompt;
    spec.tokens = int(reference.continuation.size());
    spec.approximation = approximationOf(Method::Elu);
    Generation generation(model, spec);
    QVERIFY(generation.promptIds() == reference.prompt);
    const GenerationResult result = runGeneration(generation);
    std::size_t firstTie = reference.gaps.size();
    for (std::size_t k = 0; k < reference.gaps.size(); ++k)
        if (reference.gaps[k] <= kTieGap) {
            firstTie = k;
            break;
        }
    for (std::size_t k = 0; k < firstTie; ++k)
        QCOMPARE(result.exactIds[k], reference.continuation[k]);
}

// Property: the incremental logits of token p are the full forward pass's row p on the same
// text, whether the text is read a token at a time or the first half in one call.
void TestGeneration::incrementalLogitsEqualTheFullPass()
{
    QFETCH(QString, fixture);
    const auto [modelFolder, referenceFolder] = folders(fixture);
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(modelFolder);
    const std::vector<int> text = referenceText(readReference(referenceFolder));
    const ForwardResult full = model->forward(text);
    const double scale = std::max(1.0, double(full.logits.cwiseAbs().maxCoeff()));

    DecodingState oneByOne = model->decodingState(Eigen::Index(text.size()));
    DecodingState halves = model->decodingState();
    const std::size_t half = text.size() / 2;
    const ForwardResult first =
        model->decode(std::vector<int>(text.begin(), text.begin() + half), halves);
    for (std::size_t p = 0; p < half; ++p)
        QVERIFY(largestDifference(first.logits.row(p).transpose(), full.logits.row(p).transpose()) <
                kIncrementalTolerance * scale);
    for (std::size_t p = 0; p < text.size(); ++p) {
        const ForwardResult step = model->decode({text[p]}, oneByOne);
        const double error =
            largestDifference(step.logits.row(0).transpose(), full.logits.row(p).transpose());
        QVERIFY2(error < kIncrementalTolerance * scale,
                 qPrintable(QStringLiteral("position %1: %2").arg(p).arg(error)));
        if (p >= half) {
            const ForwardResult second = model->decode({text[p]}, halves);
            QVERIFY(largestDifference(second.logits.row(0).transpose(),
                                      full.logits.row(p).transpose()) <
                    kIncrementalTolerance * scale);
        }
    }
    // The cache holds 2 L d floats per key/value head and layer.
    QCOMPARE(oneByOne.bytes(), 2.0 * double(text.size()) * model->headDim() *
                                   model->keyValueHeads() * model->layers() * sizeof(float));
}

void TestGeneration::recurrentHeadEqualsTheParallelForm_data()
{
    QTest::addColumn<int>("method");
    for (const MethodInfo& info : approximationMethods())
        if (info.hasRecurrentForm)
            QTest::newRow(qPrintable(info.name)) << int(info.method);
}

namespace {

// The condition of each row of causal linear attention with phi: sum_j |a_ij| / |sum_j a_ij|,
// a_ij = phi(q_i).phi(k_j) (j <= i), in double: float sums of terms of both signs are accurate to
// about this many times their rounding. 1 for the maps whose features are positive.
VectorD rowConditions(const ApproximationSpec& spec, const Matrix<float>& q, const Matrix<float>& k,
                      double scale, int head)
{
    const auto phi = makeFeatureMap<double>(spec, int(q.cols()), scale, head);
    const MatrixD a = trueScaleFeatures(*phi, MatrixD(q.cast<double>())) *
                      trueScaleFeatures(*phi, MatrixD(k.cast<double>())).transpose();
    VectorD conditions(q.rows());
    for (Eigen::Index i = 0; i < q.rows(); ++i)
        conditions[i] =
            a.row(i).head(i + 1).cwiseAbs().sum() / std::abs(a.row(i).head(i + 1).sum());
    return conditions;
}

}  // namespace

// Property: a head's recurrent form, fed the built-in model's queries, keys and values token by
// token, gives the outputs of the method's parallel causal form (chunked linear attention, or
// local attention's band) to 1e-5 of the largest output entry, in every head of a layer (each
// with its own W); for the maps whose features can be negative (trigonometric, Taylor2), 1e-5
// times the row's condition (rowConditions): near a denominator that cancels to almost 0, both
// forms are only that accurate.
void TestGeneration::recurrentHeadEqualsTheParallelForm()
{
    QFETCH(int, method);
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    const GenerationReference reference = readReference(kBuiltinReference);
    const ForwardResult forward = model->forward(referenceText(reference));
    const LayerQkv& layer = forward.layers[1];
    const int d = model->headDim();
    const double scale = 1 / std::sqrt(double(d));
    const ApproximationSpec spec = withFittedMaps(approximationOf(Method(method)), d);
    const bool signed_ = methodInfo(spec.kind).canBeNegative;
    for (int h = 0; h < model->heads(); ++h) {
        const Matrix<float> q = layer.q.middleCols(h * d, d);
        const Matrix<float> k = layer.k.middleCols(h * d, d);
        const Matrix<float> v = layer.v.middleCols(h * d, d);
        const std::unique_ptr<Approximation<float>> parallel =
            makeApproximation<float>(spec, d, q.rows(), scale, h);
        parallel->fit(q, k, true);
        const Matrix<float> expected = parallel->output(q, k, v, true, 16).output;
        const VectorD conditions =
            signed_ ? rowConditions(spec, q, k, scale, h) : VectorD::Ones(q.rows());
        const std::unique_ptr<RecurrentAttention> recurrence =
            makeRecurrentAttention(spec, d, scale, h);
        const double largest = std::max(1.0, double(expected.cwiseAbs().maxCoeff()));
        Eigen::RowVectorXf y(d);
        for (Eigen::Index i = 0; i < q.rows(); ++i) {
            recurrence->step(q.row(i), k.row(i), v.row(i), y);
            const double error = (y - expected.row(i)).cwiseAbs().maxCoeff();
            QVERIFY2(error < kRecurrentTolerance * largest * conditions[i],
                     qPrintable(QStringLiteral("head %1, position %2: %3 (condition %4)")
                                    .arg(h)
                                    .arg(i)
                                    .arg(error)
                                    .arg(conditions[i])));
        }
    }
}

void TestGeneration::recurrentModelEqualsTheParallelForm_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("method");
    for (const char* fixture : {kBuiltinKjvGpt2, "tiny-llama-gqa-f32", "tiny-mistral-f32"})
        for (const Method method : {Method::FavorPositive, Method::Elu, Method::Local})
            QTest::newRow(qPrintable(
                QStringLiteral("%1, %2").arg(QLatin1String(fixture), methodInfo(method).name)))
                << QString::fromLatin1(fixture) << int(method);
}

// Property: the approximate model run token by token (the method's recurrent form in every
// layer) gives the logits of the same model's full forward pass with the method's parallel
// causal form in every layer (as model-eval runs it), on the same ids, to 1e-5 of the largest
// logit: grouped-query heads read their group's keys, Mistral's window is not applied in a
// replaced layer, head h of every layer draws W_h.
void TestGeneration::recurrentModelEqualsTheParallelForm()
{
    QFETCH(QString, fixture);
    QFETCH(int, method);
    const auto [modelFolder, referenceFolder] = folders(fixture);
    const std::shared_ptr<const LanguageModel> model = loadLanguageModel(modelFolder);
    const std::vector<int> text = referenceText(readReference(referenceFolder));
    const ApproximationSpec spec = approximationOf(Method(method));
    const int d = model->headDim();
    const double scale = 1 / std::sqrt(double(d));

    ForwardOptions options;
    options.captureQkv = false;
    options.replaced.assign(std::size_t(model->layers()), true);
    options.replacement = [&](int, int head, const Matrix<float>& q, const Matrix<float>& k,
                              const Matrix<float>& v) {
        const auto parallel = makeApproximation<float>(spec, d, q.rows(), scale, head);
        parallel->fit(q, k, true);
        return parallel->output(q, k, v, true, 16).output;
    };
    const ForwardResult full = model->forward(text, options);
    const double largest = std::max(1.0, double(full.logits.cwiseAbs().maxCoeff()));

    DecodingState state = approximateDecodingState(
        *model, spec, std::vector<bool>(std::size_t(model->layers()), true), 0);
    ForwardOptions decodeOptions;
    decodeOptions.captureQkv = false;
    double error = 0;
    for (std::size_t p = 0; p < text.size(); ++p) {
        const ForwardResult step = model->decode({text[p]}, state, decodeOptions);
        error = std::max(error, largestDifference(step.logits.row(0).transpose(),
                                                  full.logits.row(p).transpose()));
    }
    QVERIFY2(
        error < kRecurrentTolerance * largest,
        qPrintable(
            QStringLiteral("|logits - parallel| = %1 (largest logit %2)").arg(error).arg(largest)));
}

// Property: sampled tokens follow p_t = softmax(l / T) restricted to the top K: over 20,000 draws
// each token's frequency is within 5 standard errors sqrt(p (1 - p) / n) of its probability (a
// failure once in about 10^6 runs per token, by the normal approximation; the seeds are fixed,
// so the test is deterministic), and tokens outside the top K never come.
void TestGeneration::samplerFollowsTheDistribution()
{
    Vector<float> logits(5);
    logits << 1.0f, 2.5f, -1.0f, 2.0f, 0.5f;
    SamplingSettings settings;
    settings.greedy = false;
    settings.temperature = 0.8;
    settings.topK = 3;
    settings.seed = 11;
    const TokenSampler sampler(settings);
    // The top 3: ids 1, 3, 0.
    VectorD p = VectorD::Zero(5);
    for (const int t : {1, 3, 0})
        p[t] = std::exp(double(logits[t]) / settings.temperature);
    p /= p.sum();
    constexpr int kDraws = 20000;
    VectorD counts = VectorD::Zero(5);
    for (int k = 0; k < kDraws; ++k)
        counts[sampler.choose(logits, sampler.uniform(k))] += 1;
    for (int t = 0; t < 5; ++t) {
        const double frequency = counts[t] / kDraws;
        const double error = std::sqrt(p[t] * (1 - p[t]) / kDraws);
        QVERIFY2(
            std::abs(frequency - p[t]) <= 5 * error + 1e-12,
            qPrintable(QStringLiteral("token %1: %2 against %3").arg(t).arg(frequency).arg(p[t])));
    }
    QCOMPARE(counts[2], 0.0);
    QCOMPARE(counts[4], 0.0);
}

// Property: step k's draw depends on the sampling seed and k alone; two runs given it choose the
// same token from the same logits; the token chosen is the first of the sorted tokens whose
// cumulative probability passes u; greedy takes the lowest id among equal largest logits.
void TestGeneration::samplerChoosesByTheSharedDraw()
{
    SamplingSettings settings;
    settings.greedy = false;
    settings.seed = 3;
    const TokenSampler a(settings), b(settings);
    QCOMPARE(a.uniform(17), b.uniform(17));
    QVERIFY(a.uniform(17) != a.uniform(18));
    settings.seed = 4;
    QVERIFY(TokenSampler(settings).uniform(17) != a.uniform(17));
    Vector<float> logits(3);
    logits << 0.0f, std::log(3.0f), 0.0f;  // p = 0.6, 0.2, 0.2 sorted: ids 1, 0, 2
    QCOMPARE(a.choose(logits, 0.59), 1);
    QCOMPARE(a.choose(logits, 0.61), 0);
    QCOMPARE(a.choose(logits, 0.81), 2);
    const TokenSampler greedy(SamplingSettings{});
    QVERIFY(std::isnan(greedy.uniform(0)));
    Vector<float> tied(4);
    tied << 1.0f, 3.0f, -2.0f, 3.0f;
    QCOMPARE(greedy.choose(tied, 0), 1);
    tied[1] = std::numeric_limits<float>::quiet_NaN();
    QCOMPARE(greedy.choose(tied, 0), 3);
}

// Property: local attention whose window holds the whole text is exact attention: sampled with
// the shared draws, the approximate continuation is the exact one token for token, the
// teacher-forced KL is at rounding level, and the forced choices agree.
void TestGeneration::exactApproximationGivesTheSameContinuation()
{
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    GenerationSpec spec =
        generationSpec(QStringLiteral("And God said, Let there be light"), 40, Method::Local);
    spec.approximation.setValue(windowParameter(), model->positions());
    spec.sampling.greedy = false;
    spec.sampling.temperature = 1.2;
    spec.sampling.seed = 5;
    Generation generation(model, spec);
    const GenerationResult result = runGeneration(generation);
    QVERIFY(result.exactIds == result.approxIds);
    QCOMPARE(firstDivergence(result), -1);
    for (const GenerationStep& step : result.steps) {
        QVERIFY2(step.kl < 1e-8, qPrintable(QString::number(step.kl)));
        QVERIFY(step.sameToken && step.forcedSameToken);
        QVERIFY(step.uniform > 0 && step.uniform < 1);
    }
}

void TestGeneration::memoryIsTheCacheAgainstTheState_data()
{
    QTest::addColumn<int>("method");
    QTest::addColumn<double>("headFloats");  // at position p: -1 for local attention's window
    QTest::newRow("favor-positive") << int(Method::FavorPositive) << 16.0 * 64 + 16;
    QTest::newRow("favor-hyperbolic") << int(Method::FavorHyperbolic) << 32.0 * 64 + 32;
    QTest::newRow("elu") << int(Method::Elu) << 64.0 * 64 + 64;
    QTest::newRow("local") << int(Method::Local) << -1.0;
}

// Property: after step k (position p = P - 1 + k read, P + k tokens held) the exact run holds
// 2 (P + k) d floats per key/value head and layer; the approximate run in layers 0 and 2 holds
// per query head C d + C floats (C = m, 2m for the two halves of the hyperbolic map, d for elu+1)
// or 2 min(P + k, w) d for local attention, plus the exact cache of layers 1 and 3.
void TestGeneration::memoryIsTheCacheAgainstTheState()
{
    QFETCH(int, method);
    QFETCH(double, headFloats);
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    QCOMPARE(model->headDim(), 64);
    GenerationSpec spec = generationSpec(QStringLiteral("In the beginning"), 12, Method(method));
    spec.approximation.setValue(windowParameter(), 8);
    spec.replacedLayers = {0, 2};
    Generation generation(model, spec);
    const GenerationResult result = runGeneration(generation);
    const double d = 64, heads = model->heads(), layers = model->layers();
    const double prompt = double(result.promptIds.size());
    for (const GenerationStep& step : result.steps) {
        const double held = prompt + step.index;
        QCOMPARE(double(step.position), held - 1);
        QCOMPARE(step.cacheBytes, 4 * 2 * held * d * heads * layers);
        const double perHead = headFloats >= 0 ? headFloats : 2 * std::min(held, 8.0) * d;
        QCOMPARE(step.stateBytes, 4 * (2 * perHead * heads + 2 * 2 * held * d * heads));
    }
}

// Property: the followed head's S_i and z_i are sum_j phi(k_j) v_j^T and sum_j phi(k_j) over the
// keys and values it reported, with the feature map of its own head's W; its phi(q_i) and the
// denominator phi(q_i)^T z_i agree with them.
void TestGeneration::followedHeadStateIsTheSumOfItsKeys()
{
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    // "In" is one token: every key passes through a step.
    GenerationSpec spec = generationSpec(QStringLiteral("In"), 10, Method::FavorPositive);
    spec.followLayer = 2;
    spec.followHead = 3;
    Generation generation(model, spec);
    QCOMPARE(generation.promptIds().size(), std::size_t(1));
    const int d = model->headDim();
    const auto phi = makeFeatureMap<double>(spec.approximation, d, 1 / std::sqrt(double(d)), 3);
    MatrixD s = MatrixD::Zero(spec.approximation.features, d);
    VectorD z = VectorD::Zero(spec.approximation.features);
    while (!generation.finished()) {
        const GenerationStep step = generation.next();
        QVERIFY(step.followed && step.followed->hasState);
        const FollowedHead& head = *step.followed;
        QCOMPARE(head.layer, 2);
        QCOMPARE(head.head, 3);
        QVERIFY(addAndCheck(*phi, head, s, z));
    }
}

// Property: with a followed head, step 0 also reports the head at each of the prompt's first P - 1
// tokens (read in one call), each state S_i the sum of phi(k_j) v_j^T over the prompt's keys so
// far and y_i = phi(q_i)^T S_i / phi(q_i)^T z_i; and following a head changes nothing of the
// generation (the same tokens, the same KL, bit for bit).
void TestGeneration::followedHeadIsReportedAtThePromptsTokens()
{
    const std::shared_ptr<const LanguageModel> model = loadModel(QStringLiteral("builtin"));
    GenerationSpec spec = generationSpec(QStringLiteral("And God said, Let there be light"), 6,
                                         Method::FavorPositive);
    Generation plain(model, spec);
    const GenerationResult unfollowed = runGeneration(plain);
    spec.followLayer = 1;
    spec.followHead = 2;
    Generation followed(model, spec);
    const GenerationResult result = runGeneration(followed);
    QCOMPARE(result.exactIds, unfollowed.exactIds);
    QCOMPARE(result.approxIds, unfollowed.approxIds);
    for (std::size_t k = 0; k < result.steps.size(); ++k)
        QCOMPARE(result.steps[k].kl, unfollowed.steps[k].kl);

    const std::vector<FollowedHead>& prompt = result.steps.front().followedPrompt;
    QCOMPARE(prompt.size(), result.promptIds.size() - 1);
    QVERIFY(prompt.size() >= 5);
    for (std::size_t k = 1; k < result.steps.size(); ++k)
        QVERIFY(result.steps[k].followedPrompt.empty());
    const int d = model->headDim();
    const auto phi = makeFeatureMap<double>(spec.approximation, d, 1 / std::sqrt(double(d)), 2);
    MatrixD s = MatrixD::Zero(spec.approximation.features, d);
    VectorD z = VectorD::Zero(spec.approximation.features);
    for (const FollowedHead& head : prompt) {
        QCOMPARE(head.layer, 1);
        QCOMPARE(head.head, 2);
        QCOMPARE(head.output.size(), Eigen::Index(d));
        QVERIFY(addAndCheck(*phi, head, s, z));
    }
    // The first step's state carries on from the prompt's.
    QVERIFY(addAndCheck(*phi, *result.steps.front().followed, s, z));
}

// Property: FollowedSteps holds, at every token read (the prompt's, then each step's), the state
// the generation reported; its exact output is causal softmax attention over the head's rows so
// far, o_i = sum_{j<=i} exp(s q_i.k_j) v_j / sum_j exp(s q_i.k_j) (computed here directly); the
// rows of P and P^ sum to 1 and P^_ij = phi(q_i).phi(k_j) / sum_j'; and the generation's
// recurrent y_i equals the parallel form o^_i = sum_j P^_ij v_j to 1e-5 of the largest output.
void TestGeneration::followedStepsGatherTheHeadForTheStepper()
{
    // The KJV GPT-2, for its 4 layers.
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    GenerationSpec spec =
        generationSpec(QStringLiteral("In the beginning God created"), 8, Method::Elu);
    spec.replacedLayers = {0, 3};
    spec.followLayer = 3;
    spec.followHead = 1;
    Generation generation(model, spec);
    const Eigen::Index capacity = Eigen::Index(generation.promptIds().size()) - 1 + spec.tokens;
    FollowedSteps steps(spec.approximation, 3, 1, true, capacity, model->headDim(), MemoryBudget());
    std::vector<FollowedHead> reported;
    while (!generation.finished()) {
        const GenerationStep step = generation.next();
        for (const FollowedHead& head : step.followedPrompt) {
            steps.append(head, QStringLiteral("p"));
            reported.push_back(head);
        }
        steps.append(*step.followed, QStringLiteral("g"));
        reported.push_back(*step.followed);
    }
    QCOMPARE(steps.length(), capacity);
    const CausalSteps& c = steps.steps();
    QCOMPARE(c.length(), capacity);
    QCOMPARE(c.statesTo, capacity);
    QCOMPARE(c.featureCount, Eigen::Index(model->headDim()));  // elu+1: C = d
    const MatrixD exact = steps.exactAttention();
    const MatrixD approx = steps.approxAttention();
    QCOMPARE(exact.rows(), capacity);
    const double s = 1 / std::sqrt(double(model->headDim()));
    double largest = 0;
    for (Eigen::Index t = 0; t < capacity; ++t)
        largest = std::max(largest, reported[std::size_t(t)].output.cwiseAbs().maxCoeff());
    for (Eigen::Index t = 0; t < capacity; ++t) {
        const FollowedHead& head = reported[std::size_t(t)];
        QVERIFY(c.state(t) == head.state);
        QVERIFY(VectorD(c.normalizers.row(t).transpose()) == head.normalizer);
        QCOMPARE(c.records[std::size_t(t)].denominator, head.denominator);
        VectorD numerator = VectorD::Zero(head.value.size());
        double denominator = 0;
        double approxSum = 0;
        for (Eigen::Index j = 0; j <= t; ++j) {
            const FollowedHead& key = reported[std::size_t(j)];
            const double weight = std::exp(s * head.query.dot(key.key));
            numerator += weight * key.value;
            denominator += weight;
            approxSum += head.queryFeatures.dot(key.keyFeatures);
        }
        const VectorD o = numerator / denominator;
        QVERIFY((VectorD(c.outputsExact.row(t).transpose()) - o).cwiseAbs().maxCoeff() <
                1e-9 * std::max(1.0, o.cwiseAbs().maxCoeff()));
        QVERIFY(std::abs(exact.row(t).sum() - 1) < 1e-12);
        QVERIFY(std::abs(approx.row(t).sum() - 1) < 1e-12);
        const double weight0 = head.queryFeatures.dot(reported[0].keyFeatures) / approxSum;
        QVERIFY(std::abs(approx(t, 0) - weight0) < 1e-12);
        QVERIFY(t + 1 == capacity || exact(t, t + 1) == 0);  // causal
        QVERIFY2(c.records[std::size_t(t)].differenceToParallel < kRecurrentTolerance * largest,
                 qPrintable(QStringLiteral("token %1: %2")
                                .arg(t)
                                .arg(c.records[std::size_t(t)].differenceToParallel)));
        QVERIFY(c.records[std::size_t(t)].errorToExact > 0);  // elu+1 is not softmax
    }
    QCOMPARE(c.labels.size(), qsizetype(capacity));
    QVERIFY(steps.input().heads.front().v.row(2) == reported[2].value.transpose());
}

// FollowedSteps refuses, with the reason, a head whose layer keeps softmax attention, a method
// without a state S_i (local attention's recurrence keeps its window's keys) and a head whose
// states would exceed the memory budget.
void TestGeneration::followedStepsRefuseAHeadWithoutState()
{
    const ApproximationSpec elu = approximationOf(Method::Elu);
    QVERIFY(thrownMessage<InputError>([&] {
                FollowedSteps(elu, 2, 0, false, 10, 16, MemoryBudget());
            }).contains("keeps softmax attention"));
    QVERIFY(thrownMessage<InputError>([&] {
                FollowedSteps(approximationOf(Method::Local), 2, 0, true, 10, 16, MemoryBudget());
            }).contains("keeps no state"));
    QVERIFY(thrownMessage<ResourceError>([&] {
                FollowedSteps(elu, 2, 0, true, 100000, 64, MemoryBudget(1 << 20));
            }).contains("Following layer 2, head 0"));
}

namespace {

// A generation request that must be refused, and a part of the message that says why: a good
// request (the prompt "In", 4 tokens, ELU in layer 0, temperature 1) with one thing changed.
struct BadRequest {
    QString prompt = QStringLiteral("In");
    int tokens = 4;
    Method method = Method::Elu;
    int layer = 0;
    double temperature = 1.0;
    QString named;
};

}  // namespace

Q_DECLARE_METATYPE(BadRequest)

void TestGeneration::badInputIsRefused_data()
{
    QTest::addColumn<BadRequest>("request");
    QTest::newRow("empty prompt") << BadRequest{.prompt = "", .named = "prompt is empty"};
    QTest::newRow("blank prompt") << BadRequest{.prompt = "  \n", .named = "prompt is empty"};
    QTest::newRow("past the context")
        << BadRequest{.prompt = "In the beginning", .tokens = 126, .named = "128 positions"};
    QTest::newRow("no tokens") << BadRequest{.tokens = 0, .named = "at least 1"};
    QTest::newRow("no causal form")
        << BadRequest{.method = Method::Nystrom, .named = "no causal form"};
    QTest::newRow("no recurrent form")
        << BadRequest{.method = Method::Scatterbrain, .named = "no recurrent form"};
    QTest::newRow("layer") << BadRequest{.layer = 4, .named = "layer 4"};
    QTest::newRow("temperature") << BadRequest{.temperature = 0.0, .named = "temperature"};
}

// Property: bad input is refused with InputError before anything runs, saying what is wrong.
void TestGeneration::badInputIsRefused()
{
    QFETCH(BadRequest, request);
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    GenerationSpec spec = generationSpec(request.prompt, request.tokens, request.method);
    spec.replacedLayers = {request.layer};
    spec.sampling.greedy = request.temperature == 1.0;
    spec.sampling.temperature = request.temperature;
    const QString message =
        thrownMessage<InputError>([&] { const Generation generation(model, spec); });
    QVERIFY2(message.contains(request.named), qPrintable(message));
}

// Property: a cancel request stops next() with Cancelled between layers.
void TestGeneration::cancelledStopsBetweenLayers()
{
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    GenerationSpec spec = generationSpec(QStringLiteral("In the beginning"), 8, Method::Elu);
    int polls = 0;
    Generation generation(model, spec, MemoryBudget(), [&] { return ++polls > 12; });
    bool cancelled = false;
    try {
        runGeneration(generation);
    } catch (const Cancelled&) {
        cancelled = true;
    }
    QVERIFY(cancelled);
    QVERIFY(generation.stepsDone() < spec.tokens);
}

// Property: a run whose W is large is announced, with the time and memory it should take, after
// the checks and before W is drawn (a cancel request at the draw's first poll stops it there).
void TestGeneration::largeRunIsAnnouncedBeforeW()
{
    const std::shared_ptr<const LanguageModel> model = kjvGpt2();
    GenerationSpec spec =
        generationSpec(QStringLiteral("In the beginning"), 1, Method::FavorPositive);
    spec.approximation.features = 1'000'000;
    spec.replacedLayers = {0};
    QStringList notices;
    const auto announce = [&](const QString& notice) { notices.append(notice); };
    bool cancelled = false;
    try {
        const Generation generation(
            model, spec, MemoryBudget(qint64(64) << 30), [] { return true; }, announce);
    } catch (const Cancelled&) {
        cancelled = true;
    }
    QVERIFY(cancelled);
    QCOMPARE(notices.size(), 1);
    QVERIFY2(notices.front().startsWith(QStringLiteral("expected to take about")) &&
                 notices.front().contains(QStringLiteral("m = 1000000")) &&
                 notices.front().contains(QStringLiteral("GiB")),
             qPrintable(notices.front()));
}

QTEST_GUILESS_MAIN(TestGeneration)
#include "test_generation.moc"

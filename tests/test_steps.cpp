// The causal steps (core/sweeps/causal_steps.h) and `attention-lab steps`: the recurrent outputs
// against the chunked and the masked quadratic forms, the states against phi(K)^T V, the exact
// causal outputs against the textbook formula, the states range and the memory budget; then the
// subcommand run as a process (failing when the program or its `steps` is missing).

#include "app_process.h"
#include "sweeps/causal_stepper.h"
#include "sweeps/causal_steps.h"
#include "errors.h"
#include "experiment.h"
#include "memory_budget.h"
#include "attention/feature_maps.h"
#include "inputs/inputs.h"
#include "attention/linear_attention.h"
#include "io/npy.h"
#include "parallel.h"
#include "fitted_maps_support.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

using namespace attnlab;
using namespace attnlab::test;

namespace {

const QString kApp = QStringLiteral(ATTNLAB_APP);

// Every file `steps` writes.
const QStringList kStepsFiles = {"normalizers.npy",      "outputs.npy", "outputs_exact_causal.npy",
                                 "outputs_parallel.npy", "states.npy",  "steps.json"};

// A spec on L random Gaussian queries and keys of norm `norm` (|x'| = norm d^-1/4 at the default
// scale s = 1/sqrt(d)), V = X Wv, with the feature map `kind` of m features.
ExperimentSpec randomSpec(Method kind, Precision precision, int length, int d, int m, double norm,
                          std::uint64_t seed, int heads = 1)
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = length;
    spec.input.headDim = d;
    spec.input.heads = heads;
    spec.input.rowNorm = norm;
    spec.input.seed = seed;
    spec.approximation.kind = kind;
    spec.approximation.features = m;
    spec.approximation.seed = seed + 100;
    spec.approximation = withFittedMaps(spec.approximation, d);
    spec.precision = precision;
    spec.chunkSize = 16;  // several chunks, and a last one cut short
    return spec;
}

// max |a - b| / max |b|.
double relativeError(const MatrixD& a, const MatrixD& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// The map the steps of head h run with, made as a user of the engine makes it.
template <typename T>
std::unique_ptr<FeatureMap<T>> mapOf(const ExperimentSpec& spec, const AttentionInput& input,
                                     int head = 0)
{
    return makeFeatureMap<T>(spec.approximation, int(input.headDim()),
                             spec.resolvedScale(input.headDim()), head);
}

// O^ by the masked quadratic form: the rows of P^ (causal mask) formed in full, then P^ V.
template <typename T>
MatrixD maskedQuadraticOutput(const ExperimentSpec& spec, const AttentionInput& input)
{
    const auto phi = mapOf<T>(spec, input);
    const HeadTensors& head = input.heads.front();
    const Matrix<T> q = head.q.cast<T>(), k = head.k.cast<T>(), v = head.v.cast<T>();
    FeatureMapRows<T> rows(*phi, q, k, true);
    Matrix<T> p(q.rows(), k.rows());
    rows.rows(0, p);
    return (p * v).template cast<double>();
}

// phi_q(X) or phi_k(X) at true scale, in double, for the map of spec in its precision.
MatrixD featuresOf(const ExperimentSpec& spec, const AttentionInput& input, const MatrixD& x,
                   int head, FeatureSide side)
{
    if (spec.precision == Precision::Float)
        return trueScaleFeatures(*mapOf<float>(spec, input, head), Matrix<float>(x.cast<float>()),
                                 side);
    return trueScaleFeatures(*mapOf<double>(spec, input, head), x, side);
}

// Causal softmax attention by the textbook formula, in long double:
// o_i = sum_{j <= i} exp(s q_i.k_j) v_j / sum_{j <= i} exp(s q_i.k_j).
MatrixD textbookCausalSoftmax(const HeadTensors& head, double s)
{
    MatrixD out = MatrixD::Zero(head.q.rows(), head.v.cols());
    for (Eigen::Index i = 0; i < head.q.rows(); ++i) {
        long double sum = 0;
        std::vector<long double> numerator(std::size_t(head.v.cols()), 0.0L);
        for (Eigen::Index j = 0; j <= i; ++j) {
            const long double weight =
                std::exp((long double)(s * head.q.row(i).dot(head.k.row(j))));
            sum += weight;
            for (Eigen::Index c = 0; c < head.v.cols(); ++c)
                numerator[std::size_t(c)] += weight * head.v(j, c);
        }
        for (Eigen::Index c = 0; c < head.v.cols(); ++c)
            out(i, c) = double(numerator[std::size_t(c)] / sum);
    }
    return out;
}

QString precisionTag(Precision precision)
{
    return precision == Precision::Float ? QStringLiteral("float") : QStringLiteral("double");
}

// Runs `attention-lab steps` with the arguments, for at most 60 s, offscreen.
AppRun runSteps(const QStringList& arguments)
{
    return runAttentionLab(QStringList{QStringLiteral("steps")} + arguments, QString(), 60000);
}

// True when the program has the steps subcommand: `steps --help` exits 0 and lists --from (an
// older program starts the window's parser instead, whose help has no --from).
bool hasStepsCommand()
{
    static const bool has = [] {
        const AppRun run = runSteps({QStringLiteral("--help")});
        return run.finished && run.exitCode == 0 && run.out.contains("--from");
    }();
    return has;
}

// Fails the test (naming the program's path) when the program is missing or has no `steps`.
#define REQUIRE_STEPS_COMMAND()                                                                 \
    do {                                                                                        \
        REQUIRE_ATTENTION_LAB();                                                                \
        QVERIFY2(hasStepsCommand(),                                                             \
                 qPrintable(kApp + QStringLiteral(" has no `steps` subcommand (`steps --help` " \
                                                  "does not list --from)")));                   \
    } while (false)

NpyArray readArray(const QString& path)
{
    NpyReadOptions options;
    options.requireFinite = false;
    return readNpy(path, options);
}

QJsonObject readJson(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                          : QJsonObject();
}

// A 2-D array (or a 3-D one with its last two axes flattened) as a matrix.
MatrixD matrixOf(const NpyArray& array)
{
    const qint64 rows = array.shape.front();
    const qint64 cols = rows > 0 ? qint64(array.values.size()) / rows : 0;
    return Eigen::Map<const MatrixD>(array.values.data(), rows, cols);
}

// The arguments of the small input the CLI tests run on.
QStringList smallInput()
{
    return {"--random", "20", "--d", "8", "--features", "16", "--input-seed", "3", "--seed", "4"};
}

// The same input as a spec, for the library.
ExperimentSpec smallInputSpec()
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = 20;
    spec.input.headDim = 8;
    spec.input.seed = 3;
    spec.approximation.features = 16;
    spec.approximation.seed = 4;
    return spec;
}

}  // namespace

class TestSteps : public QObject {
    Q_OBJECT

private slots:
    void init() { setEngineThreads(2); }

    void recurrentEqualsChunkedAndMaskedQuadratic_data();
    void recurrentEqualsChunkedAndMaskedQuadratic();
    void statesAreThePrefixSums_data();
    void statesAreThePrefixSums();
    void seekBackGivesTheRecordedState();
    void exactCausalOutputsMatchTextbookSoftmax_data();
    void exactCausalOutputsMatchTextbookSoftmax();
    void errorToExactIsTheRelativeRowError();
    void statesRangeKeepsExactlyThoseStates();
    void badRangesAndHeadsAreRefused();
    void budgetRefusesTooManyStatesNamingTheirRemedies();
    void exactMethodIsRefused();
    void cancelledStops();

    void cliDefaultRunWritesConsistentFiles();
    void cliFromToLimitsStates();
    void cliBadArgumentsExitTwoNamingTheOption_data();
    void cliBadArgumentsExitTwoNamingTheOption();
    void cliTinyBudgetExitsThreeMentioningFrom();
};

void TestSteps::recurrentEqualsChunkedAndMaskedQuadratic_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("precision");
    for (const MethodInfo& info : featureMapMethods())
        for (const Precision precision : {Precision::Float, Precision::Double})
            QTest::addRow("%s %s", qPrintable(info.name), qPrintable(precisionTag(precision)))
                << int(info.method) << int(precision);
}

void TestSteps::recurrentEqualsChunkedAndMaskedQuadratic()
{
    // Property: for every feature map, the recurrent outputs y_i equal the chunked causal form
    // (linearAttention) and the masked quadratic form (P^ = D^-1 tril(phi(Q) phi(K)^T), then
    // P^ V) within 1e-5 relative in float and 1e-10 in double; each record's
    // difference_to_parallel is max_c |y_i,c - o^_i,c|, and the largest so far is their maximum.
    QFETCH(int, kind);
    QFETCH(int, precision);
    const Precision p = Precision(precision);
    const double tolerance = p == Precision::Float ? 1e-5 : 1e-10;
    const ExperimentSpec spec = randomSpec(Method(kind), p, 70, 8, 32, 1.5, 11);
    const AttentionInput input = buildInput(spec.input);
    const CausalSteps steps = causalSteps(spec, input);

    QCOMPARE(steps.length(), Eigen::Index(70));
    QCOMPARE(steps.outputs.rows(), Eigen::Index(70));
    QCOMPARE(steps.outputs.cols(), Eigen::Index(8));
    QVERIFY(steps.nonPositivePositions.empty());
    const double toParallel = relativeError(steps.outputs, steps.outputsParallel);
    QVERIFY2(toParallel < tolerance, qPrintable(QString::number(toParallel)));
    const MatrixD quadratic = p == Precision::Float ? maskedQuadraticOutput<float>(spec, input)
                                                    : maskedQuadraticOutput<double>(spec, input);
    const double toQuadratic = relativeError(steps.outputs, quadratic);
    QVERIFY2(toQuadratic < tolerance, qPrintable(QString::number(toQuadratic)));
    const double toParallelFromQuadratic = relativeError(steps.outputsParallel, quadratic);
    QVERIFY2(toParallelFromQuadratic < tolerance,
             qPrintable(QString::number(toParallelFromQuadratic)));

    const double largestOutput = steps.outputs.cwiseAbs().maxCoeff();
    double largest = 0;
    for (const CausalStepRecord& record : steps.records) {
        const Eigen::Index t = record.position;
        const double difference =
            (steps.outputs.row(t) - steps.outputsParallel.row(t)).cwiseAbs().maxCoeff();
        QCOMPARE(record.differenceToParallel, difference);
        QCOMPARE(record.relativeDifferenceToParallel, difference / largestOutput);
        QVERIFY(record.relativeDifferenceToParallel < tolerance);
        largest = std::max(largest, difference);
        QCOMPARE(steps.agreementThrough(t).absolute, largest);
    }
    QCOMPARE(steps.agreementThrough().relative, largest / largestOutput);
}

void TestSteps::statesAreThePrefixSums_data()
{
    recurrentEqualsChunkedAndMaskedQuadratic_data();
}

void TestSteps::statesAreThePrefixSums()
{
    // Property: with phi from trueScaleFeatures, the state after token t is
    // S_i = sum_{j <= i} phi(k_j) v_j^T and z_i = sum_{j <= i} phi(k_j) (i = t + 1), so the last
    // state is phi(K)^T V and z_L = phi(K)^T 1; the records hold phi(q_i)^T z_i, |S_i|_F, |z_i|.
    // Head 1 of two heads, so the head's own projection is used.
    QFETCH(int, kind);
    QFETCH(int, precision);
    const Precision p = Precision(precision);
    const double tolerance = p == Precision::Float ? 1e-5 : 1e-12;
    const ExperimentSpec spec = randomSpec(Method(kind), p, 40, 8, 16, 2.0, 7, 2);
    const AttentionInput input = buildInput(spec.input);
    CausalStepsOptions options;
    options.head = 1;
    const CausalSteps steps = causalSteps(spec, input, options);
    const HeadTensors& head = input.heads[1];
    const MatrixD v = p == Precision::Float ? MatrixD(head.v.cast<float>().cast<double>()) : head.v;
    const MatrixD phiK = featuresOf(spec, input, head.k, 1, FeatureSide::Key);
    const MatrixD phiQ = featuresOf(spec, input, head.q, 1, FeatureSide::Query);
    QCOMPARE(steps.featureCount, phiK.cols());
    QCOMPARE(steps.statesFrom, Eigen::Index(0));
    QCOMPARE(steps.statesTo, Eigen::Index(40));

    const MatrixD finalState = phiK.transpose() * v;
    const MatrixD finalNormalizer = phiK.colwise().sum();
    QVERIFY(relativeError(steps.state(39), finalState) < tolerance);
    QVERIFY(relativeError(steps.normalizers.row(39), finalNormalizer) < tolerance);
    for (const Eigen::Index t : {Eigen::Index(0), Eigen::Index(13), Eigen::Index(39)}) {
        const MatrixD state = phiK.topRows(t + 1).transpose() * v.topRows(t + 1);
        const MatrixD z = phiK.topRows(t + 1).colwise().sum();
        const CausalStepRecord& record = steps.records[std::size_t(t)];
        QVERIFY(relativeError(steps.state(t), state) < tolerance);
        QVERIFY(relativeError(steps.normalizers.row(t), z) < tolerance);
        QVERIFY(std::abs(record.denominator - phiQ.row(t).dot(z.row(0))) <
                tolerance * std::abs(record.denominator));
        QVERIFY(std::abs(record.stateNorm - state.norm()) < tolerance * state.norm());
        QVERIFY(std::abs(record.normalizerNorm - z.norm()) < tolerance * z.norm());
    }
}

void TestSteps::seekBackGivesTheRecordedState()
{
    // Property: a CausalStepper that steps to the end and seeks back to i holds bit for bit the
    // state the steps recorded for i (test_attention checks seeking more thoroughly).
    const ExperimentSpec spec =
        randomSpec(Method::FavorPositive, Precision::Float, 50, 8, 16, 3.0, 8);
    const AttentionInput input = buildInput(spec.input);
    const CausalSteps steps = causalSteps(spec, input);
    const auto phi = mapOf<float>(spec, input);
    const HeadTensors& head = input.heads.front();
    const Matrix<float> q = head.q.cast<float>(), k = head.k.cast<float>(),
                        v = head.v.cast<float>();
    CausalStepper<float> stepper(*phi, q, k, v);
    stepper.seek(50);
    for (const Eigen::Index i :
         {Eigen::Index(37), Eigen::Index(3), Eigen::Index(50), Eigen::Index(22), Eigen::Index(1)}) {
        stepper.seek(i);
        QVERIFY(stepper.state() == steps.state(i - 1));
        QVERIFY(stepper.normalizer() == steps.normalizers.row(i - 1).transpose());
        QVERIFY(stepper.output() == steps.outputs.row(i - 1).transpose());
        QCOMPARE(stepper.denominator(), steps.records[std::size_t(i - 1)].denominator);
    }
}

void TestSteps::exactCausalOutputsMatchTextbookSoftmax_data()
{
    QTest::addColumn<int>("precision");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("float") << int(Precision::Float) << 1e-5;
    QTest::newRow("double") << int(Precision::Double) << 1e-12;
}

void TestSteps::exactCausalOutputsMatchTextbookSoftmax()
{
    // Property: the exact causal outputs are o_i = sum_{j <= i} exp(s q_i.k_j) v_j /
    // sum_{j <= i} exp(s q_i.k_j), computed here in long double.
    QFETCH(int, precision);
    QFETCH(double, tolerance);
    const ExperimentSpec spec = randomSpec(Method::Elu, Precision(precision), 45, 8, 16, 3.0, 5);
    const AttentionInput input = buildInput(spec.input);
    const CausalSteps steps = causalSteps(spec, input);
    const MatrixD reference = textbookCausalSoftmax(input.heads.front(), 1 / std::sqrt(8.0));
    const double error = relativeError(steps.outputsExact, reference);
    QVERIFY2(error < tolerance, qPrintable(QString::number(error)));
    // The first token sees only itself: o_1 = v_1.
    QVERIFY(relativeError(steps.outputsExact.row(0), input.heads.front().v.row(0)) < tolerance);
}

void TestSteps::errorToExactIsTheRelativeRowError()
{
    // Property: error_to_exact of position t is |y_i - o_i|_2 / |o_i|_2. At the first token
    // both forms see one key, so y_1 = o_1 = v_1 and the error is 0 (up to rounding); later
    // tokens mix several values with estimated weights, and the error is not 0.
    const ExperimentSpec spec =
        randomSpec(Method::FavorPositive, Precision::Double, 30, 8, 256, std::pow(8.0, 0.25), 6);
    const AttentionInput input = buildInput(spec.input);
    const CausalSteps steps = causalSteps(spec, input);
    for (const CausalStepRecord& record : steps.records) {
        const Eigen::Index t = record.position;
        const double expected = (steps.outputs.row(t) - steps.outputsExact.row(t)).norm() /
                                steps.outputsExact.row(t).norm();
        QVERIFY(std::abs(record.errorToExact - expected) <= 1e-12 * expected);
    }
    QVERIFY(steps.records.front().errorToExact < 1e-12);
    QVERIFY(relativeError(steps.outputs.row(0), input.heads.front().v.row(0)) < 1e-12);
    for (Eigen::Index t = 1; t < 30; ++t)
        QVERIFY(steps.records[std::size_t(t)].errorToExact > 1e-6);
}

void TestSteps::statesRangeKeepsExactlyThoseStates()
{
    // Property: the range [from, to) keeps exactly the states of those positions, bit for bit the
    // ones a full run keeps; an empty range keeps none and changes nothing else.
    const ExperimentSpec spec =
        randomSpec(Method::FavorHyperbolic, Precision::Float, 30, 8, 8, 1.5, 9);
    const AttentionInput input = buildInput(spec.input);
    const CausalSteps all = causalSteps(spec, input);
    QCOMPARE(all.states.rows(), Eigen::Index(30));
    QCOMPARE(all.states.cols(), all.featureCount * all.valueDim);

    CausalStepsOptions options;
    options.statesFrom = 5;
    options.statesTo = 9;
    const CausalSteps some = causalSteps(spec, input, options);
    QCOMPARE(some.statesFrom, Eigen::Index(5));
    QCOMPARE(some.statesTo, Eigen::Index(9));
    QCOMPARE(some.states.rows(), Eigen::Index(4));
    QVERIFY(some.states == all.states.middleRows(5, 4));
    for (Eigen::Index t = 5; t < 9; ++t)
        QVERIFY(some.state(t) == all.state(t));
    QVERIFY(some.outputs == all.outputs);
    QVERIFY(some.normalizers == all.normalizers);

    options.statesFrom = options.statesTo = 30;
    const CausalSteps none = causalSteps(spec, input, options);
    QCOMPARE(none.states.rows(), Eigen::Index(0));
    QVERIFY(none.outputs == all.outputs);
}

void TestSteps::badRangesAndHeadsAreRefused()
{
    // Property: a states range outside [0, L] or running backwards, and a head that does not
    // exist, are refused with InputError before anything is computed.
    const ExperimentSpec spec =
        randomSpec(Method::FavorPositive, Precision::Float, 12, 4, 8, 1.0, 1);
    const AttentionInput input = buildInput(spec.input);
    const auto refusal = [&](Eigen::Index from, Eigen::Index to, int head) {
        CausalStepsOptions options;
        options.statesFrom = from;
        options.statesTo = to;
        options.head = head;
        return thrownMessage<InputError>([&] { causalSteps(spec, input, options); });
    };
    QVERIFY(refusal(5, 3, 0).contains(QStringLiteral("backwards")));
    QVERIFY(refusal(13, -1, 0).contains(QStringLiteral("13")));
    QVERIFY(refusal(0, 13, 0).contains(QStringLiteral("13")));
    QVERIFY(refusal(-1, 4, 0).contains(QStringLiteral("-1")));
    QVERIFY(refusal(0, -1, 1).contains(QStringLiteral("head 1")));
    QVERIFY(refusal(0, -1, 0).isEmpty());
}

void TestSteps::budgetRefusesTooManyStatesNamingTheirRemedies()
{
    // Property: keeping L states of C x M values (8 bytes each) over the budget is refused with
    // ResourceError, before allocation, with a message that says to keep the states of fewer
    // positions (the remedy FewerKeptStates, which the command line names --from and --to) and
    // gives the states' own size beside the arrays' (it gave only the sum, as if the states' own);
    // a range that fits the same budget runs.
    const ExperimentSpec spec =
        randomSpec(Method::FavorPositive, Precision::Float, 200, 16, 64, 2.0, 2);
    const AttentionInput input = buildInput(spec.input);
    const double allStates = 200.0 * 64 * 16 * 8;  // 1.6 MB
    QVERIFY(causalStepsBytes(200, 64, 16, 200, false) > allStates);
    CausalStepsOptions options;
    options.budget = MemoryBudget(qint64(causalStepsBytes(200, 64, 16, 50, false)) + 1);
    Remedies remedies;
    const QString message =
        thrownMessage<ResourceError>([&] { causalSteps(spec, input, options); }, &remedies);
    QVERIFY2(message.contains(QStringLiteral("keep the states of fewer positions, use fewer "
                                             "features, or raise the memory budget")),
             qPrintable(message));
    QCOMPARE(remedies,
             (Remedies{Remedy::FewerKeptStates, Remedy::FewerFeatures, Remedy::RaiseMemoryBudget}));
    QVERIFY2(message.contains(QStringLiteral("200 x 64 x 16")), qPrintable(message));
    QVERIFY2(message.contains(formatBytes(allStates) + QStringLiteral(")")) &&
                 message.contains(formatBytes(causalStepsBytes(200, 64, 16, 0, false))),
             qPrintable(message));
    // The engine says what to change and leaves naming where to each front end.
    QVERIFY2(!message.contains(QStringLiteral("--")), qPrintable(message));

    options.statesFrom = 150;
    const CausalSteps steps = causalSteps(spec, input, options);
    QCOMPARE(steps.states.rows(), Eigen::Index(50));
}

void TestSteps::exactMethodIsRefused()
{
    // Property: the method "exact" has no recurrent form: InputError, naming it.
    ExperimentSpec spec = randomSpec(Method::FavorPositive, Precision::Float, 10, 4, 8, 1.0, 1);
    spec.exactMethod = true;
    const AttentionInput input = buildInput(spec.input);
    const QString message = thrownMessage<InputError>([&] { causalSteps(spec, input); });
    QVERIFY2(message.contains(QStringLiteral("exact")), qPrintable(message));
}

void TestSteps::cancelledStops()
{
    // Property: a cancelled() that turns true makes causalSteps throw Cancelled; it is polled
    // during the steps, not only before them.
    const ExperimentSpec spec = randomSpec(Method::Elu, Precision::Float, 1000, 4, 8, 1.0, 1);
    const AttentionInput input = buildInput(spec.input);
    int polls = 0;
    CausalStepsOptions options;
    options.cancelled = [&] { return ++polls > 6; };
    bool cancelled = false;
    try {
        causalSteps(spec, input, options);
    } catch (const Cancelled&) {
        cancelled = true;
    }
    QVERIFY(cancelled);
    QCOMPARE(polls, 7);
}

void TestSteps::cliDefaultRunWritesConsistentFiles()
{
    // Property: a default run writes every file, with shapes L x C x M, L x C and L x M, float32
    // (the default precision), holding what the library computes for the same spec; steps.json
    // has the spec, C, M, the range of states and one record per position.
    REQUIRE_STEPS_COMMAND();
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("steps"));
    const AppRun run = runSteps(smallInput() + QStringList{"--out", out});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(QDir(out).entryList(QDir::Files, QDir::Name), kStepsFiles);

    const ExperimentSpec spec = smallInputSpec();
    const AttentionInput input = buildInput(spec.input);
    const CausalSteps steps = causalSteps(spec, input);
    const qint64 c = steps.featureCount, m = 8;
    QCOMPARE(c, qint64(16));

    const NpyArray states = readArray(out + "/states.npy");
    QCOMPARE(states.shape, (std::vector<qint64>{20, c, m}));
    QCOMPARE(states.dtype, NpyDtype::Float32);
    // The library's true-scale states are double; the file holds them rounded to float.
    QVERIFY(matrixOf(states) == steps.states.cast<float>().cast<double>());
    const NpyArray normalizers = readArray(out + "/normalizers.npy");
    QCOMPARE(normalizers.shape, (std::vector<qint64>{20, c}));
    QVERIFY(matrixOf(normalizers) == steps.normalizers.cast<float>().cast<double>());
    for (const char* name : {"outputs.npy", "outputs_parallel.npy", "outputs_exact_causal.npy"}) {
        const NpyArray array = readArray(out + "/" + name);
        QCOMPARE(array.shape, (std::vector<qint64>{20, m}));
        QCOMPARE(array.dtype, NpyDtype::Float32);
    }
    const MatrixD outputs = matrixOf(readArray(out + "/outputs.npy"));
    QVERIFY(outputs == steps.outputs);
    QVERIFY(relativeError(outputs, matrixOf(readArray(out + "/outputs_parallel.npy"))) < 1e-5);
    QVERIFY(relativeError(matrixOf(readArray(out + "/outputs_exact_causal.npy")),
                          steps.outputsExact) < 1e-5);

    const QJsonObject json = readJson(out + "/steps.json");
    QCOMPARE(json["C"].toDouble(), double(c));
    QCOMPARE(json["M"].toDouble(), double(m));
    QCOMPARE(json["L"].toDouble(), 20.0);
    QCOMPARE(json["spec"].toObject()["method"].toString(), QStringLiteral("favor-positive"));
    QCOMPARE(json["spec"].toObject()["causal"].toBool(), true);
    QCOMPARE(json["states_range"].toObject()["from"].toDouble(), 0.0);
    QCOMPARE(json["states_range"].toObject()["to"].toDouble(), 20.0);
    QVERIFY(json["state_size"].toObject()["explanation"].toString().contains("C x M"));
    const QJsonArray records = json["steps"].toArray();
    QCOMPARE(records.size(), 20);
    for (int t = 0; t < records.size(); ++t) {
        const QJsonObject record = records[t].toObject();
        const CausalStepRecord& expected = steps.records[std::size_t(t)];
        QCOMPARE(record["position"].toDouble(), double(t));
        QCOMPARE(record["token"].toString(), input.labels[t]);
        QCOMPARE(record["denominator"].toDouble(), expected.denominator);
        QCOMPARE(record["state_norm"].toDouble(), expected.stateNorm);
        QCOMPARE(record["normalizer_norm"].toDouble(), expected.normalizerNorm);
        QCOMPARE(record["error_to_exact"].toDouble(), expected.errorToExact);
        QVERIFY(record["difference_to_parallel"].isDouble());
        QVERIFY(record["difference_to_parallel"].toDouble() <
                1e-5 * steps.outputs.cwiseAbs().maxCoeff());
    }
}

void TestSteps::cliFromToLimitsStates()
{
    // Property: --from I --to J writes the states of positions I <= t < J only, the same values
    // as the full run, and steps.json says which; the per-position arrays stay L long.
    REQUIRE_STEPS_COMMAND();
    QTemporaryDir dir;
    const QString all = dir.filePath(QStringLiteral("all"));
    const QString some = dir.filePath(QStringLiteral("some"));
    AppRun run = runSteps(smallInput() + QStringList{"--out", all});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    run = runSteps(smallInput() + QStringList{"--out", some, "--from", "3", "--to", "7"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const NpyArray states = readArray(some + "/states.npy");
    QCOMPARE(states.shape, (std::vector<qint64>{4, 16, 8}));
    QVERIFY(matrixOf(states) == matrixOf(readArray(all + "/states.npy")).middleRows(3, 4));
    QCOMPARE(readArray(some + "/outputs.npy").shape, (std::vector<qint64>{20, 8}));
    const QJsonObject range = readJson(some + "/steps.json")["states_range"].toObject();
    QCOMPARE(range["from"].toDouble(), 3.0);
    QCOMPARE(range["to"].toDouble(), 7.0);
    QCOMPARE(range["count"].toDouble(), 4.0);
}

void TestSteps::cliBadArgumentsExitTwoNamingTheOption_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("from after to") << QStringList{"--from", "5", "--to", "3"} << "--from";
    QTest::newRow("from equal to to") << QStringList{"--from", "4", "--to", "4"} << "--from";
    QTest::newRow("from beyond L") << QStringList{"--from", "20"} << "--from";
    QTest::newRow("to beyond L") << QStringList{"--to", "21"} << "--to";
    QTest::newRow("to zero") << QStringList{"--to", "0"} << "--to";
    QTest::newRow("from not a number") << QStringList{"--from", "x"} << "--from";
    QTest::newRow("from negative") << QStringList{"--from", "-2"} << "--from";
    QTest::newRow("head beyond H") << QStringList{"--head", "1"} << "--head";
    QTest::newRow("method exact") << QStringList{"--method", "exact"} << "--method exact";
    QTest::newRow("unknown option") << QStringList{"--stride", "2"} << "stride";
    QTest::newRow("stray argument") << QStringList{"extra"} << "extra";
}

void TestSteps::cliBadArgumentsExitTwoNamingTheOption()
{
    // Property: bad usage exits 2 with one line on stderr naming the option at fault, and writes
    // nothing (the output folder is not even created).
    REQUIRE_STEPS_COMMAND();
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("steps"));
    const AppRun run = runSteps(smallInput() + QStringList{"--out", out} + arguments);
    QVERIFY2(refusedNaming(run, named), qPrintable(run.describe()));
    QVERIFY2(isOneLine(run.err), qPrintable(run.describe()));
    QVERIFY2(!QFileInfo::exists(out), qPrintable(run.describe()));
}

void TestSteps::cliTinyBudgetExitsThreeMentioningFrom()
{
    // Property: when the states of every position exceed --memory-budget, the run exits 3, says
    // to use --from/--to, and writes nothing; following the advice under the same budget works.
    REQUIRE_STEPS_COMMAND();
    // L = 400, C = 128, M = 8: the states take 400 x 128 x 8 x 8 bytes = 3.3 MB, the rest about
    // 1.6 MB.
    const QStringList input = {"--random",        "400", "--d", "8", "--features", "128",
                               "--memory-budget", "2M"};
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("steps"));
    AppRun run = runSteps(input + QStringList{"--out", out});
    QVERIFY2(run.finished && run.exitCode == 3, qPrintable(run.describe()));
    // The command line names its options for the settings the engine names, in their order.
    QVERIFY2(QString::fromUtf8(run.err).contains(
                 "or raise the memory budget. Options: --from and --to, --features, "
                 "--memory-budget.\n"),
             qPrintable(run.describe()));
    QVERIFY2(QString::fromUtf8(run.err).count('\n') == 1, qPrintable(run.describe()));
    QVERIFY(!QFileInfo::exists(out));

    run = runSteps(input + QStringList{"--out", out, "--from", "350"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(readArray(out + "/states.npy").shape, (std::vector<qint64>{50, 128, 8}));
}

QTEST_GUILESS_MAIN(TestSteps)
#include "test_steps.moc"

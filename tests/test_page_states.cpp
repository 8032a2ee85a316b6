// The page states sessions keep (core/sessions: TimingPageState, ErrorPageState,
// GenerationPageState), which the window's pages read and write and `bench` and `errors
// --save-session` write without a widget: the state of a page showing a result has its controls
// set to that result's sweep; JSON round trips; a malformed state is refused naming the field.

#include "errors.h"
#include "sessions/error_page_state.h"
#include "sessions/generation_page_state.h"
#include "sessions/timing_page_state.h"

#include <QJsonArray>
#include <QTest>

using namespace attnlab;

namespace {

SweepResult timingResult()
{
    SweepResult result;
    result.spec.methods = {{Method::ExactStreaming, false}, {Method::FavorPositive, true}};
    result.spec.lengths = {8, 256, 4096};  // 8 lies below the page's shortest length
    result.spec.headDim = 32;
    result.spec.features = 128;
    result.sgemmGflops = 100;
    result.threads = 2;
    for (const TimedMethod& method : result.spec.methods)
        for (const Eigen::Index length : result.spec.lengths) {
            SweepPoint point;
            point.method = method;
            point.length = length;
            point.secondsMedian = point.secondsMin = point.secondsMax = 1e-3;
            point.gflops = 1;
            result.points.push_back(point);
        }
    return result;
}

ErrorSweepResult errorResult()
{
    ErrorSweepResult result;
    result.spec.methods = {Method::FavorPositive, Method::Elu};
    result.spec.projections = {ProjectionKind::Iid};
    result.spec.sweep = ErrorSweepKind::Norm;
    result.spec.values = {0.5, 1, 1.5};
    result.spec.features = 32;
    result.spec.seeds = 3;
    result.spec.pairQuery = 2;
    result.spec.pairKey = 5;
    result.inputLength = 16;
    result.headDim = 8;
    result.heads = 1;
    result.scale = 0.35;
    result.pairQuery = VectorD::Ones(8);
    result.pairKey = VectorD::Ones(8);
    ErrorRow row;
    row.method = Method::Elu;
    row.value = 1;
    row.length = 16;
    result.rows.push_back(row);
    return result;
}

// The columns of a table of malformed page states: the field set, its bad value and the start of
// the message that refuses it.
void addMalformedFieldColumns()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QJsonValue>("value");
    QTest::addColumn<QString>("message");
}

// The current row of such a table: State::fromJson refuses `json` with the row's field set to its
// value, by an InputError whose message starts with the row's message.
template <typename State>
void checkTheFieldIsRefused(QJsonObject json)
{
    QFETCH(QString, field);
    QFETCH(QJsonValue, value);
    QFETCH(QString, message);
    json.insert(field, value);
    try {
        State::fromJson(json);
        QFAIL("a malformed state was read");
    } catch (const InputError& e) {
        QVERIFY2(e.message().startsWith(message), qPrintable(e.message()));
    }
}

}  // namespace

class TestPageStates : public QObject {
    Q_OBJECT

private slots:
    // The Timing page showing a sweep measured headless: its methods, the length range from the
    // shortest to the longest length (clamped to the controls), both variants it measured.
    void theTimingStateOfAResultHasItsSweep()
    {
        const SweepResult result = timingResult();
        const TimingPageState state = TimingPageState::showing(result);
        QCOMPARE(state.fromLength, TimingPageState::minLength);
        QCOMPARE(state.toLength, 4096);
        QCOMPARE(state.pointsPerOctave, 1);
        QVERIFY(state.nonCausal);
        QVERIFY(state.causal);
        QCOMPARE(state.spec.headDim, 32);
        QCOMPARE(int(state.result.points.size()), 6);

        const QJsonObject json = state.toJson();
        QCOMPARE(json.value("min_length").toInt(), 16);
        QCOMPARE(json.value("max_length").toInt(), 4096);
        const TimingPageState read = TimingPageState::fromJson(json);
        QCOMPARE(read.toJson(), json);
    }

    // A page without a result writes no "result"; the variants default to non-causal only.
    void aTimingStateWithoutAResultWritesNone()
    {
        TimingPageState state;
        QVERIFY(!state.toJson().contains("result"));
        QJsonObject json = state.toJson();
        json.remove("non_causal");
        json.remove("causal");
        const TimingPageState read = TimingPageState::fromJson(json);
        QVERIFY(read.nonCausal);
        QVERIFY(!read.causal);
    }

    void aMalformedTimingStateIsRefusedNamingTheField_data()
    {
        addMalformedFieldColumns();
        QTest::newRow("spec") << "spec" << QJsonValue(3) << "spec must be an object";
        QTest::newRow("min_length")
            << "min_length" << QJsonValue(8) << "min_length must be an integer from 16 to 1048576";
        QTest::newRow("max below min")
            << "max_length" << QJsonValue(64) << "max_length must be an integer from 128";
        QTest::newRow("points_per_octave") << "points_per_octave" << QJsonValue(1.5)
                                           << "points_per_octave must be an integer from 1 to 4";
        QTest::newRow("result") << "result" << QJsonValue("none") << "result must be an object";
    }

    void aMalformedTimingStateIsRefusedNamingTheField()
    {
        checkTheFieldIsRefused<TimingPageState>(TimingPageState().toJson());
    }

    // The Error analysis page showing a sweep computed headless: its methods, projections and
    // numbers, the swept values in the text of its kind, the other kinds' default values.
    void theErrorStateOfAResultHasItsSweep()
    {
        const ErrorSweepResult result = errorResult();
        const ErrorPageState state =
            ErrorPageState::showing(result, ErrorMetric::MeanTotalVariation, ErrorAxis::Flops);
        QCOMPARE(state.values.at(ErrorSweepKind::Norm), QStringLiteral("0.5, 1, 1.5"));
        QCOMPARE(state.values.at(ErrorSweepKind::Features),
                 ErrorPageState::defaultValues(ErrorSweepKind::Features));
        QCOMPARE(state.pairKey, 5);

        const QJsonObject json = state.toJson();
        QCOMPARE(json.value("methods").toArray(),
                 (QJsonArray{QStringLiteral("favor-positive"), QStringLiteral("elu")}));
        QCOMPARE(json.value("projections").toArray(), QJsonArray{QStringLiteral("iid")});
        QCOMPARE(json.value("sweep").toString(), QStringLiteral("norm"));
        QCOMPARE(json.value("metric").toString(), errorMetricName(ErrorMetric::MeanTotalVariation));
        QCOMPARE(json.value("axis").toString(), QStringLiteral("flops"));
        const ErrorPageState read = ErrorPageState::fromJson(json);
        QCOMPARE(read.toJson(), json);
        QCOMPARE(int(read.result.rows.size()), 1);
    }

    void aMalformedErrorStateIsRefusedNamingTheField_data()
    {
        addMalformedFieldColumns();
        QTest::newRow("method") << "methods" << QJsonValue(QJsonArray{"favor-positive", "fast"})
                                << "methods[1]: unknown name \"fast\"";
        QTest::newRow("projections")
            << "projections" << QJsonValue("iid") << "projections must be an array";
        QTest::newRow("sweep") << "sweep" << QJsonValue("depth")
                               << "sweep must be features, norm or length";
        QTest::newRow("values") << "values" << QJsonValue(QJsonObject{{"features", "8"}})
                                << "values.norm must be a string";
        QTest::newRow("seeds") << "seeds" << QJsonValue(0)
                               << "seeds must be an integer from 1 to 100000";
        QTest::newRow("axis") << "axis" << QJsonValue("seconds") << "axis: unknown axis";
    }

    void aMalformedErrorStateIsRefusedNamingTheField()
    {
        checkTheFieldIsRefused<ErrorPageState>(
            ErrorPageState::showing(errorResult(), ErrorMetric::KernelMse).toJson());
    }

    // The Generate page: every field comes back as it was written (the prompt typed, N, the
    // layers, the sampling, the followed head, whether it showed a generation); the defaults
    // write "layers": "all", greedy sampling and neither a prompt (the Input text) nor a head.
    void theGenerationStateRoundTrips()
    {
        GenerationPageState state;
        state.prompt = QStringLiteral("In the beginning");
        state.tokens = 48;
        state.replacedLayers = {0, 2};
        state.sampling.greedy = false;
        state.sampling.temperature = 0.75;
        state.sampling.topK = 40;
        state.sampling.seed = 7;
        state.followed = std::pair{2, 3};
        state.generated = true;
        const QJsonObject json = state.toJson();
        QCOMPARE(json.value("layers").toArray(), (QJsonArray{0, 2}));
        QCOMPARE(json.value("follow").toObject().value("head").toInt(), 3);
        const GenerationPageState read = GenerationPageState::fromJson(json);
        QCOMPARE(read.prompt, state.prompt);
        QCOMPARE(read.tokens, 48);
        QCOMPARE(read.replacedLayers, state.replacedLayers);
        QVERIFY(!read.sampling.greedy);
        QCOMPARE(read.sampling.temperature, 0.75);
        QCOMPARE(read.sampling.topK, 40);
        QCOMPARE(read.sampling.seed, std::uint64_t(7));
        QCOMPARE(read.followed, state.followed);
        QVERIFY(read.generated);
        QCOMPARE(read.toJson(), json);

        const QJsonObject defaults = GenerationPageState().toJson();
        QCOMPARE(defaults.value("layers").toString(), QStringLiteral("all"));
        QCOMPARE(defaults.value("sampling").toObject(), (QJsonObject{{"greedy", true}}));
        QVERIFY(!defaults.contains("prompt") && !defaults.contains("follow"));
        const GenerationPageState empty = GenerationPageState::fromJson(QJsonObject());
        QVERIFY(!empty.prompt && !empty.followed && !empty.generated);
        QVERIFY(empty.replacedLayers.empty() && empty.sampling.greedy);
        QCOMPARE(empty.tokens, 32);
    }

    void aMalformedGenerationStateIsRefusedNamingTheField_data()
    {
        addMalformedFieldColumns();
        QTest::newRow("tokens") << "tokens" << QJsonValue(0)
                                << "tokens must be an integer from 1 to 1048576";
        QTest::newRow("prompt") << "prompt" << QJsonValue(3) << "prompt must be a string";
        QTest::newRow("layers") << "layers" << QJsonValue("some")
                                << "layers must be \"all\" or an array of layer numbers";
        QTest::newRow("layers empty")
            << "layers" << QJsonValue(QJsonArray{}) << "layers must be \"all\" or a non-empty";
        QTest::newRow("layer") << "layers" << QJsonValue(QJsonArray{1, -1})
                               << "layers[1] must be an integer from 0 to 1023";
        QTest::newRow("temperature")
            << "sampling" << QJsonValue(QJsonObject{{"greedy", false}, {"temperature", 0}})
            << "sampling.temperature must be a number > 0";
        QTest::newRow("top-k") << "sampling" << QJsonValue(QJsonObject{{"top_k", -1}})
                               << "sampling.top_k must be an integer from 0";
        QTest::newRow("seed") << "sampling" << QJsonValue(QJsonObject{{"seed", 1.5}})
                              << "sampling.seed must be an integer from 0 to 2^53 - 1";
        QTest::newRow("follow") << "follow" << QJsonValue(QJsonObject{{"layer", 1}})
                                << "follow must have a layer and a head";
        QTest::newRow("followed head")
            << "follow" << QJsonValue(QJsonObject{{"layer", 1}, {"head", -2}})
            << "follow.head must be an integer from 0 to 1023";
        QTest::newRow("generated")
            << "generated" << QJsonValue("yes") << "generated must be a boolean";
    }

    void aMalformedGenerationStateIsRefusedNamingTheField()
    {
        checkTheFieldIsRefused<GenerationPageState>(GenerationPageState().toJson());
    }
};

QTEST_GUILESS_MAIN(TestPageStates)
#include "test_page_states.moc"

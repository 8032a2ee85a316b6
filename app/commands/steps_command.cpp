#include "commands/subcommands.h"

#include "named_values.h"
#include "io/atomic_files.h"
#include "sweeps/causal_steps.h"
#include "command_line.h"
#include "errors.h"
#include "io/npy.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"

#include <QCommandLineParser>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <cmath>
#include <limits>
#include <optional>

namespace attnlab {

namespace {

QJsonValue number(double value)
{
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

// The value of --name as an integer >= 0 (its range is checked once L is known), or nothing when
// the option is absent.
std::optional<qint64> indexOption(const QCommandLineParser& parser, const char* name)
{
    const QString key = QString::fromLatin1(name);
    if (!parser.isSet(key))
        return std::nullopt;
    const QString text = parser.value(key);
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    if (!ok || value < 0)
        throw InputError(QStringLiteral("--%1: expected an integer >= 0, got \"%2\"")
                             .arg(QLatin1String(name), text));
    return value;
}

QJsonObject stepsJson(const CausalSteps& steps, int heads)
{
    const Eigen::Index c = steps.featureCount, m = steps.valueDim;
    const FormAgreement agreement = steps.agreementThrough();
    QJsonObject json;
    json[QLatin1String("spec")] = steps.spec.toJson();
    json[QLatin1String("scale")] = steps.scale;
    json[QLatin1String("head")] = steps.head;
    json[QLatin1String("heads")] = heads;
    json[QLatin1String("L")] = double(steps.length());
    json[QLatin1String("C")] = double(c);
    json[QLatin1String("M")] = double(m);
    json[QLatin1String("positions")] = QStringLiteral(
        "0-based token positions t, the rows of every L x ... array; the state after token t is "
        "S_i, z_i with i = t + 1: S_i = S_{i-1} + phi(k_i) v_i^T, z_i = z_{i-1} + phi(k_i), "
        "y_i = phi(q_i)^T S_i / phi(q_i)^T z_i");
    json[QLatin1String("state_size")] = QJsonObject{
        {QLatin1String("values"), double(c * m + c)},
        {QLatin1String("explanation"),
         QStringLiteral("S_i is C x M = %1 x %2 = %3 values (C features by M value dimensions) "
                        "and z_i C = %1 values, whatever the position: the recurrent form "
                        "carries O(C M) memory from token to token, independent of i, where "
                        "exact causal attention at token i needs all i keys and values.")
             .arg(c)
             .arg(m)
             .arg(c * m)},
    };
    json[QLatin1String("states_range")] = QJsonObject{
        {QLatin1String("from"), double(steps.statesFrom)},
        {QLatin1String("to"), double(steps.statesTo)},
        {QLatin1String("count"), double(steps.statesTo - steps.statesFrom)},
        {QLatin1String("explanation"),
         QStringLiteral("states.npy[r] is S_i (C x M) after token t = from + r, i = t + 1")},
    };
    json[QLatin1String("tokens")] = QJsonArray::fromStringList(steps.labels);
    json[QLatin1String("largest_difference_to_parallel")] = QJsonObject{
        {QLatin1String("absolute"), number(agreement.absolute)},
        {QLatin1String("relative"), number(agreement.relative)},
    };
    double largestError = 0, errorSum = 0;
    for (const CausalStepRecord& record : steps.records) {
        largestError = std::max(largestError, record.errorToExact);
        errorSum += record.errorToExact;
    }
    json[QLatin1String("error_to_exact")] = QJsonObject{
        {QLatin1String("max"), number(largestError)},
        {QLatin1String("mean"),
         number(errorSum / double(std::max<Eigen::Index>(1, steps.length())))},
    };
    QJsonArray nonPositive;
    for (const Eigen::Index t : steps.nonPositivePositions)
        nonPositive.append(double(t));
    json[QLatin1String("nonpositive_denominator_positions")] = nonPositive;
    QJsonArray records;
    for (const CausalStepRecord& record : steps.records) {
        records.append(QJsonObject{
            {QLatin1String("position"), double(record.position)},
            {QLatin1String("i"), double(record.position + 1)},
            {QLatin1String("token"), steps.labels.value(int(record.position))},
            {QLatin1String("denominator"), number(record.denominator)},
            {QLatin1String("state_norm"), number(record.stateNorm)},
            {QLatin1String("normalizer_norm"), number(record.normalizerNorm)},
            {QLatin1String("difference_to_parallel"), number(record.differenceToParallel)},
            {QLatin1String("relative_difference_to_parallel"),
             number(record.relativeDifferenceToParallel)},
            {QLatin1String("error_to_exact"), number(record.errorToExact)},
        });
    }
    json[QLatin1String("steps")] = records;
    return json;
}

void writeArray(AtomicFileSet& files, const QString& name, const MatrixD& values,
                const std::vector<qint64>& shape, NpyDtype dtype)
{
    writeNpy(files.open(name), values.data(), shape, dtype);
}

}  // namespace

void addStepsOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Runs causal linear attention of one head as a recurrent network, one token at a time: "
        "S_i = S_{i-1} + phi(k_i) v_i^T, z_i = z_{i-1} + phi(k_i), y_i = phi(q_i)^T S_i / "
        "phi(q_i)^T z_i (C features, M = d_v value dimensions). The mask is causal whatever "
        "--causal says, and the method must be a feature map (not exact). Writes into --out DIR:\n"
        "  states.npy                the states S_i of positions [--from, --to), count x C x M\n"
        "  normalizers.npy           z_i, L x C\n"
        "  outputs.npy               the recurrent outputs y_i, L x M\n"
        "  outputs_parallel.npy      the same by the chunked (parallel) causal form, L x M\n"
        "  outputs_exact_causal.npy  exact causal softmax attention, L x M\n"
        "  steps.json                per position: token, denominator phi(q_i)^T z_i, |S_i|_F, "
        "|z_i|, difference to the parallel form, error to exact; the spec, C, M, the states "
        "range\n"
        "Positions are 0-based tokens t = 0..L-1 (the rows of every array); the state after "
        "token t is S_i with i = t + 1. Arrays are float32 or float64 as --precision.\n\n"
        "Exit status: 0 done; 2 bad usage or input; 3 refused for memory (keep fewer states "
        "with --from/--to); 1 other failure. Files are written all or none."));
    parser.addHelpOption();
    addSpecOptions(parser);
    parser.addOptions({
        outFolderOption(),
        {QStringLiteral("from"),
         QStringLiteral("The first position whose state goes into "
                        "states.npy (0-based, default 0)."),
         QStringLiteral("I")},
        {QStringLiteral("to"),
         QStringLiteral("The position after the last one whose state goes "
                        "into states.npy (default L): states of positions "
                        "I <= t < J."),
         QStringLiteral("J")},
        {QStringLiteral("head"), QStringLiteral("The head to run (0-based, default 0)."),
         QStringLiteral("H")},
    });
}

int runStepsCommand(const QCommandLineParser& parser)
{
    // The spec first: a missing option value (--random --out DIR) is named there.
    ExperimentSpec spec = specFromOptions(parser);
    spec.causal = true;
    refusePositionalArguments(parser);
    const QString out = requiredOutFolder(parser);
    requireFeatureState(spec, QStringLiteral("--method %1: ").arg(spec.methodName()));
    const std::optional<qint64> from = indexOption(parser, "from");
    const std::optional<qint64> to = indexOption(parser, "to");
    const std::optional<qint64> head = indexOption(parser, "head");

    CausalStepsOptions options;
    options.budget = budgetFromOptions(parser);
    const AttentionInput input = inputFromSpec(spec, options.budget);
    const qint64 length = input.length();
    const qint64 heads = qint64(input.heads.size());
    if (head && *head >= heads)
        throw InputError(QStringLiteral("--head: %1 is out of range: the input has %2 (0 to %3)")
                             .arg(*head)
                             .arg(countOf(heads, QStringLiteral("head"), QStringLiteral("heads")))
                             .arg(heads - 1));
    if (from && *from >= length)
        throw InputError(QStringLiteral("--from: position %1 is out of range: the input has "
                                        "L = %2 positions, 0 to %3")
                             .arg(*from)
                             .arg(length)
                             .arg(length - 1));
    if (to && (*to < 1 || *to > length))
        throw InputError(QStringLiteral("--to: %1 is out of range: the states range [from, to) "
                                        "must end at 1 to L = %2")
                             .arg(*to)
                             .arg(length));
    options.head = int(head.value_or(0));
    options.statesFrom = from.value_or(0);
    options.statesTo = to.value_or(length);
    if (options.statesFrom >= options.statesTo)
        throw InputError(QStringLiteral("--from %1 is not before --to %2: the states range "
                                        "[from, to) must hold at least one position")
                             .arg(options.statesFrom)
                             .arg(options.statesTo));

    const CausalSteps steps = causalSteps(spec, input, options);

    const NpyDtype dtype =
        spec.precision == Precision::Float ? NpyDtype::Float32 : NpyDtype::Float64;
    const qint64 c = steps.featureCount, m = steps.valueDim;
    const qint64 count = steps.statesTo - steps.statesFrom;
    AtomicFileSet files(out);
    writeArray(files, QStringLiteral("states.npy"), steps.states, {count, c, m}, dtype);
    writeArray(files, QStringLiteral("normalizers.npy"), steps.normalizers, {length, c}, dtype);
    writeArray(files, QStringLiteral("outputs.npy"), steps.outputs, {length, m}, dtype);
    writeArray(files, QStringLiteral("outputs_parallel.npy"), steps.outputsParallel, {length, m},
               dtype);
    writeArray(files, QStringLiteral("outputs_exact_causal.npy"), steps.outputsExact, {length, m},
               dtype);
    writeAll(files.open(QStringLiteral("steps.json")),
             QJsonDocument(stepsJson(steps, int(heads))).toJson(QJsonDocument::Indented));
    files.commit();

    const FormAgreement agreement = steps.agreementThrough();
    double largestError = 0;
    for (const CausalStepRecord& record : steps.records)
        largestError = std::max(largestError, record.errorToExact);
    QTextStream stream(stdout);
    stream << QStringLiteral("%1, causal, head %2, L = %3, state C x M = %4 x %5: the recurrent "
                             "and parallel forms agree to %6 (largest |difference| relative to "
                             "max |y|); largest error to exact causal softmax %7\n")
                  .arg(spec.methodName())
                  .arg(steps.head)
                  .arg(length)
                  .arg(c)
                  .arg(m)
                  .arg(agreement.relative, 0, 'g', 3)
                  .arg(largestError, 0, 'g', 3);
    if (!steps.nonPositivePositions.empty())
        stream << QStringLiteral("warning: %1 of %2 positions have a non-positive denominator "
                                 "phi(q_i)^T z_i (listed in steps.json)\n")
                      .arg(steps.nonPositivePositions.size())
                      .arg(length);
    for (const QString& note : input.notes)  // --keep-last's dropped tokens
        stream << "warning: " << note << '\n';
    stream << "wrote " << QDir(out).absolutePath() << '\n';
    return ExitSuccess;
}

}  // namespace attnlab

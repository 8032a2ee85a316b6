#include "commands/subcommands.h"

#include "command_line.h"
#include "ui/errors/error_chart.h"
#include "sessions/error_page_state.h"
#include "sweeps/error_sweep.h"
#include "errors.h"
#include "ui/plotting/figure_export.h"
#include "sessions/session.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"
#include "sweeps/timing_sweep.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <algorithm>
#include <cmath>

#include <unistd.h>

namespace attnlab {

namespace {

constexpr QSize kPlotSize(1200, 760);
const QString kDefaultMethods = QStringLiteral("favor-positive,favor-trig");
const QString kDefaultFeatures = QStringLiteral("16,32,64,128,256");
const QString kDefaultNorms = QStringLiteral("0.25,0.5,0.75,1,1.25,1.5,2");
const QString kDefaultLengths = QStringLiteral("16,32,64,128,256");
constexpr int kDefaultSeeds = 8;
constexpr int kMaxSeeds = 100'000;

QString option(const char* name)
{
    return QString::fromLatin1(name);
}

// The options of this command that are not the experiment's (see addSpecOptions). "features"
// is the experiment's option, read here as a list.
const QStringList kSweepOptions = {"methods", "features", "seeds",        "projections", "sweep",
                                   "norms",   "lengths",  "pair",         "metric",      "against",
                                   "out",     "plot",     "save-session", "progress",    "help",
                                   "h",       "?"};

// The experiment the sweep starts from: the input and engine options of the command line (every
// option but the sweep's own), parsed as `compute` parses them.
ExperimentSpec baseSpec(const QCommandLineParser& parser)
{
    for (const char* single : {"method", "projection"}) {
        if (parser.isSet(option(single)))
            throw InputError(
                QStringLiteral("--%1: the sweep takes --%1s LIST").arg(QLatin1String(single)));
    }
    return specFromOptionsExcept(parser, kSweepOptions, QStringLiteral("attention-lab errors"));
}

// --name as numbers, each an integer when `integers`, in [minimum, maximum]; sorted, duplicates
// dropped.
std::vector<double> numberList(const QCommandLineParser& parser, const char* name,
                               const QString& fallback, bool integers, double minimum,
                               double maximum)
{
    std::vector<double> values;
    for (const QString& item : listOption(parser, name, fallback)) {
        bool ok = false;
        const double value = item.toDouble(&ok);
        if (!ok || !std::isfinite(value) || (integers && value != std::floor(value)) ||
            value < minimum || value > maximum || (!integers && value <= 0))
            throw InputError(QStringLiteral("--%1: expected %2 %3 to %4, got \"%5\"")
                                 .arg(QLatin1String(name), integers
                                                               ? QStringLiteral("integers from")
                                                               : QStringLiteral("numbers above"))
                                 .arg(integers ? minimum : 0, 0, 'g', 12)
                                 .arg(maximum, 0, 'g', 12)  // 1048576, not 1.04858e+06
                                 .arg(item));
        values.push_back(value);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

std::vector<Method> methodsOption(const QCommandLineParser& parser)
{
    std::vector<Method> methods;
    for (const QString& name : listOption(parser, "methods", kDefaultMethods)) {
        Method kind;
        if (!parseApproximation(name, &kind))
            throw InputError(
                QStringLiteral("--methods: unknown method \"%1\" (choose %2; exact "
                               "attention is what the errors are measured against)")
                    .arg(name, methodNames(approximationMethods(), QStringLiteral(", "))));
        if (std::find(methods.begin(), methods.end(), kind) == methods.end())
            methods.push_back(kind);
    }
    return methods;
}

std::vector<ProjectionKind> projectionsOption(const QCommandLineParser& parser)
{
    std::vector<ProjectionKind> projections;
    for (const QString& name :
         listOption(parser, "projections", QStringLiteral("orthogonal,iid"))) {
        ProjectionKind kind;
        if (!parseProjectionKind(name, &kind))
            throw InputError(QStringLiteral("--projections: unknown projection \"%1\" (choose "
                                            "orthogonal, iid or simplex)")
                                 .arg(name));
        if (std::find(projections.begin(), projections.end(), kind) == projections.end())
            projections.push_back(kind);
    }
    return projections;
}

// --pair A,B: the query and key of the kernel MSE (default 0,1).
std::pair<int, int> pairOption(const QCommandLineParser& parser)
{
    if (!parser.isSet(option("pair")))
        return {0, 1};
    const QString text = parser.value(option("pair"));
    const QStringList parts = text.split(QLatin1Char(','));
    bool okQuery = false, okKey = false;
    const int query = parts.value(0).trimmed().toInt(&okQuery);
    const int key = parts.value(1).trimmed().toInt(&okKey);
    if (parts.size() != 2 || !okQuery || !okKey || query < 0 || key < 0)
        throw InputError(QStringLiteral("--pair: expected a query and a key index such as 0,1, "
                                        "got \"%1\"")
                             .arg(text));
    return {query, key};
}

// The sweep the options describe, on the experiment of the input options.
ErrorSweepSpec sweepFromOptions(const QCommandLineParser& parser)
{
    ErrorSweepSpec spec;
    spec.experiment = baseSpec(parser);
    QStringList skipped;
    spec.methods =
        skipMethodsWithoutCausalForm(methodsOption(parser), spec.experiment.causal, &skipped);
    warnMethodsLeftOut(skipped, spec.experiment);
    spec.projections = projectionsOption(parser);
    if (parser.isSet(option("sweep"))) {
        const QString name = parser.value(option("sweep"));
        if (!parseErrorSweepKind(name, &spec.sweep))
            throw InputError(QStringLiteral("--sweep: unknown sweep \"%1\" (choose features, "
                                            "norm or length)")
                                 .arg(name));
    }
    spec.seeds = integerOption(parser, "seeds", kDefaultSeeds, 1, kMaxSeeds);
    const auto [query, key] = pairOption(parser);
    spec.pairQuery = query;
    spec.pairKey = key;
    spec.budget = budgetFromOptions(parser);

    const auto notFor = [&](const char* name, const char* sweep) {
        if (parser.isSet(option(name)))
            throw InputError(QStringLiteral("--%1: applies to --sweep %2 only")
                                 .arg(QLatin1String(name), QLatin1String(sweep)));
    };
    if (spec.sweep == ErrorSweepKind::Features) {
        notFor("norms", "norm");
        notFor("lengths", "length");
        spec.values =
            numberList(parser, "features", kDefaultFeatures, true, 1, SpecLimits::features);
        return spec;
    }
    const std::vector<double> features =
        numberList(parser, "features", QStringLiteral("64"), true, 1, SpecLimits::features);
    if (features.size() != 1)
        throw InputError(QStringLiteral("--features: a %1 sweep runs at one m; give one value")
                             .arg(errorSweepKindName(spec.sweep)));
    spec.features = int(features.front());
    if (spec.sweep == ErrorSweepKind::Norm) {
        notFor("lengths", "length");
        spec.values = numberList(parser, "norms", kDefaultNorms, false, 0, 1e6);
    } else {
        notFor("norms", "norm");
        spec.values = numberList(parser, "lengths", kDefaultLengths, true, 1, SpecLimits::length);
    }
    return spec;
}

// Checks what needs the built input, naming the option: lengths within a non-random input, the
// pair within the shortest input of the sweep.
void checkAgainstInput(const ErrorSweepSpec& spec, const AttentionInput& input)
{
    Eigen::Index shortest = input.length();
    if (spec.sweep == ErrorSweepKind::Length) {
        const auto longest = Eigen::Index(spec.values.back());
        if (spec.experiment.input.kind != InputKind::Random && longest > input.length())
            throw InputError(QStringLiteral("--lengths: %1 is longer than the input (%2 "
                                            "positions); the sweep takes the first L positions")
                                 .arg(longest)
                                 .arg(input.length()));
        shortest = Eigen::Index(spec.values.front());
    }
    if (spec.pairQuery >= shortest || spec.pairKey >= shortest)
        throw InputError(QStringLiteral("--pair: %1,%2 is outside the first %3 positions (the "
                                        "shortest input of the sweep)")
                             .arg(spec.pairQuery)
                             .arg(spec.pairKey)
                             .arg(shortest));
}

// "m = 64", "norm = 1.5", "L = 128".
QString valueText(ErrorSweepKind sweep, double value)
{
    switch (sweep) {
        case ErrorSweepKind::Features: return QStringLiteral("m = %1").arg(value);
        case ErrorSweepKind::Norm: return QStringLiteral("norm = %1").arg(value);
        case ErrorSweepKind::Length: return QStringLiteral("L = %1").arg(value);
    }
    return QString();
}

// The summary: per curve its error at the first and last value (and for features and length
// sweeps the fitted log-log slope), and the kernel MSE against Lemma 2 at the last value.
void printSummary(QTextStream& out, const ErrorSweepResult& result, ErrorMetric metric)
{
    const std::vector<ErrorCurve> curves = errorCurves(result, metric);
    const std::vector<ErrorCurve> kernel = errorCurves(result, ErrorMetric::KernelMse);
    const bool logLog = result.spec.sweep != ErrorSweepKind::Norm;
    for (std::size_t i = 0; i < curves.size(); ++i) {
        const ErrorCurve& curve = curves[i];
        QString line = curve.label() + QStringLiteral(": ");
        if (curve.points.empty()) {
            out << line << "no finite value\n";
            continue;
        }
        const ErrorCurvePoint& first = curve.points.front();
        const ErrorCurvePoint& last = curve.points.back();
        line += QStringLiteral("%1 %2 at %3 to %4 at %5")
                    .arg(errorMetricName(metric))
                    .arg(first.mean, 0, 'g', 3)
                    .arg(valueText(result.spec.sweep, first.value))
                    .arg(last.mean, 0, 'g', 3)
                    .arg(valueText(result.spec.sweep, last.value));
        if (logLog && curve.points.size() > 1) {
            std::vector<double> values, means;
            for (const ErrorCurvePoint& point : curve.points) {
                values.push_back(point.value);
                means.push_back(point.mean);
            }
            line += QStringLiteral(", slope %1").arg(logLogSlope(values, means), 0, 'f', 2);
        }
        if (metric != ErrorMetric::KernelMse && !kernel[i].points.empty()) {
            const ErrorCurvePoint& mse = kernel[i].points.back();
            line += QStringLiteral("; kernel MSE at %1 %2 \u00b1 %3")
                        .arg(valueText(result.spec.sweep, mse.value))
                        .arg(mse.mean, 0, 'g', 3)
                        .arg(mse.standardError, 0, 'g', 2);
            if (hasLemma2(curve.method))
                line += QStringLiteral(" (Lemma 2, iid: %1)")
                            .arg(lemma2MseAt(result, curve.method, mse.value), 0, 'g', 3);
        }
        out << line << '\n';
    }
}

// The Pareto front of `metric` against the cost: each point's curve, value, cost and error.
void printParetoFront(QTextStream& out, const ErrorSweepResult& result, ErrorMetric metric,
                      ErrorAxis axis)
{
    const std::vector<ErrorCurve> curves = errorCurves(result, metric);
    out << QStringLiteral("Pareto front of %1 against %2 (the lowest error at that cost or "
                          "less):\n")
               .arg(errorMetricName(metric), axis == ErrorAxis::Seconds
                                                 ? QStringLiteral("the measured time")
                                                 : QStringLiteral("the flop count"));
    for (const auto& [cost, error] : paretoFront(curves, axis)) {
        for (const ErrorCurve& curve : curves) {
            for (const ErrorCurvePoint& point : curve.points) {
                if (axisValue(point, axis) != cost || point.mean != error)
                    continue;
                out << QStringLiteral("  %1, %2: %3 %4, error %5\n")
                           .arg(curve.label(), valueText(result.spec.sweep, point.value))
                           .arg(cost, 0, 'g', 3)
                           .arg(axis == ErrorAxis::Seconds ? QStringLiteral("s")
                                                           : QStringLiteral("flops"))
                           .arg(error, 0, 'g', 3);
            }
        }
    }
}

// One line per curve point, after its last seed: the point and its mean metric over the seeds.
void printProgress(QTextStream& err, const ErrorSweepSpec& spec, const ErrorSweepResult& sofar,
                   int total, ErrorMetric metric)
{
    const ErrorRow& row = sofar.rows.back();
    const int done = int(sofar.rows.size());
    const std::uint64_t lastSeed =
        spec.experiment.approximation.seed + std::uint64_t(spec.seeds - 1);
    if (row.seed && *row.seed != lastSeed)
        return;
    const int seeds = row.seed ? spec.seeds : 1;
    double mean = 0;
    for (int k = 0; k < seeds; ++k)
        mean += sofar.rows[sofar.rows.size() - 1 - std::size_t(k)].metric(metric) / seeds;
    err << QStringLiteral("[%1/%2] %3, %4: done, mean %5 %6\n")
               .arg(done)
               .arg(total)
               .arg(row.curveLabel(), valueText(spec.sweep, row.value), errorMetricName(metric))
               .arg(mean, 0, 'g', 3);
    err.flush();
}

}  // namespace

void addErrorsOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Measures how far the approximations are from exact softmax attention on one input, and "
        "how that changes with the number of features m (--sweep features), the query/key norm "
        "multiplier (--sweep norm, at one m) or the sequence length L (--sweep length, the first "
        "L positions, at one m). Every method runs with every projection (orthogonal and iid "
        "rows of W) and --seeds seeds of W (--seed, --seed + 1, ...). Writes one CSV row per "
        "(method, projection, value, seed) into --out: method,projection,sweep,value,seed,m,norm,"
        "L,rel_frobenius_attention,rel_frobenius_output,max_abs,mean_abs,mean_tv,mean_kl,"
        "kernel_mse,nonpositive_rows. kernel_mse is (phi(q_a).phi(k_b) - exp(q'_a.k'_b))^2 for "
        "the pair --pair a,b of head 0 under the row's W: its mean over the seeds is the "
        "empirical MSE that Lemma 2 of the Performer paper gives in closed form. Fields that do "
        "not apply are empty (elu and taylor2 draw no W: one row per value).\n\n"
        "Exit status: 0 done; 2 bad usage or input; 3 refused for memory; 1 other failure. The "
        "CSV is written all or none."));
    parser.addHelpOption();
    // The sweep reads --features as a list and takes --methods and --projections instead of one
    // method and projection (those two are refused, with that hint).
    QCommandLineOption features(option("features"),
                                QStringLiteral("--sweep features: the numbers of features m "
                                               "(default %1); --sweep norm or length: the one m "
                                               "(default 64).")
                                    .arg(kDefaultFeatures),
                                QStringLiteral("LIST"));
    QCommandLineOption method(option("method"), QString(), QStringLiteral("NAME"));
    QCommandLineOption projection(option("projection"), QString(), QStringLiteral("NAME"));
    method.setFlags(QCommandLineOption::HiddenFromHelp);
    projection.setFlags(QCommandLineOption::HiddenFromHelp);
    addSpecOptions(parser, {features, method, projection});
    parser.addOptions({
        {option("methods"),
         QStringLiteral("Methods separated by commas: %1 (default %2).")
             .arg(methodNames(approximationMethods(), QStringLiteral(", ")), kDefaultMethods),
         QStringLiteral("LIST")},
        {option("seeds"), QStringLiteral("Seeds of W per point (default %1).").arg(kDefaultSeeds),
         QStringLiteral("N")},
        {option("projections"),
         QStringLiteral("Projections of W separated by commas: orthogonal, iid, simplex "
                        "(default orthogonal,iid)."),
         QStringLiteral("LIST")},
        {option("sweep"),
         QStringLiteral("What varies: features (m, from --features, default %1), norm (the "
                        "norm multiplier, from --norms) or length (L, from --lengths); default "
                        "features.")
             .arg(kDefaultFeatures),
         QStringLiteral("features|norm|length")},
        {option("norms"),
         QStringLiteral("--sweep norm: the norm multipliers of Q and K (default %1); --features "
                        "gives the one m (default 64).")
             .arg(kDefaultNorms),
         QStringLiteral("LIST")},
        {option("lengths"),
         QStringLiteral("--sweep length: the lengths L (default %1); random input is drawn as "
                        "long as the longest, other input must be at least that long.")
             .arg(kDefaultLengths),
         QStringLiteral("LIST")},
        {option("pair"),
         QStringLiteral("The query and key of the kernel MSE, as indices a,b (default 0,1)."),
         QStringLiteral("A,B")},
        {option("metric"),
         QStringLiteral("The error --plot draws and the summary gives: rel-frobenius-attention, "
                        "mean-tv, rel-frobenius-output or kernel-mse (default "
                        "rel-frobenius-attention)."),
         QStringLiteral("NAME")},
        {option("against"),
         QStringLiteral("The x axis of --plot: the swept value, or the cost of the approximate "
                        "output, measured (time) or counted (flops), for an equal-cost "
                        "comparison with the Pareto front of error against cost; the summary "
                        "then lists the front (default value)."),
         QStringLiteral("value|time|flops")},
        {option("progress"),
         QStringLiteral("Report progress on stderr, a line per curve point, even when stderr is "
                        "not a terminal.")},
    });
    parser.addOptions(tableOutputOptions(
        QStringLiteral("Also draw the chart, as PNG, SVG or PDF by the suffix."),
        QStringLiteral("Also write a session that opens the window on this input, on the Error "
                       "analysis page with this sweep.")));
}

int runErrorsCommand(const QCommandLineParser& parser)
{
    const ErrorSweepSpec spec = sweepFromOptions(parser);
    refusePositionalArguments(parser);
    ErrorMetric metric = ErrorMetric::RelFrobeniusAttention;
    if (parser.isSet(option("metric")) &&
        !parseErrorMetric(parser.value(option("metric")), &metric))
        throw InputError(QStringLiteral("--metric: unknown metric \"%1\" (choose "
                                        "rel-frobenius-attention, mean-tv, rel-frobenius-output "
                                        "or kernel-mse)")
                             .arg(parser.value(option("metric"))));
    ErrorAxis axis = ErrorAxis::Value;
    if (parser.isSet(option("against")) && !parseErrorAxis(parser.value(option("against")), &axis))
        throw InputError(QStringLiteral("--against: unknown axis \"%1\" (choose value, time or "
                                        "flops)")
                             .arg(parser.value(option("against"))));
    const TableOutputs outputs = tableOutputs(parser, "errors.csv", "errors.attnlab");

    const AttentionInput input = inputFromSpec(spec.experiment, spec.budget);
    checkAgainstInput(spec, input);

    QTextStream err(stderr);
    for (const QString& note : input.notes)  // --keep-last's dropped tokens
        err << "warning: " << note << '\n';
    const bool progress = parser.isSet(option("progress")) || isatty(STDERR_FILENO) != 0;
    const ErrorSweepResult result =
        runErrorSweep(spec, input, [&](const ErrorSweepResult& sofar, int total) {
            if (progress)
                printProgress(err, spec, sofar, total, metric);
        });

    writeTableOutputs(
        outputs, errorSweepCsv(result),
        [&](QTextStream& out) {
            printSummary(out, result, metric);
            if (axis != ErrorAxis::Value)
                printParetoFront(out, result, metric, axis);
        },
        [&] {
            QJsonObject view;
            view[QLatin1String("page")] = QStringLiteral("errors");
            view[QLatin1String("errors")] = ErrorPageState::showing(result, metric, axis).toJson();
            return Session{spec.experiment, view};
        },
        [&](const QString& plot) {
            ui::saveErrorChart(result, metric, axis, plot, plotFormat(plot), kPlotSize);
        });
    return ExitSuccess;
}

}  // namespace attnlab

#include "commands/subcommands.h"

#include "command_line.h"
#include "errors.h"
#include "experiment.h"
#include "ui/plotting/figure_export.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"
#include "sessions/session.h"
#include "sessions/timing_page_state.h"
#include "ui/timing/timing_chart.h"
#include "sweeps/timing_sweep.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

constexpr QSize kPlotSize(1600, 700);

const QString kDefaultMethods = QStringLiteral("exact-streaming,favor-positive,elu");
const QString kDefaultLengths = QStringLiteral("256:4096");
constexpr int kMaxPointsPerOctave = 64;

QString option(const char* name)
{
    return QString::fromLatin1(name);
}

// --methods: algorithm names separated by commas, each optionally NAME:causal; "all" for every
// algorithm (with the causal mask, every one that has a causal form). --causal makes every method
// causal. Duplicates are dropped.
std::vector<TimedMethod> methodsOption(const QCommandLineParser& parser)
{
    const QString text =
        parser.isSet(option("methods")) ? parser.value(option("methods")) : kDefaultMethods;
    const bool allCausal = parser.isSet(option("causal"));
    std::vector<TimedMethod> methods;
    // "all" with the causal mask takes the methods that have a causal form; a method named with
    // it that has none is refused by the sweep.
    const auto add = [&](Method algorithm, bool causal, bool fromAll = false) {
        const TimedMethod method{algorithm, causal || allCausal};
        if (fromAll && method.causal && !methodInfo(algorithm).hasCausalForm)
            return;
        if (std::find(methods.begin(), methods.end(), method) == methods.end())
            methods.push_back(method);
    };
    for (const QString& item : text.split(QLatin1Char(','))) {
        QString name = item.trimmed();
        bool causal = false;
        if (name.endsWith(QLatin1String(":causal"))) {
            causal = true;
            name.chop(int(qstrlen(":causal")));
        }
        if (name.isEmpty())
            throw InputError(QStringLiteral("--methods: an empty method name in \"%1\" (names "
                                            "are separated by commas)")
                                 .arg(text));
        if (name == QLatin1String("all")) {
            for (const MethodInfo& info : methodRegistry())
                add(info.method, causal, true);
            continue;
        }
        Method algorithm;
        if (!parseMethod(name, &algorithm))
            throw InputError(QStringLiteral("--methods: unknown method \"%1\" (choose %2 or all, "
                                            "each optionally with :causal)")
                                 .arg(name, methodNames(methodRegistry(), QStringLiteral(", "))));
        add(algorithm, causal);
    }
    return methods;
}

// One length of --lengths: an integer from 1 to SpecLimits::length, else the message.
Eigen::Index lengthValue(const QString& text, const QString& whole)
{
    bool ok = false;
    const qint64 value = text.trimmed().toLongLong(&ok);
    if (!ok)
        throw InputError(QStringLiteral("--lengths: expected lengths such as 128,256,1024 or a "
                                        "range MIN:MAX such as 128:65536, got \"%1\"")
                             .arg(whole));
    if (value < 1 || value > SpecLimits::length)
        throw InputError(QStringLiteral("--lengths: every length must be from 1 to %1, got %2")
                             .arg(SpecLimits::length)
                             .arg(value));
    return Eigen::Index(value);
}

// --lengths: "128,256,1024" (sorted, duplicates dropped) or "MIN:MAX", log-spaced with
// --points-per-octave points per doubling.
std::vector<Eigen::Index> lengthsOption(const QCommandLineParser& parser)
{
    const QString text =
        parser.isSet(option("lengths")) ? parser.value(option("lengths")) : kDefaultLengths;
    const int pointsPerOctave =
        integerOption(parser, "points-per-octave", 1, 1, kMaxPointsPerOctave);
    const QStringList range = text.split(QLatin1Char(':'));
    if (range.size() == 2) {
        const Eigen::Index minimum = lengthValue(range[0], text);
        const Eigen::Index maximum = lengthValue(range[1], text);
        if (minimum > maximum)
            throw InputError(QStringLiteral("--lengths: MIN (%1) is larger than MAX (%2) in "
                                            "\"%3\"")
                                 .arg(minimum)
                                 .arg(maximum)
                                 .arg(text));
        return logSpacedLengths(minimum, maximum, pointsPerOctave);
    }
    if (range.size() > 2)
        throw InputError(QStringLiteral("--lengths: expected a range MIN:MAX such as 128:65536, "
                                        "got \"%1\"")
                             .arg(text));
    if (parser.isSet(option("points-per-octave")))
        throw InputError(QStringLiteral("--points-per-octave: applies to a range of lengths "
                                        "(--lengths MIN:MAX), not to the list \"%1\"")
                             .arg(text));
    std::vector<Eigen::Index> lengths;
    for (const QString& item : text.split(QLatin1Char(',')))
        lengths.push_back(lengthValue(item, text));
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    return lengths;
}

// "4.31 ms", "812 µs", "1.25 s".
QString formatSeconds(double seconds)
{
    if (!std::isfinite(seconds))
        return QStringLiteral("n/a");
    if (seconds >= 1)
        return QStringLiteral("%1 s").arg(seconds, 0, 'g', 3);
    if (seconds >= 1e-3)
        return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'g', 3);
    return QStringLiteral("%1 µs").arg(seconds * 1e6, 0, 'g', 3);
}

QString progressLine(const SweepPoint& point, const SweepSpec& spec, int done, int total)
{
    const QString where = QStringLiteral("[%1/%2] %3 L=%4: ")
                              .arg(done)
                              .arg(total)
                              .arg(point.method.label())
                              .arg(point.length);
    switch (point.status) {
        case PointStatus::Ok:
            return where + QStringLiteral("%1 (median of %2), %3 GFLOP/s")
                               .arg(formatSeconds(point.secondsMedian))
                               .arg(spec.repetitions)
                               .arg(point.gflops, 0, 'g', 3);
        case PointStatus::SkippedMemory:
            return where + QStringLiteral("skipped: needs %1, over the memory budget of %2")
                               .arg(formatBytes(point.workingSetBytes),
                                    formatBytes(double(spec.budget.bytes())));
        case PointStatus::Cancelled: return where + QStringLiteral("cancelled");
    }
    return where;
}

// The summary: the sgemm rate, then for each method its fitted slope, its rate at the largest
// length measured, and where it overtakes exact streaming of the same causality.
void printSummary(QTextStream& out, const SweepResult& result)
{
    out << QStringLiteral("sgemm: %1 GFLOP/s (float, n = 1536, %2 threads)\n")
               .arg(result.sgemmGflops, 0, 'f', 1)
               .arg(result.threads);
    for (const TimedMethod& method : result.spec.methods) {
        const SweepPoint* largest = nullptr;
        const SweepPoint* smallest = nullptr;
        for (const SweepPoint& point : result.points) {
            if (point.method == method && point.status == PointStatus::Ok) {
                largest = &point;
                if (!smallest)
                    smallest = &point;
            }
        }
        QString line = method.label() + QStringLiteral(": ");
        if (!largest) {
            out << line << "no length measured (over the memory budget)\n";
            continue;
        }
        const double slope = fittedSlope(result, method);
        line += std::isfinite(slope) ? QStringLiteral("slope %1").arg(slope, 0, 'f', 2)
                                     : QStringLiteral("slope n/a (one length)");
        line += QStringLiteral("; at L=%1 %2, %3 GFLOP/s (%4% of sgemm)")
                    .arg(largest->length)
                    .arg(formatSeconds(largest->secondsMedian))
                    .arg(largest->gflops, 0, 'g', 3)
                    .arg(100 * largest->gflops / result.sgemmGflops, 0, 'f', 0);
        const TimedMethod exact{Method::ExactStreaming, method.causal};
        const bool exactInSweep = std::find(result.spec.methods.begin(), result.spec.methods.end(),
                                            exact) != result.spec.methods.end();
        if (isApproximation(method.algorithm) && exactInSweep) {
            const double crossover = crossoverLength(result, method, exact);
            const QString reference = exact.label();
            if (std::isnan(crossover))
                line += QStringLiteral("; not faster than %1 at the largest length measured")
                            .arg(reference);
            else if (crossover == double(smallest->length))
                line += QStringLiteral("; faster than %1 at every length measured").arg(reference);
            else
                line += QStringLiteral("; faster than %1 from L = %2")
                            .arg(reference)
                            .arg(qint64(std::llround(crossover)));
        }
        out << line << '\n';
    }
}

}  // namespace

void addBenchOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Measures how the time of exact and linear attention grows with the sequence length L: "
        "every method at every length, float, on random Q, K, V (L x d, |x'| about 1), one "
        "warm-up run then --reps timed runs. Writes one CSV row per (method, causal, L) into "
        "--out: method,causal,L,d,m,threads,reps,seconds_median,seconds_min,seconds_max,gflops,"
        "peak_bytes,status (status ok, skipped-memory or cancelled; peak_bytes: Q, K and V plus "
        "the most the runs' own allocations, O among them, held at once), after a first line "
        "\"# sgemm_gflops=<rate>\" with the machine's float GEMM rate measured in the same run. "
        "Points whose working set exceeds the memory budget are skipped, not run.\n\n"
        "Exit status: 0 done; 2 bad usage; 1 other failure. The CSV is written all or none."));
    parser.addHelpOption();
    parser.addOptions({
        {option("methods"),
         QStringLiteral("Methods separated by commas: %1, or all; NAME:causal for the causal "
                        "form (default %2).")
             .arg(methodNames(methodRegistry(), QStringLiteral(", ")), kDefaultMethods),
         QStringLiteral("LIST")},
        {option("lengths"),
         QStringLiteral("Sequence lengths: a list (128,256,1024) or a range MIN:MAX, log-spaced "
                        "and rounded to multiples of 16 (default %1).")
             .arg(kDefaultLengths),
         QStringLiteral("LIST|MIN:MAX")},
        {option("points-per-octave"),
         QStringLiteral("Lengths per doubling in a MIN:MAX range (default 1)."),
         QStringLiteral("K")},
        {QStringList{option("d"), option("head-dim")},
         QStringLiteral("Head dimension d = d_v (default 64)."), QStringLiteral("N")},
        {option("features"), QStringLiteral("m, the number of random features (default 256)."),
         QStringLiteral("M")},
        {option("causal"),
         QStringLiteral("Every method with the causal mask (%1 have no causal form: refused when "
                        "named, left out of all).")
             .arg(methodNames(methodsWithoutCausalForm(), QStringLiteral(", ")))},
        {option("threads"), QStringLiteral("Engine threads (default 0: one per hardware thread)."),
         QStringLiteral("N")},
        {option("reps"),
         QStringLiteral("Timed runs per point, after one warm-up run (default "
                        "3)."),
         QStringLiteral("N")},
        {option("memory-budget"),
         QStringLiteral("Skip the points whose working set exceeds this, e.g. 4G or 512M "
                        "(default half the machine's memory)."),
         QStringLiteral("SIZE")},
    });
    parser.addOptions(tableOutputOptions(
        QStringLiteral("Also draw the chart, as PNG, SVG or PDF by the suffix."),
        QStringLiteral("Also write a session that opens the window on the Timing page with this "
                       "sweep.")));
}

int runBenchCommand(const QCommandLineParser& parser)
{
    refusePositionalArguments(parser);

    SweepSpec spec;
    spec.methods = methodsOption(parser);
    spec.lengths = lengthsOption(parser);
    spec.headDim = integerOption(parser, "d", 64, 1, SpecLimits::headDim);
    spec.features = integerOption(parser, "features", 256, 1, SpecLimits::features);
    spec.threads = integerOption(parser, "threads", 0, 0, SpecLimits::threads);
    spec.repetitions = integerOption(parser, "reps", 3, 1, SweepSpec::maxRepetitions);
    spec.budget = budgetFromOptions(parser);
    const TableOutputs outputs = tableOutputs(parser, "sweep.csv", "sweep.attnlab");

    QTextStream err(stderr);
    const SweepResult result = runSweep(spec, [&](const SweepPoint& point, int done, int total) {
        err << progressLine(point, spec, done, total) << Qt::endl;
    });

    writeTableOutputs(
        outputs, sweepCsv(result), [&](QTextStream& out) { printSummary(out, result); },
        [&] {
            // The window's default experiment, on the Timing page showing this sweep.
            QJsonObject view;
            view[QLatin1String("page")] = QStringLiteral("timing");
            view[QLatin1String("timing")] = TimingPageState::showing(result).toJson();
            return Session{ExperimentSpec(), view};
        },
        [&](const QString& plot) {
            // Time and memory against L, log-log, as the Timing page shows them.
            ui::saveTimingChart(result, plot, plotFormat(plot), kPlotSize);
        });
    return ExitSuccess;
}

}  // namespace attnlab

#include "commands/subcommands.h"

#include "named_values.h"
#include "attention/approximation.h"
#include "attention/recurrent_attention.h"
#include "command_line.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"
#include "errors.h"
#include "generation/generation.h"
#include "ui/generation/generation_chart.h"
#include "inputs/model_input.h"
#include "io/atomic_files.h"
#include "sweeps/downstream.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

constexpr int kDefaultTokens = 32;
constexpr int kMaxTokens = 1 << 20;
constexpr int kMaxThreads = 1024;
// Progress lines on stderr in a run.
constexpr int kProgressLines = 10;
const QSize kChartSize(1000, 560);

QString option(const char* name)
{
    return QString::fromLatin1(name);
}

// The recurrent methods, for the help and the messages.
QString recurrentMethods()
{
    std::vector<MethodInfo> recurrent;
    for (const MethodInfo& info : approximationMethods())
        if (info.hasRecurrentForm)
            recurrent.push_back(info);
    return methodNames(recurrent, QStringLiteral(", "));
}

SamplingSettings samplingOptions(const QCommandLineParser& parser)
{
    SamplingSettings sampling;
    QStringList given;
    for (const char* name : {"temperature", "top-k", "sample-seed"})
        if (parser.isSet(option(name)))
            given.append(QStringLiteral("--%1").arg(QLatin1String(name)));
    if (parser.isSet(option("greedy")) && !given.isEmpty())
        throw InputError(QStringLiteral("--greedy, %1: choose greedy decoding or sampling")
                             .arg(given.join(QStringLiteral(", "))));
    sampling.greedy = given.isEmpty();
    sampling.temperature = positiveOption(parser, "temperature", sampling.temperature);
    sampling.topK = int(integerOption(parser, "top-k", 0, 0, kMaxTokens));
    sampling.seed =
        std::uint64_t(integerOption(parser, "sample-seed", 0, 0, (qint64(1) << 53) - 1));
    return sampling;
}

// The method of --method and its parameters, refused unless it can serve a language model's
// causal attention a token at a time.
ApproximationSpec methodOption(const QCommandLineParser& parser)
{
    ExperimentSpec spec;
    readMethodOptions(parser, spec);
    const QString prefix = QStringLiteral("--method %1: ").arg(spec.methodName());
    if (spec.exactMethod)
        throw InputError(prefix + QStringLiteral("generate always runs exact attention (with a "
                                                 "key/value cache) beside the approximation: "
                                                 "choose the approximation (%1)")
                                      .arg(recurrentMethods()));
    try {
        requireCausalForm(spec.approximation.kind, true, CausalBecause::LanguageModel);
    } catch (const InputError& e) {
        throw InputError(prefix + e.message());
    }
    requireRecurrentForm(spec.approximation.kind, prefix);
    return spec.approximation;
}

// The method options of spec_options.h, with the parameters of the methods generate refuses
// (Nystrom's, Linformer's, ...) kept out of the help, and --favor-fixed-a, which causal attention
// always has; --features and --window say what they are for the methods generate runs.
QList<QCommandLineOption> recurrentMethodOptions()
{
    QList<QCommandLineOption> options = methodOptions(
        QStringLiteral("The approximation (default favor-positive): one with a recurrent form, "
                       "%1.")
            .arg(recurrentMethods()));
    for (const MethodParameter* parameter : methodParameters()) {
        const auto& methods = approximationMethods();
        const bool used = std::any_of(methods.begin(), methods.end(), [&](const MethodInfo& info) {
            return info.hasRecurrentForm && info.takes(*parameter);
        });
        if (!used || parameter == &favorFixedAParameter())
            for (QCommandLineOption& shared : options)
                if (shared.names() == QStringList{parameter->option})
                    shared.setFlags(QCommandLineOption::HiddenFromHelp);
    }
    for (QCommandLineOption& shared : options) {
        if (shared.names() == QStringList{featuresParameter().option})
            shared.setDescription(QStringLiteral("m: the random features (default 64)."));
        if (shared.names() == QStringList{windowParameter().option})
            shared.setDescription(QStringLiteral("local, hedgehog-window: w, the latest keys each "
                                                 "query sees exactly (default 32)."));
    }
    return options;
}

// The folder of --out, checked before the work: requiredOutFolder's checks, and an existing
// folder must be writable, a new one one that can be made (it is made and taken away again, down
// to the folder that was there: a bad input leaves nothing). Throws InputError naming --out.
QString checkedOutFolder(const QCommandLineParser& parser)
{
    const QString out = requiredOutFolder(parser);
    const QString folder = QDir::cleanPath(QDir::current().absoluteFilePath(out));
    if (QFileInfo(folder).isDir()) {
        if (!QFileInfo(folder).isWritable())
            throw InputError(QStringLiteral("--out %1: the folder is not writable").arg(out));
        return out;
    }
    QString existing = folder;
    while (!QFileInfo::exists(existing))
        existing = QFileInfo(existing).absolutePath();
    if (!QDir().mkpath(folder))
        throw InputError(QStringLiteral("--out %1: cannot make the folder").arg(out));
    for (QString made = folder; made != existing; made = QFileInfo(made).absolutePath())
        QDir().rmdir(made);
    return out;
}

// The charts --plot draws.
const std::pair<const char*, ui::GenerationChartKind> kCharts[] = {
    {"kl.png", ui::GenerationChartKind::Kl},
    {"cost.png", ui::GenerationChartKind::Cost},
    {"memory.png", ui::GenerationChartKind::Memory},
};

// The charts, drawn into a staging folder and added to files.
void addCharts(AtomicFileSet& files, const GenerationResult& result, Method method,
               const QString& subtitle)
{
    QTemporaryDir staging;
    if (!staging.isValid())
        throw OutputError(QStringLiteral("cannot make a temporary folder for the charts"));
    for (const auto& [name, kind] : kCharts) {
        const QString path = staging.filePath(QLatin1String(name));
        ui::saveGenerationChart(kind, result.steps, method, subtitle, path, ui::FigureFormat::Png,
                                kChartSize);
        QFile png(path);
        if (!png.open(QIODevice::ReadOnly))
            throw OutputError(QStringLiteral("%1: cannot read the chart back").arg(path));
        writeAll(files.open(QLatin1String(name)), png.readAll());
    }
}

void printSummary(QTextStream& out, const GenerationResult& result, const QString& subject)
{
    const int divergence = firstDivergence(result);
    double klSum = 0;
    int forcedAgree = 0;
    for (const GenerationStep& step : result.steps) {
        klSum += step.kl;
        forcedAgree += step.forcedSameToken;
    }
    const GenerationStep& last = result.steps.back();
    const int n = int(result.steps.size());
    out << subject << '\n';
    const QString tokens = countOf(n, QStringLiteral("token"), QStringLiteral("tokens"));
    if (divergence < 0)
        out << (n == 1 ? QStringLiteral("the two continuations agree on their one token\n")
                       : QStringLiteral("the two continuations agree on all %1\n").arg(tokens));
    else if (divergence == 0)
        out << QStringLiteral("the continuations differ from their first token (of %1)\n")
                   .arg(tokens);
    else
        out << QStringLiteral("the continuations agree on the first %1 of %2 tokens\n")
                   .arg(divergence)
                   .arg(n);
    out << QStringLiteral("teacher-forced: mean KL %1 nats, the same token at %2 of %3\n")
               .arg(klSum / n, 0, 'g', 3)
               .arg(forcedAgree)
               .arg(countOf(n, QStringLiteral("step"), QStringLiteral("steps")));
    out << QStringLiteral("last step (position %1): exact %2 ms (attention %3 ms), approximate "
                          "%4 ms (attention %5 ms); cache %6, state %7\n")
               .arg(last.position)
               .arg(last.exactSeconds * 1e3, 0, 'f', 3)
               .arg(last.exactAttentionSeconds * 1e3, 0, 'f', 3)
               .arg(last.approxSeconds * 1e3, 0, 'f', 3)
               .arg(last.approxAttentionSeconds * 1e3, 0, 'f', 3)
               .arg(formatBytes(last.cacheBytes), formatBytes(last.stateBytes));
    if (result.nonPositiveDenominators > 0)
        out << QStringLiteral("warning: %1 had a non-positive denominator phi(q)^T z (%2 "
                              "0 or the ratio as it falls)\n")
                   .arg(
                       countOf(result.nonPositiveDenominators, QStringLiteral("(token, head) pair"),
                               QStringLiteral("(token, head) pairs")),
                       result.nonPositiveDenominators == 1 ? QStringLiteral("its output is")
                                                           : QStringLiteral("their output is"));
}

}  // namespace

void addGenerateOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Continues a prompt with a language model (GPT-2, Llama, Mistral, Qwen2, GPT-NeoX) for N "
        "tokens, twice: with its own softmax attention over a key/value cache, and with an "
        "approximation in the replaced layers run as a recurrent network (a feature map's state "
        "S_i = S_{i-1} + phi(k_i) v_i^T, z_i = z_{i-1} + phi(k_i) per query head, constant "
        "memory; local attention's sliding window). Both choose each token with the same "
        "uniform draw, so where the continuations part, the distributions differ. The KL "
        "between the next-token distributions is measured teacher-forced: the approximate model "
        "reads the exact continuation for it. Writes into --out DIR:\n"
        "  tokens.json  the prompt's ids and text, each continuation's ids, text and tokens, "
        "the first step where they differ, the method and the sampling\n"
        "  steps.csv    per step: step,position,exact_ms,approx_ms,exact_attention_ms,"
        "approx_attention_ms,kl,same_token,cache_bytes,state_bytes,exact_token,approx_token,"
        "forced_same_token (position: the token read; ms: the whole forward pass of the "
        "free-running step, and its attention alone; kl: teacher-forced, in nats; bytes: what "
        "each run holds from token to token)\n"
        "  kl.png, cost.png, memory.png  with --plot\n\n"
        "Exit status: 0 done; 2 bad usage or input (an empty prompt, more tokens than the "
        "model's context, a method without a causal or a recurrent form); 3 refused for memory; "
        "1 other failure. Files are written all or none."));
    parser.addHelpOption();
    parser.addOptions({
        {option("model"),
         QStringLiteral("The language model: a folder (config.json, the "
                        ".safetensors weights, the tokenizer files), a .gguf file "
                        "(one file with its tokenizer), or builtin "
                        "for the built-in KJV Llama (default; builtin-kjv-gpt2 "
                        "names the KJV GPT-2)."),
         QStringLiteral("PATH|builtin")},
        {option("prompt"), QStringLiteral("The text to continue (required)."),
         QStringLiteral("TEXT")},
        {option("tokens"),
         QStringLiteral("How many tokens to generate (default %1); the prompt "
                        "and they must fit in the model's positions.")
             .arg(kDefaultTokens),
         QStringLiteral("N")},
    });
    parser.addOptions(recurrentMethodOptions());
    parser.addOptions({
        {option("layers"),
         QStringLiteral("The replaced layers: all (default), or layer numbers "
                        "separated by commas; the others keep exact attention "
                        "with their key/value cache."),
         QStringLiteral("all|N,...")},
        {option("greedy"), QStringLiteral("Choose the likeliest token (the default when no "
                                          "sampling option is given).")},
        {option("temperature"), QStringLiteral("Sample from softmax(logits / T) (default 1)."),
         QStringLiteral("T")},
        {option("top-k"),
         QStringLiteral("Sample among the K likeliest tokens only (default 0: "
                        "all)."),
         QStringLiteral("K")},
        {option("sample-seed"),
         QStringLiteral("Seed of the sampling draws, apart from --seed, "
                        "which draws W (default 0)."),
         QStringLiteral("S")},
        {option("threads"),
         QStringLiteral("Engine threads (default 0: one per hardware "
                        "thread)."),
         QStringLiteral("N")},
        {option("memory-budget"),
         QStringLiteral("The most memory the caches, states and random features W may "
                        "take, e.g. 4G (default half the machine's memory); a run over it is "
                        "refused before it starts."),
         QStringLiteral("SIZE")},
        outFolderOption(),
        {option("plot"), QStringLiteral("Also draw kl.png (KL per step), cost.png (time per "
                                        "token against position) and memory.png into DIR.")},
    });
}

int runGenerateCommand(const QCommandLineParser& parser)
{
    refusePositionalArguments(parser);
    GenerationSpec spec;
    spec.approximation = methodOption(parser);
    if (!parser.isSet(option("prompt")))
        throw InputError(QStringLiteral("--prompt TEXT is required: the text to continue"));
    spec.prompt = parser.value(option("prompt"));
    if (spec.prompt.isEmpty())
        throw InputError(QStringLiteral("--prompt: the prompt is empty: give the text to "
                                        "continue"));
    spec.tokens = int(integerOption(parser, "tokens", kDefaultTokens, 1, kMaxTokens));
    spec.sampling = samplingOptions(parser);
    const QString out = checkedOutFolder(parser);
    spec.threads = int(integerOption(parser, "threads", 0, 0, kMaxThreads));
    const MemoryBudget budget = budgetFromOptions(parser);
    const QString modelPath = parser.isSet(option("model")) ? parser.value(option("model"))
                                                            : QString::fromLatin1(kBuiltinModel);
    if (spec.approximation.fittedMaps)
        requireFeatureMapsForModel(*spec.approximation.fittedMaps, modelPath);
    const std::shared_ptr<const LanguageModel> model = loadModel(modelPath, budget);
    spec.replacedLayers = layerListOption(parser, model->layers());

    QTextStream err(stderr);
    Generation generation(model, spec, budget, {}, [&err](const QString& notice) {
        err << QStringLiteral("attention-lab generate: this run is %1: fewer features "
                              "(--features), replaced layers (--layers) or tokens make it "
                              "cheaper\n")
                   .arg(notice);
        err.flush();
    });
    const int every = std::max(1, spec.tokens / kProgressLines);
    const GenerationResult result = runGeneration(generation, [&](int done, int total) {
        if (done % every == 0 || done == total) {
            err << QStringLiteral("[%1/%2 tokens]\n").arg(done).arg(total);
            err.flush();
        }
    });

    const QString subject =
        QStringLiteral("%1, %2 in %3, %4; prompt of %5")
            .arg(modelDisplayName(modelPath), spec.approximation.titleWithSize(),
                 layersPhrase(result.replacedLayers, model->layers()), samplingText(spec.sampling),
                 countOf(qint64(result.promptIds.size()), QStringLiteral("token"),
                         QStringLiteral("tokens")));
    AtomicFileSet files(out);
    writeAll(files.open(QStringLiteral("tokens.json")), generationTokensJson(result, *model, spec));
    writeAll(files.open(QStringLiteral("steps.csv")), generationStepsCsv(result));
    const bool plot = parser.isSet(option("plot"));
    if (plot)
        addCharts(files, result, spec.approximation.kind, subject);
    files.commit();
    // The charts of an earlier run would be read as this run's.
    if (!plot)
        for (const auto& chart : kCharts)
            QFile::remove(QDir(out).absoluteFilePath(QLatin1String(chart.first)));

    QTextStream stream(stdout);
    printSummary(stream, result, subject);
    stream << "wrote " << QDir(out).absolutePath() << '\n';
    return ExitSuccess;
}

}  // namespace attnlab

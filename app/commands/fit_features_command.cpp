#include "commands/subcommands.h"

#include "command_line.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"
#include "errors.h"
#include "fitting/feature_map_file.h"
#include "fitting/feature_map_fit.h"
#include "inputs/model_input.h"
#include "io/atomic_files.h"
#include "io/csv.h"
#include "parallel.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTextStream>

#include <algorithm>
#include <cstdio>

#include <unistd.h>

namespace attnlab {

namespace {

QString option(const char* name)
{
    return QString::fromLatin1(name);
}

// The fit's progress on stderr: one line rewritten in place on a terminal, else a line every
// tenth of the way.
class FitProgress {
public:
    explicit FitProgress(bool enabled) : m_terminal(isatty(STDERR_FILENO) != 0), m_enabled(enabled)
    {
        m_timer.start();
    }

    void report(const FeatureMapFitProgress& progress)
    {
        if (!m_enabled || progress.total == 0)
            return;
        const int tenth = int(10 * progress.done / progress.total);
        if (!m_terminal && tenth == m_lastTenth)
            return;
        m_lastTenth = tenth;
        const QByteArray line = QStringLiteral("attention-lab fit-features: %1% (%2 of %3 head "
                                               "steps, mean KL %4, %5 s)")
                                    .arg(100 * progress.done / progress.total)
                                    .arg(progress.done)
                                    .arg(progress.total)
                                    .arg(progress.meanKl, 0, 'g', 3)
                                    .arg(double(m_timer.elapsed()) / 1000, 0, 'f', 1)
                                    .toUtf8();
        std::fprintf(stderr, m_terminal ? "\r%-79s" : "%s\n", line.constData());
        std::fflush(stderr);
        m_written = true;
    }

    ~FitProgress()
    {
        if (m_terminal && m_written)
            std::fputs("\n", stderr);
    }

private:
    bool m_terminal;
    bool m_enabled;
    bool m_written = false;
    int m_lastTenth = -1;
    QElapsedTimer m_timer;
};

QByteArray curvesCsv(const FeatureMapFit& fit)
{
    QByteArray csv("layer,head,step,kl\n");
    for (const HeadFitRecord& head : fit.heads)
        for (std::size_t t = 0; t < head.curve.size(); ++t) {
            csv += QByteArray::number(head.layer) + ',' + QByteArray::number(head.head) + ',' +
                   QByteArray::number(qulonglong(t + 1)) + ',';
            appendCsvNumber(csv, head.curve[t], 6);
            csv += '\n';
        }
    return csv;
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    AtomicFileSet files(QFileInfo(path).absolutePath());
    writeAll(files.open(QFileInfo(path).fileName()), bytes);
    files.commit();
}

}  // namespace

void addFitFeaturesOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Fits Hedgehog's feature maps (method hedgehog, and hedgehog-window's weight) to every "
        "head of the chosen layers of a language model: the model reads the training text "
        "(--text-file) in windows of its context (at most 256 tokens), and each query head's "
        "query map phi_q(x) = [exp(W_q x' + b_q), exp(-W_q x' - b_q)] and key map phi_k are "
        "fitted by Adam so that linear attention's rows match the head's exact causal softmax "
        "rows (the mean row cross-entropy; the model is not changed). Writes the maps to --out "
        "as a .safetensors file (tensors layers.<l>.heads.<h>.query.weight, ..., the model's "
        "name and head dimension in its metadata) for --feature-map of compute, model-eval, "
        "render and generate. Progress on stderr when it is a terminal (or with --progress); a "
        "summary of each head's mean row KL(P || P^) before and after on stdout.\n\n"
        "Exit status: 0 done; 2 bad usage or input (a text under 512 tokens, a loss that is not "
        "a number: nothing is written); 3 refused for memory; 1 other failure."));
    parser.addHelpOption();
    const DistillationSettings defaults;
    parser.addOptions({
        {option("model"),
         QStringLiteral("The language model: a folder, a .gguf file, or builtin (default)."),
         QStringLiteral("PATH|FILE.gguf|builtin")},
        {option("text-file"),
         QStringLiteral("The training text (UTF-8), at least 512 tokens; keep it apart from "
                        "the text you evaluate on (the built-in models ship "
                        "resources/texts/kjv-fit.txt)."),
         QStringLiteral("FILE")},
        {option("layers"),
         QStringLiteral("The layers whose heads are fitted: all (default) or numbers separated "
                        "by commas."),
         QStringLiteral("all|N,...")},
        {option("steps"), QStringLiteral("Adam steps per head (default %1).").arg(defaults.steps),
         QStringLiteral("N")},
        {option("features"),
         QStringLiteral("The feature count C = 2 d_f of each map, even (default 2 d: d_f = d, "
                        "W starting at the identity)."),
         QStringLiteral("C")},
        {option("window"),
         QStringLiteral("hedgehog-window: the window w its weight gamma is fitted for "
                        "(default 32), below the tokens of a training window (the model's "
                        "context, at most 256)."),
         QStringLiteral("W")},
        {option("learning-rate"),
         QStringLiteral("Adam's step size, decayed by a cosine to a tenth of it (default %1).")
             .arg(defaults.learningRate),
         QStringLiteral("X")},
        {option("batch"),
         QStringLiteral("Windows of the text per step (default %1).").arg(defaults.batchWindows),
         QStringLiteral("N")},
        {option("seed"), QStringLiteral("Seed of the batches' draws (default 0)."),
         QStringLiteral("S")},
        {option("threads"),
         QStringLiteral("Engine threads: heads are fitted in parallel, one to a thread "
                        "(default 0: one per hardware thread)."),
         QStringLiteral("N")},
        {option("memory-budget"),
         QStringLiteral("The most memory the training rows may take, e.g. 4G (default half the "
                        "machine's memory)."),
         QStringLiteral("SIZE")},
        {option("progress"),
         QStringLiteral("Report progress on stderr even when stderr is not a terminal.")},
        {option("curves"),
         QStringLiteral("Also write each head's loss curve: layer,head,step,kl (the mean row KL "
                        "of the step's windows)."),
         QStringLiteral("FILE.csv")},
        {option("out"), QStringLiteral("The feature-map file to write."),
         QStringLiteral("FILE.safetensors")},
    });
}

int runFitFeaturesCommand(const QCommandLineParser& parser)
{
    refusePositionalArguments(parser);
    if (!parser.isSet(option("text-file")))
        throw InputError(QStringLiteral("--text-file FILE is required: the training text"));
    if (!parser.isSet(option("out")))
        throw InputError(QStringLiteral("--out FILE.safetensors is required: the file of the "
                                        "fitted maps"));
    const QString out = checkedOutPath("out", parser.value(option("out")), "maps.safetensors");
    const QString curves =
        parser.isSet(option("curves"))
            ? checkedOutPath("curves", parser.value(option("curves")), "curves.csv")
            : QString();
    refuseSameFile({{"out", out}, {"curves", curves}});
    const QString modelPath = parser.isSet(option("model")) ? parser.value(option("model"))
                                                            : QString::fromLatin1(kBuiltinModel);
    const QString textPath = parser.value(option("text-file"));

    FeatureMapFitSpec spec;
    spec.layers = layerListOption(parser, 0);  // checked by the fit
    spec.window = int(integerOption(parser, "window", spec.window, 1, 1 << 20));
    spec.distillation.steps =
        int(integerOption(parser, "steps", spec.distillation.steps, 1, 1'000'000));
    spec.distillation.batchWindows =
        int(integerOption(parser, "batch", spec.distillation.batchWindows, 1, 1'000'000));
    spec.distillation.learningRate =
        positiveOption(parser, "learning-rate", spec.distillation.learningRate);
    spec.distillation.seed =
        std::uint64_t(integerOption(parser, "seed", 0, 0, (qint64(1) << 53) - 1));
    if (parser.isSet(option("features"))) {
        const qint64 features = integerOption(parser, "features", 0, 2, 8192);
        if (features % 2 != 0)
            throw InputError(
                QStringLiteral("--features: C = 2 d_f must be even (got %1)").arg(features));
        spec.featureDim = int(features / 2);
    }
    spec.trainingText = QFileInfo(textPath).fileName();
    setEngineThreads(int(integerOption(parser, "threads", 0, 0, 1024)));
    const MemoryBudget budget = budgetFromOptions(parser);

    if (modelArchitectureOf(modelPath) == ModelArchitecture::Vit)
        throw InputError(QStringLiteral("--model %1: a ViT; feature maps are fitted to a language "
                                        "model's causal heads")
                             .arg(modelPath));
    const std::shared_ptr<const LanguageModel> model = loadModel(modelPath, budget);
    // gamma weighs the keys before the window; a training window holds none past its length.
    const int windowTokens = std::min(model->positions(), kFitWindowTokens);
    if (spec.window >= windowTokens)
        throw InputError(QStringLiteral("--window: %1 is not below the %2 tokens of a training "
                                        "window (the model's context, at most %3): no key lies "
                                        "outside a window of %1 to fit its weight gamma on")
                             .arg(spec.window)
                             .arg(windowTokens)
                             .arg(kFitWindowTokens));
    const QString text = readTextFile(textPath);
    const std::vector<int> ids = model->tokenizer().encode(text);
    FitProgress progress(parser.isSet(option("progress")) || isatty(STDERR_FILENO) != 0);
    const FeatureMapFit fit =
        fitFeatureMaps(*model, ids, spec, budget,
                       [&](const FeatureMapFitProgress& step) { progress.report(step); });
    fit.maps->file = out;

    QTextStream stdOut(stdout);
    const auto count = [](qint64 n, const char* noun) {
        return QStringLiteral("%1 %2%3").arg(n).arg(QLatin1String(noun),
                                                    n == 1 ? QString() : QStringLiteral("s"));
    };
    stdOut << QStringLiteral("%1: %2 fitted on %3 (%4, %5) in %6 s, d_f = %7, %8\n")
                  .arg(modelDisplayName(modelPath), count(qint64(fit.heads.size()), "head"),
                       spec.trainingText, count(fit.tokens, "token"), count(fit.windows, "window"))
                  .arg(fit.seconds, 0, 'f', 1)
                  .arg(fit.maps->featureDim)
                  .arg(count(spec.distillation.steps, "step"));
    for (const HeadFitRecord& head : fit.heads)
        stdOut << QStringLiteral("  layer %1, head %2: mean row KL %3 -> %4, gamma %5\n")
                      .arg(head.layer)
                      .arg(head.head)
                      .arg(head.initialKl, 0, 'f', 4)
                      .arg(head.finalKl, 0, 'f', 4)
                      .arg(std::exp(fit.maps->find(head.layer, head.head)->windowLogWeight), 0, 'g',
                           3);
    if (!curves.isEmpty()) {
        writeFile(curves, curvesCsv(fit));
        stdOut << "wrote " << curves << '\n';
    }
    writeFeatureMaps(*fit.maps, out);
    stdOut << "wrote " << out << '\n';
    return ExitSuccess;
}

}  // namespace attnlab

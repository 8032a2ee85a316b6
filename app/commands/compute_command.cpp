#include "commands/subcommands.h"

#include "command_line.h"
#include "errors.h"
#include "inputs/model_input.h"
#include "sessions/result_files.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"

#include <QCommandLineParser>
#include <QDir>
#include <QTextStream>

#include <cstdio>

#include <unistd.h>

namespace attnlab {

namespace {

// Reports compute's steps on stderr: on a terminal one line rewritten in place, else (with
// --progress) one line a step.
class ProgressReport {
public:
    explicit ProgressReport(bool enabled)
        : m_terminal(isatty(STDERR_FILENO) != 0), m_enabled(enabled)
    {
    }
    ~ProgressReport() { finish(); }
    ProgressReport(const ProgressReport&) = delete;
    ProgressReport& operator=(const ProgressReport&) = delete;

    void say(const QString& text)
    {
        if (!m_enabled)
            return;
        const QByteArray line = QStringLiteral("attention-lab compute: %1").arg(text).toUtf8();
        std::fprintf(stderr, m_terminal ? "\r%-79s" : "%s\n", line.constData());
        std::fflush(stderr);
        m_written = true;
    }

    // What compute's progress callback reports: step `done` of `total`, two a head.
    void step(int done, int total)
    {
        const int heads = total / 2;
        const int head = (done - 1) / 2 + 1;
        say(QStringLiteral("%1% (head %2 of %3: %4)")
                .arg(100 * done / total)
                .arg(head)
                .arg(heads)
                .arg(done % 2 ? QStringLiteral("output done")
                              : QStringLiteral("matrices and metrics done")));
    }

    // Ends the line rewritten in place, so that what follows starts on a line of its own.
    void finish()
    {
        if (m_terminal && m_written)
            std::fputs("\n", stderr);
        m_written = false;
    }

private:
    bool m_terminal;
    bool m_enabled;
    bool m_written = false;
};

}  // namespace

void addComputeOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Computes exact softmax attention and an approximation of it for one input, and writes "
        "into --out DIR: attention_exact.npy, attention_approx.npy (L x L, row-normalised, masked "
        "when causal), kernel_exact.npy, kernel_approx.npy (unnormalised A = exp(s Q K^T) and "
        "A^ = phi(Q) phi(K)^T), output_exact.npy, output_approx.npy (L x d_v), features_q.npy, "
        "features_k.npy (phi(Q), phi(K)), projection.npy (W, m x d, applied to x' = sqrt(s) x) "
        "and metrics.json (every metric, the tokens, the warnings, the spec). One head: 2-D "
        "arrays; several: a leading head axis. The exact method writes no approximate matrices "
        "or features. With --save-qkv also queries.npy, keys.npy, values.npy (H x L x d; a "
        "rotary model's queries and keys after RoPE; with grouped-query attention keys[h] and "
        "values[h] are query head h's own key/value head, repeated for its group).\n\n"
        "Without an input option it runs the built-in model (a small Llama trained on the King "
        "James Bible) on a passage said twice: --model PATH|builtin --layer N [--text STR] gives a "
        "trained language model's heads (GPT-2, Llama, Mistral, Qwen2 or GPT-NeoX folders, or "
        ".gguf files; "
        "metrics.json then records the architecture, the key/value groups and RoPE); --model "
        "PATH|builtin-vit --image FILE --layer N a ViT's, on the image resized as its "
        "preprocessor says (tokens [CLS] and the patches' (row, col), without a mask); --text "
        "without --model gives random token embeddings.\n\n"
        "Exit status: 0 done; 2 bad usage or input; 3 refused for memory; 1 other failure. "
        "Files are written all or none."));
    parser.addHelpOption();
    addSpecOptions(parser);
    parser.addOptions({
        outFolderOption(),
        {QStringLiteral("no-matrices"),
         QStringLiteral("Leave out the L x L matrices: outputs, features and every metric are "
                        "still written, in linear memory.")},
        {QStringLiteral("no-features"), QStringLiteral("Leave out features_q.npy and "
                                                       "features_k.npy.")},
        {QStringLiteral("save-qkv"), QStringLiteral("Also write the input: queries.npy, keys.npy "
                                                    "and values.npy (H x L x d).")},
        {QStringLiteral("progress"),
         QStringLiteral("Report progress on stderr, head by head, even when stderr is not a "
                        "terminal (on a terminal it is reported anyway).")},
        comparisonModelOption(),
    });
}

int runComputeCommand(const QCommandLineParser& parser)
{
    // The spec first: a missing option value (--random --out DIR) is named there.
    ExperimentSpec spec = specFromOptions(parser, DefaultInput::Model);
    readComparisonModel(parser, spec);
    refusePositionalArguments(parser);
    const QString out = requiredOutFolder(parser);

    ComputeOptions options;
    options.budget = budgetFromOptions(parser);
    options.matrices = !parser.isSet(QStringLiteral("no-matrices"));
    options.features = !parser.isSet(QStringLiteral("no-features"));
    const AttentionInput input = inputFromSpec(spec, options.budget);
    options.announce = [](const QString& notice) {
        std::fprintf(stderr,
                     "attention-lab compute: this run is %s: fewer features (--features), "
                     "--no-matrices or --no-features make it cheaper\n",
                     notice.toUtf8().constData());
        std::fflush(stderr);
    };
    ProgressReport progress(parser.isSet(QStringLiteral("progress")) || isatty(STDERR_FILENO) != 0);
    options.progress = [&progress](int done, int total) { progress.step(done, total); };
    const ExperimentResult result = compute(spec, input, options);
    progress.say(QStringLiteral("writing the files"));
    writeResultFiles(result, out, parser.isSet(QStringLiteral("save-qkv")) ? &input : nullptr);
    progress.finish();

    QTextStream stream(stdout);
    stream << QStringLiteral("%1 vs exact, L = %2, %3 %4: relative Frobenius error of P %5, "
                             "of the output %6\n")
                  .arg(spec.input.comparisonModelPath.isEmpty()
                           ? spec.methodName()
                           : modelDisplayName(spec.input.comparisonModelPath))
                  .arg(result.labels.size())
                  .arg(result.heads.size())
                  .arg(result.heads.size() == 1 ? QStringLiteral("head") : QStringLiteral("heads"))
                  .arg(result.metrics.relFrobeniusAttention, 0, 'g', 4)
                  .arg(result.metrics.relFrobeniusOutput, 0, 'g', 4);
    for (const ResultWarning& warning : result.warnings)
        stream << "warning: " << warning.message << '\n';
    stream << "wrote " << QDir(out).absolutePath() << '\n';
    return ExitSuccess;
}

}  // namespace attnlab

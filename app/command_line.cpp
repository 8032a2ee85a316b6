#include "command_line.h"

#include "commands/subcommands.h"
#include "errors.h"
#include "remedy.h"
#include "window_start.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QTextStream>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include <unistd.h>

namespace attnlab {

namespace {

// When a command draws figures, for which it needs a QApplication (offscreen) for the plot
// widgets. Commands that draw only with --plot run without one otherwise: a QApplication costs
// start-up time and, without a display, prints a warning about XDG_RUNTIME_DIR.
enum class Figures { Never, Always, WithPlotOption };

// A subcommand: its name, its line in the usage, the function that gives a parser its
// description and options, and the one that runs it on the parsed options.
struct Subcommand {
    const char* name;
    const char* summary;
    void (*addOptions)(QCommandLineParser& parser);
    int (*run)(const QCommandLineParser& parser);
    Figures figures;
};

const Subcommand kSubcommands[] = {
    {"compute", "exact and approximate attention of one input, written as .npy and metrics.json",
     addComputeOptions, runComputeCommand, Figures::Never},
    {"render", "the figures the window shows, written as PNG, SVG or PDF", addRenderOptions,
     runRenderCommand, Figures::Always},
    {"bench", "the cost of each method against sequence length, as CSV and a chart",
     addBenchOptions, runBenchCommand, Figures::WithPlotOption},
    {"steps", "causal linear attention run token by token: states, outputs, steps.json",
     addStepsOptions, runStepsCommand, Figures::Never},
    {"errors", "approximation error against m, norm or L, as CSV and a chart", addErrorsOptions,
     runErrorsCommand, Figures::WithPlotOption},
    {"model-eval",
     "what an approximation in a trained model does to its predictions, as CSV "
     "and a chart",
     addModelEvalOptions, runModelEvalCommand, Figures::WithPlotOption},
    {"generate",
     "a language model continuing a prompt with exact and approximate attention, "
     "token by token",
     addGenerateOptions, runGenerateCommand, Figures::WithPlotOption},
    {"fit-features",
     "feature maps fitted to a language model's heads (hedgehog), written as .safetensors",
     addFitFeaturesOptions, runFitFeaturesCommand, Figures::Never},
};

// Whether the command line asks `command` to draw figures.
bool drawsFigures(const Subcommand& command, int argc, char** argv)
{
    if (command.figures != Figures::WithPlotOption)
        return command.figures == Figures::Always;
    for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--plot") == 0 || std::strncmp(argv[i], "--plot=", 7) == 0)
            return true;
    return false;
}

// Without a desktop session (a CI machine, ssh) XDG_RUNTIME_DIR is unset, and QGuiApplication
// warns on stderr that it falls back to <temp>/runtime-<user>, which would break the one-line
// error messages of the headless commands. Points XDG_RUNTIME_DIR at that same folder (created
// owner-only, as the specification asks) so that the fallback is silent.
void provideRuntimeDirectory()
{
    if (!qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR"))
        return;
    const QString user = qEnvironmentVariable("USER", QString::number(getuid()));
    const QString folder = QDir::tempPath() + QStringLiteral("/runtime-") + user;
    if (!QDir().mkpath(folder) ||
        !QFile::setPermissions(folder, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
        return;  // Qt then warns and copes as before
    qputenv("XDG_RUNTIME_DIR", QFile::encodeName(folder));
}

// Qt's message handler before dropOffscreenNoise was installed.
QtMessageHandler g_previousHandler = nullptr;

// Drops the one warning the offscreen platform gives for every window it shows ("This plugin
// does not support propagateSizeHints()"), which says nothing about the command's figures, and
// hands every other message to Qt's handler.
void dropOffscreenNoise(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    if (type == QtWarningMsg &&
        message == QLatin1String("This plugin does not support propagateSizeHints()"))
        return;
    g_previousHandler(type, context, message);
}

}  // namespace

void printUsage(QTextStream& out)
{
    out << "Usage: attention-lab [options] [SESSION.attnlab]  start the window\n"
           "       attention-lab <command> [options]          run headless\n\nWindow options:\n";
    for (const QCommandLineOption& option : windowOptions()) {
        QStringList names;
        for (const QString& name : option.names())
            names.append((name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + name);
        QString left = names.join(QStringLiteral(", "));
        if (!option.valueName().isEmpty())
            left += QLatin1Char(' ') + option.valueName();
        out << QStringLiteral("  %1  %2\n").arg(left, -26).arg(option.description());
    }
    out << "\nCommands:\n";
    for (const Subcommand& command : kSubcommands)
        out << QStringLiteral("  %1  %2\n")
                   .arg(QLatin1String(command.name), -10)
                   .arg(QLatin1String(command.summary));
    out << "\n'attention-lab <command> --help' lists a command's options.\n";
}

bool isCommandLineRequest(const QString& firstArgument)
{
    if (firstArgument == QLatin1String("--help") || firstArgument == QLatin1String("-h"))
        return true;
    for (const Subcommand& command : kSubcommands)
        if (firstArgument == QLatin1String(command.name))
            return true;
    return false;
}

namespace {

// Qt's help text without the line (and its continuation lines) of --help-all, which Qt's help
// option brings: a subcommand takes no Qt options, so --help-all is --help.
QString withoutHelpAll(const QString& help)
{
    QStringList lines = help.split(QLatin1Char('\n'));
    const auto first = std::find_if(lines.begin(), lines.end(), [](const QString& line) {
        return line.trimmed().startsWith(QLatin1String("--help-all"));
    });
    if (first == lines.end())
        return help;
    auto last = first + 1;
    while (last != lines.end() && last->startsWith(QLatin1Char(' ')) &&
           !last->trimmed().isEmpty() && !last->trimmed().startsWith(QLatin1Char('-')))
        ++last;
    lines.erase(first, last);
    return lines.join(QLatin1Char('\n'));
}

// Throws InputError naming the first option given more than once with different values (the
// parser would take the last one without a word); the same value again is harmless.
void refuseRepeatedOptions(const QCommandLineParser& parser)
{
    for (const QString& name : parser.optionNames()) {
        const QStringList values = parser.values(name);
        if (values.count(values.value(0)) == values.size())
            continue;
        QStringList quoted;
        for (const QString& value : values)
            quoted.append(QLatin1Char('"') + value + QLatin1Char('"'));
        throw InputError(QStringLiteral("--%1 is given %2 times, with %3: give it once")
                             .arg(name)
                             .arg(values.size())
                             .arg(quoted.join(QStringLiteral(", "))));
    }
}

// Parses a subcommand's arguments (arguments[0] is the subcommand's name) into parser. Returns
// false when --help (or --help-all, the same) was given, after printing the help with a usage line
// that names the program and the subcommand, "Usage: attention-lab compute [options]" (Qt's names
// the executable as it was started, often an absolute path). Throws InputError with the parser's
// message for an unknown option or a missing value, or for an option given twice with different
// values.
bool parseSubcommand(QCommandLineParser& parser, const QStringList& arguments)
{
    if (!parser.parse(arguments))
        throw InputError(parser.errorText());
    refuseRepeatedOptions(parser);
    if (!parser.isSet(QStringLiteral("help")) && !parser.isSet(QStringLiteral("help-all")))
        return true;
    QString help = withoutHelpAll(parser.helpText());
    const QString started = QStringLiteral("Usage: ") + QCoreApplication::arguments().constFirst();
    if (help.startsWith(started))
        help.replace(0, started.size(),
                     QStringLiteral("Usage: attention-lab ") + arguments.constFirst());
    QTextStream(stdout) << help;
    return false;
}

// The option that changes the setting remedy: the command line's words for the engine's Remedy
// (the window has its own, ui/common's windowMessage).
QString optionOf(Remedy remedy)
{
    switch (remedy) {
        case Remedy::RaiseMemoryBudget: return QStringLiteral("--memory-budget");
        case Remedy::KeepLastTokens: return QStringLiteral("--keep-last");
        case Remedy::FewerFeatures: return QStringLiteral("--features");
        case Remedy::FewerReplacedLayers: return QStringLiteral("--layers");
        case Remedy::FewerGeneratedTokens: return QStringLiteral("--tokens");
        case Remedy::FewerKeptStates: return QStringLiteral("--from and --to");
        case Remedy::FitMaps: return QStringLiteral("fit-features --model");
        case Remedy::FitLayers: return QStringLiteral("fit-features --layers");
        case Remedy::NoCausalMask: return QStringLiteral("--causal (leave it out)");
        case Remedy::LowerNormMultiplier: return QStringLiteral("--norm-multiplier");
        case Remedy::LowerScale: return QStringLiteral("--scale");
        case Remedy::LowerInputNorm: return QStringLiteral("--norm");
    }
    return QString();
}

// A refusal's message with the options that change the settings that get past it:
// "... or raise the memory budget. Options: --features, --memory-budget."
QString withOptions(const QString& message, const Remedies& remedies)
{
    QStringList options;
    for (const Remedy remedy : remedies)
        options.append(optionOf(remedy));
    return withPlaces(message, QStringLiteral("Options:"), options, QStringLiteral(", "));
}

// Parses arguments (as parseSubcommand) with the options of `command` and returns its run on
// them; after --help, ExitSuccess.
int runSubcommand(const Subcommand& command, const QStringList& arguments)
{
    QCommandLineParser parser;
    command.addOptions(parser);
    if (!parseSubcommand(parser, arguments))
        return ExitSuccess;
    return command.run(parser);
}

}  // namespace

int runCommandLine(int& argc, char** argv)
{
    // The arguments as given, the subcommand's name first: the QApplication a drawing command
    // makes takes Qt's own options out of argv (-session, -style, -platform, ...), and
    // `render --session FILE` drew the default example without a word about the file.
    QStringList arguments;
    for (int i = 1; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));
    const QString name = arguments.front();
    const Subcommand* command = nullptr;
    for (const Subcommand& candidate : kSubcommands)
        if (name == QLatin1String(candidate.name))
            command = &candidate;
    std::unique_ptr<QCoreApplication> app;
    if (command && drawsFigures(*command, argc, argv)) {
        // Figures are drawn offscreen, with or without a display.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        provideRuntimeDirectory();
        g_previousHandler = qInstallMessageHandler(dropOffscreenNoise);
        app = std::make_unique<QApplication>(argc, argv);
    } else {
        app = std::make_unique<QCoreApplication>(argc, argv);
    }
    if (!command) {
        QTextStream out(stdout);
        printUsage(out);
        return ExitSuccess;
    }
    QTextStream err(stderr);
    const QString prefix = QStringLiteral("attention-lab %1: ").arg(name);
    try {
        return runSubcommand(*command, arguments);
    } catch (const InputError& e) {
        err << prefix << withOptions(e.message(), remediesOf(e)) << '\n';
        return ExitBadInput;
    } catch (const ResourceError& e) {
        err << prefix << withOptions(e.message(), remediesOf(e)) << '\n';
        return ExitResources;
    } catch (const OutputError& e) {
        err << prefix << e.message() << '\n';
        return ExitFailure;
    } catch (const std::bad_alloc&) {
        err << prefix
            << "out of memory; lower the memory budget (--memory-budget) so that "
               "requests are refused before they are allocated\n";
        return ExitResources;
    } catch (const std::exception& e) {
        err << prefix << e.what() << '\n';
        return ExitFailure;
    }
}

}  // namespace attnlab

#include "commands/subcommands.h"

#include "command_line.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"
#include "errors.h"
#include "ui/errors/error_chart.h"
#include "ui/experiment/attention_figures.h"
#include "ui/images/image_loader.h"
#include "ui/experiment/image_overlay_view.h"
#include "ui/experiment/methods_side_by_side.h"
#include "ui/experiment/row_comparison_view.h"
#include "inputs/model_input.h"
#include "io/atomic_files.h"
#include "ui/plotting/figure_export.h"
#include "ui/plotting/heatmap_view.h"
#include "sessions/error_page_state.h"
#include "sessions/scenario.h"
#include "sessions/timing_page_state.h"
#include "ui/stepper/stepper_frame.h"
#include "ui/timing/timing_chart.h"

#include <QCommandLineParser>
#include <QDir>
#include <QRegularExpression>
#include <QTextStream>

#include <optional>

namespace attnlab {

namespace {

// The options that may accompany --scenario: where and how to write, and which part of the view
// to draw. The spec options would contradict the scenario's spec.
const QStringList kScenarioCompatibleOptions = {
    QStringLiteral("scenario"),     QStringLiteral("session"),
    QStringLiteral("out"),          QStringLiteral("format"),
    QStringLiteral("size"),         QStringLiteral("query"),
    QStringLiteral("head"),         QStringLiteral("error"),
    QStringLiteral("colors"),       QStringLiteral("separate-scales"),
    QStringLiteral("rollout"),      QStringLiteral("error-scale"),
    QStringLiteral("memory-budget")};

// What render draws and where: the experiment, how the view shows it, the scenario it came from
// (if any), the figures' size and formats, the memory budget and the output folder.
struct RenderRequest {
    ExperimentSpec spec;
    ui::ViewSettings settings;
    std::optional<Scenario> scenario;
    QSize size;
    std::vector<ui::FigureFormat> formats;
    MemoryBudget budget;
    QString out;
};

// The input as the window builds it, with the image its Image page draws over and, for a ViT
// asked for it, the attention rollout over every layer.
struct RenderInput {
    AttentionInput input;
    QImage image;
    std::optional<AttentionRollout> rollout;
};

// The methods of --methods, in the order given, less those without a causal form when spec's
// attention is causal (a warning on stderr names each). Throws InputError naming an unknown
// method, or the methods when none of them has a causal form.
std::vector<Method> sideBySideMethods(const QCommandLineParser& parser, const ExperimentSpec& spec)
{
    std::vector<Method> methods;
    for (const QString& name : listOption(parser, "methods", QString())) {
        Method method;
        if (!parseApproximation(name, &method))
            throw InputError(
                QStringLiteral("--methods: unknown method \"%1\" (choose %2)")
                    .arg(name, methodNames(approximationMethods(), QStringLiteral(", "))));
        methods.push_back(method);
    }
    QStringList skipped;
    const std::vector<Method> kept = skipMethodsWithoutCausalForm(methods, spec.causal, &skipped);
    if (spec.causal && !methodInfo(kept.front()).hasCausalForm) {
        QStringList names;
        for (const Method method : kept)
            names.append(methodInfo(method).name);
        throw InputError(
            QStringLiteral("--methods: %1 %2 no causal form, and %3: choose a method with one")
                .arg(names.join(QStringLiteral(", ")),
                     kept.size() == 1 ? QStringLiteral("has") : QStringLiteral("have"),
                     causalReason(spec.input) == CausalBecause::LanguageModel
                         ? QStringLiteral("a language model's attention is causal")
                         : QStringLiteral("--causal is on")));
    }
    warnMethodsLeftOut(skipped, spec);
    return kept;
}

// A figure written once per format as name.png, name.svg, name.pdf.
struct NamedFigure {
    QString name;
    ui::PaintedFigure figure;
};

QSize sizeOption(const QCommandLineParser& parser)
{
    if (!parser.isSet(QStringLiteral("size")))
        return QSize(900, 800);
    static const QRegularExpression pattern(QStringLiteral("^(\\d{2,5})x(\\d{2,5})$"));
    const QString text = parser.value(QStringLiteral("size"));
    const QRegularExpressionMatch match = pattern.match(text);
    if (!match.hasMatch())
        throw InputError(
            QStringLiteral("--size: expected WIDTHxHEIGHT such as 900x800, got \"%1\"").arg(text));
    return QSize(match.captured(1).toInt(), match.captured(2).toInt());
}

std::vector<ui::FigureFormat> formatOption(const QCommandLineParser& parser)
{
    std::vector<ui::FigureFormat> formats;
    const QString text = parser.isSet(QStringLiteral("format"))
                             ? parser.value(QStringLiteral("format"))
                             : QStringLiteral("png");
    for (const QString& name : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        ui::FigureFormat format;
        if (!ui::figureFormatFromSuffix(QStringLiteral("x.") + name.trimmed().toLower(), &format))
            throw InputError(QStringLiteral("--format: unknown format \"%1\" (choose png, svg or "
                                            "pdf, separated by commas)")
                                 .arg(name));
        formats.push_back(format);
    }
    if (formats.empty())
        throw InputError(QStringLiteral("--format: no format given (png, svg, pdf)"));
    return formats;
}

// The view options (--separate-scales, --error, --error-scale, --colors) applied to settings.
void applyViewOptions(const QCommandLineParser& parser, ui::ViewSettings* settings)
{
    if (parser.isSet(QStringLiteral("separate-scales")))
        settings->sharedScale = false;
    const QString error = parser.value(QStringLiteral("error"));
    const ErrorKind kindBefore = settings->errorKind;
    if (parser.isSet(QStringLiteral("error")) && !parseErrorKind(error, &settings->errorKind))
        throw InputError(QStringLiteral("--error: unknown value \"%1\" (choose signed, absolute "
                                        "or relative)")
                             .arg(error));
    // As in the window, a scale held for one kind of error does not carry over to another.
    if (settings->errorKind != kindBefore)
        settings->errorScale = 0;
    settings->errorScale = positiveOption(parser, "error-scale", settings->errorScale);
    if (settings->errorScale > 0 && !ui::ViewSettings::isErrorScale(settings->errorScale))
        throw InputError(QStringLiteral("--error-scale: %1 is past the scales a colour map can "
                                        "hold (1e-12 to 1e12)")
                             .arg(parser.value(QStringLiteral("error-scale"))));
    const QString colors = parser.value(QStringLiteral("colors"));
    if (parser.isSet(QStringLiteral("colors")) &&
        (!ui::parseColorMap(colors, &settings->colorMap) ||
         settings->colorMap == ui::ColorMap::Diverging))
        throw InputError(
            QStringLiteral("--colors: unknown value \"%1\" (choose viridis or magma)").arg(colors));
}

// The request the options make: the scenario's spec and view with --scenario (which takes only
// the options of kScenarioCompatibleOptions), else the spec options'. Throws InputError naming
// the option.
RenderRequest renderRequest(const QCommandLineParser& parser)
{
    RenderRequest request;
    const bool fromScenario = parser.isSet(QStringLiteral("scenario"));
    if (fromScenario) {
        for (const QString& name : parser.optionNames())
            if (!kScenarioCompatibleOptions.contains(name))
                throw InputError(QStringLiteral("--%1: the scenario gives the experiment; with "
                                                "--scenario only --out, --format, --size, "
                                                "--query, --head, --error, --error-scale, "
                                                "--colors, --separate-scales, --rollout and "
                                                "--memory-budget apply")
                                     .arg(name));
    } else {
        request.spec = specFromOptions(parser, DefaultInput::Model);
        readComparisonModel(parser, request.spec);
    }
    refusePositionalArguments(parser);
    request.out = requiredOutFolder(parser);
    if (fromScenario) {
        request.scenario = readScenario(parser.value(QStringLiteral("scenario")));
        request.spec = request.scenario->session.spec;
        request.spec.exactMethod = false;  // as the window: an approximation against exact
        request.settings = ui::ViewSettings::fromJson(request.scenario->session.view);
    } else if (request.spec.exactMethod) {
        throw InputError(QStringLiteral("--method exact: render draws an approximation against "
                                        "exact attention; choose a feature map"));
    }
    request.size = sizeOption(parser);
    request.formats = formatOption(parser);
    applyViewOptions(parser, &request.settings);
    request.budget = budgetFromOptions(parser);
    return request;
}

// The input of the request's spec, as the window builds it. Throws InputError for --rollout
// without a ViT.
RenderInput renderInput(const QCommandLineParser& parser, RenderRequest& request)
{
    const ExperimentSpec& spec = request.spec;
    RenderInput read;
    if (spec.input.kind == InputKind::Model &&
        modelArchitectureOf(spec.input.modelPath) == ModelArchitecture::Vit) {
        VitReading reading = readWithVit(spec.input, request.budget);
        read.input = std::move(reading.input);
        read.image = std::move(reading.image);
        if (parser.isSet(QStringLiteral("rollout")))
            request.settings.rollout = true;
        if (request.settings.rollout)
            read.rollout = attentionRollout(*reading.forward, reading.heads, spec);
    } else if (parser.isSet(QStringLiteral("rollout"))) {
        throw InputError(QStringLiteral("--rollout: only a ViT's image overlay has a rollout over "
                                        "layers (give --model builtin-vit or a ViT's folder, "
                                        "and --image)"));
    } else if (spec.input.kind == InputKind::Image) {
        const ImagePixels pixels = loadImagePixels(spec.input.imagePath, spec.input.imageSize);
        read.input = buildInput(spec.input, &pixels, request.budget);
        read.image = patchImage(pixels, spec.input.patchSize);
    } else {
        read.input = inputFromSpec(spec, request.budget);
    }
    return read;
}

// --query and --head checked against the input; a scenario's head or query the input does not
// have become, as in the window, the last head and no query.
void applyIndexOptions(const QCommandLineParser& parser, const AttentionInput& input,
                       bool fromScenario, const ExperimentSpec& spec, ui::ViewSettings* settings)
{
    const auto indexOption = [&](const char* name, qint64 count) {
        const QString text = parser.value(QString::fromLatin1(name));
        bool ok = false;
        const qint64 value = text.toLongLong(&ok);
        if (!ok || value < 0 || value >= count)
            throw InputError(QStringLiteral("--%1: expected an index from 0 to %2, got \"%3\"")
                                 .arg(QLatin1String(name))
                                 .arg(count - 1)
                                 .arg(text));
        return int(value);
    };
    if (parser.isSet(QStringLiteral("query")))
        settings->query = indexOption("query", input.length());
    if (parser.isSet(QStringLiteral("head")))
        settings->head = indexOption("head", qint64(input.heads.size()));
    else if (!fromScenario && spec.input.kind == InputKind::Model &&
             !parser.isSet(QStringLiteral("model")))
        settings->head = builtinExample().head;  // the example's clearest head
    settings->head = std::clamp(settings->head, 0, int(input.heads.size()) - 1);
    if (settings->query >= input.length())
        settings->query = -1;
}

// A page state of the scenario's view (view.<key>: TimingPageState, ErrorPageState); a malformed
// one is refused naming the scenario file and the field.
template <typename State>
State pageState(const Scenario& scenario, const char* key)
{
    try {
        return State::fromJson(scenario.session.view.value(QLatin1String(key)).toObject());
    } catch (const InputError& error) {
        throw InputError(QStringLiteral("%1: view.%2: %3")
                             .arg(scenario.path, QLatin1String(key), error.message()));
    }
}

// The scenario's title and explanation as a small HTML page, for slides.
QByteArray explanationHtml(const Scenario& scenario)
{
    return QStringLiteral("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%1</title>"
                          "</head>\n<body>\n<h1>%1</h1>\n<div>%2</div>\n</body></html>\n")
        .arg(scenario.title.toHtmlEscaped(), scenario.explanation)
        .toUtf8();
}

// Writes every figure in every format, and a scenario's explanation, into the request's folder
// all-or-nothing (AtomicFileSet): a failure leaves nothing half-written there. The names of the
// files written.
QStringList writeFigures(const RenderRequest& request, const std::vector<NamedFigure>& figures)
{
    AtomicFileSet files(request.out);
    QStringList names;
    for (const NamedFigure& figure : figures) {
        for (const ui::FigureFormat format : request.formats) {
            const QString file = figure.name + QLatin1Char('.') + ui::figureFormatName(format);
            ui::writeFigure(files.open(file), format, figure.figure);
            names.append(file);
        }
    }
    if (request.scenario) {
        const QString file = QStringLiteral("explanation.html");
        writeAll(files.open(file), explanationHtml(*request.scenario));
        names.append(file);
    }
    files.commit();
    return names;
}

}  // namespace

void addRenderOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Computes exact attention and an approximation of it, as the window does, and writes the "
        "figures the window shows, drawn by the same code, into --out DIR: attention_exact, "
        "attention_approx and attention_error; query_row with --query; image_overlay for image "
        "input (the --query patch, or the centre one) and for a ViT's (the --query token, or "
        "[CLS]; --rollout for the rollout over every layer); methods_side_by_side with --methods. "
        "One file per figure and format.\n\n"
        "With --scenario FILE, the scenario's spec and view (head, query, error, colours) are "
        "drawn instead of the spec options, and its page too: error_chart for the Error analysis "
        "page, timing_chart for the timing page, "
        "stepper_frame for the stepper page; explanation.html holds its title and explanation.\n\n"
        "Exit status: 0 done; 2 bad usage or input; 3 refused for memory; 1 other failure."));
    parser.addHelpOption();
    addSpecOptions(parser);
    parser.addOptions({
        outFolderOption(),
        {QStringLiteral("format"),
         QStringLiteral("Figure formats, separated by commas (default "
                        "png)."),
         QStringLiteral("png,svg,pdf")},
        {QStringLiteral("size"),
         QStringLiteral("Size of each heatmap figure in pixels (default "
                        "900x800; PNG is written at twice that)."),
         QStringLiteral("WxH")},
        {QStringLiteral("query"),
         QStringLiteral("The query row (or patch) to compare and "
                        "outline."),
         QStringLiteral("N")},
        {QStringLiteral("head"),
         QStringLiteral("The head to draw (default 0; the example's "
                        "clearest head without input options)."),
         QStringLiteral("H")},
        {QStringLiteral("error"),
         QStringLiteral("The error map: signed, absolute or relative "
                        "(default signed)."),
         QStringLiteral("signed|absolute|relative")},
        {QStringLiteral("error-scale"),
         QStringLiteral("Hold the error map's colour scale at [-A, A] (signed) or [0, A] "
                        "(absolute, relative), errors beyond taking the end colours: figures of "
                        "several runs on one scale (default: each run's own range; A from "
                        "1e-12 to 1e12)."),
         QStringLiteral("A")},
        {QStringLiteral("colors"),
         QStringLiteral("Colour map of P and P^: viridis or magma "
                        "(default viridis)."),
         QStringLiteral("viridis|magma")},
        {QStringLiteral("separate-scales"), QStringLiteral("Give P and P^ a colour scale each "
                                                           "(default: one shared scale).")},
        {QStringLiteral("rollout"), QStringLiteral("A ViT's image_overlay: the attention rollout "
                                                   "over every layer instead of the head's row.")},
        {QStringLiteral("methods"),
         QStringLiteral("Also draw methods_side_by_side: the head under each of these methods "
                        "at once (exact P, then each method's P^, error map and numbers: the "
                        "relative error, KL, entropy and monotonicity), as one picture."),
         QStringLiteral("LIST")},
        comparisonModelOption(),
        {QStringList{QStringLiteral("scenario"), QStringLiteral("session")},
         QStringLiteral("A lecture scenario (or session) file: draw "
                        "its spec, view and page."),
         QStringLiteral("FILE")},
    });
}

int runRenderCommand(const QCommandLineParser& parser)
{
    RenderRequest request = renderRequest(parser);
    const std::vector<Method> methods = parser.isSet(QStringLiteral("methods"))
                                            ? sideBySideMethods(parser, request.spec)
                                            : std::vector<Method>();
    const RenderInput read = renderInput(parser, request);
    const ExperimentSpec& spec = request.spec;
    ui::ViewSettings& settings = request.settings;
    applyIndexOptions(parser, read.input, request.scenario.has_value(), spec, &settings);

    ComputeOptions options;
    options.budget = request.budget;
    options.kernels = false;
    options.features = false;
    const auto result =
        std::make_shared<const ExperimentResult>(compute(spec, read.input, options));

    // The figures of the Attention matrices and Image pages, as the window draws them.
    const QSize size = request.size;
    const auto plot = [](QCustomPlot& figure, const QString& name) {
        return NamedFigure{name, ui::plotFigure(figure, figure.size(), name)};
    };
    ui::HeatmapView exact, approx, error;
    for (ui::HeatmapView* view : {&exact, &approx, &error})
        view->resize(size);
    ui::showAttention(exact, approx, error, result, settings);
    std::vector<NamedFigure> figures{plot(exact, QStringLiteral("attention_exact")),
                                     plot(approx, QStringLiteral("attention_approx")),
                                     plot(error, QStringLiteral("attention_error"))};
    ui::RowComparisonView row;
    if (settings.query >= 0) {
        row.resize(size.width() * 3 / 2, size.height() / 2);
        ui::showQueryRow(row, *result, settings);
        figures.push_back(plot(row, QStringLiteral("query_row")));
    }
    // --methods: the head under every method of the list at once, as Methods Side by Side shows it.
    ui::MethodsSideBySide sideBySide;
    if (!methods.empty()) {
        sideBySide.resize(size.width() / 2 * int(methods.size() + 1) + 60, size.height() * 3 / 2);
        sideBySide.show();
        sideBySide.setExperiment(spec, std::make_shared<const AttentionInput>(read.input),
                                 settings.head);
        sideBySide.setMethods(methods);
        sideBySide.finishNow();
        if (!sideBySide.errorMessage().isEmpty())
            throw InputError(QStringLiteral("--methods: %1").arg(sideBySide.errorMessage()));
        figures.push_back({QStringLiteral("methods_side_by_side"), sideBySide.figure()});
    }
    ui::ImageOverlayView overlay;
    if (!read.image.isNull()) {
        overlay.resize(size.width() * 2, size.height() * 3 / 4);
        ui::showImageOverlay(overlay, read.image, *result, settings,
                             read.rollout ? &*read.rollout : nullptr);
        figures.push_back(plot(overlay, QStringLiteral("image_overlay")));
    }

    // The scenario's page, when it has a figure of its own: the same chart or frame the page
    // shows (nothing is measured or swept again).
    const QString page =
        request.scenario ? request.scenario->session.view.value(QLatin1String("page")).toString()
                         : QString();
    ui::ErrorChart errorChart;
    ui::TimingChart timingChart;
    ui::StepperFrame stepperFrame;
    if (page == QLatin1String("errors")) {
        const auto state = pageState<ErrorPageState>(*request.scenario, "errors");
        errorChart.resize(size.width() * 2, size.height());
        if (!state.result.rows.empty())  // as the page: no rows, no curves
            errorChart.setResult(state.result, state.metric, state.axis);
        figures.push_back(plot(errorChart, QStringLiteral("error_chart")));
    } else if (page == QLatin1String("timing")) {
        const auto state = pageState<TimingPageState>(*request.scenario, "timing");
        timingChart.resize(size.width() * 2, size.height());
        if (!state.result.points.empty())
            timingChart.setResult(state.result);
        figures.push_back(plot(timingChart, QStringLiteral("timing_chart")));
    } else if (page == QLatin1String("stepper")) {
        const QJsonObject state =
            request.scenario->session.view.value(QLatin1String("stepper")).toObject();
        try {
            figures.push_back(
                {QStringLiteral("stepper_frame"),
                 ui::drawStepperFrame(
                     stepperFrame, spec, std::make_shared<const AttentionInput>(read.input), state,
                     QSize(size.width() * 2, size.height() * 5 / 4), request.budget)});
        } catch (const InputError& error) {
            throw InputError(QStringLiteral("stepper: %1").arg(error.message()));
        }
    }

    const QStringList names = writeFigures(request, figures);
    QTextStream stream(stdout);
    stream << "wrote " << names.join(QStringLiteral(", ")) << " into "
           << QDir(request.out).absolutePath() << '\n';
    for (const ResultWarning& warning : result->warnings)
        stream << "warning: " << warning.message << '\n';
    return ExitSuccess;
}

}  // namespace attnlab

#include "commands/render_command.h"

#include "experiment/attention_figures.h"
#include "command_line.h"
#include "errors/error_analysis_panel.h"
#include "errors.h"
#include "plotting/figure_export.h"
#include "plotting/heatmap_view.h"
#include "experiment/image_loader.h"
#include "experiment/image_overlay_view.h"
#include "inputs/model_input.h"
#include "experiment/row_comparison_view.h"
#include "sessions/scenario.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"
#include "stepper/stepper_view.h"
#include "timing/timing_panel.h"

#include <QCommandLineParser>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>

#include <functional>
#include <optional>

namespace attnlab {

namespace {

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

// The options that may accompany --scenario: where and how to write, and which part of the view
// to draw. The spec options would contradict the scenario's spec.
const QStringList kScenarioCompatibleOptions = {
    QStringLiteral("scenario"), QStringLiteral("out"),   QStringLiteral("format"),
    QStringLiteral("size"),     QStringLiteral("query"), QStringLiteral("head"),
    QStringLiteral("error"),    QStringLiteral("colors"), QStringLiteral("separate-scales"),
    QStringLiteral("rollout"),  QStringLiteral("memory-budget")};

// The stepper page waits at most this long for its computation.
constexpr int kStepperTimeoutMs = 120'000;

// A figure of a page, written once per format: writes `path` in `format` or throws OutputError.
using PageFigure = std::function<void(const QString& path, ui::FigureFormat format)>;

// The timing page of a scenario: the chart of the sweep its state holds (nothing is measured).
PageFigure timingFigure(ui::TimingPanel& panel, const QString& file, const QJsonObject& state,
                        QSize size)
{
    try {
        panel.setState(state);
    } catch (const InputError& error) {
        throw InputError(QStringLiteral("%1: view.timing: %2").arg(file, error.message()));
    }
    // Laid out as on screen, without showing anything.
    panel.setAttribute(Qt::WA_DontShowOnScreen);
    panel.resize(size);
    panel.show();
    return [&panel](const QString& path, ui::FigureFormat format) {
        panel.exportChart(path, format);
    };
}

// The Error analysis page of a scenario: the chart of the sweep its state holds (nothing is
// computed).
PageFigure errorsFigure(ui::ErrorAnalysisPanel& panel, const QString& file,
                        const QJsonObject& state, QSize size)
{
    try {
        panel.setState(state);
    } catch (const InputError& error) {
        throw InputError(QStringLiteral("%1: view.errors: %2").arg(file, error.message()));
    }
    panel.setAttribute(Qt::WA_DontShowOnScreen);  // laid out as on screen, not shown
    panel.resize(size);
    panel.show();
    return [&panel](const QString& path, ui::FigureFormat format) {
        panel.exportChart(path, format);
    };
}

// The stepper page of a scenario: its frame at the position its state holds, once computed.
PageFigure stepperFigure(ui::StepperView& stepper, const ExperimentSpec& spec,
                         const AttentionInput& input, const QJsonObject& state, QSize size)
{
    stepper.setAttribute(Qt::WA_DontShowOnScreen);  // laid out as on screen, not shown
    stepper.resize(size);
    stepper.show();
    QEventLoop loop;
    QString problem = QStringLiteral("the stepper did not finish within %1 s")
                          .arg(kStepperTimeoutMs / 1000);
    bool shown = false;
    QObject::connect(&stepper, &ui::StepperView::experimentShown, &loop, [&] {
        shown = true;
        loop.quit();
    });
    QObject::connect(&stepper, &ui::StepperView::failed, &loop, [&](const QString& message) {
        problem = message;
        loop.quit();
    });
    QTimer::singleShot(kStepperTimeoutMs, &loop, &QEventLoop::quit);
    stepper.setExperiment(spec, std::make_shared<const AttentionInput>(input));
    loop.exec();
    if (!shown)
        throw InputError(QStringLiteral("stepper: %1").arg(problem));
    stepper.setState(state);
    return [&stepper](const QString& path, ui::FigureFormat format) {
        stepper.exportFrame(path, format);
    };
}

// The scenario's title and explanation as a small HTML page, for slides.
QByteArray explanationHtml(const Scenario& scenario)
{
    return QStringLiteral("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%1</title>"
                          "</head>\n<body>\n<h1>%1</h1>\n<div>%2</div>\n</body></html>\n")
        .arg(scenario.title.toHtmlEscaped(), scenario.explanation)
        .toUtf8();
}

}  // namespace

int runRenderCommand(const QStringList& arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Computes exact attention and an approximation of it, as the window does, and writes the "
        "figures the window shows, drawn by the same code, into --out DIR: attention_exact, "
        "attention_approx and attention_error; query_row with --query; image_overlay for image "
        "input (the --query patch, or the centre one) and for a ViT's (the --query token, or "
        "[CLS]; --rollout for the rollout over every layer). One file per figure and format.\n\n"
        "With --scenario FILE, the scenario's spec and view (head, query, error, colours) are "
        "drawn instead of the spec options, and its page too: error_chart for the Error analysis "
        "page, timing_chart for the timing page, "
        "stepper_frame for the stepper page; explanation.html holds its title and explanation.\n\n"
        "Exit status: 0 done; 2 bad usage or input; 3 refused for memory; 1 other failure."));
    parser.addHelpOption();
    addSpecOptions(parser);
    parser.addOptions({
        outFolderOption(),
        {QStringLiteral("format"), QStringLiteral("Figure formats, separated by commas (default "
                                                  "png)."),
         QStringLiteral("png,svg,pdf")},
        {QStringLiteral("size"), QStringLiteral("Size of each heatmap figure in pixels (default "
                                                "900x800; PNG is written at twice that)."),
         QStringLiteral("WxH")},
        {QStringLiteral("query"), QStringLiteral("The query row (or patch) to compare and "
                                                 "outline."),
         QStringLiteral("N")},
        {QStringLiteral("head"), QStringLiteral("The head to draw (default 0; the example's "
                                                "clearest head without input options)."),
         QStringLiteral("H")},
        {QStringLiteral("error"), QStringLiteral("The error map: signed, absolute or relative "
                                                 "(default signed)."),
         QStringLiteral("signed|absolute|relative")},
        {QStringLiteral("colors"), QStringLiteral("Colour map of P and P^: viridis or magma "
                                                  "(default viridis)."),
         QStringLiteral("viridis|magma")},
        {QStringLiteral("separate-scales"), QStringLiteral("Give P and P^ a colour scale each "
                                                           "(default: one shared scale).")},
        {QStringLiteral("rollout"), QStringLiteral("A ViT's image_overlay: the attention rollout "
                                                   "over every layer instead of the head's row.")},
        comparisonModelOption(),
        {QStringLiteral("scenario"), QStringLiteral("A lecture scenario (or session) file: draw "
                                                    "its spec, view and page."),
         QStringLiteral("FILE")},
    });
    if (!parseSubcommand(parser, arguments))
        return ExitSuccess;
    const bool fromScenario = parser.isSet(QStringLiteral("scenario"));
    if (fromScenario) {
        for (const QString& name : parser.optionNames())
            if (!kScenarioCompatibleOptions.contains(name))
                throw InputError(QStringLiteral("--%1: the scenario gives the experiment; with "
                                                "--scenario only --out, --format, --size, "
                                                "--query, --head, --error, --colors, "
                                                "--separate-scales, --rollout and "
                                                "--memory-budget apply")
                                     .arg(name));
    }
    ExperimentSpec spec =
        fromScenario ? ExperimentSpec() : specFromOptions(parser, DefaultInput::Model);
    readComparisonModel(parser, spec);
    refusePositionalArguments(parser);
    const QString out = requiredOutFolder(parser);
    std::optional<Scenario> scenario;
    ui::ViewSettings settings;
    if (fromScenario) {
        scenario = readScenario(parser.value(QStringLiteral("scenario")));
        spec = scenario->session.spec;
        spec.exactMethod = false;  // as the window: an approximation against exact attention
        settings = ui::ViewSettings::fromJson(scenario->session.view);
    } else if (spec.exactMethod) {
        throw InputError(QStringLiteral("--method exact: render draws an approximation against "
                                        "exact attention; choose a feature map"));
    }
    const QSize size = sizeOption(parser);
    const std::vector<ui::FigureFormat> formats = formatOption(parser);
    if (parser.isSet(QStringLiteral("separate-scales")))
        settings.sharedScale = false;
    if (parser.isSet(QStringLiteral("error")) &&
        !parseErrorKind(parser.value(QStringLiteral("error")), &settings.errorKind))
        throw InputError(QStringLiteral("--error: unknown value \"%1\" (choose signed, absolute "
                                        "or relative)")
                             .arg(parser.value(QStringLiteral("error"))));
    if (parser.isSet(QStringLiteral("colors")) &&
        (!ui::parseColorMap(parser.value(QStringLiteral("colors")), &settings.colorMap) ||
         settings.colorMap == ui::ColorMap::Diverging))
        throw InputError(QStringLiteral("--colors: unknown value \"%1\" (choose viridis or "
                                        "magma)")
                             .arg(parser.value(QStringLiteral("colors"))));

    const MemoryBudget budget = budgetFromOptions(parser);
    AttentionInput input;
    QImage image;
    std::optional<AttentionRollout> rollout;
    if (spec.input.kind == InputKind::Model &&
        modelArchitectureOf(spec.input.modelPath) == ModelArchitecture::Vit) {
        VitReading reading = readWithVit(spec.input, budget);
        input = std::move(reading.input);
        image = std::move(reading.image);
        if (parser.isSet(QStringLiteral("rollout")))
            settings.rollout = true;
        if (settings.rollout)
            rollout = attentionRollout(*reading.forward, reading.heads, spec);
    } else if (parser.isSet(QStringLiteral("rollout"))) {
        throw InputError(QStringLiteral("--rollout: only a ViT's image overlay has a rollout over "
                                        "layers (give --model builtin-vit or a ViT's folder, "
                                        "and --image)"));
    } else if (spec.input.kind == InputKind::Image) {
        const ImagePixels pixels = loadImagePixels(spec.input.imagePath, spec.input.imageSize);
        input = buildInput(spec.input, &pixels, budget);
        image = patchImage(pixels, spec.input.patchSize);
    } else {
        input = inputFromSpec(spec, budget);
    }
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
        settings.query = indexOption("query", input.length());
    if (parser.isSet(QStringLiteral("head")))
        settings.head = indexOption("head", qint64(input.heads.size()));
    else if (!fromScenario && spec.input.kind == InputKind::Model &&
             !parser.isSet(QStringLiteral("model")))
        settings.head = builtinExample().head;  // the example's clearest head
    // A scenario's view may name a head or query the input does not have: as the window does,
    // the last head, and no query.
    settings.head = std::clamp(settings.head, 0, int(input.heads.size()) - 1);
    if (settings.query >= input.length())
        settings.query = -1;

    ComputeOptions options;
    options.budget = budget;
    options.kernels = false;
    options.features = false;
    const auto shared = std::make_shared<const ExperimentResult>(compute(spec, input, options));
    const ExperimentResult& result = *shared;

    ui::HeatmapView exact, approx, error;
    for (ui::HeatmapView* view : {&exact, &approx, &error})
        view->resize(size);
    ui::showAttention(exact, approx, error, shared, settings);
    std::vector<std::pair<QString, QCustomPlot*>> figures = {
        {QStringLiteral("attention_exact"), &exact},
        {QStringLiteral("attention_approx"), &approx},
        {QStringLiteral("attention_error"), &error},
    };
    ui::RowComparisonView row;
    if (settings.query >= 0) {
        row.resize(size.width() * 3 / 2, size.height() / 2);
        ui::showQueryRow(row, result, settings);
        figures.emplace_back(QStringLiteral("query_row"), &row);
    }
    ui::ImageOverlayView overlay;
    if (!image.isNull()) {
        overlay.resize(size.width() * 2, size.height() * 3 / 4);
        ui::showImageOverlay(overlay, image, result, settings, rollout ? &*rollout : nullptr);
        figures.emplace_back(QStringLiteral("image_overlay"), &overlay);
    }

    // The scenario's page, when it has figures of its own.
    const QJsonObject view = scenario ? scenario->session.view : QJsonObject();
    const QString page = view.value(QLatin1String("page")).toString();
    ui::ErrorAnalysisPanel errors;
    ui::TimingPanel timing;
    ui::StepperView stepper;
    std::vector<std::pair<QString, PageFigure>> pageFigures;
    if (page == QLatin1String("errors"))
        pageFigures.emplace_back(QStringLiteral("error_chart"),
                                 errorsFigure(errors, scenario->path,
                                              view.value(QLatin1String("errors")).toObject(),
                                              QSize(size.width() * 2, size.height())));
    else if (page == QLatin1String("timing"))
        pageFigures.emplace_back(QStringLiteral("timing_chart"),
                                 timingFigure(timing, scenario->path,
                                              view.value(QLatin1String("timing")).toObject(),
                                              QSize(size.width() * 2, size.height())));
    else if (page == QLatin1String("stepper"))
        pageFigures.emplace_back(QStringLiteral("stepper_frame"),
                                 stepperFigure(stepper, spec, input,
                                               view.value(QLatin1String("stepper")).toObject(),
                                               QSize(size.width() * 2, size.height() * 5 / 4)));

    // Every figure is drawn into a folder beside DIR first, then moved in: a failure leaves
    // nothing half-written in DIR.
    if (!QDir().mkpath(out))
        throw OutputError(QStringLiteral("%1: cannot create the folder").arg(out));
    QTemporaryDir staging(QDir(out).absoluteFilePath(QStringLiteral(".render-XXXXXX")));
    if (!staging.isValid())
        throw OutputError(QStringLiteral("%1: cannot write into the folder").arg(out));
    QStringList names;
    for (const auto& [name, figure] : figures) {
        for (const ui::FigureFormat format : formats) {
            const QString file = name + QLatin1Char('.') + ui::figureFormatName(format);
            ui::exportFigure(*figure, staging.filePath(file), format, figure->size());
            names.append(file);
        }
    }
    for (const auto& [name, draw] : pageFigures) {
        for (const ui::FigureFormat format : formats) {
            const QString file = name + QLatin1Char('.') + ui::figureFormatName(format);
            draw(staging.filePath(file), format);
            names.append(file);
        }
    }
    if (scenario) {
        const QString file = QStringLiteral("explanation.html");
        QSaveFile html(staging.filePath(file));
        if (!html.open(QIODevice::WriteOnly) || html.write(explanationHtml(*scenario)) < 0 ||
            !html.commit())
            throw OutputError(QStringLiteral("%1: cannot write: %2")
                                  .arg(QDir(out).absoluteFilePath(file), html.errorString()));
        names.append(file);
    }
    for (const QString& file : names) {
        const QString target = QDir(out).absoluteFilePath(file);
        QFile::remove(target);
        if (!QFile::rename(staging.filePath(file), target))
            throw OutputError(QStringLiteral("%1: cannot move the figure into place").arg(target));
    }
    QTextStream stream(stdout);
    stream << "wrote " << names.join(QStringLiteral(", ")) << " into "
           << QDir(out).absolutePath() << '\n';
    for (const ResultWarning& warning : result.warnings)
        stream << "warning: " << warning.message << '\n';
    return ExitSuccess;
}

}  // namespace attnlab

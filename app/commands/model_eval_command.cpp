#include "commands/model_eval_command.h"

#include "command_line.h"
#include "errors.h"
#include "plotting/figure_export.h"
#include "sweeps/downstream.h"
#include "inputs/model_input.h"
#include "model/model_eval_chart.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"

#include <QCommandLineParser>
#include <QTextStream>


namespace attnlab {

namespace {

constexpr QSize kPlotSize(1200, 620);
const QString kDefaultMethods = QStringLiteral("favor-positive");
const QString kDefaultFeatures = QStringLiteral("16,32,64,128,256");
constexpr int kMaxSeeds = 10'000;

// The options of this command that the experiment's parser does not take.
const QStringList kListOptions = {"methods", "features", "layers", "seeds", "out", "plot"};

QString option(const char* name) { return QString::fromLatin1(name); }

QString methodChoices()
{
    return QStringLiteral("exact, ") + methodNames(approximationMethods(), QStringLiteral(", "));
}

int positiveInteger(const QString& text, const char* name, int maximum)
{
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    if (!ok || value < 1 || value > maximum)
        throw InputError(QStringLiteral("--%1: expected integers from 1 to %2, got \"%3\"")
                             .arg(QLatin1String(name))
                             .arg(maximum)
                             .arg(text));
    return int(value);
}

// --layers: sets of layers separated by commas, each "all" or layers joined by "+" ("0+3").
std::vector<std::vector<int>> layerSets(const QCommandLineParser& parser, int layerCount)
{
    std::vector<std::vector<int>> sets;
    for (const QString& item : listOption(parser, "layers", QStringLiteral("all"))) {
        std::vector<int> set;
        if (item == QLatin1String("all")) {
            for (int layer = 0; layer < layerCount; ++layer)
                set.push_back(layer);
        } else {
            for (const QString& part : item.split(QLatin1Char('+'))) {
                bool ok = false;
                const int layer = part.trimmed().toInt(&ok);
                if (!ok || layer < 0 || layer >= layerCount)
                    throw InputError(QStringLiteral("--layers: \"%1\" is not a layer of this "
                                                    "model (all, or numbers from 0 to %2, joined "
                                                    "by + to replace several together)")
                                         .arg(item)
                                         .arg(layerCount - 1));
                set.push_back(layer);
            }
        }
        sets.push_back(set);
    }
    return sets;
}

}  // namespace

int runModelEvalCommand(const QStringList& arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "What an approximation costs a trained model: the model reads the text twice, once with "
        "its own causal softmax attention and once with each method in place of softmax "
        "attention in the replaced layers (every head), and the next-token distributions are "
        "compared position by position. Writes one CSV row per (method, m, replaced layers, "
        "seed) into --out: method,m,layers,seed,tokens,top1_agreement,mean_kl,max_kl,"
        "rel_frobenius_attention_mean (top-1 agreement: the fraction of positions whose likeliest "
        "next token is unchanged; KL(p || q) of the next-token distributions, exact p and "
        "approximate q; the mean relative "
        "Frobenius error of the replaced heads' attention, on the queries and keys they receive "
        "in the approximate run). Without --model, the built-in model; without --text, a short "
        "example sentence.\n\n"
        "Exit status: 0 done; 2 bad usage or input; 3 refused for memory; 1 other failure. The "
        "CSV is written all or none."));
    parser.addHelpOption();
    QCommandLineOption features(option("features"),
                                QStringLiteral("The numbers of features m, separated by commas "
                                               "(default %1).")
                                    .arg(kDefaultFeatures),
                                QStringLiteral("LIST"));
    QCommandLineOption method(option("method"), QString(), QStringLiteral("NAME"));
    method.setFlags(QCommandLineOption::HiddenFromHelp);
    addSpecOptions(parser, {features, method});
    parser.addOptions({
        {option("methods"),
         QStringLiteral("Methods separated by commas: %1 (default %2).")
             .arg(methodChoices(), kDefaultMethods),
         QStringLiteral("LIST")},
        {option("layers"),
         QStringLiteral("The replaced layers: sets separated by commas, each all or a layer "
                        "number (several joined by +, e.g. 0+3); one row per set (default "
                        "all). --layers all,0,1,2,3 compares every layer alone with all "
                        "together."),
         QStringLiteral("all|N,...")},
        {option("seeds"), QStringLiteral("Seeds of W per point: --seed, --seed + 1, ... "
                                         "(default 1)."),
         QStringLiteral("K")},
    });
    parser.addOptions(tableOutputOptions(QStringLiteral(
        "Also draw agreement and KL against m, as PNG, SVG or PDF by the suffix.")));
    if (!parseSubcommand(parser, arguments))
        return ExitSuccess;
    if (parser.isSet(option("method")))
        throw InputError(QStringLiteral("--method: model-eval takes --methods LIST"));
    for (const char* name : {"image", "random", "q"})
        if (parser.isSet(option(name)))
            throw InputError(QStringLiteral("--%1: model-eval runs a model on text (--model, "
                                            "--text or --text-file)")
                                 .arg(QLatin1String(name)));
    // The spec of everything but the lists: the model and text, W's projection, row norms and
    // seed. --features is read below as a list, so it is kept out of this parse.
    ExperimentSpec base = specFromOptionsExcept(
        parser, kListOptions, QStringLiteral("attention-lab model-eval"), DefaultInput::Model);
    if (base.input.kind != InputKind::Model) {
        base.input.kind = InputKind::Model;  // --text without --model: the built-in model reads it
        base.input.modelPath = QString::fromLatin1(kBuiltinModel);
        base.causal = true;
    }
    refusePositionalArguments(parser);

    std::vector<ExperimentSpec> methods;
    for (const QString& name : listOption(parser, "methods", kDefaultMethods)) {
        ExperimentSpec m = base;
        if (!m.setMethod(name))
            throw InputError(QStringLiteral("--methods: unknown method \"%1\" (choose %2)")
                                 .arg(name, methodChoices()));
        methods.push_back(m);
    }
    std::vector<int> featureCounts;
    for (const QString& item : listOption(parser, "features", kDefaultFeatures))
        featureCounts.push_back(positiveInteger(item, "features", SpecLimits::features));
    const int seeds = parser.isSet(option("seeds"))
                          ? positiveInteger(parser.value(option("seeds")), "seeds", kMaxSeeds)
                          : 1;
    const TableOutputs outputs = tableOutputs(parser, "model-eval.csv");

    const MemoryBudget budget = budgetFromOptions(parser);
    const std::shared_ptr<const Gpt2Model> model = loadModel(base.input.modelPath);
    const std::vector<std::vector<int>> sets = layerSets(parser, model->config().layers);
    const ModelTokens tokens = modelTokens(*model, base.input.text, base.input.keepLastTokens);
    // The exact run's Q, K, V and logits: modelInput checks them against the budget.
    buildInput(base.input, nullptr, budget);
    const std::shared_ptr<const ForwardResult> exact = cachedForward(model, tokens.ids);

    QTextStream err(stderr);
    for (const QString& note : tokens.notes)
        err << "warning: " << note << '\n';
    std::vector<ModelEvalRow> rows;
    // Methods without a random projection (exact, elu+1, Taylor) have no m and no seed to vary:
    // one row per layer set.
    const auto drawsProjection = [](const ExperimentSpec& m) {
        return !m.exactMethod && methodInfo(m.approximation.kind).drawsProjection;
    };
    int total = 0;
    for (const ExperimentSpec& m : methods)
        total += int(sets.size()) * (drawsProjection(m) ? int(featureCounts.size()) * seeds : 1);
    for (ExperimentSpec m : methods) {
        const std::vector<int> counts = drawsProjection(m) ? featureCounts : std::vector<int>{0};
        const int methodSeeds = drawsProjection(m) ? seeds : 1;
        for (const int count : counts) {
            if (drawsProjection(m))
                m.approximation.features = count;
            for (const std::vector<int>& set : sets) {
                for (int k = 0; k < methodSeeds; ++k) {
                    m.approximation.seed = base.approximation.seed + std::uint64_t(k);
                    const DownstreamComparison comparison =
                        compareDownstream(*model, tokens.ids, *exact, m, set);
                    rows.push_back(modelEvalRow(m, comparison, model->config().layers));
                    const ModelEvalRow& row = rows.back();
                    err << QStringLiteral("[%1/%2] %3, m = %4, layers %5, seed %6: top-1 "
                                          "agreement %7, mean KL %8\n")
                               .arg(rows.size())
                               .arg(total)
                               .arg(row.method)
                               .arg(row.features)
                               .arg(row.layers)
                               .arg(row.seed)
                               .arg(row.top1Agreement, 0, 'f', 3)
                               .arg(row.meanKl, 0, 'g', 3);
                    err.flush();
                }
            }
        }
    }

    writeTableOutputs(
        outputs, modelEvalCsv(rows).toUtf8(),
        [&](QTextStream& out) {
            out << QStringLiteral("%1, layer(s) replaced in every head, %2 tokens: %3 rows\n")
                       .arg(modelDisplayName(base.input.modelPath))
                       .arg(tokens.ids.size())
                       .arg(rows.size());
        },
        {}, [&](const QString& plot) {
            ui::FigureFormat format;
            ui::figureFormatFromSuffix(plot, &format);
            ui::saveModelEvalChart(rows, ui::ModelEvalAxis::Features, plot, format, kPlotSize,
                                   QStringLiteral("%1, %2 tokens")
                                       .arg(modelDisplayName(base.input.modelPath))
                                       .arg(tokens.ids.size()));
        });
    return ExitSuccess;
}

}  // namespace attnlab

#include "commands/subcommands.h"

#include "named_values.h"
#include "attention/approximation.h"
#include "attention/band_products.h"
#include "command_line.h"
#include "errors.h"
#include "ui/plotting/figure_export.h"
#include "sweeps/downstream.h"
#include "inputs/model_input.h"
#include "ui/model/model_eval_chart.h"
#include "commands/output_options.h"
#include "commands/spec_options.h"

#include "ui/images/image_loader.h"
#include "io/atomic_files.h"
#include "io/csv.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QTextStream>

#include <algorithm>

namespace attnlab {

namespace {

constexpr QSize kPlotSize(1200, 620);
const QString kDefaultMethods = QStringLiteral("favor-positive");
const QString kDefaultFeatures = QStringLiteral("16,32,64,128,256");
constexpr int kMaxSeeds = 10'000;

// The options of this command that the experiment's parser does not take.
const QStringList kListOptions = {"methods",     "features",     "layers", "seeds",
                                  "out",         "plot",         "images", "image-folder",
                                  "predictions", "compare-model"};
// Images between two progress lines of an image model's run.
constexpr int kProgressLines = 20;

QString option(const char* name)
{
    return QString::fromLatin1(name);
}

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

// One point of the evaluation: a method with its m and seed, and the layers it replaces.
struct EvalPoint {
    ExperimentSpec method;
    std::vector<int> layers;
};

// The points of --methods, --features, --seeds and --layers, in the order of the CSV rows.
std::vector<EvalPoint> evalPoints(const std::vector<ExperimentSpec>& methods,
                                  const std::vector<int>& featureCounts, int seeds,
                                  const std::vector<std::vector<int>>& sets, std::uint64_t seed)
{
    std::vector<EvalPoint> points;
    for (ExperimentSpec m : methods) {
        // m varies for the methods with a size (m, or local attention's window), the seed for
        // the random ones; the others have one point per layer set.
        const MethodParameter* size =
            m.exactMethod ? nullptr : methodInfo(m.approximation.kind).size;
        const bool random = !m.exactMethod && methodInfo(m.approximation.kind).isRandom;
        const std::vector<int> counts = size ? featureCounts : std::vector<int>{0};
        for (const int count : counts) {
            if (size)
                m.approximation.setValue(*size, count);
            for (const std::vector<int>& set : sets)
                for (int k = 0; k < (random ? seeds : 1); ++k) {
                    m.approximation.seed = seed + std::uint64_t(k);
                    points.push_back({m, set});
                }
        }
    }
    return points;
}

// Refuses points whose replaced heads (every head of their layers: `heads` of dimension d each)
// would keep more than the budget at once (the largest point's W and working memory), and
// announces on stderr a run expected to be long or large: every point on `inputs` inputs of
// `length` tokens (expectedDownstreamCost).
void checkPointCosts(const std::vector<EvalPoint>& points, int heads, int d, Eigen::Index length,
                     bool causal, qsizetype inputs, const MemoryBudget& budget)
{
    ComputeCost total;
    const EvalPoint* largest = nullptr;
    for (const EvalPoint& point : points) {
        if (point.method.exactMethod)
            continue;
        const ComputeCost cost = expectedDownstreamCost(
            point.method.approximation, heads * int(point.layers.size()), d, length, causal);
        total.seconds += double(inputs) * cost.seconds;
        if (!largest || cost.bytes > total.bytes) {
            total.bytes = cost.bytes;
            largest = &point;
        }
    }
    if (!largest)
        return;
    budget.require(
        total.bytes,
        QStringLiteral("%1 in %2 (L = %3)")
            .arg(largest->method.approximation.titleWithSize(),
                 countOf(heads * qint64(largest->layers.size()), QStringLiteral("replaced head"),
                         QStringLiteral("replaced heads")))
            .arg(length),
        QStringLiteral("Use fewer features (--features) or replaced layers (--layers), "
                       "or raise the memory budget."));
    const QString notice = expectedRunNotice(
        total,
        QStringLiteral("%1, L = %2%3")
            .arg(countOf(qint64(points.size()), QStringLiteral("row"), QStringLiteral("rows")))
            .arg(length)
            .arg(inputs > 1 ? QStringLiteral(", %1 images").arg(inputs) : QString()));
    if (!notice.isEmpty()) {
        QTextStream(stderr) << QStringLiteral("attention-lab model-eval: this run is %1: fewer "
                                              "or smaller --features, fewer --layers or --seeds "
                                              "make it cheaper\n")
                                   .arg(notice);
    }
}

// The warning for the windows w of method (from --features for local and hedgehog-window, from
// --window for Scatterbrain) that hold every key of all `length` queries, where the method is
// exact attention and its error float rounding; empty when there are none.
QString windowCoversNote(const ExperimentSpec& method, const std::vector<int>& featureCounts,
                         Eigen::Index length, bool causal)
{
    const MethodInfo& info = methodInfo(method.approximation.kind);
    if (!info.takes(windowParameter()))
        return QString();
    const bool swept = info.size == &windowParameter();
    const std::vector<int> windows =
        swept ? featureCounts
              : std::vector<int>{int(method.approximation.value(windowParameter()))};
    QStringList covering;
    for (const int w : windows)
        if (SlidingWindow{w, causal, length}.coversEveryPair())
            covering.append(QString::number(w));
    if (covering.isEmpty())
        return QString();
    const Eigen::Index bound = causal ? length : 2 * length - 1;
    return QStringLiteral("%1 with w = %2 (%3): the window holds every key of all %4 queries "
                          "(%5), so the method is exact attention there and its error is float "
                          "rounding. Set w below %6 to see it approximate.")
        .arg(info.name, covering.join(QStringLiteral(", ")),
             swept ? QStringLiteral("from --features") : QStringLiteral("--window"))
        .arg(length)
        .arg(causal ? QStringLiteral("causal, w >= L") : QStringLiteral("centred, w >= 2L - 1"))
        .arg(bound);
}

// <out>-heads.csv, beside the CSV `csv`.
QString headsPath(const QString& csv)
{
    const QFileInfo info(csv);
    return info.absolutePath() + QLatin1Char('/') + info.completeBaseName() +
           QStringLiteral("-heads.csv");
}

// The progress line of a row.
void printRow(QTextStream& err, const ModelEvalRow& row, std::size_t done, std::size_t total)
{
    // A method whose size is its window says w; one with a window besides m says both.
    Method kind = Method::ExactStreaming;
    const bool windowSized =
        parseMethod(row.method, &kind) && methodInfo(kind).size == &windowParameter();
    QString size = windowSized ? QStringLiteral("w = %1").arg(row.window)
                               : QStringLiteral("m = %1").arg(row.features);
    if (!windowSized && row.window > 0)
        size += QStringLiteral(", w = %1").arg(row.window);
    err << QStringLiteral("[%1/%2] %3, %4, layers %5, seed %6: top-1 agreement %7, mean KL "
                          "%8\n")
               .arg(done)
               .arg(total)
               .arg(row.method, size)
               .arg(row.layers)
               .arg(row.seed)
               .arg(row.top1Agreement, 0, 'f', 3)
               .arg(row.meanKl, 0, 'g', 3);
    err.flush();
}

// The row of --compare-model: the second checkpoint's predictions and attention (every layer)
// against model's own, as the method "checkpoint".
ModelEvalRow checkpointRow(const LanguageModel& model, const QString& secondPath,
                           const ExperimentSpec& base, const std::vector<int>& ids,
                           const ForwardResult& exact)
{
    const std::shared_ptr<const LanguageModel> second = loadModel(secondPath);
    requireComparableCheckpoints(model, *second, base.input.text, modelDisplayName(secondPath));
    const DownstreamComparison comparison =
        compareCheckpoints(exact, *cachedForward(second, ids), model.heads());
    ModelEvalRow row;
    row.method = QStringLiteral("checkpoint");
    row.layers = layersName(comparison.replacedLayers, model.layers());
    row.tokens = int(ids.size());
    row.top1Agreement = comparison.top1Agreement;
    row.meanKl = comparison.meanKl;
    row.maxKl = comparison.maxKl;
    row.relFrobeniusAttentionMean = comparison.relFrobeniusAttentionMean;
    QTextStream(stderr) << QStringLiteral("checkpoint %1 against %2: top-1 agreement %3, mean KL "
                                          "%4\n")
                               .arg(modelDisplayName(secondPath), modelDisplayName(model.folder()))
                               .arg(row.top1Agreement, 0, 'f', 3)
                               .arg(row.meanKl, 0, 'g', 3);
    return row;
}

// The images of --image, --images or --image-folder (the files of the folder that Qt reads, by
// name). Empty when none of them is given.
QStringList imageFiles(const QCommandLineParser& parser)
{
    QStringList given;
    for (const char* name : {"image", "images", "image-folder"})
        if (parser.isSet(option(name)))
            given.append(QStringLiteral("--%1").arg(QLatin1String(name)));
    if (given.size() > 1)
        throw InputError(QStringLiteral("%1: choose one way to give the images")
                             .arg(given.join(QStringLiteral(", "))));
    if (parser.isSet(option("image")))
        return {parser.value(option("image"))};
    if (parser.isSet(option("images")))
        return listOption(parser, "images", QString());
    if (!parser.isSet(option("image-folder")))
        return {};
    return imageFilesIn(parser.value(option("image-folder")));
}

// One line of --predictions per (image, point).
void appendPrediction(QByteArray& csv, const QString& image, const ModelEvalRow& point,
                      const DownstreamComparison& comparison, const QStringList& classNames)
{
    const int exact = comparison.exactTop1.front();
    const int approx = comparison.approxTop1.front();
    csv += csvField(image).toUtf8() + ',' + csvField(point.method).toUtf8() + ',' +
           QByteArray::number(point.features) + ',' + csvField(point.layers).toUtf8() + ',' +
           QByteArray::number(qulonglong(point.seed)) + ',' + QByteArray::number(exact) + ',' +
           csvField(classNames.value(exact)).toUtf8() + ',' + QByteArray::number(approx) + ',' +
           csvField(approx >= 0 ? classNames.value(approx) : QString()).toUtf8() + ',';
    appendCsvNumber(csv, comparison.kl.front(), 9);
    csv += '\n';
}

// The rows of a ViT on the images: every image's class, exact against each point. Writes the
// --predictions CSV (when given) atomically. The images of a folder (folder not empty) that
// cannot be read are skipped with a warning and taken out of *images; none read is an InputError.
std::vector<ModelEvalRow> imageRows(const VitModel& model, QStringList* images,
                                    const QString& folder, const std::vector<EvalPoint>& points,
                                    const QString& predictionsPath)
{
    QTextStream err(stderr);
    const int layerCount = model.config().layers;
    std::vector<std::vector<DownstreamComparison>> comparisons(points.size());
    QByteArray predictions("image,method,m,layers,seed,exact_class,exact_label,approx_class,"
                           "approx_label,kl\n");
    ForwardOptions exactOptions;
    exactOptions.captureQkv = false;
    const QStringList files = *images;
    images->clear();  // the images read
    FolderImageReader reader(folder, [&err](const QString& warning) {
        err << "warning: " << warning << '\n';
        err.flush();
    });
    const int every = std::max<int>(1, int(files.size()) / kProgressLines);
    for (qsizetype i = 0; i < files.size(); ++i) {
        const std::optional<ImagePixels> image = reader.read(files[i]);
        if (!image)
            continue;
        images->append(files[i]);
        const PixelTensor pixels = model.preprocess(*image, files[i]);
        const ForwardResult exact = model.forward(pixels, exactOptions);
        for (std::size_t p = 0; p < points.size(); ++p) {
            comparisons[p].push_back(
                compareDownstream(model, pixels, exact, points[p].method, points[p].layers));
            if (!predictionsPath.isEmpty())
                appendPrediction(predictions, files[i],
                                 modelEvalRow(points[p].method, comparisons[p].back(), layerCount),
                                 comparisons[p].back(), model.classNames());
        }
        if ((i + 1) % every == 0 || i + 1 == files.size()) {
            err << QStringLiteral("[%1/%2 images] %3: %4\n")
                       .arg(i + 1)
                       .arg(files.size())
                       .arg(QFileInfo(files[i]).fileName(),
                            model.classNames().value(comparisons.front().back().exactTop1.front()));
            err.flush();
        }
    }
    reader.requireSomeRead();
    std::vector<ModelEvalRow> rows;
    for (std::size_t p = 0; p < points.size(); ++p) {
        rows.push_back(modelEvalRow(points[p].method, comparisons[p], layerCount,
                                    model.config().tokenCount()));
        printRow(err, rows.back(), rows.size(), points.size());
    }
    if (!predictionsPath.isEmpty()) {
        AtomicFileSet files(QFileInfo(predictionsPath).absolutePath());
        writeAll(files.open(QFileInfo(predictionsPath).fileName()), predictions);
        files.commit();
    }
    return rows;
}

// The spec of everything but the lists: the model and its text or images (*images), W's
// projection, row norms and seed (--features is read as a list, so it is kept out of this
// parse). Refuses a language model given images, and a ViT given none.
ExperimentSpec baseSpec(const QCommandLineParser& parser, QStringList* images)
{
    if (parser.isSet(option("method")))
        throw InputError(QStringLiteral("--method: model-eval takes --methods LIST"));
    for (const char* name : {"random", "q"})
        if (parser.isSet(option(name)))
            throw InputError(QStringLiteral("--%1: model-eval runs a model on text (--model, "
                                            "--text or --text-file) or images (--model, --image, "
                                            "--images or --image-folder)")
                                 .arg(QLatin1String(name)));
    ExperimentSpec base = specFromOptionsExcept(
        parser, kListOptions, QStringLiteral("attention-lab model-eval"), DefaultInput::Model);
    *images = imageFiles(parser);
    if (!parser.isSet(option("model"))) {
        // Without --model, the built-in KJV Llama reads the text, or the built-in ViT the images.
        base.input.kind = InputKind::Model;
        base.input.modelPath =
            QString::fromLatin1(images->isEmpty() ? kBuiltinModel : kBuiltinVitModel);
        base.causal = images->isEmpty();
    }
    refusePositionalArguments(parser);
    const ModelArchitecture architecture = modelArchitectureOf(base.input.modelPath);
    const bool vit = architecture == ModelArchitecture::Vit;
    if (vit && images->isEmpty())
        throw InputError(QStringLiteral("--model %1: the model is a ViT: give its images (--image "
                                        "FILE, --images F1,F2,... or --image-folder DIR)")
                             .arg(base.input.modelPath));
    if (vit && parser.isSet(option("compare-model")))
        throw InputError(QStringLiteral("--compare-model: the model %1 is a ViT; a second "
                                        "checkpoint is compared for language models")
                             .arg(base.input.modelPath));
    if (!vit && (!images->isEmpty() || parser.isSet(option("predictions"))))
        throw InputError(QStringLiteral("--model %1: the model is a %2, a language model: it "
                                        "reads text (--text or --text-file), not images")
                             .arg(base.input.modelPath, architectureDisplayName(architecture)));
    return base;
}

// The spec of each method of --methods, those without a causal form left out (with a warning)
// when the model reads causally.
std::vector<ExperimentSpec> methodSpecs(const QCommandLineParser& parser,
                                        const ExperimentSpec& base)
{
    std::vector<ExperimentSpec> methods;
    std::vector<Method> kinds;  // exact attention as the registry's (streaming) exact method
    for (const QString& name : listOption(parser, "methods", kDefaultMethods)) {
        ExperimentSpec m = base;
        if (!m.setMethod(name))
            throw InputError(QStringLiteral("--methods: unknown method \"%1\" (choose %2)")
                                 .arg(name, methodChoices()));
        methods.push_back(m);
        kinds.push_back(m.exactMethod ? Method::ExactStreaming : m.approximation.kind);
    }
    QStringList skipped;
    skipMethodsWithoutCausalForm(kinds, base.causal, &skipped);
    std::erase_if(methods, [&](const ExperimentSpec& m) {
        return !m.exactMethod && skipped.contains(methodInfo(m.approximation.kind).name);
    });
    warnMethodsLeftOut(skipped, base);
    return methods;
}

// The rows of a language model reading base's text: every point's comparison with the exact
// run; *subject says what it read.
std::vector<ModelEvalRow> textRows(const QCommandLineParser& parser, const ExperimentSpec& base,
                                   const std::vector<ExperimentSpec>& methods,
                                   const std::vector<int>& featureCounts, int seeds,
                                   const MemoryBudget& budget,
                                   const std::function<void(Eigen::Index)>& warnSizesPastLength,
                                   QString* subject)
{
    std::vector<ModelEvalRow> rows;
    const std::shared_ptr<const LanguageModel> model = loadModel(base.input.modelPath);
    const std::vector<EvalPoint> points =
        evalPoints(methods, featureCounts, seeds, layerSetsOption(parser, model->layers()),
                   base.approximation.seed);
    const ModelTokens tokens = modelTokens(*model, base.input.text, base.input.keepLastTokens);
    // The exact run's Q, K, V and logits: modelInput checks them against the budget.
    buildInput(base.input, nullptr, budget);
    const std::shared_ptr<const ForwardResult> exact = cachedForward(model, tokens.ids);

    QTextStream err(stderr);
    for (const QString& note : tokens.notes)
        err << "warning: " << note << '\n';
    warnSizesPastLength(Eigen::Index(tokens.ids.size()));
    checkPointCosts(points, model->heads(), model->headDim(), Eigen::Index(tokens.ids.size()), true,
                    1, budget);
    if (parser.isSet(option("compare-model")))
        rows.push_back(
            checkpointRow(*model, parser.value(option("compare-model")), base, tokens.ids, *exact));
    for (std::size_t p = 0; p < points.size(); ++p) {
        rows.push_back(modelEvalRow(
            points[p].method,
            compareDownstream(*model, tokens.ids, *exact, points[p].method, points[p].layers),
            model->layers()));
        printRow(err, rows.back(), p + 1, points.size());
    }
    *subject =
        countOf(qint64(tokens.ids.size()), QStringLiteral("token"), QStringLiteral("tokens"));
    return rows;
}

}  // namespace

void addModelEvalOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "What an approximation costs a trained model: the model reads its input twice, once with "
        "its own softmax attention and once with each method in place of softmax attention in "
        "the replaced layers (every head), and its predictions are compared: a language "
        "model's (GPT-2, Llama, Mistral, Qwen2, GPT-NeoX) next-token distributions position by "
        "position (causal, as trained), or a ViT's class "
        "distribution for each image (--image, --images or --image-folder; without a mask). "
        "Writes one CSV row per (method, m, replaced layers, seed) into --out: method,m,layers,"
        "seed,tokens,top1_agreement,mean_kl,max_kl,rel_frobenius_attention_mean,window (m: "
        "the size --features sweeps, local's and hedgehog-window's window w, or hedgehog's "
        "fitted features; top-1 agreement: the fraction of positions, or images, whose likeliest "
        "next token, or class, is unchanged; KL(p || q) of the distributions, exact p and "
        "approximate q; the mean relative Frobenius error of the replaced heads' attention, on "
        "the queries and keys they receive in the approximate run; tokens: the text's, or a "
        "ViT's patches plus [CLS]; window: the w of local, hedgehog-window and Scatterbrain, "
        "whose window holding every key makes them exact, said on stderr). A run expected to be "
        "long or large is announced before it starts. "
        "Beside it, <out>-heads.csv gives every replaced head's properties per row: layer,head,"
        "method,m,layers,seed,entropy_exact,entropy_approx,monotonicity (the mean row entropy of "
        "P and of P^ in nats; the mean over rows of Spearman's correlation between q.k and P^: "
        "1 when P^ ranks the keys as softmax does). "
        "With --compare-model, a first row \"checkpoint\" compares a second checkpoint of the "
        "same language model (a quantized .gguf file, say) with --model's in the same way: its "
        "predictions against the model's, and its attention in every layer. "
        "Without --model, the built-in KJV Llama (the built-in ViT when images are given); without "
        "--text, a short example sentence.\n\n"
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
    // local's and hedgehog-window's w are swept with --features: --window is Scatterbrain's.
    const QCommandLineOption window(option("window"),
                                    QStringLiteral("scatterbrain: w, the keys each query sees "
                                                   "exactly: the w latest keys j <= i (default "
                                                   "32). local's and hedgehog-window's w are "
                                                   "the values of --features."),
                                    QStringLiteral("N"));
    addSpecOptions(parser, {features, method, window});
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
        {option("seeds"),
         QStringLiteral("Seeds of W per point: --seed, --seed + 1, ... "
                        "(default 1)."),
         QStringLiteral("K")},
        {option("images"),
         QStringLiteral("A ViT's images, separated by commas: each row "
                        "gathers them all."),
         QStringLiteral("F1,F2,...")},
        {option("image-folder"),
         QStringLiteral("A ViT's images: every file of the folder that "
                        "Qt decodes (PNG, JPEG, ...), by name; one that "
                        "cannot be read is skipped with a warning."),
         QStringLiteral("DIR")},
        {option("predictions"),
         QStringLiteral("A ViT: also write each image's class, exact and "
                        "approximate, per row: image,method,m,layers,seed,"
                        "exact_class,exact_label,approx_class,"
                        "approx_label,kl."),
         QStringLiteral("FILE.csv")},
        comparisonModelOption(),
    });
    parser.addOptions(tableOutputOptions(
        QStringLiteral("Also draw agreement and KL against m, as PNG, SVG or PDF by the suffix.")));
}

int runModelEvalCommand(const QCommandLineParser& parser)
{
    QStringList images;
    const ExperimentSpec base = baseSpec(parser, &images);
    const bool vit = modelArchitectureOf(base.input.modelPath) == ModelArchitecture::Vit;

    const std::vector<ExperimentSpec> methods = methodSpecs(parser, base);
    // A method whose size is its window takes it from the list, as m: --window would be ignored.
    if (parser.isSet(option("window")))
        for (const ExperimentSpec& method : methods)
            if (!method.exactMethod &&
                methodInfo(method.approximation.kind).size == &windowParameter())
                throw InputError(
                    QStringLiteral("--window: model-eval sweeps %1's w with --features "
                                   "(one row per value, w in the m column)")
                        .arg(methodInfo(method.approximation.kind).name));
    std::vector<int> featureCounts;
    for (const QString& item : listOption(parser, "features", kDefaultFeatures))
        featureCounts.push_back(positiveInteger(item, "features", SpecLimits::features));
    const int seeds = parser.isSet(option("seeds"))
                          ? positiveInteger(parser.value(option("seeds")), "seeds", kMaxSeeds)
                          : 1;
    const TableOutputs outputs = tableOutputs(parser, "model-eval.csv");
    const QString predictions =
        parser.isSet(option("predictions"))
            ? checkedOutPath("predictions", parser.value(option("predictions")), "classes.csv")
            : QString();
    const QString heads = headsPath(outputs.csv);
    refuseSameFile({{"out", outputs.csv},
                    {"out's heads file", heads},
                    {"predictions", predictions},
                    {"plot", outputs.plot.isEmpty() ? QString()
                                                    : QFileInfo(outputs.plot).absoluteFilePath()}});
    const MemoryBudget budget = budgetFromOptions(parser);

    // m past what a method takes on the input's L tokens (Nystrom's landmarks), and a window
    // that holds every key, are said once.
    const auto warnSizesPastLength = [&](Eigen::Index tokens) {
        for (const ExperimentSpec& method : methods) {
            QStringList notes;
            if (!method.exactMethod) {
                notes << sizePastLengthNote(method.approximation.kind, featureCounts, tokens)
                      << windowCoversNote(method, featureCounts, tokens, !vit);
            }
            for (const QString& note : notes)
                if (!note.isEmpty())
                    QTextStream(stderr) << "warning: " << note << '\n';
        }
    };
    std::vector<ModelEvalRow> rows;
    QString subject;  // what the model read, for the summary and the chart
    if (vit) {
        const std::shared_ptr<const VitModel> model = loadVitModel(base.input.modelPath);
        const std::vector<EvalPoint> points =
            evalPoints(methods, featureCounts, seeds,
                       layerSetsOption(parser, model->config().layers), base.approximation.seed);
        warnSizesPastLength(model->config().tokenCount());
        checkPointCosts(points, model->config().heads, model->config().headDim(),
                        model->config().tokenCount(), false, images.size(), budget);
        rows =
            imageRows(*model, &images, parser.value(option("image-folder")), points, predictions);
        subject =
            QStringLiteral("%1 of %2 tokens")
                .arg(countOf(images.size(), QStringLiteral("image"), QStringLiteral("images")))
                .arg(model->config().tokenCount());
    } else {
        rows = textRows(parser, base, methods, featureCounts, seeds, budget, warnSizesPastLength,
                        &subject);
    }

    writeTableOutputs(
        outputs, modelEvalCsv(rows).toUtf8(),
        [&](QTextStream& out) {
            out << QStringLiteral("%1, layer(s) replaced in every head, %2: %3\n")
                       .arg(modelDisplayName(base.input.modelPath), subject,
                            countOf(qint64(rows.size()), QStringLiteral("row"),
                                    QStringLiteral("rows")));
            if (!predictions.isEmpty())
                out << "wrote " << predictions << '\n';
        },
        {},
        [&](const QString& plot) {
            ui::saveModelEvalChart(
                rows, ui::ModelEvalAxis::Features, plot, plotFormat(plot), kPlotSize,
                QStringLiteral("%1, %2").arg(modelDisplayName(base.input.modelPath), subject));
        });
    // Each replaced head's entropies and monotonicity, beside the CSV.
    AtomicFileSet files(QFileInfo(heads).absolutePath());
    writeAll(files.open(QFileInfo(heads).fileName()), modelEvalHeadsCsv(rows).toUtf8());
    files.commit();
    QTextStream(stdout) << "wrote " << heads << '\n';
    return ExitSuccess;
}

}  // namespace attnlab

#include "ui/model/downstream_job.h"

#include "errors.h"
#include "attention/approximation.h"
#include "ui/images/image_loader.h"
#include "inputs/model_input.h"

#include <QCryptographicHash>
#include <QFileInfo>
#include <QJsonObject>

#include <numeric>

namespace attnlab::ui {

namespace {

// The image files of image's folder, the first kMaxFolderImages of them by name (a note saying so
// when there are more).
QStringList folderImages(const QString& image, QStringList* notes)
{
    const QStringList files = imageFilesIn(QFileInfo(image).absolutePath());
    if (files.size() <= kMaxFolderImages)
        return files;
    notes->append(QStringLiteral("The first %1 of the folder's %2 images.")
                      .arg(kMaxFolderImages)
                      .arg(files.size()));
    return files.mid(0, kMaxFolderImages);
}

}  // namespace

DownstreamOutcome runDownstream(DownstreamRequest request, JobContext& context)
{
    DownstreamOutcome outcome;
    const ExperimentSpec& first = request.cases.front().first;
    outcome.modelFolder = modelFolder(first.input.modelPath);
    // The inputs the cases are compared on (a text, or one image or more); open(i) reads
    // input i through buildInput (the budget checked, the model's own forward pass run)
    // and gives its comparison of a case. One input's forward pass is kept at a time.
    using Compare = std::function<DownstreamComparison(
        const ExperimentSpec&, const std::vector<int>&, const std::function<bool()>&)>;
    std::function<Compare(int)> open;
    int inputs = 1;
    int tokens = 0;  // a prediction's input: the text's tokens, or an image's patches and [CLS]
    // A folder's image that cannot be read is skipped (no comparison), said in the notes.
    FolderImageReader images(
        request.imageFolder ? QFileInfo(first.input.imagePath).absolutePath() : QString(),
        [&outcome](const QString& warning) { outcome.notes.append(warning + QLatin1Char('.')); });
    if (modelArchitectureOf(first.input.modelPath) == ModelArchitecture::Vit) {
        const std::shared_ptr<const VitModel> model = loadVitModel(first.input.modelPath);
        outcome.layerCount = model->config().layers;
        outcome.classes = true;
        tokens = model->config().tokenCount();
        outcome.outcomeName = [names = model->classNames()](int id) { return names.value(id); };
        const QStringList files = request.imageFolder
                                      ? folderImages(first.input.imagePath, &outcome.notes)
                                      : QStringList{first.input.imagePath};
        inputs = int(files.size());
        open = [&request, &outcome, &images, model, files, input = first.input](int i) -> Compare {
            InputSpec image = input;
            image.imagePath = files[i];
            const std::optional<ImagePixels> pixels = images.read(image.imagePath);
            if (!pixels)
                return {};
            outcome.labels.append(QFileInfo(image.imagePath).fileName());
            ModelRun run;
            buildInput(image, &*pixels, request.budget, &run);
            return [model, run](const ExperimentSpec& spec, const std::vector<int>& layers,
                                const std::function<bool()>& cancelled) {
                return compareDownstream(*model, run.pixels, *run.forward, spec, layers, cancelled);
            };
        };
    } else {
        const std::shared_ptr<const LanguageModel> model = loadModel(first.input.modelPath);
        outcome.layerCount = model->layers();
        const ModelTokens text = modelTokens(*model, first.input.text, first.input.keepLastTokens);
        tokens = int(text.ids.size());
        outcome.labels = text.labels;
        outcome.notes = text.notes;
        outcome.outcomeName = [model](int id) { return model->tokenizer().label(id); };
        // With a second checkpoint, buildInput loads it (checked against the first, both within
        // the budget) and runs its forward pass: the two are compared as model-eval's
        // "checkpoint" row compares them, every layer.
        open = [&request, model, ids = text.ids, input = first.input](int) -> Compare {
            ModelRun run;
            buildInput(input, nullptr, request.budget, &run);
            return [model, ids, exact = run.forward, second = run.comparisonForward](
                       const ExperimentSpec& spec, const std::vector<int>& layers,
                       const std::function<bool()>& cancelled) {
                if (second)
                    return compareCheckpoints(*exact, *second, model->heads());
                return compareDownstream(*model, ids, *exact, spec, layers, cancelled);
            };
        };
    }
    if (request.replaceAll && !request.sweep) {  // the model's size is known only now
        for (auto& [spec, layers] : request.cases) {
            layers.resize(std::size_t(outcome.layerCount));
            std::iota(layers.begin(), layers.end(), 0);
        }
    }
    // m past what the method takes (Nystrom's landmarks past L) is said once for the rows.
    std::vector<int> sizes;
    const bool method = !first.exactMethod && first.input.comparisonModelPath.isEmpty();
    for (const auto& [spec, layers] : request.cases)
        if (method)
            sizes.push_back(spec.approximation.features);
    const QString sizeNote =
        method ? sizePastLengthNote(first.approximation.kind, sizes, tokens) : QString();
    if (!sizeNote.isEmpty())
        outcome.notes.append(sizeNote);
    const int cases = int(request.cases.size());
    const std::function<bool()> cancelled = context.cancelledCheck();
    context.setProgress(0, inputs * cases);
    std::vector<std::vector<DownstreamComparison>> comparisons(request.cases.size());
    for (int i = 0; i < inputs; ++i) {
        if (cancelled())
            throw Cancelled();
        const Compare compare = open(i);
        if (!compare) {  // a folder's image that cannot be read
            context.setProgress((i + 1) * cases, inputs * cases);
            continue;
        }
        for (int c = 0; c < cases; ++c) {
            const auto& [spec, layers] = request.cases[std::size_t(c)];
            comparisons[std::size_t(c)].push_back(compare(spec, layers, cancelled));
            context.setProgress(i * cases + c + 1, inputs * cases);
        }
    }
    images.requireSomeRead();
    for (int c = 0; c < cases; ++c) {
        auto comparison =
            std::make_shared<DownstreamComparison>(combinedComparison(comparisons[std::size_t(c)]));
        outcome.rows.push_back(
            modelEvalRow(request.cases[std::size_t(c)].first, *comparison, outcome.layerCount));
        outcome.rows.back().tokens = tokens;
        outcome.comparison = std::move(comparison);
    }
    outcome.request = std::move(request);
    return outcome;
}

QJsonArray modelEvalRowsJson(const std::vector<ModelEvalRow>& rows)
{
    QJsonArray json;
    for (const ModelEvalRow& row : rows)
        json.append(QJsonObject{{"method", row.method},
                                {"m", row.features},
                                {"layers", row.layers},
                                {"seed", QString::number(row.seed)},
                                {"tokens", row.tokens},
                                {"top1_agreement", row.top1Agreement},
                                {"mean_kl", row.meanKl},
                                {"max_kl", row.maxKl},
                                {"rel_frobenius_attention_mean", row.relFrobeniusAttentionMean},
                                {"window", row.window}});
    return json;
}

ModelEvalRowsInput ModelEvalRowsInput::of(const ExperimentSpec& spec, bool vit, bool imageFolder,
                                          int count)
{
    ExperimentSpec read;
    read.input = spec.input;
    return {
        sweepInputKey(spec, vit, imageFolder), spec.input.modelPath, count, vit, read, imageFolder};
}

QJsonObject ModelEvalRowsInput::toJson() const
{
    QJsonObject json{{"key", key}, {"model", model}, {"count", count}, {"images", images}};
    if (experiment) {
        json.insert(QStringLiteral("experiment"), experiment->toJson());
        json.insert(QStringLiteral("image_folder"), imageFolder);
    }
    return json;
}

bool ModelEvalRowsInput::fromJson(const QJsonValue& json, ModelEvalRowsInput* input)
{
    const QJsonObject o = json.toObject();
    ModelEvalRowsInput read;
    read.key = o["key"].toString();
    read.model = o["model"].toString();
    read.count = o["count"].toInt(-1);
    read.images = o["images"].toBool();
    if (!json.isObject() || !o["key"].isString() || !o["model"].isString() || read.count < 0 ||
        read.count > SpecLimits::length)
        return false;
    if (o.contains(QLatin1String("experiment"))) {
        if (!o["experiment"].isObject())
            return false;
        try {
            read = of(ExperimentSpec::fromJson(o["experiment"].toObject()), read.images,
                      o["image_folder"].toBool(), read.count);
        } catch (const InputError&) {
            return false;
        }
    }
    *input = read;
    return true;
}

QString sweepInputKey(const ExperimentSpec& spec, bool vit, bool imageFolder)
{
    // A language model reads the text (the Image tab's image stays in the spec), a ViT the image.
    const QStringList read =
        vit ? QStringList{spec.input.imagePath, QString::number(imageFolder)}
            : QStringList{spec.input.text, QString::number(spec.input.keepLastTokens)};
    const QString key = (QStringList{spec.input.modelPath} + read).join(QLatin1Char('\n'));
    return QString::fromLatin1(
        QCryptographicHash::hash(key.toUtf8(), QCryptographicHash::Sha1).toHex());
}

bool readModelEvalRows(const QJsonArray& json, std::vector<ModelEvalRow>* rows)
{
    std::vector<ModelEvalRow> read;
    for (const QJsonValue& value : json) {
        const QJsonObject o = value.toObject();
        ModelEvalRow row;
        bool seedOk = false;
        row.method = o["method"].toString();
        row.features = o["m"].toInt(-1);
        row.layers = o["layers"].toString();
        row.seed = o["seed"].toString().toULongLong(&seedOk);
        row.tokens = o["tokens"].toInt(-1);
        row.top1Agreement = o["top1_agreement"].toDouble(-1);
        row.meanKl = o["mean_kl"].toDouble(-1);
        row.maxKl = o["max_kl"].toDouble(-1);
        row.relFrobeniusAttentionMean = o["rel_frobenius_attention_mean"].toDouble(-1);
        row.window = o["window"].toInt(0);  // 0 in sessions from before the column
        if (row.method.isEmpty() || row.features < 0 || row.window < 0 || row.layers.isEmpty() ||
            !seedOk || row.tokens < 1 || row.top1Agreement < 0 || row.top1Agreement > 1 ||
            row.meanKl < 0 || row.maxKl < 0 || row.relFrobeniusAttentionMean < 0)
            return false;
        read.push_back(row);
    }
    *rows = std::move(read);
    return true;
}

}  // namespace attnlab::ui

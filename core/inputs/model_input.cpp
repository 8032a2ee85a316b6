#include "inputs/model_input.h"

#include "errors.h"
#include "remedy.h"
#include "model/checkpoint_weights.h"
#include "model/gguf_file.h"
#include "model/gguf_model.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>
#include <QtGlobal>

#include <algorithm>
#include <deque>
#include <functional>

namespace attnlab {

namespace {

// How many models and forward passes stay loaded.
constexpr std::size_t kKeptModels = 2;
constexpr std::size_t kKeptForwards = 4;

bool holdsModel(const QString& folder)
{
    return !folder.isEmpty() && QFileInfo::exists(folder + QStringLiteral("/config.json"));
}

// Throws InputError unless path is a folder or a GGUF file (isGgufFile), saying what is there
// instead: nothing, or a file that is neither (naming the model folder it is in, as for its
// config.json). `role` (what the path is for) follows the message in parentheses.
void requireModelPath(const QString& path, const QString& role = QString())
{
    const QFileInfo info(path);
    if (info.isDir() || isGgufFile(path))
        return;
    const QString after = role.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(role);
    if (!info.exists())
        throw InputError(
            QStringLiteral("%1: no such model folder or .gguf file%2")
                .arg(path, role.isEmpty() ? QStringLiteral(" (a model is a folder holding "
                                                           "config.json, the .safetensors weights "
                                                           "and the tokenizer files, or one .gguf "
                                                           "file)")
                                          : after));
    const QString holder = info.path();
    throw InputError(
        QStringLiteral("%1: a file, not a model folder (give the folder that holds "
                       "config.json%2), nor a GGUF file (it does not start with "
                       "\"GGUF\")%3")
            .arg(path, holdsModel(holder) ? QStringLiteral(": %1").arg(holder) : QString(), after));
}

// The newest modification time of the folder's files (or of a .gguf file): a checkpoint written
// again is loaded again.
QDateTime newestChange(const QString& folder)
{
    if (isGgufFile(folder))
        return QFileInfo(folder).lastModified();
    QDateTime newest;
    const QFileInfoList files = QDir(folder).entryInfoList(QDir::Files);
    for (const QFileInfo& file : files)
        newest = std::max(newest, file.lastModified());
    return newest;
}

// A loaded model: a language model or a ViT, as config.json's model_type says.
struct KeptModel {
    QString folder;  // canonical
    QDateTime changed;
    std::shared_ptr<const LanguageModel> language;
    std::shared_ptr<const VitModel> vit;
};

// A forward pass on token ids (a language model) or on an image's preprocessed pixels (ViT).
struct KeptForward {
    std::weak_ptr<const void> model;  // expires with the model: never matches a new one
    std::vector<int> ids;
    std::vector<float> pixels;
    std::shared_ptr<const ForwardResult> forward;
    int lastLayer = -1;  // the pass stopped after this layer (no logits); -1: the whole pass
};

QMutex& cacheMutex()
{
    static QMutex mutex;
    return mutex;
}

std::deque<KeptModel>& keptModels()
{
    static std::deque<KeptModel> kept;
    return kept;
}

std::deque<KeptForward>& keptForwards()
{
    static std::deque<KeptForward> kept;
    return kept;
}

}  // namespace

QString builtinModelFolder(const QString& builtinName)
{
    const QString name = builtinFolderName(builtinName);
    const QString fromEnvironment = qEnvironmentVariable("ATTNLAB_MODELS");
    if (!fromEnvironment.isEmpty())
        return holdsModel(fromEnvironment + QLatin1Char('/') + name)
                   ? QDir::cleanPath(fromEnvironment + QLatin1Char('/') + name)
                   : QString();
    QStringList candidates;
    if (QCoreApplication::instance())
        candidates.append(QCoreApplication::applicationDirPath() +
                          QStringLiteral("/../share/attention-lab/models/") + name);
    candidates.append(QStringLiteral(ATTNLAB_SOURCE_MODELS "/") + name);
    for (const QString& candidate : candidates)
        if (holdsModel(candidate))
            return QDir::cleanPath(candidate);
    return QString();
}

QString modelFolder(const QString& modelPath)
{
    if (!isBuiltinName(modelPath))
        return modelPath;
    const QString folder = builtinModelFolder(modelPath);
    if (folder.isEmpty())
        throw InputError(QStringLiteral("the built-in model %1 (%2) is not installed: its folder "
                                        "holds no config.json (looked beside the program and in "
                                        "%3; set ATTNLAB_MODELS to the folder that holds %2)")
                             .arg(modelPath, builtinFolderName(modelPath),
                                  QStringLiteral(ATTNLAB_SOURCE_MODELS)));
    return folder;
}

QString modelDisplayName(const QString& modelPath)
{
    if (isBuiltinName(modelPath))
        return builtinDisplayName(modelPath);
    return QFileInfo(QDir::cleanPath(modelPath)).fileName();
}

ModelArchitecture modelArchitectureOf(const QString& modelPath)
{
    const QString folder = modelFolder(modelPath);
    requireModelPath(folder);
    if (isGgufFile(folder))
        return ggufArchitecture(GgufFile(folder));
    return modelArchitecture(folder);
}

namespace {

// The model modelPath names, from the cache or loaded (a language model or a ViT, as config.json
// says).
KeptModel keptModel(const QString& modelPath, const MemoryBudget& budget = MemoryBudget())
{
    const QString folder = modelFolder(modelPath);
    requireModelPath(folder);
    const QFileInfo info(folder);
    const bool gguf = isGgufFile(folder);
    const QString canonical = info.canonicalFilePath();
    const QDateTime changed = newestChange(canonical);
    {
        // A model asked for again moves to the front, so that the two models of a comparison stay
        // loaded together while a third comes and goes.
        QMutexLocker lock(&cacheMutex());
        std::deque<KeptModel>& kept = keptModels();
        const auto found = std::find_if(kept.begin(), kept.end(), [&](const KeptModel& m) {
            return m.folder == canonical && m.changed == changed;
        });
        if (found != kept.end()) {
            std::rotate(kept.begin(), found, found + 1);
            return kept.front();
        }
    }
    // Loading takes a while for a large model: not under the lock (two threads may load the same
    // model at once; both results are correct and the second is dropped below).
    KeptModel loaded{canonical, changed, nullptr, nullptr};
    if (!gguf && modelArchitecture(canonical) == ModelArchitecture::Vit)
        loaded.vit = VitModel::load(canonical);
    else
        loaded.language = loadLanguageModel(canonical, budget);
    QMutexLocker lock(&cacheMutex());
    std::deque<KeptModel>& kept = keptModels();
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](const KeptModel& m) { return m.folder == canonical; }),
               kept.end());
    kept.push_front(loaded);
    if (kept.size() > kKeptModels)
        kept.pop_back();
    return loaded;
}

// The forward pass of model on (ids, pixels), from the cache or computed by run().
// The forward pass of model on (ids, pixels) that holds layer `layer` (-1: the whole pass, with
// the logits), from the cache or computed by run(lastLayer). run(-1) is the whole pass; run(l)
// stops after layer l. A pass that stops is run for a layer only the first time the input is
// read, for a first picture soon: any later request the kept one does not hold runs the whole
// pass (the user goes on to other layers, the logits), which then replaces it, keeping the
// stopped pass's layers as they were shown (two runs on other numbers of threads can differ in
// the last bits of a float).
std::shared_ptr<const ForwardResult> keptForward(const std::shared_ptr<const void>& model,
                                                 const std::vector<int>& ids,
                                                 const std::vector<float>& pixels,
                                                 const std::function<ForwardResult(int)>& run,
                                                 int layer = -1)
{
    const auto sameInput = [&](const KeptForward& kept) {
        return kept.model.lock() == model && kept.ids == ids && kept.pixels == pixels;
    };
    std::shared_ptr<const ForwardResult> stopped;  // a pass of this input that stopped too soon
    {
        QMutexLocker lock(&cacheMutex());
        for (const KeptForward& kept : keptForwards())
            if (sameInput(kept)) {
                if (kept.lastLayer < 0 || (layer >= 0 && kept.lastLayer >= layer))
                    return kept.forward;
                stopped = kept.forward;
            }
    }
    const int lastLayer = stopped ? -1 : layer;
    ForwardResult result = run(lastLayer);
    if (stopped)
        std::copy(stopped->layers.begin(), stopped->layers.end(), result.layers.begin());
    auto forward = std::make_shared<const ForwardResult>(std::move(result));
    QMutexLocker lock(&cacheMutex());
    std::deque<KeptForward>& kept = keptForwards();
    if (lastLayer < 0)  // the whole pass holds what a stopped one did
        kept.erase(std::remove_if(kept.begin(), kept.end(), sameInput), kept.end());
    kept.push_front({model, ids, pixels, forward, lastLayer});
    if (kept.size() > kKeptForwards)
        kept.pop_back();
    return forward;
}

}  // namespace

std::shared_ptr<const LanguageModel> loadModel(const QString& modelPath, const MemoryBudget& budget)
{
    const KeptModel kept = keptModel(modelPath, budget);
    if (!kept.language)
        throw InputError(QStringLiteral("%1: the model is a ViT (model_type \"vit\"): it reads "
                                        "an image, not text")
                             .arg(kept.folder));
    return kept.language;
}

std::shared_ptr<const VitModel> loadVitModel(const QString& modelPath)
{
    const KeptModel kept = keptModel(modelPath);
    if (!kept.vit)
        throw InputError(QStringLiteral("%1: the model is a %2 (model_type \"%3\"): it reads "
                                        "text, not an image")
                             .arg(kept.folder,
                                  architectureDisplayName(modelArchitectureOf(kept.folder)),
                                  kept.language->info().architecture));
    return kept.vit;
}

ModelTokens modelTokens(const LanguageModel& model, const QString& text, bool keepLast)
{
    const TextTokenizer& tokenizer = model.tokenizer();
    ModelTokens tokens;
    tokens.ids = tokenizer.encode(text);
    // The tokenizer's own special ids (a Llama's BOS) stay where they are: a text cut to the
    // positions loses its first tokens after them, as Hugging Face's left truncation does.
    const int before = tokenizer.specialIdsBefore();
    // A text of white space has tokens ("\n" is one of GPT-2's); an empty one has only the
    // special ids, if any.
    if (tokens.ids.size() <= std::size_t(before + tokenizer.specialIdsAfter()))
        throw InputError(QStringLiteral("the text has no tokens: type at least one character"));
    const int positions = model.positions();
    const std::size_t count = tokens.ids.size();
    if (int(count) > positions) {
        if (!keepLast)
            throw RemedyInputError(
                QStringLiteral("the text has %1 tokens but the model reads at most %2 (%3): "
                               "shorten it, or keep its last %2 tokens")
                    .arg(count)
                    .arg(positions)
                    .arg(model.info().rope ? QStringLiteral("max_position_embeddings")
                                           : QStringLiteral("n_positions")),
                {Remedy::KeepLastTokens});
        if (before + tokenizer.specialIdsAfter() >= positions)
            throw InputError(QStringLiteral("the model reads at most %1 tokens, no more than its "
                                            "tokenizer adds to every text")
                                 .arg(positions));
        const auto first = tokens.ids.begin() + before;
        tokens.ids.erase(first, first + qsizetype(count - std::size_t(positions)));
    }
    for (const int id : tokens.ids)
        tokens.labels.append(tokenizer.label(id));
    if (tokens.ids.size() < count)
        tokens.notes.append(
            QStringLiteral("The text has %1 tokens and the model reads at most "
                           "%2: %3 dropped%4.")
                .arg(count)
                .arg(positions)
                .arg(
                    count - tokens.ids.size() == 1
                        ? QStringLiteral("its first token was")
                        : QStringLiteral("its first %1 tokens were").arg(count - tokens.ids.size()))
                .arg(before > 0 ? QStringLiteral(" (after %1, which stays first)")
                                      .arg(tokens.labels.mid(0, before).join(' '))
                                : QString()));
    return tokens;
}

std::shared_ptr<const ForwardResult> cachedForward(
    const std::shared_ptr<const LanguageModel>& model, const std::vector<int>& ids)
{
    return cachedLayers(model, ids, -1);
}

std::shared_ptr<const ForwardResult> cachedLayers(const std::shared_ptr<const LanguageModel>& model,
                                                  const std::vector<int>& ids, int layer)
{
    return keptForward(
        model, ids, {},
        [&](int lastLayer) {
            ForwardOptions options;
            options.lastLayer = lastLayer;
            options.logits = lastLayer < 0;
            return model->forward(ids, options);
        },
        layer);
}

std::shared_ptr<const ForwardResult> cachedForward(const std::shared_ptr<const VitModel>& model,
                                                   const PixelTensor& pixels)
{
    return keptForward(model, {}, pixels.values, [&](int) { return model->forward(pixels); });
}

void requireComparableCheckpoints(const LanguageModel& first, const LanguageModel& second,
                                  const QString& text, const QString& secondName)
{
    const LanguageModelInfo& a = first.info();
    const LanguageModelInfo& b = second.info();
    const auto refuse = [&](const QString& why) {
        throw InputError(QStringLiteral("%1 cannot be compared with %2 as a checkpoint of the same "
                                        "model: %3")
                             .arg(secondName, modelDisplayName(first.folder()), why));
    };
    if (a.architecture != b.architecture)
        refuse(
            QStringLiteral("its architecture is %1, not %2").arg(b.architecture, a.architecture));
    const std::pair<const char*, std::pair<int, int>> sizes[] = {
        {"number of layers", {a.layers, b.layers}},
        {"number of query heads", {a.heads, b.heads}},
        {"number of key/value heads", {a.keyValueHeads, b.keyValueHeads}},
        {"head dimension", {a.headDim, b.headDim}},
        {"vocabulary size", {a.vocabularySize, b.vocabularySize}},
    };
    for (const auto& [name, values] : sizes)
        if (values.first != values.second)
            refuse(QStringLiteral("its %1 is %2, not %3")
                       .arg(QLatin1String(name))
                       .arg(values.second)
                       .arg(values.first));
    const std::vector<int> ids = first.tokenizer().encode(text);
    const std::vector<int> other = second.tokenizer().encode(text);
    for (std::size_t i = 0; i < std::max(ids.size(), other.size()); ++i) {
        const int x = i < ids.size() ? ids[i] : -1;
        const int y = i < other.size() ? other[i] : -1;
        if (x != y)
            refuse(QStringLiteral("its tokenizer cuts the text differently (token %1 is %2 there, "
                                  "%3 here)")
                       .arg(i)
                       .arg(y < 0 ? QStringLiteral("missing")
                                  : QStringLiteral("id %1 (\"%2\")")
                                        .arg(y)
                                        .arg(second.tokenizer().text(y)))
                       .arg(x < 0 ? QStringLiteral("missing")
                                  : QStringLiteral("id %1 (\"%2\")")
                                        .arg(x)
                                        .arg(first.tokenizer().text(x))));
    }
}

AttentionInput layerInput(const ForwardResult& forward, int layer, int heads,
                          const QStringList& labels)
{
    const LayerQkv& qkv = forward.layers.at(std::size_t(layer));
    const Eigen::Index d = qkv.q.cols() / heads;
    const int group = heads / int(qkv.k.cols() / d);  // query heads per key/value head
    AttentionInput input;
    input.labels = labels;
    input.heads.resize(std::size_t(heads));
    for (int h = 0; h < heads; ++h) {
        HeadTensors& head = input.heads[std::size_t(h)];
        head.q = qkv.q.middleCols(h * d, d).cast<double>();
        head.k = qkv.k.middleCols(h / group * d, d).cast<double>();
        head.v = qkv.v.middleCols(h / group * d, d).cast<double>();
    }
    return input;
}

namespace {

// A layer the model has, or InputError.
void checkLayer(const InputSpec& spec, int layers)
{
    if (spec.layer < 0 || spec.layer >= layers)
        throw InputError(QStringLiteral("layer %1: the model %2 has layers 0 to %3")
                             .arg(spec.layer)
                             .arg(modelDisplayName(spec.modelPath))
                             .arg(layers - 1));
}

// Every layer's Q, K, V and the logits of `length` positions in float, then one layer's Q, K, V
// in double.
void requireForwardMemory(const MemoryBudget& budget, double length, int layers, int width,
                          int logits, const QString& what, const QString& wayAround)
{
    budget.require(4.0 * length * (3.0 * width * layers + logits) + 8.0 * length * 3.0 * width,
                   QStringLiteral("the queries, keys, values and logits of %1 in %2 layers")
                       .arg(what)
                       .arg(layers),
                   wayAround);
}

// The float weights of the language model at modelPath, counted from its files (no weights
// read): a .gguf file's tensors, or the folder's .safetensors.
double weightBytes(const QString& modelPath)
{
    const QString folder = modelFolder(modelPath);
    return isGgufFile(folder) ? GgufFile(folder).floatBytes()
                              : CheckpointWeights(folder).floatBytes();
}

// Two checkpoints compared are held at once: the weights of both in float must fit in the budget
// together. Throws InputError when the second is not there (naming it as the second checkpoint),
// ResourceError over the budget.
void requireCheckpointPairMemory(const MemoryBudget& budget, const QString& firstPath,
                                 const QString& secondPath)
{
    requireModelPath(
        modelFolder(secondPath),
        QStringLiteral("the second checkpoint, compared with %1").arg(modelDisplayName(firstPath)));
    budget.require(weightBytes(firstPath) + weightBytes(secondPath),
                   QStringLiteral("The weights of %1 and %2 in float (two checkpoints compared)")
                       .arg(modelDisplayName(firstPath), modelDisplayName(secondPath)),
                   QStringLiteral("Compare smaller checkpoints, or raise the memory budget."));
}

AttentionInput textModelInput(const InputSpec& spec, const MemoryBudget& budget, ModelRun* run)
{
    const std::shared_ptr<const LanguageModel> model = loadModel(spec.modelPath, budget);
    const LanguageModelInfo& info = model->info();
    checkLayer(spec, info.layers);
    const ModelTokens tokens = modelTokens(*model, spec.text, spec.keepLastTokens);
    requireForwardMemory(budget, double(tokens.ids.size()), info.layers, info.heads * info.headDim,
                         info.vocabularySize, QStringLiteral("%1 tokens").arg(tokens.ids.size()),
                         QStringLiteral("Use a shorter text, or raise the memory budget."));
    // The maps need this layer only: a first read of the text stops there (cachedLayers); the
    // pages that compare predictions ask for the whole pass with its logits (run).
    const std::shared_ptr<const ForwardResult> forward =
        run ? cachedForward(model, tokens.ids) : cachedLayers(model, tokens.ids, spec.layer);
    AttentionInput input = layerInput(*forward, spec.layer, info.heads, tokens.labels);
    input.notes = tokens.notes;
    input.model = info;
    if (info.slidingWindow > 0 && int(tokens.ids.size()) > info.slidingWindow)
        input.notes.append(QStringLiteral("The text has %1 tokens, more than the model's sliding "
                                          "window of %2: the model lets each query see its last "
                                          "%2 keys, while the maps here show full causal "
                                          "attention on the same queries and keys.")
                               .arg(tokens.ids.size())
                               .arg(info.slidingWindow));
    if (!spec.comparisonModelPath.isEmpty()) {
        requireCheckpointPairMemory(budget, spec.modelPath, spec.comparisonModelPath);
        const std::shared_ptr<const LanguageModel> second =
            loadModel(spec.comparisonModelPath, budget);
        requireComparableCheckpoints(*model, *second, spec.text,
                                     modelDisplayName(spec.comparisonModelPath));
        const std::shared_ptr<const ForwardResult> secondForward =
            run ? cachedForward(second, tokens.ids) : cachedLayers(second, tokens.ids, spec.layer);
        input.comparison = layerInput(*secondForward, spec.layer, info.heads, tokens.labels).heads;
        if (run)
            run->comparisonForward = secondForward;
    }
    if (run)
        run->forward = forward;
    return input;
}

AttentionInput imageModelInput(const InputSpec& spec, const ImagePixels* image,
                               const MemoryBudget& budget, ModelRun* run)
{
    const std::shared_ptr<const VitModel> model = loadVitModel(spec.modelPath);
    const VitConfig& config = model->config();
    checkLayer(spec, config.layers);
    if (!spec.comparisonModelPath.isEmpty())
        throw InputError(QStringLiteral("the model %1 is a ViT: a second checkpoint is compared "
                                        "for language models")
                             .arg(modelDisplayName(spec.modelPath)));
    if (spec.imagePath.isEmpty() && !image)
        throw InputError(QStringLiteral("the model %1 is a ViT: it reads an image, and none was "
                                        "given")
                             .arg(modelDisplayName(spec.modelPath)));
    if (!image)
        throw InputError(QStringLiteral("%1: no image pixels").arg(spec.imagePath));
    requireForwardMemory(budget, double(config.tokenCount()), config.layers, config.width,
                         int(model->classNames().size()),
                         QStringLiteral("%1 patches and [CLS]").arg(config.tokenCount() - 1),
                         QStringLiteral("Raise the memory budget."));
    PixelTensor pixels = model->preprocess(*image, spec.imagePath);
    const std::shared_ptr<const ForwardResult> forward = cachedForward(model, pixels);
    AttentionInput input = layerInput(*forward, spec.layer, config.heads, model->tokenLabels());
    input.gridRows = config.gridRows();
    input.gridCols = config.gridCols();
    if (run) {
        run->forward = forward;
        run->pixels = std::move(pixels);
    }
    return input;
}

}  // namespace

AttentionInput modelInput(const InputSpec& spec, const ImagePixels* image,
                          const MemoryBudget& budget, ModelRun* run)
{
    if (modelArchitectureOf(spec.modelPath) == ModelArchitecture::Vit)
        return imageModelInput(spec, image, budget, run);
    return textModelInput(spec, budget, run);
}

}  // namespace attnlab

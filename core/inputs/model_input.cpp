#include "inputs/model_input.h"

#include "errors.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>
#include <QtGlobal>

#include <algorithm>
#include <deque>

namespace attnlab {

namespace {

// How many models and forward passes stay loaded.
constexpr std::size_t kKeptModels = 2;
constexpr std::size_t kKeptForwards = 4;

const QString kBuiltinFolderName = QStringLiteral("kjv-gpt2");

bool holdsModel(const QString& folder)
{
    return !folder.isEmpty() && QFileInfo::exists(folder + QStringLiteral("/config.json"));
}

// The newest modification time of the folder's files: a checkpoint written again is loaded again.
QDateTime newestChange(const QString& folder)
{
    QDateTime newest;
    const QFileInfoList files = QDir(folder).entryInfoList(QDir::Files);
    for (const QFileInfo& file : files)
        newest = std::max(newest, file.lastModified());
    return newest;
}

struct KeptModel {
    QString folder;  // canonical
    QDateTime changed;
    std::shared_ptr<const Gpt2Model> model;
};

struct KeptForward {
    std::weak_ptr<const Gpt2Model> model;  // expires with the model: never matches a new one
    std::vector<int> ids;
    std::shared_ptr<const ForwardResult> forward;
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

// Layer 1, head 0 of the built-in model is its punctuation head: each token looks back to the
// latest punctuation mark (resources/models/README.md), and this sentence has four.
BuiltinExample builtinExample()
{
    return {QStringLiteral("In the beginning God created the heaven and the earth. And God said, "
                           "Let there be light: and there was light."),
            1, 0};
}

QString builtinModelFolder()
{
    const QString fromEnvironment = qEnvironmentVariable("ATTNLAB_MODELS");
    if (!fromEnvironment.isEmpty())
        return holdsModel(fromEnvironment + QLatin1Char('/') + kBuiltinFolderName)
                   ? QDir::cleanPath(fromEnvironment + QLatin1Char('/') + kBuiltinFolderName)
                   : QString();
    QStringList candidates;
    if (QCoreApplication::instance())
        candidates.append(QCoreApplication::applicationDirPath() +
                          QStringLiteral("/../share/attention-lab/models/") + kBuiltinFolderName);
    candidates.append(QStringLiteral(ATTNLAB_SOURCE_MODELS "/") + kBuiltinFolderName);
    for (const QString& candidate : candidates)
        if (holdsModel(candidate))
            return QDir::cleanPath(candidate);
    return QString();
}

QString modelFolder(const QString& modelPath)
{
    if (modelPath != QLatin1String(kBuiltinModel))
        return modelPath;
    const QString folder = builtinModelFolder();
    if (folder.isEmpty())
        throw InputError(QStringLiteral("the built-in model (%1) is not installed: its folder "
                                        "holds no config.json (looked beside the program and in %2; "
                                        "set ATTNLAB_MODELS to the folder that holds %1)")
                             .arg(kBuiltinFolderName, QStringLiteral(ATTNLAB_SOURCE_MODELS)));
    return folder;
}

QString modelDisplayName(const QString& modelPath)
{
    if (modelPath == QLatin1String(kBuiltinModel))
        return QStringLiteral("built-in (KJV GPT-2)");
    return QFileInfo(QDir::cleanPath(modelPath)).fileName();
}

std::shared_ptr<const Gpt2Model> loadModel(const QString& modelPath)
{
    const QString folder = modelFolder(modelPath);
    const QFileInfo info(folder);
    if (!info.isDir())
        throw InputError(QStringLiteral("%1: no such model folder (a model is a folder holding "
                                        "config.json, the .safetensors weights and the tokenizer "
                                        "files)")
                             .arg(folder));
    const QString canonical = info.canonicalFilePath();
    const QDateTime changed = newestChange(canonical);
    {
        QMutexLocker lock(&cacheMutex());
        for (const KeptModel& kept : keptModels())
            if (kept.folder == canonical && kept.changed == changed)
                return kept.model;
    }
    // Loading takes a while for a large model: not under the lock (two threads may load the same
    // model at once; both results are correct and the second is dropped below).
    std::shared_ptr<const Gpt2Model> model = Gpt2Model::load(canonical);
    QMutexLocker lock(&cacheMutex());
    std::deque<KeptModel>& kept = keptModels();
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](const KeptModel& m) { return m.folder == canonical; }),
               kept.end());
    kept.push_front({canonical, changed, model});
    if (kept.size() > kKeptModels)
        kept.pop_back();
    return model;
}

ModelTokens modelTokens(const Gpt2Model& model, const QString& text, bool keepLast)
{
    ModelTokens tokens;
    tokens.ids = model.tokenizer().encode(text);
    if (tokens.ids.empty())
        throw InputError(QStringLiteral("the text has no tokens: type at least one character"));
    const int positions = model.config().positions;
    if (int(tokens.ids.size()) > positions) {
        if (!keepLast)
            throw InputError(QStringLiteral("the text has %1 tokens but the model reads at most %2 "
                                            "(n_positions): shorten it, or keep its last %2 "
                                            "tokens (--keep-last on the command line)")
                                 .arg(tokens.ids.size())
                                 .arg(positions));
        const std::size_t dropped = tokens.ids.size() - std::size_t(positions);
        tokens.ids.erase(tokens.ids.begin(), tokens.ids.begin() + qsizetype(dropped));
        tokens.notes.append(QStringLiteral("The text has %1 tokens and the model reads at most "
                                           "%2: its first %3 tokens were dropped.")
                                .arg(tokens.ids.size() + dropped)
                                .arg(positions)
                                .arg(dropped));
    }
    for (const int id : tokens.ids)
        tokens.labels.append(model.tokenizer().label(id));
    return tokens;
}

std::shared_ptr<const ForwardResult> cachedForward(const std::shared_ptr<const Gpt2Model>& model,
                                                   const std::vector<int>& ids)
{
    {
        QMutexLocker lock(&cacheMutex());
        for (const KeptForward& kept : keptForwards())
            if (kept.model.lock() == model && kept.ids == ids)
                return kept.forward;
    }
    auto forward = std::make_shared<const ForwardResult>(model->forward(ids));
    QMutexLocker lock(&cacheMutex());
    std::deque<KeptForward>& kept = keptForwards();
    kept.push_front({model, ids, forward});
    if (kept.size() > kKeptForwards)
        kept.pop_back();
    return forward;
}

AttentionInput layerInput(const ForwardResult& forward, int layer, int heads,
                          const QStringList& labels)
{
    const LayerQkv& qkv = forward.layers.at(std::size_t(layer));
    const Eigen::Index d = qkv.q.cols() / heads;
    AttentionInput input;
    input.labels = labels;
    input.heads.resize(std::size_t(heads));
    for (int h = 0; h < heads; ++h) {
        HeadTensors& head = input.heads[std::size_t(h)];
        head.q = qkv.q.middleCols(h * d, d).cast<double>();
        head.k = qkv.k.middleCols(h * d, d).cast<double>();
        head.v = qkv.v.middleCols(h * d, d).cast<double>();
    }
    return input;
}

AttentionInput modelInput(const InputSpec& spec, const MemoryBudget& budget)
{
    const std::shared_ptr<const Gpt2Model> model = loadModel(spec.modelPath);
    const Gpt2Config& config = model->config();
    if (spec.layer < 0 || spec.layer >= config.layers)
        throw InputError(QStringLiteral("layer %1: the model %2 has layers 0 to %3")
                             .arg(spec.layer)
                             .arg(modelDisplayName(spec.modelPath))
                             .arg(config.layers - 1));
    const ModelTokens tokens = modelTokens(*model, spec.text, spec.keepLastTokens);
    // Every layer's Q, K, V in float, then one layer's in double.
    const double length = double(tokens.ids.size());
    budget.require(4.0 * length * (3.0 * config.width * config.layers + config.vocabularySize) +
                       8.0 * length * 3.0 * config.width,
                   QStringLiteral("the queries, keys, values and logits of %1 tokens in %2 layers")
                       .arg(tokens.ids.size())
                       .arg(config.layers),
                   QStringLiteral("Use a shorter text, or raise the memory budget."));
    const std::shared_ptr<const ForwardResult> forward = cachedForward(model, tokens.ids);
    AttentionInput input = layerInput(*forward, spec.layer, config.heads, tokens.labels);
    input.notes = tokens.notes;
    return input;
}

}  // namespace attnlab

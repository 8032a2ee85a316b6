#include "fitting/feature_map_fit.h"

#include "attention/exact_attention.h"
#include "errors.h"
#include "parallel.h"

#include <QElapsedTimer>

#include <algorithm>
#include <atomic>
#include <exception>
#include <cmath>
#include <mutex>
#include <set>

namespace attnlab {

namespace {

// The layers asked for, checked and sorted; every layer when none are named.
std::vector<int> fittedLayers(const std::vector<int>& asked, int layers)
{
    std::set<int> chosen(asked.begin(), asked.end());
    if (asked.empty())
        for (int l = 0; l < layers; ++l)
            chosen.insert(l);
    for (const int layer : chosen)
        if (layer < 0 || layer >= layers)
            throw InputError(QStringLiteral("layer %1: the model has layers 0 to %2")
                                 .arg(layer)
                                 .arg(layers - 1));
    return {chosen.begin(), chosen.end()};
}

// Every fitted head's training data: the model reads each window once; query head h of layer l
// takes its queries and its key/value head's keys, scaled by sqrt(s), and their exact causal
// rows.
std::vector<HeadFitData> headData(const LanguageModel& model,
                                  const std::vector<std::vector<int>>& windows,
                                  const std::vector<int>& layers,
                                  const std::vector<HeadSite>& sites,
                                  const std::function<bool()>& cancelled)
{
    const int d = model.headDim();
    const double rootScale = std::sqrt(1 / std::sqrt(double(d)));
    ForwardOptions options;
    options.logits = false;
    options.cancelled = cancelled;
    // The fitted layers' queries and keys of every window, the windows read in parallel (each
    // forward pass on one thread: a small model's passes are short products that threads would
    // mostly wait on).
    std::vector<std::vector<LayerQkv>> read(windows.size());
    std::vector<std::exception_ptr> failures(windows.size());
    forEachRowBlock(Eigen::Index(windows.size()), 1, [&](Eigen::Index w, Eigen::Index) {
        try {
            ForwardResult forward = model.forward(windows[std::size_t(w)], options);
            for (const int layer : layers) {
                LayerQkv& qkv = forward.layers[std::size_t(layer)];
                read[std::size_t(w)].push_back({std::move(qkv.q), std::move(qkv.k), {}});
            }
        } catch (...) {
            failures[std::size_t(w)] = std::current_exception();
        }
    });
    for (const std::exception_ptr& failure : failures)
        if (failure)
            std::rethrow_exception(failure);
    // Then each head's windows on one thread (one parallel loop: short loops per window would
    // spend their time starting and waiting on a busy machine).
    std::vector<HeadFitData> data(sites.size());
    forEachRowBlock(Eigen::Index(sites.size()), 1, [&](Eigen::Index n, Eigen::Index) {
        const HeadSite site = sites[std::size_t(n)];
        const auto l =
            std::size_t(std::find(layers.begin(), layers.end(), site.layer) - layers.begin());
        const Eigen::Index h = site.head, g = model.keyValueHead(site.head);
        for (const std::vector<LayerQkv>& window : read) {
            const LayerQkv& qkv = window[l];
            FitWindow part;
            part.queries = qkv.q.middleCols(h * d, d).cast<double>() * rootScale;
            part.keys = qkv.k.middleCols(g * d, d).cast<double>() * rootScale;
            part.exact.resize(part.queries.rows(), part.keys.rows());
            exactAttentionRows<double>(part.queries, part.keys, 1.0, true, 0, part.exact);
            data[std::size_t(n)].windows.push_back(std::move(part));
        }
    });
    return data;
}

// The heads a fit takes: every head of the layers, or the heads named (checked).
std::vector<HeadSite> fittedSites(const FeatureMapFitSpec& spec, const LanguageModelInfo& info)
{
    std::vector<HeadSite> sites;
    for (const HeadSite site : spec.heads)
        if (site.head < 0 || site.head >= info.heads)
            throw InputError(QStringLiteral("head %1: the model has heads 0 to %2")
                                 .arg(site.head)
                                 .arg(info.heads - 1));
    for (const int layer : fittedLayers(spec.layers, info.layers))
        for (int h = 0; h < info.heads; ++h)
            if (spec.heads.empty() ||
                std::any_of(spec.heads.begin(), spec.heads.end(),
                            [&](HeadSite site) { return site.layer == layer && site.head == h; }))
                sites.push_back({layer, h});
    return sites;
}

// Refuses a fit that cannot run: d_f, the text, the steps; and one whose rows would not fit in
// the budget (each fitted head keeps its windows' P (L^2) and x', y' (2 L d), in double; each
// fitted layer its windows' Q and K, L (H + H_kv) d floats).
void requireFit(const FeatureMapFitSpec& spec, const LanguageModelInfo& info, int featureDim,
                std::size_t tokens, const std::vector<std::vector<int>>& windows,
                std::size_t layers, std::size_t heads, const MemoryBudget& budget)
{
    if (featureDim > 4096)
        throw InputError(QStringLiteral("features: 2 d_f = %1 is over the 8192 a fit takes")
                             .arg(2 * featureDim));
    if (tokens < std::size_t(kMinimumFitTokens))
        throw InputError(QStringLiteral("the training text has %1 tokens; a fit needs at least "
                                        "%2 (the built-in models ship one of over 5,000: "
                                        "resources/texts/kjv-fit.txt)")
                             .arg(tokens)
                             .arg(kMinimumFitTokens));
    if (spec.distillation.steps < 1)
        throw InputError(
            QStringLiteral("steps: expected at least 1 (got %1)").arg(spec.distillation.steps));
    double bytes = 0;
    const double d = info.headDim;
    for (const std::vector<int>& window : windows) {
        const double length = double(window.size());
        bytes += double(heads) * length * 8.0 * (length + 2.0 * d) +
                 double(layers) * length * 4.0 * (info.heads + info.keyValueHeads) * d;
    }
    budget.require(
        bytes, QStringLiteral("The training rows of %1 heads (%2 tokens)").arg(heads).arg(tokens),
        QStringLiteral("Fit fewer layers at a time, use a shorter text, or raise the memory "
                       "budget."),
        {Remedy::FitLayers});
}

// The maps a head's fit starts from.
FittedHeadMaps startingMaps(int featureDim, int d, int layer, int head, int heads,
                            std::uint64_t seed)
{
    return FittedHeadMaps::initial(featureDim, d,
                                   seed + std::uint64_t(layer) * std::uint64_t(heads) + head);
}

// Fits every site's maps, the heads in parallel, one to an engine thread. Returns the maps in the
// order of the sites and fills fit.heads; throws InputError for a head whose loss is not a
// number, Cancelled when cancelled.
std::vector<FittedHeadMaps> fitSites(
    const std::vector<HeadSite>& sites, const std::vector<HeadFitData>& data,
    const FeatureMapFitSpec& spec, int featureDim, int d, int heads, FeatureMapFit& fit,
    const std::function<void(const FeatureMapFitProgress&)>& progress,
    const std::function<bool()>& cancelled)
{
    fit.heads.resize(sites.size());
    std::vector<FittedHeadMaps> fitted(sites.size());
    std::vector<QString> failures(sites.size());
    std::atomic<qint64> done = 0;
    std::atomic<bool> stop = false;
    // Every head's starting maps and KL first, so that a head not yet begun counts in the mean
    // the progress reports at its starting KL (the curve begins where the fit does).
    std::vector<FittedHeadMaps> starts(sites.size());
    std::vector<std::atomic<double>> latestKl(sites.size());
    forEachRowBlock(Eigen::Index(sites.size()), 1, [&](Eigen::Index index, Eigen::Index) {
        const std::size_t n = std::size_t(index);
        HeadFitRecord& record = fit.heads[n];
        record.layer = sites[n].layer;
        record.head = sites[n].head;
        starts[n] =
            startingMaps(featureDim, d, record.layer, record.head, heads, spec.distillation.seed);
        record.initialKl = distillationLoss(starts[n], data[n], {}, nullptr).kl();
        latestKl[n] = record.initialKl;
    });
    const qint64 total = qint64(sites.size()) * spec.distillation.steps;
    // Whichever thread finished a step reports, one at a time (a thread finding another reporting
    // goes on).
    std::mutex reporting;
    const auto report = [&] {
        if (!progress)
            return;
        const std::unique_lock lock(reporting, std::try_to_lock);
        if (!lock.owns_lock())
            return;
        double sum = 0;
        for (const std::atomic<double>& kl : latestKl)
            sum += kl;
        progress({done.load(), total, sum / double(latestKl.size())});
    };
    forEachRowBlock(Eigen::Index(sites.size()), 1, [&](Eigen::Index index, Eigen::Index) {
        const std::size_t n = std::size_t(index);
        HeadFitRecord& record = fit.heads[n];
        try {
            fitted[n] = fitHeadMaps(starts[n], data[n], spec.distillation, [&](int, double kl) {
                record.curve.push_back(float(kl));
                latestKl[n] = kl;
                ++done;
                report();
                if (cancelled && cancelled())
                    stop = true;
                return !stop;
            });
            if (stop)
                return;
            fitted[n].windowLogWeight = fitWindowLogWeight(fitted[n], data[n], spec.window);
            record.finalKl = distillationLoss(fitted[n], data[n], {}, nullptr).kl();
        } catch (const InputError& error) {
            failures[n] = QStringLiteral("layer %1, head %2: %3")
                              .arg(record.layer)
                              .arg(record.head)
                              .arg(error.message());
            stop = true;
        }
    });
    for (const QString& failure : failures)
        if (!failure.isEmpty())
            throw InputError(failure);
    if (stop || (cancelled && cancelled()))
        throw Cancelled();
    return fitted;
}

}  // namespace

std::vector<std::vector<int>> fitWindows(const LanguageModel& model, const std::vector<int>& ids)
{
    return sequenceWindows(model.tokenizer(), ids, std::min(model.positions(), kFitWindowTokens));
}

FeatureMapFit fitFeatureMaps(const LanguageModel& model, const std::vector<int>& ids,
                             const FeatureMapFitSpec& spec, const MemoryBudget& budget,
                             const std::function<void(const FeatureMapFitProgress&)>& progress,
                             const std::function<bool()>& cancelled)
{
    const LanguageModelInfo& info = model.info();
    const int d = info.headDim;
    const int featureDim = spec.featureDim > 0 ? spec.featureDim : d;
    const std::vector<HeadSite> sites = fittedSites(spec, info);
    std::vector<int> layers;
    for (const HeadSite site : sites)
        if (layers.empty() || layers.back() != site.layer)
            layers.push_back(site.layer);
    const std::vector<std::vector<int>> windows = fitWindows(model, ids);
    requireFit(spec, info, featureDim, ids.size(), windows, layers.size(), sites.size(), budget);

    const std::vector<HeadFitData> data = headData(model, windows, layers, sites, cancelled);
    QElapsedTimer timer;
    timer.start();
    FeatureMapFit fit;
    fit.tokens = int(ids.size());
    fit.windows = int(windows.size());
    std::vector<FittedHeadMaps> fitted =
        fitSites(sites, data, spec, featureDim, d, info.heads, fit, progress, cancelled);

    auto maps = std::make_shared<FittedFeatureMaps>();
    maps->model = fittedModelName(model.folder());
    maps->layers = info.layers;
    maps->heads = info.heads;
    maps->headDim = d;
    maps->featureDim = featureDim;
    maps->window = spec.window;
    maps->trainingText = spec.trainingText;
    maps->steps = spec.distillation.steps;
    for (std::size_t n = 0; n < fitted.size(); ++n)
        maps->fitted[{sites[n].layer, sites[n].head}] = std::move(fitted[n]);
    fit.maps = std::move(maps);
    fit.seconds = double(timer.nsecsElapsed()) * 1e-9;
    return fit;
}

void requireFeatureMapsFit(const FittedFeatureMaps& maps, const QString& folder,
                           const LanguageModelInfo& info)
{
    requireMapsOfModel(maps, folder, info.layers, info.heads, info.headDim);
}

}  // namespace attnlab

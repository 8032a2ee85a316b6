#include "attention/fitted_feature_maps.h"

#include "attention/methods.h"
#include "attention/random.h"
#include "errors.h"
#include "remedy.h"

#include <QDir>
#include <QFileInfo>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <set>

namespace attnlab {

FittedHeadMaps FittedHeadMaps::initial(int featureDim, int headDim, std::uint64_t seed)
{
    FittedHeadMaps maps;
    for (MatrixD* weight : {&maps.queryWeight, &maps.keyWeight}) {
        Rng rng(seed, RandomStream::FeatureMapFit, weight == &maps.queryWeight ? 0 : 1);
        *weight = MatrixD::Identity(featureDim, headDim);
        for (int f = headDim; f < featureDim; ++f)
            for (int a = 0; a < headDim; ++a)
                (*weight)(f, a) = rng.normal() / std::sqrt(double(headDim));
    }
    maps.queryBias = VectorD::Zero(featureDim);
    maps.keyBias = VectorD::Zero(featureDim);
    return maps;
}

const FittedHeadMaps* FittedFeatureMaps::find(int layer, int head) const
{
    const auto found = fitted.find({layer, head});
    return found == fitted.end() ? nullptr : &found->second;
}

QString FittedFeatureMaps::description() const
{
    std::set<int> fittedLayers;
    for (const auto& [site, maps] : fitted)
        fittedLayers.insert(site.first);
    QStringList names;
    for (const int layer : fittedLayers)
        names.append(QString::number(layer));
    return QStringLiteral("%1, %2 %3 (%4 heads), d_f = %5")
        .arg(model, fittedLayers.size() == 1 ? QStringLiteral("layer") : QStringLiteral("layers"),
             names.join(QStringLiteral(", ")))
        .arg(fitted.size())
        .arg(featureDim);
}

std::shared_ptr<const FittedFeatureMaps> initialFeatureMaps(const QString& model, int layers,
                                                            int heads, int headDim, int featureDim,
                                                            std::uint64_t seed)
{
    auto maps = std::make_shared<FittedFeatureMaps>();
    maps->model = model;
    maps->layers = layers;
    maps->heads = heads;
    maps->headDim = headDim;
    maps->featureDim = featureDim;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            maps->fitted[{l, h}] = FittedHeadMaps::initial(
                featureDim, headDim, seed + std::uint64_t(l) * std::uint64_t(heads) + h);
    return maps;
}

std::shared_ptr<const FittedFeatureMaps> mergedFeatureMaps(const FittedFeatureMaps* kept,
                                                           const FittedFeatureMaps& fresh)
{
    auto merged = std::make_shared<FittedFeatureMaps>(fresh);
    if (kept && kept->model == fresh.model && kept->layers == fresh.layers &&
        kept->heads == fresh.heads && kept->headDim == fresh.headDim &&
        kept->featureDim == fresh.featureDim)
        for (const auto& [site, maps] : kept->fitted)
            merged->fitted.emplace(site, maps);  // keeps fresh's where both have the head
    merged->file.clear();
    return merged;
}

QString fittedModelName(const QString& folder)
{
    return QFileInfo(QDir::cleanPath(folder)).fileName();
}

void requireMapsOfModel(const FittedFeatureMaps& maps, const QString& folder, int layers, int heads,
                        int headDim)
{
    const QString model = fittedModelName(folder);
    const QString file =
        maps.file.isEmpty() ? QStringLiteral("the fitted feature maps") : maps.file;
    if (maps.model != model)
        throw RemedyInputError(QStringLiteral("%1: the maps were fitted to the model %2, not to "
                                              "%3; fit them to this model")
                                   .arg(file, maps.model, model),
                               {Remedy::FitMaps});
    if (maps.layers != layers || maps.heads != heads || maps.headDim != headDim)
        throw InputError(QStringLiteral("%1: the maps were fitted to %2 with %3 layers of %4 heads "
                                        "of d = %5, but %6 has %7 layers of %8 heads of d = %9")
                             .arg(file, maps.model)
                             .arg(maps.layers)
                             .arg(maps.heads)
                             .arg(maps.headDim)
                             .arg(folder)
                             .arg(layers)
                             .arg(heads)
                             .arg(headDim));
}

const FittedHeadMaps& fittedHeadMaps(const ApproximationSpec& spec, int d, HeadSite site)
{
    const QString method = methodInfo(spec.kind).name;
    const FittedFeatureMaps* maps = spec.fittedMaps.get();
    if (!maps)
        throw InputError(
            QStringLiteral("%1: no fitted feature maps are loaded. Its maps are fitted to a "
                           "model's heads first (attention-lab fit-features --model M "
                           "--text-file F --out FILE, or Fit to this model in the window), then "
                           "given with --feature-map FILE")
                .arg(method));
    const QString source = maps->file.isEmpty()
                               ? QStringLiteral("the fitted feature maps of %1").arg(maps->model)
                               : maps->file;
    if (maps->headDim != d)
        throw InputError(QStringLiteral("%1: %2 were fitted to heads of dimension d = %3 (%4), "
                                        "not d = %5")
                             .arg(method, source)
                             .arg(maps->headDim)
                             .arg(maps->model)
                             .arg(d));
    const FittedHeadMaps* head = maps->find(site.layer, site.head);
    if (!head)
        throw RemedyInputError(QStringLiteral("%1: %2 hold no maps for layer %3, head %4 (%5); "
                                              "fit that layer too")
                                   .arg(method, source)
                                   .arg(site.layer)
                                   .arg(site.head)
                                   .arg(maps->description()),
                               {Remedy::FitLayers});
    return *head;
}

}  // namespace attnlab

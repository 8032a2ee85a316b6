// libFuzzer target: arbitrary bytes read as a file of fitted feature maps (readFeatureMaps: a
// safetensors file and its metadata). Any input is either refused with InputError naming the
// file, or read: every head of a layer and head inside the metadata's, its maps of the metadata's
// d_f x d, every value finite; and the maps written again (featureMapFileBytes) read back equal.
// Anything else (a crash, a leak, undefined behaviour, another exception) is a finding.

#include "errors.h"
#include "fitting/feature_map_file.h"
#include "fuzz_input.h"

#include <QFile>

#include <cmath>
#include <cstdlib>

namespace {

using namespace attnlab;

bool sameHead(const FittedHeadMaps& a, const FittedHeadMaps& b)
{
    return a.queryWeight == b.queryWeight && a.queryBias == b.queryBias &&
           a.keyWeight == b.keyWeight && a.keyBias == b.keyBias &&
           a.windowLogWeight == b.windowLogWeight;
}

// The head's maps have the shapes maps declares and finite values.
bool wellFormed(const FittedFeatureMaps& maps, const FittedHeadMaps& head)
{
    return head.featureDim() == maps.featureDim && head.headDim() == maps.headDim &&
           head.keyWeight.rows() == maps.featureDim && head.keyWeight.cols() == maps.headDim &&
           head.queryBias.size() == maps.featureDim && head.keyBias.size() == maps.featureDim &&
           head.queryWeight.allFinite() && head.keyWeight.allFinite() &&
           head.queryBias.allFinite() && head.keyBias.allFinite() &&
           std::isfinite(head.windowLogWeight);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QString path = fuzz::inputFile(data, size, ".safetensors");
    std::shared_ptr<const FittedFeatureMaps> maps;
    if (!fuzz::readOrRefused(path, [&] { maps = readFeatureMaps(path); }))
        return 0;
    if (maps->fitted.empty() || maps->file != path)
        std::abort();
    for (const auto& [site, head] : maps->fitted)
        if (site.first < 0 || site.first >= maps->layers || site.second < 0 ||
            site.second >= maps->heads || !wellFormed(*maps, head))
            std::abort();

    // What was read is written and read again unchanged (the values are floats already).
    QFile file(path);
    const QByteArray bytes = featureMapFileBytes(*maps);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
        std::abort();
    file.close();
    const std::shared_ptr<const FittedFeatureMaps> again = readFeatureMaps(path);
    if (again->model != maps->model || again->layers != maps->layers ||
        again->heads != maps->heads || again->headDim != maps->headDim ||
        again->featureDim != maps->featureDim || again->window != maps->window ||
        again->steps != maps->steps || again->trainingText != maps->trainingText ||
        again->fitted.size() != maps->fitted.size())
        std::abort();
    for (const auto& [site, head] : maps->fitted) {
        const FittedHeadMaps* other = again->find(site.first, site.second);
        if (!other || !sameHead(head, *other))
            std::abort();
    }
    return 0;
}

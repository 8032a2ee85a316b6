#include "generation/token_sampler.h"

#include "attention/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace attnlab {

QString samplingText(const SamplingSettings& sampling)
{
    if (sampling.greedy)
        return QStringLiteral("greedy");
    return QStringLiteral("sampled at T = %1%2, seed %3")
        .arg(sampling.temperature)
        .arg(sampling.topK > 0 ? QStringLiteral(", top-%1").arg(sampling.topK) : QString())
        .arg(sampling.seed);
}

double TokenSampler::uniform(int step) const
{
    if (m_settings.greedy)
        return std::numeric_limits<double>::quiet_NaN();
    return Rng(m_settings.seed, RandomStream::TokenSampling, std::uint64_t(step)).uniform();
}

int TokenSampler::choose(const Eigen::Ref<const Vector<float>>& logits, double u) const
{
    std::vector<int> ids;
    for (Eigen::Index t = 0; t < logits.size(); ++t)
        if (std::isfinite(logits[t]))
            ids.push_back(int(t));
    if (ids.empty())
        return -1;
    const auto likelier = [&](int a, int b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    };
    if (m_settings.greedy)
        return *std::min_element(ids.begin(), ids.end(), likelier);
    const std::size_t kept =
        m_settings.topK > 0 ? std::min(ids.size(), std::size_t(m_settings.topK)) : ids.size();
    std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(kept), ids.end(), likelier);
    const double top = logits[ids.front()];
    std::vector<double> weights(kept);
    for (std::size_t r = 0; r < kept; ++r)
        weights[r] = std::exp((double(logits[ids[r]]) - top) / m_settings.temperature);
    const double target = u * std::accumulate(weights.begin(), weights.end(), 0.0);
    double cumulative = 0;
    for (std::size_t r = 0; r < kept; ++r) {
        cumulative += weights[r];
        if (cumulative > target)
            return ids[r];
    }
    return ids[kept - 1];  // u * sum rounded up to the whole sum
}

}  // namespace attnlab

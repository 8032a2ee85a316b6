#pragma once

#include "types.h"

#include <QString>

#include <cstdint>

namespace attnlab {

// How the next token is chosen from a step's logits l (docs/design.md section 2.11).
struct SamplingSettings {
    bool greedy = true;      // argmax l_t (the lowest id among equal logits)
    double temperature = 1;  // T > 0: p_t proportional to exp(l_t / T)
    int topK = 0;            // only the K likeliest tokens (0: all)
    std::uint64_t seed = 0;  // the draws' seed, apart from W's
};

// "greedy", or "sampled at T = 0.8, top-40, seed 7": the sampling as the charts' subtitles and
// `generate`'s summary say it.
QString samplingText(const SamplingSettings& sampling);

// Chooses tokens as SamplingSettings say, by inverse transform sampling: the tokens sorted by
// descending logit (ties by id), cut to the K likeliest, p_t = exp((l_t - l_max) / T) / sum, and
// the first token whose cumulative probability exceeds u, a uniform draw on (0, 1). Step k's u_k
// comes from (seed, k) alone, so two runs (exact and approximate) given the same step draw the
// same u_k: where their tokens differ, their distributions differ. Logits that are not finite
// count as -inf.
class TokenSampler {
public:
    explicit TokenSampler(const SamplingSettings& settings) : m_settings(settings) {}

    const SamplingSettings& settings() const { return m_settings; }
    // u_k for step k (0-based); NaN when greedy (no draw).
    double uniform(int step) const;
    // The token for logits (vocabulary entries) and the draw u; -1 when no logit is finite.
    int choose(const Eigen::Ref<const Vector<float>>& logits, double u) const;

private:
    SamplingSettings m_settings;
};

}  // namespace attnlab

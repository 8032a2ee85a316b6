#pragma once

#include "generation/token_sampler.h"

#include <QJsonObject>
#include <QString>

#include <optional>
#include <vector>

namespace attnlab {

// The Generate page in a session (the view's "generate" object): what it generates with the
// window's model and approximation (docs/design.md section 2.11): the prompt, N, the replaced
// layers, the sampling, the head the Stepper page follows, and whether it showed a generation
// (which opening the session runs again: the steps' timings are the machine's, not the file's).
struct GenerationPageState {
    // The range of the page's token count (as `generate --tokens`).
    static constexpr int maxTokens = 1 << 20;

    // The prompt typed on the page; none: the Input dock's text.
    std::optional<QString> prompt;
    int tokens = 32;
    std::vector<int> replacedLayers;  // 0-based, ascending; empty: every layer
    SamplingSettings sampling;
    // The followed head (layer, head), whose S_i and z_i the Stepper page shows as the model
    // generates; none: no head is followed.
    std::optional<std::pair<int, int>> followed;
    bool generated = false;

    // {"prompt" (when typed), "tokens", "layers": "all" or [l, ...], "sampling": {"greedy": true}
    // or {"greedy": false, "temperature", "top_k", "seed"}, "follow": {"layer", "head"} (when
    // followed), "generated"}.
    QJsonObject toJson() const;
    // Fields it lacks keep the defaults above. Throws InputError naming the field when one is
    // malformed (a token count outside 1 to maxTokens, a layer or head that no model has, a
    // temperature not > 0, a top-k < 0, a seed past 2^53 - 1).
    static GenerationPageState fromJson(const QJsonObject& json);
};

}  // namespace attnlab

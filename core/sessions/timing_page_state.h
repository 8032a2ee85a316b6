#pragma once

#include "sweeps/timing_sweep.h"

#include <QJsonObject>

namespace attnlab {

// The Timing page in a session (the view's "timing" object): its controls (the sweep's spec, the
// length range as entered, the variants) and the sweep it shows. The page reads and writes it;
// `attention-lab bench --save-session` writes it for a sweep measured headless, so that the
// window opens on it.
struct TimingPageState {
    // The range of the page's length controls.
    static constexpr int minLength = 16;
    static constexpr int maxLength = 1 << 20;

    SweepSpec spec;  // the methods, d, m, threads, repetitions the controls hold
    int fromLength = 128;
    int toLength = 16384;
    int pointsPerOctave = 1;  // 1 to 4
    // The variants are kept apart from the methods, so that a spec without methods keeps them.
    bool nonCausal = true;
    bool causal = false;
    SweepResult result;  // no points: none is shown

    // The state of a page showing `result` with its controls set to the result's sweep: the
    // length range from its shortest to its longest length (clamped to the controls' range), one
    // length per octave, the variants it measured.
    static TimingPageState showing(const SweepResult& result);

    // {"spec", "min_length", "max_length", "points_per_octave", "non_causal", "causal",
    // "result" (only with points)}.
    QJsonObject toJson() const;
    // Throws InputError naming the field when the state is malformed.
    static TimingPageState fromJson(const QJsonObject& json);
};

}  // namespace attnlab

#pragma once

#include "experiment.h"
#include "inputs/inputs.h"
#include "memory_budget.h"
#include "types.h"

#include <QStringList>

#include <functional>
#include <vector>

namespace attnlab {

// Causal linear attention of one head run as a recurrent network, token by token (docs/design.md
// section 2.6, recurrent form), with everything the stepper view and `attention-lab steps` show.
//
// Positions are 0-based token indices t = 0..L-1, as the rows of every L x ... array. Consuming
// token t gives the state of the paper's 1-based step i = t + 1:
//   S_i = S_{i-1} + phi(k_i) v_i^T  (C x M),   z_i = z_{i-1} + phi(k_i)  (C),
//   y_i = phi(q_i)^T S_i / phi(q_i)^T z_i      (M),
// with S_0 = 0, z_0 = 0, C the number of features of phi and M = d_v. The state holds C M + C
// values whatever i is.

// What one step shows, for the step i = position + 1. Every value is at its true scale, in double
// (inf where it exceeds the double range).
struct CausalStepRecord {
    Eigen::Index position = 0;  // t, 0-based; the step is i = t + 1
    double denominator = 0;     // phi(q_i)^T z_i; <= 0 only for maps whose features can be negative
    double stateNorm = 0;       // |S_i|_F
    double normalizerNorm = 0;  // |z_i|_2
    // max_c |y_i,c - o^_i,c|: the recurrent output against the parallel (chunked) causal output
    // o^_i of linearAttention, and the same divided by max_{t', c} |y_t',c| (the largest recurrent
    // output entry of the whole sequence), so that rows with small outputs do not look worse.
    double differenceToParallel = 0;
    double relativeDifferenceToParallel = 0;
    // |y_i - o_i|_2 / |o_i|_2 against the exact causal softmax output o_i = sum_{j<=i} P_ij v_j
    // (0 when both are 0, inf when only o_i is).
    double errorToExact = 0;
};

// The largest difference between the recurrent and the parallel outputs over positions 0..t.
struct FormAgreement {
    double absolute = 0;  // max over positions of differenceToParallel
    double relative = 0;  // max over positions of relativeDifferenceToParallel
};

// Everything computed for one head.
struct CausalSteps {
    ExperimentSpec spec;            // as run: causal is set (the recurrent form is causal)
    double scale = 0;               // s as used
    int head = 0;                   // the head of the input, 0-based
    QStringList labels;             // one per position
    Eigen::Index featureCount = 0;  // C
    Eigen::Index valueDim = 0;      // M = d_v

    std::vector<CausalStepRecord> records;  // one per position t = 0..L-1
    MatrixD outputs;          // y_i, the recurrent outputs (L x M), row t for i = t + 1
    MatrixD outputsParallel;  // o^_i by the chunked causal form (linearAttention, causal)
    MatrixD outputsExact;     // o_i, exact causal softmax (streamingAttention, causal)
    MatrixD normalizers;      // z_i (L x C), row t for i = t + 1
    // The states of positions [statesFrom, statesTo): row r is S_i (C x M, row-major, so
    // C M columns) with i = statesFrom + r + 1. Empty when the range is empty.
    Eigen::Index statesFrom = 0;
    Eigen::Index statesTo = 0;
    MatrixD states;
    // phi(q_i), phi(k_i) (L x C each) at true scale, when CausalStepsOptions::features is set.
    MatrixD queryFeatures;
    MatrixD keyFeatures;
    // The positions whose denominator phi(q_i)^T z_i is not positive (their output is
    // numerator / denominator where that is finite, else 0, in both the recurrent and the
    // parallel form).
    std::vector<Eigen::Index> nonPositivePositions;

    Eigen::Index length() const { return Eigen::Index(records.size()); }
    // S_i (C x M) after token `position`; requires statesFrom <= position < statesTo.
    MatrixD state(Eigen::Index position) const;
    // The largest recurrent-vs-parallel difference over positions 0..position (the "two forms
    // agree" line: the largest difference so far). All positions when position is -1 or >= L.
    FormAgreement agreementThrough(Eigen::Index position = -1) const;
};

struct CausalStepsOptions {
    int head = 0;  // which head of the input, 0-based
    // The states S_i to keep, positions [statesFrom, statesTo) (0-based tokens; statesTo = -1
    // means L). 0 <= statesFrom <= statesTo <= L; an empty range keeps none.
    Eigen::Index statesFrom = 0;
    Eigen::Index statesTo = -1;
    bool features = false;  // keep phi(Q), phi(K) at true scale (2 L C values)
    MemoryBudget budget;
    // Polled between blocks of steps and between the stages; when it returns true,
    // causalSteps throws Cancelled.
    std::function<bool()> cancelled;
};

// The bytes causalSteps keeps or needs at once for L positions, C features, M value dimensions
// and `stateCount` kept states, 8 bytes a value: the states (stateCount C M), the outputs and
// normalizers (L (3 M + C)), the stepper's mapped queries and keys and its checkpoints
// (2 L C + ceil(L / ceil(sqrt L)) (C M + C)), the kept features, and the records.
double causalStepsBytes(Eigen::Index length, Eigen::Index features, Eigen::Index valueDim,
                        Eigen::Index stateCount, bool keepFeatures);

// Throws InputError when the spec's method has no state S_i, z_i to step through: the exact
// method, a method without a recurrent form, or local attention (whose recurrent form keeps the
// keys of its window instead); the message names the methods that have one (the feature maps
// with a recurrent form) and begins with `prefix` ("--method exact: " on the command line).
void requireFeatureState(const ExperimentSpec& spec, const QString& prefix = QString());

// Runs head options.head of `input` through the recurrence with the feature map of spec, in the
// spec's precision (CausalStepper<float> or <double>), whatever spec.causal says, and computes
// for every position the record above, the parallel chunked output (chunk spec.chunkSize) and the
// exact causal output at scale s = spec.resolvedScale(d).
// Throws InputError (the method has no state S_i, z_i, a head or a states range out of range, a
// spec value out of range, queries or keys too large for the precision), ResourceError (what is
// kept exceeds options.budget, checked before anything large is allocated; the message says to
// keep fewer states with --from/--to, use fewer features or raise the memory budget) and
// Cancelled.
CausalSteps causalSteps(const ExperimentSpec& spec, const AttentionInput& input,
                        const CausalStepsOptions& options = {});

}  // namespace attnlab

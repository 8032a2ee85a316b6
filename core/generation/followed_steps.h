#pragma once

#include "attention/approximation_spec.h"
#include "generation/generation.h"
#include "inputs/inputs.h"
#include "memory_budget.h"
#include "sweeps/causal_steps.h"
#include "types.h"

#include <QString>

#include <memory>

namespace attnlab {

// The head a generation follows (GenerationSpec::followLayer and followHead), gathered token by
// token as the steps come, in the shape the Stepper page steps through (CausalSteps, section
// 2.6): at every token the approximate run read (the prompt's, GenerationStep::followedPrompt,
// then each step's), the head's q_i, k_i, v_i and its recurrence's S_i, z_i, phi(q_i), phi(k_i),
// phi(q_i)^T z_i and y_i as the generation reported them: nothing of the recurrence is computed
// again. Beside them, on the same rows (i = t + 1, j <= i):
//   the exact causal softmax output   o_i = sum_j P_ij v_j,  P_ij = exp(s q_i.k_j) / sum_j' ...,
//   the parallel (masked quadratic) form of the same features
//                                      o^_i = sum_j P^_ij v_j,  P^_ij = phi(q_i).phi(k_j) / sum_j'
//                                      phi(q_i).phi(k_j'),
// with s = 1/sqrt(d) as the model's, and the rows of P and P^. A record's differenceToParallel is
// max_c |y_i,c - o^_i,c| and its relative difference that divided by the largest |y| entry so
// far; errorToExact is |y_i - o_i| / |o_i|. Every state is kept (statesFrom = 0, statesTo = the
// tokens so far).
class FollowedSteps {
public:
    // Room for `capacity` tokens (P - 1 + N: the prompt's and the generated tokens read) of head
    // `head` in layer `layer` of a model with head dimension d, under the generation's
    // approximation. Throws InputError when the head has no state S_i, z_i to follow (a layer
    // that keeps softmax attention, `replaced` false; a method without a feature map, such as
    // local attention), ResourceError when what it keeps (the states, C d + C values a token, and
    // P and P^, capacity^2 each, in double) exceeds the budget.
    FollowedSteps(const ApproximationSpec& spec, int layer, int head, bool replaced,
                  Eigen::Index capacity, Eigen::Index headDim, const MemoryBudget& budget);

    int layer() const { return m_layer; }
    int head() const { return m_head; }
    Eigen::Index capacity() const { return m_capacity; }
    Eigen::Index length() const { return m_steps.length(); }

    // Appends the next token: the head as the generation reported it, and the token's label.
    // Throws InputError when the head has no state, or when there is no room left.
    void append(const FollowedHead& head, const QString& label);

    // The steps so far (length() records; its matrices have capacity() rows, those past
    // length() zero).
    const CausalSteps& steps() const { return m_steps; }
    // The head's rows as an input of one head (q, k, v: capacity() x d, labels as the steps').
    const AttentionInput& input() const { return m_input; }
    // The causal P and P^ of the tokens so far (length() x length()).
    MatrixD exactAttention() const;
    MatrixD approxAttention() const;

private:
    int m_layer;
    int m_head;
    Eigen::Index m_capacity;
    double m_scale;
    CausalSteps m_steps;
    AttentionInput m_input;
    MatrixD m_exact;   // P, capacity x capacity, rows past length() unset
    MatrixD m_approx;  // P^
    double m_largestOutput = 0;
};

}  // namespace attnlab

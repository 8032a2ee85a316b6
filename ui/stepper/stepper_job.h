#pragma once

// The Stepper page's computation (private to ui/stepper): what a job asks for, what it gives the
// page, and computeStepper, which computes one (on the page's worker thread, StepperController).

#include "experiment.h"
#include "memory_budget.h"
#include "sweeps/causal_steps.h"

#include <QString>

#include <functional>
#include <memory>

namespace attnlab::ui {

// One job of the page's worker: a whole experiment (the causal steps and the causal matrices P,
// P^), or, for the experiment shown, only the states S_i of a window of positions.
struct StepperJob {
    bool whole = true;
    ExperimentSpec spec;
    std::shared_ptr<const AttentionInput> input;
    int head = 0;
    MemoryBudget budget;
    Eigen::Index around = 0;     // the position the kept states are placed around
    double keptMatrixBytes = 0;  // window jobs: the bytes of the P and P^ already kept
    quint64 generation = 0;
};

// What the page shows for one experiment.
struct StepperData {
    quint64 generation = 0;
    std::shared_ptr<const AttentionInput> input;
    std::shared_ptr<const CausalSteps> steps;
    std::shared_ptr<const MatrixD> exactAttention;   // causal P (L x L); null when not kept
    std::shared_ptr<const MatrixD> approxAttention;  // causal P^
    QString matricesNote;                            // why P and P^ are not kept
    double allStatesBytes = 0;                       // causalStepsBytes with every state kept
    // A generation's followed head (StepperView::follow): what is followed ("layer 2, head 3 of
    // the generation"); its outputs were computed by the generation's recurrence, its parallel
    // form is the masked quadratic one (FollowedSteps). Empty for the window's experiment.
    QString followed;
};

// Exactly what the stepper for job needs: for a whole job the causal P and P^ of the head
// (compute() with matrices only; over the budget they are left out with a note), then the
// causal steps with phi(Q), phi(K) and as many states as the budget allows (all, or a window
// around job.around). Throws as compute() and causalSteps() do (InputError, ResourceError,
// Cancelled once cancelled() says so). The page runs it on its BackgroundJob.
StepperData computeStepper(const StepperJob& job, const std::function<bool()>& cancelled);

}  // namespace attnlab::ui

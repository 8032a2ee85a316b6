#pragma once

// The Generate page's work on its worker (private to ui/generation): what a run asks for, what it
// tells the page before the first token, and runGenerationJob, which runs it token by token.

#include "generation/followed_steps.h"
#include "generation/generation.h"
#include "memory_budget.h"
#include "model/language_model.h"
#include "ui/common/background_job.h"

#include <QString>

#include <functional>
#include <memory>
#include <vector>

namespace attnlab::ui {

// One run of the page: the model, what to generate, the memory budget.
struct GenerationRequest {
    QString modelPath;  // a folder, a .gguf file or "builtin"
    GenerationSpec spec;
    MemoryBudget budget;
};

// What the page learns once the model is loaded and the generation checked, before the first
// token.
struct GenerationStart {
    std::shared_ptr<const LanguageModel> model;
    std::vector<int> promptIds;
    std::vector<int> replacedLayers;
    // The head the Stepper page follows, with room for every token read (null when none is
    // followed or it cannot be; followNote then says why). From here on the GUI thread's alone.
    std::shared_ptr<FollowedSteps> followed;
    QString followNote;
};

// Runs request's generation on the worker of a BackgroundJob, a token per Generation::next():
// once checked, started(start) on the GUI thread; after each token stepDone(step, count of
// non-positive denominators so far) on the GUI thread and progress (tokens). A followed head that
// cannot be followed (a layer left exact, local attention, over the budget) does not stop the
// run: it is generated without it and the note says why. Throws as Generation does (InputError,
// ResourceError; Cancelled between tokens, or between layers within one, once cancelled).
void runGenerationJob(GenerationRequest request, JobContext& context,
                      const std::function<void(GenerationStart)>& started,
                      const std::function<void(GenerationStep, qint64)>& stepDone);

}  // namespace attnlab::ui

#include "ui/generation/generation_job.h"

#include "errors.h"
#include "ui/common/window_hints.h"
#include "inputs/model_input.h"

#include <algorithm>

namespace attnlab::ui {

void runGenerationJob(GenerationRequest request, JobContext& context,
                      const std::function<void(GenerationStart)>& started,
                      const std::function<void(GenerationStep, qint64)>& stepDone)
{
    const std::function<bool()> cancelled = context.cancelledCheck();
    GenerationStart start;
    start.model = loadModel(request.modelPath, request.budget);
    auto generation =
        std::make_unique<Generation>(start.model, request.spec, request.budget, cancelled);
    GenerationSpec& spec = request.spec;
    if (spec.followLayer >= 0) {
        const std::vector<int>& replaced = generation->replacedLayers();
        try {
            start.followed = std::make_shared<FollowedSteps>(
                spec.approximation, spec.followLayer, spec.followHead,
                std::find(replaced.begin(), replaced.end(), spec.followLayer) != replaced.end(),
                Eigen::Index(generation->promptIds().size()) - 1 + spec.tokens,
                start.model->headDim(), request.budget);
        } catch (const InputError& e) {
            start.followNote = windowMessage(e.message(), remediesOf(e));
        } catch (const ResourceError& e) {
            start.followNote = windowMessage(e.message(), remediesOf(e));
        }
        if (!start.followed) {  // generated without reporting the head
            spec.followLayer = -1;
            generation = std::make_unique<Generation>(start.model, spec, request.budget, cancelled);
        }
    }
    start.promptIds = generation->promptIds();
    start.replacedLayers = generation->replacedLayers();
    context.post([started, start = std::move(start)]() mutable { started(std::move(start)); });

    const int total = spec.tokens;
    context.setProgress(0, total);
    while (!generation->finished()) {
        GenerationStep step = generation->next();
        context.setProgress(generation->stepsDone(), total);
        context.post([stepDone, step = std::move(step),
                      nonPositive = qint64(generation->nonPositiveDenominators())]() mutable {
            stepDone(std::move(step), nonPositive);
        });
    }
}

}  // namespace attnlab::ui

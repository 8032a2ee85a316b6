#include "ui/stepper/stepper_job.h"

#include "attention/feature_maps.h"
#include "errors.h"
#include "ui/common/window_hints.h"

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

StepperData computeStepper(const StepperJob& job, const std::function<bool()>& cancelled)
{
    StepperData data;
    requireFeatureState(job.spec);
    const AttentionInput& input = *job.input;
    data.generation = job.generation;
    data.input = job.input;
    double matrixBytes = job.keptMatrixBytes;
    if (job.whole) {
        ExperimentSpec causal = job.spec;
        causal.causal = true;
        ComputeOptions options;
        options.matrices = true;
        options.kernels = false;
        options.features = false;
        options.budget = job.budget;
        options.cancelled = cancelled;
        try {
            ExperimentResult result = compute(causal, input, options);
            HeadResult& head = result.heads[std::size_t(job.head)];
            data.exactAttention = std::make_shared<const MatrixD>(head.attentionExact.toDouble());
            data.approxAttention = std::make_shared<const MatrixD>(head.attentionApprox.toDouble());
            matrixBytes = 8.0 * double(data.exactAttention->size() + data.approxAttention->size());
        } catch (const ResourceError& e) {
            data.matricesNote = windowMessage(e.message(), remediesOf(e));
        }
    }

    const Eigen::Index length = input.length();
    const Eigen::Index features = featureCountOf(job.spec.approximation, int(input.headDim()));
    const Eigen::Index valueDim = input.valueDim();
    data.allStatesBytes = causalStepsBytes(length, features, valueDim, length, true);
    CausalStepsOptions options;
    options.head = job.head;
    options.features = true;
    options.budget = job.budget;
    options.cancelled = cancelled;
    const double available = double(job.budget.bytes()) - matrixBytes;
    if (data.allStatesBytes > available) {
        const double perState = 8.0 * double(features) * double(valueDim);
        const double room = available - causalStepsBytes(length, features, valueDim, 0, true);
        const Eigen::Index window =
            std::clamp<Eigen::Index>(Eigen::Index(std::floor(room / perState)), 1, length);
        options.statesFrom = std::clamp<Eigen::Index>(job.around - window / 4, 0, length - window);
        options.statesTo = options.statesFrom + window;
    }
    data.steps = std::make_shared<const CausalSteps>(causalSteps(job.spec, input, options));
    return data;
}

}  // namespace attnlab::ui

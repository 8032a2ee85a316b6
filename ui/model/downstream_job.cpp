#include "model/downstream_job.h"

#include "experiment/image_loader.h"
#include "inputs/model_input.h"
#include "worker_outcome.h"

#include <QFileInfo>

#include <numeric>

namespace attnlab::ui {

void runDownstreamJob(DownstreamJob& job, bool replaceAll, QPromise<void>& promise)
{
    const WorkerOutcome outcome = runOnWorker([&] {
        const ExperimentSpec& first = job.cases.front().first;
        job.modelFolder = modelFolder(first.input.modelPath);
        // compare(spec, layers, cancelled): one comparison on the model of the first case.
        std::function<DownstreamComparison(const ExperimentSpec&, const std::vector<int>&,
                                           const std::function<bool()>&)>
            compare;
        if (modelArchitectureOf(first.input.modelPath) == ModelArchitecture::Vit) {
            const std::shared_ptr<const VitModel> model = loadVitModel(first.input.modelPath);
            job.layerCount = model->config().layers;
            job.classes = true;
            job.labels = {QFileInfo(first.input.imagePath).fileName()};
            job.outcomeName = [names = model->classNames()](int id) { return names.value(id); };
            const PixelTensor pixels = model->preprocess(
                loadImagePixels(first.input.imagePath, 0), first.input.imagePath);
            const std::shared_ptr<const ForwardResult> exact = cachedForward(model, pixels);
            compare = [model, pixels, exact](const ExperimentSpec& spec,
                                             const std::vector<int>& layers,
                                             const std::function<bool()>& cancelled) {
                return compareDownstream(*model, pixels, *exact, spec, layers, cancelled);
            };
        } else {
            const std::shared_ptr<const Gpt2Model> model = loadModel(first.input.modelPath);
            job.layerCount = model->config().layers;
            const ModelTokens tokens =
                modelTokens(*model, first.input.text, first.input.keepLastTokens);
            job.labels = tokens.labels;
            job.notes = tokens.notes;
            job.outcomeName = [model](int id) { return model->tokenizer().label(id); };
            // The exact run's Q, K, V and logits: modelInput checks them against the budget.
            buildInput(first.input, nullptr, job.budget);
            const std::shared_ptr<const ForwardResult> exact = cachedForward(model, tokens.ids);
            compare = [model, ids = tokens.ids, exact](const ExperimentSpec& spec,
                                                       const std::vector<int>& layers,
                                                       const std::function<bool()>& cancelled) {
                return compareDownstream(*model, ids, *exact, spec, layers, cancelled);
            };
        }
        promise.setProgressRange(0, int(job.cases.size()));
        const auto cancelled = [&] { return job.cancel.load() || promise.isCanceled(); };
        for (std::size_t i = 0; i < job.cases.size(); ++i) {
            auto& [spec, layers] = job.cases[i];
            if (replaceAll && !job.sweep) {  // the model's size is known only now
                layers.resize(std::size_t(job.layerCount));
                std::iota(layers.begin(), layers.end(), 0);
            }
            auto comparison =
                std::make_shared<DownstreamComparison>(compare(spec, layers, cancelled));
            job.rows.push_back(modelEvalRow(spec, *comparison, job.layerCount));
            job.comparison = std::move(comparison);
            promise.setProgressValue(int(i) + 1);
        }
    });
    job.cancelled = outcome.cancelled;
    job.error = outcome.error;
}

}  // namespace attnlab::ui

#include "model/downstream_job.h"

#include "errors.h"
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
        int tokens = 0;  // a prediction's input: the text's tokens, or an image's patches and [CLS]
        if (modelArchitectureOf(first.input.modelPath) == ModelArchitecture::Vit) {
            const std::shared_ptr<const VitModel> model = loadVitModel(first.input.modelPath);
            job.layerCount = model->config().layers;
            job.classes = true;
            tokens = model->config().tokenCount();
            job.outcomeName = [names = model->classNames()](int id) { return names.value(id); };
            QStringList files{first.input.imagePath};
            if (job.imageFolder) {
                files = imageFilesIn(QFileInfo(first.input.imagePath).absolutePath());
                if (files.size() > kMaxFolderImages) {
                    job.notes.append(QStringLiteral("The first %1 of the folder's %2 images.")
                                         .arg(kMaxFolderImages)
                                         .arg(files.size()));
                    files = files.mid(0, kMaxFolderImages);
                }
            }
            // Each image as the model reads it, with the model's own forward pass.
            std::vector<std::pair<PixelTensor, std::shared_ptr<const ForwardResult>>> images;
            for (const QString& file : files) {
                if (job.cancel)
                    throw Cancelled();
                PixelTensor pixels = model->preprocess(loadImagePixels(file, 0), file);
                auto exact = cachedForward(model, pixels);
                images.emplace_back(std::move(pixels), std::move(exact));
                job.labels.append(QFileInfo(file).fileName());
            }
            compare = [model, images = std::move(images)](const ExperimentSpec& spec,
                                                          const std::vector<int>& layers,
                                                          const std::function<bool()>& cancelled) {
                std::vector<DownstreamComparison> comparisons;
                for (const auto& [pixels, exact] : images)
                    comparisons.push_back(
                        compareDownstream(*model, pixels, *exact, spec, layers, cancelled));
                return combinedComparison(comparisons);
            };
        } else {
            const std::shared_ptr<const Gpt2Model> model = loadModel(first.input.modelPath);
            job.layerCount = model->config().layers;
            const ModelTokens text =
                modelTokens(*model, first.input.text, first.input.keepLastTokens);
            tokens = int(text.ids.size());
            job.labels = text.labels;
            job.notes = text.notes;
            job.outcomeName = [model](int id) { return model->tokenizer().label(id); };
            // The exact run's Q, K, V and logits: modelInput checks them against the budget.
            buildInput(first.input, nullptr, job.budget);
            const std::shared_ptr<const ForwardResult> exact = cachedForward(model, text.ids);
            compare = [model, ids = text.ids, exact](const ExperimentSpec& spec,
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
            job.rows.back().tokens = tokens;
            job.comparison = std::move(comparison);
            promise.setProgressValue(int(i) + 1);
        }
    });
    job.cancelled = outcome.cancelled;
    job.error = outcome.error;
}

}  // namespace attnlab::ui

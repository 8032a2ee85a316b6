#include "model/downstream_job.h"

#include "errors.h"
#include "attention/approximation.h"
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
        // The inputs the cases are compared on (a text, or one image or more); open(i) reads
        // input i through buildInput (the budget checked, the model's own forward pass run)
        // and gives its comparison of a case. One input's forward pass is kept at a time.
        using Compare = std::function<DownstreamComparison(
            const ExperimentSpec&, const std::vector<int>&, const std::function<bool()>&)>;
        std::function<Compare(int)> open;
        int inputs = 1;
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
            for (const QString& file : files)
                job.labels.append(QFileInfo(file).fileName());
            inputs = int(files.size());
            open = [&job, model, files, input = first.input](int i) -> Compare {
                InputSpec image = input;
                image.imagePath = files[i];
                const ImagePixels pixels = loadImagePixels(image.imagePath, 0);
                ModelRun run;
                buildInput(image, &pixels, job.budget, &run);
                return [model, run](const ExperimentSpec& spec, const std::vector<int>& layers,
                                    const std::function<bool()>& cancelled) {
                    return compareDownstream(*model, run.pixels, *run.forward, spec, layers,
                                             cancelled);
                };
            };
        } else {
            const std::shared_ptr<const LanguageModel> model = loadModel(first.input.modelPath);
            job.layerCount = model->layers();
            const ModelTokens text =
                modelTokens(*model, first.input.text, first.input.keepLastTokens);
            tokens = int(text.ids.size());
            job.labels = text.labels;
            job.notes = text.notes;
            job.outcomeName = [model](int id) { return model->tokenizer().label(id); };
            open = [&job, model, ids = text.ids, input = first.input](int) -> Compare {
                ModelRun run;
                buildInput(input, nullptr, job.budget, &run);
                return [model, ids, exact = run.forward](const ExperimentSpec& spec,
                                                         const std::vector<int>& layers,
                                                         const std::function<bool()>& cancelled) {
                    return compareDownstream(*model, ids, *exact, spec, layers, cancelled);
                };
            };
        }
        if (replaceAll && !job.sweep) {  // the model's size is known only now
            for (auto& [spec, layers] : job.cases) {
                layers.resize(std::size_t(job.layerCount));
                std::iota(layers.begin(), layers.end(), 0);
            }
        }
        // m past what the method takes (Nystrom's landmarks past L) is said once for the rows.
        std::vector<int> sizes;
        for (const auto& [spec, layers] : job.cases)
            if (!spec.exactMethod)
                sizes.push_back(spec.approximation.features);
        const QString sizeNote = job.cases.front().first.exactMethod
                                     ? QString()
                                     : sizePastLengthNote(job.cases.front().first.approximation.kind,
                                                          sizes, tokens);
        if (!sizeNote.isEmpty())
            job.notes.append(sizeNote);
        const int cases = int(job.cases.size());
        promise.setProgressRange(0, inputs * cases);
        const auto cancelled = [&] { return job.cancel.load() || promise.isCanceled(); };
        std::vector<std::vector<DownstreamComparison>> comparisons(job.cases.size());
        for (int i = 0; i < inputs; ++i) {
            if (cancelled())
                throw Cancelled();
            const Compare compare = open(i);
            for (int c = 0; c < cases; ++c) {
                const auto& [spec, layers] = job.cases[std::size_t(c)];
                comparisons[std::size_t(c)].push_back(compare(spec, layers, cancelled));
                promise.setProgressValue(i * cases + c + 1);
            }
        }
        for (int c = 0; c < cases; ++c) {
            auto comparison = std::make_shared<DownstreamComparison>(
                combinedComparison(comparisons[std::size_t(c)]));
            job.rows.push_back(modelEvalRow(job.cases[std::size_t(c)].first, *comparison,
                                            job.layerCount));
            job.rows.back().tokens = tokens;
            job.comparison = std::move(comparison);
        }
    });
    job.cancelled = outcome.cancelled;
    job.error = outcome.error;
}

}  // namespace attnlab::ui

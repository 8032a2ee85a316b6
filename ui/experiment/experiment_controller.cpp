#include "ui/experiment/experiment_controller.h"

#include "ui/images/image_loader.h"
#include "cancellation.h"
#include "inputs/model_input.h"

#include <QJsonDocument>
#include <QThreadPool>

#include <utility>

namespace attnlab::ui {

namespace {

QString inputKeyOf(const InputSpec& input)
{
    ExperimentSpec spec;
    spec.input = input;
    return QString::fromUtf8(QJsonDocument(spec.toJson().value(QLatin1String("input")).toObject())
                                 .toJson(QJsonDocument::Compact));
}

// The worker: builds the input unless the previous one can be reused, then computes;
// compute() hands announce() largeRunNotice's text when the run is long or large.
Computation runComputation(const ExperimentSpec& spec, const Computation& previous,
                           const MemoryBudget& budget, JobContext& context,
                           const std::function<void(const QString&)>& announce);

}  // namespace

ExperimentController::ExperimentController(QObject* parent) : QObject(parent)
{
    connect(&m_job, &BackgroundJob::failed, this, [this](const QString& message) {
        setBusy(false);
        emit failed(message);
    });
}

void ExperimentController::setSpec(const ExperimentSpec& spec)
{
    m_spec = spec;
    emit runNotice(QString());
    // The notice is sent from the worker to the GUI thread; the job drops it once the
    // computation is superseded.
    m_job.start(
        [this, spec, previous = m_current, budget = m_budget](JobContext& context) {
            const auto announce = [this, &context](const QString& notice) {
                context.post([this, notice] { emit runNotice(notice); });
            };
            return runComputation(spec, previous, budget, context, announce);
        },
        [this](Computation computation) { finished(std::move(computation)); });
    setBusy(true);
}

void ExperimentController::finished(Computation computation)
{
    setBusy(false);
    Computation previous = std::exchange(m_current, std::move(computation));
    emit resultReady();  // the views now show the new result and hold none of the previous one
    // The previous result's matrices (64 MiB each at L = 4096) go back to the system on a worker:
    // unmapping them would cost the GUI thread about ten milliseconds.
    QThreadPool::globalInstance()->start(
        [previous = std::move(previous)]() mutable { previous = Computation(); });
}

void ExperimentController::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    emit busyChanged(busy);
}

namespace {

Computation runComputation(const ExperimentSpec& spec, const Computation& previous,
                           const MemoryBudget& budget, JobContext& context,
                           const std::function<void(const QString&)>& announce)
{
    // Building the input polls it too (drawing the projections of many wide heads takes
    // seconds): a newer request or the window closing stops it.
    const CancellationScope cancellation(context.cancelledCheck());
    Computation computation;
    computation.inputKey = inputKeyOf(spec.input);
    ComputeOptions options;
    const bool vit = spec.input.kind == InputKind::Model &&
                     modelArchitectureOf(spec.input.modelPath) == ModelArchitecture::Vit;
    if (previous.input && previous.inputKey == computation.inputKey) {
        computation.input = previous.input;
        computation.patchImage = previous.patchImage;
        computation.forward = previous.forward;
        computation.heads = previous.heads;
        options.sameInputAs = previous.result;
    } else if (vit) {
        // A ViT resizes the decoded image itself; the page shows it as the model reads it.
        VitReading reading = readWithVit(spec.input, budget);
        computation.input = std::make_shared<const AttentionInput>(std::move(reading.input));
        computation.patchImage = std::move(reading.image);
        computation.forward = std::move(reading.forward);
        computation.heads = reading.heads;
    } else if (spec.input.kind == InputKind::Image) {
        const ImagePixels pixels = loadImagePixels(spec.input.imagePath, spec.input.imageSize);
        computation.input =
            std::make_shared<const AttentionInput>(buildInput(spec.input, &pixels, budget));
        computation.patchImage = patchImage(pixels, spec.input.patchSize);
    } else {
        computation.input =
            std::make_shared<const AttentionInput>(buildInput(spec.input, nullptr, budget));
    }
    options.kernels = false;  // A and A^ are exported by `attention-lab compute`
    options.pyramids = true;
    options.budget = budget;
    options.cancelled = context.cancelledCheck();
    options.announce = announce;
    computation.result =
        std::make_shared<const ExperimentResult>(compute(spec, *computation.input, options));
    if (computation.forward) {
        // The rollout over every layer, for the image page.
        computation.rollout = std::make_shared<const AttentionRollout>(
            attentionRollout(*computation.forward, computation.heads, spec));
    }
    return computation;
}

}  // namespace

}  // namespace attnlab::ui

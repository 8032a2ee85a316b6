#include "experiment/experiment_controller.h"

#include "errors.h"
#include "experiment/image_loader.h"
#include "inputs/model_input.h"
#include "worker_outcome.h"

#include <QJsonDocument>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

namespace attnlab::ui {

struct ComputationOutcome {
    Computation computation;
    QString error;
    bool cancelled = false;
};

namespace {

QString inputKeyOf(const InputSpec& input)
{
    ExperimentSpec spec;
    spec.input = input;
    return QString::fromUtf8(
        QJsonDocument(spec.toJson().value(QLatin1String("input")).toObject()).toJson(
            QJsonDocument::Compact));
}

// The worker: builds the input unless the previous one can be reused, then computes;
// compute() hands announce() largeRunNotice's text when the run is long or large.
void runComputation(const ExperimentSpec& spec, const Computation& previous,
                    const MemoryBudget& budget, const std::shared_ptr<std::atomic<bool>>& cancel,
                    const std::function<void(const QString&)>& announce,
                    ComputationOutcome* outcome);

}  // namespace

ExperimentController::ExperimentController(QObject* parent) : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &ExperimentController::finished);
}

ExperimentController::~ExperimentController()
{
    if (m_cancel)
        *m_cancel = true;
    m_watcher.waitForFinished();
}

void ExperimentController::setSpec(const ExperimentSpec& spec)
{
    m_spec = spec;
    m_pending = true;
    if (m_watcher.isRunning()) {
        *m_cancel = true;  // finished() starts the newest spec
        return;
    }
    start();
}

void ExperimentController::start()
{
    m_pending = false;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_outcome = std::make_shared<ComputationOutcome>();
    emit runNotice(QString());
    // Sent from the worker to the GUI thread; dropped once the computation is superseded (and
    // by Qt when the controller is gone).
    const auto announce = [this, cancel = m_cancel](const QString& notice) {
        QMetaObject::invokeMethod(
            this,
            [this, cancel, notice] {
                if (!*cancel)
                    emit runNotice(notice);
            },
            Qt::QueuedConnection);
    };
    m_watcher.setFuture(QtConcurrent::run(
        &m_pool, [spec = m_spec, previous = m_current, budget = m_budget, cancel = m_cancel,
                  announce, outcome = m_outcome] {
            runComputation(spec, previous, budget, cancel, announce, outcome.get());
        }));
    if (!m_busy) {
        m_busy = true;
        emit busyChanged(true);
    }
}

void ExperimentController::finished()
{
    const std::shared_ptr<ComputationOutcome> outcome = m_outcome;
    if (m_pending) {  // a newer spec arrived: drop this outcome and compute that one
        start();
        return;
    }
    m_busy = false;
    emit busyChanged(false);
    if (outcome->cancelled)
        return;
    if (!outcome->error.isEmpty()) {
        emit failed(outcome->error);
        return;
    }
    Computation previous = std::exchange(m_current, outcome->computation);
    emit resultReady();  // the views now show the new result and hold none of the previous one
    // The previous result's matrices (64 MiB each at L = 4096) go back to the system on a worker:
    // unmapping them would cost the GUI thread about ten milliseconds.
    QThreadPool::globalInstance()->start([previous = std::move(previous)]() mutable {
        previous = Computation();
    });
}

namespace {

void runComputation(const ExperimentSpec& spec, const Computation& previous,
                    const MemoryBudget& budget, const std::shared_ptr<std::atomic<bool>>& cancel,
                    const std::function<void(const QString&)>& announce,
                    ComputationOutcome* outcome)
{
    const WorkerOutcome ended = runOnWorker([&] {
        Computation& computation = outcome->computation;
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
        options.cancelled = [cancel] { return cancel->load(); };
        options.announce = announce;
        computation.result =
            std::make_shared<const ExperimentResult>(compute(spec, *computation.input, options));
        if (computation.forward) {
            // The rollout over every layer, for the image page.
            computation.rollout = std::make_shared<const AttentionRollout>(
                attentionRollout(*computation.forward, computation.heads, spec));
        }
    });
    outcome->cancelled = ended.cancelled;
    outcome->error = ended.error;
}

}  // namespace

}  // namespace attnlab::ui

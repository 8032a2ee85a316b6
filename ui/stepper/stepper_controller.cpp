// The Stepper page's controller: the worker job (runJob), the requests that start it and the
// results that come back, the position, playing and pausing, and the page's session state.

#include "stepper/stepper_jobs.h"
#include "stepper/stepper_style.h"
#include "stepper/stepper_view.h"

#include "errors.h"
#include "worker_outcome.h"

#include <QTimer>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

using namespace stepper;

// ---------------------------------------------------------------------------------------------
// The worker's job

void runJob(const StepperJob& job, const std::atomic<bool>& cancel, StepperOutcome* outcome)
{
    const WorkerOutcome ended = runOnWorker([&] {
        requireFeatureState(job.spec);
        const AttentionInput& input = *job.input;
        StepperData& data = outcome->data;
        data.generation = job.generation;
        data.input = job.input;
        const auto cancelled = [&cancel] { return cancel.load(); };
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
                data.exactAttention =
                    std::make_shared<const MatrixD>(head.attentionExact.toDouble());
                data.approxAttention =
                    std::make_shared<const MatrixD>(head.attentionApprox.toDouble());
                matrixBytes = 8.0 * double(data.exactAttention->size() +
                                           data.approxAttention->size());
            } catch (const ResourceError& e) {
                data.matricesNote = e.message();
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
            const double room =
                available - causalStepsBytes(length, features, valueDim, 0, true);
            const Eigen::Index window =
                std::clamp<Eigen::Index>(Eigen::Index(std::floor(room / perState)), 1, length);
            options.statesFrom =
                std::clamp<Eigen::Index>(job.around - window / 4, 0, length - window);
            options.statesTo = options.statesFrom + window;
        }
        data.steps = std::make_shared<const CausalSteps>(causalSteps(job.spec, input, options));
    });
    outcome->cancelled = ended.cancelled;
    outcome->error = ended.error;
}

// ---------------------------------------------------------------------------------------------
// StepperView: the worker

void StepperView::setExperiment(const ExperimentSpec& spec,
                                std::shared_ptr<const AttentionInput> input)
{
    m_spec = spec;
    m_input = std::move(input);
    if (!m_input) {
        ++m_generation;
        showError(tr("There is no input to step through."));
        return;
    }
    m_head = std::clamp(m_head, 0, int(m_input->heads.size()) - 1);
    requestWhole();
}

void StepperView::setHead(int head)
{
    const int clamped = m_input ? std::clamp(head, 0, int(m_input->heads.size()) - 1)
                                : std::max(head, 0);
    if (clamped == m_head)
        return;
    m_head = clamped;
    {
        const QSignalBlocker block(m_headBox);
        m_headBox->setValue(m_head);
    }
    if (m_input)
        requestWhole();
}

void StepperView::requestWhole()
{
    ++m_generation;
    m_wholePending = true;
    m_windowPending = false;
    if (m_watcher.isRunning())
        *m_cancel = true;  // finished() starts the newest request
    else
        start();
}

void StepperView::requestWindow()
{
    m_windowPending = true;
    if (!m_watcher.isRunning())
        start();
    else if (!m_running->whole)
        *m_cancel = true;  // a newer position wins; a whole job places its window itself
}

void StepperView::start()
{
    if (m_watcher.isRunning())
        return;
    auto job = std::make_unique<StepperJob>();
    if (m_wholePending) {
        job->spec = m_spec;
        job->input = m_input;
        job->head = m_head;
        job->generation = m_generation;
    } else if (m_windowPending && m_data && !stateAvailable(m_position)) {
        job->whole = false;
        job->spec = m_data->steps->spec;
        job->input = m_data->input;
        job->head = m_data->steps->head;
        job->generation = m_data->generation;
        if (m_data->exactAttention)
            job->keptMatrixBytes = 8.0 * double(m_data->exactAttention->size() +
                                               m_data->approxAttention->size());
    } else {
        m_windowPending = false;
        setBusy(false);
        return;
    }
    m_wholePending = false;
    m_windowPending = false;
    job->budget = m_budget;
    job->around = m_position;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_outcome = std::make_shared<StepperOutcome>();
    m_running = std::move(job);
    m_watcher.setFuture(QtConcurrent::run(
        &m_pool, [job = *m_running, cancel = m_cancel, outcome = m_outcome] {
            runJob(job, *cancel, outcome.get());
        }));
    setBusy(true);
}

void StepperView::finished()
{
    const std::shared_ptr<StepperOutcome> outcome = m_outcome;
    const std::unique_ptr<StepperJob> job = std::move(m_running);
    if (!outcome->cancelled) {
        if (job->whole && job->generation == m_generation) {
            if (outcome->error.isEmpty())
                showData(std::make_shared<StepperData>(std::move(outcome->data)));
            else
                showError(outcome->error);
        } else if (!job->whole && m_data && m_data->generation == job->generation) {
            if (outcome->error.isEmpty()) {
                m_data->steps = outcome->data.steps;
                showPosition();
            } else {
                showError(outcome->error);
            }
        }
    }
    start();
}

void StepperView::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    emit busyChanged(busy);
}

int StepperView::length() const
{
    return m_data ? int(m_data->steps->length()) : 0;
}

std::shared_ptr<const CausalSteps> StepperView::steps() const
{
    return m_data ? m_data->steps : nullptr;
}

bool StepperView::keepsAllStates() const
{
    return m_data && m_data->steps->statesFrom == 0 &&
           m_data->steps->statesTo == m_data->steps->length();
}

bool StepperView::stateAvailable(int t) const
{
    return m_data && t >= m_data->steps->statesFrom && t < m_data->steps->statesTo;
}

QString StepperView::errorMessage() const
{
    return m_errorBar->isHidden() ? QString() : m_errorBar->text();
}

void StepperView::showError(const QString& message)
{
    m_errorBar->setText(m_data ? tr("The stepper cannot run this: %1\nThe page still shows the "
                                    "previous experiment.")
                                     .arg(message)
                               : tr("The stepper cannot run this: %1").arg(message));
    m_errorBar->show();
    emit failed(message);
}

// ---------------------------------------------------------------------------------------------
// StepperView: stepping

void StepperView::setPosition(int position)
{
    const int clamped =
        length() > 0 ? std::clamp(position, 0, length() - 1) : std::max(0, position);
    if (clamped == m_position && (m_shownPosition == clamped || !m_data))
        return;
    const bool changed = clamped != m_position;
    m_position = clamped;
    showPosition();
    if (changed)
        emit positionChanged(m_position);
}

void StepperView::play()
{
    if (length() < 2 || m_playing)
        return;
    if (m_position >= length() - 1)
        setPosition(0);
    m_playing = true;
    m_timer->start(int(std::lround(1000.0 / m_speed)));
    updatePlayButton();
    emit playingChanged(true);
}

void StepperView::pause()
{
    if (!m_playing)
        return;
    m_playing = false;
    m_timer->stop();
    updatePlayButton();
    emit playingChanged(false);
}

void StepperView::setSpeed(double stepsPerSecond)
{
    m_speed = std::clamp(stepsPerSecond, kMinSpeed, kMaxSpeed);
    {
        const QSignalBlocker block(m_speedBox);
        m_speedBox->setValue(m_speed);
    }
    m_timer->setInterval(int(std::lround(1000.0 / m_speed)));
}

void StepperView::advance()
{
    if (m_shownPosition != m_position)
        return;  // the states of this step are still being computed
    if (m_position < length() - 1)
        setPosition(m_position + 1);
    if (m_position >= length() - 1)
        pause();
}

void StepperView::updatePlayButton()
{
    m_playButton->setIcon(
        style()->standardIcon(m_playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    m_playButton->setText(m_playing ? tr("Pause") : tr("Play"));
}

QJsonObject StepperView::state() const
{
    return QJsonObject{{QStringLiteral("position"), m_position},
                       {QStringLiteral("speed"), m_speed},
                       {QStringLiteral("head"), m_head}};
}

void StepperView::setState(const QJsonObject& state)
{
    if (state.contains(QLatin1String("speed")))
        setSpeed(state.value(QLatin1String("speed")).toDouble(m_speed));
    if (state.contains(QLatin1String("head")))
        setHead(state.value(QLatin1String("head")).toInt(m_head));
    if (state.contains(QLatin1String("position")))
        setPosition(state.value(QLatin1String("position")).toInt(m_position));
}

}  // namespace attnlab::ui

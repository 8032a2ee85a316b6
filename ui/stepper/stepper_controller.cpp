#include "ui/stepper/stepper_controller.h"

#include "ui/stepper/stepper_job.h"

#include <algorithm>

namespace attnlab::ui {

StepperController::StepperController(QObject* parent) : QObject(parent)
{
    connect(&m_job, &BackgroundJob::runningChanged, this, &StepperController::busyChanged);
    connect(&m_job, &BackgroundJob::failed, this, &StepperController::failed);
}

void StepperController::setExperiment(const ExperimentSpec& spec,
                                      std::shared_ptr<const AttentionInput> input, int position)
{
    m_spec = spec;
    m_input = std::move(input);
    if (!m_input) {
        ++m_generation;
        emit failed(tr("There is no input to step through."));
        return;
    }
    m_head = std::clamp(m_head, 0, int(m_input->heads.size()) - 1);
    requestWhole(position);
}

bool StepperController::setHead(int head, int position)
{
    const int clamped =
        m_input ? std::clamp(head, 0, int(m_input->heads.size()) - 1) : std::max(head, 0);
    if (clamped == m_head)
        return false;
    m_head = clamped;
    if (m_input)
        requestWhole(position);
    return true;
}

void StepperController::requestWhole(int position)
{
    ++m_generation;
    StepperJob job;
    job.spec = m_spec;
    job.input = m_input;
    job.head = m_head;
    job.generation = m_generation;
    start(job, position);
}

void StepperController::requestStates(int position)
{
    // A whole job places its window itself (and the page asks again when the position has moved
    // out of it); a newer position wins over a window job.
    if ((m_job.isRunning() && m_wholeRunning) || !m_data || stateAvailable(position))
        return;
    StepperJob job;
    job.whole = false;
    job.spec = m_data->steps->spec;
    job.input = m_data->input;
    job.head = m_data->steps->head;
    job.generation = m_data->generation;
    if (m_data->exactAttention)
        job.keptMatrixBytes =
            8.0 * double(m_data->exactAttention->size() + m_data->approxAttention->size());
    start(job, position);
}

void StepperController::start(StepperJob job, int position)
{
    job.budget = m_budget;
    job.around = position;
    m_wholeRunning = job.whole;
    m_job.start(
        [job](JobContext& context) { return computeStepper(job, context.cancelledCheck()); },
        [this, whole = job.whole, generation = job.generation](StepperData data) {
            if (whole && generation == m_generation) {
                m_data = std::make_shared<StepperData>(std::move(data));
                emit computed();
            } else if (!whole && m_data && m_data->generation == generation) {
                m_data->steps = data.steps;
                emit statesComputed();
            }
        });
}

std::shared_ptr<const CausalSteps> StepperController::steps() const
{
    return m_data ? m_data->steps : nullptr;
}

int StepperController::length() const
{
    return m_data ? int(m_data->steps->length()) : 0;
}

bool StepperController::keepsAllStates() const
{
    return m_data && m_data->steps->statesFrom == 0 &&
           m_data->steps->statesTo == m_data->steps->length();
}

bool StepperController::stateAvailable(int t) const
{
    return m_data && t >= m_data->steps->statesFrom && t < m_data->steps->statesTo;
}

}  // namespace attnlab::ui

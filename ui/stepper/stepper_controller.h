#pragma once

#include "ui/common/background_job.h"
#include "experiment.h"
#include "inputs/inputs.h"
#include "memory_budget.h"
#include "sweeps/causal_steps.h"

#include <QObject>

#include <memory>

namespace attnlab::ui {

struct StepperData;
struct StepperJob;

// The Stepper page's computation: the experiment it steps through (a spec made causal, its input,
// one head) computed on a BackgroundJob (computeStepper: the causal steps with phi(Q), phi(K)
// and the states S_i, and compute() for the causal P and P^), and the data it gave, kept until a
// newer computation replaces it. The newest request wins. A new experiment or head recomputes
// everything; when the budget keeps only a window of states, a position outside it computes the
// window around that position, whose states then replace those of the data shown. Destroying
// the controller cancels the running computation and waits for it.
class StepperController : public QObject {
    Q_OBJECT

public:
    explicit StepperController(QObject* parent = nullptr);

    // Computes spec on head() of input, its window of states (if only a window fits) placed
    // around `position`. A null input fails with a message.
    void setExperiment(const ExperimentSpec& spec, std::shared_ptr<const AttentionInput> input,
                       int position);
    // The head of the input (0-based; clamped to the input's heads); a change recomputes, the
    // window placed around `position`. False when the head stays as it was.
    bool setHead(int head, int position);
    int head() const { return m_head; }
    // The budget for what the page keeps (states, P and P^); the next computation uses it.
    void setMemoryBudget(const MemoryBudget& budget) { m_budget = budget; }
    const MemoryBudget& memoryBudget() const { return m_budget; }
    // Computes the states around `position` unless they are kept (or a whole computation, which
    // places its window itself, is running).
    void requestStates(int position);

    // The computation shown (null before the first), and what it keeps.
    std::shared_ptr<const StepperData> data() const { return m_data; }
    std::shared_ptr<const CausalSteps> steps() const;
    int length() const;  // the tokens L of data(), 0 before the first
    bool keepsAllStates() const;
    // The state S_i of position t is kept.
    bool stateAvailable(int t) const;
    // Counts setExperiment and setHead calls: data of an older count is stale.
    quint64 generation() const { return m_generation; }
    // A computation is running or waiting.
    bool isBusy() const { return m_job.isRunning(); }

signals:
    // data() holds the result of the latest setExperiment or setHead.
    void computed();
    // data() holds the states of the window just computed.
    void statesComputed();
    // The latest request could not be computed; data() is the previous one.
    void failed(const QString& message);
    void busyChanged(bool busy);

private:
    void requestWhole(int position);
    void start(StepperJob job, int position);

    ExperimentSpec m_spec;
    std::shared_ptr<const AttentionInput> m_input;
    int m_head = 0;
    MemoryBudget m_budget;
    std::shared_ptr<StepperData> m_data;
    quint64 m_generation = 0;
    BackgroundJob m_job;
    bool m_wholeRunning = false;  // the latest job started is a whole experiment
};

}  // namespace attnlab::ui

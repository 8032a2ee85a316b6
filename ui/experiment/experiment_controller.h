#pragma once

#include "ui/common/background_job.h"
#include "experiment.h"
#include "inputs/inputs.h"
#include "sweeps/rollout.h"

#include <QImage>
#include <QObject>

#include <memory>

namespace attnlab::ui {

// What one computation produced: the result, the input it ran on, and for image input the image
// as it was split into patches.
struct Computation {
    std::shared_ptr<const ExperimentResult> result;
    std::shared_ptr<const AttentionInput> input;
    QString inputKey;   // the input spec the input was built from, to reuse it
    QImage patchImage;  // image input: the scaled image, cropped to the patch grid (a ViT's:
                        // the image as the model reads it)
    // A ViT's input: its forward pass (every layer's Q, K, V) and the attention rollout over
    // every layer, exact and approximate.
    std::shared_ptr<const ForwardResult> forward;
    int heads = 0;  // per layer of the forward pass
    std::shared_ptr<const AttentionRollout> rollout;
};

// Runs the engine off the GUI thread for the current spec (a BackgroundJob). The newest request
// wins: a computation still running when a newer spec arrives is cancelled and its result dropped;
// only one runs at a time (the engine's own threads do the parallel work). The last good result
// stays until a new one replaces it, so a failed request leaves the view as it was. When only the
// method changes, the input (tokens, embeddings, decoded image, loaded tensors) is reused, and so
// is the exact side of the previous result (P, O and P's pyramid) when the scale, mask and
// precision are unchanged: a new seed, m or feature map computes only the approximation. The engine
// builds the heatmaps' pyramids in its row pass, off the GUI thread. The engine polls the cancel
// flag between its blocks of work (a block of W's draw, of rows of P and P^), so that a superseded
// computation, even of a huge m, stops within milliseconds. Destroying the controller cancels the
// running computation and waits for it.
class ExperimentController : public QObject {
    Q_OBJECT

public:
    explicit ExperimentController(QObject* parent = nullptr);

    const ExperimentSpec& spec() const { return m_spec; }
    // The latest good computation (empty before the first); its spec is result->spec.
    const Computation& current() const { return m_current; }
    bool isBusy() const { return m_busy; }

    void setMemoryBudget(const MemoryBudget& budget) { m_budget = budget; }

public slots:
    // Makes spec the current spec and computes it.
    void setSpec(const ExperimentSpec& spec);

signals:
    // current() now holds the result of the latest spec.
    void resultReady();
    // The latest spec could not be computed (bad input, over the memory budget); current() still
    // holds the previous result.
    void failed(const QString& message);
    void busyChanged(bool busy);
    // What the computation just started is expected to cost, when that is long or large
    // (largeRunNotice in experiment.h: "expected to take about 40 s and 2.1 GiB (m = ...)"), sent
    // once its input is built; an empty notice when a computation starts, which clears the
    // previous one.
    void runNotice(const QString& notice);

private:
    // The computation of m_spec came back.
    void finished(Computation computation);
    void setBusy(bool busy);

    ExperimentSpec m_spec;
    bool m_busy = false;
    Computation m_current;
    MemoryBudget m_budget;
    BackgroundJob m_job;
};

}  // namespace attnlab::ui

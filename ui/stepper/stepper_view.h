#pragma once

#include "experiment.h"
#include "generation/followed_steps.h"
#include "inputs/inputs.h"
#include "memory_budget.h"
#include "ui/plotting/figure_export.h"
#include "sweeps/causal_steps.h"

#include <QJsonObject>
#include <QWidget>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;
class QTimer;
class QToolButton;

namespace attnlab::ui {

class StepperController;
class StepperFrame;
struct StepperData;

// The "Stepper" page: causal linear attention run as a recurrent network, one token at a time
// (docs/design.md section 2.6, the recurrent form; "Transformers are RNNs"):
//   S_i = S_{i-1} + phi(k_i) v_i^T,   z_i = z_{i-1} + phi(k_i),
//   y_i = phi(q_i)^T S_i / phi(q_i)^T z_i.
// At step i = position() + 1 it shows, updating together: phi(k_i) and v_i, their outer product
// being added, the state S_i (C x M) with the cells that changed most outlined, z_i (with the
// phi(k_i) just added stacked on z_{i-1}) and phi(q_i), the output y_i beside the exact causal
// softmax output o_i and their difference, the approximate causal attention matrix P^ filling in
// row by row beside the exact causal P (one colour scale, current row outlined), a formula panel
// with the three equations and their current numbers, the running error of y against o over the
// steps, the agreement of the recurrent and parallel (chunked) forms so far, and the state size.
//
// The engine runs on a worker thread (StepperController: CausalSteps with phi(Q), phi(K) and the
// states, and compute() for the causal P and P^); the newest request wins and the previous frame
// stays until the new one is ready; errors (the method "exact", a bad spec, over the memory
// budget) are shown in the page. Memory: every S_i is kept when causalStepsBytes(L, C, M, L)
// (plus P and P^) fits the memory budget. Otherwise a window of states around the position is
// kept, as many as fit, placed so that stepping forward reaches the window's end late; moving
// outside it recomputes the window on the worker (the frame then follows when it arrives), and
// the page says so. Stepping stays exact: every state shown is the engine's S_i, never an
// interpolation.
//
// Follow mode (follow()): the page steps through a generation's followed head instead
// (GenerationSpec::followLayer and followHead, gathered by the Generate page in a FollowedSteps):
// the same figures, with the S_i, z_i, phi(q_i), phi(k_i) and y_i the generation's recurrence
// reported for every token the approximate run read, growing as the model writes. A bar above
// the controls says which head is followed; Stop following shows the window's experiment again.
class StepperView : public QWidget {
    Q_OBJECT

public:
    explicit StepperView(QWidget* parent = nullptr);

    // Computes the stepper for spec (made causal) on head head() of input, on the worker. The
    // previous frame stays until the result arrives; the position is kept where the new input
    // allows. A null input or a spec the stepper cannot run shows a message in the page.
    void setExperiment(const ExperimentSpec& spec, std::shared_ptr<const AttentionInput> input);

    // The head of the input the stepper runs (0-based; clamped to the input's heads); a change
    // recomputes.
    void setHead(int head);
    int head() const;

    // The budget for what the page keeps (states, P and P^); the next computation uses it.
    void setMemoryBudget(const MemoryBudget& budget);

    // The current token t, 0-based (the step is i = t + 1), and the number of tokens L of the
    // computation shown (0 before the first).
    int position() const { return m_position; }
    int length() const;
    // Moves to token t (clamped to 0..L-1) and shows its frame; emits positionChanged.
    void setPosition(int position);

    bool isPlaying() const { return m_playing; }
    // Steps forward speed() times a second until the last token (from the first when already
    // there); pause() stops.
    void play();
    void pause();
    // Steps per second while playing, clamped to [0.25, 30].
    void setSpeed(double stepsPerSecond);
    double speed() const { return m_speed; }

    // A computation (a whole experiment or a window of states) is running or waiting.
    bool isBusy() const;
    // The message shown in the page's error bar, empty when none is shown.
    QString errorMessage() const;
    // The computation shown, or null before the first.
    std::shared_ptr<const CausalSteps> steps() const;
    // Whether the states S_i of every position are kept (see the class comment).
    bool keepsAllStates() const;

    // Steps through `steps`, a generation's followed head, from now on (its tokens so far; call
    // again when tokens were added: the page stays at the newest step while it was there); the
    // window's experiment is no longer computed, and one given meanwhile waits. Null stops
    // following and shows the window's experiment again. Once the user stopped following a head
    // (Stop following), the page follows it no more.
    void follow(std::shared_ptr<const FollowedSteps> steps);
    bool isFollowing() const { return m_followed != nullptr; }

    // {"position": t, "speed": steps per second, "head": h}, for sessions.
    QJsonObject state() const;
    // Restores what state() wrote; missing fields keep their values. A position beyond the
    // current input is clamped when the computation arrives.
    void setState(const QJsonObject& state);

    // Writes the current frame (the page below the controls: the lines, the tokens, the formula
    // panel and every plot, as laid out now) to path. PNG: at twice the page's resolution,
    // tagged 192 dpi. SVG and PDF: vector (the plots through QCustomPlot::toPainter, text as
    // text; a heatmap inside is an embedded image). Written through a QSaveFile; throws
    // OutputError naming the path when anything fails, leaving no file behind.
    void exportFrame(const QString& path, FigureFormat format);
    // The current frame as exportFrame writes it (writeFigure), for `attention-lab render`.
    PaintedFigure frameFigure();
    // Writes every frame as frame_0001.png, frame_0002.png, ... (numbered by step i, at least
    // four digits) into folder, at the page's resolution, with a cancellable progress dialog;
    // events are processed between frames, so the window stays responsive. Returns the number of
    // frames written (fewer than length() when cancelled or when the experiment changed
    // meanwhile); the position is restored afterwards. Throws OutputError when a file cannot be
    // written.
    int exportAllFrames(const QString& folder);

signals:
    void positionChanged(int position);
    void playingChanged(bool playing);
    void busyChanged(bool busy);
    // The result of the latest setExperiment (or setHead) is shown.
    void experimentShown();
    // The latest request could not be computed; the page keeps the previous frame.
    void failed(const QString& message);
    // Follow mode began or ended (follow()).
    void followingChanged(bool following);

protected:
    // Left / Right: one step back / forward; Space: play or pause; Home / End: first / last.
    void keyPressEvent(QKeyEvent* event) override;
    // Takes the keyboard focus, so that the keys above act on the page.
    void mousePressEvent(QMouseEvent* event) override;
    // Scales the text with the page (see applyTextScale).
    void resizeEvent(QResizeEvent* event) override;
    // Arranges the panels for the page's width once its layouts have run: a page first shown
    // after its data came (a followed generation) was sized while hidden.
    void showEvent(QShowEvent* event) override;

private:
    QWidget* buildControls();
    // Every font of the page at m_textScale times its designed size: the page is designed for
    // a full-screen window on a 1920 x 1080 projector, and its text follows the page's size
    // (within 0.65x to 1.5x) so that a smaller window does not have to scroll.
    void applyTextScale();
    // The control buttons show their texts beside their icons where the page is wide enough for
    // that, their icons only otherwise (with the same tooltips), so that the controls do not set
    // the window's minimum width.
    void fitControls();

    // A new computation arrived: the frame's parts that are the same for every step, the slider
    // and the head box, then the frame at the position.
    void showData();
    // What the page shows: the followed head's data while following, else the controller's.
    std::shared_ptr<const StepperData> shownData() const;
    bool stateAvailable(int t) const;
    QWidget* buildFollowBar();
    void showError(const QString& message);
    // The position changed: the strip, the slider and the labels at once, the frame when its
    // state is at hand (otherwise it asks the controller for it).
    void showPosition();
    // The play timer fired: one step forward, or stop at the last token.
    void advance();
    // The play button's text and icon for m_playing.
    void updatePlayButton();
    // The file dialogs behind the export buttons.
    void exportFrameDialog();
    void exportAllFramesDialog();

    StepperController* m_controller;
    StepperFrame* m_frame;  // everything below the controls, which exports render

    // Follow mode: the generation's head, its data as last shown, and the window's experiment
    // given meanwhile.
    std::shared_ptr<const FollowedSteps> m_followed;
    std::shared_ptr<const StepperData> m_followData;
    int m_followLength = 0;                         // the tokens of m_followData when it was shown
    std::weak_ptr<const FollowedSteps> m_declined;  // the head the user stopped following
    std::optional<std::pair<ExperimentSpec, std::shared_ptr<const AttentionInput>>> m_deferred;
    QWidget* m_followBar;
    QLabel* m_followLabel;

    // Stepping.
    int m_position = 0;
    int m_shownPosition = -1;  // the position the frame shows; -1 before the first frame
    bool m_playing = false;
    double m_speed = 2.0;
    QTimer* m_timer;
    double m_textScale = 1.0;

    // Controls.
    QLabel* m_errorBar;
    QToolButton* m_firstButton;
    QToolButton* m_backButton;
    QToolButton* m_stepButton;
    QToolButton* m_playButton;
    QToolButton* m_lastButton;
    QDoubleSpinBox* m_speedBox;
    QSlider* m_slider;
    QLabel* m_positionLabel;
    QLabel* m_headLabel;
    QSpinBox* m_headBox;
    QToolButton* m_exportFrameButton;
    QToolButton* m_exportAllButton;
    QWidget* m_controlsBar;
    std::vector<QToolButton*> m_controlButtons;  // every button of the bar
};

}  // namespace attnlab::ui

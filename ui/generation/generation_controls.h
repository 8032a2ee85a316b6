#pragma once

#include "generation/token_sampler.h"
#include "sessions/generation_page_state.h"
#include "ui/generation/generation_chart.h"

#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace attnlab::ui {

// The Generate page's column of controls: the prompt (the Input dock's text until one is typed;
// "Use the Input text" follows it again), N, the replaced layers (all, or a chosen set, from a
// menu of the model's layers), the window's approximation as text, greedy or sampling
// (temperature, top-k and a sampling seed apart from W's), the head the Stepper page follows,
// Generate and Cancel with the progress and the status line, and the exports. It holds what the
// controls say and the session's state of them (GenerationPageState); the page runs what they
// ask for.
class GenerationControls : public QWidget {
    Q_OBJECT

public:
    explicit GenerationControls(QWidget* parent = nullptr);

    // The Input dock's text: the prompt, unless one was typed.
    void setInputText(const QString& text);
    // The model's layers and heads: the layers' menu (the choice kept) and the followed head's
    // ranges.
    void setModel(int layers, int heads);
    // The approximation as the page names it, and why it cannot generate (empty when it can:
    // Generate is then enabled unless a run goes on).
    void setMethod(const QString& method, const QString& refusal);
    // Generate and Cancel, the exports and the progress bar for a run going on or not, and
    // whether a generation is shown.
    void setRunning(bool running, bool shown);
    void setProgress(int done, int total);
    void setStatus(const QString& text);
    QString status() const;

    QString prompt() const;
    int tokens() const;
    std::vector<int> replacedLayers() const;  // ascending; empty: every layer
    SamplingSettings sampling() const;
    // The followed head (layer, head), when "Follow a head" is ticked.
    std::optional<std::pair<int, int>> followed() const;

    // The controls as a session keeps them (`generated` as given).
    GenerationPageState state(bool generated) const;
    // Sets the controls (the layers' menu and the head's ranges grown to hold the state's
    // choice until the model is known). Throws InputError, changing nothing, for a sampling seed
    // the seed box cannot hold.
    void setState(const GenerationPageState& state);

signals:
    void generateClicked();
    void cancelClicked();
    void stepperClicked();
    // Export run... (tokens.json and steps.csv into a folder) and a chart of the Export menu.
    void exportRunClicked();
    void exportChartClicked(GenerationChartKind kind);
    // A control changed.
    void edited();

private:
    QWidget* buildPromptBox();
    QWidget* buildRunBox();
    QWidget* buildSamplingBox();
    QWidget* buildFollowBox();
    QLayout* buildButtons();
    // The layers' menu for `layers` layers, checked as `chosen` (empty: all).
    void setLayerMenu(int layers, const std::vector<int>& chosen);
    void updateLayersText();
    void updateEnabled();

    QString m_inputText;
    bool m_promptTyped = false;  // the prompt is the user's, not the Input dock's text
    int m_layerCount = 0;
    bool m_running = false;
    bool m_canGenerate = false;
    QString m_refusal;

    QPlainTextEdit* m_prompt;
    QToolButton* m_useInput;
    QSpinBox* m_tokens;
    QPushButton* m_layers;
    QMenu* m_layersMenu;
    QLabel* m_method;
    QComboBox* m_sampling;
    QDoubleSpinBox* m_temperature;
    QSpinBox* m_topK;
    QSpinBox* m_sampleSeed;
    QCheckBox* m_follow;
    QSpinBox* m_followLayer;
    QSpinBox* m_followHead;
    QPushButton* m_showStepper;
    QLabel* m_refusalLabel;
    QPushButton* m_generate;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_status;
    QPushButton* m_exportRun;
    QPushButton* m_exportChart;
};

}  // namespace attnlab::ui

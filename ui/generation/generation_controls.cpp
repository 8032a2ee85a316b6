#include "ui/generation/generation_controls.h"

#include "ui/common/controls_column.h"

#include "errors.h"
#include "sweeps/downstream.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

namespace attnlab::ui {

namespace {

// The column's widest controls: the prompt and the number boxes.
constexpr int kPromptWidth = 230;
constexpr int kNumberWidth = 110;

QSpinBox* numberBox(const char* name, int minimum, int maximum, const QString& tip)
{
    auto* box = new QSpinBox;
    box->setObjectName(QLatin1String(name));
    box->setRange(minimum, maximum);
    box->setMaximumWidth(kNumberWidth);
    box->setToolTip(tip);
    return box;
}

}  // namespace

GenerationControls::GenerationControls(QWidget* parent) : QWidget(parent)
{
    m_refusalLabel = new QLabel;
    m_refusalLabel->setObjectName(QStringLiteral("generateRefusal"));
    m_refusalLabel->setWordWrap(true);
    m_refusalLabel->setStyleSheet(QStringLiteral("QLabel { color: #7a1010; }"));
    m_refusalLabel->hide();
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("generateProgress"));
    m_progress->setFormat(tr("%v of %m tokens"));
    m_progress->hide();
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("generateStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildPromptBox());
    layout->addWidget(buildRunBox());
    layout->addWidget(buildSamplingBox());
    layout->addWidget(buildFollowBox());
    layout->addWidget(m_refusalLabel);
    layout->addLayout(buildButtons());
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    auto* exports = new QHBoxLayout;
    exports->addWidget(m_exportRun);
    exports->addWidget(m_exportChart);
    layout->addLayout(exports);
    layout->addStretch(1);
    setLayerMenu(0, {});
    updateEnabled();
}

QWidget* GenerationControls::buildPromptBox()
{
    auto* box = new QGroupBox(tr("Prompt"));
    m_prompt = new QPlainTextEdit;
    m_prompt->setObjectName(QStringLiteral("generatePrompt"));
    m_prompt->setToolTip(tr("The text the model continues: the Input dock's text until you type "
                            "your own"));
    m_prompt->setTabChangesFocus(true);
    m_prompt->setFixedHeight(4 * m_prompt->fontMetrics().lineSpacing() + 12);
    m_prompt->setMaximumWidth(kPromptWidth);
    m_useInput = new QToolButton;
    m_useInput->setObjectName(QStringLiteral("generateInputText"));
    m_useInput->setText(tr("Use the Input text"));
    m_useInput->setToolTip(tr("The prompt follows the Input dock's text again"));
    m_useInput->setEnabled(false);
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(m_prompt);
    layout->addWidget(m_useInput, 0, Qt::AlignLeft);
    connect(m_prompt, &QPlainTextEdit::textChanged, this, [this] {
        m_promptTyped = m_prompt->toPlainText() != m_inputText;
        m_useInput->setEnabled(m_promptTyped);
        emit edited();
    });
    connect(m_useInput, &QToolButton::clicked, this, [this] {
        m_prompt->setPlainText(m_inputText);
        m_promptTyped = false;
    });
    return box;
}

QWidget* GenerationControls::buildRunBox()
{
    auto* box = new QGroupBox(tr("Generate"));
    m_tokens = numberBox("generateTokens", 1, GenerationPageState::maxTokens,
                         tr("N, the tokens each run generates; the prompt and they must fit in "
                            "the model's positions"));
    m_tokens->setValue(GenerationPageState().tokens);
    m_layers = menuButton(QString(),
                          tr("The layers whose softmax attention the approximation replaces; the "
                             "others keep exact attention with their key/value cache"));
    m_layers->setObjectName(QStringLiteral("generateLayers"));
    m_layersMenu = m_layers->menu();
    m_method = new QLabel;
    m_method->setObjectName(QStringLiteral("generateMethod"));
    m_method->setWordWrap(true);
    m_method->setToolTip(tr("The Method dock's approximation, its m, seed and parameters"));
    auto* form = new QFormLayout(box);
    form->addRow(tr("Tokens N:"), m_tokens);
    form->addRow(tr("Replace in:"), m_layers);
    form->addRow(tr("By:"), m_method);
    connect(m_tokens, &QSpinBox::valueChanged, this, &GenerationControls::edited);
    return box;
}

QWidget* GenerationControls::buildSamplingBox()
{
    auto* box = new QGroupBox(tr("Choosing tokens"));
    m_sampling = new QComboBox;
    m_sampling->setObjectName(QStringLiteral("generateSampling"));
    m_sampling->addItems({tr("Greedy (the likeliest)"), tr("Sampling")});
    m_sampling->setToolTip(tr("Both runs choose with the same uniform draw at each step: where "
                              "their tokens differ, their distributions do"));
    m_temperature = new QDoubleSpinBox;
    m_temperature->setObjectName(QStringLiteral("generateTemperature"));
    m_temperature->setRange(0.05, 10);
    m_temperature->setSingleStep(0.1);
    m_temperature->setValue(1);
    m_temperature->setMaximumWidth(kNumberWidth);
    m_temperature->setToolTip(tr("T: tokens are drawn from softmax(logits / T)"));
    m_topK = numberBox("generateTopK", 0, GenerationPageState::maxTokens,
                       tr("Draw among the K likeliest tokens only (all: every token)"));
    m_topK->setSpecialValueText(tr("all"));
    m_sampleSeed = numberBox("generateSampleSeed", 0, INT_MAX,
                             tr("The seed of the draws, apart from the Method dock's seed, which "
                                "draws W"));
    auto* form = new QFormLayout(box);
    form->addRow(m_sampling);
    form->addRow(tr("Temperature:"), m_temperature);
    form->addRow(tr("Top-k:"), m_topK);
    form->addRow(tr("Seed:"), m_sampleSeed);
    connect(m_sampling, &QComboBox::currentIndexChanged, this, [this] {
        updateEnabled();
        emit edited();
    });
    for (QSpinBox* number : {m_topK, m_sampleSeed})
        connect(number, &QSpinBox::valueChanged, this, &GenerationControls::edited);
    connect(m_temperature, &QDoubleSpinBox::valueChanged, this, &GenerationControls::edited);
    return box;
}

QWidget* GenerationControls::buildFollowBox()
{
    auto* box = new QGroupBox(tr("Stepper"));
    m_follow = new QCheckBox(tr("Follow a head"));
    m_follow->setObjectName(QStringLiteral("generateFollow"));
    m_follow->setToolTip(tr("The Stepper page shows this head's recurrence (a feature map's "
                            "state S_i and normalizer z_i in a replaced layer) as the model "
                            "generates"));
    m_followLayer = numberBox("generateFollowLayer", 0, 0, tr("The followed head's layer"));
    m_followHead = numberBox("generateFollowHead", 0, 0, tr("The followed query head"));
    m_showStepper = new QPushButton(tr("Show in the Stepper"));
    m_showStepper->setObjectName(QStringLiteral("generateShowStepper"));
    connect(m_showStepper, &QPushButton::clicked, this, &GenerationControls::stepperClicked);
    auto* form = new QFormLayout(box);
    form->addRow(m_follow);
    form->addRow(tr("Layer:"), m_followLayer);
    form->addRow(tr("Head:"), m_followHead);
    form->addRow(m_showStepper);
    connect(m_follow, &QCheckBox::toggled, this, [this] {
        updateEnabled();
        emit edited();
    });
    for (QSpinBox* number : {m_followLayer, m_followHead})
        connect(number, &QSpinBox::valueChanged, this, &GenerationControls::edited);
    return box;
}

QLayout* GenerationControls::buildButtons()
{
    m_generate = new QPushButton(tr("Generate"));
    m_generate->setObjectName(QStringLiteral("generateRun"));
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("generateCancel"));
    m_cancel->setToolTip(
        tr("Stop now: the token being generated is dropped, those before it stay"));
    connect(m_generate, &QPushButton::clicked, this, &GenerationControls::generateClicked);
    connect(m_cancel, &QPushButton::clicked, this, &GenerationControls::cancelClicked);
    m_exportRun = new QPushButton(tr("Export run..."));
    m_exportRun->setObjectName(QStringLiteral("generateExportRun"));
    m_exportRun->setToolTip(tr("tokens.json and steps.csv of the generation shown, as "
                               "attention-lab generate writes them, into a folder"));
    connect(m_exportRun, &QPushButton::clicked, this, &GenerationControls::exportRunClicked);
    m_exportChart =
        menuButton(tr("Export chart"),
                   tr("A chart as PNG, SVG or PDF, as attention-lab generate --plot draws it"));
    m_exportChart->setObjectName(QStringLiteral("generateExportChart"));
    QMenu* menu = m_exportChart->menu();
    const std::pair<GenerationChartKind, QString> charts[] = {
        {GenerationChartKind::Kl, tr("KL per step...")},
        {GenerationChartKind::Cost, tr("Time per token...")},
        {GenerationChartKind::Memory, tr("Memory...")}};
    for (const auto& [kind, title] : charts)
        menu->addAction(title, this, [this, kind = kind] { emit exportChartClicked(kind); });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_generate);
    buttons->addWidget(m_cancel);
    return buttons;
}

void GenerationControls::setInputText(const QString& text)
{
    m_inputText = text;
    if (!m_promptTyped) {
        const QSignalBlocker blocker(m_prompt);
        m_prompt->setPlainText(text);
    }
}

void GenerationControls::setModel(int layers, int heads)
{
    if (layers != m_layerCount)
        setLayerMenu(layers, replacedLayers());
    m_followLayer->setRange(0, std::max(layers - 1, 0));
    m_followHead->setRange(0, std::max(heads - 1, 0));
}

void GenerationControls::setLayerMenu(int layers, const std::vector<int>& chosen)
{
    m_layerCount = layers;
    m_layersMenu->clear();
    QAction* all = m_layersMenu->addAction(tr("All layers"));
    all->setCheckable(true);
    connect(all, &QAction::triggered, this, [this] {
        for (QAction* action : m_layersMenu->actions())
            action->setChecked(!action->data().isValid());
        updateLayersText();
    });
    m_layersMenu->addSeparator();
    for (int layer = 0; layer < layers; ++layer) {
        QAction* action = m_layersMenu->addAction(tr("Layer %1").arg(layer));
        action->setCheckable(true);
        action->setData(layer);
        action->setChecked(std::find(chosen.begin(), chosen.end(), layer) != chosen.end());
        connect(action, &QAction::triggered, this, &GenerationControls::updateLayersText);
    }
    updateLayersText();
}

std::vector<int> GenerationControls::replacedLayers() const
{
    std::vector<int> layers;
    for (QAction* action : m_layersMenu->actions())
        if (action->data().isValid() && action->isChecked())
            layers.push_back(action->data().toInt());
    return layers;
}

void GenerationControls::updateLayersText()
{
    const std::vector<int> layers = replacedLayers();
    m_layersMenu->actions().front()->setChecked(layers.empty());
    m_layers->setText(layers.empty() ? tr("all layers") : layersPhrase(layers, m_layerCount));
    emit edited();
}

void GenerationControls::setMethod(const QString& method, const QString& refusal)
{
    m_method->setText(method);
    m_refusal = refusal;
    m_canGenerate = refusal.isEmpty();
    m_refusalLabel->setText(
        m_canGenerate ? QString() : tr("Cannot generate with this method: %1").arg(refusal));
    m_refusalLabel->setVisible(!m_canGenerate);
    updateEnabled();
}

void GenerationControls::setRunning(bool running, bool shown)
{
    m_running = running;
    m_progress->setVisible(running || shown);
    m_exportRun->setEnabled(!running && shown);
    m_exportChart->setEnabled(shown);
    updateEnabled();
}

void GenerationControls::setProgress(int done, int total)
{
    m_progress->setRange(0, total);
    m_progress->setValue(done);
}

void GenerationControls::setStatus(const QString& text)
{
    m_status->setText(text);
}

QString GenerationControls::status() const
{
    return m_status->text();
}

void GenerationControls::updateEnabled()
{
    const bool sampling = m_sampling->currentIndex() == 1;
    for (QWidget* control : std::initializer_list<QWidget*>{m_temperature, m_topK, m_sampleSeed})
        control->setEnabled(sampling);
    for (QWidget* control :
         std::initializer_list<QWidget*>{m_followLayer, m_followHead, m_showStepper})
        control->setEnabled(m_follow->isChecked());
    m_generate->setEnabled(!m_running && m_canGenerate);
    m_generate->setToolTip(m_canGenerate ? tr("Continue the prompt with exact attention and with "
                                              "the approximation, token by token")
                                         : m_refusal);
    m_cancel->setEnabled(m_running);
}

QString GenerationControls::prompt() const
{
    return m_prompt->toPlainText();
}

int GenerationControls::tokens() const
{
    return m_tokens->value();
}

SamplingSettings GenerationControls::sampling() const
{
    SamplingSettings sampling;
    sampling.greedy = m_sampling->currentIndex() == 0;
    sampling.temperature = m_temperature->value();
    sampling.topK = m_topK->value();
    sampling.seed = std::uint64_t(m_sampleSeed->value());
    return sampling;
}

std::optional<std::pair<int, int>> GenerationControls::followed() const
{
    if (!m_follow->isChecked())
        return std::nullopt;
    return std::pair{m_followLayer->value(), m_followHead->value()};
}

GenerationPageState GenerationControls::state(bool generated) const
{
    GenerationPageState state;
    if (m_promptTyped)
        state.prompt = prompt();
    state.tokens = tokens();
    state.replacedLayers = replacedLayers();
    state.sampling = sampling();
    state.followed = followed();
    state.generated = generated;
    return state;
}

void GenerationControls::setState(const GenerationPageState& state)
{
    if (state.sampling.seed > std::uint64_t(INT_MAX))
        throw InputError(QStringLiteral("sampling.seed must be an integer from 0 to %1 on the "
                                        "Generate page")
                             .arg(INT_MAX));
    m_promptTyped = state.prompt.has_value();
    {
        const QSignalBlocker blocker(m_prompt);
        m_prompt->setPlainText(state.prompt.value_or(m_inputText));
    }
    m_useInput->setEnabled(m_promptTyped);
    m_tokens->setValue(state.tokens);
    // The model's layers may not be known yet: the menu holds at least the chosen ones.
    setLayerMenu(state.replacedLayers.empty()
                     ? m_layerCount
                     : std::max(m_layerCount, state.replacedLayers.back() + 1),
                 state.replacedLayers);
    m_sampling->setCurrentIndex(state.sampling.greedy ? 0 : 1);
    m_temperature->setValue(state.sampling.temperature);
    m_topK->setValue(state.sampling.topK);
    m_sampleSeed->setValue(int(state.sampling.seed));
    m_follow->setChecked(state.followed.has_value());
    if (state.followed) {
        m_followLayer->setMaximum(std::max(m_followLayer->maximum(), state.followed->first));
        m_followHead->setMaximum(std::max(m_followHead->maximum(), state.followed->second));
        m_followLayer->setValue(state.followed->first);
        m_followHead->setValue(state.followed->second);
    }
    updateEnabled();
}

}  // namespace attnlab::ui

#include "ui/generation/generation_page.h"

#include "attention/approximation.h"
#include "attention/recurrent_attention.h"
#include "errors.h"
#include "inputs/model_input.h"
#include "io/atomic_files.h"
#include "sweeps/downstream.h"
#include "ui/common/controls_column.h"
#include "ui/common/export_dialog.h"
#include "ui/generation/continuation_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <cmath>

namespace attnlab::ui {

namespace {

// The summary, texts and charts follow the tokens at most this often (a small model writes
// hundreds of tokens a second).
constexpr int kRefreshMs = 100;
constexpr std::array<GenerationChartKind, 3> kChartKinds = {
    GenerationChartKind::Kl, GenerationChartKind::Cost, GenerationChartKind::Memory};
const char* const kChartNames[] = {"kl", "cost", "memory"};

QString methodText(const ApproximationSpec& approximation)
{
    QString text = approximation.titleWithSize();
    if (methodInfo(approximation.kind).isRandom)
        text += GenerationPage::tr(", seed %1").arg(approximation.seed);
    return text;
}

// Why `method` cannot replace a language model's attention token by token; empty when it can.
QString methodRefusal(Method method)
{
    try {
        requireCausalForm(method, true, CausalBecause::LanguageModel);
        requireRecurrentForm(method);
    } catch (const InputError& e) {
        return e.message();
    }
    return {};
}

// What a generation depends on besides the page's controls: the model and the approximation.
QJsonObject runKey(const ExperimentSpec& spec)
{
    ExperimentSpec key;
    key.input.modelPath = spec.input.modelPath;
    key.approximation = spec.approximation;
    return key.toJson();
}

}  // namespace

GenerationPage::GenerationPage(QWidget* parent) : QWidget(parent)
{
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("generateMessage"));
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_controls = controlsColumn(buildControls());
    m_content = buildContent();
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_content, 1);
    layout->addWidget(m_message, 1);
    m_refusal = tr("This page needs a trained text model: in the Input dock's Text tab, choose "
                   "\"Read by: Built-in model\" or open a language model's folder.");
    m_message->setText(m_refusal);
    m_controls->hide();
    m_content->hide();

    m_refresh.setSingleShot(true);
    m_refresh.setInterval(kRefreshMs);
    connect(&m_refresh, &QTimer::timeout, this, &GenerationPage::refresh);
    connect(&m_job, &BackgroundJob::progressChanged, m_progress, [this](int done, int total) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(&m_job, &BackgroundJob::failed, this, &GenerationPage::failed);
    connect(&m_job, &BackgroundJob::cancelled, this, [this] {
        m_outcome =
            tr("Cancelled after %1 of %2 tokens.").arg(m_steps.size()).arg(m_runSpec.tokens);
        finished();
    });
    connect(&m_job, &BackgroundJob::runningChanged, this, [this] { updateControls(); });
    updateControls();
}

QWidget* GenerationPage::buildControls()
{
    auto* promptBox = new QGroupBox(tr("Prompt"));
    m_prompt = new QPlainTextEdit;
    m_prompt->setObjectName(QStringLiteral("generatePrompt"));
    m_prompt->setToolTip(tr("The text the model continues: the Input dock's text until you type "
                            "your own"));
    m_prompt->setTabChangesFocus(true);
    m_prompt->setFixedHeight(4 * m_prompt->fontMetrics().lineSpacing() + 12);
    m_inputText = new QToolButton;
    m_inputText->setObjectName(QStringLiteral("generateInputText"));
    m_inputText->setText(tr("Use the Input text"));
    m_inputText->setToolTip(tr("The prompt follows the Input dock's text again"));
    auto* promptLayout = new QVBoxLayout(promptBox);
    promptLayout->addWidget(m_prompt);
    promptLayout->addWidget(m_inputText, 0, Qt::AlignLeft);
    connect(m_prompt, &QPlainTextEdit::textChanged, this, [this] {
        m_promptTyped = m_prompt->toPlainText() != m_spec.input.text;
        m_inputText->setEnabled(m_promptTyped);
        emit edited();
    });
    connect(m_inputText, &QToolButton::clicked, this, [this] {
        m_prompt->setPlainText(m_spec.input.text);
        m_promptTyped = false;
    });

    auto* runBox = new QGroupBox(tr("Generate"));
    m_tokens = new QSpinBox;
    m_tokens->setObjectName(QStringLiteral("generateTokens"));
    m_tokens->setRange(1, GenerationPageState::maxTokens);
    m_tokens->setValue(32);
    m_tokens->setToolTip(tr("N, the tokens each run generates; the prompt and they must fit in "
                            "the model's positions"));
    m_layers = new QToolButton;
    m_layers->setObjectName(QStringLiteral("generateLayers"));
    m_layers->setPopupMode(QToolButton::InstantPopup);
    m_layers->setToolTip(tr("The layers whose softmax attention the approximation replaces; the "
                            "others keep exact attention with their key/value cache"));
    m_layersMenu = new QMenu(m_layers);
    m_layers->setMenu(m_layersMenu);
    m_method = new QLabel;
    m_method->setObjectName(QStringLiteral("generateMethod"));
    m_method->setWordWrap(true);
    m_method->setToolTip(tr("The Method dock's approximation, its m, seed and parameters"));
    auto* form = new QFormLayout(runBox);
    form->addRow(tr("Tokens N:"), m_tokens);
    form->addRow(tr("Replace in:"), m_layers);
    form->addRow(tr("By:"), m_method);
    connect(m_tokens, &QSpinBox::valueChanged, this, &GenerationPage::edited);

    m_generate = new QPushButton(tr("Generate"));
    m_generate->setObjectName(QStringLiteral("generateRun"));
    m_generate->setToolTip(tr("Continue the prompt with exact attention and with the "
                              "approximation, token by token"));
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("generateCancel"));
    m_cancel->setToolTip(tr("Stop after the token being generated; the tokens so far stay"));
    connect(m_generate, &QPushButton::clicked, this, &GenerationPage::generate);
    connect(m_cancel, &QPushButton::clicked, this, &GenerationPage::cancel);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_generate);
    buttons->addWidget(m_cancel);
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("generateProgress"));
    m_progress->setFormat(tr("%v of %m tokens"));
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("generateStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_refusalLabel = new QLabel;
    m_refusalLabel->setObjectName(QStringLiteral("generateRefusal"));
    m_refusalLabel->setWordWrap(true);
    m_refusalLabel->setStyleSheet(QStringLiteral("QLabel { color: #7a1010; }"));
    m_refusalLabel->hide();

    m_exportRun = new QPushButton(tr("Export run..."));
    m_exportRun->setObjectName(QStringLiteral("generateExportRun"));
    m_exportRun->setToolTip(tr("tokens.json and steps.csv of the generation shown, as "
                               "attention-lab generate writes them, into a folder"));
    connect(m_exportRun, &QPushButton::clicked, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Export the run"));
        if (!folder.isEmpty())
            writeOrWarn(this, tr("Export the run"), [&] { exportRun(folder); });
    });
    m_exportChart = new QToolButton;
    m_exportChart->setObjectName(QStringLiteral("generateExportChart"));
    m_exportChart->setText(tr("Export chart"));
    m_exportChart->setPopupMode(QToolButton::InstantPopup);
    auto* chartMenu = new QMenu(m_exportChart);
    const QStringList chartTitles = {tr("KL per step..."), tr("Cost per token..."),
                                     tr("Memory...")};
    for (std::size_t i = 0; i < kChartKinds.size(); ++i)
        chartMenu->addAction(chartTitles[int(i)], this, [this, i] {
            runFigureExportDialog(this, tr("Export chart"),
                                  QStringLiteral("generate-%1.png").arg(kChartNames[i]),
                                  [this, i](const QString& path, FigureFormat format) {
                                      exportChart(kChartKinds[i], path, format);
                                  });
        });
    m_exportChart->setMenu(chartMenu);
    auto* exports = new QHBoxLayout;
    exports->addWidget(m_exportRun);
    exports->addWidget(m_exportChart);

    auto* column = new QWidget;
    auto* layout = new QVBoxLayout(column);
    layout->addWidget(promptBox);
    layout->addWidget(runBox);
    layout->addWidget(buildSamplingBox());
    layout->addWidget(buildFollowBox());
    layout->addWidget(m_refusalLabel);
    layout->addLayout(buttons);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addLayout(exports);
    layout->addStretch(1);
    setLayerCount(0);
    return column;
}

QWidget* GenerationPage::buildSamplingBox()
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
    m_temperature->setToolTip(tr("T: tokens are drawn from softmax(logits / T)"));
    m_topK = new QSpinBox;
    m_topK->setObjectName(QStringLiteral("generateTopK"));
    m_topK->setRange(0, GenerationPageState::maxTokens);
    m_topK->setSpecialValueText(tr("all"));
    m_topK->setToolTip(tr("Draw among the K likeliest tokens only (all: every token)"));
    m_sampleSeed = new QSpinBox;
    m_sampleSeed->setObjectName(QStringLiteral("generateSampleSeed"));
    m_sampleSeed->setRange(0, INT_MAX);
    m_sampleSeed->setToolTip(tr("The seed of the draws, apart from the Method dock's seed, "
                                "which draws W"));
    auto* form = new QFormLayout(box);
    form->addRow(m_sampling);
    form->addRow(tr("Temperature:"), m_temperature);
    form->addRow(tr("Top-k:"), m_topK);
    form->addRow(tr("Sampling seed:"), m_sampleSeed);
    connect(m_sampling, &QComboBox::currentIndexChanged, this, [this] {
        updateControls();
        emit edited();
    });
    for (QSpinBox* box : {m_topK, m_sampleSeed})
        connect(box, &QSpinBox::valueChanged, this, &GenerationPage::edited);
    connect(m_temperature, &QDoubleSpinBox::valueChanged, this, &GenerationPage::edited);
    return box;
}

QWidget* GenerationPage::buildFollowBox()
{
    auto* box = new QGroupBox(tr("Stepper"));
    m_follow = new QCheckBox(tr("Follow a head's S\u1d62 and z\u1d62"));
    m_follow->setObjectName(QStringLiteral("generateFollow"));
    m_follow->setToolTip(tr("The Stepper page shows this head's recurrence (a feature map's "
                            "state S_i and normalizer z_i in a replaced layer) as the model "
                            "generates"));
    m_followLayer = new QSpinBox;
    m_followLayer->setObjectName(QStringLiteral("generateFollowLayer"));
    m_followHead = new QSpinBox;
    m_followHead->setObjectName(QStringLiteral("generateFollowHead"));
    m_showStepper = new QPushButton(tr("Show in the Stepper"));
    m_showStepper->setObjectName(QStringLiteral("generateShowStepper"));
    connect(m_showStepper, &QPushButton::clicked, this, &GenerationPage::stepperRequested);
    auto* form = new QFormLayout(box);
    form->addRow(m_follow);
    form->addRow(tr("Layer:"), m_followLayer);
    form->addRow(tr("Head:"), m_followHead);
    form->addRow(m_showStepper);
    connect(m_follow, &QCheckBox::toggled, this, [this] {
        updateControls();
        emit edited();
    });
    for (QSpinBox* spin : {m_followLayer, m_followHead})
        connect(spin, &QSpinBox::valueChanged, this, &GenerationPage::edited);
    return box;
}

QWidget* GenerationPage::buildContent()
{
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("generateSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    const auto text = [](const QString& name) {
        auto* label = new QLabel;
        label->setObjectName(name);
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        label->setAlignment(Qt::AlignTop | Qt::AlignLeft);
        label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        return label;
    };
    m_exactText = text(QStringLiteral("generateExactText"));
    m_approxText = text(QStringLiteral("generateApproxText"));
    auto* texts = new QHBoxLayout;
    texts->addWidget(m_exactText, 1);
    texts->addWidget(m_approxText, 1);

    m_table = new ContinuationView;
    m_table->setMinimumWidth(260);
    auto* charts = new QSplitter(Qt::Vertical);
    for (std::size_t i = 0; i < kChartKinds.size(); ++i) {
        m_charts[i] = new GenerationChart(kChartKinds[i]);
        m_charts[i]->setObjectName(QStringLiteral("generate-%1").arg(kChartNames[i]));
        m_charts[i]->setMinimumSize(240, 150);
        charts->addWidget(m_charts[i]);
    }
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_table);
    split->addWidget(charts);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setChildrenCollapsible(false);

    auto* content = new QWidget;
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_summary);
    layout->addLayout(texts);
    layout->addWidget(split, 1);
    return content;
}

void GenerationPage::setLayerCount(int layers)
{
    const std::vector<int> chosen = chosenLayers();
    m_layerCount = layers;
    m_layersMenu->clear();
    QAction* all = m_layersMenu->addAction(tr("All layers"));
    all->setCheckable(true);
    all->setObjectName(QStringLiteral("allLayers"));
    connect(all, &QAction::triggered, this, [this] {
        for (QAction* action : m_layersMenu->actions())
            action->setChecked(action == m_layersMenu->actions().front());
        updateLayersText();
    });
    m_layersMenu->addSeparator();
    for (int layer = 0; layer < layers; ++layer) {
        QAction* action = m_layersMenu->addAction(tr("Layer %1").arg(layer));
        action->setCheckable(true);
        action->setData(layer);
        action->setChecked(std::find(chosen.begin(), chosen.end(), layer) != chosen.end());
        connect(action, &QAction::triggered, this, [this] {
            bool any = false;
            for (QAction* a : m_layersMenu->actions())
                any = any || (a->data().isValid() && a->isChecked());
            m_layersMenu->actions().front()->setChecked(!any);
            updateLayersText();
        });
    }
    bool any = false;
    for (QAction* a : m_layersMenu->actions())
        any = any || (a->data().isValid() && a->isChecked());
    all->setChecked(!any);
    updateLayersText();
}

std::vector<int> GenerationPage::chosenLayers() const
{
    std::vector<int> layers;
    for (QAction* action : m_layersMenu->actions())
        if (action->data().isValid() && action->isChecked())
            layers.push_back(action->data().toInt());
    return layers;  // empty: every layer
}

void GenerationPage::updateLayersText()
{
    const std::vector<int> layers = chosenLayers();
    m_layers->setText(layers.empty() ? tr("all layers")
                                     : tr("layers %1").arg(layersName(layers, m_layerCount)));
    emit edited();
}

void GenerationPage::setExperiment(const ExperimentSpec& spec,
                                   std::shared_ptr<const AttentionInput> input)
{
    m_spec = spec;
    m_input = std::move(input);
    const std::optional<LanguageModelInfo> info =
        m_input && spec.input.kind == InputKind::Model && spec.input.imagePath.isEmpty()
            ? m_input->model
            : std::nullopt;
    m_haveModel = info.has_value();
    if (!m_promptTyped) {
        const QSignalBlocker blocker(m_prompt);
        m_prompt->setPlainText(spec.input.text);
        m_inputText->setEnabled(false);
    }
    if (!m_haveModel) {
        m_refusal = tr("This page needs a trained text model: in the Input dock's Text tab, "
                       "choose \"Read by: Built-in model\" or open a language model's folder.");
        m_message->setText(m_refusal);
    } else {
        if (info->layers != m_layerCount)
            setLayerCount(info->layers);
        m_followLayer->setRange(0, info->layers - 1);
        m_followHead->setRange(0, info->heads - 1);
        m_method->setText(methodText(spec.approximation));
        m_refusal = methodRefusal(spec.approximation.kind);
        m_refusalLabel->setText(m_refusal.isEmpty()
                                    ? QString()
                                    : tr("Cannot generate with this method: %1").arg(m_refusal));
    }
    m_message->setVisible(!m_haveModel);
    m_controls->setVisible(m_haveModel);
    m_content->setVisible(m_haveModel);
    m_refusalLabel->setVisible(m_haveModel && !m_refusal.isEmpty());
    updateControls();
    if (m_runPending && m_refusal.isEmpty() && isVisible())
        generate();
}

void GenerationPage::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_runPending && m_haveModel && m_refusal.isEmpty())
        QTimer::singleShot(0, this, [this] {
            if (m_runPending)
                generate();
        });
}

void GenerationPage::updateControls()
{
    const bool running = m_job.isRunning();
    const bool sampling = m_sampling->currentIndex() == 1;
    m_temperature->setEnabled(sampling);
    m_topK->setEnabled(sampling);
    m_sampleSeed->setEnabled(sampling);
    m_followLayer->setEnabled(m_follow->isChecked());
    m_followHead->setEnabled(m_follow->isChecked());
    m_showStepper->setEnabled(m_follow->isChecked());
    m_generate->setEnabled(!running && m_haveModel && m_refusal.isEmpty());
    m_generate->setToolTip(m_refusal.isEmpty() ? tr("Continue the prompt with exact attention and "
                                                    "with the approximation, token by token")
                                               : m_refusal);
    m_cancel->setEnabled(running);
    m_progress->setVisible(running || !m_steps.empty());
    m_exportRun->setEnabled(!running && !m_steps.empty());
    m_exportChart->setEnabled(!m_steps.empty());
    QString status = running ? tr("Generating...") : m_outcome;
    if (!running && !m_steps.empty() && runKey(m_spec) != runKey(m_runExperiment))
        status += tr(" The window's model or approximation has changed since: Generate again "
                     "to run it.");
    if (!m_followNote.isEmpty())
        status += tr(" The Stepper cannot follow the head: %1").arg(m_followNote);
    m_status->setText(status.trimmed());
}

GenerationSpec GenerationPage::generationSpec() const
{
    GenerationSpec spec;
    spec.prompt = m_prompt->toPlainText();
    spec.tokens = m_tokens->value();
    spec.approximation = m_spec.approximation;
    spec.replacedLayers = chosenLayers();
    spec.sampling.greedy = m_sampling->currentIndex() == 0;
    spec.sampling.temperature = m_temperature->value();
    spec.sampling.topK = m_topK->value();
    spec.sampling.seed = std::uint64_t(m_sampleSeed->value());
    if (m_follow->isChecked()) {
        spec.followLayer = m_followLayer->value();
        spec.followHead = m_followHead->value();
    }
    spec.threads = m_spec.threads;
    return spec;
}

void GenerationPage::generate()
{
    m_runPending = false;
    if (!m_haveModel || !m_refusal.isEmpty()) {
        m_status->setText(m_refusal);
        return;
    }
    GenerationRequest request{m_spec.input.modelPath, generationSpec(), m_budget};
    // A Stepper following the last generation's head goes on showing it until the new one's
    // arrives (started), unless the new one follows none.
    clearShown(request.spec.followLayer < 0);
    m_runSpec = request.spec;
    m_runExperiment = m_spec;
    m_table->reset(methodInfo(m_spec.approximation.kind).title);
    m_progress->setRange(0, request.spec.tokens);
    m_progress->setValue(0);
    m_job.start(
        [this, request](JobContext& context) {
            runGenerationJob(
                request, context, [this](GenerationStart start) { started(std::move(start)); },
                [this](GenerationStep step, qint64 nonPositive) {
                    addStep(std::move(step), nonPositive);
                });
        },
        [this] {
            m_outcome = tr("Generated %1 tokens.").arg(m_steps.size());
            finished();
        });
    refresh();
    updateControls();
}

void GenerationPage::clearShown(bool unfollow)
{
    m_model.reset();
    m_promptIds.clear();
    m_replaced.clear();
    m_steps.clear();
    m_nonPositive = 0;
    m_followNote.clear();
    m_outcome.clear();
    m_table->reset(m_table->horizontalHeaderItem(2)->text());
    const bool followed = m_followed != nullptr;
    m_followed.reset();
    m_refresh.stop();
    for (GenerationChart* chart : m_charts)
        chart->setSteps({}, m_runSpec.approximation.kind);
    m_summary->clear();
    m_exactText->clear();
    m_approxText->clear();
    if (unfollow && followed)
        emit followedChanged();
    updateControls();
}

void GenerationPage::cancel()
{
    m_job.cancel();
}

void GenerationPage::started(GenerationStart start)
{
    m_model = std::move(start.model);
    m_promptIds = std::move(start.promptIds);
    m_replaced = std::move(start.replacedLayers);
    m_followed = std::move(start.followed);
    m_followNote = start.followNote;
    updateControls();
    emit followedChanged();
}

QString GenerationPage::tokenLabel(int id) const
{
    return m_model ? m_model->tokenizer().label(id) : QString::number(id);
}

void GenerationPage::addStep(GenerationStep step, qint64 nonPositive)
{
    m_nonPositive = nonPositive;
    if (m_followed) {
        try {
            for (std::size_t p = 0; p < step.followedPrompt.size(); ++p)
                m_followed->append(step.followedPrompt[p], tokenLabel(m_promptIds[p]));
            if (step.followed)
                m_followed->append(
                    *step.followed,
                    tokenLabel(step.index == 0 ? m_promptIds.back() : m_steps.back().approxToken));
        } catch (const InputError& e) {
            m_followNote = e.message();
            m_followed.reset();
        }
    }
    step.followed.reset();
    step.followedPrompt.clear();
    m_table->addStep(step, tokenLabel(step.exactToken), tokenLabel(step.approxToken));
    m_steps.push_back(std::move(step));
    if (!m_refresh.isActive())
        m_refresh.start();
}

void GenerationPage::finished()
{
    m_refresh.stop();
    refresh();
    updateControls();
    emit generationFinished();
}

void GenerationPage::failed(const QString& message)
{
    m_outcome = tr("Could not generate: %1").arg(message);
    finished();
}

void GenerationPage::refresh()
{
    const int divergence = firstDivergence();
    const Method method = m_runSpec.approximation.kind;
    for (GenerationChart* chart : m_charts)
        chart->setSteps(m_steps, method, m_steps.empty() ? QString() : subtitle());
    if (!m_model) {
        m_summary->setText(m_job.isRunning() ? tr("Loading the model...") : QString());
        return;
    }
    const TextTokenizer& tokenizer = m_model->tokenizer();
    const std::vector<int> exact = exactIds();
    const std::vector<int> approx = approxIds();
    const QString title = methodInfo(method).title.toHtmlEscaped();
    const auto text = [&](const std::vector<int>& ids, const QString& name) {
        const int agree = divergence < 0 ? int(ids.size()) : divergence;
        const std::vector<int> same(ids.begin(), ids.begin() + agree);
        const std::vector<int> rest(ids.begin() + agree, ids.end());
        return tr("<b>%1:</b> %2<span style='color:#b01c1c'>%3</span>")
            .arg(name, tokenizer.decode(same).toHtmlEscaped(),
                 tokenizer.decode(rest).toHtmlEscaped());
    };
    m_exactText->setText(text(exact, tr("Exact")));
    m_approxText->setText(text(approx, title));
    double klSum = 0;
    int klCount = 0;
    for (const GenerationStep& step : m_steps)
        if (std::isfinite(step.kl)) {
            klSum += step.kl;
            ++klCount;
        }
    const int n = int(m_steps.size());
    QString summary =
        divergence < 0
            ? tr("The two continuations agree on all %1 tokens so far.").arg(n)
            : tr("The continuations agree on the first %1 of %2 tokens, then part: step %1 is "
                 "<b>%3</b> exact against <b>%4</b> with %5.")
                  .arg(divergence)
                  .arg(n)
                  .arg(tokenLabel(m_steps[std::size_t(divergence)].exactToken).toHtmlEscaped(),
                       tokenLabel(m_steps[std::size_t(divergence)].approxToken).toHtmlEscaped(),
                       title);
    if (n > 0) {
        const GenerationStep& last = m_steps.back();
        summary += tr(" Mean teacher-forced KL %1 nats. At position %2 the exact run holds %3 of "
                      "key/value cache, the approximate one %4.")
                       .arg(klCount > 0 ? klSum / klCount : 0.0, 0, 'g', 3)
                       .arg(qint64(last.position))
                       .arg(formatBytes(last.cacheBytes), formatBytes(last.stateBytes));
    }
    if (m_nonPositive > 0)
        summary += tr(" %1 (token, head) pairs had a non-positive denominator.").arg(m_nonPositive);
    m_summary->setText(summary);
    emit followedChanged();
}

QString GenerationPage::subtitle() const
{
    const int layers = m_input && m_input->model ? m_input->model->layers : m_layerCount;
    return tr("%1, %2 in layers %3, %4; prompt of %5 tokens")
        .arg(modelDisplayName(m_runExperiment.input.modelPath),
             m_runSpec.approximation.titleWithSize(), layersName(m_replaced, layers),
             samplingText(m_runSpec.sampling))
        .arg(m_promptIds.size());
}

std::vector<int> GenerationPage::exactIds() const
{
    std::vector<int> ids;
    for (const GenerationStep& step : m_steps)
        ids.push_back(step.exactToken);
    return ids;
}

std::vector<int> GenerationPage::approxIds() const
{
    std::vector<int> ids;
    for (const GenerationStep& step : m_steps)
        ids.push_back(step.approxToken);
    return ids;
}

int GenerationPage::firstDivergence() const
{
    for (std::size_t k = 0; k < m_steps.size(); ++k)
        if (!m_steps[k].sameToken)
            return int(k);
    return -1;
}

GenerationChart* GenerationPage::chart(GenerationChartKind kind) const
{
    return m_charts[std::size_t(kind)];
}

QString GenerationPage::summaryText() const
{
    return m_summary->text();
}

GenerationPageState GenerationPage::state() const
{
    GenerationPageState state;
    if (m_promptTyped)
        state.prompt = m_prompt->toPlainText();
    state.tokens = m_tokens->value();
    state.replacedLayers = chosenLayers();
    state.sampling.greedy = m_sampling->currentIndex() == 0;
    state.sampling.temperature = m_temperature->value();
    state.sampling.topK = m_topK->value();
    state.sampling.seed = std::uint64_t(m_sampleSeed->value());
    if (m_follow->isChecked())
        state.followed = std::pair{m_followLayer->value(), m_followHead->value()};
    state.generated = !m_steps.empty() || m_runPending;
    return state;
}

void GenerationPage::setState(const GenerationPageState& state)
{
    if (state.sampling.seed > std::uint64_t(INT_MAX))
        throw InputError(QStringLiteral("sampling.seed must be an integer from 0 to %1 on the "
                                        "Generate page")
                             .arg(INT_MAX));
    m_job.discard();
    clearShown(true);
    m_promptTyped = state.prompt.has_value();
    {
        const QSignalBlocker blocker(m_prompt);
        m_prompt->setPlainText(state.prompt.value_or(m_spec.input.text));
    }
    m_inputText->setEnabled(m_promptTyped);
    m_tokens->setValue(state.tokens);
    // The model's layers may not be known yet: the menu holds at least the chosen ones.
    const int layers = state.replacedLayers.empty()
                           ? m_layerCount
                           : std::max(m_layerCount, state.replacedLayers.back() + 1);
    for (QAction* action : m_layersMenu->actions())
        action->setChecked(false);
    setLayerCount(layers);
    for (QAction* action : m_layersMenu->actions())
        if (action->data().isValid())
            action->setChecked(std::find(state.replacedLayers.begin(), state.replacedLayers.end(),
                                         action->data().toInt()) != state.replacedLayers.end());
    m_layersMenu->actions().front()->setChecked(state.replacedLayers.empty());
    updateLayersText();
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
    m_runPending = state.generated;
    updateControls();
    if (m_runPending && m_haveModel && m_refusal.isEmpty() && isVisible())
        generate();
}

void GenerationPage::exportRun(const QString& folder) const
{
    if (!m_model || m_steps.empty())
        throw InputError(tr("nothing to export: generate first"));
    GenerationResult result;
    result.promptIds = m_promptIds;
    result.exactIds = exactIds();
    result.approxIds = approxIds();
    result.steps = m_steps;
    result.replacedLayers = m_replaced;
    result.nonPositiveDenominators = m_nonPositive;
    AtomicFileSet files(folder);
    writeAll(files.open(QStringLiteral("tokens.json")),
             generationTokensJson(result, *m_model, m_runSpec));
    writeAll(files.open(QStringLiteral("steps.csv")), generationStepsCsv(result));
    files.commit();
}

void GenerationPage::exportChart(GenerationChartKind kind, const QString& path, FigureFormat format)
{
    exportFigure(*chart(kind), path, format);
}

}  // namespace attnlab::ui

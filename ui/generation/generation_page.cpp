#include "ui/generation/generation_page.h"

#include "named_values.h"
#include "attention/approximation.h"
#include "attention/recurrent_attention.h"
#include "errors.h"
#include "inputs/model_input.h"
#include "io/atomic_files.h"
#include "sweeps/downstream.h"
#include "ui/common/controls_column.h"
#include "ui/common/export_dialog.h"
#include "ui/generation/continuation_view.h"
#include "ui/generation/generation_controls.h"

#include <QAbstractTextDocumentLayout>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTextEdit>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// The summary, texts and charts follow the tokens at most this often (a small model writes
// hundreds of tokens a second).
constexpr int kRefreshMs = 100;
constexpr std::array<GenerationChartKind, 3> kChartKinds = {
    GenerationChartKind::Kl, GenerationChartKind::Cost, GenerationChartKind::Memory};
const char* const kChartNames[] = {"kl", "cost", "memory"};
// The table's width beside the charts; the content's least width for them side by side
// (narrower, a tab each), and for the charts in a row beside the table where the content is too
// short for a column of them (presentation mode under a scenario's explanation); shorter than
// one chart's least height, a tab each too. Their least
// widths are smaller, so that a page side by side never asks the window for more room than a
// narrow page would.
constexpr int kTableWidth = 240;
constexpr int kSideBySideWidth = 700;
constexpr int kRowWidth = 1200;
constexpr int kChartHeight = 220;  // a chart's least height in a column
constexpr int kLeastWidth = 150;
// An exported chart's size (PNG at twice it), as `generate --plot` draws it.
const QSize kExportSize(1000, 560);

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
    m_controls = new GenerationControls;
    m_column = controlsColumn(m_controls);
    m_content = buildContent();
    fitTexts();
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_column);
    layout->addWidget(m_content, 1);
    layout->addWidget(m_message, 1);
    m_refusal = tr("This page needs a trained text model: in the Input dock's Text tab, choose "
                   "\"Read by: Built-in model\" or open a language model's folder.");
    m_message->setText(m_refusal);
    m_column->hide();
    m_content->hide();

    m_refresh.setSingleShot(true);
    m_refresh.setInterval(kRefreshMs);
    connect(&m_refresh, &QTimer::timeout, this, &GenerationPage::refresh);
    connect(&m_job, &BackgroundJob::progressChanged, m_controls, &GenerationControls::setProgress);
    connect(&m_job, &BackgroundJob::failed, this, &GenerationPage::failed);
    connect(&m_job, &BackgroundJob::cancelled, this, [this] {
        m_outcome =
            tr("Cancelled after %1 of %2 tokens.").arg(m_steps.size()).arg(m_runSpec.tokens);
        finished();
    });
    connect(&m_job, &BackgroundJob::runningChanged, this, [this] { updateControls(); });
    connect(m_controls, &GenerationControls::generateClicked, this, &GenerationPage::generate);
    connect(m_controls, &GenerationControls::cancelClicked, this, &GenerationPage::cancel);
    connect(m_controls, &GenerationControls::stepperClicked, this,
            &GenerationPage::stepperRequested);
    connect(m_controls, &GenerationControls::exportRunClicked, this,
            &GenerationPage::exportRunDialog);
    connect(m_controls, &GenerationControls::exportChartClicked, this,
            &GenerationPage::exportChartDialog);
    connect(m_controls, &GenerationControls::edited, this, &GenerationPage::edited);
    updateControls();
}

QWidget* GenerationPage::buildContent()
{
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("generateSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The continuations as text, as tall as fitTexts lets them, scrolling when longer.
    const auto text = [this](const QString& name) {
        auto* edit = new QTextEdit;
        edit->setObjectName(name);
        edit->setReadOnly(true);
        edit->setFrameShape(QFrame::NoFrame);
        edit->viewport()->setAutoFillBackground(false);
        edit->setMinimumWidth(100);
        // A new text, or the same text at another width, takes another height.
        connect(edit->document()->documentLayout(),
                &QAbstractTextDocumentLayout::documentSizeChanged, this, &GenerationPage::fitTexts);
        return edit;
    };
    m_exactText = text(QStringLiteral("generateExactText"));
    m_approxText = text(QStringLiteral("generateApproxText"));
    auto* texts = new QHBoxLayout;
    texts->addWidget(m_exactText, 1);
    texts->addWidget(m_approxText, 1);

    m_table = new ContinuationView;
    m_table->setMinimumWidth(kLeastWidth);
    m_chartColumn = new QSplitter(Qt::Vertical);
    m_chartColumn->setChildrenCollapsible(false);
    for (std::size_t i = 0; i < kChartKinds.size(); ++i) {
        m_charts[i] = new GenerationChart(kChartKinds[i]);
        m_charts[i]->setObjectName(QStringLiteral("generate-%1").arg(kChartNames[i]));
        m_charts[i]->setCompact(true);
        m_charts[i]->setMinimumSize(kLeastWidth, 140);
    }
    m_split = new QSplitter(Qt::Horizontal);
    m_split->setChildrenCollapsible(false);
    // The column belongs to the split from the start, hidden with it while the page shows tabs
    // (the tabs hold the charts themselves): a column no widget owned would leak.
    m_split->addWidget(m_chartColumn);
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("generateTabs"));
    m_tabs->hide();
    arrange(Arrangement::Tabs);  // until the page's size is known
    auto* content = new QWidget;
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_summary);
    layout->addLayout(texts);
    layout->addWidget(m_split, 1);
    layout->addWidget(m_tabs, 1);
    return content;
}

void GenerationPage::arrange(Arrangement arrangement)
{
    const bool side = arrangement != Arrangement::Tabs;
    const bool wasSide = m_arrangement != Arrangement::Tabs;
    m_arrangement = arrangement;
    const QStringList titles = {tr("KL per step"), tr("Time per token"), tr("Memory")};
    m_chartColumn->setOrientation(arrangement == Arrangement::Row ? Qt::Horizontal : Qt::Vertical);
    if (side && !wasSide) {
        while (m_tabs->count() > 0)
            m_tabs->removeTab(0);
        // The tabs' stack hid the pages it did not show: shown again beside each other.
        m_split->addWidget(m_table);
        m_split->addWidget(m_chartColumn);
        m_table->show();
        for (GenerationChart* chart : m_charts) {
            m_chartColumn->addWidget(chart);
            chart->show();
        }
    } else if (!side) {
        m_tabs->addTab(m_table, tr("Tokens"));
        for (std::size_t i = 0; i < m_charts.size(); ++i)
            m_tabs->addTab(m_charts[i], titles[int(i)]);
    }
    // The table takes 4 parts of the width to a column of charts' 5, or 5 to a row's 12.
    const int table = arrangement == Arrangement::Row ? 5 : 4;
    const int charts = arrangement == Arrangement::Row ? 12 : 5;
    m_split->setStretchFactor(0, table);
    m_split->setStretchFactor(1, charts);
    m_split->setSizes({table * kTableWidth, charts * kTableWidth});
    m_split->setVisible(side);
    m_tabs->setVisible(!side);
}

void GenerationPage::fitTexts()
{
    if (!m_content)
        return;
    // At most a third of the page's height under the summary (the content fills the height).
    const int least = 5 * m_exactText->fontMetrics().lineSpacing() + 8;
    const int most = std::max(least, (height() - m_summary->height()) / 3);
    double needed = 0;  // the document's height, and 2 pixels for its rounding
    for (const QTextEdit* edit : {m_exactText, m_approxText})
        needed = std::max(needed, edit->document()->size().height() + 2);
    const int textHeight = std::clamp(int(std::ceil(needed)), least, most);
    for (QTextEdit* edit : {m_exactText, m_approxText})
        if (edit->height() != textHeight || edit->minimumHeight() != textHeight)
            edit->setFixedHeight(textHeight);
}

void GenerationPage::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitTexts();
    // The table beside the charts where each chart gets its least height (kChartHeight) in a
    // column, else in a row, else a tab each: squeezed under it, their titles, axes and legends
    // ran into one another and were cut off (presentation mode at 1280 x 720).
    const int width = m_content->width();
    // The height under the summary and the texts, shared by a column of three charts.
    const int height = m_content->height() - m_summary->height() - m_exactText->height();
    const Arrangement arrangement =
        width >= kSideBySideWidth && height >= 3 * kChartHeight ? Arrangement::Column
        : width >= kRowWidth && height >= kChartHeight          ? Arrangement::Row
                                                                : Arrangement::Tabs;
    if (arrangement != m_arrangement)
        arrange(arrangement);
}

void GenerationPage::setExperiment(const ExperimentSpec& spec,
                                   std::shared_ptr<const AttentionInput> input)
{
    m_spec = spec;
    m_input = std::move(input);
    // The input says whether a language model read it (a ViT's image input has no model info);
    // the spec's image path says nothing of it: the Image tab's image stays in the spec while
    // the Text tab's model reads the text.
    const std::optional<LanguageModelInfo> info =
        m_input && spec.input.kind == InputKind::Model ? m_input->model : std::nullopt;
    m_haveModel = info.has_value();
    m_controls->setInputText(spec.input.text);
    if (!m_haveModel) {
        m_refusal = tr("This page needs a trained text model: in the Input dock's Text tab, "
                       "choose \"Read by: Built-in model\" or open a language model's folder.");
        m_message->setText(m_refusal);
    } else {
        m_controls->setModel(info->layers, info->heads);
        m_refusal = methodRefusal(spec.approximation.kind);
        m_controls->setMethod(methodText(spec.approximation), m_refusal);
    }
    m_message->setVisible(!m_haveModel);
    m_column->setVisible(m_haveModel);
    m_content->setVisible(m_haveModel);
    updateControls();
    if (m_runPending && m_refusal.isEmpty() && isVisible())
        generate();
}

void GenerationPage::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_runPending && m_haveModel && m_refusal.isEmpty())
        QTimer::singleShot(0, this, [this] {
            if (m_runPending && m_haveModel && m_refusal.isEmpty())
                generate();
        });
}

void GenerationPage::updateControls()
{
    const bool running = m_job.isRunning();
    m_controls->setRunning(running, !m_steps.empty());
    QString status = running ? tr("Generating...") : m_outcome;
    if (!running && !m_steps.empty() && runKey(m_spec) != runKey(m_runExperiment))
        status += tr(" The window's model or approximation has changed since: Generate again "
                     "to run it.");
    if (!m_followNote.isEmpty())
        status += tr(" The Stepper cannot follow the head: %1").arg(m_followNote);
    m_controls->setStatus(status.trimmed());
}

GenerationSpec GenerationPage::generationSpec() const
{
    GenerationSpec spec;
    spec.prompt = m_controls->prompt();
    spec.tokens = m_controls->tokens();
    spec.approximation = m_spec.approximation;
    spec.replacedLayers = m_controls->replacedLayers();
    spec.sampling = m_controls->sampling();
    if (const auto followed = m_controls->followed()) {
        spec.followLayer = followed->first;
        spec.followHead = followed->second;
    }
    spec.threads = m_spec.threads;
    return spec;
}

void GenerationPage::generate()
{
    m_runPending = false;
    if (!m_haveModel || !m_refusal.isEmpty()) {
        m_controls->setStatus(m_refusal);
        return;
    }
    GenerationRequest request{m_spec.input.modelPath, generationSpec(), m_budget};
    // A Stepper following the last generation's head goes on showing it until the new one's
    // arrives (started), unless the new one follows none.
    clearShown(request.spec.followLayer < 0);
    m_runSpec = request.spec;
    m_runExperiment = m_spec;
    m_table->resetFor(methodInfo(m_spec.approximation.kind).title);
    m_controls->setProgress(0, request.spec.tokens);
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
    m_table->resetFor(m_table->horizontalHeaderItem(2)->text());
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
        const ContinuationText shown = continuationText(
            tokenizer, m_promptIds, ids, divergence < 0 ? int(ids.size()) : divergence);
        return tr("<b>%1:</b> %2<span style='color:#b01c1c'>%3</span>")
            .arg(name, shown.agreed.toHtmlEscaped(), shown.rest.toHtmlEscaped());
    };
    m_exactText->setHtml(text(exact, tr("Exact")));
    m_approxText->setHtml(text(approx, title));
    double klSum = 0;
    int klCount = 0;
    for (const GenerationStep& step : m_steps)
        if (std::isfinite(step.kl)) {
            klSum += step.kl;
            ++klCount;
        }
    const int n = int(m_steps.size());
    QString summary;
    if (divergence < 0) {
        summary = tr("The two continuations agree on all %1 tokens so far.").arg(n);
    } else {
        const GenerationStep& parted = m_steps[std::size_t(divergence)];
        summary = (divergence == 0 ? tr("The continuations differ from the first of %2 tokens: "
                                        "step %1 is <b>%3</b> exact against <b>%4</b> with %5.")
                                   : tr("The continuations agree on the first %1 of %2 tokens, "
                                        "then part: step %1 is <b>%3</b> exact against <b>%4</b> "
                                        "with %5."))
                      .arg(divergence)
                      .arg(n)
                      .arg(tokenLabel(parted.exactToken).toHtmlEscaped(),
                           tokenLabel(parted.approxToken).toHtmlEscaped(), title);
    }
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
    // The run's model, not the window's: the subtitle describes the generation shown.
    const int layers = m_model ? m_model->info().layers : int(m_replaced.size());
    return tr("%1, %2 in %3, %4; prompt of %5")
        .arg(modelDisplayName(m_runExperiment.input.modelPath),
             m_runSpec.approximation.titleWithSize(), layersPhrase(m_replaced, layers),
             samplingText(m_runSpec.sampling),
             countOf(qint64(m_promptIds.size()), tr("token"), tr("tokens")));
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
    return m_controls->state(!m_steps.empty() || m_runPending);
}

void GenerationPage::setState(const GenerationPageState& state)
{
    m_controls->setState(state);  // refuses a bad state before anything changes
    m_job.discard();
    clearShown(true);
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
    saveGenerationChart(kind, m_steps, m_runSpec.approximation.kind, subtitle(), path, format,
                        kExportSize);
}

void GenerationPage::exportRunDialog()
{
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Export the run"));
    if (!folder.isEmpty())
        writeOrWarn(this, tr("Export the run"), [&] { exportRun(folder); });
}

void GenerationPage::exportChartDialog(GenerationChartKind kind)
{
    runFigureExportDialog(
        this, tr("Export chart"),
        QStringLiteral("generate-%1.png").arg(QLatin1String(kChartNames[int(kind)])),
        [this, kind](const QString& path, FigureFormat format) {
            exportChart(kind, path, format);
        });
}

}  // namespace attnlab::ui

#include "ui/model/downstream_panel.h"

#include "named_values.h"
#include "ui/common/export_dialog.h"
#include "io/atomic_files.h"
#include "errors.h"
#include "inputs/model_input.h"
#include "ui/model/model_eval_chart.h"
#include "ui/model/downstream_job.h"
#include "ui/model/top_tokens_chart.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QResizeEvent>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <numeric>

namespace attnlab::ui {

namespace {

constexpr int kDebounceMs = 150;
// The table's least width in a tab of its own (its columns whole). The content's least width for
// the table beside the top tokens and the chart (narrower, a tab each): the chart's plots and
// legend need about 480 pixels, the table 400, and side by side at those widths they made the
// window wider than a 1280-pixel screen. Side by side, the table's and the chart's least widths
// are smaller, so that the page never asks the window for more room than a tab each would.
constexpr int kTableWidth = 400;
constexpr int kSideBySideWidth = 920;
constexpr int kLeastWidth = 150;
// The chart's least height under the top tokens, and in a tab of its own, which a short page
// (presentation mode on a 720-line projector) gives about 230 pixels: the chart then gives its
// heading's rows to the plots.
constexpr int kChartHeight = 260;
constexpr int kChartHeightInATab = 150;

// Whether a second checkpoint of the model takes the approximation's place.
bool comparesCheckpoints(const ExperimentSpec& spec)
{
    return !spec.input.comparisonModelPath.isEmpty();
}

QString methodText(const ExperimentSpec& spec)
{
    if (spec.exactMethod)
        return DownstreamPanel::tr("exact (streaming softmax)");
    if (comparesCheckpoints(spec))
        return spec.methodTitle();
    QString text = spec.approximation.titleWithSize();
    if (methodInfo(spec.approximation.kind).isRandom)
        text += DownstreamPanel::tr(", seed %1").arg(spec.approximation.seed);
    return text;
}

// A token label as a table cell shows it: spaces visible as the model's tokens have them.
QString shownToken(const QString& label)
{
    return label.isEmpty() ? QStringLiteral("\u2205") : label;
}

}  // namespace

DownstreamPanel::DownstreamPanel(QWidget* parent) : QWidget(parent)
{
    buildControls();
    buildContent();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_content, 1);
    m_content->hide();
    m_controls->hide();
    m_message->setText(tr("This page needs a trained model: in the Input dock's Text tab, choose "
                          "\"Read by: Built-in model\" or open a language model's folder."));

    m_delay.setSingleShot(true);
    m_delay.setInterval(kDebounceMs);
    connect(&m_delay, &QTimer::timeout, this, &DownstreamPanel::startComparison);
    connect(&m_job, &BackgroundJob::progressChanged, m_progress, [this](int done, int total) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(&m_job, &BackgroundJob::failed, this, &DownstreamPanel::jobFailed);
    connect(&m_job, &BackgroundJob::cancelled, this, &DownstreamPanel::jobCancelled);
    connect(m_layers, &QComboBox::currentIndexChanged, this, [this] {
        if (m_haveModel)
            scheduleComparison();
    });
    connect(m_table, &QTableWidget::currentCellChanged, this,
            [this](int row) { setSelectedPosition(row); });
    connect(m_sweepButton, &QPushButton::clicked, this, &DownstreamPanel::sweepFeatures);
    connect(m_layerButton, &QPushButton::clicked, this, &DownstreamPanel::sweepLayers);
    connect(m_cancelButton, &QPushButton::clicked, this, &DownstreamPanel::cancel);
    connect(m_csvButton, &QPushButton::clicked, this, [this] {
        runExportDialog(this, tr("Export the sweep as CSV"), QStringLiteral("model-eval"),
                        QStringLiteral("csv"), [this](const QString& path) { exportCsv(path); });
    });
    setBusy(false);
}

void DownstreamPanel::buildControls()
{
    m_layers = new QComboBox;
    m_layers->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "all layers" whole
    m_layers->setObjectName(QStringLiteral("replacedLayers"));
    m_layers->setToolTip(tr("The layers whose softmax attention (every head) is replaced by the "
                            "approximation"));
    m_images = new QComboBox;
    m_images->setObjectName(QStringLiteral("downstreamImages"));
    m_images->addItems({tr("this image"), tr("every image of its folder")});
    m_images->setToolTip(tr("A ViT's comparison: its class for this image, or for every image "
                            "of the image's folder (at most %1), the agreement and KL over all "
                            "of them")
                             .arg(kMaxFolderImages));
    m_images->hide();
    connect(m_images, &QComboBox::currentIndexChanged, this, [this] {
        if (m_haveModel)
            setExperiment(m_spec);  // the rows of the other choice are not these
    });
    m_method = new QLabel;
    m_method->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_method->setObjectName(QStringLiteral("downstreamMethod"));
    const ModelPageState defaults;
    m_features = new QLineEdit(defaults.sweepFeatures);
    m_features->setObjectName(QStringLiteral("sweepFeatures"));
    m_features->setToolTip(tr("The m values of \"Sweep m\", separated by commas"));
    m_features->setMinimumWidth(130);
    m_features->setMaximumWidth(190);
    m_seeds = new QSpinBox;
    m_seeds->setObjectName(QStringLiteral("sweepSeeds"));
    m_seeds->setRange(1, ModelPageState::maxSweepSeeds);
    m_seeds->setValue(defaults.sweepSeeds);
    m_seeds->setToolTip(tr("Seeds of W per point of a sweep: the window's seed and the next ones"));
    m_sweepButton = new QPushButton(tr("Sweep m"));
    m_sweepButton->setToolTip(tr("Agreement and KL against m, in the replaced layers"));
    m_layerButton = new QPushButton(tr("Per layer"));
    m_layerButton->setToolTip(tr("Agreement and KL with each layer replaced alone, and with all, "
                                 "at the window's m"));
    m_cancelButton = new QPushButton(tr("Cancel"));
    m_cancelButton->setEnabled(false);
    m_csvButton = new QPushButton(tr("Export CSV..."));
    m_csvButton->setEnabled(false);
    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(160);
    m_progress->hide();

    auto* bar = new QHBoxLayout;
    m_replaceLabel = new QLabel;
    m_byLabel = new QLabel;
    bar->addWidget(m_replaceLabel);
    bar->addWidget(m_layers);
    bar->addWidget(m_byLabel);
    bar->addWidget(m_method, 1);
    m_imagesLabel = new QLabel(tr("on"));
    m_imagesLabel->hide();
    bar->addWidget(m_imagesLabel);
    bar->addWidget(m_images);
    bar->addWidget(m_csvButton);
    // The progress bar shown while sweeping has the room Export CSV... would take: with both in
    // this bar the page was wider than a 1280-pixel window holds.
    auto* sweepBar = new QHBoxLayout;
    m_sweepLabel = new QLabel(tr("Sweep over m:"));
    sweepBar->addWidget(m_sweepLabel);
    sweepBar->addWidget(m_features);
    sweepBar->addWidget(new QLabel(tr("seeds:")));
    sweepBar->addWidget(m_seeds);
    sweepBar->addWidget(m_sweepButton);
    sweepBar->addWidget(m_layerButton);
    sweepBar->addWidget(m_cancelButton);
    sweepBar->addWidget(m_progress);
    sweepBar->addStretch(1);

    // The controls act on a model's predictions: hidden, with the Export button, while the
    // input has no model and the message says how to choose one.
    m_controls = new QWidget;
    auto* controlsLayout = new QVBoxLayout(m_controls);
    controlsLayout->setContentsMargins(0, 0, 0, 0);
    controlsLayout->addLayout(bar);
    controlsLayout->addLayout(sweepBar);
}

void DownstreamPanel::buildContent()
{
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("downstreamSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("downstreamMessage"));
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);

    m_table = new QTableWidget(0, 4);
    m_table->setObjectName(QStringLiteral("downstreamTable"));
    // Each column at least as wide as its header ("Next (approx.)" was cut at both ends), the
    // room left to the token column.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_table->verticalHeader()->hide();  // the Token column starts with the position
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_top = new TopTokensChart;
    m_top->setObjectName(QStringLiteral("topTokens"));
    setTableHeaders();
    m_chart = new ModelEvalChart;
    m_chart->setObjectName(QStringLiteral("modelEvalChart"));

    // The table with the top tokens under it (the Tokens tab), and the chart. The columns belong
    // to the split from the start, hidden with it while the page shows tabs: a splitter no widget
    // owned would leak.
    m_tokens = new QSplitter(Qt::Vertical);
    m_tokens->setChildrenCollapsible(false);
    m_chartColumn = new QSplitter(Qt::Vertical);
    m_chartColumn->setChildrenCollapsible(false);
    m_split = new QSplitter(Qt::Horizontal);
    m_split->setChildrenCollapsible(false);
    m_split->addWidget(m_tokens);
    m_split->addWidget(m_chartColumn);
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("downstreamTabs"));
    m_content = new QWidget;
    auto* contentLayout = new QVBoxLayout(m_content);
    contentLayout->setContentsMargins(0, 0, 0, 0);
    contentLayout->addWidget(m_summary);
    contentLayout->addWidget(m_split, 1);
    contentLayout->addWidget(m_tabs, 1);
    arrange(Arrangement::TokensUnderTable);  // until the page's size is known
}

void DownstreamPanel::arrange(Arrangement arrangement)
{
    if (m_arrangement == arrangement)
        return;
    m_arrangement = arrangement;
    const bool sideBySide = arrangement == Arrangement::SideBySide;
    while (m_tabs->count() > 0)
        m_tabs->removeTab(0);
    m_tokens->addWidget(m_table);
    m_tokens->setOrientation(arrangement == Arrangement::TokensBesideTable ? Qt::Horizontal
                                                                           : Qt::Vertical);
    if (sideBySide) {
        m_split->insertWidget(0, m_tokens);
        m_chartColumn->addWidget(m_top);
        m_chartColumn->addWidget(m_chart);
        m_chartColumn->setStretchFactor(0, 0);
        m_chartColumn->setStretchFactor(1, 1);
        m_split->setStretchFactor(0, 2);
        m_split->setStretchFactor(1, 3);
        m_split->setSizes({420, 630});
        m_table->setMinimumWidth(kLeastWidth);
        m_chart->setMinimumSize(kLeastWidth, kChartHeight);
        m_tokens->show();  // the tabs' stack hid the page it did not show
        m_chart->show();
    } else {
        m_tokens->addWidget(m_top);
        m_tokens->setStretchFactor(0, 1);
        m_tokens->setStretchFactor(1, 0);
        m_tabs->addTab(m_tokens, tr("Tokens"));
        m_tabs->addTab(m_chart, tr("Agreement and KL"));
        m_table->setMinimumWidth(kTableWidth);
        // Its own least width: the plots and the legend whole.
        m_chart->setMinimumSize(0, kChartHeightInATab);
    }
    m_split->setVisible(sideBySide);
    m_tabs->setVisible(!sideBySide);
    keepSelectedInView();
}

void DownstreamPanel::keepSelectedInView()
{
    QTimer::singleShot(0, m_table, [table = m_table] {
        if (table->currentItem())
            table->scrollToItem(table->currentItem());
    });
}

void DownstreamPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    arrange(arrangementFor(event->size()));
}

DownstreamPanel::Arrangement DownstreamPanel::arrangementFor(QSize size) const
{
    // The content's size is the page's less its margins and the controls over it, worked out
    // from the page's (the content itself is hidden while the page shows a message, and its
    // size is then out of date).
    const QMargins margins = layout()->contentsMargins();
    const int width = size.width() - margins.left() - margins.right();
    if (width < kSideBySideWidth)
        return Arrangement::TokensUnderTable;
    const int spacing = std::max(layout()->spacing(), 0);
    const int height = size.height() - margins.top() - margins.bottom() -
                       m_controls->sizeHint().height() - spacing -
                       m_summary->heightForWidth(width) - spacing;
    // Side by side, the column beside the table holds the top tokens over the chart.
    const int column = std::max(m_top->minimumHeight(), m_top->minimumSizeHint().height()) +
                       kChartHeight + m_chartColumn->handleWidth();
    return height >= column ? Arrangement::SideBySide : Arrangement::TokensBesideTable;
}

void DownstreamPanel::setExperiment(const ExperimentSpec& spec)
{
    m_spec = spec;
    m_haveModel = spec.input.kind == InputKind::Model;
    m_method->setText(methodText(m_spec));
    // A second checkpoint is compared in every layer, as model-eval's "checkpoint" row.
    const bool checkpoint = comparesCheckpoints(m_spec);
    m_replaceLabel->setText(checkpoint ? tr("Compare the model in") : tr("Replace softmax in"));
    m_byLabel->setText(checkpoint ? tr("with") : tr("by"));
    if (checkpoint) {
        const QSignalBlocker blocker(m_layers);
        m_layers->setCurrentIndex(0);
    }
    m_layers->setEnabled(!checkpoint);
    setTableHeaders();
    const bool vit = m_haveModel && !spec.input.imagePath.isEmpty() &&
                     modelArchitectureOf(spec.input.modelPath) == ModelArchitecture::Vit;
    m_images->setVisible(vit);
    m_imagesLabel->setVisible(vit);
    if (!m_haveModel) {
        m_delay.stop();
        m_job.discard();
        m_comparison.reset();
        m_content->hide();
        m_controls->hide();
        m_message->setText(tr("This page needs a trained model: in the Input dock's Text tab, "
                              "choose \"Read by: Built-in model\" or open a language model's "
                              "folder; in its Image tab, the built-in ViT or a ViT checkpoint."));
        m_message->show();
        setBusy(m_job.isRunning());
        return;
    }
    m_controls->show();
    // The sweep's rows stay, under their own input's subtitle: the chart says when the window's
    // input is no longer theirs.
    m_inputKey = sweepInputKey(m_spec, vit, m_images->currentIndex() == 1);
    updateChart();
    scheduleComparison();
}

void DownstreamPanel::scheduleComparison()
{
    m_delay.start();
    setBusy(true);
}

std::vector<int> DownstreamPanel::replacedLayers(int layers) const
{
    const int choice = m_layers->currentIndex();
    if (choice <= 0 || choice > layers) {
        std::vector<int> all(static_cast<std::size_t>(std::max(layers, 0)));
        std::iota(all.begin(), all.end(), 0);
        return all;
    }
    return {choice - 1};
}

void DownstreamPanel::startComparison()
{
    if (!m_haveModel)
        return;
    // A job still running is superseded: the newest request wins. The layer list needs the
    // model's size; an unknown model (not yet loaded) replaces all.
    startJob({{m_spec, replacedLayers(m_layerCount)}}, false, m_axis);
}

void DownstreamPanel::startJob(std::vector<std::pair<ExperimentSpec, std::vector<int>>> cases,
                               bool sweep, ModelEvalAxis axis)
{
    DownstreamRequest request;
    request.cases = std::move(cases);
    request.sweep = sweep;
    request.axis = axis;
    request.imageFolder = !m_images->isHidden() && m_images->currentIndex() == 1;
    request.replaceAll = m_layers->currentIndex() <= 0;
    request.budget = m_budget;
    m_sweeping = sweep;
    m_job.start([request](JobContext& context) { return runDownstream(request, context); },
                [this](DownstreamOutcome outcome) { showOutcome(std::move(outcome)); });
    m_progress->setRange(0, 0);
    m_progress->setVisible(sweep);
    setBusy(true);
}

void DownstreamPanel::jobCancelled()
{
    m_progress->hide();
    setBusy(m_delay.isActive());
    if (m_sweeping && !m_delay.isActive())
        emit sweepFinished();
}

void DownstreamPanel::jobFailed(const QString& message)
{
    m_progress->hide();
    m_comparison.reset();
    m_content->hide();
    m_message->setText(tr("Could not compare the model's predictions: %1").arg(message));
    m_message->show();
    setBusy(m_delay.isActive());
    if (m_sweeping)
        emit sweepFinished();
    else
        emit comparisonFinished();
}

void DownstreamPanel::showOutcome(DownstreamOutcome outcome)
{
    m_progress->hide();
    m_outcomeName = outcome.outcomeName;
    if (m_classes != outcome.classes) {
        m_classes = outcome.classes;
        setTableHeaders();
    }
    if (m_modelFolder != outcome.modelFolder || m_layerCount != outcome.layerCount) {
        m_modelFolder = outcome.modelFolder;
        m_layerCount = outcome.layerCount;
        const QSignalBlocker blocker(m_layers);
        const int choice = m_layers->currentIndex();
        m_layers->clear();
        m_layers->addItem(tr("all layers"));
        for (int layer = 0; layer < m_layerCount; ++layer)
            m_layers->addItem(tr("layer %1").arg(layer));
        m_layers->setCurrentIndex(choice >= 0 && choice <= m_layerCount ? choice : 0);
    }
    m_labels = outcome.labels;
    const ModelEvalRowsInput source = outcomeSource(outcome);
    if (outcome.request.sweep) {
        // A second checkpoint's row of the same input stays beside the sweep's, as the
        // reference it is.
        std::vector<ModelEvalRow> rows = outcome.rows;
        for (const ModelEvalRow& row : m_rows)
            if (row.method == QLatin1String("checkpoint") && m_rowsSource.key == source.key)
                rows.push_back(row);
        m_rows = std::move(rows);
        m_rowsSource = source;
        m_axis = outcome.request.axis;
        // What the rows need said (Nystrom's m past L), under the comparison's summary, once.
        for (const QString& note : outcome.notes)
            if (!m_summary->text().contains(note))
                m_summary->setText(m_summary->text() + QStringLiteral("<br>") + note);
        updateChart();
        m_csvButton->setEnabled(!m_rows.empty());
        setBusy(m_delay.isActive());
        emit sweepFinished();
        return;
    }
    m_comparison = outcome.comparison;
    // An older session's rows, taken for its input's, are of another text when their length is
    // not this one's.
    if (m_rowsGuessed && !outcome.classes && source.key == m_rowsSource.key &&
        source.count != m_rowsSource.count)
        m_rowsSource.key.clear();
    m_rowsGuessed = false;
    if (comparesCheckpoints(outcome.request.cases.front().first)) {
        // The checkpoint's row joins the chart (one at a time), beside a sweep of an
        // approximation on the same input: quantization's error next to the approximation's.
        std::erase_if(m_rows, [&](const ModelEvalRow& row) {
            return row.method == QLatin1String("checkpoint") || m_rowsSource.key != source.key;
        });
        m_rows.push_back(outcome.rows.front());
        m_rowsSource = source;
        m_csvButton->setEnabled(true);
    }
    m_message->hide();
    m_content->show();
    showComparison();
    keepSelectedInView();  // the table was laid out hidden
    if (!outcome.notes.isEmpty())
        m_summary->setText(m_summary->text() + QStringLiteral("<br>") + outcome.notes.join(' '));
    setBusy(m_delay.isActive());
    emit comparisonFinished();
}

const DownstreamComparison* DownstreamPanel::comparison() const
{
    return m_haveModel ? m_comparison.get() : nullptr;
}

QString DownstreamPanel::summaryText() const
{
    return m_summary->text();
}

void DownstreamPanel::showComparison()
{
    const DownstreamComparison& c = *m_comparison;
    const auto label = [this](int id) {
        if (id < 0)
            return tr("(none)");
        return shownToken(m_outcomeName(id));
    };
    QString perLayer;
    for (std::size_t i = 0; i < c.replacedLayers.size(); ++i)
        perLayer += tr("%1layer %2: %3")
                        .arg(i ? QStringLiteral(", ") : QString())
                        .arg(c.replacedLayers[i])
                        .arg(c.relFrobeniusPerLayer[i], 0, 'g', 3);
    // A text's next tokens (of two checkpoints), an image's class, or the classes of several
    // images.
    const bool checkpoint = comparesCheckpoints(m_spec);
    const QString what =
        checkpoint   ? tr("the likeliest next token is the same at <b>%1%</b> of %2 positions; "
                            "KL(p \u2016 q) between the next-token distributions of the first (p) "
                            "and the second checkpoint (q): mean <b>%3</b>, largest %4 nats.")
        : !m_classes ? tr("the likeliest next token is unchanged at <b>%1%</b> of %2 positions; "
                          "KL(p \u2016 q) between the next-token distributions exact (p) and "
                          "approximate (q): mean <b>%3</b>, largest %4 nats.")
        : c.kl.size() > 1
            ? tr("the predicted class is unchanged for <b>%1%</b> of %2 images; KL(p \u2016 q) "
                 "between the class distributions exact (p) and approximate (q): mean "
                 "<b>%3</b>, largest %4 nats.")
            : tr("the predicted class is <b>%1</b> (%2 image); KL(p \u2016 q) between the class "
                 "distributions exact (p) and approximate (q): <b>%3</b> nats (largest %4).");
    m_summary->setText(
        (checkpoint ? tr("<b>%1</b> against %2: %3 Relative error of the attention of every head "
                         "|P\u0302 \u2212 P|<sub>F</sub> / |P|<sub>F</sub>: %4 (%5).")
                    : tr("<b>%1</b> in %2: %3 Relative error of the replaced heads' attention "
                         "|P\u0302 \u2212 P|<sub>F</sub> / |P|<sub>F</sub>: %4 (%5)."))
            .arg(methodText(m_spec),
                 checkpoint ? modelDisplayName(m_spec.input.modelPath)
                            : layersPhrase(c.replacedLayers, m_layerCount),
                 what.arg(m_classes && c.kl.size() == 1
                              ? (c.top1Agreement == 1 ? tr("unchanged") : tr("changed"))
                              : QString::number(100.0 * c.top1Agreement, 'f', 1))
                     .arg(c.kl.size())
                     .arg(c.meanKl, 0, 'g', 3)
                     .arg(c.maxKl, 0, 'g', 3))
            .arg(c.relFrobeniusAttentionMean, 0, 'g', 3)
            .arg(perLayer));

    const QSignalBlocker blocker(m_table);
    const int rows = int(c.kl.size());
    m_table->setRowCount(rows);
    const double largestKl = c.maxKl > 0 && std::isfinite(c.maxKl) ? c.maxKl : 1.0;
    for (int i = 0; i < rows; ++i) {
        const bool mismatch = c.exactTop1[std::size_t(i)] != c.approxTop1[std::size_t(i)];
        const QString token = i < m_labels.size() ? m_labels[i] : QString();
        const QStringList cells{QStringLiteral("%1 %2").arg(i).arg(shownToken(token)),
                                label(c.exactTop1[std::size_t(i)]),
                                label(c.approxTop1[std::size_t(i)]),
                                QString::number(c.kl[std::size_t(i)], 'g', 3)};
        for (int column = 0; column < 4; ++column) {
            auto* item = new QTableWidgetItem(cells[column]);
            if (mismatch && column == 2)
                item->setBackground(QColor(248, 205, 190));
            if (column == 3) {
                // The KL's share of the largest, as the cell's shade.
                const double t = std::isfinite(c.kl[std::size_t(i)])
                                     ? std::clamp(c.kl[std::size_t(i)] / largestKl, 0.0, 1.0)
                                     : 1.0;
                item->setBackground(QColor::fromRgbF(1.0, 1.0 - 0.45 * t, 1.0 - 0.55 * t));
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            }
            // A shaded cell is light in every theme: its text black, not the theme's ink.
            if (item->background().style() != Qt::NoBrush)
                item->setForeground(QColor(0, 0, 0));
            m_table->setItem(i, column, item);
        }
    }
    m_selected = std::clamp(m_selected, 0, std::max(rows - 1, 0));
    m_table->setCurrentCell(m_selected, 0);
    showSelected();
    updateChart();
}

void DownstreamPanel::setTableHeaders()
{
    const bool checkpoint = comparesCheckpoints(m_spec);
    m_table->setHorizontalHeaderLabels(
        m_classes    ? QStringList{tr("Image"), tr("Class (exact)"), tr("Class (approx.)"),
                                tr("KL(p \u2016 q)")}
        : checkpoint ? QStringList{tr("Token"), tr("Next (first)"), tr("Next (second)"),
                                   tr("KL(p \u2016 q)")}
                     : QStringList{tr("Token"), tr("Next (exact)"), tr("Next (approx.)"),
                                   tr("KL(p \u2016 q)")});
    // The two sides of the top tokens: the model and the approximation, or two checkpoints.
    if (checkpoint)
        m_top->setHeadings(
            tr("first: %1").arg(modelDisplayName(m_spec.input.modelPath)),
            tr("second: %1").arg(modelDisplayName(m_spec.input.comparisonModelPath)));
    else
        m_top->setHeadings(tr("exact model"), tr("with the approximation"));
}

void DownstreamPanel::setSelectedPosition(int position)
{
    if (position < 0)
        return;
    m_selected = position;
    if (m_comparison && position < m_table->rowCount() && m_table->currentRow() != position) {
        const QSignalBlocker blocker(m_table);
        m_table->setCurrentCell(position, 0);
    }
    showSelected();
}

void DownstreamPanel::showSelected()
{
    if (!m_comparison || !m_outcomeName || m_selected >= int(m_comparison->kl.size()))
        return;
    const auto entries = [this](const std::vector<TokenProbability>& top) {
        std::vector<std::pair<QString, double>> shown;
        for (const TokenProbability& t : top)
            shown.emplace_back(shownToken(m_outcomeName(t.id)), t.probability);
        return shown;
    };
    const std::size_t i = std::size_t(m_selected);
    const QString token = m_selected < m_labels.size() ? m_labels[m_selected] : QString();
    const QString kl = QString::number(m_comparison->kl[i], 'g', 3);
    m_top->setTokens(m_classes ? tr("The classes of %1: KL %2").arg(shownToken(token), kl)
                               : tr("After position %1 (\u201c%2\u201d): KL %3")
                                     .arg(m_selected)
                                     .arg(shownToken(token), kl),
                     entries(m_comparison->exactTop5[i]), entries(m_comparison->approxTop5[i]));
}

void DownstreamPanel::sweepFeatures()
{
    const MethodInfo& info = methodInfo(m_spec.approximation.kind);
    if (!m_haveModel || m_job.isRunning() || m_spec.exactMethod || !info.size ||
        comparesCheckpoints(m_spec))
        return;
    const std::vector<int> values = sweepFeatureList(m_features->text());
    if (values.empty()) {
        m_summary->setText(tr("m: expected numbers from 1 to %1 separated by commas, got "
                              "\"%2\"")
                               .arg(SpecLimits::features)
                               .arg(m_features->text()));
        return;
    }
    m_delay.stop();
    std::vector<std::pair<ExperimentSpec, std::vector<int>>> cases;
    for (const int m : values)
        for (int s = 0; s < (info.isRandom ? m_seeds->value() : 1); ++s) {
            ExperimentSpec spec = m_spec;
            spec.approximation.setValue(*info.size, m);
            spec.approximation.seed = m_spec.approximation.seed + std::uint64_t(s);
            cases.emplace_back(spec, replacedLayers(m_layerCount));
        }
    startJob(std::move(cases), true, ModelEvalAxis::Features);
}

void DownstreamPanel::sweepLayers()
{
    if (!m_haveModel || m_job.isRunning() || m_layerCount == 0 || comparesCheckpoints(m_spec))
        return;
    m_delay.stop();
    const int seeds = m_spec.exactMethod || !methodInfo(m_spec.approximation.kind).isRandom
                          ? 1
                          : m_seeds->value();
    std::vector<std::pair<ExperimentSpec, std::vector<int>>> cases;
    std::vector<int> all(static_cast<std::size_t>(m_layerCount));
    std::iota(all.begin(), all.end(), 0);
    for (int layer = 0; layer <= m_layerCount; ++layer)
        for (int s = 0; s < seeds; ++s) {
            ExperimentSpec spec = m_spec;
            spec.approximation.seed = m_spec.approximation.seed + std::uint64_t(s);
            cases.emplace_back(spec, layer < m_layerCount ? std::vector<int>{layer} : all);
        }
    startJob(std::move(cases), true, ModelEvalAxis::Layer);
}

void DownstreamPanel::cancel()
{
    m_job.cancel();
}

void DownstreamPanel::setBusy(bool busy)
{
    m_busy = busy;
    const bool sweeping = m_job.isRunning() && m_sweeping;
    m_cancelButton->setEnabled(sweeping);
    const bool canSweep = m_haveModel && !sweeping;
    // The sweep varies the method's size (m, or local attention's w); seeds for random methods.
    // Neither sweep applies to a second checkpoint, compared in every layer at once.
    const MethodInfo& info = methodInfo(m_spec.approximation.kind);
    const bool checkpoint = comparesCheckpoints(m_spec);
    const bool sized = !m_spec.exactMethod && !checkpoint && info.size;
    const QString symbol =
        sized ? info.size->label.section(QLatin1Char(' '), -1) : QStringLiteral("m");
    m_sweepLabel->setText(tr("Sweep over %1:").arg(symbol));
    m_sweepButton->setText(tr("Sweep %1").arg(symbol));
    m_sweepButton->setEnabled(canSweep && sized);
    m_layerButton->setEnabled(canSweep && !checkpoint && m_layerCount > 0);
    m_features->setEnabled(sized);
    m_seeds->setEnabled(sized && info.isRandom);
}

ModelEvalRowsInput DownstreamPanel::outcomeSource(const DownstreamOutcome& outcome)
{
    const ExperimentSpec& spec = outcome.request.cases.front().first;
    return ModelEvalRowsInput::of(spec, outcome.classes, outcome.request.imageFolder,
                                  int(outcome.labels.size()));
}

QString DownstreamPanel::subtitle() const
{
    const ModelEvalRowsInput& source = m_rowsSource;
    const QString count = source.images ? countOf(source.count, tr("image"), tr("images"))
                                        : countOf(source.count, tr("token"), tr("tokens"));
    QString text =
        source.model.isEmpty() ? count : tr("%1, %2").arg(modelDisplayName(source.model), count);
    if (source.key != m_inputKey)
        text += tr(" \u2014 from an earlier input: Sweep or Per layer again for the current one");
    return text;
}

void DownstreamPanel::updateChart()
{
    m_chart->setRows(m_rows, m_axis, m_rows.empty() ? QString() : subtitle());
}

ModelPageState DownstreamPanel::pageState() const
{
    ModelPageState state;
    state.replacedLayer = m_layers->currentIndex() - 1;
    state.sweepFeatures = m_features->text();
    state.sweepSeeds = m_seeds->value();
    state.position = m_selected;
    state.axis = m_axis;
    state.imageFolder = m_images->currentIndex() == 1;
    state.rows = m_rows;
    state.rowsInput = m_rowsSource;
    state.rowsInputGuessed = m_rowsGuessed;
    return state;
}

QJsonObject DownstreamPanel::state() const
{
    return pageState().toJson();
}

void DownstreamPanel::setState(const QJsonObject& json, const ExperimentSpec& sessionSpec)
{
    ModelPageState state = ModelPageState::fromJson(json, pageState(), sessionSpec);
    {
        const QSignalBlocker blocker(m_layers);
        const int layerChoice = state.replacedLayer + 1;
        while (m_layers->count() <= layerChoice)  // the model's layers are not known yet
            m_layers->addItem(m_layers->count() == 0 ? tr("all layers")
                                                     : tr("layer %1").arg(m_layers->count() - 1));
        m_layers->setCurrentIndex(layerChoice);
    }
    {
        const QSignalBlocker blocker(m_images);
        m_images->setCurrentIndex(state.imageFolder ? 1 : 0);
    }
    m_features->setText(state.sweepFeatures);
    m_seeds->setValue(state.sweepSeeds);
    m_selected = state.position;
    m_axis = state.axis;
    m_rows = std::move(state.rows);
    m_rowsSource = state.rowsInput;
    m_rowsGuessed = state.rowsInputGuessed;
    m_csvButton->setEnabled(!m_rows.empty());
    updateChart();
    if (m_haveModel)
        scheduleComparison();
}

void DownstreamPanel::exportChart(const QString& path, FigureFormat format)
{
    exportFigure(*m_chart, path, format);
}

void DownstreamPanel::exportCsv(const QString& path) const
{
    const QFileInfo info(path);
    AtomicFileSet files(info.absolutePath());
    writeAll(files.open(info.fileName()), modelEvalCsv(m_rows).toUtf8());
    files.commit();
}

}  // namespace attnlab::ui

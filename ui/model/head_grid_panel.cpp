// The Heads page (HeadGridPanel): the survey of every head on a worker, its controls, the grid
// and the norms chart, the session state and the figure export.

#include "ui/model/head_grid_panel.h"

#include "ui/model/head_grid_view.h"
#include "ui/model/head_norms_chart.h"

#include "ui/common/controls_column.h"
#include "ui/common/export_dialog.h"
#include "ui/common/number_text.h"
#include "ui/model/head_grid_style.h"

#include "errors.h"
#include "attention/feature_maps.h"
#include "ui/images/image_loader.h"
#include "inputs/model_input.h"
#include "ui/plotting/plot_style.h"

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

namespace attnlab::ui {

using namespace heads;

namespace {

// Thumbnails surveyHeads makes: at most this many cells on a side.
constexpr int kThumbnailSize = 48;
// setExperiment waits this long for the last of a burst of calls.
constexpr int kDebounceMs = 100;
// The most heads the highlight spin box marks.
constexpr int kMaxHighlight = 9999;

}  // namespace

// ---------------------------------------------------------------------------------------------
// HeadGridPanel

// What a survey gives back.
struct HeadSurvey {
    std::vector<HeadSurveyEntry> entries;
    int tokens = 0;
};

namespace {

// What a survey is of: the spec without the layer (the survey covers every layer) and the
// budget. Equal keys give the same survey.
QString surveyKey(const ExperimentSpec& spec, const MemoryBudget& budget)
{
    ExperimentSpec normalised = spec;
    normalised.input.layer = 0;
    normalised.causal = true;
    normalised.threads = 0;
    return QString::fromUtf8(QJsonDocument(normalised.toJson()).toJson(QJsonDocument::Compact)) +
           QString::number(budget.bytes());
}

QString methodText(const ExperimentSpec& spec)
{
    if (spec.exactMethod)
        return HeadGridPanel::tr("exact (streaming)");
    return spec.methodTitle();  // the method, or a second checkpoint in its place
}

QLabel* caption(const QString& text)
{
    auto* label = new QLabel(text);
    label->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
    return label;
}

}  // namespace

HeadGridPanel::HeadGridPanel(QWidget* parent) : QWidget(parent)
{
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(kDebounceMs);
    connect(&m_debounce, &QTimer::timeout, this, &HeadGridPanel::startSurvey);
    connect(&m_job, &BackgroundJob::runningChanged, this, &HeadGridPanel::updateBusy);
    connect(&m_job, &BackgroundJob::progressChanged, this, &HeadGridPanel::showProgress);
    connect(&m_job, &BackgroundJob::failed, this, &HeadGridPanel::surveyFailed);

    QLayout* bar = buildTopBar();
    m_view = new HeadGridView;
    m_view->setObjectName(QStringLiteral("headGrid"));
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("headsMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setMargin(40);
    m_message->setFont(scaledFont(font(), 1.15));
    m_stack = new QStackedWidget;
    m_stack->addWidget(m_message);
    m_stack->addWidget(m_view);

    m_chart = new HeadNormsChart(m_view);
    m_chart->setObjectName(QStringLiteral("headNorms"));
    m_selected = new QLabel;
    m_selected->setObjectName(QStringLiteral("headsSelected"));
    m_selected->setTextFormat(Qt::RichText);
    m_selected->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_selected->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_selected->setMinimumWidth(250);
    auto* bottom = new QWidget;
    auto* bottomLayout = new QHBoxLayout(bottom);
    bottomLayout->setContentsMargins(8, 0, 0, 0);
    bottomLayout->addWidget(m_selected);
    bottomLayout->addWidget(m_chart, 1);

    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(m_stack);
    splitter->addWidget(bottom);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);
    splitter->setSizes({600, 150});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(bar);
    layout->addWidget(splitter, 1);

    connect(m_show, &QComboBox::currentIndexChanged, this, [this] {
        m_view->setShowApproximation(m_show->currentData().toString() ==
                                     QLatin1String("approximation"));
    });
    connect(m_order, &QComboBox::currentIndexChanged, this, [this] {
        HeadOrder order = HeadOrder::Model;
        parseHeadOrder(m_order->currentData().toString(), &order);
        m_view->setOrder(order);
    });
    connect(m_highlight, &QSpinBox::valueChanged, m_view, &HeadGridView::setHighlightCount);
    connect(m_view, &HeadGridView::headActivated, this, &HeadGridPanel::headActivated);
    connect(m_chart, &HeadNormsChart::headActivated, this, [this](int layer, int head) {
        m_view->setCurrentHead(layer, head);
        emit headActivated(layer, head);
    });
    connect(m_view, &HeadGridView::changed, this, &HeadGridPanel::updateSelectedText);
    connect(m_view, &HeadGridView::changed, this, &HeadGridPanel::syncControls);

    showMessage(tr("The head grid shows a trained model's heads: choose the built-in model or "
                   "Open Model... on the Input dock's Text page."));
    updateSelectedText();
}

QLayout* HeadGridPanel::buildTopBar()
{
    m_show = new QComboBox;
    m_show->setObjectName(QStringLiteral("headsShow"));
    m_show->addItem(tr("exact P"), QStringLiteral("exact"));
    m_show->addItem(tr("approximation %1").arg(approxSymbol()), QStringLiteral("approximation"));
    m_show->setToolTip(tr("What each cell shows: the head's exact attention P or the "
                          "approximation %1 of the method.")
                           .arg(approxSymbol()));
    m_order = new QComboBox;
    m_order->setObjectName(QStringLiteral("headsOrder"));
    m_order->addItem(tr("model layout"), headOrderName(HeadOrder::Model));
    m_order->addItem(tr("worst error first"), headOrderName(HeadOrder::WorstFirst));
    m_order->addItem(tr("lowest entropy first"), headOrderName(HeadOrder::LowestEntropyFirst));
    m_order->addItem(tr("least monotonic first"), headOrderName(HeadOrder::LeastMonotonicFirst));
    m_order->setToolTip(tr("Layers down and heads across, or a ranked list: the largest "
                           "relative Frobenius error of P first, the spikiest exact rows (the "
                           "lowest mean row entropy of P) first, or the approximation least "
                           "monotonic in q\u00b7k (Spearman's correlation of %1 with q\u00b7k) "
                           "first.")
                            .arg(approxSymbol()));
    m_highlight = new QSpinBox;
    m_highlight->setObjectName(QStringLiteral("headsHighlight"));
    m_highlight->setRange(0, kMaxHighlight);
    m_highlight->setSpecialValueText(tr("none"));
    m_highlight->setToolTip(tr("Marks this many heads with the largest error with their rank."));
    QPushButton* exportButton =
        menuButton(tr("Export"), tr("The grid of heads as a figure: PNG, SVG or PDF"));
    QMenu* exportMenu = exportButton->menu();
    for (const FigureFormat format : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf})
        exportMenu->addAction(tr("Grid as %1...").arg(figureFormatName(format).toUpper()), this,
                              [this, format] { exportDialog(format); });
    m_surveyLabel = new QLabel;
    m_surveyLabel->setObjectName(QStringLiteral("headsSurvey"));
    m_surveyLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_surveyLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_surveyLabel->setWordWrap(true);  // a narrow page wraps the summary instead of cutting it
    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(160);
    m_progress->setTextVisible(true);
    m_progress->setFormat(tr("layer %v of %m"));
    m_progress->hide();

    auto* bar = new QHBoxLayout;
    bar->addWidget(caption(tr("Show:")));
    bar->addWidget(m_show);
    bar->addSpacing(12);
    bar->addWidget(caption(tr("Order:")));
    bar->addWidget(m_order);
    bar->addSpacing(12);
    bar->addWidget(caption(tr("Highlight worst:")));
    bar->addWidget(m_highlight);
    bar->addSpacing(12);
    bar->addWidget(exportButton);
    bar->addStretch(1);
    // The survey's line under the controls, the page's width to itself: beside them it had
    // about 90 pixels in a 1280-pixel window and wrapped to six lines, and the progress bar
    // shown while surveying made the page wider than such a window holds.
    auto* status = new QHBoxLayout;
    status->addWidget(m_surveyLabel, 1);
    status->addWidget(m_progress);
    auto* rows = new QVBoxLayout;
    rows->addLayout(bar);
    rows->addLayout(status);
    return rows;
}

void HeadGridPanel::setExperiment(const ExperimentSpec& spec)
{
    if (spec.input.kind != InputKind::Model) {
        m_debounce.stop();
        m_job.discard();  // whatever still runs is stale
        m_surveyKey.clear();
        m_surveyTitle.clear();
        m_view->clear();
        m_progress->hide();
        m_surveyLabel->clear();
        showMessage(tr("The head grid shows a trained model's heads: choose the built-in model "
                       "or Open Model... on the Input dock's Text page (a language model reading "
                       "text) or Image page (a ViT reading an image)."));
        updateBusy();
        return;
    }
    const QString key = surveyKey(spec, m_budget);
    if (key == m_surveyKey && !m_debounce.isActive())
        return;       // surveyed or being surveyed; the layer is all that changed
    m_job.discard();  // the survey running is stale
    m_pending = spec;
    m_surveyKey = key;
    m_debounce.start();
    updateBusy();
}

void HeadGridPanel::setEntries(std::vector<HeadSurveyEntry> entries, const QString& description)
{
    m_debounce.stop();
    m_job.discard();
    m_surveyKey.clear();
    m_surveyTitle = description;
    m_view->setEntries(std::move(entries));
    m_surveyLabel->setText(surveyLine(description));
    showGrid();
    updateBusy();
}

QString HeadGridPanel::surveyLine(const QString& title) const
{
    // Non-breaking spaces keep each count with its unit when the line wraps.
    return tr("%1 \u00b7 %2\u00a0layers\u00a0\u00d7\u00a0%3\u00a0heads")
        .arg(title)
        .arg(m_view->layerCount())
        .arg(m_view->headCount());
}

void HeadGridPanel::startSurvey()
{
    const ExperimentSpec spec = m_pending;
    m_surveyTitle =
        tr("%1 \u00b7 %2").arg(modelDisplayName(spec.input.modelPath), methodText(spec));
    m_progress->setRange(0, 0);
    m_progress->setValue(0);
    m_progress->show();
    m_surveyLabel->setText(tr("Surveying every head: %1...").arg(m_surveyTitle));
    m_clock.start();
    m_job.start(
        [spec, budget = m_budget](JobContext& context) {
            HeadSurvey survey;
            // A language model reads the text; a ViT the image, decoded here off the GUI thread.
            std::optional<ImagePixels> image;
            if (modelArchitectureOf(spec.input.modelPath) == ModelArchitecture::Vit) {
                image = loadImagePixels(spec.input.imagePath, 0);
                survey.tokens = loadVitModel(spec.input.modelPath)->config().tokenCount();
            } else {
                const std::shared_ptr<const LanguageModel> model = loadModel(spec.input.modelPath);
                survey.tokens =
                    int(modelTokens(*model, spec.input.text, spec.input.keepLastTokens).ids.size());
            }
            ComputeOptions options;
            options.budget = budget;
            options.cancelled = context.cancelledCheck();
            survey.entries = surveyHeads(
                spec, options, kThumbnailSize,
                [&](int done, int total) { context.setProgress(done, total); },
                image ? &*image : nullptr);
            return survey;
        },
        [this](HeadSurvey survey) { showSurvey(std::move(survey)); });
    updateBusy();
}

void HeadGridPanel::showProgress(int done, int total)
{
    m_progress->setRange(0, total);
    m_progress->setValue(done);
}

void HeadGridPanel::showSurvey(HeadSurvey survey)
{
    updateBusy();
    m_surveyTitle = tr("%1 \u00b7 %2\u00a0tokens \u00b7 %3")
                        .arg(modelDisplayName(m_pending.input.modelPath))
                        .arg(survey.tokens)
                        .arg(methodText(m_pending));
    m_view->setEntries(std::move(survey.entries));
    const bool approx = m_view->hasApproximation();
    m_surveyLabel->setText(
        tr("%1 \u00b7 %2").arg(surveyLine(m_surveyTitle), durationText(m_clock.elapsed())));
    m_surveyLabel->setToolTip(approx ? QString()
                                     : tr("The exact method has no approximation: every "
                                          "cell shows P."));
    showGrid();
    emit surveyFinished();
}

void HeadGridPanel::surveyFailed(const QString& message)
{
    updateBusy();
    m_view->clear();
    m_surveyKey.clear();  // the same spec may be tried again (after a new budget)
    m_surveyLabel->setText(tr("The survey failed: %1").arg(m_surveyTitle));
    showMessage(tr("The head survey failed: %1").arg(message));
    emit surveyFinished();
}

bool HeadGridPanel::isBusy() const
{
    return m_debounce.isActive() || m_job.isRunning();
}

void HeadGridPanel::updateBusy()
{
    const bool busy = isBusy();
    if (!busy)
        m_progress->hide();
    if (busy != m_busy) {
        m_busy = busy;
        emit busyChanged(busy);
    }
}

void HeadGridPanel::showMessage(const QString& text)
{
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void HeadGridPanel::showGrid()
{
    m_message->clear();
    m_stack->setCurrentWidget(m_view);
}

void HeadGridPanel::syncControls()
{
    const QSignalBlocker showBlocker(m_show);
    const QSignalBlocker orderBlocker(m_order);
    const QSignalBlocker highlightBlocker(m_highlight);
    m_show->setCurrentIndex(m_show->findData(
        m_view->showsApproximation() ? QStringLiteral("approximation") : QStringLiteral("exact")));
    m_order->setCurrentIndex(m_order->findData(headOrderName(m_view->order())));
    m_highlight->setValue(m_view->highlightCount());
}

QString HeadGridPanel::message() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

QString HeadGridPanel::surveyText() const
{
    return m_surveyLabel->text();
}

void HeadGridPanel::setCurrentHead(int layer, int head)
{
    m_view->setCurrentHead(layer, head);
}

void HeadGridPanel::updateSelectedText()
{
    const HeadSurveyEntry* e = m_view->entry(m_view->currentLayer(), m_view->currentHead());
    if (!e) {
        m_selected->setText(m_view->entries().empty()
                                ? QString()
                                : tr("Click a head (or a bar) to see its norms and errors."));
        return;
    }
    const int rank = m_view->errorRank(e->layer, e->head);
    const QString cell = QStringLiteral("<td align=\"right\">%1</td>");
    m_selected->setText(
        tr("<b>Layer %1, head %2</b>%3"
           "<table cellspacing=\"0\" cellpadding=\"2\">"
           "<tr><td></td><td align=\"right\"><i>mean</i></td><td align=\"right\"><i>max</i></td>"
           "</tr>"
           "<tr><td>|q'|</td>%4%5</tr><tr><td>|k'|</td>%6%7</tr></table>"
           "relative Frobenius error of P: <b>%8</b><br>mean row total variation: %9")
            .arg(e->layer)
            .arg(e->head)
            .arg(rank > 0
                     ? tr(" &nbsp; (error rank %1 of %2)").arg(rank).arg(m_view->entries().size())
                     : QString())
            .arg(cell.arg(number(e->meanQueryNorm)), cell.arg(number(e->maxQueryNorm)),
                 cell.arg(number(e->meanKeyNorm)), cell.arg(number(e->maxKeyNorm)),
                 number(e->metrics.relFrobeniusAttention), number(e->metrics.meanTotalVariation)));
}

QJsonObject HeadGridPanel::state() const
{
    QJsonObject state;
    state[QLatin1String("show")] = m_show->currentData().toString();
    state[QLatin1String("order")] = m_order->currentData().toString();
    state[QLatin1String("highlight_worst")] = m_highlight->value();
    return state;
}

void HeadGridPanel::setState(const QJsonObject& state)
{
    // Read everything first, so that a malformed state changes nothing.
    int show = m_show->currentIndex();
    if (state.contains(QLatin1String("show"))) {
        const QJsonValue value = state.value(QLatin1String("show"));
        show = value.isString() ? m_show->findData(value.toString()) : -1;
        if (show < 0)
            throw InputError(tr("show must be \"exact\" or \"approximation\""));
    }
    int order = m_order->currentIndex();
    if (state.contains(QLatin1String("order"))) {
        const QJsonValue value = state.value(QLatin1String("order"));
        order = value.isString() ? m_order->findData(value.toString()) : -1;
        if (order < 0)
            throw InputError(tr("order must be \"model\", \"worst-first\", "
                                "\"lowest-entropy-first\" or \"least-monotonic-first\""));
    }
    int highlight = m_highlight->value();
    if (state.contains(QLatin1String("highlight_worst"))) {
        const QJsonValue value = state.value(QLatin1String("highlight_worst"));
        const double number = value.toDouble(std::nan(""));
        if (!value.isDouble() || number != std::floor(number) || number < 0 ||
            number > kMaxHighlight)
            throw InputError(
                tr("highlight_worst must be an integer from 0 to %1").arg(kMaxHighlight));
        highlight = int(number);
    }
    m_show->setCurrentIndex(show);
    m_order->setCurrentIndex(order);
    m_highlight->setValue(highlight);
}

void HeadGridPanel::exportFigure(const QString& path, FigureFormat format)
{
    if (m_view->entries().empty())
        throw OutputError(tr("cannot write the figure %1: no heads have been surveyed (the head "
                             "grid needs model input)")
                              .arg(QDir::toNativeSeparators(path)));
    exportPaintedFigure(path, format, gridFigure());
}

PaintedFigure HeadGridPanel::gridFigure() const
{
    const QSize size = m_view->isVisible() && m_view->width() >= 200 && m_view->height() >= 150
                           ? m_view->size()
                           : QSize(1200, 800);
    const QString title =
        tr("Every head: %1 \u2014 %2")
            .arg(m_surveyTitle, m_view->showsApproximation() && m_view->hasApproximation()
                                    ? tr("approximation %1").arg(approxSymbol())
                                    : tr("exact P"));
    PaintedFigure figure;
    figure.size = size;
    figure.dpi = logicalDpiX();
    figure.title = title;
    figure.description = QStringLiteral("Attention Lab figure");
    figure.what = QStringLiteral("figure");
    const HeadGridView* view = m_view;
    figure.png = [view, size, title] {
        QImage image(size * kPngExportScale, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(kPngExportScale);
        {
            QPainter painter(&image);
            view->paintFigure(painter, size, title);
        }
        tagExportResolution(image, kPngExportScale);
        return image;
    };
    figure.paintVector = [view, size, title](QPaintDevice& device, bool pdf) {
        QPainter painter;
        if (!painter.begin(&device))
            return false;
        if (pdf)  // the page is size points wide: map the figure's pixels onto it
            painter.setWindow(QRect(QPoint(0, 0), size));
        view->paintFigure(painter, size, title);
        return painter.end();
    };
    return figure;
}

void HeadGridPanel::exportDialog(FigureFormat format)
{
    runExportDialog(this, tr("Export head grid"), QStringLiteral("heads"), figureFormatName(format),
                    [&](const QString& path) { exportFigure(path, format); });
}

}  // namespace attnlab::ui

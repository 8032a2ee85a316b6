#include "ui/window/main_window.h"

#include "ui/common/background_job.h"
#include "ui/common/controls_column.h"
#include "ui/common/wheel_guard.h"
#include "ui/errors/error_analysis_panel.h"
#include "ui/errors/error_chart.h"
#include "ui/experiment/attention_maps_page.h"
#include "ui/experiment/error_distribution_view.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/experiment/image_overlay_view.h"
#include "ui/experiment/image_page.h"
#include "ui/experiment/input_panel.h"
#include "ui/experiment/method_panel.h"
#include "ui/experiment/metrics_panel.h"
#include "ui/experiment/model_files.h"
#include "ui/experiment/row_comparison_view.h"
#include "ui/experiment/view_bar.h"
#include "inputs/model_input.h"
#include "ui/lecture/scenario_panel.h"
#include "ui/window/error_banner.h"
#include "ui/window/feature_map_controls.h"
#include "ui/window/lecture_controls.h"
#include "ui/window/page_docks.h"
#include "ui/model/downstream_panel.h"
#include "ui/model/head_grid_panel.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/window/spec_change.h"
#include "ui/stepper/stepper_view.h"
#include "ui/timing/timing_chart.h"
#include "ui/timing/timing_panel.h"
#include "ui/generation/generation_page.h"
#include "ui/window/window_exports.h"
#include "ui/window/window_generation.h"
#include "ui/window/window_session.h"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDockWidget>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace attnlab::ui {

namespace {

// A computation shorter than this does not flash "Computing..." in the status bar.
constexpr int kBusyDelayMs = 250;
// The room a window system's frame takes around a window not shown yet (its title bar above),
// in pixels.
constexpr QMargins kFrameReserve(4, 32, 4, 4);

bool sameSpec(const ExperimentSpec& a, const ExperimentSpec& b)
{
    return a.toJson() == b.toJson();
}

// Adds page as the next tab of pages, with its title and tooltip; name is the page's object name
// (for tests and accessibility tools).
void addPage(QTabWidget* pages, QWidget* page, const QString& name, const QString& title,
             const QString& tip)
{
    page->setObjectName(name);
    pages->setTabToolTip(pages->addTab(page, title), tip);
}

// The tab of a matrix page: the page with room above it for the view bar, which moves to the
// matrix page shown (placeViewBar), so that the tab bar stays put from page to page.
QWidget* withViewBarRoom(QWidget* page)
{
    auto* tab = new QWidget;
    auto* layout = new QVBoxLayout(tab);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(page, 1);
    return tab;
}

// Puts bar at the top of tab, a page made by withViewBarRoom.
void placeViewBar(ViewBar* bar, QWidget* tab)
{
    static_cast<QVBoxLayout*>(tab->layout())->insertWidget(0, bar);
}

}  // namespace

MainWindow::MainWindow(Start start, QWidget* parent)
    : QMainWindow(parent),
      m_controller(new ExperimentController(this)),
      m_undo(new QUndoStack(this)),
      m_distributionJob(new BackgroundJob(this))
{
    WheelGuard::install(qobject_cast<QApplication*>(QCoreApplication::instance()));
    setWindowTitle(tr("Attention Lab"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/attention-lab.svg")));
    buildViews();
    m_session = new WindowSession(*this, m_recoveryBar);
    m_exports = new WindowExports(*this);
    buildDocks();
    buildMenus();
    m_pageDocks = new PageDocks(*this, presentation(), *m_pages, TimingPage);

    m_hoverLabel = new QLabel;
    m_statusLabel = new QLabel;
    statusBar()->addWidget(m_hoverLabel, 1);
    statusBar()->addPermanentWidget(m_statusLabel);
    m_busyDelay = new QTimer(this);
    m_busyDelay->setSingleShot(true);
    m_busyDelay->setInterval(kBusyDelayMs);
    connect(m_busyDelay, &QTimer::timeout, this,
            [this] { m_statusLabel->setText(tr("Computing...")); });
    connect(m_controller, &ExperimentController::busyChanged, this, [this](bool busy) {
        if (!busy) {
            m_busyDelay->stop();
            return;
        }
        m_busyDelay->start();
        m_errorBanner->inputMoved();  // a refusal was about the input before
    });
    // A long or large run says so while it computes, in place of "Computing...".
    connect(m_controller, &ExperimentController::runNotice, this, [this](const QString& notice) {
        if (!notice.isEmpty()) {
            m_busyDelay->stop();
            m_statusLabel->setText(tr("Computing, %1...").arg(notice));
            m_runNoticeShown = true;
        } else if (m_runNoticeShown) {
            m_statusLabel->setText(tr("Computing..."));
            m_runNoticeShown = false;
        }
    });
    connect(m_controller, &ExperimentController::resultReady, this, &MainWindow::showResult);
    connect(m_controller, &ExperimentController::failed, this, &MainWindow::showError);

    restoreSettings(start);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildViews()
{
    m_errorBanner = new ErrorBanner;
    buildFigures();
    buildPages();

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    m_recoveryBar = new QWidget;
    m_recoveryBar->setObjectName(QStringLiteral("recoveryBar"));
    m_recoveryBar->hide();
    layout->addWidget(m_recoveryBar);
    layout->addWidget(m_errorBanner);
    layout->addWidget(m_pages, 1);
    // The explanation of the scenario open, under the page it explains.
    m_scenarioPanel = new ScenarioPanel;
    m_scenarioPanel->hide();
    layout->addWidget(m_scenarioPanel);
    setCentralWidget(central);
}

void MainWindow::buildFigures()
{
    m_exactView = new HeatmapView;
    m_approxView = new HeatmapView;
    m_errorView = new HeatmapView;
    m_currentFigure = m_exactView;
    for (HeatmapView* view : {m_exactView, m_approxView, m_errorView}) {
        view->setMinimumSize(200, 200);
        view->setToolTip(tr("Hover a cell to read P, P\u0302 and the error in the status bar; "
                            "click it to select its query. Wheel: zoom. Drag: pan. Shift+drag: "
                            "zoom to the rectangle. Double-click: the whole matrix."));
        connect(view, &HeatmapView::cellHovered, this, [this, view](int row, int col) {
            if (row >= 0)
                m_currentFigure = view;
            hoverCell(row, col);
        });
        connect(view, &HeatmapView::cellClicked, this, [this, view](int row, int) {
            m_currentFigure = view;
            selectQuery(row);
        });
    }

    m_distributionView = new ErrorDistributionView;
    m_distributionView->setMinimumSize(200, 200);
    connect(m_distributionView, &QCustomPlot::mousePress, this,
            [this] { m_currentFigure = m_distributionView; });
    m_errorStack = new QStackedWidget;
    m_errorStack->addWidget(m_errorView);
    m_errorStack->addWidget(m_distributionView);

    m_rowView = new RowComparisonView;
    // The query rows are a figure to export like the maps: the one last clicked or hovered.
    connect(m_rowView, &QCustomPlot::mousePress, this, [this] { m_currentFigure = m_rowView; });
    m_rowView->setMouseTracking(true);
    connect(m_rowView, &QCustomPlot::mouseMove, this, [this] { m_currentFigure = m_rowView; });
    m_imageView = new ImageOverlayView;
    connect(m_imageView, &ImageOverlayView::patchClicked, this, [this](int patch) {
        m_currentFigure = m_imageView;
        const Computation& computation = m_controller->current();
        selectQuery(patch + (computation.result ? firstPatchToken(*computation.result) : 0));
    });
    // An explicit minimum: QCustomPlot's own hint follows its layout's content (a legend, long
    // labels) and would take the grid's width from the maps.
    m_rowView->setMinimumSize(200, 200);
    m_imageView->setMinimumSize(200, 200);
    // Object names: for tests and accessibility tools.
    m_distributionView->setObjectName(QStringLiteral("distributionView"));
    m_exactView->setObjectName(QStringLiteral("exactView"));
    m_approxView->setObjectName(QStringLiteral("approxView"));
    m_errorView->setObjectName(QStringLiteral("errorView"));
    m_rowView->setObjectName(QStringLiteral("rowView"));
    m_imageView->setObjectName(QStringLiteral("imageView"));
}

void MainWindow::buildPages()
{
    m_pages = new QTabWidget;
    m_pages->setObjectName(QStringLiteral("pages"));
    m_viewBar = new ViewBar(*m_errorView);
    connect(m_viewBar, &ViewBar::changed, this,
            [this] { setViewSettings(m_viewBar->applied(m_view)); });
    // The matrices as large as the page allows: two by two, or in a row above the query rows.
    m_mapsPage = new AttentionMapsPage(m_exactView, m_approxView, m_errorStack, m_rowView);
    QWidget* matrices = withViewBarRoom(m_mapsPage);
    placeViewBar(m_viewBar, matrices);
    addPage(m_pages, matrices, QStringLiteral("matricesPage"), tr("Attention matrices"),
            tr("Exact P, its approximation, the error, and the selected query's rows."));
    // Image input gets a second page: the selected patch's attention over the whole image, as
    // large as the window allows.
    m_imagePage = new ui::ImagePage(m_imageView);
    connect(m_imagePage, &ui::ImagePage::classRowRequested, this, [this] { selectQuery(0); });
    connect(m_imagePage, &ui::ImagePage::rolloutToggled, this, [this](bool on) {
        m_view.rollout = on;
        markDirty();
        refreshViews();
    });
    addPage(m_pages, withViewBarRoom(m_imagePage), QStringLiteral("imagePage"),
            tr("Over the image"),
            tr("Image input: the selected patch's exact and approximate attention, and the "
               "error, drawn over the image. Click a patch to select it; a Vision Transformer's "
               "page starts on its [CLS] token and can show the attention rollout over every "
               "layer."));
    m_pages->setTabEnabled(ImagePage, false);  // until an image result arrives

    m_headGrid = new HeadGridPanel;
    addPage(m_pages, m_headGrid, QStringLiteral("headsPage"), tr("Heads"),
            tr("A trained model's heads at a glance, layers down and heads across, each framed "
               "by the approximation's error; click one to show it in the three maps."));
    connect(m_headGrid, &HeadGridPanel::headActivated, this, &MainWindow::showHead);
    m_downstream = new DownstreamPanel;
    addPage(m_pages, m_downstream, QStringLiteral("downstreamPanel"), tr("Inside the model"),
            tr("The approximation in place of softmax attention inside the model: how its "
               "next-token predictions change, position by position and against m."));
    connect(m_downstream, &DownstreamPanel::sweepFinished, this, &MainWindow::markDirty);

    m_errorPanel = new ErrorAnalysisPanel;
    addPage(m_pages, m_errorPanel, QStringLiteral("errorPanel"), tr("Error analysis"),
            tr("Where and why the approximations break: the error against m, the query/key "
               "norms and L, over many seeds, and the kernel's error against Lemma 2."));
    connect(m_errorPanel, &ErrorAnalysisPanel::sweepFinished, this, &MainWindow::markDirty);

    m_timingPanel = new TimingPanel;
    addPage(m_pages, m_timingPanel, QStringLiteral("timingPanel"), tr("Timing"),
            tr("How the cost of each method grows with the sequence length, measured on this "
               "machine."));
    connect(m_timingPanel, &TimingPanel::sweepFinished, this, &MainWindow::markDirty);
    m_stepperView = new StepperView;
    addPage(m_pages, m_stepperView, QStringLiteral("stepperView"), tr("Stepper"),
            tr("Causal linear attention run as a recurrent network, one token at a time, beside "
               "exact causal softmax."));
    m_generatePage = (new WindowGeneration(*this, m_pages, m_stepperView))->page();
    addPage(m_pages, m_generatePage, QStringLiteral("generatePage"), tr("Generate"),
            tr("The model writes: it continues a prompt with exact attention and with the "
               "approximation run as a recurrent network, token by token, the two continuations "
               "side by side with their KL, cost and memory."));
    connect(m_pages, &QTabWidget::currentChanged, this, [this](int page) {
        if (page == ImagePage)
            m_currentFigure = m_imageView;
        else if (page == ErrorsPage)
            m_currentFigure = m_errorPanel->chart();
        else if (page == TimingPage)
            m_currentFigure = m_timingPanel->chart();
        else if (page == ModelPage)
            m_currentFigure = m_downstream->chart();
        else if (page == GeneratePage)
            m_currentFigure = m_generatePage->chart(GenerationChartKind::Kl);
        else if (m_currentFigure == m_imageView || m_currentFigure == m_errorPanel->chart() ||
                 m_currentFigure == m_timingPanel->chart() ||
                 m_currentFigure == m_downstream->chart() ||
                 m_currentFigure == m_generatePage->chart(GenerationChartKind::Kl))
            m_currentFigure = m_exactView;
        // The head, error and colour controls act on the matrix pages only.
        if (page == MatricesPage || page == ImagePage)
            placeViewBar(m_viewBar, m_pages->widget(page));
        updateStepper();
        updateModelPages();
        markDirty();
    });
}

void MainWindow::buildDocks()
{
    // The controls on the left, the metrics on the right, the figures between them.
    const auto addDock = [this](QWidget* panel, const QString& title, const QString& name,
                                Qt::DockWidgetArea area) {
        auto* dock = new QDockWidget(title, this);
        dock->setObjectName(name);
        // Combo boxes may be narrower than their longest entry (the open list shows it whole):
        // the docks then leave the figures room in a 1280-pixel-wide window.
        for (QComboBox* combo : panel->findChildren<QComboBox*>()) {
            combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
            combo->setMinimumContentsLength(10);
        }
        dock->setWidget(dockContents(panel));
        addDockWidget(area, dock);
    };
    m_inputPanel = new InputPanel;
    m_methodPanel = new MethodPanel;
    m_metricsPanel = new MetricsPanel;
    m_methodPanel->setObjectName(QStringLiteral("methodPanel"));
    m_metricsPanel->setObjectName(QStringLiteral("metricsPanel"));
    addDock(m_inputPanel, tr("Input"), QStringLiteral("inputDock"), Qt::LeftDockWidgetArea);
    addDock(m_methodPanel, tr("Method"), QStringLiteral("methodDock"), Qt::LeftDockWidgetArea);
    addDock(m_metricsPanel, tr("Metrics"), QStringLiteral("metricsDock"), Qt::RightDockWidgetArea);
    connect(m_inputPanel, &InputPanel::edited, this,
            [this](const ExperimentSpec& spec, const QString& description) {
                setSpec(spec, description);
            });
    connect(m_methodPanel, &MethodPanel::edited, this, &MainWindow::setSpec);
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_session->addFileActions(file);
    file->addSeparator();
    m_exports->addFileActions(file);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_undo->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    QAction* budget =
        edit->addAction(tr("&Memory Budget..."), this, &MainWindow::memoryBudgetDialog);
    budget->setToolTip(tr("The most memory one computation may take"));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());
    view->addSeparator();
    QAction* fullScreen = view->addAction(tr("&Full Screen"), this, [this](bool on) {
        if (on)
            showFullScreen();
        else
            showNormal();
    });
    fullScreen->setCheckable(true);
    fullScreen->setShortcut(QKeySequence::FullScreen);
    m_lecture = new LectureControls(*this, m_scenarioPanel, view);
    m_featureMaps = new FeatureMapControls(*this, menuBar());
    connect(m_methodPanel, &MethodPanel::fitRequested, m_featureMaps,
            &FeatureMapControls::openFitDialog);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Attention Lab"), this, &MainWindow::showAbout);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::setSpec(const ExperimentSpec& spec, const QString& description, int mergeKey)
{
    const ExperimentSpec next = windowSpec(spec);
    if (sameSpec(next, m_controller->spec()))
        return;
    m_undo->push(new SpecChange(this, m_controller->spec(), next,
                                description.isEmpty() ? tr("Change the experiment") : description,
                                mergeKey));
}

void MainWindow::applySpec(const ExperimentSpec& spec)
{
    m_inputPanel->setSpec(spec);
    m_methodPanel->setSpec(spec);
    m_controller->setSpec(spec);
    markDirty();
}

void MainWindow::showResult()
{
    const Computation& computation = m_controller->current();
    const ExperimentResult& result = *computation.result;
    m_errorBanner->inputMoved();
    const bool fromSession = m_pendingView.has_value();
    ViewSettings settings = m_pendingView.value_or(m_view);
    m_pendingView.reset();
    settings.head = std::clamp(settings.head, 0, int(result.heads.size()) - 1);
    // A query picked among a text's tokens means nothing among an image's patches (and back): a
    // new kind of input starts with none, which a ViT's image page shows as its [CLS] row.
    const bool image = result.gridRows > 0;
    const bool imageBefore = m_pages->isTabEnabled(ImagePage);
    if (settings.query >= result.labels.size() || (!fromSession && image != imageBefore))
        settings.query = -1;
    m_view = settings;
    rememberModelsOf(result.spec.input);
    m_imagePage->setRollout(settings.rollout);
    // The image page shows image input; it comes to the front when an image first arrives.
    // A session's page wins over that.
    // QTabBar lays its tabs out and repaints at every call, even with the state unchanged.
    if (image != imageBefore)
        m_pages->setTabEnabled(ImagePage, image);
    const Page current = currentPage();
    if (image != imageBefore && (current == MatricesPage || current == ImagePage))
        m_pages->setCurrentIndex(image ? ImagePage : MatricesPage);
    if (m_pendingPage)
        showPage(*m_pendingPage);
    m_pendingPage.reset();
    m_stepperStale = true;
    updateStepper();
    m_headsStale = true;
    m_downstreamStale = true;
    updateModelPages();
    m_errorPanel->setInput(result.spec, computation.input);
    m_generatePage->setExperiment(result.spec, computation.input);
    refreshViews();
    m_runNoticeShown = false;
    m_statusLabel->setText(resultStatusText(result));
    emit resultShown();
}

void MainWindow::refreshViews()
{
    const Computation& computation = m_controller->current();
    if (!computation.result)
        return;
    const ExperimentResult& result = *computation.result;
    m_viewBar->setSettings(m_view, int(result.heads.size()));
    showAttention(*m_exactView, *m_approxView, *m_errorView, computation.result, m_view);
    m_mapsPage->lineUpNewContent();
    showQueryRow(*m_rowView, result, m_view);
    showImageOverlay(*m_imageView, computation.patchImage, result, m_view,
                     computation.rollout.get());
    m_imagePage->setClassTokenBar(firstPatchToken(result) > 0);
    showErrorDistribution();
    m_metricsPanel->setResult(result, m_view.head);
}

void MainWindow::showErrorDistribution()
{
    const bool shown = m_view.errorDistribution;
    if (!shown && m_currentFigure == m_distributionView)
        m_currentFigure = m_errorView;
    else if (shown && m_currentFigure == m_errorView)
        m_currentFigure = m_distributionView;
    m_errorStack->setCurrentWidget(shown ? static_cast<QWidget*>(m_distributionView) : m_errorView);
    const std::shared_ptr<const ExperimentResult> result = m_controller->current().result;
    if (!shown || !result)  // the errors are binned only while the histograms are shown
        return;
    if (result->heads[std::size_t(m_view.head)].attentionExact.size() == 0) {
        m_distributionJob->discard();
        m_distributionView->clear();
        return;
    }
    // Binning L^2 errors takes about a second at L = 4096: on a worker, keeping the result alive;
    // only the newest request is shown.
    const int head = m_view.head;
    m_distributionJob->start(
        [result, head](JobContext&) {
            const HeadResult& matrices = result->heads[std::size_t(head)];
            return errorDistribution(matrices.attentionExact, matrices.attentionApprox,
                                     result->spec.causal);
        },
        [this, result, head](const ErrorDistribution& distribution) {
            const ResultMatrix& exact = result->heads[std::size_t(head)].attentionExact;
            m_distributionView->setDistribution(distribution, exact.rows(), exact.cols(),
                                                result->spec.causal);
            emit distributionShown();
        });
}

void MainWindow::showError(const QString& message)
{
    // A model the user just chose that cannot be read (the message names it) is not kept: the
    // step that chose it is taken back, the docks show the input in force, and the banner stays.
    const InputSpec& failed = m_controller->spec().input;
    const Computation& shown = m_controller->current();
    const bool newModel = failed.kind == InputKind::Model && shown.result &&
                          (shown.result->spec.input.kind != InputKind::Model ||
                           shown.result->spec.input.modelPath != failed.modelPath);
    if (newModel && message.contains(failed.modelPath)) {
        if (const auto before = withdrawStep(*m_undo, m_controller->spec())) {
            if (!sameSpec(*before, m_controller->spec()))
                applySpec(*before);
            showOpenError(message);
            return;
        }
    }
    m_errorBanner->showRefusal(message);
    m_runNoticeShown = false;
    m_statusLabel->setText(tr("Not computed"));
}

void MainWindow::showOpenError(const QString& message)
{
    m_errorBanner->showOpenError(message);
}

QString MainWindow::errorMessage() const
{
    return m_errorBanner->message();
}

void MainWindow::setViewSettings(const ViewSettings& settings)
{
    m_view = settings;
    refreshViews();
    markDirty();
    emit viewChanged();
}

void MainWindow::markDirty()
{
    m_session->markDirty();
}

void MainWindow::setMemoryBudget(const MemoryBudget& budget)
{
    m_budget = budget;
    m_controller->setMemoryBudget(budget);
    m_errorPanel->setMemoryBudget(budget);
    m_timingPanel->setMemoryBudget(budget);
    m_stepperView->setMemoryBudget(budget);
    m_headGrid->setMemoryBudget(budget);
    m_downstream->setMemoryBudget(budget);
    m_generatePage->setMemoryBudget(budget);
}

void MainWindow::memoryBudgetDialog()
{
    constexpr qint64 kMiB = qint64(1) << 20;
    bool accepted = false;
    const int mebibytes = QInputDialog::getInt(
        this, tr("Memory budget"),
        tr("The most memory one computation may take, in MiB.\n"
           "A computation or sweep that would need more is refused with a message\n"
           "before it starts. The default, %1, is half of this machine's memory.")
            .arg(formatBytes(double(MemoryBudget::defaultBytes()))),
        int(std::min<qint64>(m_budget.bytes() / kMiB, std::numeric_limits<int>::max())), 64,
        std::numeric_limits<int>::max(), 256, &accepted);
    if (!accepted)
        return;
    setMemoryBudget(MemoryBudget(qint64(mebibytes) * kMiB));
    QSettings().setValue(QStringLiteral("memoryBudget"), m_budget.bytes());
    m_controller->setSpec(m_controller->spec());  // what the old budget refused may fit now
}

void MainWindow::selectQuery(int query)
{
    const Computation& computation = m_controller->current();
    if (!computation.result || query < 0 || query >= computation.result->labels.size())
        return;
    m_view.query = query;
    markDirty();
    const ExperimentResult& result = *computation.result;
    for (HeatmapView* view : {m_exactView, m_approxView, m_errorView})
        view->setSelectedRow(query);
    showQueryRow(*m_rowView, result, m_view);
    showImageOverlay(*m_imageView, computation.patchImage, result, m_view,
                     computation.rollout.get());
    m_imagePage->setClassTokenBar(firstPatchToken(result) > 0);
}

void MainWindow::hoverCell(int row, int col)
{
    for (HeatmapView* view : {m_exactView, m_approxView, m_errorView})
        view->setHighlightedCell(row, col);
    const Computation& computation = m_controller->current();
    if (row < 0 || !computation.result) {
        m_hoverLabel->clear();
        return;
    }
    const QStringList& labels = computation.result->labels;
    m_hoverLabel->setText(
        tr("query \u201c%1\u201d (%2) \u2192 key \u201c%3\u201d (%4):   P = %5   P\u0302 = %6   "
           "error = %7")
            .arg(labels.value(row))
            .arg(row)
            .arg(labels.value(col))
            .arg(col)
            .arg(m_exactView->value(row, col), 0, 'g', 4)
            .arg(m_approxView->value(row, col), 0, 'g', 4)
            .arg(m_errorView->value(row, col), 0, 'g', 4));
}

void MainWindow::showPage(Page page)
{
    if (m_pages->isTabEnabled(page))
        m_pages->setCurrentIndex(page);
}

MainWindow::Page MainWindow::currentPage() const
{
    return Page(m_pages->currentIndex());
}

void MainWindow::updateStepper()
{
    const Computation& computation = m_controller->current();
    if (currentPage() != StepperPage || !m_stepperStale || !computation.result)
        return;
    m_stepperStale = false;
    m_stepperView->setExperiment(computation.result->spec, computation.input);
}

void MainWindow::updateModelPages()
{
    const Computation& computation = m_controller->current();
    if (!computation.result)
        return;
    const ExperimentSpec& spec = computation.result->spec;
    if (currentPage() == HeadsPage && m_headsStale) {
        m_headsStale = false;
        m_headGrid->setExperiment(spec);
    }
    if (!m_headsStale)
        m_headGrid->setCurrentHead(spec.input.layer, m_view.head);
    if (currentPage() == ModelPage && m_downstreamStale) {
        m_downstreamStale = false;
        m_downstream->setExperiment(spec);
    }
}

void MainWindow::showHead(int layer, int head)
{
    ExperimentSpec spec = m_controller->spec();
    ViewSettings view = m_view;
    view.head = head;
    if (spec.input.layer == layer) {
        setViewSettings(view);
    } else {
        m_pendingView = view;
        spec.input.layer = layer;
        setSpec(spec, tr("Show layer %1, head %2").arg(layer).arg(head));
    }
    showPage(MatricesPage);
}

void MainWindow::fitToScreen()
{
    const QScreen* where = screen();
    if (!where)
        return;
    const QRect available = where->availableGeometry();
    // The window system's frame around the window: known once the window is shown, else room
    // for one.
    const QRect outer = frameGeometry();
    const QMargins frame =
        isVisible()
            ? QMargins(geometry().left() - outer.left(), geometry().top() - outer.top(),
                       outer.right() - geometry().right(), outer.bottom() - geometry().bottom())
            : kFrameReserve;
    resize(size().boundedTo(available.size().shrunkBy(frame)));
    // A top-level window's position is its frame's.
    const QSize framed = size().grownBy(frame);
    // Inside the screen where it fits; at the screen's top left where it cannot be made small
    // enough.
    const QPoint topLeft(
        std::max(available.left(), std::min(x(), available.right() + 1 - framed.width())),
        std::max(available.top(), std::min(y(), available.bottom() + 1 - framed.height())));
    if (topLeft != pos())
        move(topLeft);
}

void MainWindow::restoreSettings(Start start)
{
    resize(1400, 900);
    fitToScreen();
    if (start == Start::DefaultExample) {  // a clean window: the layout as built
        showExample();
        return;
    }
    QSettings settings;
    const qint64 budget = settings.value(QStringLiteral("memoryBudget")).toLongLong();
    if (budget > 0)
        setMemoryBudget(MemoryBudget(budget));
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    fitToScreen();  // the geometry saved on a larger screen
    restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    if (start == Start::OpenFile || !m_session->restoreLast())
        showExample();
}

void MainWindow::showExample()
{
    ViewSettings view;
    view.head = builtinExample().head;
    m_pendingView = view;
    applySpec(exampleSpec());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    presentation().leave();     // the layout to keep is the one before presenting
    m_pageDocks->showHidden();  // and with the docks the page shown has no use for
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    m_session->saveLast();
    event->accept();
}

void MainWindow::showAbout()
{
    QMessageBox::about(
        this, tr("About Attention Lab"),
        tr("<h3>Attention Lab %1</h3>"
           "<p>Exact softmax attention beside its linear-time approximations: Performer's "
           "FAVOR+ random features, elu+1 linear attention and more.</p>"
           "<p>Licence: GNU General Public License, version 3 or later.</p>"
           "<p>Built with Qt (LGPL 3), QCustomPlot (GPL 3) and Eigen (MPL 2). Sample images: "
           "scikit-image sample data (CC0 and public domain).</p>")
            .arg(QApplication::applicationVersion()));
}

void MainWindow::showSession(const Session& session, std::optional<Page> page)
{
    m_pendingPage = page;
    m_pendingView = ViewSettings::fromJson(session.view);
    m_undo->clear();
    applySpec(windowSpec(session.spec));
}

void MainWindow::startAutosave()
{
    m_session->startAutosave();
}

Autosave* MainWindow::autosave() const
{
    return m_session->autosave();
}

bool MainWindow::isOfferingRecovery() const
{
    return m_session->isOfferingRecovery();
}

bool MainWindow::restoreRecovery()
{
    return m_session->restoreRecovery();
}

bool MainWindow::openSession(const QString& path)
{
    return m_session->open(path);
}

bool MainWindow::saveSession(const QString& path)
{
    return m_session->save(path);
}

PresentationMode& MainWindow::presentation()
{
    return m_lecture->presentation();
}

void MainWindow::setPresentationMode(bool on, PresentationMode::Placement placement)
{
    m_lecture->setPresentationMode(on, placement);
}

ExperimentSpec MainWindow::windowSpec(ExperimentSpec spec)
{
    spec.exactMethod = false;
    // A second checkpoint is compared with a model's input only (a language model's).
    if (spec.input.kind != InputKind::Model)
        spec.input.comparisonModelPath.clear();
    return spec;
}

}  // namespace attnlab::ui

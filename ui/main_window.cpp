#include "main_window.h"

#include "autosave.h"
#include "controls_column.h"
#include "io/csv.h"
#include "model/downstream_panel.h"
#include "errors.h"
#include "experiment/experiment_controller.h"
#include "errors/error_analysis_panel.h"
#include "errors/error_chart.h"
#include "experiment/error_distribution_view.h"
#include "plotting/figure_export.h"
#include "model/head_grid_view.h"
#include "plotting/heatmap_view.h"
#include "experiment/image_overlay_view.h"
#include "experiment/input_panel.h"
#include "experiment/attention_maps_page.h"
#include "experiment/method_panel.h"
#include "experiment/metrics_panel.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "experiment/row_comparison_view.h"
#include "lecture/scenario_panel.h"
#include "sessions/session.h"
#include "stepper/stepper_view.h"
#include "timing/timing_chart.h"
#include "timing/timing_panel.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>
#include <QVBoxLayout>

namespace attnlab::ui {

namespace {

// A computation shorter than this does not flash "Computing..." in the status bar.
constexpr int kBusyDelayMs = 250;

bool sameSpec(const ExperimentSpec& a, const ExperimentSpec& b)
{
    return a.toJson() == b.toJson();
}

}  // namespace

// One undoable change of the spec. Consecutive changes with the same merge key (one slider drag)
// merge into one step.
class SpecChange : public QUndoCommand {
public:
    SpecChange(MainWindow* window, const ExperimentSpec& before, const ExperimentSpec& after,
               const QString& text, int mergeKey)
        : QUndoCommand(text), m_window(window), m_before(before), m_after(after),
          m_mergeKey(mergeKey)
    {
    }

    int id() const override { return m_mergeKey; }

    bool mergeWith(const QUndoCommand* other) override
    {
        m_after = static_cast<const SpecChange*>(other)->m_after;
        setText(other->text());
        return true;
    }

    void undo() override { m_window->applySpec(m_before); }
    void redo() override { m_window->applySpec(m_after); }

private:
    MainWindow* m_window;
    ExperimentSpec m_before;
    ExperimentSpec m_after;
    int m_mergeKey;
};

MainWindow::MainWindow(Start start, QWidget* parent)
    : QMainWindow(parent),
      m_controller(new ExperimentController(this)),
      m_undo(new QUndoStack(this))
{
    setWindowTitle(tr("Attention Lab"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/attention-lab.svg")));
    buildViews();
    buildDocks();
    buildMenus();

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
        if (busy)
            m_busyDelay->start();
        else
            m_busyDelay->stop();
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

void MainWindow::startAutosave()
{
    if (m_autosave)
        return;
    buildRecoveryBar();
    m_autosave = new Autosave([this] { return Session{m_controller->spec(), sessionView()}; },
                              Autosave::kDefaultIntervalMs, this);
    connect(m_autosave, &Autosave::saveFailed, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Autosave failed: %1").arg(message), 10000);
    });
}

MainWindow::~MainWindow() = default;

void MainWindow::buildViews()
{
    m_errorBar = new QLabel;
    m_errorBar->setWordWrap(true);
    m_errorBar->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_errorBar->setStyleSheet(QStringLiteral(
        "QLabel { background: #fde8e8; color: #7a1010; border: 1px solid #e4a0a0; "
        "border-radius: 3px; padding: 6px; }"));
    m_errorClose = new QToolButton;
    m_errorClose->setText(QStringLiteral("\u2715"));
    m_errorClose->setToolTip(tr("Hide this message"));
    m_errorClose->setAutoRaise(true);
    auto* errorRow = new QHBoxLayout;
    errorRow->addWidget(m_errorBar, 1);
    errorRow->addWidget(m_errorClose);
    connect(m_errorClose, &QToolButton::clicked, this, [this] {
        m_errorBar->hide();
        m_errorClose->hide();
    });
    m_errorBar->hide();
    m_errorClose->hide();

    m_head = new QSpinBox;
    m_head->setToolTip(tr("The head shown: each head has its own Wq, Wk, Wv and W."));
    m_head->setRange(0, 0);
    m_errorKind = new QComboBox;
    m_errorKind->addItems({tr("signed  P\u0302 \u2212 P"), tr("absolute  |P\u0302 \u2212 P|"),
                           tr("relative  |P\u0302 \u2212 P| / P")});
    m_errorKind->setToolTip(tr("The error map: signed (blue where the approximation is too "
                               "small, red where too large), absolute, or relative to the "
                               "exact weight."));
    m_sharedScale = new QCheckBox(tr("Same scale for P and P\u0302"));
    m_sharedScale->setToolTip(tr("Draw exact and approximate attention with the same colour "
                                 "scale, so equal colours mean equal weights."));
    m_colorMap = new QComboBox;
    m_colorMap->addItems({tr("viridis"), tr("magma")});
    m_colorMap->setToolTip(tr("The colour map of P and P\u0302 (both perceptually uniform)."));
    m_distribution = new QCheckBox(tr("Histograms"));
    m_distribution->setToolTip(tr("Show the distribution of the errors instead of the error map: "
                                  "histograms of |P\u0302 \u2212 P| and of the relative error, "
                                  "split into small and large exact weights."));
    const auto viewChanged = [this] {
        ViewSettings settings = m_view;
        settings.head = m_head->value();
        settings.errorKind = ErrorKind(m_errorKind->currentIndex());
        settings.errorDistribution = m_distribution->isChecked();
        settings.sharedScale = m_sharedScale->isChecked();
        settings.colorMap = ColorMap(m_colorMap->currentIndex());
        setViewSettings(settings);
    };
    connect(m_head, &QSpinBox::valueChanged, this, viewChanged);
    connect(m_errorKind, &QComboBox::currentIndexChanged, this, viewChanged);
    connect(m_distribution, &QCheckBox::toggled, this, viewChanged);
    connect(m_sharedScale, &QCheckBox::toggled, this, viewChanged);
    connect(m_colorMap, &QComboBox::currentIndexChanged, this, viewChanged);

    // The error kinds' long names show in the open list; closed, the box may be narrower.
    m_errorKind->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_errorKind->setMinimumContentsLength(10);
    m_viewBar = new QWidget;
    auto* viewBar = new QHBoxLayout(m_viewBar);
    viewBar->setContentsMargins(0, 0, 0, 0);
    viewBar->addWidget(new QLabel(tr("Head")));
    viewBar->addWidget(m_head);
    viewBar->addSpacing(8);
    viewBar->addWidget(new QLabel(tr("Error")));
    viewBar->addWidget(m_errorKind);
    viewBar->addWidget(m_distribution);
    viewBar->addSpacing(8);
    viewBar->addWidget(m_sharedScale);
    viewBar->addSpacing(8);
    viewBar->addWidget(new QLabel(tr("Colours")));
    viewBar->addWidget(m_colorMap);
    viewBar->addStretch();

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
    m_errorBar->setObjectName(QStringLiteral("errorBar"));
    m_head->setObjectName(QStringLiteral("viewHead"));
    m_errorKind->setObjectName(QStringLiteral("errorKind"));
    m_distribution->setObjectName(QStringLiteral("errorDistribution"));
    m_distributionView->setObjectName(QStringLiteral("distributionView"));
    m_sharedScale->setObjectName(QStringLiteral("sharedScale"));
    m_colorMap->setObjectName(QStringLiteral("colorMap"));
    m_exactView->setObjectName(QStringLiteral("exactView"));
    m_approxView->setObjectName(QStringLiteral("approxView"));
    m_errorView->setObjectName(QStringLiteral("errorView"));
    m_rowView->setObjectName(QStringLiteral("rowView"));
    m_imageView->setObjectName(QStringLiteral("imageView"));

    // The matrices as large as the page allows: two by two, or in a row above the query rows.
    auto* matrices = new AttentionMapsPage(m_exactView, m_approxView, m_errorStack, m_rowView);
    matrices->setObjectName(QStringLiteral("matricesPage"));
    // Image input gets a second page: the selected patch's attention over the whole image, as
    // large as the window allows.
    m_pages = new QTabWidget;
    m_pages->setObjectName(QStringLiteral("pages"));
    m_pages->addTab(matrices, tr("Attention matrices"));
    m_pages->addTab(makeImagePage(), tr("Over the image"));
    m_pages->setTabToolTip(0, tr("Exact P, its approximation, the error, and the selected "
                                 "query's rows."));
    m_pages->setTabToolTip(1, tr("Image input: the selected patch's exact and approximate "
                                 "attention, and the error, drawn over the image. Click a patch "
                                 "to select it; a Vision Transformer's page starts on its [CLS] "
                                 "token and can show the attention rollout over every layer."));
    m_pages->setTabEnabled(ImagePage, false);  // until an image result arrives

    m_headGrid = new HeadGridPanel;
    m_headGrid->setObjectName(QStringLiteral("headsPage"));
    m_pages->addTab(m_headGrid, tr("Heads"));
    m_pages->setTabToolTip(HeadsPage, tr("A trained model's heads at a glance, layers down and "
                                         "heads across, each framed by the approximation's "
                                         "error; click one to show it in the three maps."));
    connect(m_headGrid, &HeadGridPanel::headActivated, this, &MainWindow::showHead);
    m_downstream = new DownstreamPanel;
    m_downstream->setObjectName(QStringLiteral("downstreamPanel"));
    m_pages->addTab(m_downstream, tr("Inside the model"));
    m_pages->setTabToolTip(ModelPage, tr("The approximation in place of softmax attention inside "
                                         "the model: how its next-token predictions change, "
                                         "position by position and against m."));
    connect(m_downstream, &DownstreamPanel::sweepFinished, this, &MainWindow::markDirty);

    m_errorPanel = new ErrorAnalysisPanel;
    m_errorPanel->setObjectName(QStringLiteral("errorPanel"));
    m_pages->addTab(m_errorPanel, tr("Error analysis"));
    m_pages->setTabToolTip(ErrorsPage, tr("Where and why the approximations break: the error "
                                          "against m, the query/key norms and L, over many "
                                          "seeds, and the kernel's error against Lemma 2."));
    connect(m_errorPanel, &ErrorAnalysisPanel::sweepFinished, this, &MainWindow::markDirty);

    m_timingPanel = new TimingPanel;
    m_timingPanel->setObjectName(QStringLiteral("timingPanel"));
    m_pages->addTab(m_timingPanel, tr("Timing"));
    m_pages->setTabToolTip(TimingPage, tr("How the cost of each method grows with the sequence "
                                          "length, measured on this machine."));
    connect(m_timingPanel, &TimingPanel::sweepFinished, this, &MainWindow::markDirty);
    m_stepperView = new StepperView;
    m_stepperView->setObjectName(QStringLiteral("stepperView"));
    m_pages->addTab(m_stepperView, tr("Stepper"));
    m_pages->setTabToolTip(StepperPage, tr("Causal linear attention run as a recurrent network, "
                                           "one token at a time, beside exact causal softmax."));
    connect(m_pages, &QTabWidget::currentChanged, this, [this](int page) {
        if (page == ImagePage)
            m_currentFigure = m_imageView;
        else if (page == ErrorsPage)
            m_currentFigure = m_errorPanel->chart();
        else if (page == TimingPage)
            m_currentFigure = m_timingPanel->chart();
        else if (page == ModelPage)
            m_currentFigure = m_downstream->chart();
        else if (m_currentFigure == m_imageView || m_currentFigure == m_errorPanel->chart() ||
                 m_currentFigure == m_timingPanel->chart() ||
                 m_currentFigure == m_downstream->chart())
            m_currentFigure = m_exactView;
        // The head, error and colour controls act on the matrix pages only.
        m_viewBar->setVisible(page == MatricesPage || page == ImagePage);
        updateStepper();
        updateModelPages();
        markDirty();
    });

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    m_recoveryBar = new QWidget;
    m_recoveryBar->setObjectName(QStringLiteral("recoveryBar"));
    m_recoveryBar->hide();
    layout->addWidget(m_recoveryBar);
    layout->addLayout(errorRow);
    layout->addWidget(m_viewBar);
    layout->addWidget(m_pages, 1);
    // The explanation of the scenario open, under the page it explains.
    m_scenarioPanel = new ScenarioPanel;
    m_scenarioPanel->hide();
    layout->addWidget(m_scenarioPanel);
    connect(m_scenarioPanel, &ScenarioPanel::previousRequested, this, [this] { stepDeck(-1); });
    connect(m_scenarioPanel, &ScenarioPanel::nextRequested, this, [this] { stepDeck(1); });
    connect(m_scenarioPanel, &ScenarioPanel::closeRequested, this,
            [this] { m_explanationAction->setChecked(false); });
    setCentralWidget(central);
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
    QAction* open = file->addAction(tr("&Open Session..."), this, &MainWindow::openSessionDialog);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    QAction* save = file->addAction(tr("&Save Session"), this, [this] {
        if (m_sessionPath.isEmpty())
            saveSessionDialog();
        else
            saveSession(m_sessionPath);
    });
    save->setShortcut(QKeySequence::Save);
    QAction* saveAs = file->addAction(tr("Save Session &As..."), this,
                                      &MainWindow::saveSessionDialog);
    saveAs->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction* exportFigure =
        file->addAction(tr("&Export Figure..."), this, &MainWindow::exportFigureDialog);
    exportFigure->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportFigure->setToolTip(tr("Save the figure last clicked or hovered as PNG, SVG or PDF."));
    QMenu* exportMatrix = file->addMenu(tr("Export &Matrix"));
    const std::pair<ExportedMatrix, QString> matrices[] = {
        {ExactAttention, tr("Exact attention P")},
        {ApproximateAttention, tr("Approximate attention P\u0302")},
        {ErrorMap, tr("Error map (as shown)")},
        {ExactOutput, tr("Exact output O = P V")},
        {ApproximateOutput, tr("Approximate output O\u0302")},
        {QueryFeatures, tr("Query features \u03c6(Q)")},
        {KeyFeatures, tr("Key features \u03c6(K)")},
        {Projection, tr("Random projection W")},
    };
    for (const auto& [matrix, name] : matrices)
        exportMatrix->addAction(name + QStringLiteral("..."), this,
                                [this, matrix = matrix] { exportMatrixDialog(matrix); });
    QAction* copy = file->addAction(tr("&Copy Figure"), this, &MainWindow::copyFigure);
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
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
    QAction* budget = edit->addAction(tr("&Memory Budget..."), this,
                                      &MainWindow::memoryBudgetDialog);
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
    buildLectureMenus(view);

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
    m_errorBar->hide();
    m_errorClose->hide();
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
    {
        const QSignalBlocker blockHead(m_head), blockError(m_errorKind),
            blockShared(m_sharedScale), blockColors(m_colorMap), blockRollout(m_rolloutBox);
        m_rolloutBox->setChecked(settings.rollout);
        m_head->setRange(0, int(result.heads.size()) - 1);
        m_head->setValue(settings.head);
        m_head->setEnabled(result.heads.size() > 1);
        m_errorKind->setCurrentIndex(int(settings.errorKind));
        m_distribution->setChecked(settings.errorDistribution);
        m_sharedScale->setChecked(settings.sharedScale);
        m_colorMap->setCurrentIndex(int(settings.colorMap));
    }
    // The image page shows image input; it comes to the front when an image first arrives.
    // A session's page wins over that.
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
    refreshViews();
    m_runNoticeShown = false;
    m_statusLabel->setText(
        (result.exactKept ? tr("L = %1, %2 head(s): approximation %3 ms, exact attention kept "
                               "from the previous result, rows and metrics %4 ms")
                          : tr("L = %1, %2 head(s): approximation %3 ms, exact %4 ms"))
            .arg(result.labels.size())
            .arg(result.heads.size())
            .arg(result.secondsApprox * 1e3, 0, 'f', 1)
            .arg(result.secondsExact * 1e3, 0, 'f', 1));
    emit resultShown();
}

QWidget* MainWindow::makeImagePage()
{
    // A Vision Transformer's page: back to the [CLS] row, and the rollout over every layer.
    auto* classRow = new QPushButton(tr("[CLS] row"));
    classRow->setToolTip(tr("Show the class token's attention over the patches (clicking a patch "
                            "shows that patch's row)."));
    classRow->setObjectName(QStringLiteral("classRow"));
    connect(classRow, &QPushButton::clicked, this, [this] { selectQuery(0); });
    m_rolloutBox = new QCheckBox(tr("Attention rollout over every layer"));
    m_rolloutBox->setToolTip(
        tr("Abnar and Zuidema's rollout: each layer's attention averaged over its heads, with "
           "the residual connection as half of it, (A + I) / 2, multiplied through the layers: "
           "how much the query draws on each patch through the whole model. The approximation's "
           "rollout uses its P^ of every layer on that layer's own queries and keys."));
    m_rolloutBox->setObjectName(QStringLiteral("rollout"));
    connect(m_rolloutBox, &QCheckBox::toggled, this, [this](bool on) {
        m_view.rollout = on;
        markDirty();
        refreshViews();
    });
    m_imageBar = new QWidget;
    auto* bar = new QHBoxLayout(m_imageBar);
    bar->setContentsMargins(4, 2, 4, 2);
    bar->addWidget(classRow);
    bar->addWidget(m_rolloutBox);
    bar->addStretch();
    m_imageBar->setVisible(false);
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_imageBar);
    layout->addWidget(m_imageView, 1);
    return page;
}

void MainWindow::refreshViews()
{
    const Computation& computation = m_controller->current();
    if (!computation.result)
        return;
    const ExperimentResult& result = *computation.result;
    showAttention(*m_exactView, *m_approxView, *m_errorView, computation.result, m_view);
    showQueryRow(*m_rowView, result, m_view);
    showImageOverlay(*m_imageView, computation.patchImage, result, m_view,
                     computation.rollout.get());
    m_imageBar->setVisible(firstPatchToken(result) > 0);
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
    m_errorStack->setCurrentWidget(shown ? static_cast<QWidget*>(m_distributionView)
                                         : m_errorView);
    const std::shared_ptr<const ExperimentResult> result = m_controller->current().result;
    if (!shown || !result)  // the errors are binned only while the histograms are shown
        return;
    if (result->heads[std::size_t(m_view.head)].attentionExact.size() == 0) {
        m_distributionView->clear();
        return;
    }
    // Binning L^2 errors takes about a second at L = 4096: on a worker, keeping the result alive;
    // only the newest request is shown.
    const int request = ++m_distributionRequest;
    const int head = m_view.head;
    QtConcurrent::run([result, head] {
        const HeadResult& matrices = result->heads[std::size_t(head)];
        return errorDistribution(matrices.attentionExact, matrices.attentionApprox,
                                 result->spec.causal);
    }).then(this, [this, request, result, head](const ErrorDistribution& distribution) {
        if (request != m_distributionRequest)
            return;
        const ResultMatrix& exact = result->heads[std::size_t(head)].attentionExact;
        m_distributionView->setDistribution(distribution, exact.rows(), exact.cols(),
                                            result->spec.causal);
        emit distributionShown();
    });
}

void MainWindow::showError(const QString& message)
{
    m_errorBar->setText(tr("Could not compute this: %1\nThe view still shows the previous "
                           "result.")
                            .arg(message));
    m_errorBar->show();
    m_errorClose->show();
    m_runNoticeShown = false;
    m_statusLabel->setText(tr("Not computed"));
}

QString MainWindow::errorMessage() const
{
    return m_errorBar->isHidden() ? QString() : m_errorBar->text();
}

void MainWindow::setViewSettings(const ViewSettings& settings)
{
    m_view = settings;
    refreshViews();
    markDirty();
}

void MainWindow::markDirty()
{
    if (m_autosave)
        m_autosave->markDirty();
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
    m_imageBar->setVisible(firstPatchToken(result) > 0);
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

ExperimentSpec MainWindow::windowSpec(ExperimentSpec spec)
{
    spec.exactMethod = false;
    return spec;
}

}  // namespace attnlab::ui

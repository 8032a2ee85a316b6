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
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>
#include <QVBoxLayout>

namespace attnlab::ui {

namespace {

constexpr int kMaxRecentFiles = 8;
// A computation shorter than this does not flash "Computing..." in the status bar.
constexpr int kBusyDelayMs = 250;

QString lastSessionPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/last-session.attnlab");
}

// The names of the pages in a session's "view" object, in the order of MainWindow::Page.
const char* const kPageNames[] = {"matrices", "image",  "heads",  "model",
                                  "errors",   "timing", "stepper"};

bool sameSpec(const ExperimentSpec& a, const ExperimentSpec& b)
{
    return a.toJson() == b.toJson();
}

// The window computes an approximation against exact attention; a session asking for the
// "exact" method (a command-line notion) shows FAVOR+ instead.
ExperimentSpec windowSpec(ExperimentSpec spec)
{
    spec.exactMethod = false;
    return spec;
}

// The matrices File > Export Matrix offers.
enum ExportedMatrix {
    ExactAttention,
    ApproximateAttention,
    ErrorMap,
    ExactOutput,
    ApproximateOutput,
    QueryFeatures,
    KeyFeatures,
    Projection,
};

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
        selectQuery(patch);
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
    m_pages->addTab(m_imageView, tr("Attention over the image"));
    m_pages->setTabToolTip(0, tr("Exact P, its approximation, the error, and the selected "
                                 "query's rows."));
    m_pages->setTabToolTip(1, tr("Image input: the selected patch's exact and approximate "
                                 "attention, and the error, drawn over the image. Click a patch "
                                 "to select it."));
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
            combo->setMinimumContentsLength(12);
        }
        dock->setWidget(dockContents(panel));
        addDockWidget(area, dock);
    };
    m_inputPanel = new InputPanel;
    m_methodPanel = new MethodPanel;
    m_metricsPanel = new MetricsPanel;
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
    ViewSettings settings = m_pendingView.value_or(m_view);
    m_pendingView.reset();
    settings.head = std::clamp(settings.head, 0, int(result.heads.size()) - 1);
    if (settings.query >= result.labels.size())
        settings.query = -1;
    m_view = settings;
    {
        const QSignalBlocker blockHead(m_head), blockError(m_errorKind),
            blockShared(m_sharedScale), blockColors(m_colorMap);
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
    const bool image = result.gridRows > 0;
    const bool imageBefore = m_pages->isTabEnabled(ImagePage);
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

void MainWindow::refreshViews()
{
    const Computation& computation = m_controller->current();
    if (!computation.result)
        return;
    const ExperimentResult& result = *computation.result;
    showAttention(*m_exactView, *m_approxView, *m_errorView, computation.result, m_view);
    showQueryRow(*m_rowView, result, m_view);
    showImageOverlay(*m_imageView, computation.patchImage, result, m_view);
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

void MainWindow::buildRecoveryBar()
{
    if (!Autosave::hasRecovery())
        return;
    const QString path = Autosave::recoveryPath();
    Session recovered;
    try {
        recovered = readSession(path);
    } catch (const InputError& e) {
        // An autosave that cannot be read cannot be offered: say so once and drop it.
        statusBar()->showMessage(tr("The autosave of the last run could not be read: %1")
                                     .arg(e.message()), 10000);
        QFile::remove(path);
        return;
    }
    const QDateTime saved = QFileInfo(path).lastModified();
    QFile::remove(path);  // it lives on in memory until the user decides; new autosaves follow
    auto* text = new QLabel(
        tr("Attention Lab did not close cleanly last time. Your work was autosaved at %1.")
            .arg(QLocale().toString(saved, QLocale::ShortFormat)));
    text->setWordWrap(true);
    auto* restore = new QToolButton;
    restore->setText(tr("Restore"));
    restore->setObjectName(QStringLiteral("restoreRecovery"));
    auto* discard = new QToolButton;
    discard->setText(tr("Discard"));
    auto* row = new QHBoxLayout(m_recoveryBar);
    row->setContentsMargins(6, 4, 6, 4);
    row->addWidget(text, 1);
    row->addWidget(restore);
    row->addWidget(discard);
    m_recoveryBar->setStyleSheet(QStringLiteral(
        "#recoveryBar { background: #fff4d6; border: 1px solid #e0c060; border-radius: 3px; }"));
    m_recoveryBar->setAttribute(Qt::WA_StyledBackground);
    m_recoveryBar->show();
    connect(restore, &QToolButton::clicked, this, &MainWindow::restoreRecovery);
    connect(discard, &QToolButton::clicked, this, [this] {
        m_recovery.reset();
        m_recoveryBar->hide();
    });
    m_recovery = std::move(recovered);
}

bool MainWindow::isOfferingRecovery() const
{
    return m_recovery.has_value() && !m_recoveryBar->isHidden();
}

bool MainWindow::restoreRecovery()
{
    if (!m_recovery)
        return false;
    try {
        applySession(*m_recovery);
    } catch (const InputError& e) {
        showError(tr("The autosave could not be restored: %1").arg(e.message()));
        return false;
    }
    m_recovery.reset();
    m_recoveryBar->hide();
    statusBar()->showMessage(tr("Restored the autosaved session"), 5000);
    return true;
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
    showImageOverlay(*m_imageView, computation.patchImage, result, m_view);
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

bool MainWindow::openSession(const QString& path)
{
    try {
        applySession(readSession(path));
        m_scenarioPanel->setDeck(Deck(), -1);  // a plain session: no scenario, no deck
        updateScenarioPanel();
        setSessionPath(path);
        addRecentFile(path);
        return true;
    } catch (const InputError& e) {
        showError(e.message());
        return false;
    }
}

bool MainWindow::saveSession(const QString& path)
{
    try {
        writeSession(path, Session{m_controller->spec(), sessionView()});
        if (m_autosave)
            m_autosave->discard();  // saved: nothing to recover until the next change
        setSessionPath(path);
        addRecentFile(path);
        statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 3000);
        return true;
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Save session"), e.message());
        return false;
    }
}

QJsonObject MainWindow::sessionView() const
{
    QJsonObject view = m_view.toJson();
    view.insert(QStringLiteral("page"), QLatin1String(kPageNames[currentPage()]));
    view.insert(QStringLiteral("errors"), m_errorPanel->state());
    if (!m_timingPanel->result().points.empty())
        view.insert(QStringLiteral("timing"), m_timingPanel->state());
    view.insert(QStringLiteral("stepper"), m_stepperView->state());
    view.insert(QStringLiteral("heads"), m_headGrid->state());
    view.insert(QStringLiteral("model"), m_downstream->state());
    return view;
}

void MainWindow::applyPageStates(const QJsonObject& view)
{
    std::optional<Page> page;
    if (view.contains(QLatin1String("page"))) {
        const QString name = view.value(QLatin1String("page")).toString();
        for (int i = 0; i < int(std::size(kPageNames)); ++i)
            if (name == QLatin1String(kPageNames[i]))
                page = Page(i);
        if (!page)
            throw InputError(QStringLiteral("view.page: expected one of matrices, image, heads, "
                                            "model, errors, timing, stepper, got \"%1\"")
                                 .arg(name));
    }
    const QJsonValue stepper = view.value(QLatin1String("stepper"));
    if (!stepper.isUndefined() && !stepper.isObject())
        throw InputError(QStringLiteral("view.stepper: expected an object"));
    const QJsonValue timing = view.value(QLatin1String("timing"));
    if (!timing.isUndefined() && !timing.isObject())
        throw InputError(QStringLiteral("view.timing: expected an object"));
    const QJsonValue errors = view.value(QLatin1String("errors"));
    if (!errors.isUndefined() && !errors.isObject())
        throw InputError(QStringLiteral("view.errors: expected an object"));
    // Each panel refuses a bad state unchanged; the first is put back when the second refuses.
    const QJsonObject errorsBefore = m_errorPanel->state();
    if (errors.isObject()) {
        try {
            m_errorPanel->setState(errors.toObject());
        } catch (const InputError& e) {
            throw InputError(QStringLiteral("view.errors: %1").arg(e.message()));
        }
    }
    if (timing.isObject()) {
        try {
            m_timingPanel->setState(timing.toObject());
        } catch (const InputError& e) {
            if (errors.isObject())
                m_errorPanel->setState(errorsBefore);
            throw InputError(QStringLiteral("view.timing: %1").arg(e.message()));
        }
    }
    for (const char* name : {"heads", "model"}) {
        const QJsonValue state = view.value(QLatin1String(name));
        if (!state.isUndefined() && !state.isObject())
            throw InputError(QStringLiteral("view.%1: expected an object").arg(QLatin1String(name)));
    }
    try {
        if (view.value(QLatin1String("heads")).isObject())
            m_headGrid->setState(view.value(QLatin1String("heads")).toObject());
    } catch (const InputError& e) {
        throw InputError(QStringLiteral("view.heads: %1").arg(e.message()));
    }
    try {
        if (view.value(QLatin1String("model")).isObject())
            m_downstream->setState(view.value(QLatin1String("model")).toObject());
    } catch (const InputError& e) {
        throw InputError(QStringLiteral("view.model: %1").arg(e.message()));
    }
    m_stepperView->setState(stepper.toObject());
    m_pendingPage = page;
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

void MainWindow::applySession(const Session& session)
{
    applyPageStates(session.view);
    m_pendingView = ViewSettings::fromJson(session.view);
    m_undo->clear();
    applySpec(windowSpec(session.spec));
}

void MainWindow::setSessionPath(const QString& path)
{
    m_sessionPath = path;
    setWindowTitle(path.isEmpty() ? tr("Attention Lab")
                                  : tr("%1 - Attention Lab").arg(QFileInfo(path).fileName()));
}

void MainWindow::openSessionDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), QString(),
                                                      tr("Attention Lab sessions (*.attnlab)"));
    if (!path.isEmpty())
        openSession(path);
}

bool MainWindow::saveSessionDialog()
{
    QString path = QFileDialog::getSaveFileName(this, tr("Save session"), m_sessionPath,
                                                tr("Attention Lab sessions (*.attnlab)"));
    if (path.isEmpty())
        return false;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".attnlab");
    return saveSession(path);
}

void MainWindow::exportFigureDialog()
{
    const bool stepper = currentPage() == StepperPage;
    const bool heads = currentPage() == HeadsPage;
    QString name = QStringLiteral("attention-exact");
    if (stepper)
        name = QStringLiteral("stepper-frame");
    else if (heads)
        name = QStringLiteral("heads");
    else if (m_currentFigure == m_downstream->chart())
        name = QStringLiteral("inside-the-model");
    else if (m_currentFigure == m_errorPanel->chart())
        name = QStringLiteral("error-analysis");
    else if (m_currentFigure == m_distributionView)
        name = QStringLiteral("error-distribution");
    else if (m_currentFigure == m_timingPanel->chart())
        name = QStringLiteral("timing");
    else if (m_currentFigure == m_approxView)
        name = QStringLiteral("attention-approx");
    else if (m_currentFigure == m_errorView)
        name = QStringLiteral("attention-error");
    else if (m_currentFigure == m_rowView)
        name = QStringLiteral("query-row");
    else if (m_currentFigure == m_imageView)
        name = QStringLiteral("image-overlay");
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export figure"), name + QStringLiteral(".png"),
        tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &selectedFilter);
    if (path.isEmpty())
        return;
    FigureFormat format;
    if (!figureFormatFromSuffix(path, &format)) {
        format = selectedFilter.contains(QLatin1String("svg"))   ? FigureFormat::Svg
                 : selectedFilter.contains(QLatin1String("pdf")) ? FigureFormat::Pdf
                                                                 : FigureFormat::Png;
        path += QLatin1Char('.') + figureFormatName(format);
    }
    try {
        if (stepper)
            m_stepperView->exportFrame(path, format);
        else if (heads)
            m_headGrid->exportFigure(path, format);
        else
            exportFigure(*m_currentFigure, path, format);
        statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 3000);
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Export figure"), e.message());
    }
}

void MainWindow::exportMatrixDialog(int which)
{
    const Computation& computation = m_controller->current();
    if (!computation.result)
        return;
    const ExperimentResult& result = *computation.result;
    const HeadResult& head = result.heads[std::size_t(m_view.head)];
    MatrixD matrix;
    QString name;
    QStringList columns;
    switch (ExportedMatrix(which)) {
        case ExactAttention:
            matrix = head.attentionExact.toDouble(), name = QStringLiteral("attention_exact");
            columns = result.labels;
            break;
        case ApproximateAttention:
            matrix = head.attentionApprox.toDouble(), name = QStringLiteral("attention_approx");
            columns = result.labels;
            break;
        case ErrorMap:
            matrix = attentionError(head.attentionExact.toDouble(), head.attentionApprox.toDouble(),
                                    m_view.errorKind);
            name = QStringLiteral("attention_error_") + errorKindName(m_view.errorKind);
            columns = result.labels;
            break;
        case ExactOutput: matrix = head.outputExact, name = QStringLiteral("output_exact"); break;
        case ApproximateOutput:
            matrix = head.outputApprox, name = QStringLiteral("output_approx");
            break;
        case QueryFeatures: matrix = head.featuresQ, name = QStringLiteral("features_q"); break;
        case KeyFeatures: matrix = head.featuresK, name = QStringLiteral("features_k"); break;
        case Projection: matrix = head.projection, name = QStringLiteral("projection"); break;
    }
    if (matrix.size() == 0) {
        QMessageBox::information(this, tr("Export matrix"),
                                 tr("This method has no such matrix (%1).").arg(name));
        return;
    }
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export matrix"), name + QStringLiteral(".npy"),
        tr("NumPy array (*.npy);;CSV table (*.csv)"), &selectedFilter);
    if (path.isEmpty())
        return;
    const bool csv = path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) ||
                     (!path.endsWith(QLatin1String(".npy"), Qt::CaseInsensitive) &&
                      selectedFilter.contains(QLatin1String("csv")));
    if (!path.endsWith(QLatin1String(csv ? ".csv" : ".npy"), Qt::CaseInsensitive))
        path += csv ? QStringLiteral(".csv") : QStringLiteral(".npy");
    const bool single = result.spec.precision == Precision::Float;
    try {
        if (csv) {
            CsvOptions options;
            options.floatPrecision = single;
            options.columnNames = columns;
            if (matrix.rows() == result.labels.size())
                options.rowLabels = result.labels;
            if (!options.rowLabels.isEmpty() && !options.columnNames.isEmpty())
                options.columnNames.prepend(QStringLiteral("query \\ key"));
            saveCsv(path, matrix, options);
        } else {
            saveNpy(path, matrix.data(), {matrix.rows(), matrix.cols()},
                    single ? NpyDtype::Float32 : NpyDtype::Float64);
        }
        statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 3000);
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Export matrix"), e.message());
    }
}

void MainWindow::copyFigure()
{
    if (currentPage() == StepperPage)
        QApplication::clipboard()->setImage(m_stepperView->grab().toImage());
    else
        copyFigureToClipboard(*m_currentFigure);
    statusBar()->showMessage(tr("Figure copied to the clipboard"), 3000);
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

void MainWindow::addRecentFile(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentSessions")).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecentFiles)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentSessions"), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentSessions")).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(QDir::toNativeSeparators(path), this,
                                [this, path] { openSession(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::restoreSettings(Start start)
{
    resize(1400, 900);
    updateRecentMenu();
    if (start == Start::DefaultExample) {  // a clean window: the layout as built
        showExample();
        return;
    }
    QSettings settings;
    const qint64 budget = settings.value(QStringLiteral("memoryBudget")).toLongLong();
    if (budget > 0)
        setMemoryBudget(MemoryBudget(budget));
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    if (QFileInfo::exists(lastSessionPath())) {
        try {
            const Session session = readSession(lastSessionPath());
            applyPageStates(session.view);
            m_pendingView = ViewSettings::fromJson(session.view);
            applySpec(windowSpec(session.spec));
            return;
        } catch (const InputError&) {
            // An unreadable last session is not the user's problem: start with the example.
        }
    }
    showExample();
}

void MainWindow::showExample()
{
    ViewSettings view;
    view.head = builtinExample().head;
    m_pendingView = view;
    applySpec(exampleSpec());
}

void MainWindow::buildLectureMenus(QMenu* view)
{
    m_presentation = new PresentationMode(this);
    // The lecture actions are the window's too: their keys work while presentation mode hides
    // the menu bar.
    const auto windowAction = [this](QAction* action, const QKeySequence& keys) {
        action->setShortcut(keys);
        addAction(action);
        return action;
    };

    view->addSeparator();
    m_presentationAction = windowAction(
        view->addAction(tr("&Presentation Mode"), this, [this](bool on) {
            setPresentationMode(on);
        }),
        QKeySequence(Qt::Key_F5));
    m_presentationAction->setCheckable(true);
    m_presentationAction->setIcon(QIcon::fromTheme(QStringLiteral("view-presentation")));
    m_presentationAction->setToolTip(tr("Full screen, large fonts and thick lines for a "
                                        "projector (F5); Esc leaves"));
    QAction* leave = windowAction(new QAction(tr("Leave Presentation Mode"), this),
                                  QKeySequence(Qt::Key_Escape));
    leave->setEnabled(false);
    connect(leave, &QAction::triggered, this, [this] { setPresentationMode(false); });
    connect(m_presentation, &PresentationMode::activeChanged, this, [this, leave](bool active) {
        leave->setEnabled(active);
        const QSignalBlocker block(m_presentationAction);
        m_presentationAction->setChecked(active);
    });

    QMenu* theme = view->addMenu(tr("Projector &Theme"));
    auto* themes = new QActionGroup(this);
    for (const auto& [choice, name] : {std::pair{ProjectorTheme::Light, tr("&Light")},
                                       std::pair{ProjectorTheme::Dark, tr("&Dark")}}) {
        QAction* action = theme->addAction(name, this, [this, choice = choice] {
            m_presentation->setTheme(choice);
        });
        action->setCheckable(true);
        action->setChecked(choice == m_presentation->theme());
        action->setObjectName(choice == ProjectorTheme::Light ? QStringLiteral("lightTheme")
                                                              : QStringLiteral("darkTheme"));
        themes->addAction(action);
    }
    QAction* laser = windowAction(view->addAction(tr("&Laser Pointer"), this, [this](bool on) {
        m_presentation->setLaserPointerEnabled(on);
    }),
                                  QKeySequence(Qt::CTRL | Qt::Key_L));
    laser->setCheckable(true);
    laser->setToolTip(tr("A red dot follows the mouse in presentation mode"));
    m_controlsAction = windowAction(
        view->addAction(tr("&Controls While Presenting"), this,
                        [this](bool on) {
                            if (!m_presentation->isActive())
                                return;
                            for (const char* name : {"inputDock", "methodDock"})
                                if (auto* dock = findChild<QDockWidget*>(QLatin1String(name)))
                                    dock->setVisible(on);
                        }),
        QKeySequence(Qt::Key_F6));
    m_controlsAction->setCheckable(true);
    m_controlsAction->setToolTip(tr("Show the Input and Method docks in presentation mode, to "
                                    "change the experiment in front of the room"));
    connect(m_presentation, &PresentationMode::activeChanged, this,
            [this] { m_controlsAction->setChecked(false); });
    m_explanationAction = windowAction(view->addAction(tr("Scenario &Explanation")),
                                       QKeySequence(Qt::Key_F7));
    m_explanationAction->setCheckable(true);
    m_explanationAction->setChecked(true);
    connect(m_explanationAction, &QAction::toggled, this, &MainWindow::updateScenarioPanel);

    QMenu* scenarios = menuBar()->addMenu(tr("&Scenarios"));
    try {
        const Deck bundled = readDeck(QLatin1String(kBundledScenarioFolder));
        for (int i = 0; i < int(bundled.scenarios.size()); ++i)
            scenarios->addAction(
                QStringLiteral("&%1. %2")
                    .arg(i + 1)
                    .arg(QString(bundled.scenarios[std::size_t(i)].title)
                             .replace(QLatin1Char('&'), QLatin1String("&&"))),
                this, [this, bundled, i] { openScenario(bundled, i); });
    } catch (const InputError& e) {
        scenarios->addAction(tr("(no bundled scenarios: %1)").arg(e.message()))->setEnabled(false);
    }
    scenarios->addSeparator();
    QAction* next = windowAction(
        scenarios->addAction(tr("&Next Scenario"), this, [this] { stepDeck(1); }),
        QKeySequence(Qt::Key_PageDown));
    next->setIcon(QIcon::fromTheme(QStringLiteral("go-next")));
    QAction* previous = windowAction(
        scenarios->addAction(tr("&Previous Scenario"), this, [this] { stepDeck(-1); }),
        QKeySequence(Qt::Key_PageUp));
    previous->setIcon(QIcon::fromTheme(QStringLiteral("go-previous")));
    scenarios->addSeparator();
    scenarios->addAction(tr("Open &Scenario..."), this, &MainWindow::openScenarioDialog);
    scenarios->addAction(tr("Open Scenario &Folder as Deck..."), this,
                         &MainWindow::openDeckDialog);
    scenarios->addAction(tr("Save Current State as Scenario..."), this,
                         &MainWindow::saveScenarioDialog);

    QToolBar* lecture = addToolBar(tr("Lecture"));
    lecture->setObjectName(QStringLiteral("lectureToolBar"));
    lecture->setToolButtonStyle(Qt::ToolButtonTextOnly);
    lecture->addAction(previous);
    lecture->addAction(next);
    lecture->addAction(m_presentationAction);
}

void MainWindow::setPresentationMode(bool on, PresentationMode::Placement placement)
{
    if (on)
        m_presentation->enter(placement);
    else
        m_presentation->leave();
    // The heatmaps measure their labels in their fonts when given them.
    refreshViews();
}

bool MainWindow::openScenario(const Deck& deck, int index)
{
    if (index < 0 || index >= int(deck.scenarios.size()))
        return false;
    const Scenario& scenario = deck.scenarios[std::size_t(index)];
    try {
        applySession(scenario.session);
    } catch (const InputError& e) {
        showError(QStringLiteral("%1: %2").arg(scenario.path, e.message()));
        return false;
    }
    setSessionPath(QString());  // Save asks where: a bundled scenario cannot be overwritten
    setWindowTitle(tr("%1 - Attention Lab").arg(scenario.title));
    m_scenarioPanel->setDeck(deck, index);
    updateScenarioPanel();
    return true;
}

bool MainWindow::openScenarioFile(const QString& path)
{
    try {
        const Scenario scenario = readScenario(path);
        // The folder as the deck, so that PageDown goes on from this scenario.
        Deck deck = readDeck(QFileInfo(path).absolutePath());
        const QString absolute = QFileInfo(path).absoluteFilePath();
        for (int i = 0; i < int(deck.scenarios.size()); ++i)
            if (QFileInfo(deck.scenarios[std::size_t(i)].path).absoluteFilePath() == absolute)
                return openScenario(deck, i);
        return openScenario(Deck{QFileInfo(path).absolutePath(), {scenario}, {}}, 0);
    } catch (const InputError& e) {
        showError(e.message());
        return false;
    }
}

bool MainWindow::openDeck(const QString& folder)
{
    try {
        const Deck deck = readDeck(folder);
        if (!openScenario(deck, 0))
            return false;
        if (!deck.problems.isEmpty())
            statusBar()->showMessage(tr("Left out of the deck: %1")
                                         .arg(deck.problems.join(QStringLiteral("; "))));
        return true;
    } catch (const InputError& e) {
        showError(e.message());
        return false;
    }
}

bool MainWindow::saveScenario(const QString& path, const QString& title,
                              const QString& explanation, QString* problem)
{
    Scenario scenario;
    scenario.title = title;
    scenario.explanation = explanation;
    scenario.session = Session{m_controller->spec(), sessionView()};
    if (const Scenario* open = m_scenarioPanel->scenario())
        scenario.explainedWarnings = open->explainedWarnings;
    QString message;
    try {
        writeScenario(path, scenario);
        statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 3000);
        return true;
    } catch (const InputError& e) {
        message = e.message();
    } catch (const OutputError& e) {
        message = e.message();
    }
    if (problem)
        *problem = message;
    return false;
}

void MainWindow::stepDeck(int delta)
{
    const Deck& deck = m_scenarioPanel->deck();
    if (deck.scenarios.empty()) {
        openDeck(QLatin1String(kBundledScenarioFolder));
        return;
    }
    const int index = std::clamp(m_scenarioPanel->index() + delta, 0,
                                 int(deck.scenarios.size()) - 1);
    if (index != m_scenarioPanel->index())
        openScenario(Deck(deck), index);  // a copy: the panel's deck is replaced on the way
}

void MainWindow::updateScenarioPanel()
{
    m_scenarioPanel->setVisible(m_explanationAction->isChecked() &&
                                m_scenarioPanel->scenario() != nullptr);
}

void MainWindow::openScenarioDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open scenario"), QString(), tr("Attention Lab scenarios (*.attnlab)"));
    if (!path.isEmpty())
        openScenarioFile(path);
}

void MainWindow::openDeckDialog()
{
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Open a folder of scenarios as a deck"));
    if (!folder.isEmpty())
        openDeck(folder);
}

void MainWindow::saveScenarioDialog()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Save current state as scenario"));
    auto* title = new QLineEdit;
    title->setObjectName(QStringLiteral("scenarioTitleEdit"));
    title->setMaxLength(kLongestScenarioTitle);
    auto* explanation = new QPlainTextEdit;
    explanation->setObjectName(QStringLiteral("scenarioExplanationEdit"));
    explanation->setToolTip(tr("A few sentences and the key formula. Qt rich text: <b>, <i>, "
                               "<sub>, <sup> and Unicode (\u221a, \u1d40, \u03c6) read well."));
    if (const Scenario* open = m_scenarioPanel->scenario()) {
        title->setText(open->title);
        explanation->setPlainText(open->explanation);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* form = new QFormLayout(&dialog);
    form->addRow(tr("Title"), title);
    form->addRow(tr("Explanation"), explanation);
    form->addRow(buttons);
    while (dialog.exec() == QDialog::Accepted) {
        if (title->text().trimmed().isEmpty()) {
            QMessageBox::information(this, tr("Save scenario"), tr("The scenario needs a title."));
            continue;
        }
        QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), QString(),
                                                    tr("Attention Lab scenarios (*.attnlab)"));
        if (path.isEmpty())
            return;
        if (QFileInfo(path).suffix().isEmpty())
            path += QStringLiteral(".attnlab");
        QString problem;
        if (!saveScenario(path, title->text(), explanation->toPlainText(), &problem))
            QMessageBox::warning(this, tr("Save scenario"), problem);
        return;
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_presentation->leave();  // the layout to keep is the one before presenting
    if (m_autosave)
        m_autosave->discard();  // a clean exit: nothing to offer back at the next start
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    try {
        writeSession(lastSessionPath(), Session{m_controller->spec(), sessionView()});
    } catch (const OutputError&) {
        // Losing the last-session convenience is no reason to keep the window open.
    }
    event->accept();
}

}  // namespace attnlab::ui

// MainWindow's files: sessions (open, save, the view's page states), the recovery of the last
// session, recent files, the settings restored at start-up, and closing.

#include "main_window.h"

#include "common/export_dialog.h"
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
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace attnlab::ui {

namespace {

constexpr int kMaxRecentFiles = 8;
// The room a window system's frame takes around a window not shown yet (its title bar above),
// in pixels.
constexpr QMargins kFrameReserve(4, 32, 4, 4);

QString lastSessionPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/last-session.attnlab");
}

// The names of the pages in a session's "view" object, in the order of MainWindow::Page.
const char* const kPageNames[] = {"matrices", "image",  "heads",  "model",
                                  "errors",   "timing", "stepper"};

}  // namespace

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
    if (!writeOrWarn(this, tr("Save session"),
                     [&] { writeSession(path, Session{m_controller->spec(), sessionView()}); }))
        return false;
    if (m_autosave)
        m_autosave->discard();  // saved: nothing to recover until the next change
    setSessionPath(path);
    addRecentFile(path);
    statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 3000);
    return true;
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
        // A session or scenario without the page's state has no sweep of its own: the one
        // on screen is dropped rather than shown under the new input's title.
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
        isVisible() ? QMargins(geometry().left() - outer.left(), geometry().top() - outer.top(),
                               outer.right() - geometry().right(),
                               outer.bottom() - geometry().bottom())
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
    fitToScreen();  // the geometry saved on a larger screen
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

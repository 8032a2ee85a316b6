#include "ui/window/window_session.h"

#include "ui/window/autosave.h"
#include "ui/common/export_dialog.h"
#include "errors.h"
#include "ui/errors/error_analysis_panel.h"
#include "ui/generation/generation_page.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/window/lecture_controls.h"
#include "ui/model/downstream_panel.h"
#include "ui/model/head_grid_panel.h"
#include "ui/stepper/stepper_view.h"
#include "ui/timing/timing_panel.h"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QToolButton>

namespace attnlab::ui {

namespace {

constexpr int kMaxRecentFiles = 8;

QString lastSessionPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/last-session.attnlab");
}

// The names of the pages in a session's "view" object, in the order of MainWindow::Page.
const char* const kPageNames[] = {"matrices", "image",  "heads",   "model",
                                  "errors",   "timing", "stepper", "generate"};

}  // namespace

WindowSession::WindowSession(MainWindow& window, QWidget* recoveryBar)
    : QObject(&window), m_window(window), m_recoveryBar(recoveryBar)
{
}

void WindowSession::addFileActions(QMenu* file)
{
    QAction* open = file->addAction(tr("&Open Session..."), this, &WindowSession::openDialog);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    QAction* save = file->addAction(tr("&Save Session"), this, [this] {
        if (m_path.isEmpty())
            saveDialog();
        else
            this->save(m_path);
    });
    save->setShortcut(QKeySequence::Save);
    QAction* saveAs = file->addAction(tr("Save Session &As..."), this, &WindowSession::saveDialog);
    saveAs->setShortcut(QKeySequence::SaveAs);
    updateRecentMenu();
}

void WindowSession::startAutosave()
{
    if (m_autosave)
        return;
    buildRecoveryBar();
    m_autosave = new Autosave(
        [this] {
            return Session{m_window.controller().spec(), view()};
        },
        Autosave::kDefaultIntervalMs, this);
    connect(m_autosave, &Autosave::saveFailed, this, [this](const QString& message) {
        m_window.statusBar()->showMessage(tr("Autosave failed: %1").arg(message), 10000);
    });
}

void WindowSession::markDirty()
{
    if (m_autosave)
        m_autosave->markDirty();
}

void WindowSession::buildRecoveryBar()
{
    if (!Autosave::hasRecovery())
        return;
    const QString path = Autosave::recoveryPath();
    Session recovered;
    try {
        recovered = readSession(path);
    } catch (const InputError& e) {
        // An autosave that cannot be read cannot be offered: say so once and drop it.
        m_window.statusBar()->showMessage(
            tr("The autosave of the last run could not be read: %1").arg(e.message()), 10000);
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
    connect(restore, &QToolButton::clicked, this, &WindowSession::restoreRecovery);
    connect(discard, &QToolButton::clicked, this, [this] {
        m_recovery.reset();
        m_recoveryBar->hide();
    });
    m_recovery = std::move(recovered);
}

bool WindowSession::isOfferingRecovery() const
{
    return m_recovery.has_value() && !m_recoveryBar->isHidden();
}

bool WindowSession::restoreRecovery()
{
    if (!m_recovery)
        return false;
    try {
        apply(*m_recovery);
    } catch (const InputError& e) {
        m_window.showOpenError(tr("the autosave: %1").arg(e.message()));
        return false;
    }
    m_recovery.reset();
    m_recoveryBar->hide();
    m_window.statusBar()->showMessage(tr("Restored the autosaved session"), 5000);
    return true;
}

bool WindowSession::open(const QString& path)
{
    try {
        apply(readSession(path));
        m_window.lecture().closeDeck();  // a plain session: no scenario, no deck
        setPath(path);
        addRecentFile(path);
        return true;
    } catch (const InputError& e) {
        m_window.showOpenError(e.message());
        return false;
    }
}

bool WindowSession::save(const QString& path)
{
    if (!writeOrWarn(&m_window, tr("Save session"), [&] {
            writeSession(path, Session{m_window.controller().spec(), view()});
        }))
        return false;
    if (m_autosave)
        m_autosave->discard();  // saved: nothing to recover until the next change
    setPath(path);
    addRecentFile(path);
    m_window.statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 3000);
    return true;
}

QJsonObject WindowSession::view() const
{
    QJsonObject view = m_window.viewSettings().toJson();
    view.insert(QStringLiteral("page"), QLatin1String(kPageNames[m_window.currentPage()]));
    view.insert(QStringLiteral("errors"), m_window.errorPanel()->state());
    if (!m_window.timingPanel()->result().points.empty())
        view.insert(QStringLiteral("timing"), m_window.timingPanel()->state());
    view.insert(QStringLiteral("stepper"), m_window.stepperView()->state());
    view.insert(QStringLiteral("heads"), m_window.headGrid()->state());
    view.insert(QStringLiteral("model"), m_window.downstreamPanel()->state());
    view.insert(QStringLiteral("generate"), m_window.generationPage()->state().toJson());
    return view;
}

std::optional<MainWindow::Page> WindowSession::applyPageStates(const Session& session)
{
    const QJsonObject& view = session.view;
    using Page = MainWindow::Page;
    ErrorAnalysisPanel* errorPanel = m_window.errorPanel();
    TimingPanel* timingPanel = m_window.timingPanel();
    std::optional<Page> page;
    if (view.contains(QLatin1String("page"))) {
        const QString name = view.value(QLatin1String("page")).toString();
        for (int i = 0; i < int(std::size(kPageNames)); ++i)
            if (name == QLatin1String(kPageNames[i]))
                page = Page(i);
        if (!page)
            throw InputError(QStringLiteral("view.page: expected one of matrices, image, heads, "
                                            "model, errors, timing, stepper, generate, got "
                                            "\"%1\"")
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
    const QJsonObject errorsBefore = errorPanel->state();
    if (errors.isObject()) {
        try {
            errorPanel->setState(errors.toObject());
        } catch (const InputError& e) {
            throw InputError(QStringLiteral("view.errors: %1").arg(e.message()));
        }
    }
    if (timing.isObject()) {
        try {
            timingPanel->setState(timing.toObject());
        } catch (const InputError& e) {
            if (errors.isObject())
                errorPanel->setState(errorsBefore);
            throw InputError(QStringLiteral("view.timing: %1").arg(e.message()));
        }
    }
    for (const char* name : {"heads", "model", "generate"}) {
        const QJsonValue state = view.value(QLatin1String(name));
        if (!state.isUndefined() && !state.isObject())
            throw InputError(
                QStringLiteral("view.%1: expected an object").arg(QLatin1String(name)));
    }
    try {
        if (view.value(QLatin1String("heads")).isObject())
            m_window.headGrid()->setState(view.value(QLatin1String("heads")).toObject());
    } catch (const InputError& e) {
        throw InputError(QStringLiteral("view.heads: %1").arg(e.message()));
    }
    try {
        // A session or scenario without the page's state has no sweep of its own: the one
        // on screen is dropped rather than shown under the new input's title. Rows of an older
        // session, which did not record their input, are of the session's.
        m_window.downstreamPanel()->setState(view.value(QLatin1String("model")).toObject(),
                                             session.spec);
    } catch (const InputError& e) {
        throw InputError(QStringLiteral("view.model: %1").arg(e.message()));
    }
    try {
        // Without the page's state, the page's defaults: nothing generated.
        m_window.generationPage()->setState(
            GenerationPageState::fromJson(view.value(QLatin1String("generate")).toObject()));
    } catch (const InputError& e) {
        throw InputError(QStringLiteral("view.generate: %1").arg(e.message()));
    }
    m_window.stepperView()->setState(stepper.toObject());
    return page;
}

void WindowSession::apply(const Session& session)
{
    const std::optional<MainWindow::Page> page = applyPageStates(session);
    m_window.showSession(session, page);
}

void WindowSession::setPath(const QString& path)
{
    m_path = path;
    m_window.setWindowTitle(path.isEmpty()
                                ? tr("Attention Lab")
                                : tr("%1 - Attention Lab").arg(QFileInfo(path).fileName()));
}

void WindowSession::openDialog()
{
    const QString path = QFileDialog::getOpenFileName(&m_window, tr("Open session"), QString(),
                                                      tr("Attention Lab sessions (*.attnlab)"));
    if (!path.isEmpty())
        open(path);
}

bool WindowSession::saveDialog()
{
    QString path = QFileDialog::getSaveFileName(&m_window, tr("Save session"), m_path,
                                                tr("Attention Lab sessions (*.attnlab)"));
    if (path.isEmpty())
        return false;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".attnlab");
    return save(path);
}

void WindowSession::addRecentFile(const QString& path)
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

void WindowSession::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentSessions")).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(QDir::toNativeSeparators(path), this, [this, path] { open(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

bool WindowSession::restoreLast()
{
    if (!QFileInfo::exists(lastSessionPath()))
        return false;
    try {
        const Session session = readSession(lastSessionPath());
        const std::optional<MainWindow::Page> page = applyPageStates(session);
        m_window.showSession(session, page);
        return true;
    } catch (const InputError&) {
        // An unreadable last session is not the user's problem: the window starts with the
        // example.
        return false;
    }
}

void WindowSession::saveLast()
{
    if (m_autosave)
        m_autosave->discard();  // a clean exit: nothing to offer back at the next start
    try {
        writeSession(lastSessionPath(), Session{m_window.controller().spec(), view()});
    } catch (const OutputError&) {
        // Losing the last-session convenience is no reason to keep the window open.
    }
}

}  // namespace attnlab::ui

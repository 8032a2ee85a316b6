#pragma once

#include "ui/window/main_window.h"
#include "sessions/session.h"

#include <QJsonObject>
#include <QObject>

#include <optional>

class QMenu;
class QWidget;

namespace attnlab::ui {

class Autosave;

// The main window's session as files: File > Open Session and Save Session (the spec and its
// view: the view settings, the page shown and the pages' states), the recent sessions, the
// session of the last run (written at a clean close, reopened at the next start), the autosave
// while the window runs, and the bar that offers the autosave of a run that crashed back.
class WindowSession : public QObject {
    Q_OBJECT

public:
    // `recoveryBar` is the hidden bar above the pages where an autosave is offered back.
    WindowSession(MainWindow& window, QWidget* recoveryBar);

    // File > Open Session and Save Session (Save asks for a path until the session has one), and
    // Open Recent, whose menu this fills.
    void addFileActions(QMenu* file);

    // Opens a session file: its spec, then its view once computed. On failure the window keeps
    // what it showed and shows the message; returns false.
    bool open(const QString& path);
    // Saves the current spec and view to path; false (and a message) on failure.
    bool save(const QString& path);
    // The window shows this file's session from now on (empty: none, Save asks where).
    void setPath(const QString& path);

    // Applies a session that has been read: the pages' states, then its spec (the view and the
    // page follow when the result arrives). Throws InputError as applyPageStates does, before
    // anything has changed.
    void apply(const Session& session);
    // The session's "view" object: the view settings, the page shown ("page": "matrices",
    // "image", "heads", "model", "errors", "timing" or "stepper") and the Heads, Inside the
    // model, Error analysis, Timing and Stepper pages' states.
    QJsonObject view() const;
    // Restores the parts of a session's view that do not wait for the result (the pages' states)
    // and returns the page it shows. Throws InputError naming the field when they are malformed,
    // before anything has changed.
    std::optional<MainWindow::Page> applyPageStates(const Session& session);

    // At start-up: reopens the last run's session; false when there is none that can be read.
    bool restoreLast();
    // At a clean close: writes the last session and drops the autosave.
    void saveLast();

    // Keeps an autosave from now on and offers back the one a crashed run left (MainWindow).
    void startAutosave();
    Autosave* autosave() const { return m_autosave; }
    // Something worth autosaving changed.
    void markDirty();
    bool isOfferingRecovery() const;
    bool restoreRecovery();

private:
    void openDialog();
    bool saveDialog();
    void buildRecoveryBar();
    void addRecentFile(const QString& path);
    void updateRecentMenu();

    MainWindow& m_window;
    QWidget* m_recoveryBar;
    QMenu* m_recentMenu = nullptr;
    Autosave* m_autosave = nullptr;
    QString m_path;
    // The session the last run autosaved before it crashed, while the bar offers it back.
    std::optional<Session> m_recovery;
};

}  // namespace attnlab::ui

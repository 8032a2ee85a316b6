#pragma once

#include "sessions/session.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

namespace attnlab::ui {

// Keeps a copy of the current session on disk so that a crash loses at most one interval of
// work. The window calls markDirty() whenever the spec or the view changes; at most `interval`
// later (and only if something changed since the last save) the session the source returns is
// written atomically (QSaveFile, through writeSession) to recoveryPath(). A clean exit calls
// discard(), which removes the file; a file found there at the next start is what a crash left
// behind, which the window offers back (hasRecovery(), then readSession(recoveryPath())).
class Autosave : public QObject {
    Q_OBJECT

public:
    // The current session, as it would be saved (spec and view).
    using SessionSource = std::function<Session()>;

    // The interval the window uses: a crash loses at most this much work.
    static constexpr int kDefaultIntervalMs = 30'000;

    // Saves `source()` every intervalMs while dirty. Nothing is written before markDirty().
    explicit Autosave(SessionSource source, int intervalMs = kDefaultIntervalMs,
                      QObject* parent = nullptr);

    // <QStandardPaths::AppDataLocation>/autosave.attnlab.
    static QString recoveryPath();

    // True when an autosave is left from a run that did not end cleanly (did not discard()).
    static bool hasRecovery();

    // Whether a change is waiting to be saved.
    bool isDirty() const { return m_dirty; }

    // The message of the last failed save; empty when the last save succeeded.
    QString lastError() const { return m_lastError; }

public slots:
    // The session changed: it is saved within the interval.
    void markDirty();

    // Saves now if dirty (also stopping the pending timer). Returns false when the write failed
    // (the previous autosave, if any, is left as it was; lastError() says why; saveFailed is
    // emitted) and stays dirty, so the next interval tries again.
    bool saveNow();

    // The session was saved by the user or the window closes cleanly: stops saving and removes
    // the autosave, so the next start offers nothing back.
    void discard();

signals:
    // A save failed (disk full, no permission): the message names the file and the reason.
    void saveFailed(const QString& message);

private:
    SessionSource m_source;
    QTimer m_timer;
    bool m_dirty = false;
    QString m_lastError;
};

}  // namespace attnlab::ui

#include "ui/window/autosave.h"

#include "errors.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>

namespace attnlab::ui {

Autosave::Autosave(SessionSource source, int intervalMs, QObject* parent)
    : QObject(parent), m_source(std::move(source))
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &Autosave::saveNow);
}

QString Autosave::recoveryPath()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("autosave.attnlab"));
}

bool Autosave::hasRecovery()
{
    return QFile::exists(recoveryPath());
}

void Autosave::markDirty()
{
    m_dirty = true;
    if (!m_timer.isActive())
        m_timer.start();
}

bool Autosave::saveNow()
{
    m_timer.stop();
    if (!m_dirty)
        return true;
    try {
        writeSession(recoveryPath(), m_source());
    } catch (const OutputError& error) {
        m_lastError = error.message();
        m_timer.start();
        emit saveFailed(m_lastError);
        return false;
    }
    m_dirty = false;
    m_lastError.clear();
    return true;
}

void Autosave::discard()
{
    m_timer.stop();
    m_dirty = false;
    QFile::remove(recoveryPath());
}

}  // namespace attnlab::ui

#include "io/atomic_files.h"

#include "errors.h"

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

namespace attnlab {

AtomicFileSet::AtomicFileSet(const QString& directory)
    : m_directory(QDir::cleanPath(QDir(directory).absolutePath()))
{
}

AtomicFileSet::~AtomicFileSet()
{
    cancelAll();
}

QIODevice& AtomicFileSet::open(const QString& fileName)
{
    const QString path = QDir::cleanPath(QDir(m_directory).absoluteFilePath(fileName));
    const QString parent = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(parent)) {
        m_openFailure = QStringLiteral("%1: cannot create the directory").arg(parent);
        throw OutputError(m_openFailure);
    }
    auto file = std::make_unique<QSaveFile>(path);
    if (!file->open(QIODevice::WriteOnly)) {
        m_openFailure =
            QStringLiteral("%1: cannot open for writing: %2").arg(path, file->errorString());
        throw OutputError(m_openFailure);
    }
    m_files.push_back(std::move(file));
    m_paths.append(path);
    return *m_files.back();
}

void AtomicFileSet::commit()
{
    if (!m_openFailure.isEmpty()) {
        cancelAll();
        throw OutputError(m_openFailure);
    }
    for (const std::unique_ptr<QSaveFile>& file : m_files) {
        QString problem;
        if (file->error() != QFileDevice::NoError || !file->flush())
            problem = file->errorString();
        else if (QFileInfo(file->fileName()).isDir())
            problem = QStringLiteral("a directory is in the way");
        if (!problem.isEmpty()) {
            const QString path = file->fileName();
            cancelAll();
            throw OutputError(QStringLiteral("%1: cannot write: %2").arg(path, problem));
        }
    }
    for (auto file = m_files.begin(); file != m_files.end(); ++file) {
        if (!(*file)->commit()) {
            const QString message = QStringLiteral("%1: cannot write: %2")
                                        .arg((*file)->fileName(), (*file)->errorString());
            m_files.erase(m_files.begin(), file + 1);
            cancelAll();
            throw OutputError(message);
        }
    }
    m_files.clear();
}

QStringList AtomicFileSet::filePaths() const
{
    return m_paths;
}

void AtomicFileSet::cancelAll()
{
    for (const std::unique_ptr<QSaveFile>& file : m_files)
        file->cancelWriting();
    m_files.clear();  // a QSaveFile destroyed without commit removes its temporary file
}

void writeAll(QIODevice& device, QByteArrayView bytes)
{
    if (device.write(bytes.data(), bytes.size()) == bytes.size())
        return;
    const auto* file = qobject_cast<const QFileDevice*>(&device);
    const QString name = file ? file->fileName() : QStringLiteral("output");
    throw OutputError(QStringLiteral("%1: cannot write: %2").arg(name, device.errorString()));
}

}  // namespace attnlab

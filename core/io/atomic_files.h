#pragma once

#include <QByteArrayView>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

class QIODevice;
class QSaveFile;

namespace attnlab {

// A set of output files written all-or-nothing: each file is written to a QSaveFile; commit()
// commits them all only if every write succeeded; otherwise (or if the set is destroyed without
// commit) every temporary file is discarded and no target file is created or modified.
class AtomicFileSet {
public:
    // The files will be written into `directory` (relative paths are taken from the current
    // directory), which open() creates as needed.
    explicit AtomicFileSet(const QString& directory);

    // Discards the temporary file of every file not committed.
    ~AtomicFileSet();

    AtomicFileSet(const AtomicFileSet&) = delete;
    AtomicFileSet& operator=(const AtomicFileSet&) = delete;

    // A QSaveFile on directory/fileName, opened WriteOnly; creates the directory (mkpath) first.
    // Throws OutputError naming the directory or the file when either cannot be created; the set
    // then remembers the failure, and commit() commits nothing.
    QIODevice& open(const QString& fileName);

    // Commits every file opened, after checking that every write succeeded and every file can
    // still replace its target; otherwise discards them all and throws OutputError naming the
    // first file that failed, and no target file is created or modified. Only a failure of the
    // final rename of file k, after files 0..k-1 were renamed, leaves those k committed.
    void commit();

    // The absolute paths of the target files, in the order they were opened.
    QStringList filePaths() const;

private:
    // Discards every file not yet committed.
    void cancelAll();

    QString m_directory;
    QString m_openFailure;  // the message of the latest open() that failed
    std::vector<std::unique_ptr<QSaveFile>> m_files;
    QStringList m_paths;
};

// Writes all of `bytes` to `device`. Throws OutputError with the device's error, naming the file
// when the device is a file, when the write fails.
void writeAll(QIODevice& device, QByteArrayView bytes);

}  // namespace attnlab

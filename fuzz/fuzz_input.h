#pragma once

#include "errors.h"

#include <QDir>
#include <QFile>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>

#include <unistd.h>

namespace attnlab::fuzz {

// Writes one fuzz input to a file of this process (in the temporary folder, named with `suffix`)
// and returns its path: the readers under test take paths, as the application gives them.
// Every call replaces the previous input.
inline QString inputFile(const std::uint8_t* data, std::size_t size, const char* suffix)
{
    static const QString path =
        QDir::temp().filePath(QStringLiteral("attnlab-fuzz-%1%2").arg(getpid()).arg(suffix));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(reinterpret_cast<const char*>(data), qint64(size)) != qint64(size))
        std::abort();  // not the reader's fault: stop rather than fuzz nothing
    return path;
}

// Runs read, which may refuse the input only with an InputError whose message starts with `name`
// (the file's path or name): any other refusal is a finding, and aborts. Returns whether read
// took the input.
inline bool readOrRefused(const QString& name, const std::function<void()>& read)
{
    try {
        read();
        return true;
    } catch (const InputError& error) {
        if (!error.message().startsWith(name))
            std::abort();
        return false;
    }
}

}  // namespace attnlab::fuzz

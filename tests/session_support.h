#pragma once

// What the session tests share: the catalogue of session files in tests/data/sessions and the
// bytes, spec and input paths of a session written.

#include "test_support.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

namespace attnlab::test {

inline const QString kFixtures = QStringLiteral(ATTNLAB_TEST_DATA "/sessions");

inline QString fixture(const QString& name)
{
    return kFixtures + QLatin1Char('/') + name;
}

inline QJsonObject parsedObject(const QByteArray& bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

// The spec of a written session file, as the file holds it (paths not resolved).
inline QJsonObject storedSpec(const QString& path)
{
    return parsedObject(readBytes(path)).value(QLatin1String("spec")).toObject();
}

// The string a written session file holds under `key` in its spec's input (a path as stored).
inline QString storedInputString(const QString& path, const char* key)
{
    return storedSpec(path)
        .value(QLatin1String("input"))
        .toObject()
        .value(QLatin1String(key))
        .toString();
}

}  // namespace attnlab::test

#pragma once

#include <QJsonValue>
#include <QString>

namespace attnlab {

// The type of a JSON value for messages: "null", "a boolean", "a number", "a string",
// "an array", "an object", or "missing" for an absent key.
inline QString jsonTypeName(const QJsonValue& value)
{
    switch (value.type()) {
        case QJsonValue::Null: return QStringLiteral("null");
        case QJsonValue::Bool: return QStringLiteral("a boolean");
        case QJsonValue::Double: return QStringLiteral("a number");
        case QJsonValue::String: return QStringLiteral("a string");
        case QJsonValue::Array: return QStringLiteral("an array");
        case QJsonValue::Object: return QStringLiteral("an object");
        case QJsonValue::Undefined: break;
    }
    return QStringLiteral("missing");
}

}  // namespace attnlab

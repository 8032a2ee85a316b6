#pragma once

#include "errors.h"
#include "memory_budget.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace attnlab {

// Readers of the fields of one JSON object (sessions, scenarios, the sweeps' saved specs and
// results). An absent field leaves its output as it was; a field of the wrong type or value
// throws InputError naming it with its path (`prefix` + key, e.g. "input.length" or
// "points[3].status").
class JsonFields {
public:
    JsonFields(const QJsonObject& object, const QString& prefix)
        : m_object(object), m_prefix(prefix)
    {
    }

    // The field's name in messages: prefix + key.
    QString name(const char* key) const { return m_prefix + QLatin1String(key); }
    bool has(const char* key) const { return m_object.contains(QLatin1String(key)); }
    // Whether the field is absent or null.
    bool isNull(const char* key) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        return value.isNull() || value.isUndefined();
    }

    void read(const char* key, bool* out) const;
    void read(const char* key, QString* out) const;

    // An integer in [minimum, maximum].
    template <typename Int>
    void read(const char* key, Int* out, double minimum, double maximum) const
    {
        static_assert(std::is_integral_v<Int>);
        if (const QJsonValue value = field(key, QJsonValue::Double); !value.isUndefined())
            *out = Int(checkedInteger(name(key), value.toDouble(), minimum, maximum));
    }

    // A finite number > 0, or >= 0 when zero is allowed.
    void read(const char* key, double* out, bool allowZero) const;
    // As above, or null (or absent) for "not set".
    void read(const char* key, std::optional<double>* out, bool allowZero) const;
    // A finite number in [minimum, maximum].
    void readInRange(const char* key, double* out, double minimum, double maximum) const;
    // A number, or null for NaN ("not measured"); absent is NaN too.
    double numberOrNaN(const char* key) const;
    // A seed: an integer from 0 to 2^53 - 1 (what a JSON number holds exactly).
    void readSeed(const char* key, std::uint64_t* out) const;

    // The memory budget in bytes (an integer from 1 to 9e15).
    void read(const char* key, MemoryBudget* out) const;
    // The format's version, which must be `known` (this Attention Lab reads no other; absent is
    // taken as known): InputError "prefix.version N is not known ..." otherwise.
    void requireVersion(int known) const;
    // The numbers of the array field `key` (none when absent); InputError naming "key[i]" for an
    // element that is not a number.
    std::vector<double> numbers(const char* key) const;
    // Calls read(fields) for each element of the array field `key` (none when absent), fields
    // reading the element with the prefix "key[i]."; InputError naming "key[i]" for an element
    // that is not an object.
    template <typename Read>
    void forEachObject(const char* key, Read read) const
    {
        const QJsonArray elements = array(key);
        for (qsizetype i = 0; i < elements.size(); ++i) {
            const QString element = QStringLiteral("%1[%2]").arg(name(key)).arg(i);
            require(elements.at(i).isObject(), QStringLiteral("%1 must be an object").arg(element));
            const QJsonObject object = elements.at(i).toObject();
            read(JsonFields(object, element + QLatin1Char('.')));
        }
    }

    // A name parse(name, out) accepts; a `required` field must be present.
    template <typename Enum, typename Parser>
    void readName(const char* key, Enum* out, Parser parse, bool required = false) const
    {
        const QJsonValue value = field(key, QJsonValue::String);
        if (value.isUndefined()) {
            require(!required, QStringLiteral("%1 is missing").arg(name(key)));
            return;
        }
        require(parse(value.toString(), out),
                QStringLiteral("%1: unknown value \"%2\"").arg(name(key), value.toString()));
    }

    // The names of the array field `key` (none when absent), each one that parse(name, &value)
    // accepts; InputError naming "key[i]" and the name for one it does not.
    template <typename Enum, typename Parser>
    std::vector<Enum> readNames(const char* key, Parser parse) const
    {
        std::vector<Enum> parsed;
        const QJsonArray names = array(key);
        for (qsizetype i = 0; i < names.size(); ++i) {
            Enum value;
            require(names.at(i).isString() && parse(names.at(i).toString(), &value),
                    QStringLiteral("%1[%2]: unknown name \"%3\"")
                        .arg(name(key))
                        .arg(i)
                        .arg(names.at(i).toVariant().toString()));
            parsed.push_back(value);
        }
        return parsed;
    }

    // The array or object field (empty when absent).
    QJsonArray array(const char* key) const { return field(key, QJsonValue::Array).toArray(); }
    QJsonObject object(const char* key) const { return field(key, QJsonValue::Object).toObject(); }

    // Throws InputError(message) unless condition holds.
    static void require(bool condition, const QString& message)
    {
        if (!condition)
            throw InputError(message);
    }

    // number when it is an integer in [minimum, maximum]; else InputError naming `name`.
    static double checkedInteger(const QString& name, double number, double minimum,
                                 double maximum);

private:
    // The field when it has `type`; undefined when absent; InputError for another type.
    QJsonValue field(const char* key, QJsonValue::Type type) const;

    const QJsonObject& m_object;
    QString m_prefix;
};

// value as JSON, or null when it is not finite (NaN: "not measured").
QJsonValue numberOrNull(double value);

// values as a JSON array of their names: name(value) for each.
template <typename T, typename Name>
QJsonArray namesArray(const std::vector<T>& values, Name name)
{
    QJsonArray array;
    for (const T& value : values)
        array.append(name(value));
    return array;
}

// The integer `key` of `json`, which must be present and lie in [minimum, maximum]. Throws
// InputError naming it ("min_length must be an integer from 16 to 1048576").
int boundedInteger(const QJsonObject& json, const char* key, int minimum, int maximum);

}  // namespace attnlab

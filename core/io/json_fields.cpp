#include "io/json_fields.h"

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// The largest integer a JSON number (a double) holds exactly: 2^53 - 1.
constexpr double kLargestExactInteger = 9007199254740991.0;

}  // namespace

void JsonFields::read(const char* key, bool* out) const
{
    if (const QJsonValue value = field(key, QJsonValue::Bool); !value.isUndefined())
        *out = value.toBool();
}

void JsonFields::read(const char* key, QString* out) const
{
    if (const QJsonValue value = field(key, QJsonValue::String); !value.isUndefined())
        *out = value.toString();
}

void JsonFields::read(const char* key, double* out, bool allowZero) const
{
    if (const QJsonValue value = field(key, QJsonValue::Double); !value.isUndefined()) {
        const double number = value.toDouble();
        require(std::isfinite(number) && (number > 0 || (allowZero && number == 0)),
                QStringLiteral("%1 must be a number %2 0 (got %3)")
                    .arg(name(key), allowZero ? QStringLiteral(">=") : QStringLiteral(">"))
                    .arg(number));
        *out = number;
    }
}

void JsonFields::read(const char* key, std::optional<double>* out, bool allowZero) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isNull() || value.isUndefined()) {
        *out = std::nullopt;
        return;
    }
    double number = 0;
    read(key, &number, allowZero);
    *out = number;
}

void JsonFields::readInRange(const char* key, double* out, double minimum, double maximum) const
{
    if (const QJsonValue value = field(key, QJsonValue::Double); !value.isUndefined()) {
        const double number = value.toDouble();
        require(std::isfinite(number) && number >= minimum && number <= maximum,
                QStringLiteral("%1 must be a number from %2 to %3 (got %4)")
                    .arg(name(key))
                    .arg(minimum)
                    .arg(maximum)
                    .arg(number));
        *out = number;
    }
}

double JsonFields::numberOrNaN(const char* key) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull())
        return std::numeric_limits<double>::quiet_NaN();
    require(value.isDouble(), QStringLiteral("%1 must be a number or null").arg(name(key)));
    return value.toDouble();
}

void JsonFields::readSeed(const char* key, std::uint64_t* out) const
{
    if (const QJsonValue value = field(key, QJsonValue::Double); !value.isUndefined()) {
        const double number = value.toDouble();
        require(number == std::floor(number) && number >= 0 && number <= kLargestExactInteger,
                QStringLiteral("%1 must be an integer from 0 to 2^53 - 1").arg(name(key)));
        *out = std::uint64_t(number);
    }
}

void JsonFields::read(const char* key, MemoryBudget* out) const
{
    qint64 bytes = out->bytes();
    read(key, &bytes, 1, 9e15);
    *out = MemoryBudget(bytes);
}

void JsonFields::requireVersion(int known) const
{
    int version = known;
    read("version", &version, 1, std::numeric_limits<int>::max());
    require(version == known, QStringLiteral("%1 %2 is not known to this Attention Lab (it reads "
                                             "version %3); a newer version wrote it")
                                  .arg(name("version"))
                                  .arg(version)
                                  .arg(known));
}

std::vector<double> JsonFields::numbers(const char* key) const
{
    std::vector<double> numbers;
    const QJsonArray elements = array(key);
    for (qsizetype i = 0; i < elements.size(); ++i) {
        require(elements.at(i).isDouble(),
                QStringLiteral("%1[%2] must be a number").arg(name(key)).arg(i));
        numbers.push_back(elements.at(i).toDouble());
    }
    return numbers;
}

double JsonFields::checkedInteger(const QString& name, double number, double minimum,
                                  double maximum)
{
    require(std::isfinite(number) && number == std::floor(number) && number >= minimum &&
                number <= maximum,
            QStringLiteral("%1 must be an integer from %2 to %3 (got %4)")
                .arg(name)
                .arg(minimum, 0, 'f', 0)
                .arg(maximum, 0, 'f', 0)
                .arg(number));
    return number;
}

QJsonValue JsonFields::field(const char* key, QJsonValue::Type type) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined())
        return value;
    static const char* const typeNames[] = {"null",     "a boolean", "a number",
                                            "a string", "an array",  "an object"};
    require(value.type() == type,
            QStringLiteral("%1 must be %2").arg(name(key), typeNames[int(type)]));
    return value;
}

QJsonValue numberOrNull(double value)
{
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

int boundedInteger(const QJsonObject& json, const char* key, int minimum, int maximum)
{
    const QJsonValue value = json.value(QLatin1String(key));
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || number != std::floor(number) || number < minimum || number > maximum)
        throw InputError(QStringLiteral("%1 must be an integer from %2 to %3")
                             .arg(QLatin1String(key))
                             .arg(minimum)
                             .arg(maximum));
    return int(number);
}

}  // namespace attnlab

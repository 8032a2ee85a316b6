#include "model/safetensors.h"

#include "errors.h"
#include "io/json_types.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QStringList>
#include <QtEndian>
#include <QFloat16>
#include <QtNumeric>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnlab {

namespace {

// The longest shape a header may give (safetensors itself allows any; no checkpoint needs more).
constexpr std::size_t kLargestRank = 8;
// Integers above 2^53 cannot be told apart as JSON numbers (doubles); no offset or dimension of a
// real file comes near it.
constexpr double kLargestExactInteger = 9007199254740992.0;
// Elements converted at once from F16 (through an aligned buffer).
constexpr std::int64_t kConversionChunk = 1 << 14;

[[noreturn]] void refuseTensor(const QString& fileName, const QString& tensor,
                               const QString& problem)
{
    throw InputError(QStringLiteral("%1: tensor %2: %3").arg(fileName, tensor, problem));
}

// The bytes of one element of a safetensors dtype (the names of the format's specification), or
// 0 for a name the format does not define.
std::uint64_t dtypeSize(const QString& name)
{
    static const QHash<QString, std::uint64_t> sizes = {
        {QStringLiteral("BOOL"), 1},    {QStringLiteral("U8"), 1},      {QStringLiteral("I8"), 1},
        {QStringLiteral("F8_E5M2"), 1}, {QStringLiteral("F8_E4M3"), 1}, {QStringLiteral("I16"), 2},
        {QStringLiteral("U16"), 2},     {QStringLiteral("F16"), 2},     {QStringLiteral("BF16"), 2},
        {QStringLiteral("I32"), 4},     {QStringLiteral("U32"), 4},     {QStringLiteral("F32"), 4},
        {QStringLiteral("F64"), 8},     {QStringLiteral("I64"), 8},     {QStringLiteral("U64"), 8},
    };
    return sizes.value(name, 0);
}

TensorDtype dtypeOf(const QString& name)
{
    for (const TensorDtype dtype :
         {TensorDtype::F32, TensorDtype::F16, TensorDtype::BF16, TensorDtype::F64})
        if (name == tensorDtypeName(dtype))
            return dtype;
    return TensorDtype::Other;
}

QString shapeText(const std::vector<std::int64_t>& shape)
{
    QStringList dims;
    for (const std::int64_t dim : shape)
        dims.append(QString::number(dim));
    return QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

// A JSON number that is an integer in [0, 2^53], or false.
bool nonNegativeInteger(const QJsonValue& value, std::uint64_t* result)
{
    if (!value.isDouble())
        return false;
    const double number = value.toDouble();
    if (!(number >= 0 && number <= kLargestExactInteger) || number != std::trunc(number))
        return false;
    *result = std::uint64_t(number);
    return true;
}

// Checks one entry of the header and returns it.
TensorEntry parseEntry(const QString& fileName, const QString& name, const QJsonValue& value,
                       std::uint64_t dataSize)
{
    if (!value.isObject())
        refuseTensor(fileName, name,
                     QStringLiteral("is %1; expected {\"dtype\", \"shape\", \"data_offsets\"}")
                         .arg(jsonTypeName(value)));
    const QJsonObject object = value.toObject();
    TensorEntry entry;
    entry.name = name;

    const QJsonValue dtype = object.value(QStringLiteral("dtype"));
    if (!dtype.isString() || dtype.toString().isEmpty())
        refuseTensor(fileName, name,
                     QStringLiteral("dtype is %1; expected a string such as \"F32\"")
                         .arg(jsonTypeName(dtype)));
    entry.dtypeName = dtype.toString();
    entry.dtype = dtypeOf(entry.dtypeName);

    const QJsonValue shape = object.value(QStringLiteral("shape"));
    if (!shape.isArray())
        refuseTensor(fileName, name,
                     QStringLiteral("shape is %1; expected an array of dimensions")
                         .arg(jsonTypeName(shape)));
    const QJsonArray dims = shape.toArray();
    if (std::size_t(dims.size()) > kLargestRank)
        refuseTensor(fileName, name,
                     QStringLiteral("shape has %1 dimensions; at most %2 are read")
                         .arg(dims.size())
                         .arg(kLargestRank));
    // The element count, checked for overflow as it grows (a zero dimension makes it 0).
    std::uint64_t count = 1;
    bool overflow = false;
    for (const QJsonValue dim : dims) {
        std::uint64_t size = 0;
        if (!nonNegativeInteger(dim, &size))
            refuseTensor(
                fileName, name,
                QStringLiteral("shape holds %1; expected non-negative integers")
                    .arg(dim.isDouble() ? QString::number(dim.toDouble()) : jsonTypeName(dim)));
        entry.shape.push_back(std::int64_t(size));
        overflow = overflow || qMulOverflow(count, size, &count);
    }

    const QJsonValue offsets = object.value(QStringLiteral("data_offsets"));
    const QJsonArray pair = offsets.toArray();
    if (!offsets.isArray() || pair.size() != 2 || !nonNegativeInteger(pair[0], &entry.begin) ||
        !nonNegativeInteger(pair[1], &entry.end))
        refuseTensor(fileName, name,
                     QStringLiteral("data_offsets is not [begin, end] with two non-negative "
                                    "integers"));
    if (entry.end < entry.begin)
        refuseTensor(fileName, name,
                     QStringLiteral("data_offsets [%1, %2] end before they begin")
                         .arg(entry.begin)
                         .arg(entry.end));
    if (entry.end > dataSize)
        refuseTensor(fileName, name,
                     QStringLiteral("data_offsets [%1, %2] reach past the end of the data (%3 "
                                    "bytes): the file is truncated or damaged")
                         .arg(entry.begin)
                         .arg(entry.end)
                         .arg(dataSize));
    // The known dtypes' sizes must account for the bytes exactly (other dtypes are refused by
    // name when used).
    const std::uint64_t elementSize = dtypeSize(entry.dtypeName);
    std::uint64_t bytes = 0;
    overflow = overflow || qMulOverflow(count, elementSize, &bytes);
    if (elementSize > 0 && (overflow || bytes != entry.end - entry.begin))
        refuseTensor(fileName, name,
                     QStringLiteral("shape %1 of %2 needs %3 bytes, but data_offsets [%4, %5] "
                                    "hold %6")
                         .arg(shapeText(entry.shape), entry.dtypeName,
                              overflow ? QStringLiteral("more than 2^64") : QString::number(bytes))
                         .arg(entry.begin)
                         .arg(entry.end)
                         .arg(entry.end - entry.begin));
    return entry;
}

}  // namespace

std::int64_t TensorEntry::elementCount() const
{
    std::int64_t count = 1;
    for (const std::int64_t dim : shape)
        if (qMulOverflow(count, dim, &count))
            return -1;
    return count;
}

QString tensorDtypeName(TensorDtype dtype)
{
    switch (dtype) {
        case TensorDtype::F32: return QStringLiteral("F32");
        case TensorDtype::F16: return QStringLiteral("F16");
        case TensorDtype::BF16: return QStringLiteral("BF16");
        case TensorDtype::F64: return QStringLiteral("F64");
        case TensorDtype::Other: break;
    }
    return QStringLiteral("other");
}

std::uint64_t tensorDtypeBytes(TensorDtype dtype)
{
    switch (dtype) {
        case TensorDtype::F32: return 4;
        case TensorDtype::F16:
        case TensorDtype::BF16: return 2;
        case TensorDtype::F64: return 8;
        case TensorDtype::Other: break;
    }
    return 0;
}

std::vector<TensorEntry> parseSafetensorsHeader(QByteArrayView header, std::uint64_t dataSize,
                                                const QString& fileName)
{
    QJsonParseError error;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromRawData(header.data(), header.size()), &error);
    if (error.error != QJsonParseError::NoError)
        refuse(fileName, QStringLiteral("the safetensors header is not JSON (%1 at byte %2 of "
                                        "the header)")
                             .arg(error.errorString())
                             .arg(error.offset));
    if (!document.isObject())
        refuse(fileName,
               QStringLiteral("the safetensors header is a JSON %1; expected an object "
                              "of tensors")
                   .arg(document.isArray() ? QStringLiteral("array") : QStringLiteral("value")));
    const QJsonObject root = document.object();
    std::vector<TensorEntry> entries;
    entries.reserve(std::size_t(root.size()));
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (it.key() == QLatin1String("__metadata__")) {
            const QJsonValue metadata = it.value();
            bool valid = metadata.isObject();
            const QJsonObject map = metadata.toObject();
            for (auto m = map.begin(); valid && m != map.end(); ++m)
                valid = m.value().isString();
            if (!valid)
                refuse(fileName, QStringLiteral("the safetensors header's __metadata__ is not a "
                                                "map of strings to strings"));
            continue;
        }
        entries.push_back(parseEntry(fileName, it.key(), it.value(), dataSize));
    }
    std::sort(entries.begin(), entries.end(), [](const TensorEntry& a, const TensorEntry& b) {
        if (a.begin != b.begin)
            return a.begin < b.begin;
        if (a.end != b.end)
            return a.end < b.end;
        return a.name < b.name;
    });
    // Byte ranges [begin, end) that share a byte overlap; empty ones hold no byte.
    const TensorEntry* previous = nullptr;  // the nonempty entry reaching furthest so far
    for (const TensorEntry& entry : entries) {
        if (entry.begin == entry.end)
            continue;
        if (previous && entry.begin < previous->end)
            refuse(fileName, QStringLiteral("tensor %1 (bytes %2 to %3) overlaps tensor %4 (bytes "
                                            "%5 to %6)")
                                 .arg(entry.name)
                                 .arg(entry.begin)
                                 .arg(entry.end)
                                 .arg(previous->name)
                                 .arg(previous->begin)
                                 .arg(previous->end));
        if (!previous || entry.end > previous->end)
            previous = &entry;
    }
    return entries;
}

SafetensorsFile::SafetensorsFile(const QString& path) : m_path(path), m_mapped(path)
{
    const std::uint64_t fileSize = m_mapped.size();
    if (fileSize < 8)
        refuse(path, QStringLiteral("is %1 bytes long; a safetensors file starts with an 8-byte "
                                    "header length")
                         .arg(fileSize));
    const uchar* mapped = m_mapped.data();
    const std::uint64_t headerLength = qFromLittleEndian<quint64>(mapped);
    const std::uint64_t available = fileSize - 8;
    if (headerLength > kSafetensorsMaxHeader)
        refuse(path, QStringLiteral("the safetensors header length is %1 bytes, over the %2 bytes "
                                    "Attention Lab reads: not a safetensors file, or a damaged one")
                         .arg(headerLength)
                         .arg(kSafetensorsMaxHeader));
    if (headerLength > available)
        refuse(path, QStringLiteral("the safetensors header length is %1 bytes, but only %2 bytes "
                                    "follow it: the file is truncated or not a safetensors file")
                         .arg(headerLength)
                         .arg(available));
    m_data = mapped + 8 + headerLength;
    m_dataSize = available - headerLength;
    const QByteArrayView header(reinterpret_cast<const char*>(mapped + 8), qsizetype(headerLength));
    m_entries = parseSafetensorsHeader(header, m_dataSize, path);
    // parseSafetensorsHeader checked the JSON and that __metadata__ is a map of strings.
    m_metadata = QJsonDocument::fromJson(QByteArray::fromRawData(header.data(), header.size()))
                     .object()
                     .value(QLatin1String("__metadata__"))
                     .toObject();
}

const TensorEntry* SafetensorsFile::find(const QString& name) const
{
    for (const TensorEntry& entry : m_entries)
        if (entry.name == name)
            return &entry;
    return nullptr;
}

std::vector<float> SafetensorsFile::values(const TensorEntry& entry) const
{
    const qint64 count = entry.elementCount();
    const std::uint64_t elementSize = tensorDtypeBytes(entry.dtype);
    if (elementSize == 0)
        refuseTensor(m_path, entry.name,
                     QStringLiteral("unsupported dtype %1 (Attention Lab reads F32, F16, BF16 and "
                                    "F64)")
                         .arg(entry.dtypeName));
    // The entry may not come from this file's header: its range is checked again.
    std::uint64_t bytes = 0;
    if (count < 0 || entry.end < entry.begin || entry.end > m_dataSize ||
        qMulOverflow(std::uint64_t(count), elementSize, &bytes) || bytes != entry.end - entry.begin)
        refuseTensor(m_path, entry.name,
                     QStringLiteral("its data_offsets do not fit its shape or the file"));

    std::vector<float> result(static_cast<std::size_t>(count));
    const uchar* data = m_data + entry.begin;
    switch (entry.dtype) {
        case TensorDtype::F32: qFromLittleEndian<float>(data, count, result.data()); break;
        case TensorDtype::F64:
            for (qint64 i = 0; i < count; ++i)
                result[std::size_t(i)] = float(qFromLittleEndian<double>(data + 8 * i));
            break;
        case TensorDtype::BF16:
            // bfloat16 is the upper half of a float's bits.
            for (qint64 i = 0; i < count; ++i) {
                const quint32 bits = quint32(qFromLittleEndian<quint16>(data + 2 * i)) << 16;
                std::memcpy(&result[std::size_t(i)], &bits, sizeof bits);
            }
            break;
        case TensorDtype::F16: {
            // Through an aligned buffer of qfloat16 (the mapped data may sit at an odd offset),
            // then Qt's bulk conversion (F16C instructions where the CPU has them).
            std::vector<qfloat16> chunk(std::size_t(std::min<qint64>(count, kConversionChunk)));
            for (qint64 i = 0; i < count; i += kConversionChunk) {
                const qint64 n = std::min<qint64>(kConversionChunk, count - i);
                qFromLittleEndian<quint16>(data + 2 * i, n, static_cast<void*>(chunk.data()));
                qFloatFromFloat16(result.data() + i, chunk.data(), n);
            }
            break;
        }
        case TensorDtype::Other: break;
    }
    for (qint64 i = 0; i < count; ++i)
        if (!std::isfinite(result[std::size_t(i)]))
            refuseTensor(m_path, entry.name,
                         QStringLiteral("element %1 is %2; weights must be finite%3")
                             .arg(i)
                             .arg(std::isnan(result[std::size_t(i)]) ? QStringLiteral("NaN")
                                                                     : QStringLiteral("infinite"))
                             .arg(entry.dtype == TensorDtype::F64
                                      ? QStringLiteral(" (in float: F64 values beyond 3.4e38 "
                                                       "overflow)")
                                      : QString()));
    return result;
}

std::vector<float> SafetensorsFile::tensor(const QString& name,
                                           const std::vector<std::int64_t>& shape) const
{
    const TensorEntry* entry = find(name);
    if (!entry)
        refuse(m_path, QStringLiteral("tensor %1 is missing").arg(name));
    if (entry->shape != shape)
        refuse(m_path, QStringLiteral("tensor %1 has shape %2, expected %3")
                           .arg(name, shapeText(entry->shape), shapeText(shape)));
    return values(*entry);
}

Matrix<float> SafetensorsFile::matrix(const QString& name, Eigen::Index rows,
                                      Eigen::Index cols) const
{
    const std::vector<float> data = tensor(name, {std::int64_t(rows), std::int64_t(cols)});
    return Eigen::Map<const Matrix<float>>(data.data(), rows, cols);
}

Vector<float> SafetensorsFile::vector(const QString& name, Eigen::Index size) const
{
    const std::vector<float> data = tensor(name, {std::int64_t(size)});
    return Eigen::Map<const Vector<float>>(data.data(), size);
}

}  // namespace attnlab

#include "model/gguf_file.h"

#include "errors.h"
#include "parallel.h"

#include <QtEndian>
#include <QtNumeric>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnlab {

namespace {

constexpr std::uint32_t kLargestValueType = 12;
// Arrays nested deeper than this are refused (no file nests any).
constexpr int kDeepestArray = 4;
// ggml's GGML_MAX_DIMS and GGML_MAX_NAME; the longest key the format allows.
constexpr std::uint32_t kLargestRank = 4;
constexpr std::uint64_t kLongestTensorName = 64;
constexpr std::uint64_t kLongestKey = 65535;
// The most values a tensor may hold (so that counts of bytes and floats never overflow).
constexpr std::int64_t kLargestElementCount = std::int64_t(1) << 50;
// The fewest bytes a metadata entry (key length, type, a one-byte value) and a tensor info
// (name length, n_dims, one dimension, type, offset) take: a count that needs more than the file
// holds is refused before anything is allocated for it.
constexpr std::uint64_t kSmallestEntry = 8 + 4 + 1;
constexpr std::uint64_t kSmallestTensorInfo = 8 + 4 + 8 + 4 + 8;

// The bytes of a scalar value type; 0 for a string or an array.
std::uint64_t scalarBytes(GgufValueType type)
{
    switch (type) {
        case GgufValueType::UInt8:
        case GgufValueType::Int8:
        case GgufValueType::Bool: return 1;
        case GgufValueType::UInt16:
        case GgufValueType::Int16: return 2;
        case GgufValueType::UInt32:
        case GgufValueType::Int32:
        case GgufValueType::Float32: return 4;
        case GgufValueType::UInt64:
        case GgufValueType::Int64:
        case GgufValueType::Float64: return 8;
        case GgufValueType::String:
        case GgufValueType::Array: return 0;
    }
    return 0;
}

bool isInteger(GgufValueType type)
{
    return type != GgufValueType::Float32 && type != GgufValueType::Float64 &&
           type != GgufValueType::Bool && scalarBytes(type) > 0;
}

bool isNumber(GgufValueType type)
{
    return type != GgufValueType::Bool && scalarBytes(type) > 0;
}

// "an int32", "a uint32", "an array".
QString withArticle(const QString& typeName)
{
    return (QStringLiteral("aeio").contains(typeName.front()) ? QStringLiteral("an ")
                                                              : QStringLiteral("a ")) +
           typeName;
}

QString hexBytes(const uchar* data, std::uint64_t count)
{
    QStringList bytes;
    for (std::uint64_t i = 0; i < count; ++i)
        bytes.append(QStringLiteral("%1").arg(data[i], 2, 16, QLatin1Char('0')));
    return bytes.join(QLatin1Char(' '));
}

}  // namespace

QString ggufValueTypeName(GgufValueType type)
{
    switch (type) {
        case GgufValueType::UInt8: return QStringLiteral("uint8");
        case GgufValueType::Int8: return QStringLiteral("int8");
        case GgufValueType::UInt16: return QStringLiteral("uint16");
        case GgufValueType::Int16: return QStringLiteral("int16");
        case GgufValueType::UInt32: return QStringLiteral("uint32");
        case GgufValueType::Int32: return QStringLiteral("int32");
        case GgufValueType::Float32: return QStringLiteral("float32");
        case GgufValueType::Bool: return QStringLiteral("bool");
        case GgufValueType::String: return QStringLiteral("string");
        case GgufValueType::Array: return QStringLiteral("array");
        case GgufValueType::UInt64: return QStringLiteral("uint64");
        case GgufValueType::Int64: return QStringLiteral("int64");
        case GgufValueType::Float64: return QStringLiteral("float64");
    }
    return QString();
}

std::int64_t GgufTensor::elementCount() const
{
    return std::accumulate(dimensions.begin(), dimensions.end(), std::int64_t(1),
                           std::multiplies<>());
}

QString GgufTensor::dimensionsText() const
{
    QStringList dims;
    for (const std::int64_t dim : dimensions)
        dims.append(QString::number(dim));
    return QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

// A cursor over the mapped file that never reads past its end: every read checks the bytes that
// remain, and a read that does not fit throws "truncated", naming what was being read.
class GgufFile::Reader {
public:
    explicit Reader(const GgufFile& file) : m_file(file) {}

    std::uint64_t position() const { return m_position; }
    std::uint64_t remaining() const { return m_file.m_mapped.size() - m_position; }

    // Refuses, as truncated inside `what()`, unless n more bytes are there.
    template <typename Describe>
    void need(std::uint64_t n, const Describe& what) const
    {
        if (n > remaining())
            m_file.refuse(QStringLiteral("truncated: the file (%1 bytes) ends inside %2")
                              .arg(m_file.m_mapped.size())
                              .arg(what()));
    }
    template <typename T, typename Describe>
    T read(const Describe& what)
    {
        need(sizeof(T), what);
        const T value = qFromLittleEndian<T>(m_file.m_mapped.data() + m_position);
        m_position += sizeof(T);
        return value;
    }
    template <typename Describe>
    void skip(std::uint64_t n, const Describe& what)
    {
        need(n, what);
        m_position += n;
    }
    // A string: its uint64 length, then that many bytes.
    template <typename Describe>
    QByteArrayView string(const Describe& what)
    {
        const std::uint64_t length = read<quint64>(what);
        need(length, what);
        const QByteArrayView text(
            reinterpret_cast<const char*>(m_file.m_mapped.data() + m_position), qsizetype(length));
        m_position += length;
        return text;
    }
    // A value type (uint32), refused unless ggml defines it.
    template <typename Describe>
    GgufValueType valueType(const Describe& what)
    {
        const std::uint32_t type = read<quint32>(what);
        if (type > kLargestValueType)
            m_file.refuse(QStringLiteral("%1 has the value type %2; GGUF's are 0 to %3")
                              .arg(what())
                              .arg(type)
                              .arg(kLargestValueType));
        return GgufValueType(type);
    }
    // Moves past a value of `type`, checking every length inside it.
    template <typename Describe>
    void skipValue(GgufValueType type, const Describe& what, int depth)
    {
        if (type == GgufValueType::String) {
            string(what);
            return;
        }
        if (type != GgufValueType::Array) {
            skip(scalarBytes(type), what);
            return;
        }
        const GgufValueType element = valueType(what);
        const std::uint64_t count = read<quint64>(what);
        skipElements(element, count, what, depth);
    }
    template <typename Describe>
    void skipElements(GgufValueType element, std::uint64_t count, const Describe& what, int depth)
    {
        const std::uint64_t smallest = element == GgufValueType::String  ? 8
                                       : element == GgufValueType::Array ? 12
                                                                         : scalarBytes(element);
        if (count > remaining() / smallest)
            m_file.refuse(QStringLiteral("%1 is an array of %2 elements of type %3, more than the "
                                         "%4 bytes left in the file can hold")
                              .arg(what())
                              .arg(count)
                              .arg(ggufValueTypeName(element))
                              .arg(remaining()));
        if (scalarBytes(element) > 0) {
            m_position += count * smallest;
            return;
        }
        if (element == GgufValueType::Array && depth >= kDeepestArray)
            m_file.refuse(
                QStringLiteral("%1 nests arrays more than %2 deep").arg(what()).arg(kDeepestArray));
        for (std::uint64_t i = 0; i < count; ++i)
            skipValue(element, what, depth + 1);
    }

private:
    const GgufFile& m_file;
    std::uint64_t m_position = 0;
};

GgufFile::GgufFile(const QString& path) : m_path(path), m_mapped(path)
{
    Reader reader(*this);
    readHeader(reader);
    if (const GgufValue* alignment = value(QStringLiteral("general.alignment"))) {
        if (alignment->type != GgufValueType::UInt32)
            refuseKey(QStringLiteral("general.alignment"),
                      QStringLiteral("is a %1; expected a uint32")
                          .arg(ggufValueTypeName(alignment->type)));
        m_alignment = qFromLittleEndian<quint32>(m_mapped.data() + alignment->offset);
        if (m_alignment == 0 || (m_alignment & (m_alignment - 1)) != 0)
            refuseKey(QStringLiteral("general.alignment"),
                      QStringLiteral("is %1; expected a power of two").arg(m_alignment));
    }
    const std::uint64_t tensorCount = qFromLittleEndian<quint64>(m_mapped.data() + 8);
    readTensorInfos(reader, tensorCount);
    const std::uint64_t end = reader.position();
    m_dataStart = end + (m_alignment - end % m_alignment) % m_alignment;
    if (!m_tensors.empty() && m_dataStart > m_mapped.size())
        refuse(QStringLiteral("truncated: the file (%1 bytes) ends before its tensor data, which "
                              "starts at byte %2")
                   .arg(m_mapped.size())
                   .arg(m_dataStart));
    checkTensorData();
}

void GgufFile::readHeader(Reader& reader)
{
    const auto header = [] { return QStringLiteral("the header"); };
    reader.need(4, header);
    if (QByteArrayView(reinterpret_cast<const char*>(m_mapped.data()), 4) != QByteArrayView("GGUF"))
        refuse(QStringLiteral("not a GGUF file: it starts with the bytes %1, not \"GGUF\" (47 47 "
                              "55 46)")
                   .arg(hexBytes(m_mapped.data(), 4)));
    reader.skip(4, header);
    m_version = reader.read<quint32>(header);
    if (m_version != 2 && m_version != 3) {
        if (qbswap(m_version) == 2 || qbswap(m_version) == 3)
            refuse(QStringLiteral("a big-endian GGUF file (version %1); Attention Lab reads "
                                  "little-endian ones, as llama.cpp writes them")
                       .arg(qbswap(m_version)));
        refuse(QStringLiteral("GGUF version %1; Attention Lab reads versions 2 and 3%2")
                   .arg(m_version)
                   .arg(m_version == 1 ? QStringLiteral(" (version 1 is from before August "
                                                        "2023: convert the model again)")
                                       : QString()));
    }
    const std::uint64_t tensorCount = reader.read<quint64>(header);
    const std::uint64_t keyCount = reader.read<quint64>(header);
    if (keyCount > reader.remaining() / kSmallestEntry)
        refuse(QStringLiteral("the header gives %1 metadata entries, more than the %2 bytes left "
                              "in the file can hold")
                   .arg(keyCount)
                   .arg(reader.remaining()));
    if (tensorCount > reader.remaining() / kSmallestTensorInfo)
        refuse(QStringLiteral("the header gives %1 tensors, more than the %2 bytes left in the "
                              "file can hold")
                   .arg(tensorCount)
                   .arg(reader.remaining()));
    for (std::uint64_t i = 0; i < keyCount; ++i) {
        const QByteArrayView keyBytes =
            reader.string([&] { return QStringLiteral("the key of metadata entry %1").arg(i); });
        const QString key = QString::fromUtf8(keyBytes);
        if (keyBytes.isEmpty() || std::uint64_t(keyBytes.size()) > kLongestKey ||
            !std::all_of(keyBytes.begin(), keyBytes.end(),
                         [](char c) { return c > 0x20 && c < 0x7f; }))
            refuse(QStringLiteral("metadata entry %1 has the key %2; keys are 1 to %3 printable "
                                  "ASCII characters")
                       .arg(i)
                       .arg(QLatin1Char('"') + key.left(64) + QLatin1Char('"'))
                       .arg(kLongestKey));
        if (m_values.contains(key))
            refuseKey(key, QStringLiteral("appears twice"));
        const auto what = [&] { return QStringLiteral("the value of metadata key %1").arg(key); };
        GgufValue value;
        value.type = reader.valueType(what);
        if (value.type == GgufValueType::Array) {
            value.elementType = reader.valueType(what);
            value.count = reader.read<quint64>(what);
            value.offset = reader.position();
            reader.skipElements(value.elementType, value.count, what, 1);
        } else {
            value.offset = reader.position();
            reader.skipValue(value.type, what, 0);
        }
        m_keys.append(key);
        m_values.insert(key, value);
    }
}

void GgufFile::readTensorInfos(Reader& reader, std::uint64_t count)
{
    m_tensors.reserve(std::size_t(count));
    for (std::uint64_t i = 0; i < count; ++i) {
        const auto info = [&] { return QStringLiteral("tensor info %1").arg(i); };
        const QByteArrayView nameBytes = reader.string(info);
        GgufTensor tensor;
        tensor.name = QString::fromUtf8(nameBytes);
        if (nameBytes.isEmpty() || std::uint64_t(nameBytes.size()) > kLongestTensorName)
            refuse(QStringLiteral("tensor info %1 has a name of %2 bytes; names are 1 to %3 bytes")
                       .arg(i)
                       .arg(nameBytes.size())
                       .arg(kLongestTensorName));
        if (m_tensorIndex.contains(tensor.name))
            refuseTensor(tensor.name, QStringLiteral("appears twice"));
        const auto what = [&] { return QStringLiteral("the info of tensor %1").arg(tensor.name); };
        const std::uint32_t rank = reader.read<quint32>(what);
        if (rank < 1 || rank > kLargestRank)
            refuseTensor(tensor.name, QStringLiteral("has %1 dimensions; ggml's tensors have 1 to "
                                                     "%2")
                                          .arg(rank)
                                          .arg(kLargestRank));
        std::int64_t elements = 1;
        for (std::uint32_t d = 0; d < rank; ++d) {
            const std::uint64_t dim = reader.read<quint64>(what);
            if (dim < 1 || dim > std::uint64_t(kLargestElementCount) ||
                qMulOverflow(elements, std::int64_t(dim), &elements) ||
                elements > kLargestElementCount)
                refuseTensor(tensor.name,
                             QStringLiteral("has %1 as dimension %2; dimensions are at least 1 "
                                            "and hold at most 2^50 values together")
                                 .arg(dim)
                                 .arg(d));
            tensor.dimensions.push_back(std::int64_t(dim));
        }
        tensor.type = reader.read<quint32>(what);
        tensor.traits = ggmlTypeTraits(tensor.type);
        if (!tensor.traits)
            refuseTensor(
                tensor.name,
                QStringLiteral("has the type %1, which is not a ggml type").arg(tensor.type));
        if (tensor.dimensions[0] % tensor.traits->blockSize != 0)
            refuseTensor(tensor.name,
                         QStringLiteral("has dimensions %1: type %2 stores rows in blocks of %3 "
                                        "values, and a row of %4 is not a whole number of them")
                             .arg(tensor.dimensionsText(), QLatin1String(tensor.traits->name))
                             .arg(tensor.traits->blockSize)
                             .arg(tensor.dimensions[0]));
        tensor.bytes = std::uint64_t(elements / tensor.traits->blockSize) *
                       std::uint64_t(tensor.traits->blockBytes);
        tensor.offset = reader.read<quint64>(what);
        m_tensorIndex.insert(tensor.name, qsizetype(m_tensors.size()));
        m_tensors.push_back(std::move(tensor));
    }
}

void GgufFile::checkTensorData()
{
    const std::uint64_t dataSize = m_mapped.size() - std::min(m_mapped.size(), m_dataStart);
    std::vector<const GgufTensor*> byOffset;
    for (const GgufTensor& tensor : m_tensors) {
        if (tensor.offset % m_alignment != 0)
            refuseTensor(tensor.name,
                         QStringLiteral("has the data offset %1, which is not a multiple "
                                        "of the alignment %2")
                             .arg(tensor.offset)
                             .arg(m_alignment));
        if (tensor.offset > dataSize || tensor.bytes > dataSize - tensor.offset)
            refuseTensor(tensor.name,
                         QStringLiteral("has data (type %1, dimensions %2: %3 bytes from offset "
                                        "%4) that runs past the end of the file, which holds %5 "
                                        "bytes of tensor data")
                             .arg(QLatin1String(tensor.traits->name), tensor.dimensionsText())
                             .arg(tensor.bytes)
                             .arg(tensor.offset)
                             .arg(dataSize));
        byOffset.push_back(&tensor);
    }
    std::sort(byOffset.begin(), byOffset.end(),
              [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
    for (std::size_t i = 1; i < byOffset.size(); ++i) {
        const GgufTensor& before = *byOffset[i - 1];
        if (before.offset + before.bytes > byOffset[i]->offset)
            refuseTensor(before.name,
                         QStringLiteral("has data (type %1, dimensions %2: %3 bytes from offset "
                                        "%4) that overlaps the data of %5 at offset %6: its size "
                                        "disagrees with the offsets")
                             .arg(QLatin1String(before.traits->name), before.dimensionsText())
                             .arg(before.bytes)
                             .arg(before.offset)
                             .arg(byOffset[i]->name)
                             .arg(byOffset[i]->offset));
    }
}

void GgufFile::refuse(const QString& problem) const
{
    throw InputError(QStringLiteral("%1: %2").arg(m_path, problem));
}

void GgufFile::refuseKey(const QString& key, const QString& problem) const
{
    refuse(QStringLiteral("metadata key %1 %2").arg(key, problem));
}

void GgufFile::refuseTensor(const QString& name, const QString& problem) const
{
    refuse(QStringLiteral("tensor %1 %2").arg(name, problem));
}

const GgufValue* GgufFile::value(const QString& key) const
{
    const auto it = m_values.constFind(key);
    return it == m_values.cend() ? nullptr : &it.value();
}

const GgufValue& GgufFile::typedValue(const QString& key, bool (*accepted)(GgufValueType),
                                      const QString& expected) const
{
    const GgufValue* found = value(key);
    if (!found)
        refuseKey(key, QStringLiteral("is missing"));
    if (!accepted(found->type))
        refuseKey(key, QStringLiteral("is %1; expected %2")
                           .arg(withArticle(ggufValueTypeName(found->type)), expected));
    return *found;
}

double GgufFile::scalarAt(GgufValueType type, std::uint64_t offset) const
{
    const uchar* p = m_mapped.data() + offset;
    switch (type) {
        case GgufValueType::UInt8:
        case GgufValueType::Bool: return *p;
        case GgufValueType::Int8: return double(qint8(*p));
        case GgufValueType::UInt16: return qFromLittleEndian<quint16>(p);
        case GgufValueType::Int16: return qFromLittleEndian<qint16>(p);
        case GgufValueType::UInt32: return qFromLittleEndian<quint32>(p);
        case GgufValueType::Int32: return qFromLittleEndian<qint32>(p);
        case GgufValueType::Float32: return qFromLittleEndian<float>(p);
        case GgufValueType::UInt64: return double(qFromLittleEndian<quint64>(p));
        case GgufValueType::Int64: return double(qFromLittleEndian<qint64>(p));
        case GgufValueType::Float64: return qFromLittleEndian<double>(p);
        case GgufValueType::String:
        case GgufValueType::Array: break;
    }
    return 0;
}

std::uint64_t GgufFile::unsignedInteger(const QString& key) const
{
    const GgufValue& found = typedValue(key, isInteger, QStringLiteral("an integer"));
    if (found.type == GgufValueType::UInt64)
        return qFromLittleEndian<quint64>(m_mapped.data() + found.offset);
    const double number = scalarAt(found.type, found.offset);
    if (number < 0)
        refuseKey(key, QStringLiteral("is %1; expected an integer >= 0").arg(number));
    return std::uint64_t(number);
}

std::uint64_t GgufFile::unsignedInteger(const QString& key, std::uint64_t fallback) const
{
    return contains(key) ? unsignedInteger(key) : fallback;
}

double GgufFile::number(const QString& key) const
{
    const GgufValue& found = typedValue(key, isNumber, QStringLiteral("a number"));
    const double number = scalarAt(found.type, found.offset);
    if (!std::isfinite(number))
        refuseKey(key, QStringLiteral("is %1; expected a finite number").arg(number));
    return number;
}

double GgufFile::number(const QString& key, double fallback) const
{
    return contains(key) ? number(key) : fallback;
}

bool GgufFile::boolean(const QString& key, bool fallback) const
{
    if (!contains(key))
        return fallback;
    const GgufValue& found = typedValue(
        key, [](GgufValueType type) { return type == GgufValueType::Bool; },
        QStringLiteral("a bool"));
    const uchar byte = m_mapped.data()[found.offset];
    if (byte > 1)
        refuseKey(key, QStringLiteral("is the bool byte %1; expected 0 or 1").arg(byte));
    return byte == 1;
}

QString GgufFile::string(const QString& key) const
{
    const GgufValue& found = typedValue(
        key, [](GgufValueType type) { return type == GgufValueType::String; },
        QStringLiteral("a string"));
    const std::uint64_t length = qFromLittleEndian<quint64>(m_mapped.data() + found.offset);
    return QString::fromUtf8(reinterpret_cast<const char*>(m_mapped.data() + found.offset + 8),
                             qsizetype(length));
}

QString GgufFile::string(const QString& key, const QString& fallback) const
{
    return contains(key) ? string(key) : fallback;
}

std::uint64_t GgufFile::arrayLength(const QString& key) const
{
    return typedValue(
               key, [](GgufValueType type) { return type == GgufValueType::Array; },
               QStringLiteral("an array"))
        .count;
}

const GgufValue& GgufFile::arrayOf(const QString& key, bool (*accepted)(GgufValueType),
                                   const QString& elements) const
{
    const GgufValue& found = typedValue(
        key, [](GgufValueType type) { return type == GgufValueType::Array; },
        QStringLiteral("an array of ") + elements);
    if (!accepted(found.elementType))
        refuseKey(key, QStringLiteral("is an array of %1; expected an array of %2")
                           .arg(ggufValueTypeName(found.elementType), elements));
    return found;
}

std::vector<QByteArrayView> GgufFile::byteStrings(const QString& key) const
{
    const GgufValue& found = arrayOf(
        key, [](GgufValueType type) { return type == GgufValueType::String; },
        QStringLiteral("strings"));
    std::vector<QByteArrayView> strings;
    strings.reserve(std::size_t(found.count));
    std::uint64_t offset = found.offset;  // every length was checked when the file was opened
    for (std::uint64_t i = 0; i < found.count; ++i) {
        const std::uint64_t length = qFromLittleEndian<quint64>(m_mapped.data() + offset);
        strings.emplace_back(reinterpret_cast<const char*>(m_mapped.data() + offset + 8),
                             qsizetype(length));
        offset += 8 + length;
    }
    return strings;
}

std::vector<float> GgufFile::floats(const QString& key) const
{
    const GgufValue& found = arrayOf(key, isNumber, QStringLiteral("numbers"));
    std::vector<float> numbers(std::size_t(found.count));
    const std::uint64_t size = scalarBytes(found.elementType);
    for (std::uint64_t i = 0; i < found.count; ++i)
        numbers[std::size_t(i)] = float(scalarAt(found.elementType, found.offset + i * size));
    return numbers;
}

std::vector<std::int64_t> GgufFile::integers(const QString& key) const
{
    const GgufValue& found = arrayOf(key, isInteger, QStringLiteral("integers"));
    std::vector<std::int64_t> numbers(std::size_t(found.count));
    const std::uint64_t size = scalarBytes(found.elementType);
    for (std::uint64_t i = 0; i < found.count; ++i) {
        const std::uint64_t offset = found.offset + i * size;
        if (found.elementType == GgufValueType::UInt64)
            numbers[std::size_t(i)] =
                std::int64_t(std::min<quint64>(qFromLittleEndian<quint64>(m_mapped.data() + offset),
                                               quint64(std::numeric_limits<std::int64_t>::max())));
        else if (found.elementType == GgufValueType::Int64)
            numbers[std::size_t(i)] = qFromLittleEndian<qint64>(m_mapped.data() + offset);
        else
            numbers[std::size_t(i)] = std::int64_t(scalarAt(found.elementType, offset));
    }
    return numbers;
}

const GgufTensor* GgufFile::find(const QString& name) const
{
    const auto it = m_tensorIndex.constFind(name);
    return it == m_tensorIndex.cend() ? nullptr : &m_tensors[std::size_t(it.value())];
}

std::vector<float> GgufFile::values(const GgufTensor& tensor) const
{
    std::vector<float> result(std::size_t(tensor.elementCount()));
    valuesInto(tensor, result.data());
    return result;
}

void GgufFile::valuesInto(const GgufTensor& tensor, float* result) const
{
    if (!tensor.traits->readable)
        refuseTensor(tensor.name,
                     QStringLiteral("has the type %1; Attention Lab reads %2")
                         .arg(QLatin1String(tensor.traits->name), readableGgmlTypes()));
    const std::int64_t count = tensor.elementCount();
    const std::int64_t rowLength = tensor.dimensions[0];
    const std::int64_t rowBytes = rowLength / tensor.traits->blockSize * tensor.traits->blockBytes;
    const uchar* data = m_mapped.data() + m_dataStart + tensor.offset;
    const std::int64_t rows = count / rowLength;
    // Blocks of about 64k values, so that a large tensor is spread over the threads.
    const std::int64_t rowsPerBlock = std::max<std::int64_t>(1, 65536 / rowLength);
    std::vector<std::int64_t> firstBad(std::size_t((rows + rowsPerBlock - 1) / rowsPerBlock), -1);
    const GgmlType type = GgmlType(tensor.type);
    forEachRowBlock(rows, rowsPerBlock, [&](Eigen::Index begin, Eigen::Index end) {
        float* out = result + begin * rowLength;
        const std::int64_t values = (end - begin) * rowLength;
        dequantizeGgml(type, data + begin * rowBytes, values, out);
        for (std::int64_t i = 0; i < values; ++i)
            if (!std::isfinite(out[i])) {
                firstBad[std::size_t(begin / rowsPerBlock)] = begin * rowLength + i;
                break;
            }
    });
    for (const std::int64_t bad : firstBad)
        if (bad >= 0)
            refuseTensor(tensor.name,
                         QStringLiteral("holds %1 at value %2; weights must be finite")
                             .arg(std::isnan(result[bad]) ? QStringLiteral("NaN")
                                                          : QStringLiteral("an infinity"))
                             .arg(bad));
}

const GgufTensor& GgufFile::tensorOfDimensions(const QString& name,
                                               const std::vector<std::int64_t>& dimensions) const
{
    const GgufTensor* found = find(name);
    if (!found)
        refuseTensor(name, QStringLiteral("is missing"));
    if (found->dimensions != dimensions) {
        GgufTensor expected;
        expected.dimensions = dimensions;
        refuseTensor(name, QStringLiteral("has dimensions %1, expected %2 (fastest first)")
                               .arg(found->dimensionsText(), expected.dimensionsText()));
    }
    return *found;
}

Matrix<float> GgufFile::matrix(const QString& name, Eigen::Index rows, Eigen::Index cols) const
{
    const GgufTensor& found = tensorOfDimensions(name, {std::int64_t(cols), std::int64_t(rows)});
    Matrix<float> result(rows, cols);
    valuesInto(found, result.data());
    return result;
}

Vector<float> GgufFile::vector(const QString& name, Eigen::Index size) const
{
    const GgufTensor& found = tensorOfDimensions(name, {std::int64_t(size)});
    Vector<float> result(size);
    valuesInto(found, result.data());
    return result;
}

double GgufFile::floatBytes() const
{
    double bytes = 0;
    for (const GgufTensor& tensor : m_tensors)
        bytes += 4.0 * double(tensor.elementCount());
    return bytes;
}

}  // namespace attnlab

#pragma once

#include "io/mapped_file.h"
#include "model/ggml_types.h"
#include "types.h"

#include <QByteArrayView>
#include <QHash>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace attnlab {

// A GGUF file (ggml's docs/gguf.md, versions 2 and 3, little-endian), memory-mapped:
//   "GGUF", version (uint32), tensor count and metadata count (uint64);
//   the metadata: key (string), value type (uint32), value (a scalar, a string: uint64 length then
//     UTF-8 bytes, or an array: element type, uint64 count, the elements);
//   the tensor infos: name (string), n_dims (uint32), the dimensions (uint64 each, the fastest
//     first: a PyTorch shape reversed), ggml type (uint32), offset (uint64) from the start of the
//     tensor data, a multiple of general.alignment (32 when absent);
//   padding to the alignment, then the tensor data.
// Everything is checked when the file is opened, before it is used: every length, count and offset
// against the bytes that remain, the value types, general.alignment (a power of two), each tensor's
// type (a number ggml defines), dimensions (1 to 4, each >= 1, rows a whole number of blocks), its
// data inside the file at an aligned offset, no two tensors overlapping, no name twice. Each
// problem is an InputError "file: what", naming the key or the tensor.

// The types of metadata values (gguf_metadata_value_type).
enum class GgufValueType : std::uint32_t {
    UInt8 = 0,
    Int8 = 1,
    UInt16 = 2,
    Int16 = 3,
    UInt32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    UInt64 = 10,
    Int64 = 11,
    Float64 = 12,
};

// "uint32", "string", "array of string", for messages.
QString ggufValueTypeName(GgufValueType type);

// One metadata value, located in the file and checked; decoded when read.
struct GgufValue {
    GgufValueType type = GgufValueType::UInt8;
    GgufValueType elementType = GgufValueType::UInt8;  // of an array
    std::uint64_t count = 1;                           // an array's elements
    std::uint64_t offset = 0;  // of the value (of an array: of its first element)
};

// One tensor info. The data of dimensions n_0 (fastest) .. n_k holds n_1 ... n_k rows of n_0
// values, each row n_0 / blockSize blocks of the type.
struct GgufTensor {
    QString name;
    std::vector<std::int64_t> dimensions;  // n_0 first, as stored
    std::uint32_t type = 0;                // ggml's number
    const GgmlTypeTraits* traits = nullptr;
    std::uint64_t offset = 0;  // from the start of the tensor data
    std::uint64_t bytes = 0;   // the data's size, from the type and dimensions

    std::int64_t elementCount() const;
    // "[576, 49152]" (fastest first, as the file lists them).
    QString dimensionsText() const;
};

class GgufFile {
public:
    // Opens, maps and checks path (above). Throws InputError naming the file.
    explicit GgufFile(const QString& path);
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const QString& path() const { return m_path; }
    std::uint32_t version() const { return m_version; }
    std::uint64_t alignment() const { return m_alignment; }
    // The position in the file of the first byte of the tensor data (tensor offsets count from
    // there).
    std::uint64_t dataStart() const { return m_dataStart; }

    // The metadata keys in the order of the file.
    const QStringList& keys() const { return m_keys; }
    bool contains(const QString& key) const { return m_values.contains(key); }
    // The value of key, or nullptr.
    const GgufValue* value(const QString& key) const;

    // Typed reads. Each throws InputError naming the file and the key when the key is missing
    // (unless a fallback is given: used when it is absent) or holds another type.
    // An integer of any of the integer types, >= 0.
    std::uint64_t unsignedInteger(const QString& key) const;
    std::uint64_t unsignedInteger(const QString& key, std::uint64_t fallback) const;
    // A float or an integer.
    double number(const QString& key) const;
    double number(const QString& key, double fallback) const;
    bool boolean(const QString& key, bool fallback) const;
    QString string(const QString& key) const;
    QString string(const QString& key, const QString& fallback) const;
    // An array's length.
    std::uint64_t arrayLength(const QString& key) const;
    // An array of strings (as UTF-8 bytes), of numbers (any of the scalar number types), of
    // integers.
    std::vector<QByteArrayView> byteStrings(const QString& key) const;
    std::vector<float> floats(const QString& key) const;
    std::vector<std::int64_t> integers(const QString& key) const;

    const std::vector<GgufTensor>& tensors() const { return m_tensors; }
    // The tensor called name, or nullptr.
    const GgufTensor* find(const QString& name) const;
    // The tensor's values as float, in the file's order (dimension 0 fastest), dequantized on the
    // engine threads. Throws InputError naming the file and the tensor for a type Attention Lab
    // does not read (named: "type IQ2_XXS") or a value that is not finite.
    std::vector<float> values(const GgufTensor& tensor) const;
    // The same, written to out (room for tensor.elementCount() floats).
    void valuesInto(const GgufTensor& tensor, float* out) const;
    // The 2-D tensor called name, of dimensions [cols, rows] exactly, as a rows x cols matrix (its
    // rows are the file's rows). Throws InputError naming the file and the tensor when it is
    // missing or has other dimensions, and as values() does.
    Matrix<float> matrix(const QString& name, Eigen::Index rows, Eigen::Index cols) const;
    // The 1-D tensor called name, of dimensions [size], with the same checks.
    Vector<float> vector(const QString& name, Eigen::Index size) const;
    // 4 bytes for every value of every tensor: the memory of the tensors once in float.
    double floatBytes() const;

    // Throws InputError "file: problem".
    [[noreturn]] void refuse(const QString& problem) const;
    // Throws InputError "file: metadata key K problem" ("... metadata key general.alignment is
    // 24; expected a power of two").
    [[noreturn]] void refuseKey(const QString& key, const QString& problem) const;
    // Throws InputError "file: tensor T problem" ("... tensor output.weight is missing").
    [[noreturn]] void refuseTensor(const QString& name, const QString& problem) const;

private:
    class Reader;
    void readHeader(Reader& reader);
    void readTensorInfos(Reader& reader, std::uint64_t count);
    void checkTensorData();
    // The tensor called name, refused when it is missing or its dimensions are not `dimensions`.
    const GgufTensor& tensorOfDimensions(const QString& name,
                                         const std::vector<std::int64_t>& dimensions) const;
    // The value of key, refused when it is missing or not of the types `accepted` allows.
    const GgufValue& typedValue(const QString& key, bool (*accepted)(GgufValueType),
                                const QString& expected) const;
    // The array value of key, refused when it is missing, not an array, or an array of elements
    // that `accepted` refuses ("an array of <elements>" expected).
    const GgufValue& arrayOf(const QString& key, bool (*accepted)(GgufValueType),
                             const QString& elements) const;
    // The scalar of type `type` at offset, as double (integers exactly up to 2^53).
    double scalarAt(GgufValueType type, std::uint64_t offset) const;

    QString m_path;
    MappedFile m_mapped;  // the whole file
    std::uint32_t m_version = 0;
    std::uint64_t m_alignment = 32;
    std::uint64_t m_dataStart = 0;  // the first byte of the tensor data
    QStringList m_keys;
    QHash<QString, GgufValue> m_values;
    std::vector<GgufTensor> m_tensors;
    QHash<QString, qsizetype> m_tensorIndex;
};

}  // namespace attnlab

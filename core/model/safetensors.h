#pragma once

#include "io/mapped_file.h"
#include "types.h"

#include <QByteArrayView>
#include <QJsonObject>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnlab {

// The element types of a safetensors file that Attention Lab reads. Other dtypes in a header are
// refused by name ("unsupported dtype I64") when the tensor is used, not when the file is opened,
// so a checkpoint with extra integer buffers still loads.
enum class TensorDtype { F32, F16, BF16, F64, Other };

// One entry of a safetensors header: "name": {"dtype": ..., "shape": [...], "data_offsets": [b,
// e]}. Offsets count from the first byte after the header.
struct TensorEntry {
    QString name;
    TensorDtype dtype = TensorDtype::Other;
    QString dtypeName;                // as written in the header ("F32", "I64", ...)
    std::vector<std::int64_t> shape;  // rank 0 .. 8
    std::uint64_t begin = 0;
    std::uint64_t end = 0;

    std::int64_t elementCount() const;
};

// The largest header Attention Lab parses (the format itself allows 100 MB).
inline constexpr std::uint64_t kSafetensorsMaxHeader = 100ull * 1024 * 1024;

// Parses a safetensors header (the JSON after the 8-byte length) for a data section of dataSize
// bytes. Checks, naming `fileName` and the tensor: valid JSON object; every entry (but
// "__metadata__", a string-to-string map) an object with a string dtype, a shape of
// non-negative integers (rank <= 8) and two integer data_offsets; begin <= end <= dataSize;
// end - begin = elementCount * element size for the known dtypes (no overflow); entries that do
// not overlap one another. Throws InputError otherwise. The entries come back sorted by begin.
std::vector<TensorEntry> parseSafetensorsHeader(QByteArrayView header, std::uint64_t dataSize,
                                                const QString& fileName);

// A .safetensors file, memory-mapped: the header is parsed and validated on open (above, plus
// the 8-byte length against the file size and kSafetensorsMaxHeader); tensors are converted to
// float on request, from F32, F16 or BF16 (and F64) little-endian data.
class SafetensorsFile {
public:
    // Throws InputError naming the path when the file is missing, unreadable, shorter than 8
    // bytes, or its header is invalid as above.
    explicit SafetensorsFile(const QString& path);
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const QString& path() const { return m_path; }
    const std::vector<TensorEntry>& entries() const { return m_entries; }
    // The header's "__metadata__" (strings by key; empty when the header has none).
    const QJsonObject& metadata() const { return m_metadata; }
    // The entry called name, or nullptr.
    const TensorEntry* find(const QString& name) const;

    // The tensor's values as float, in the file's (C) order. Throws InputError naming the file
    // and the tensor for an unsupported dtype, or a non-finite value.
    std::vector<float> values(const TensorEntry& entry) const;

    // The values of the tensor called name, whose shape must be `shape` exactly, as float in C
    // order. Throws InputError naming the file and the tensor when it is missing or has another
    // shape ("h.0.attn.c_attn.weight has shape [2304, 768], expected [768, 2304]"), and as
    // values() does.
    std::vector<float> tensor(const QString& name, const std::vector<std::int64_t>& shape) const;
    // The tensor as a rows x cols float matrix (row-major, as stored), with the checks of
    // tensor().
    Matrix<float> matrix(const QString& name, Eigen::Index rows, Eigen::Index cols) const;
    // A vector of `size` floats (a 1-D tensor), with the same checks.
    Vector<float> vector(const QString& name, Eigen::Index size) const;

private:
    QString m_path;
    MappedFile m_mapped;
    const uchar* m_data = nullptr;  // the first byte after the header
    std::uint64_t m_dataSize = 0;
    std::vector<TensorEntry> m_entries;
    QJsonObject m_metadata;
};

QString tensorDtypeName(TensorDtype dtype);
// The bytes of one element: 4 (F32), 2 (F16, BF16), 8 (F64); 0 for Other.
std::uint64_t tensorDtypeBytes(TensorDtype dtype);

}  // namespace attnlab

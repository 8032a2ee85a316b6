#pragma once

#include "memory_budget.h"

#include <QString>
#include <QtGlobal>

#include <vector>

class QIODevice;

namespace attnlab {

// The element types Attention Lab reads and writes: little-endian '<f4' and '<f8'.
enum class NpyDtype { Float32, Float64 };

// An array as stored in a .npy file, with its values converted to double in C order.
struct NpyArray {
    std::vector<qint64> shape;           // rank 1, 2 or 3 as stored
    NpyDtype dtype = NpyDtype::Float64;  // the file's dtype
    std::vector<double> values;          // C order (row-major); float -> double is exact

    // The product of the dimensions of `shape`.
    qint64 elementCount() const;
};

struct NpyReadOptions {
    bool requireFinite = true;             // refuse NaN and +/-Inf values
    MemoryBudget budget = MemoryBudget();  // the decoded values (8 bytes each) must fit in it
};

// Reads a .npy file: format versions 1.0, 2.0 and 3.0; descr '<f4' or '<f8' (nothing else, not
// even the same type with a '>', '|' or '=' byte-order mark); fortran_order True (the data is
// transposed into C order while it is read) or False; shape of rank 1, 2 or 3.
// Throws InputError, its message starting with `path`, when the file is missing or unreadable,
// has a bad magic string or an unsupported version, a header longer than 1 MiB, nested more than
// 32 deep, or that is not a dict with exactly the
// keys 'descr', 'fortran_order' and 'shape', an unsupported or big-endian dtype, rank 0 or > 3, a
// zero-sized dimension, a byte size that overflows, data shorter or longer than the shape says,
// or (with options.requireFinite) a NaN or infinite value, naming the index of the first one.
// The data size is checked against the real file size before anything is allocated, then the
// decoded size (elementCount * 8 bytes) against options.budget (ResourceError).
NpyArray readNpy(const QString& path, const NpyReadOptions& options = {});

// Serialises an array whose values are given in C order as .npy: version 1.0 (2.0 when the header
// would exceed 65535 bytes), the header dict padded with spaces and ending in '\n' so that the data
// starts at a multiple of 64 bytes, descr '<f4' (values rounded to float, chunk by chunk) or '<f8',
// and the data in Fortran order when fortranOrder is set. Throws OutputError naming the file (for a
// file device) when a write fails.
void writeNpy(QIODevice& device, const double* values, const std::vector<qint64>& shape,
              NpyDtype dtype, bool fortranOrder = false);

// Writes `path` atomically (QSaveFile) with writeNpy, creating its directory as needed. Throws
// OutputError naming the path on failure, leaving no file behind.
void saveNpy(const QString& path, const double* values, const std::vector<qint64>& shape,
             NpyDtype dtype, bool fortranOrder = false);

}  // namespace attnlab

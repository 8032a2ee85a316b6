// libFuzzer target: parseSafetensorsHeader on arbitrary bytes. The first 8 bytes (little-endian)
// are the size of the data section, the rest the header. Any input is either parsed into entries
// that each lie inside the data (begin <= end <= dataSize), hold exactly their shape's bytes for
// the known float dtypes, and overlap no other entry, sorted by begin; or refused with InputError
// naming the file. Anything else (a crash, a leak, undefined behaviour, another exception) is a
// finding.

#include "errors.h"
#include "fuzz_input.h"
#include "model/safetensors.h"

#include <QByteArrayView>
#include <QString>
#include <QtEndian>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnlab;
    if (size < 8)
        return 0;
    const std::uint64_t dataSize = qFromLittleEndian<quint64>(data);
    const QByteArrayView header(reinterpret_cast<const char*>(data + 8), qsizetype(size - 8));
    const QString fileName = QStringLiteral("fuzz.safetensors");
    std::vector<TensorEntry> entries;
    if (!fuzz::readOrRefused(fileName,
                             [&] { entries = parseSafetensorsHeader(header, dataSize, fileName); }))
        return 0;
    std::uint64_t reached = 0;  // the furthest end of a nonempty entry so far
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const TensorEntry& entry = entries[i];
        if (entry.begin > entry.end || entry.end > dataSize || entry.shape.size() > 8)
            std::abort();
        if (i > 0 && entries[i - 1].begin > entry.begin)
            std::abort();  // not sorted by begin
        if (entry.begin < entry.end) {
            if (entry.begin < reached)
                std::abort();  // overlaps an earlier entry
            reached = entry.end;
        }
        const std::uint64_t elementSize = tensorDtypeBytes(entry.dtype);
        if (elementSize > 0 &&
            (entry.elementCount() < 0 ||
             std::uint64_t(entry.elementCount()) * elementSize != entry.end - entry.begin))
            std::abort();
    }
    return 0;
}

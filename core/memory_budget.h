#pragma once

#include "remedy.h"

#include <QString>
#include <QtGlobal>

#include <cstddef>

namespace attnlab {

// The most memory one computation may allocate for its large arrays (L x L matrices, features,
// loaded tensors). Every allocation of size O(L^2) or O(L m) is checked against it before it
// happens.
class MemoryBudget {
public:
    // Half of the machine's physical memory (1 GiB where it cannot be read).
    static qint64 defaultBytes();

    MemoryBudget() : m_bytes(defaultBytes()) {}
    explicit MemoryBudget(qint64 bytes) : m_bytes(bytes) {}

    qint64 bytes() const { return m_bytes; }

    // Throws ResourceError "<what> needs <bytes>, over the memory budget of <budget>. <advice>"
    // when bytes exceeds the budget (a RemedyResourceError: the settings that advice names before
    // the budget, then RaiseMemoryBudget).
    void require(double bytes, const QString& what, const QString& advice,
                 Remedies settings = {}) const;

private:
    qint64 m_bytes;
};

// Has the C library keep freed blocks of up to 32 MiB (256 MiB of them in all) for the next
// computation rather than hand them back to the kernel: the engine frees and allocates the same
// working buffers run after run, and faulting them in again took up to a third of a run (causal
// Scatterbrain at L = 16384). Larger blocks (L x L matrices, long inputs) still go back when
// freed. Call once, at the start of the program; nothing to do outside glibc.
void reuseFreedWorkingMemory();

// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes) with transparent huge
// pages (Linux, with THP in "madvise" or "always" mode). The C library maps blocks over 32 MiB
// afresh at each allocation (the L x L matrices: 64 MiB of float at L = 4096), and writing one
// faults it in a page at a time: 16384 faults of 4 KiB, against 32 of 2 MiB with this advice
// (page faults were a quarter of a new seed's time at L = 4096, README "Interactivity"). Call
// before the first write; does nothing for blocks under 2 MiB or outside Linux.
void adviseHugePages(void* data, std::size_t bytes);

// "1.5 GiB", "320 MiB", "12 KiB", "100 bytes".
QString formatBytes(double bytes);

// Parses "512M", "4G", "4GiB", "1000000" (bytes). Returns -1 when the text is not a size.
qint64 parseByteSize(const QString& text);

}  // namespace attnlab

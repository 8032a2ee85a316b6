#include "memory_budget.h"

#include "errors.h"

#include <QRegularExpression>

#include <cstdint>
#include <utility>

#include <unistd.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnlab {

qint64 MemoryBudget::defaultBytes()
{
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0)
        return qint64(1) << 30;
    return qint64(pages) * pageSize / 2;
}

void MemoryBudget::require(double bytes, const QString& what, const QString& advice,
                           Remedies settings) const
{
    if (bytes <= double(m_bytes))
        return;
    settings.append(Remedy::RaiseMemoryBudget);
    throw RemedyResourceError(
        QStringLiteral("%1 needs %2, over the memory budget of %3. %4")
            .arg(what, formatBytes(bytes), formatBytes(double(m_bytes)), advice),
        std::move(settings));
}

void reuseFreedWorkingMemory()
{
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif
}

void adviseHugePages(void* data, std::size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t hugePage = std::uintptr_t(2) << 20;
    const std::uintptr_t begin = (std::uintptr_t(data) + hugePage - 1) & ~(hugePage - 1);
    const std::uintptr_t end = (std::uintptr_t(data) + bytes) & ~(hugePage - 1);
    if (end > begin)
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

QString formatBytes(double bytes)
{
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024)
        return QStringLiteral("%1 bytes").arg(qint64(bytes));
    int unit = -1;
    while (bytes >= 1024 && unit < 4) {
        bytes /= 1024;
        ++unit;
    }
    return QStringLiteral("%1 %2").arg(bytes, 0, 'f', bytes < 10 ? 2 : 1).arg(units[unit]);
}

qint64 parseByteSize(const QString& text)
{
    static const QRegularExpression pattern(
        QStringLiteral("^\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([kKmMgGtT]?)(?:i?[bB])?\\s*$"));
    const QRegularExpressionMatch match = pattern.match(text);
    if (!match.hasMatch())
        return -1;
    double value = match.captured(1).toDouble();
    const QString unit = match.captured(2).toUpper();
    switch (unit.isEmpty() ? 0 : unit.front().unicode()) {
        case 'T': value *= 1024.0; [[fallthrough]];
        case 'G': value *= 1024.0; [[fallthrough]];
        case 'M': value *= 1024.0; [[fallthrough]];
        case 'K': value *= 1024.0; break;
        default: break;
    }
    if (value > 9.0e18)
        return -1;
    return qint64(value);
}

}  // namespace attnlab

#include "allocation_peak.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

#if defined(__linux__)
#include <malloc.h>
#endif

namespace attnlab {

namespace {

// Whether a measurement runs: outside one, the wrappers only forward the call.
std::atomic<bool> g_counting{false};
// Bytes allocated minus bytes freed since the measurement started, and their largest value.
std::atomic<std::int64_t> g_held{0};
std::atomic<std::int64_t> g_peak{0};

[[maybe_unused]] void countHeld(std::int64_t bytes)
{
    const std::int64_t held = g_held.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (held > peak && !g_peak.compare_exchange_weak(peak, held, std::memory_order_relaxed)) {
    }
}

}  // namespace

#if defined(__linux__)

bool allocationsCounted()
{
    return true;
}

// The wrappers the linker's --wrap=malloc,... puts in place of the C library's functions for our
// objects; __real_* are the C library's.
extern "C" {
void* __real_malloc(std::size_t size);
void* __real_calloc(std::size_t count, std::size_t size);
void* __real_realloc(void* block, std::size_t size);
void __real_free(void* block);

void* __wrap_malloc(std::size_t size)
{
    void* block = __real_malloc(size);
    if (block && g_counting.load(std::memory_order_relaxed))
        countHeld(std::int64_t(malloc_usable_size(block)));
    return block;
}

void* __wrap_calloc(std::size_t count, std::size_t size)
{
    void* block = __real_calloc(count, size);
    if (block && g_counting.load(std::memory_order_relaxed))
        countHeld(std::int64_t(malloc_usable_size(block)));
    return block;
}

void* __wrap_realloc(void* block, std::size_t size)
{
    if (!g_counting.load(std::memory_order_relaxed))
        return __real_realloc(block, size);
    const std::int64_t before = block ? std::int64_t(malloc_usable_size(block)) : 0;
    void* moved = __real_realloc(block, size);
    // A failed realloc keeps the block; realloc(block, 0) may free it and return null.
    if (moved)
        countHeld(std::int64_t(malloc_usable_size(moved)) - before);
    else if (size == 0)
        countHeld(-before);
    return moved;
}

void __wrap_free(void* block)
{
    if (block && g_counting.load(std::memory_order_relaxed))
        countHeld(-std::int64_t(malloc_usable_size(block)));
    __real_free(block);
}
}  // extern "C"

#else

bool allocationsCounted()
{
    return false;
}

#endif

AllocationPeak::AllocationPeak()
{
    g_held.store(0, std::memory_order_relaxed);
    g_peak.store(0, std::memory_order_relaxed);
    g_counting.store(true, std::memory_order_seq_cst);
}

AllocationPeak::~AllocationPeak()
{
    g_counting.store(false, std::memory_order_seq_cst);
}

double AllocationPeak::bytes() const
{
    if (!allocationsCounted())
        return std::numeric_limits<double>::quiet_NaN();
    return double(g_peak.load(std::memory_order_relaxed));
}

}  // namespace attnlab

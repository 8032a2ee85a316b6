#pragma once

namespace attnlab {

// The heap memory the program's own code holds, counted block by block as it is allocated and
// freed: the link sends the malloc, calloc, realloc and free calls of our objects (the engine, the
// Eigen matrices in it) through counting wrappers (core/CMakeLists.txt), while a measurement runs.
// A block counts with its usable size (malloc_usable_size) from its allocation to its free. Blocks
// the C library keeps after they are freed (reuseFreedWorkingMemory) do not count, nor what other
// libraries (Qt, the C++ runtime's operator new) allocate.

// Whether this build counts allocations (Linux); where not, AllocationPeak::bytes() is NaN.
bool allocationsCounted();

// Measures the largest amount of memory held at any moment from its construction to bytes(),
// above what was held at its construction: peak_t (held_t - held_0). Allocations on every thread
// count. One measurement at a time: constructing one restarts the count of any other.
class AllocationPeak {
public:
    AllocationPeak();
    ~AllocationPeak();
    AllocationPeak(const AllocationPeak&) = delete;
    AllocationPeak& operator=(const AllocationPeak&) = delete;

    // The peak so far, in bytes (at least 0); NaN when allocations are not counted.
    double bytes() const;
};

}  // namespace attnlab

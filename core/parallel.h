#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <atomic>

namespace attnlab {

// Sets how many threads the engine uses on the calling thread from now on: the OpenMP loops of
// the engine and Eigen's matrix products. 0 means one per hardware thread. OpenMP keeps this per
// calling thread, so a GUI worker and the command line each set their own.
void setEngineThreads(int threads);

// The number of threads engine loops started on the calling thread will use.
int engineThreads();

// The number of hardware threads of the machine.
int hardwareThreads();

// The index of the calling thread inside an engine loop, in [0, engineThreads()).
int engineThreadIndex();

namespace detail {

// How one forEachRowBlock loop stops when the calling thread's CancellationScope says so. Only a
// loop started outside every parallel region polls (a loop inside another's body must not throw),
// and only from the team's thread 0, the calling thread, whose scope it is: a cancel check need
// not be safe to call from several threads at once.
class RowBlockStop {
public:
    RowBlockStop();

    // At the start of a block, on any thread of the loop: whether to skip the block, because
    // the scope was found cancelled at this block or an earlier one.
    bool skip();

    // Throws Cancelled when a block was skipped.
    void throwIfStopped() const;

private:
    bool m_polls;
    std::atomic<bool> m_stopped = false;
};

}  // namespace detail

// Calls body(begin, end) once for each block [begin, end) of at most blockRows consecutive rows
// of [0, n), spread over the engine threads. Eigen products inside body run single-threaded (Eigen
// does not nest parallelism). body must not throw.
//
// Under a CancellationScope the loop is where long work stops: when the scope says so at the
// start of a block, the blocks not yet begun are skipped, and the loop throws Cancelled once
// those running have ended (after about one block's time). A loop inside another's body runs
// whole.
template <typename Body>
void forEachRowBlock(Eigen::Index n, Eigen::Index blockRows, Body&& body)
{
    const Eigen::Index blocks = (n + blockRows - 1) / blockRows;
    detail::RowBlockStop stop;
#pragma omp parallel for schedule(dynamic)
    for (Eigen::Index b = 0; b < blocks; ++b)
        if (!stop.skip())
            body(b * blockRows, std::min(n, (b + 1) * blockRows));
    stop.throwIfStopped();
}

}  // namespace attnlab

#pragma once

#include <Eigen/Core>

#include <algorithm>

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

// Calls body(begin, end) once for each block [begin, end) of at most blockRows consecutive rows
// of [0, n), spread over the engine threads. Eigen products inside body run single-threaded (Eigen
// does not nest parallelism). body must not throw.
template <typename Body>
void forEachRowBlock(Eigen::Index n, Eigen::Index blockRows, Body&& body)
{
    const Eigen::Index blocks = (n + blockRows - 1) / blockRows;
#pragma omp parallel for schedule(dynamic)
    for (Eigen::Index b = 0; b < blocks; ++b)
        body(b * blockRows, std::min(n, (b + 1) * blockRows));
}

}  // namespace attnlab

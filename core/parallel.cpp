#include "parallel.h"

#include "cancellation.h"
#include "errors.h"

#include <thread>

#ifdef ATTNLAB_HAVE_OPENMP
#include <omp.h>
#endif

namespace attnlab {

void setEngineThreads(int threads)
{
#ifdef ATTNLAB_HAVE_OPENMP
    omp_set_num_threads(threads > 0 ? threads : hardwareThreads());
#else
    (void)threads;
#endif
}

int engineThreads()
{
#ifdef ATTNLAB_HAVE_OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int hardwareThreads()
{
    return std::max(1u, std::thread::hardware_concurrency());
}

int engineThreadIndex()
{
#ifdef ATTNLAB_HAVE_OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

namespace detail {

RowBlockStop::RowBlockStop()
#ifdef ATTNLAB_HAVE_OPENMP
    : m_polls(omp_get_level() == 0)
#else
    : m_polls(true)
#endif
{
}

bool RowBlockStop::skip()
{
    if (m_stopped.load(std::memory_order_relaxed))
        return true;
    if (m_polls && engineThreadIndex() == 0 && cancellationRequested()) {
        m_stopped.store(true, std::memory_order_relaxed);
        return true;
    }
    return false;
}

void RowBlockStop::throwIfStopped() const
{
    if (m_stopped.load(std::memory_order_relaxed))
        throw Cancelled();
}

}  // namespace detail

}  // namespace attnlab

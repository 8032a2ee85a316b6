#include "parallel.h"

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

}  // namespace attnlab

#include "cancellation.h"

#include "errors.h"

#include <utility>

namespace attnlab {

namespace {

// The cancel function of the innermost scope installed on this thread, or null.
thread_local const std::function<bool()>* innermost = nullptr;

}  // namespace

CancellationScope::CancellationScope(std::function<bool()> cancelled)
    : m_cancelled(std::move(cancelled)), m_outer(innermost)
{
    if (m_cancelled)
        innermost = &m_cancelled;
}

CancellationScope::~CancellationScope()
{
    if (innermost == &m_cancelled)
        innermost = m_outer;
}

bool cancellationRequested()
{
    return innermost && (*innermost)();
}

void throwIfCancelled()
{
    if (cancellationRequested())
        throw Cancelled();
}

}  // namespace attnlab

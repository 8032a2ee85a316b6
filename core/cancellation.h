#pragma once

#include <functional>

namespace attnlab {

// Cancellation of long work deep inside the engine without a parameter through every layer:
// compute() installs ComputeOptions::cancelled for the calling thread with a CancellationScope,
// and loops that can run for seconds on that thread (drawing W for a huge m: one QR
// decomposition per block of d rows) call throwIfCancelled() between pieces of work, and the
// engine's parallel loops (forEachRowBlock) poll it between their blocks of rows.
class CancellationScope {
public:
    // Installs `cancelled` (an empty function installs nothing) for the calling thread until the
    // scope ends; scopes nest, the innermost wins.
    explicit CancellationScope(std::function<bool()> cancelled);
    ~CancellationScope();
    CancellationScope(const CancellationScope&) = delete;
    CancellationScope& operator=(const CancellationScope&) = delete;

private:
    std::function<bool()> m_cancelled;
    const std::function<bool()>* m_outer;  // the scope this one hides, or null
};

// True when the innermost CancellationScope of the calling thread says so; false without one.
bool cancellationRequested();

// Throws Cancelled when the innermost CancellationScope of the calling thread says so; does
// nothing without one.
void throwIfCancelled();

}  // namespace attnlab

#pragma once

#include <QString>

#include <functional>

namespace attnlab::ui {

// How work run on a worker thread ended, for the page that started it to show.
struct WorkerOutcome {
    bool cancelled = false;  // the work threw Cancelled
    QString error;           // empty when it finished or was cancelled
};

// Runs work (on the calling thread) and catches what it throws: Cancelled; InputError and
// ResourceError with their messages; std::bad_alloc, saying to lower the memory budget; any other
// exception with its what().
WorkerOutcome runOnWorker(const std::function<void()>& work);

}  // namespace attnlab::ui

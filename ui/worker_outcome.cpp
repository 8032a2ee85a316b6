#include "worker_outcome.h"

#include "errors.h"

#include <QCoreApplication>

#include <new>

namespace attnlab::ui {

WorkerOutcome runOnWorker(const std::function<void()>& work)
{
    WorkerOutcome outcome;
    try {
        work();
    } catch (const Cancelled&) {
        outcome.cancelled = true;
    } catch (const InputError& e) {
        outcome.error = e.message();
    } catch (const ResourceError& e) {
        outcome.error = e.message();
    } catch (const std::bad_alloc&) {
        outcome.error = QCoreApplication::translate(
            "attnlab::ui", "out of memory: lower the memory budget, so that requests this large "
                           "are refused before they are allocated");
    } catch (const std::exception& e) {
        outcome.error = QString::fromLocal8Bit(e.what());
    }
    return outcome;
}

}  // namespace attnlab::ui

#include "ui/common/background_job.h"

#include "errors.h"
#include "ui/common/window_hints.h"

#include <QCoreApplication>
#include <QtConcurrent/QtConcurrentRun>

#include <new>

namespace attnlab::ui {

JobContext::JobContext(BackgroundJob* job, std::shared_ptr<Run> run, QPromise<void>& promise)
    : m_job(job), m_run(std::move(run)), m_promise(promise)
{
}

bool JobContext::isCancelled() const
{
    return m_run->cancel.load();
}

std::function<bool()> JobContext::cancelledCheck() const
{
    return [run = m_run] { return run->cancel.load(); };
}

void JobContext::setProgress(int done, int total)
{
    if (total != m_total) {  // a new range also sets the value back to 0
        m_total = total;
        m_promise.setProgressRange(0, total);
    }
    m_promise.setProgressValue(done);
}

void JobContext::post(std::function<void()> call)
{
    BackgroundJob* job = m_job;
    // Queued to the job, which lives on the GUI thread; Qt drops the call if the job is gone.
    QMetaObject::invokeMethod(
        job,
        [job, run = m_run, call = std::move(call)] {
            if (job->m_running == run && !run->discarded)
                call();
        },
        Qt::QueuedConnection);
}

BackgroundJob::BackgroundJob(QObject* parent) : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &BackgroundJob::finished);
    // Progress is reported by the value events alone (setProgress sets a value after every new
    // range), each with the total read from the future: a watcher set on a future that already
    // reported its range may deliver a value before the range, and an event for the range
    // carries no value of its own (the future's current one would jump ahead of the values
    // still queued). Before the work sets a range (the watcher reports value 0 of 0 as it starts
    // watching) there is no progress to show.
    connect(&m_watcher, &QFutureWatcher<void>::progressValueChanged, this, [this](int value) {
        const int total = m_watcher.progressMaximum();
        if (m_running && !m_running->discarded && total > 0)
            emit progressChanged(value, total);
    });
}

BackgroundJob::~BackgroundJob()
{
    discard();
    m_watcher.waitForFinished();
}

void BackgroundJob::cancel()
{
    if (m_running)
        m_running->cancel = true;
}

void BackgroundJob::discard()
{
    m_waiting.reset();
    if (m_running) {
        m_running->cancel = true;
        m_running->discarded = true;
    }
}

void BackgroundJob::finishNow()
{
    if (!m_running)
        return;
    m_watcher.waitForFinished();
    finished();
}

void BackgroundJob::enqueue(std::shared_ptr<Run> run)
{
    if (m_running) {
        m_running->cancel = true;  // superseded: finished() starts the newest request
        m_running->discarded = true;
        m_waiting = std::move(run);
        return;
    }
    launch(std::move(run));
}

void BackgroundJob::launch(std::shared_ptr<Run> run)
{
    m_running = run;
    m_watcher.setFuture(QtConcurrent::run(&m_pool, [this, run](QPromise<void>& promise) {
        JobContext context(this, run, promise);
        try {
            run->work(context);
        } catch (const Cancelled&) {
            run->threwCancelled = true;
        } catch (...) {
            run->error = workerErrorMessage();
        }
    }));
    setRunning(true);
}

void BackgroundJob::finished()
{
    if (!m_running || !m_watcher.isFinished())
        return;  // delivered already (finishNow)
    const std::shared_ptr<Run> run = std::exchange(m_running, nullptr);
    if (!run->discarded) {
        if (!run->error.isEmpty())
            emit failed(run->error);
        else if (run->threwCancelled)
            emit cancelled();
        else
            run->deliver();
    }
    if (m_running)  // the page started new work as it took the outcome
        return;
    if (m_waiting)
        launch(std::exchange(m_waiting, nullptr));
    else
        setRunning(false);
}

void BackgroundJob::setRunning(bool running)
{
    if (running == m_runningReported)
        return;
    m_runningReported = running;
    emit runningChanged(running);
}

QString workerErrorMessage()
{
    try {
        throw;
    } catch (const InputError& e) {
        return windowMessage(e.message(), remediesOf(e));
    } catch (const ResourceError& e) {
        return windowMessage(e.message(), remediesOf(e));
    } catch (const std::bad_alloc&) {
        return windowMessage(
            QCoreApplication::translate("attnlab::ui",
                                        "out of memory: lower the memory budget, so that requests "
                                        "this large are refused before they are allocated."),
            {Remedy::RaiseMemoryBudget});
    } catch (const std::exception& e) {
        return QString::fromLocal8Bit(e.what());
    } catch (...) {
        return QCoreApplication::translate("attnlab::ui", "an unknown error");
    }
}

}  // namespace attnlab::ui

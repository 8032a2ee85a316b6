#pragma once

// One way to run a page's work off the GUI thread: BackgroundJob. Every page that computes in
// the background uses it (the experiment, the sweeps, the Heads and Inside the model pages, the
// Stepper); a new page should too. A job runs one piece of work at a time on a worker thread of
// its own (the engine's threads do the parallel work), and:
//
// - start(work, done): runs work(context) on the worker and hands what it returns to done on
//   the GUI thread. The newest request wins: a start() while work runs cancels that work, drops
//   whatever it still returns, and runs the new work once the old has stopped (only the newest
//   of several waiting requests runs).
// - progress: context.setProgress(done, total) on the worker arrives as progressChanged.
// - partial results: context.post(call) runs call on the GUI thread, unless the work has been
//   superseded, discarded or delivered by then (stale results are dropped).
// - cancel(): asks the work to stop (context.isCancelled(), context.cancelledCheck() for the
//   engine's options); what it returns after that is still delivered (a sweep keeps the rows it
//   finished), and a Cancelled it throws ends it quietly (cancelled()).
// - discard(): cancels the work and drops everything it would still deliver.
// - errors: what the work throws becomes failed(message) (workerErrorMessage).
//
// Usage (a page that counts the words of a text, newest text wins):
//
//     // in the page's class: BackgroundJob m_count;
//     connect(&m_count, &BackgroundJob::progressChanged, m_progress, [this](int done, int total) {
//         m_progress->setRange(0, total);
//         m_progress->setValue(done);
//     });
//     connect(&m_count, &BackgroundJob::failed, m_status, &QLabel::setText);
//
//     void WordsPage::setText(const QString& text)
//     {
//         m_count.start(
//             [text](JobContext& context) {  // on the worker: no widgets, copies only
//                 const QStringList lines = text.split(QLatin1Char('\n'));
//                 int words = 0;
//                 for (int i = 0; i < lines.size(); ++i) {
//                     if (context.isCancelled())
//                         throw Cancelled();
//                     words += int(lines[i].split(QLatin1Char(' '), Qt::SkipEmptyParts).size());
//                     context.setProgress(i + 1, int(lines.size()));
//                 }
//                 return words;
//             },
//             [this](int words) { m_status->setText(tr("%1 words").arg(words)); });  // GUI thread
//     }
//
// The work runs while the page lives: the job's destructor discards it and waits for it, so
// work may capture `this` to post calls, but must not touch a widget itself.

#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace attnlab::ui {

class BackgroundJob;

// What one run of a job's work sees on the worker thread.
class JobContext {
public:
    // True once the work was cancelled, discarded or superseded: it should stop soon (throw
    // Cancelled, or return what it has).
    bool isCancelled() const;
    // isCancelled as a function, for the engine's options (ComputeOptions::cancelled).
    std::function<bool()> cancelledCheck() const;
    // Reports progress: progressChanged(done, total) on the GUI thread (Qt sends at most about 25
    // a second, always the last).
    void setProgress(int done, int total);
    // Runs call on the GUI thread, in the order posted, unless by then this run has been
    // superseded, discarded or delivered.
    void post(std::function<void()> call);

private:
    friend class BackgroundJob;
    struct Run;
    JobContext(BackgroundJob* job, std::shared_ptr<Run> run, QPromise<void>& promise);

    BackgroundJob* m_job;
    std::shared_ptr<Run> m_run;
    QPromise<void>& m_promise;
    int m_total = -1;  // the progress range's maximum as last set
};

struct JobContext::Run {
    std::atomic<bool> cancel{false};
    bool discarded = false;  // GUI thread only: nothing of this run is delivered
    // Runs the work on the worker and keeps what it returns, for deliver().
    std::function<void(JobContext&)> work;
    // Hands what the work returned to the page (GUI thread).
    std::function<void()> deliver;
    // Written by the worker before it finishes.
    QString error;
    bool threwCancelled = false;
};

// Runs a page's work on a worker thread: see the top of this file.
class BackgroundJob : public QObject {
    Q_OBJECT

public:
    explicit BackgroundJob(QObject* parent = nullptr);
    // Discards the work and waits for it to stop.
    ~BackgroundJob() override;

    // Runs work(JobContext&) on the worker, after the work running now (which is discarded) has
    // stopped; then, on the GUI thread, done(result) with what work returned (done() for work
    // returning void). work and done are copied; work must not touch a widget.
    template <typename Work, typename Done>
    void start(Work work, Done done);

    // Asks the work to stop; what it returns is still delivered, and a Cancelled it throws
    // ends it with cancelled().
    void cancel();
    // Cancels the work and the request waiting behind it; nothing of them is delivered.
    void discard();
    // Waits for the running work and delivers its outcome now (done, failed or cancelled), then
    // starts the request waiting behind it, if any.
    void finishNow();

    // Work runs or waits to run.
    bool isRunning() const { return m_running != nullptr; }

signals:
    // isRunning() changed; sent after the outcome of the last run is delivered.
    void runningChanged(bool running);
    void progressChanged(int done, int total);
    // The work threw: InputError and ResourceError with their messages, std::bad_alloc as a
    // request to lower the memory budget, any other exception with its what().
    void failed(const QString& message);
    // The work threw Cancelled after cancel().
    void cancelled();

private:
    friend class JobContext;
    using Run = JobContext::Run;

    void enqueue(std::shared_ptr<Run> run);
    void launch(std::shared_ptr<Run> run);
    // The watched run has finished: delivers its outcome and starts what waits.
    void finished();
    void setRunning(bool running);

    QThreadPool m_pool;
    QFutureWatcher<void> m_watcher;
    std::shared_ptr<Run> m_running;  // the run the watcher watches (null: none)
    std::shared_ptr<Run> m_waiting;  // the newest request, started when m_running stops
    bool m_runningReported = false;  // isRunning() as runningChanged last said
};

// The message a page shows for an exception its work threw (rethrown here, inside a catch
// block): InputError's and ResourceError's messages, std::bad_alloc as "out of memory: lower the
// memory budget...", any other exception's what(). For use inside `catch (...)`.
QString workerErrorMessage();

template <typename Work, typename Done>
void BackgroundJob::start(Work work, Done done)
{
    using Result = std::invoke_result_t<Work&, JobContext&>;
    auto run = std::make_shared<Run>();
    if constexpr (std::is_void_v<Result>) {
        run->work = std::move(work);
        run->deliver = std::move(done);
    } else {
        auto result = std::make_shared<std::optional<Result>>();
        run->work = [work = std::move(work), result](JobContext& context) mutable {
            result->emplace(work(context));
        };
        run->deliver = [done = std::move(done), result]() mutable { done(std::move(**result)); };
    }
    enqueue(std::move(run));
}

}  // namespace attnlab::ui

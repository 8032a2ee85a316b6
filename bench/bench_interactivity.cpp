// Interactivity benchmark: the time from a parameter change in the window to the three heatmaps
// repainted with the new result, at L = 128, 512 and 4096 (random input, d = 64, FAVOR+ with
// m = 64, float), median, min and max over the repetitions, for two changes: a new seed redraws
// W (the input and exact attention are kept, the approximation, the metrics and the pictures are
// computed again, as when a user drags m or picks another feature map), and a new norm multiplier
// changes the input (everything is computed again, exact attention included). Then the built-in
// model: a sentence change (a new last word each time, so the model runs again, and every view
// after it) to repainted heatmaps. Runs offscreen; the window is 1600 x 1000. Beside each change
// the median time of the engine's own computation (compute(): the approximate output, and the
// row pass of P, P^, their metrics and pictures, which skips exact attention when it is kept),
// and the median processor time of the window's thread for the change: from the change to
// 50 ms after the heatmaps repainted, so that it counts the work the change caused after the
// repaint too (a map drawn a second time), and not the wait for the engine. First the machine's
// sgemm rate and copy bandwidth, measured in the same run, so that machines can be compared;
// last the window's peak resident memory over every change (not the copy's 512 MiB before).
//
//     ./build/bench/bench_interactivity [repetitions]

#include "repaint_watch.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/window/main_window.h"
#include "memory_budget.h"
#include "inputs/model_input.h"
#include "parallel.h"
#include "sweeps/timing_sweep.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTextStream>
#include <QTimer>

#include <algorithm>
#include <cmath>

#include <time.h>

using namespace attnlab;
using namespace attnlab::ui;

namespace {

// The processor time of the calling thread so far, in milliseconds.
double threadCpuMilliseconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) * 1e-6;
}

// Starts the process's peak resident memory afresh (Linux: /proc/self/clear_refs), so that the
// peak read at the end is the window's: the copy bandwidth's measure alone maps 512 MiB.
bool resetPeakResidentMemory()
{
    QFile file(QStringLiteral("/proc/self/clear_refs"));
    return file.open(QIODevice::WriteOnly) && file.write("5") == 1 && file.flush();
}

// The process's peak resident memory since the last reset, in MiB (VmHWM in /proc/self/status),
// or NaN where the system does not say.
double peakResidentMebibytes()
{
    QFile file(QStringLiteral("/proc/self/status"));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return std::nan("");
    const QString status = QString::fromLatin1(file.readAll());
    const QRegularExpressionMatch match =
        QRegularExpression(QStringLiteral("VmHWM:\\s*(\\d+) kB")).match(status);
    return match.hasMatch() ? match.captured(1).toDouble() / 1024 : std::nan("");
}

}  // namespace

int main(int argc, char* argv[])
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    reuseFreedWorkingMemory();  // as app/main.cpp does: the program's allocator settings
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    const int repetitions = argc > 1 ? std::max(3, std::atoi(argv[1])) : 20;

    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1600, 1000);
    window.show();
    RepaintWatch watch({window.exactView(), window.approxView(), window.errorView()});
    QObject::connect(&window, &MainWindow::resultShown, &watch,
                     [&watch] { watch.setArmedForPaint(true); });

    // The engine's milliseconds of each result shown by showAndTime, and the window thread's.
    std::vector<double> engine;
    std::vector<double> windowThread;
    // Shows spec and returns the milliseconds until all three heatmaps have repainted it.
    const auto showAndTime = [&](const ExperimentSpec& spec) {
        QEventLoop loop;
        watch.arm(&loop);
        watch.setArmedForPaint(false);
        QElapsedTimer timer;
        timer.start();
        const double processorStart = threadCpuMilliseconds();
        window.setSpec(spec);
        QTimer::singleShot(120'000, &loop, &QEventLoop::quit);
        loop.exec();
        const double elapsed = timer.nsecsElapsed() * 1e-6;
        QEventLoop after;
        QTimer::singleShot(50, &after, &QEventLoop::quit);
        after.exec();
        windowThread.push_back(threadCpuMilliseconds() - processorStart);
        const ExperimentResult& result = *window.controller().current().result;
        engine.push_back(1e3 * (result.secondsApprox + result.secondsExact));
        return elapsed;
    };
    const auto median = [](std::vector<double> values) {
        std::sort(values.begin(), values.end());
        return values[values.size() / 2];
    };

    QTextStream out(stdout);
    out << QStringLiteral("this machine: sgemm %1 GFLOP/s (%2 threads), copy %3 GB/s\n")
               .arg(measureSgemmGflops(0), 0, 'f', 0)
               .arg(hardwareThreads())
               .arg(measureCopyGigabytesPerSecond(), 0, 'f', 1);
    const bool peakReset = resetPeakResidentMemory();
    // One row of the table: the median, min and max of times, the engine's median and the
    // window thread's.
    const auto report = [&](const QString& change, int length, std::vector<double> times) {
        std::sort(times.begin(), times.end());
        out << QStringLiteral("%1 %2 %3 %4 %5 %6 %7\n")
                   .arg(change, -17)
                   .arg(length, -6)
                   .arg(times[times.size() / 2], 11, 'f', 1)
                   .arg(times.front(), 8, 'f', 1)
                   .arg(times.back(), 8, 'f', 1)
                   .arg(median(engine), 11, 'f', 1)
                   .arg(median(windowThread), 11, 'f', 1);
        out.flush();
    };
    out << "change            L      median ms   min ms   max ms   engine ms   window ms   (change "
           "-> repainted heatmaps, "
        << repetitions
        << " changes; engine: compute() alone; window: the window thread's processor time)\n";
    for (const int length : {128, 512, 4096}) {
        ExperimentSpec spec;
        spec.input.kind = InputKind::Random;
        spec.input.length = length;
        showAndTime(spec);  // the input is built once; the changes below reuse it
        engine.clear();
        windowThread.clear();
        std::vector<double> times;
        for (int i = 0; i < repetitions; ++i) {
            spec.approximation.seed = std::uint64_t(i + 1);
            times.push_back(showAndTime(spec));
        }
        report(QStringLiteral("new seed"), length, times);
        // The norm multiplier changes the input: everything is computed again, exact P included.
        times.clear();
        engine.clear();
        windowThread.clear();
        for (int i = 0; i < repetitions; ++i) {
            spec.input.normMultiplier = 1.0 + 0.05 * (i + 1);
            times.push_back(showAndTime(spec));
        }
        report(QStringLiteral("norm multiplier"), length, times);
    }

    // The built-in model: each change replaces the sentence's last word, so the tokens, the
    // forward pass, both attentions and the three heatmaps are all new.
    const QStringList words = {"light",  "water", "earth", "night", "day",   "heaven",
                               "waters", "deep",  "land",  "seas",  "grass", "seed"};
    ExperimentSpec spec = exampleSpec();
    showAndTime(spec);  // loads the model once
    engine.clear();
    windowThread.clear();
    std::vector<double> times;
    for (int i = 0; i < repetitions; ++i) {
        spec.input.text = exampleSpec().input.text + QLatin1Char(' ') + words[i % words.size()] +
                          QStringLiteral(" %1").arg(i);
        times.push_back(showAndTime(spec));
    }
    std::sort(times.begin(), times.end());
    out << QStringLiteral("built-in model, sentence change: median %1 ms, min %2 ms, max %3 ms "
                          "(engine %4 ms, window %5 ms)\n")
               .arg(times[times.size() / 2], 0, 'f', 1)
               .arg(times.front(), 0, 'f', 1)
               .arg(times.back(), 0, 'f', 1)
               .arg(median(engine), 0, 'f', 1)
               .arg(median(windowThread), 0, 'f', 1);
    if (peakReset)
        out << QStringLiteral("peak resident memory of the window, every change above: %1 MiB\n")
                   .arg(peakResidentMebibytes(), 0, 'f', 1);
    else
        out << "peak resident memory: not measured (/proc/self/clear_refs could not be written)\n";
    return 0;
}

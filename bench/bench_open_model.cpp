// The window's own path from opening a model to its first heatmaps on screen: the Input dock's
// reader list is given FILE (a language model: a .gguf file or a folder) as Open Model... gives it
// after its dialog, and the clock runs until the three heatmaps have painted the model's
// attention. Runs offscreen in a 1600 x 1000 window that first shows the default example (the
// built-in model), so the program, its fonts and the engine's threads are warm; the model itself
// is new to the process, as in a user's first open. The phases: the GUI thread's part (the docks
// read the model's header and shape; the spec reaches the controller), the worker's (the model
// loaded, its forward pass, attention of the layer), and the views' (result shown to heatmaps
// painted); with the page faults of the process over the open, and the machine's sgemm rate and
// copy bandwidth measured in the same run. The model is read at the window's layer (the default
// example's, 1), whose maps need its forward pass up to that layer only (cachedLayers); then the
// Layer box goes to the model's last layer, whose maps wait for the whole pass, timed the same
// way. One open per run: run it again for another sample.
//
//     ./build/bench/bench_open_model FILE.gguf
//
// (./build/bench/bench_gguf load 1 writes a SmolLM2-135M-shaped Q8_0 file to the temporary
// folder, /tmp/attnlab-smollm2-135m-q8_0.gguf.)

#include "inputs/model_input.h"
#include "repaint_watch.h"
#include "memory_budget.h"
#include "parallel.h"
#include "sweeps/timing_sweep.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/window/main_window.h"

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTextStream>
#include <QTimer>

#include <sys/resource.h>

using namespace attnlab;
using namespace attnlab::ui;

namespace {

long minorFaults()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// Runs the event loop until window shows a result (or refuses one); false on failure.
bool waitForResult(MainWindow& window)
{
    QEventLoop loop;
    bool shown = false;
    QObject::connect(&window, &MainWindow::resultShown, &loop, [&] {
        shown = true;
        loop.quit();
    });
    QObject::connect(&window.controller(), &ExperimentController::failed, &loop, &QEventLoop::quit);
    QTimer::singleShot(120'000, &loop, &QEventLoop::quit);
    loop.exec();
    return shown;
}

}  // namespace

int main(int argc, char* argv[])
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    reuseFreedWorkingMemory();  // as app/main.cpp does
    QApplication app(argc, argv);
    QTextStream out(stdout);
    if (argc < 2) {
        out << "usage: bench_open_model FILE.gguf|FOLDER\n";
        return 2;
    }
    const QString path = QFileInfo(QString::fromLocal8Bit(argv[1])).absoluteFilePath();
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setApplicationName(QStringLiteral("attention-lab-bench-open-model"));
    QSettings().setValue(QStringLiteral("recentModels"), QStringList{path});
    out << QStringLiteral("this machine: sgemm %1 GFLOP/s (%2 threads), copy %3 GB/s\n")
               .arg(measureSgemmGflops(0), 0, 'f', 0)
               .arg(hardwareThreads())
               .arg(measureCopyGigabytesPerSecond(), 0, 'f', 1);
    out.flush();

    MainWindow window(MainWindow::Start::DefaultExample);
    window.resize(1600, 1000);
    window.show();
    if (!waitForResult(window)) {
        out << "the default example did not show\n";
        return 1;
    }
    auto* reader = window.findChild<QComboBox*>(QStringLiteral("reader"));
    const int index = reader ? reader->findData(path) : -1;
    if (index < 0) {
        out << path << ": not in the reader list (not a language model?)\n";
        return 1;
    }

    RepaintWatch watch({window.exactView(), window.approxView(), window.errorView()});
    QElapsedTimer clock;
    double specAt = 0, resultAt = 0;
    QObject::connect(&window.controller(), &ExperimentController::busyChanged, &window,
                     [&](bool busy) {
                         if (busy && specAt == 0)
                             specAt = clock.nsecsElapsed() * 1e-9;
                     });
    QObject::connect(&window.controller(), &ExperimentController::resultReady, &window,
                     [&] { resultAt = clock.nsecsElapsed() * 1e-9; });
    QEventLoop loop;
    QObject::connect(&window, &MainWindow::resultShown, &loop, [&] {
        watch.setArmedForPaint(true);
        watch.arm(&loop);
    });
    QObject::connect(&window.controller(), &ExperimentController::failed, &loop,
                     [&](const QString& message) {
                         out << "refused: " << message << '\n';
                         loop.quit();
                     });
    const long faultsBefore = minorFaults();
    clock.start();
    reader->setCurrentIndex(index);
    emit reader->activated(index);  // as Open Model... after its dialog
    QTimer::singleShot(300'000, &loop, &QEventLoop::quit);
    loop.exec();
    const double paintedAt = clock.nsecsElapsed() * 1e-9;
    const ExperimentResult& result = *window.controller().current().result;
    if (result.spec.input.modelPath != path) {
        out << "no result for " << path << '\n';
        return 1;
    }
    out << QStringLiteral("%1: open request to the three heatmaps painted %2 s: docks and spec "
                          "(GUI thread) %3 s, model loaded, forward pass and attention (worker) "
                          "%4 s, result shown to painted %5 s; %6 page faults; L = %7, %8 heads\n")
               .arg(QFileInfo(path).fileName())
               .arg(paintedAt, 0, 'f', 3)
               .arg(specAt, 0, 'f', 3)
               .arg(resultAt - specAt, 0, 'f', 3)
               .arg(paintedAt - resultAt, 0, 'f', 3)
               .arg(minorFaults() - faultsBefore)
               .arg(result.labels.size())
               .arg(result.heads.size());

    // The last layer: the rest of the forward pass, then its maps.
    auto* layer = window.findChild<QSpinBox*>(QStringLiteral("layer"));
    QEventLoop lastLoop;
    QObject::disconnect(&window, &MainWindow::resultShown, &loop, nullptr);
    QObject::connect(&window, &MainWindow::resultShown, &lastLoop, [&] { watch.arm(&lastLoop); });
    clock.restart();
    layer->setValue(layer->maximum());
    QTimer::singleShot(300'000, &lastLoop, &QEventLoop::quit);
    lastLoop.exec();
    out << QStringLiteral("then layer %1 (the rest of the forward pass): %2 s to its heatmaps "
                          "painted\n")
               .arg(window.controller().current().result->spec.input.layer)
               .arg(clock.nsecsElapsed() * 1e-9, 0, 'f', 3);
    return 0;
}

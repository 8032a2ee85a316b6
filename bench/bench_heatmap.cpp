// Heatmap benchmark: the plotting widget alone (plotting/heatmap_view.h), offscreen, at 600 x 560.
// A plain executable (no Google Benchmark). It prints the machine's sgemm rate and copy bandwidth,
// measured in the same run so that machines can be compared, then:
//
//   - setMatrix + replot on an L x L matrix of uniform values, L = 128, 512, 1024, 4096: the first
//     call (the image allocated) and the median of `repetitions` more, alternating two matrices;
//   - panning a 4096 x 4096 map zoomed in 2x: move both ranges, replot, repaint; median per step;
//   - hovering over a 4096 x 4096 map with the highlight following the mouse: mouse move, the
//     overlay replotted, repaint; median per move.
//
//     ./build/bench/bench_heatmap [repetitions]   (default 10 for setMatrix, 40 steps and moves)
//
// These were the "timing" tests of test_heatmap, which printed their times and asserted nothing.

#include "parallel.h"
#include "ui/plotting/heatmap_view.h"
#include "sweeps/timing_sweep.h"
#include "test_support.h"  // tests/: uniformMatrix

#include <QApplication>
#include <QElapsedTimer>
#include <QTest>
#include <QTextStream>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

using namespace attnlab;
using namespace attnlab::ui;
using attnlab::test::uniformMatrix;

namespace {

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// A view of `matrix` shown at 600 x 560 and replotted, so that its layout is current.
std::unique_ptr<HeatmapView> shownView(const MatrixD& matrix)
{
    auto view = std::make_unique<HeatmapView>();
    view->resize(600, 560);
    view->setMatrix(matrix);
    view->show();
    if (!QTest::qWaitForWindowExposed(view.get()))
        qWarning("the heatmap window was not exposed");
    view->replot();
    return view;
}

}  // namespace

int main(int argc, char* argv[])
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int repetitions = argc > 1 ? std::max(3, std::atoi(argv[1])) : 10;
    const int steps = std::max(40, repetitions);

    QTextStream out(stdout);
    out << QStringLiteral("this machine: sgemm %1 GFLOP/s (%2 threads), copy %3 GB/s\n")
               .arg(measureSgemmGflops(0), 0, 'f', 0)
               .arg(hardwareThreads())
               .arg(measureCopyGigabytesPerSecond(), 0, 'f', 1);
    out.flush();

    QElapsedTimer timer;
    for (const int n : {128, 512, 1024, 4096}) {
        const MatrixD first = uniformMatrix(n, n, 9);
        const MatrixD second = uniformMatrix(n, n, 10);
        const auto view = shownView(MatrixD());
        timer.start();
        view->setMatrix(first);
        view->replot(QCustomPlot::rpImmediateRefresh);
        const double firstTime = timer.nsecsElapsed() * 1e-6;
        std::vector<double> times;
        for (int i = 0; i < repetitions; ++i) {
            timer.start();
            view->setMatrix(i % 2 == 0 ? second : first);
            view->replot(QCustomPlot::rpImmediateRefresh);
            times.push_back(timer.nsecsElapsed() * 1e-6);
        }
        out << QStringLiteral("setMatrix + replot, %1 x %1: first %2 ms, then median %3 ms\n")
                   .arg(n)
                   .arg(firstTime, 0, 'f', 2)
                   .arg(median(times), 0, 'f', 2);
        out.flush();
    }

    {
        const auto view = shownView(uniformMatrix(4096, 4096, 12));
        view->xAxis->setRange(-0.5, 2047.5);
        view->yAxis->setRange(-0.5, 2047.5);
        view->replot(QCustomPlot::rpImmediateRefresh);
        std::vector<double> times;
        for (int i = 0; i < steps; ++i) {
            timer.start();
            view->xAxis->moveRange(64);
            view->yAxis->moveRange(32);
            view->replot(QCustomPlot::rpImmediateRefresh);
            times.push_back(timer.nsecsElapsed() * 1e-6);
        }
        out << QStringLiteral("pan at 4096 x 4096, 2x zoom (range move + replot + repaint): "
                              "median %1 ms\n")
                   .arg(median(times), 0, 'f', 2);
        out.flush();
    }

    {
        const auto view = shownView(uniformMatrix(4096, 4096, 11));
        QObject::connect(view.get(), &HeatmapView::cellHovered, view.get(),
                         &HeatmapView::setHighlightedCell);
        const QRect map = view->axisRect()->rect();
        std::vector<double> times;
        for (int i = 0; i < steps; ++i) {
            const QPoint position(map.left() + 5 + i * (map.width() - 10) / steps,
                                  map.top() + 5 + i * (map.height() - 10) / steps);
            timer.start();
            QTest::mouseMove(view.get(), position);
            view->repaint();
            times.push_back(timer.nsecsElapsed() * 1e-6);
        }
        out << QStringLiteral("hover at 4096 x 4096 (move + overlay replot + repaint): median "
                              "%1 ms\n")
                   .arg(median(times), 0, 'f', 3);
    }
    return 0;
}

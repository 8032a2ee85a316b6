// Benchmark of fitting Hedgehog's feature maps (core/fitting): every head of a language model
// fitted with the default settings on a training text, as `attention-lab fit-features` does, and
// what the fitted maps then do inside the model on a held-out text. A plain executable:
//
//   bench_fit_features [model] [training text] [held-out text]
//   (default: the built-in model, resources/texts/kjv-fit.txt, resources/texts/kjv-heldout.txt)
//
// It reports: the time of the fit alone (the model reading the text before it not counted, as
// FeatureMapFit::seconds) and with the reading, and the processor time the process spent on it
// (user + system, all threads: on a machine shared with other work, the time it would take alone
// on the threads it used is about that divided by them), each head's mean row KL(P || P^) on the
// training text before and after; then, on the held-out text cut into windows of the model's
// positions, every layer replaced, the top-1 agreement of the next-token predictions (over every
// position of every window) and the mean KL(p || p^), for hedgehog, hedgehog-window (w = 32),
// FAVOR+ positive with the same feature count (m = 2 d, 3 seeds) and elu+1; beside the machine's
// sgemm rate and copy bandwidth measured in the same run and its load average. Threads:
// ATTNLAB_BENCH_THREADS (default 2). To explore the fit's settings (not the defaults the README
// quotes): ATTNLAB_FIT_STEPS, ATTNLAB_FIT_RATE, ATTNLAB_FIT_BATCH; ATTNLAB_FIT_ONLY=1 leaves out
// the other methods.

#include "bench_support.h"
#include "fitting/feature_map_fit.h"
#include "inputs/model_input.h"
#include "parallel.h"
#include "sweeps/downstream.h"
#include "sweeps/timing_sweep.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>

#include <cstdio>
#include <cstdlib>

#include <sys/resource.h>

using namespace attnlab;
using attnlab::bench::loadAverage;

namespace {

// User and system time of the process so far, every thread's.
double processorSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) {
        return double(t.tv_sec) + 1e-6 * double(t.tv_usec);
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

QString readText(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "bench_fit_features: cannot read %s\n", qPrintable(path));
        std::exit(1);
    }
    return QString::fromUtf8(file.readAll());
}

// Agreement and mean KL of a method over the held-out windows (every prediction counted once).
struct HeldOut {
    double agreement = 0;
    double meanKl = 0;
};

HeldOut heldOut(const LanguageModel& model, const std::vector<std::vector<int>>& windows,
                const ExperimentSpec& method)
{
    std::vector<int> layers;
    for (int l = 0; l < model.layers(); ++l)
        layers.push_back(l);
    double agreeing = 0, kl = 0, predictions = 0;
    for (const std::vector<int>& window : windows) {
        const ForwardResult exact = model.forward(window);
        const DownstreamComparison comparison =
            compareDownstream(model, window, exact, method, layers);
        const double n = double(comparison.kl.size());
        agreeing += comparison.top1Agreement * n;
        kl += comparison.meanKl * n;
        predictions += n;
    }
    return {agreeing / predictions, kl / predictions};
}

}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const QString root = QStringLiteral(ATTNLAB_SOURCE_DIR);
    const QString modelPath =
        argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral("builtin");
    const QString trainingPath =
        argc > 2 ? QString::fromLocal8Bit(argv[2]) : root + "/resources/texts/kjv-fit.txt";
    const QString heldOutPath =
        argc > 3 ? QString::fromLocal8Bit(argv[3]) : root + "/resources/texts/kjv-heldout.txt";
    const int threads = qEnvironmentVariableIntValue("ATTNLAB_BENCH_THREADS") > 0
                            ? qEnvironmentVariableIntValue("ATTNLAB_BENCH_THREADS")
                            : 2;
    setEngineThreads(threads);
    const std::shared_ptr<const LanguageModel> model = loadModel(modelPath);
    const std::vector<int> training = model->tokenizer().encode(readText(trainingPath));

    FeatureMapFitSpec spec;
    spec.trainingText = trainingPath;
    if (qEnvironmentVariableIntValue("ATTNLAB_FIT_STEPS") > 0)
        spec.distillation.steps = qEnvironmentVariableIntValue("ATTNLAB_FIT_STEPS");
    if (qEnvironmentVariableIntValue("ATTNLAB_FIT_BATCH") > 0)
        spec.distillation.batchWindows = qEnvironmentVariableIntValue("ATTNLAB_FIT_BATCH");
    if (!qEnvironmentVariable("ATTNLAB_FIT_RATE").isEmpty())
        spec.distillation.learningRate = qEnvironmentVariable("ATTNLAB_FIT_RATE").toDouble();
    QElapsedTimer timer;
    timer.start();
    const double cpuBefore = processorSeconds();
    const FeatureMapFit fit = fitFeatureMaps(*model, training, spec);
    const double withReading = double(timer.nsecsElapsed()) * 1e-9;
    const double cpu = processorSeconds() - cpuBefore;
    const double sgemm = measureSgemmGflops(engineThreads());
    const double bandwidth = measureCopyGigabytesPerSecond();
    std::printf("%s: %zu heads (%d layers x %d), d = %d, d_f = %d, %d steps of %d windows at rate "
                "%g, on %d tokens (%d windows), %d threads\n",
                qPrintable(modelDisplayName(modelPath)), fit.heads.size(), model->layers(),
                model->heads(), model->headDim(), fit.maps->featureDim, spec.distillation.steps,
                spec.distillation.batchWindows, spec.distillation.learningRate, fit.tokens,
                fit.windows, threads);
    std::printf("fit: %.1f s (%.1f s with the model reading the text), %.1f s of processor time "
                "(%.1f s on %d threads of their own)\n",
                fit.seconds, withReading, cpu, cpu / threads, threads);
    for (const HeadFitRecord& head : fit.heads)
        std::printf("  layer %d head %d: training-text mean row KL %.4f -> %.4f\n", head.layer,
                    head.head, head.initialKl, head.finalKl);

    // The held-out text in windows of the model's positions, each with the tokenizer's BOS.
    const std::vector<int> ids = model->tokenizer().encode(readText(heldOutPath));
    const std::vector<std::vector<int>> windows =
        sequenceWindows(model->tokenizer(), ids, model->positions());
    std::printf("held out: %zu tokens in %zu windows, every layer replaced\n", ids.size(),
                windows.size());
    ExperimentSpec method;
    method.approximation.fittedMaps = fit.maps;
    const auto report = [&](const char* name, const HeldOut& result) {
        std::printf("  %-34s top-1 agreement %.4f, mean KL %.4f\n", name, result.agreement,
                    result.meanKl);
    };
    method.approximation.kind = Method::Hedgehog;
    report("hedgehog", heldOut(*model, windows, method));
    method.approximation.kind = Method::HedgehogWindow;
    report("hedgehog-window (w = 32)", heldOut(*model, windows, method));
    if (qEnvironmentVariableIntValue("ATTNLAB_FIT_ONLY") == 1)
        return 0;
    method.approximation.kind = Method::Elu;
    report("elu", heldOut(*model, windows, method));
    method.approximation.kind = Method::FavorPositive;
    method.approximation.features = 2 * model->headDim();
    HeldOut favor;
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
        method.approximation.seed = seed;
        const HeldOut one = heldOut(*model, windows, method);
        favor.agreement += one.agreement / 3;
        favor.meanKl += one.meanKl / 3;
    }
    report("favor-positive (m = 2d, 3 seeds)", favor);
    std::printf("sgemm %.1f GFLOP/s, copy bandwidth %.1f GB/s, load average %.2f (measured in "
                "the same run)\n",
                sgemm, bandwidth, loadAverage());
    return 0;
}

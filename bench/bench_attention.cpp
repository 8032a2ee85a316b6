// Engine benchmark: exact attention (materialised and streaming), FAVOR+ positive and elu+1
// linear attention (non-causal and causal), float, d = d_v = 64, m = 256, against the machine's
// own sgemm rate measured in the same run. Threads: ATTNLAB_BENCH_THREADS (default 2).
//
// Flops are counted as in docs/design.md 5.1: exact 4 L^2 d; linear attention 2 L m d per side
// for the features (none for elu+1) plus 4 L C d_v for the two products with the C features.

#include "attention/exact_attention.h"
#include "attention/feature_maps.h"
#include "attention/linear_attention.h"
#include "parallel.h"
#include "attention/random.h"

#include <benchmark/benchmark.h>

#include <cstdlib>

using namespace attnlab;

namespace {

constexpr int kD = 64;
constexpr int kFeatures = 256;

Matrix<float> gaussian(Eigen::Index rows, Eigen::Index cols, double sd, std::uint64_t seed)
{
    Rng rng(seed, RandomStream::RandomInput);
    Matrix<float> m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i)
        m.data()[i] = float(sd * rng.normal());
    return m;
}

// Q, K with |x'| about 1 at s = 1/sqrt(d), V with unit rows.
struct Inputs {
    Matrix<float> q, k, v;
    explicit Inputs(Eigen::Index length)
        : q(gaussian(length, kD, std::pow(kD, 0.25) / std::sqrt(double(kD)), 1)),
          k(gaussian(length, kD, std::pow(kD, 0.25) / std::sqrt(double(kD)), 2)),
          v(gaussian(length, kD, 1 / std::sqrt(double(kD)), 3))
    {
    }
};

const double kScale = 1 / std::sqrt(double(kD));

void setRate(benchmark::State& state, double flopsPerIteration)
{
    state.counters["GFLOP/s"] = benchmark::Counter(flopsPerIteration * 1e-9 * state.iterations(),
                                                   benchmark::Counter::kIsRate);
}

void sgemm(benchmark::State& state)
{
    const Eigen::Index n = state.range(0);
    const Matrix<float> a = gaussian(n, n, 1, 4), b = gaussian(n, n, 1, 5);
    Matrix<float> c(n, n);
    for (auto _ : state) {
        c.noalias() = a * b;
        benchmark::DoNotOptimize(c.data());
    }
    setRate(state, 2.0 * n * n * n);
}

void exactMaterialised(benchmark::State& state)
{
    const Inputs in(state.range(0));
    for (auto _ : state)
        benchmark::DoNotOptimize(
            materialisedAttention(in.q, in.k, in.v, kScale, false).output.data());
    setRate(state, 4.0 * state.range(0) * state.range(0) * kD);
}

void exactStreaming(benchmark::State& state)
{
    const Inputs in(state.range(0));
    const bool causal = state.range(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(streamingAttention(in.q, in.k, in.v, kScale, causal).data());
    // A causal mask halves the useful work.
    setRate(state, (causal ? 2.0 : 4.0) * state.range(0) * state.range(0) * kD);
}

void linear(benchmark::State& state, Method kind)
{
    const Inputs in(state.range(0));
    const bool causal = state.range(1);
    ApproximationSpec spec;
    spec.kind = kind;
    spec.features = kFeatures;
    const auto phi = makeFeatureMap<float>(spec, kD, kScale);
    for (auto _ : state)
        benchmark::DoNotOptimize(linearAttention(*phi, in.q, in.k, in.v, causal).output.data());
    const double length = double(state.range(0));
    const double featureFlops = kind == Method::Elu ? 0 : 2.0 * 2.0 * length * kFeatures * kD;
    setRate(state, featureFlops + 4.0 * length * phi->featureCount() * kD);
}

void favorPositive(benchmark::State& state)
{
    linear(state, Method::FavorPositive);
}
void eluPlusOne(benchmark::State& state)
{
    linear(state, Method::Elu);
}

void lengths(benchmark::internal::Benchmark* b, bool withCausal)
{
    for (const bool causal : {false, true}) {
        if (causal && !withCausal)
            break;
        for (const int length : {1024, 2048, 4096, 8192, 16384})
            b->Args({length, causal});
    }
    b->ArgNames({"L", "causal"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(sgemm)->Arg(2048)->ArgName("n")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(exactMaterialised)
    ->ArgName("L")
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Arg(8192)
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(exactStreaming)->Apply([](auto* b) { lengths(b, true); });
BENCHMARK(favorPositive)->Apply([](auto* b) { lengths(b, true); });
BENCHMARK(eluPlusOne)->Apply([](auto* b) { lengths(b, true); });

int main(int argc, char** argv)
{
    const char* threads = std::getenv("ATTNLAB_BENCH_THREADS");
    setEngineThreads(threads ? std::atoi(threads) : 2);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

// Benchmark of the language models' forward passes (core/model/gpt2_model, llama_model) against
// the machine's own sgemm rate, measured in the same run. A plain executable (no Google
// Benchmark):
//
//   bench_model [reps] [length] [gpt2|smollm2|all]   (default 5 repetitions, L = 1024, all)
//
// SmolLM2-135M's shape (the Llama architecture: 30 layers, width 576, 9 query and 3 key/value
// heads of d = 64, gated MLP of 1536, vocabulary 49,152, tied head) is built in memory with
// random weights (LlamaNetwork, no files) and timed with every layer's Q, K, V captured, with and
// without the output head; its flops are 2 L x (the weight matrices' real sizes: q and o 576 x
// 576, k and v 576 x 192 (3 heads), gate, up and down 576 x 1536) per layer, the attention's
// products 4 d per (query, key) pair per query head (the causal half, L (L + 1) / 2 pairs, or all
// L^2), and the head 2 L 576 x 49,152. The peak memory of one forward pass is the engine's heap
// peak (allocation_peak.h), the weights excluded. The two forward passes and the two sgemm
// shapes are timed in turn, round after round (interleavedMedians), so that they share the
// machine's load.
//
// GPT-2: it writes a GPT-2-small checkpoint with random weights (12 layers, 12 heads, n_embd 768,
// n_positions 1024, vocab 50257; config.json, model.safetensors in F32, a trivial tokenizer) to a
// temporary folder, loads it, and times forward() on L random token ids with every layer's Q, K, V
// captured and the logits computed: the median of `reps` runs after one warm-up run.
// Threads: ATTNLAB_BENCH_THREADS (default 2).
//
// Flops, counted as docs/design.md 5.1 does: per layer 2 L E (3E) for Q, K, V, 2 L E^2 for the
// output projection, 2 * 2 L E (4E) for the MLP (24 L E^2 in all); attention per head 4 d for each
// (query, key) pair computed: causal, the L (L + 1) / 2 pairs of keys at or before the query
// (the "causal" count, the work a causal kernel has to do), or 4 L^2 d as if the masked half were
// computed too (the "full" count); the logits 2 L E vocab.

#include "allocation_peak.h"
#include "bench_support.h"
#include "memory_budget.h"
#include "model/gpt2_model.h"
#include "model/llama_model.h"
#include "parallel.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtEndian>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace attnlab;

namespace {

using namespace attnlab::bench;

constexpr int kPositions = 1024;

// The GFLOP/s of C = A B with A m x k and B k x n, row-major float (Eigen, engine threads).
double sgemmRate(Eigen::Index m, Eigen::Index k, Eigen::Index n, int reps)
{
    const Matrix<float> a = Matrix<float>::Random(m, k);
    const Matrix<float> b = Matrix<float>::Random(k, n);
    Matrix<float> c(m, n);
    const double seconds = medianSeconds(reps, [&] { c.noalias() = a * b; });
    return 2.0 * double(m) * double(k) * double(n) / seconds * 1e-9;
}

// GPT-2 small from a checkpoint written to a temporary folder.
void benchGpt2(int reps, int length, double sgemmSquare)
{
    QTemporaryDir dir;
    if (!dir.isValid())
        fail(QStringLiteral("cannot make a temporary folder"));
    QElapsedTimer timer;
    timer.start();
    writeCheckpoint(dir.path(), kPositions);
    const double writeSeconds = timer.nsecsElapsed() * 1e-9;
    timer.restart();
    const std::shared_ptr<const Gpt2Model> model = Gpt2Model::load(dir.path());
    const double loadSeconds = timer.nsecsElapsed() * 1e-9;

    Random random{7};
    std::vector<int> ids(static_cast<std::size_t>(length));
    for (int& id : ids)
        id = int(random.next() % kVocabulary);
    ForwardOptions options;
    options.captureQkv = true;
    options.logits = true;
    const double forwardSeconds = medianSeconds(reps, [&] {
        const ForwardResult result = model->forward(ids, options);
        if (result.layers.size() != std::size_t(kLayers) || !result.logits.allFinite())
            fail(QStringLiteral("the forward pass gave no finite logits"));
    });

    const double L = length, E = kWidth, d = kWidth / kHeads;
    const double products = kLayers * 24 * L * E * E;
    const double causalAttention = kLayers * kHeads * 4 * d * L * (L + 1) / 2;
    const double fullAttention = kLayers * kHeads * 4 * d * L * L;
    const double logits = 2 * L * E * kVocabulary;
    const double causalFlops = products + causalAttention + logits;
    const double fullFlops = products + fullAttention + logits;

    const double sgemmModel = sgemmRate(1024, 768, 3072, reps);
    const double sgemm = std::max(sgemmModel, sgemmSquare);

    std::printf("GPT-2 small (random weights), L = %d, Q/K/V captured, logits, %d threads\n",
                length, engineThreads());
    std::printf("checkpoint written in %.2f s, loaded in %.2f s\n", writeSeconds, loadSeconds);
    std::printf("forward: median %.4f s of %d (after a warm-up)\n", forwardSeconds, reps);
    std::printf("  flops (causal count): %.2f GFLOP = products %.2f + attention %.2f + logits "
                "%.2f\n",
                causalFlops * 1e-9, products * 1e-9, causalAttention * 1e-9, logits * 1e-9);
    std::printf("  forward rate: %.1f GFLOP/s causal count (%.1f GFLOP/s full 4 L^2 d count)\n",
                causalFlops / forwardSeconds * 1e-9, fullFlops / forwardSeconds * 1e-9);
    std::printf("sgemm 1024x768x3072: %.1f GFLOP/s; sgemm 2048^3: %.1f GFLOP/s\n", sgemmModel,
                sgemmSquare);
    std::printf("ratio forward / sgemm (the faster of the two): %.2f (causal count), %.2f (full "
                "count)\n",
                causalFlops / forwardSeconds * 1e-9 / sgemm,
                fullFlops / forwardSeconds * 1e-9 / sgemm);
}

// A matrix of uniform random values with standard deviation sigma.
Matrix<float> randomMatrix(Random& random, Eigen::Index rows, Eigen::Index cols, float sigma)
{
    Matrix<float> m(rows, cols);
    const float a = sigma * std::sqrt(3.0f);
    for (Eigen::Index i = 0; i < m.size(); ++i)
        m.data()[i] = random.uniform(a);
    return m;
}

// SmolLM2-135M's shape (HuggingFaceTB/SmolLM2-135M's config.json) with random weights: each
// linear map of `in` inputs with standard deviation 1/sqrt(in), the embedding 1, norm gains 1.
LlamaNetwork smolLm2Network()
{
    LlamaNetwork network;
    LlamaConfig& c = network.config;
    c.layers = 30;
    c.heads = 9;
    c.keyValueHeads = 3;
    c.width = 576;
    c.headDim = 64;
    c.innerWidth = 1536;
    c.positions = 8192;
    c.vocabularySize = 49152;
    c.rmsNormEpsilon = 1e-5;
    c.rope.theta = 100000;
    c.rope.rotaryDims = c.headDim;
    Random random{20241101};
    const Eigen::Index e = c.width, qkv = (c.heads + 2 * c.keyValueHeads) * c.headDim;
    const float s = 1 / std::sqrt(float(e));
    network.tokenEmbedding = randomMatrix(random, c.vocabularySize, e, 1);
    for (int l = 0; l < c.layers; ++l) {
        LlamaBlock block;
        block.inputNormGain = Vector<float>::Ones(e);
        block.qkvWeight = randomMatrix(random, e, qkv, s);
        block.outputWeight = randomMatrix(random, c.heads * c.headDim, e, s);
        block.postNormGain = Vector<float>::Ones(e);
        block.gateUpWeight = randomMatrix(random, e, 2 * c.innerWidth, s);
        block.downWeight =
            randomMatrix(random, c.innerWidth, e, 1 / std::sqrt(float(c.innerWidth)));
        network.blocks.push_back(std::move(block));
    }
    network.finalNormGain = Vector<float>::Ones(e);
    return network;  // the head tied to the embedding, as SmolLM2's
}

// The SmolLM2 forward pass with and without the output head.
void benchSmolLm2(int reps, int length)
{
    const LlamaNetwork network = smolLm2Network();
    const LlamaConfig& c = network.config;
    Random random{7};
    std::vector<int> ids(static_cast<std::size_t>(length));
    for (int& id : ids)
        id = int(random.next() % std::uint64_t(c.vocabularySize));
    ForwardOptions options;
    options.captureQkv = true;
    double peak = 0;
    const auto run = [&](bool logits) {
        options.logits = logits;
        const AllocationPeak measured;
        const ForwardResult result = network.forward(ids, options);
        peak = std::max(peak, measured.bytes());
        if (result.layers.size() != std::size_t(c.layers) || (logits && !result.logits.allFinite()))
            fail(QStringLiteral("the SmolLM2 forward pass gave no finite logits"));
    };
    // sgemm at the model's MLP shape and at 2048^3, timed in the same rounds as the forward pass.
    const Matrix<float> a = Matrix<float>::Random(2048, 2048);
    const Matrix<float> b = Matrix<float>::Random(2048, 2048);
    Matrix<float> product(2048, 2048);
    const std::vector<double> medians = interleavedMedians(
        reps, {[&] { run(true); }, [&] { run(false); }, [&] { product.noalias() = a * b; },
               [&] {
                   product.topLeftCorner(1024, 1536).noalias() =
                       a.topLeftCorner(1024, 576) * b.topLeftCorner(576, 1536);
               }});
    const double withHead = medians[0];
    const double withoutHead = medians[1];
    const double sgemmSquare = 2.0 * 2048 * 2048 * 2048 / medians[2] * 1e-9;
    const double sgemmModel = 2.0 * 1024 * 576 * 1536 / medians[3] * 1e-9;

    const double L = length, e = c.width, d = c.headDim, H = c.heads;
    const double kv = double(c.keyValueHeads) * d, inner = c.innerWidth;
    const double products = c.layers * 2 * L * (e * e + 2 * e * kv + e * e + 3 * e * inner);
    const double causalAttention = c.layers * H * 4 * d * L * (L + 1) / 2;
    const double fullAttention = c.layers * H * 4 * d * L * L;
    const double head = 2 * L * e * c.vocabularySize;
    const double sgemm = std::max(sgemmModel, sgemmSquare);
    const auto rate = [](double flops, double seconds) { return flops / seconds * 1e-9; };

    std::printf("SmolLM2-135M shape (random weights, in memory), L = %d, Q/K/V captured, %d "
                "threads\n",
                length, engineThreads());
    std::printf("  flops: products %.2f + attention %.2f (causal half; %.2f all pairs) + head "
                "%.2f GFLOP\n",
                products * 1e-9, causalAttention * 1e-9, fullAttention * 1e-9, head * 1e-9);
    std::printf("  with the head:    median %.4f s of %d: %.1f GFLOP/s causal count (%.1f all "
                "pairs), %.2f of sgemm\n",
                withHead, reps, rate(products + causalAttention + head, withHead),
                rate(products + fullAttention + head, withHead),
                rate(products + causalAttention + head, withHead) / sgemm);
    std::printf("  without the head: median %.4f s of %d: %.1f GFLOP/s causal count (%.1f all "
                "pairs), %.2f of sgemm\n",
                withoutHead, reps, rate(products + causalAttention, withoutHead),
                rate(products + fullAttention, withoutHead),
                rate(products + causalAttention, withoutHead) / sgemm);
    std::printf("  peak memory of a forward pass (weights excluded): %s\n",
                qPrintable(formatBytes(peak)));
    std::printf("sgemm 1024x576x1536: %.1f GFLOP/s; sgemm 2048^3: %.1f GFLOP/s (medians over the "
                "same rounds as the forward passes; the faster is the yardstick)\n",
                sgemmModel, sgemmSquare);
}

}  // namespace

int main(int argc, char** argv)
{
    const char* threads = std::getenv("ATTNLAB_BENCH_THREADS");
    setEngineThreads(threads ? std::atoi(threads) : 2);
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const int length = argc > 2 ? std::clamp(std::atoi(argv[2]), 1, kPositions) : 1024;
    const QString which = argc > 3 ? QString::fromLatin1(argv[3]) : QStringLiteral("all");
    if (which != QLatin1String("gpt2") && which != QLatin1String("smollm2") &&
        which != QLatin1String("all"))
        fail(QStringLiteral("the model is gpt2, smollm2 or all, not %1").arg(which));
    if (which != QLatin1String("smollm2"))
        benchGpt2(reps, length, sgemmRate(2048, 2048, 2048, reps));
    if (which != QLatin1String("gpt2"))
        benchSmolLm2(reps, length);
    return 0;
}

// Benchmark of generation a token at a time (core/model's decode, core/generation): exact
// attention over a key/value cache against the recurrent forms of causal FAVOR+ (m = 256) and
// elu+1, in a GPT-2-small-shaped model (12 layers, width 768, 12 heads of d = 64, vocabulary
// 50,257) with random weights and a context of 16,384 positions. A plain executable:
//
//   bench_generation [reps] [positions]   (default 31 repetitions, 16,384 positions)
//
// It writes the checkpoint (config.json with n_positions = positions, model.safetensors in F32, a
// trivial tokenizer) to a temporary folder under /tmp and loads it. The context before the timed
// steps is synthetic: the exact run's caches take in random keys and values without attending
// (KeyValueCache::append), the recurrent runs consume random queries, keys and values token by
// token (their state is the sum over every position, as in generation). Then, near position 512
// and at the last positions (16,384 - reps - 1 to 16,383), it times in interleaved rounds
// (bench_support.h), the three runs meeting the same load:
// - the attention part of one step: every layer's attention for one token (DecodingState::attend),
//   its q, k and v random;
// - the whole step: the model's decode of one token, embedding to logits (GPT-2's output head,
//   50,257 x 768, included).
// It prints the medians in milliseconds, the ratios the README quotes (exact attention against
// each recurrent one at the last position; each recurrent step at the last position against the
// same near 512), tokens per second of the whole model, and the bytes each run holds (the cache:
// 2 L d floats per head and layer; the state: C d + C per head and layer), beside the machine's
// sgemm rate and copy bandwidth measured in the same run and its load average.
// Threads: ATTNLAB_BENCH_THREADS (default 2).

#include "bench_support.h"
#include "generation/generation.h"
#include "memory_budget.h"
#include "model/gpt2_model.h"
#include "model/key_value_cache.h"
#include "parallel.h"
#include "sweeps/timing_sweep.h"

#include <QFile>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>

using namespace attnlab;
using namespace attnlab::bench;

namespace {

constexpr int kNearStart = 512;
constexpr int kFillRows = 256;  // rows of random q, k, v taken in at a time

// One of the three runs: its name and its decoding state.
struct Run {
    const char* name;
    DecodingState state;
};

// A block of rows of random [Q | K | V] (uniform, standard deviation 1: |x'| about 1).
Matrix<float> randomRows(Random& random, Eigen::Index rows)
{
    Matrix<float> qkv(rows, 3 * kWidth);
    for (Eigen::Index i = 0; i < qkv.size(); ++i)
        qkv.data()[i] = random.uniform(1.7320508f);
    return qkv;
}

// Moves run to `position`: the caches take in random keys and values, the recurrent layers
// consume random tokens.
void fillTo(Run& run, Eigen::Index position, Random& random)
{
    Matrix<float> out(kFillRows, kWidth);
    while (run.state.position() < position) {
        const Eigen::Index rows =
            std::min<Eigen::Index>(kFillRows, position - run.state.position());
        const Matrix<float> qkv = randomRows(random, rows);
        for (int l = 0; l < kLayers; ++l) {
            if (auto* cache = dynamic_cast<KeyValueCache*>(&run.state.layer(l))) {
                cache->append(qkv);
            } else {
                out.resize(rows, kWidth);
                run.state.attend(l, qkv, out);
            }
        }
        run.state.advance(rows);
    }
}

// The attention part of one step: every layer attends for one random token.
void attentionStep(Run& run, const Matrix<float>& qkv, Matrix<float>& out)
{
    for (int l = 0; l < kLayers; ++l)
        run.state.attend(l, qkv, out);
    run.state.advance(1);
}

}  // namespace

int main(int argc, char** argv)
{
    const char* threads = std::getenv("ATTNLAB_BENCH_THREADS");
    setEngineThreads(threads ? std::atoi(threads) : 2);
    const int reps = argc > 1 ? std::max(3, std::atoi(argv[1])) : 31;
    const int positions = argc > 2 ? std::max(2 * kNearStart, std::atoi(argv[2])) : 16384;

    const double sgemm = measureSgemmGflops(engineThreads());
    const double bandwidth = measureCopyGigabytesPerSecond();
    QTemporaryDir dir(QStringLiteral("/tmp/bench_generation-XXXXXX"));
    if (!dir.isValid())
        fail(QStringLiteral("cannot make a temporary folder under /tmp"));
    writeCheckpoint(dir.path(), positions);
    const std::shared_ptr<const Gpt2Model> model = Gpt2Model::load(dir.path());

    ApproximationSpec favor;
    favor.kind = Method::FavorPositive;
    favor.features = 256;
    ApproximationSpec elu;
    elu.kind = Method::Elu;
    const std::vector<bool> every(kLayers, true);
    std::vector<Run> runs;
    runs.push_back({"exact (key/value cache)", model->decodingState(positions)});
    runs.push_back({"FAVOR+ positive, m = 256", approximateDecodingState(*model, favor, every, 0)});
    runs.push_back({"elu+1", approximateDecodingState(*model, elu, every, 0)});

    // Each round steps every run once: 2 (reps + 1) steps per position measured, attention and
    // whole; the steps near 512 start there, the last ones end at the last position.
    const int stepsPerPosition = 2 * (reps + 1);
    Random random{20261126};
    const Matrix<float> token = randomRows(random, 1);
    Matrix<float> out(1, kWidth);
    ForwardOptions options;
    options.captureQkv = false;
    std::printf("GPT-2-small shape (12 layers, width 768, 12 heads of 64, vocabulary 50,257), "
                "random weights, n_positions %d, %d threads\n",
                positions, engineThreads());
    std::printf("sgemm %.1f GFLOP/s, copy bandwidth %.1f GB/s, load average %.2f (measured in "
                "this run)\n",
                sgemm, bandwidth, loadAverage());
    double attentionAt[2][3], wholeAt[2][3];
    double bytesAt[3] = {};
    for (int at = 0; at < 2; ++at) {
        const Eigen::Index start = at == 0 ? kNearStart : positions - stepsPerPosition;
        for (Run& run : runs)
            fillTo(run, start, random);
        std::vector<std::function<void()>> attention, whole;
        for (Run& run : runs) {
            attention.push_back([&] { attentionStep(run, token, out); });
            whole.push_back([&] {
                const ForwardResult result =
                    model->decode({int(random.next() % kVocabulary)}, run.state, options);
                if (!result.logits.allFinite())
                    fail(QStringLiteral("the step gave no finite logits"));
            });
        }
        const std::vector<double> attentionMedians = interleavedMedians(reps, attention);
        const std::vector<double> wholeMedians = interleavedMedians(reps, whole);
        for (std::size_t r = 0; r < runs.size(); ++r) {
            attentionAt[at][r] = attentionMedians[r];
            wholeAt[at][r] = wholeMedians[r];
            bytesAt[r] = runs[r].state.bytes();
        }
        std::printf("\nsteps at positions %lld to %lld (medians of %d):\n", qlonglong(start),
                    qlonglong(start + stepsPerPosition - 1), reps);
        for (std::size_t r = 0; r < runs.size(); ++r)
            std::printf("  %-26s attention %9.3f ms   whole step %9.3f ms (%7.1f tokens/s)\n",
                        runs[r].name, attentionMedians[r] * 1e3, wholeMedians[r] * 1e3,
                        1 / wholeMedians[r]);
    }
    std::printf("\nat the last positions:\n");
    for (std::size_t r = 1; r < runs.size(); ++r)
        std::printf("  exact attention / %s attention: %.1fx (goal >= 20x); its step at the last "
                    "positions / near %d: %.3f (goal <= 1.2); whole step %.2fx faster\n",
                    runs[r].name, attentionAt[1][0] / attentionAt[1][r], kNearStart,
                    attentionAt[1][r] / attentionAt[0][r], wholeAt[1][0] / wholeAt[1][r]);
    std::printf("memory held at the end: cache %s (2 L d floats per head and layer, L = %lld); "
                "FAVOR+ state %s; elu+1 state %s (C d + C floats per head and layer)\n",
                qPrintable(formatBytes(bytesAt[0])), qlonglong(runs[0].state.position()),
                qPrintable(formatBytes(bytesAt[1])), qPrintable(formatBytes(bytesAt[2])));
    return 0;
}

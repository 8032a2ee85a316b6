// Benchmark of the GPT-2 forward pass (core/model/gpt2_model) against the machine's own sgemm
// rate, measured in the same run. A plain executable (no Google Benchmark):
//
//   bench_model [reps] [length]        (default 5 repetitions, L = 1024)
//
// It writes a GPT-2-small checkpoint with random weights (12 layers, 12 heads, n_embd 768,
// n_positions 1024, vocab 50257; config.json, model.safetensors in F32, a trivial tokenizer) to a
// temporary folder, loads it, and times forward() on L random token ids with every layer's Q, K, V
// captured and the logits computed: the median of `reps` runs after one warm-up run.
// Threads: ATTNLAB_BENCH_THREADS (default 2).
//
// Flops, counted as DESIGN.md section 5 does: per layer 2 L E (3E) for Q, K, V, 2 L E^2 for the
// output projection, 2 * 2 L E (4E) for the MLP (24 L E^2 in all); attention per head 4 d for each
// (query, key) pair computed: causal, the L (L + 1) / 2 pairs of keys at or before the query
// (the "causal" count, the work a causal kernel has to do), or 4 L^2 d as if the masked half were
// computed too (the "full" count); the logits 2 L E vocab.

#include "model/gpt2_model.h"
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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace attnlab;

namespace {

constexpr int kLayers = 12;
constexpr int kHeads = 12;
constexpr int kWidth = 768;
constexpr int kPositions = 1024;
constexpr int kVocabulary = 50257;

// splitmix64: fast, reproducible random bits for the weights.
struct Random {
    std::uint64_t state;
    std::uint64_t next()
    {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform on [-a, a].
    float uniform(float a) { return a * (float(next() >> 40) * 0x1p-23f - 1.0f); }
};

struct Tensor {
    QString name;
    std::vector<std::int64_t> shape;
    float centre;  // LayerNorm gains 1, everything else 0
    float spread;  // uniform on centre +- spread
};

// GPT-2 small's tensors in the Hugging Face layout (Conv1D: in x out), without prefix.
std::vector<Tensor> gpt2SmallTensors()
{
    const std::int64_t e = kWidth;
    // Uniform with the standard deviation 0.02 of GPT-2's initialisation: a = 0.02 sqrt(3).
    const float a = 0.0346f;
    std::vector<Tensor> tensors = {{"wte.weight", {kVocabulary, e}, 0, a},
                                   {"wpe.weight", {kPositions, e}, 0, a / 2}};
    for (int l = 0; l < kLayers; ++l) {
        const QString h = QStringLiteral("h.%1.").arg(l);
        tensors.push_back({h + "ln_1.weight", {e}, 1, 0.1f});
        tensors.push_back({h + "ln_1.bias", {e}, 0, 0.05f});
        tensors.push_back({h + "attn.c_attn.weight", {e, 3 * e}, 0, a * 4});
        tensors.push_back({h + "attn.c_attn.bias", {3 * e}, 0, 0.05f});
        tensors.push_back({h + "attn.c_proj.weight", {e, e}, 0, a});
        tensors.push_back({h + "attn.c_proj.bias", {e}, 0, 0.05f});
        tensors.push_back({h + "ln_2.weight", {e}, 1, 0.1f});
        tensors.push_back({h + "ln_2.bias", {e}, 0, 0.05f});
        tensors.push_back({h + "mlp.c_fc.weight", {e, 4 * e}, 0, a});
        tensors.push_back({h + "mlp.c_fc.bias", {4 * e}, 0, 0.05f});
        tensors.push_back({h + "mlp.c_proj.weight", {4 * e, e}, 0, a});
        tensors.push_back({h + "mlp.c_proj.bias", {e}, 0, 0.05f});
    }
    tensors.push_back({"ln_f.weight", {e}, 1, 0.1f});
    tensors.push_back({"ln_f.bias", {e}, 0, 0.05f});
    return tensors;
}

std::int64_t elements(const Tensor& tensor)
{
    std::int64_t count = 1;
    for (const std::int64_t dim : tensor.shape)
        count *= dim;
    return count;
}

void fail(const QString& message)
{
    std::fprintf(stderr, "bench_model: %s\n", qPrintable(message));
    std::exit(1);
}

// model.safetensors with random F32 weights: the 8-byte header length, the JSON header padded
// with spaces to a multiple of 8, the data.
void writeWeights(const QString& path)
{
    const std::vector<Tensor> tensors = gpt2SmallTensors();
    QJsonObject header;
    std::int64_t offset = 0;
    for (const Tensor& tensor : tensors) {
        QJsonArray shape;
        for (const std::int64_t dim : tensor.shape)
            shape.append(qint64(dim));
        const std::int64_t bytes = 4 * elements(tensor);
        header.insert(tensor.name, QJsonObject{{"dtype", "F32"},
                                               {"shape", shape},
                                               {"data_offsets", QJsonArray{qint64(offset), qint64(offset + bytes)}}});
        offset += bytes;
    }
    QByteArray text = QJsonDocument(header).toJson(QJsonDocument::Compact);
    text.append(QByteArray((8 - text.size() % 8) % 8, ' '));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        fail(path + QStringLiteral(": cannot write"));
    char length[8];
    qToLittleEndian(quint64(text.size()), length);
    file.write(length, 8);
    file.write(text);
    Random random{20240611};
    std::vector<float> values;
    for (const Tensor& tensor : tensors) {
        values.resize(std::size_t(elements(tensor)));
        for (float& value : values)
            value = qToLittleEndian(tensor.centre + random.uniform(tensor.spread));
        const qint64 bytes = qint64(values.size() * sizeof(float));
        if (file.write(reinterpret_cast<const char*>(values.data()), bytes) != bytes)
            fail(path + QStringLiteral(": cannot write (disk full?)"));
    }
}

void writeText(const QString& path, const QByteArray& text)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        fail(path + QStringLiteral(": cannot write"));
}

// config.json, model.safetensors and a trivial tokenizer: the 256 byte symbols of GPT-2's
// bytes_to_unicode as ids 0..255, no merges.
void writeCheckpoint(const QString& folder)
{
    const QJsonObject config{{"model_type", "gpt2"},       {"n_layer", kLayers},
                             {"n_head", kHeads},           {"n_embd", kWidth},
                             {"n_positions", kPositions},  {"vocab_size", kVocabulary},
                             {"layer_norm_epsilon", 1e-5}, {"activation_function", "gelu_new"}};
    writeText(folder + "/config.json", QJsonDocument(config).toJson());
    QJsonObject vocab;
    int next = 256;
    for (int byte = 0; byte < 256; ++byte) {
        const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                               (byte >= 0xAE && byte <= 0xFF);
        vocab.insert(QString(QChar(printable ? byte : next++)), byte);
    }
    writeText(folder + "/vocab.json", QJsonDocument(vocab).toJson(QJsonDocument::Compact));
    writeText(folder + "/merges.txt", "#version: 0.2\n");
    writeWeights(folder + "/model.safetensors");
}

// The median of the wall-clock seconds of `reps` runs of f after one warm-up run.
double medianSeconds(int reps, const std::function<void()>& f)
{
    f();
    std::vector<double> seconds;
    for (int r = 0; r < reps; ++r) {
        QElapsedTimer timer;
        timer.start();
        f();
        seconds.push_back(double(timer.nsecsElapsed()) * 1e-9);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

// The GFLOP/s of C = A B with A m x k and B k x n, row-major float (Eigen, engine threads).
double sgemmRate(Eigen::Index m, Eigen::Index k, Eigen::Index n, int reps)
{
    const Matrix<float> a = Matrix<float>::Random(m, k);
    const Matrix<float> b = Matrix<float>::Random(k, n);
    Matrix<float> c(m, n);
    const double seconds = medianSeconds(reps, [&] { c.noalias() = a * b; });
    return 2.0 * double(m) * double(k) * double(n) / seconds * 1e-9;
}

}  // namespace

int main(int argc, char** argv)
{
    const char* threads = std::getenv("ATTNLAB_BENCH_THREADS");
    setEngineThreads(threads ? std::atoi(threads) : 2);
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const int length = argc > 2 ? std::clamp(std::atoi(argv[2]), 1, kPositions) : 1024;

    QTemporaryDir dir;
    if (!dir.isValid())
        fail(QStringLiteral("cannot make a temporary folder"));
    QElapsedTimer timer;
    timer.start();
    writeCheckpoint(dir.path());
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
    const double sgemmSquare = sgemmRate(2048, 2048, 2048, reps);
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
    return 0;
}

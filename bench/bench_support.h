#pragma once

// What the benchmark programs share: a GPT-2-small checkpoint with random weights written to a
// folder (bench_model, bench_generation), and medians of wall-clock times.

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QtEndian>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace attnlab::bench {

// GPT-2 small's shape.
inline constexpr int kLayers = 12;
inline constexpr int kHeads = 12;
inline constexpr int kWidth = 768;
inline constexpr int kVocabulary = 50257;

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
inline std::vector<Tensor> gpt2SmallTensors(int positions)
{
    const std::int64_t e = kWidth;
    // Uniform with the standard deviation 0.02 of GPT-2's initialisation: a = 0.02 sqrt(3).
    const float a = 0.0346f;
    std::vector<Tensor> tensors = {{"wte.weight", {kVocabulary, e}, 0, a},
                                   {"wpe.weight", {positions, e}, 0, a / 2}};
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

inline std::int64_t elements(const Tensor& tensor)
{
    std::int64_t count = 1;
    for (const std::int64_t dim : tensor.shape)
        count *= dim;
    return count;
}

// Ends the program with `message` on stderr.
inline void fail(const QString& message)
{
    std::fprintf(stderr, "bench: %s\n", qPrintable(message));
    std::exit(1);
}

// model.safetensors with random F32 weights: the 8-byte header length, the JSON header padded
// with spaces to a multiple of 8, the data.
inline void writeWeights(const QString& path, int positions)
{
    const std::vector<Tensor> tensors = gpt2SmallTensors(positions);
    QJsonObject header;
    std::int64_t offset = 0;
    for (const Tensor& tensor : tensors) {
        QJsonArray shape;
        for (const std::int64_t dim : tensor.shape)
            shape.append(qint64(dim));
        const std::int64_t bytes = 4 * elements(tensor);
        header.insert(
            tensor.name,
            QJsonObject{{"dtype", "F32"},
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

inline void writeText(const QString& path, const QByteArray& text)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        fail(path + QStringLiteral(": cannot write"));
}

// config.json, model.safetensors and a trivial tokenizer: the 256 byte symbols of GPT-2's
// bytes_to_unicode as ids 0..255, no merges.
inline void writeCheckpoint(const QString& folder, int positions)
{
    const QJsonObject config{{"model_type", "gpt2"},       {"n_layer", kLayers},
                             {"n_head", kHeads},           {"n_embd", kWidth},
                             {"n_positions", positions},   {"vocab_size", kVocabulary},
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
    writeWeights(folder + "/model.safetensors", positions);
}

// The machine's load average over the last minute (-1 where /proc/loadavg cannot be read).
inline double loadAverage()
{
    QFile file(QStringLiteral("/proc/loadavg"));
    return file.open(QIODevice::ReadOnly) ? file.readAll().split(' ').value(0).toDouble() : -1;
}

// The median of the wall-clock seconds of `reps` runs of f after one warm-up run.
inline double medianSeconds(int reps, const std::function<void()>& f)
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

// The median wall-clock seconds of each of `tasks` over `reps` rounds after one warm-up round, a
// round running every task once in turn: on a machine shared with other work, the tasks then
// meet the same load, and their ratios hold better than those of medians taken one after another.
inline std::vector<double> interleavedMedians(int reps,
                                              const std::vector<std::function<void()>>& tasks)
{
    std::vector<std::vector<double>> seconds(tasks.size());
    for (int r = 0; r <= reps; ++r)
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            QElapsedTimer timer;
            timer.start();
            tasks[t]();
            if (r > 0)
                seconds[t].push_back(double(timer.nsecsElapsed()) * 1e-9);
        }
    std::vector<double> medians;
    for (std::vector<double>& s : seconds) {
        std::sort(s.begin(), s.end());
        medians.push_back(s[s.size() / 2]);
    }
    return medians;
}

}  // namespace attnlab::bench

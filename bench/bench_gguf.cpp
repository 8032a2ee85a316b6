// Benchmark of GGUF files (core/model/ggml_types, gguf_file, gguf_model). A plain executable:
//
//   bench_gguf dequantize [reps]   (default 5)
//       Each type read (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K) on one
//       thread: 2^24 values (64 MB of float output) dequantized from seeded random blocks (scales
//       finite), the best of `reps` runs, in GB/s of float output; beside it, the same run's
//       single-thread copy bandwidth (memcpy of the 64 MB) and float GEMM rate (1024^3).
//   bench_gguf load [reps] [file.gguf]   (default 3; the file made in the temporary folder)
//       A SmolLM2-135M-shaped file (the Llama architecture: 30 layers, width 576, 9 query and 3
//       key/value heads of 64, MLP 1536, vocabulary 49,152 with 49,152 byte-level tokens and
//       48,895 merges, pre-tokenizer smollm, tied head; 134.5 M parameters) of random Q8_0 weights
//       (F32 norms), written once, then from the file to the first layer's attention, as Open
//       Model... gets it on screen: loadLanguageModel (open, check, dequantize, build the blocks
//       and the tokenizer), the tokens of the built-in example sentence (its first 32, about what a
//       real vocabulary of this size makes of it) and their forward pass with every layer's Q, K,
//       V, then exact causal attention of layer 0's 9 heads (compute). Each phase's
//       time and the total, the median of `reps` loads (each from the file, in the page cache
//       after the first), on the engine threads (ATTNLAB_BENCH_THREADS, default 2); with each
//       load's page faults, and how fast the same run writes memory it has not touched yet (the
//       float weights are 540 MB of it) and memory it has. With ATTNLAB_BENCH_KEEP_MEMORY=1,
//       glibc keeps freed memory for reuse: the loads after the first then write memory the
//       process has touched before.

#include "attention/random.h"
#include "experiment.h"
#include "gguf_support.h"
#include "inputs/model_input.h"
#include "model/ggml_types.h"
#include "model/language_model.h"
#include "parallel.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QFloat16>
#include <QSet>
#include <QStringList>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <sys/resource.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace attnlab;

namespace {

QByteArray halfBytes(float value)
{
    const qfloat16 half(value);
    QByteArray bytes(2, '\0');
    std::memcpy(bytes.data(), &half, 2);
    return bytes;
}

// `count` values of `type` in seeded random blocks whose scales (every half-precision field a type
// has) are finite: the d, m or dmin fields set to small normal numbers.
QByteArray randomBlocks(GgmlType type, std::int64_t count, std::uint64_t seed)
{
    const GgmlTypeTraits& traits = *ggmlTypeTraits(std::uint32_t(type));
    const std::int64_t blocks = count / traits.blockSize;
    QByteArray data(qsizetype(blocks * traits.blockBytes), '\0');
    Rng random(seed);
    for (qsizetype i = 0; i + 8 <= data.size(); i += 8) {
        const std::uint64_t word = random.nextBits();
        std::memcpy(data.data() + i, &word, 8);
    }
    std::vector<qsizetype> halves;  // the positions of the scale fields in a block
    switch (type) {
        case GgmlType::F32:
            for (qsizetype i = 0; i < data.size(); i += 4) {
                const float value = float(std::int32_t(random.nextBits() % 2001) - 1000) * 1e-3f;
                std::memcpy(data.data() + i, &value, 4);
            }
            return data;
        case GgmlType::F16:
        case GgmlType::BF16:
            for (qsizetype i = 0; i < data.size(); i += 2)
                data[i + 1] = char(data[i + 1] & 0x3f);  // exponent below the maximum: finite
            return data;
        case GgmlType::Q8_0:
        case GgmlType::Q4_0:
        case GgmlType::Q5_0: halves = {0}; break;
        case GgmlType::Q4_1:
        case GgmlType::Q5_1:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: halves = {0, 2}; break;
        case GgmlType::Q6_K: halves = {208}; break;
    }
    const QByteArray scale = halfBytes(0.01f);
    for (std::int64_t b = 0; b < blocks; ++b)
        for (const qsizetype at : halves)
            data.replace(qsizetype(b * traits.blockBytes) + at, 2, scale);
    return data;
}

// The page faults of the process so far (minor and major).
long pageFaults()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt + usage.ru_majflt;
}

double seconds(const QElapsedTimer& timer)
{
    return double(timer.nsecsElapsed()) * 1e-9;
}

void benchDequantize(int reps)
{
    setEngineThreads(1);
    constexpr std::int64_t values = std::int64_t(1) << 24;
    std::vector<float> out(values);
    std::vector<float> copy(values);
    double copyBest = 1e9;
    for (int r = 0; r < reps; ++r) {
        QElapsedTimer timer;
        timer.start();
        std::memcpy(copy.data(), out.data(), values * sizeof(float));
        copyBest = std::min(copyBest, seconds(timer));
    }
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(1024, 1024),
                    b = Eigen::MatrixXf::Random(1024, 1024);
    Eigen::MatrixXf c(1024, 1024);
    double gemmBest = 1e9;
    Eigen::setNbThreads(1);
    for (int r = 0; r < reps; ++r) {
        QElapsedTimer timer;
        timer.start();
        c.noalias() = a * b;
        gemmBest = std::min(gemmBest, seconds(timer));
    }
    std::printf("one thread: copy %.2f GB/s (memcpy of 64 MB, read + write counted once); sgemm "
                "1024^3 %.1f GFLOP/s\n",
                4.0 * values / copyBest * 1e-9, 2.0 * 1024 * 1024 * 1024 / gemmBest * 1e-9);
    std::printf("%-6s %12s %14s\n", "type", "input MB", "output GB/s");
    for (const GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0,
                                GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                                GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
        const QByteArray blocks = randomBlocks(type, values, 2026 + std::uint64_t(type));
        double best = 1e9;
        for (int r = 0; r < reps; ++r) {
            QElapsedTimer timer;
            timer.start();
            dequantizeGgml(type, reinterpret_cast<const unsigned char*>(blocks.constData()), values,
                           out.data());
            best = std::min(best, seconds(timer));
        }
        std::printf("%-6s %12.1f %14.2f\n", ggmlTypeTraits(std::uint32_t(type))->name,
                    double(blocks.size()) / 1e6, 4.0 * values / best * 1e-9);
    }
    std::printf("(the checksum of the last output, so that nothing is optimised away: %g)\n",
                double(out[12345]) + double(c(1, 2)) + double(copy[7]));
}

// GPT-2's bytes_to_unicode characters, in the order of their bytes.
QStringList byteSymbols()
{
    QStringList symbols;
    int shifted = 0;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        symbols.append(QString(QChar(printable ? b : 256 + shifted++)));
    }
    return symbols;
}

// The SmolLM2-135M-shaped Q8_0 file at path.
void writeSmolLmFile(const QString& path)
{
    constexpr int kLayers = 30, kWidth = 576, kInner = 1536, kVocabulary = 49152;
    test::GgufBuilder gguf;
    gguf.addString(QStringLiteral("general.architecture"), QStringLiteral("llama"));
    gguf.addU32(QStringLiteral("general.file_type"), 7);
    gguf.addU32(QStringLiteral("general.quantization_version"), 2);
    gguf.addU32(QStringLiteral("llama.block_count"), kLayers);
    gguf.addU32(QStringLiteral("llama.context_length"), 8192);
    gguf.addU32(QStringLiteral("llama.embedding_length"), kWidth);
    gguf.addU32(QStringLiteral("llama.feed_forward_length"), kInner);
    gguf.addU32(QStringLiteral("llama.attention.head_count"), 9);
    gguf.addU32(QStringLiteral("llama.attention.head_count_kv"), 3);
    gguf.addF32(QStringLiteral("llama.rope.freq_base"), 100000);
    gguf.addF32(QStringLiteral("llama.attention.layer_norm_rms_epsilon"), 1e-5f);
    gguf.addU32(QStringLiteral("llama.rope.dimension_count"), 64);
    // A byte-level vocabulary: the 256 byte symbols, then merges of random earlier symbols.
    QStringList tokens = byteSymbols();
    QStringList merges;
    QSet<QString> known(tokens.begin(), tokens.end());
    Rng random(135);
    while (tokens.size() < kVocabulary - 1) {
        const QString& left = tokens[qsizetype(random.nextBits() % quint64(tokens.size()))];
        const QString& right = tokens[qsizetype(random.nextBits() % 256)];
        const QString merged = left + right;
        if (merged.size() > 12 || known.contains(merged))
            continue;
        known.insert(merged);
        merges.append(left + u' ' + right);
        tokens.append(merged);
    }
    tokens.append(QStringLiteral("<|endoftext|>"));
    std::vector<qint32> types(std::size_t(kVocabulary), 1);
    types.back() = 3;
    gguf.addString(QStringLiteral("tokenizer.ggml.model"), QStringLiteral("gpt2"));
    gguf.addString(QStringLiteral("tokenizer.ggml.pre"), QStringLiteral("smollm"));
    gguf.addStrings(QStringLiteral("tokenizer.ggml.tokens"), tokens);
    gguf.addNumbers(QStringLiteral("tokenizer.ggml.token_type"), test::GgufBuilder::Int32, types);
    gguf.addStrings(QStringLiteral("tokenizer.ggml.merges"), merges);
    std::uint64_t seed = 1;
    const auto q8 = [&](const QString& name, quint64 in, quint64 out) {
        gguf.addTensor(name, 8, {in, out},
                       randomBlocks(GgmlType::Q8_0, std::int64_t(in * out), seed++));
    };
    const auto norm = [&](const QString& name) {
        QByteArray ones;
        for (int i = 0; i < kWidth; ++i)
            ones += test::GgufBuilder::little(1.0f);
        gguf.addTensor(name, 0, {kWidth}, ones);
    };
    q8(QStringLiteral("token_embd.weight"), kWidth, kVocabulary);
    for (int l = 0; l < kLayers; ++l) {
        const QString b = QStringLiteral("blk.%1.").arg(l);
        norm(b + QStringLiteral("attn_norm.weight"));
        q8(b + QStringLiteral("attn_q.weight"), kWidth, kWidth);
        q8(b + QStringLiteral("attn_k.weight"), kWidth, 192);
        q8(b + QStringLiteral("attn_v.weight"), kWidth, 192);
        q8(b + QStringLiteral("attn_output.weight"), kWidth, kWidth);
        norm(b + QStringLiteral("ffn_norm.weight"));
        q8(b + QStringLiteral("ffn_gate.weight"), kWidth, kInner);
        q8(b + QStringLiteral("ffn_up.weight"), kWidth, kInner);
        q8(b + QStringLiteral("ffn_down.weight"), kInner, kWidth);
    }
    norm(QStringLiteral("output_norm.weight"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(gguf.bytes()) < 0) {
        std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
        std::exit(1);
    }
}

// The tokens of the load benchmark's forward pass.
constexpr std::size_t kTokens = 32;

void benchLoad(int reps, QString path)
{
#ifdef __GLIBC__
    // ATTNLAB_BENCH_KEEP_MEMORY=1: glibc keeps freed memory for reuse (no trimming, no mmap of
    // large blocks), so a second load writes memory the process has touched before, and the time
    // is the loader's own rather than the machine's price for new pages.
    if (qEnvironmentVariableIntValue("ATTNLAB_BENCH_KEEP_MEMORY") == 1) {
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
        std::printf("glibc keeps freed memory (ATTNLAB_BENCH_KEEP_MEMORY=1)\n");
    }
#endif
    if (path.isEmpty())
        path = QDir::temp().filePath(QStringLiteral("attnlab-smollm2-135m-q8_0.gguf"));
    if (!QFileInfo::exists(path)) {
        std::printf("writing %s ...\n", qPrintable(path));
        writeSmolLmFile(path);
    }
    setEngineThreads(qEnvironmentVariableIntValue("ATTNLAB_BENCH_THREADS") > 0
                         ? qEnvironmentVariableIntValue("ATTNLAB_BENCH_THREADS")
                         : 2);
    std::printf("%s: %.1f MB, %d engine threads\n", qPrintable(path),
                double(QFileInfo(path).size()) / 1e6, engineThreads());
    std::vector<std::array<double, 3>> runs;
    for (int r = 0; r < reps; ++r) {
        QElapsedTimer timer;
        const long faultsBefore = pageFaults();
        timer.start();
        const auto model = loadLanguageModel(path);
        const double loaded = seconds(timer);
        const long faults = pageFaults() - faultsBefore;
        ModelTokens tokens = modelTokens(*model, builtinExample().text, false);
        // About what a real 49,152-token vocabulary makes of the sentence (the synthetic one
        // cuts it into far more tokens).
        tokens.ids.resize(std::min<std::size_t>(tokens.ids.size(), kTokens));
        tokens.labels = tokens.labels.mid(0, qsizetype(tokens.ids.size()));
        const ForwardResult forward = model->forward(tokens.ids);
        const double forwarded = seconds(timer);
        ExperimentSpec spec;
        spec.setMethod(QStringLiteral("exact"));
        spec.causal = true;
        const ExperimentResult result =
            compute(spec, layerInput(forward, 0, model->heads(), tokens.labels));
        const double attended = seconds(timer);
        runs.push_back({loaded, forwarded - loaded, attended - forwarded});
        std::printf("load %d: loadLanguageModel %.3f s (%ld page faults, %.0f MB), %zu tokens' "
                    "forward pass %.3f s, layer 0's attention %.3f s: %.3f s in all\n",
                    r + 1, loaded, faults, double(faults) * 4096 / 1e6, tokens.ids.size(),
                    forwarded - loaded, attended - forwarded, attended);
    }
    std::sort(runs.begin(), runs.end(),
              [](const auto& a, const auto& b) { return a[0] + a[1] + a[2] < b[0] + b[1] + b[2]; });
    const auto& median = runs[runs.size() / 2];
    std::printf("median: %.3f s from the file to the first layer's attention (load %.3f s, forward "
                "%.3f s, attention %.3f s)\n",
                median[0] + median[1] + median[2], median[0], median[1], median[2]);
    // What the machine charges for memory the process has not touched yet: the float weights
    // (540 MB) are all such memory.
    constexpr std::size_t kTouched = std::size_t(256) << 20;
    QElapsedTimer timer;
    timer.start();
    std::vector<char> fresh(kTouched, 1);
    const double firstTouch = seconds(timer);
    timer.restart();
    std::memset(fresh.data(), 2, kTouched);
    const double secondTouch = seconds(timer);
    std::printf("the same run writes new memory at %.0f MB/s the first time (256 MB) and %.0f MB/s "
                "the second (checksum %d)\n",
                double(kTouched) / firstTouch / 1e6, double(kTouched) / secondTouch / 1e6,
                int(fresh[12345]));
}

}  // namespace

int main(int argc, char** argv)
{
    const QString command = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QString();
    if (command == QLatin1String("dequantize")) {
        benchDequantize(argc > 2 ? std::max(1, std::atoi(argv[2])) : 5);
    } else if (command == QLatin1String("load")) {
        benchLoad(argc > 2 ? std::max(1, std::atoi(argv[2])) : 3,
                  argc > 3 ? QString::fromLocal8Bit(argv[3]) : QString());
    } else {
        std::fprintf(stderr, "usage: bench_gguf dequantize [reps] | load [reps] [file.gguf]\n");
        return 2;
    }
    return 0;
}

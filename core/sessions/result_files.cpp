#include "sessions/result_files.h"

#include "io/atomic_files.h"
#include "io/npy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>

namespace attnlab {

namespace {

QJsonValue number(double value)
{
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

// Writes the matrices of every head as one L x cols array (one head) or H x L x cols, in the
// precision the result was computed in; nothing when they are empty.
void writeHeads(AtomicFileSet& files, const QString& name, const ExperimentResult& result,
                const std::vector<const MatrixD*>& heads)
{
    const MatrixD& first = *heads.front();
    if (first.size() == 0)
        return;
    const NpyDtype dtype =
        result.spec.precision == Precision::Float ? NpyDtype::Float32 : NpyDtype::Float64;
    QIODevice& device = files.open(name);
    if (heads.size() == 1) {
        writeNpy(device, first.data(), {first.rows(), first.cols()}, dtype);
        return;
    }
    std::vector<double> stacked;
    stacked.reserve(std::size_t(first.size()) * heads.size());
    for (const MatrixD* m : heads)
        stacked.insert(stacked.end(), m->data(), m->data() + m->size());
    writeNpy(device, stacked.data(), {qint64(heads.size()), first.rows(), first.cols()}, dtype);
}

void writeStacked(AtomicFileSet& files, const QString& name, const ExperimentResult& result,
                  MatrixD HeadResult::*member)
{
    std::vector<const MatrixD*> heads;
    for (const HeadResult& head : result.heads)
        heads.push_back(&(head.*member));
    writeHeads(files, name, result, heads);
}

void writeStacked(AtomicFileSet& files, const QString& name, const ExperimentResult& result,
                  ResultMatrix HeadResult::*member)
{
    std::vector<MatrixD> matrices;
    for (const HeadResult& head : result.heads)
        matrices.push_back((head.*member).toDouble());
    std::vector<const MatrixD*> heads;
    for (const MatrixD& m : matrices)
        heads.push_back(&m);
    writeHeads(files, name, result, heads);
}

// Writes one tensor of every head of input as an H x L x cols array.
void writeInputTensor(AtomicFileSet& files, const QString& name, const ExperimentResult& result,
                      const AttentionInput& input, MatrixD HeadTensors::*member)
{
    const MatrixD& first = input.heads.front().*member;
    std::vector<double> stacked;
    stacked.reserve(std::size_t(first.size()) * input.heads.size());
    for (const HeadTensors& head : input.heads) {
        const MatrixD& m = head.*member;
        stacked.insert(stacked.end(), m.data(), m.data() + m.size());
    }
    const NpyDtype dtype =
        result.spec.precision == Precision::Float ? NpyDtype::Float32 : NpyDtype::Float64;
    writeNpy(files.open(name), stacked.data(),
             {qint64(input.heads.size()), first.rows(), first.cols()}, dtype);
}

// What metrics.json says of a language model input: the architecture, the key/value head each
// query head reads, the positional encoding (with the RoPE settings of a rotary model).
QJsonObject modelJson(const LanguageModelInfo& info)
{
    QJsonObject json;
    json[QLatin1String("architecture")] = info.architecture;
    json[QLatin1String("query_heads")] = info.heads;
    json[QLatin1String("key_value_heads")] = info.keyValueHeads;
    QJsonArray groups;
    for (int h = 0; h < info.heads; ++h)
        groups.append(h / (info.heads / info.keyValueHeads));
    json[QLatin1String("key_value_head_of_query_head")] = groups;
    json[QLatin1String("head_dim")] = info.headDim;
    json[QLatin1String("positional_encoding")] = info.positionalScheme();
    json[QLatin1String("queries_keys")] =
        info.rope ? QStringLiteral("after RoPE (what the scores see)")
                  : QStringLiteral("as projected (what the scores see)");
    if (info.rope) {
        const RopeSettings& rope = *info.rope;
        QJsonObject settings{{QLatin1String("theta"), rope.theta},
                             {QLatin1String("rotary_dims"), rope.rotaryDims},
                             {QLatin1String("convention"), QStringLiteral("rotate-half")}};
        if (rope.scaling == RopeScalingType::None)
            settings[QLatin1String("scaling")] = QJsonValue(QJsonValue::Null);
        else if (rope.scaling == RopeScalingType::Linear)
            settings[QLatin1String("scaling")] =
                QJsonObject{{QLatin1String("rope_type"), QStringLiteral("linear")},
                            {QLatin1String("factor"), rope.factor}};
        else if (rope.scaling == RopeScalingType::Factors) {
            QJsonArray factors;
            for (const double f : rope.frequencyFactors)
                factors.append(f);
            settings[QLatin1String("scaling")] =
                QJsonObject{{QLatin1String("rope_type"), QStringLiteral("rope_freqs")},
                            {QLatin1String("factors"), factors}};
        } else
            settings[QLatin1String("scaling")] = QJsonObject{
                {QLatin1String("rope_type"), QStringLiteral("llama3")},
                {QLatin1String("factor"), rope.factor},
                {QLatin1String("low_freq_factor"), rope.lowFrequencyFactor},
                {QLatin1String("high_freq_factor"), rope.highFrequencyFactor},
                {QLatin1String("original_max_position_embeddings"), rope.originalPositions}};
        json[QLatin1String("rope")] = settings;
    }
    json[QLatin1String("sliding_window")] =
        info.slidingWindow > 0 ? QJsonValue(info.slidingWindow) : QJsonValue(QJsonValue::Null);
    return json;
}

}  // namespace

QJsonObject metricsJson(const AttentionMetrics& metrics)
{
    QJsonObject json;
    json[QLatin1String("max_abs")] = number(metrics.maxAbsError);
    json[QLatin1String("mean_abs")] = number(metrics.meanAbsError);
    json[QLatin1String("rel_frobenius_attention")] = number(metrics.relFrobeniusAttention);
    json[QLatin1String("rel_frobenius_output")] = number(metrics.relFrobeniusOutput);
    json[QLatin1String("mean_tv")] = number(metrics.meanTotalVariation);
    json[QLatin1String("mean_kl")] = number(metrics.meanKl);
    json[QLatin1String("kernel_mse")] = number(metrics.kernelMse);
    json[QLatin1String("nonpositive_rows")] = double(metrics.nonPositiveRows);
    json[QLatin1String("kernel_overflow")] = double(metrics.kernelOverflow);
    const RowProperties& properties = metrics.properties;
    json[QLatin1String("entropy_exact")] = number(properties.entropyExact);
    json[QLatin1String("entropy_approx")] = number(properties.entropyApprox);
    json[QLatin1String("monotonicity")] = number(properties.monotonicity);
    QJsonArray curveExact, curveApprox;
    for (std::size_t r = 0; r < properties.rankCurveExact.size(); ++r) {
        curveExact.append(number(properties.rankCurveExact[r]));
        curveApprox.append(number(properties.rankCurveApprox[r]));
    }
    json[QLatin1String("weight_by_rank_exact")] = curveExact;
    json[QLatin1String("weight_by_rank_approx")] = curveApprox;
    return json;
}

QJsonObject resultJson(const ExperimentResult& result)
{
    const HeadResult& first = result.heads.front();
    QJsonObject json;
    json[QLatin1String("spec")] = result.spec.toJson();
    json[QLatin1String("scale")] = result.scale;
    json[QLatin1String("L")] = double(result.labels.size());
    json[QLatin1String("heads")] = double(result.heads.size());
    json[QLatin1String("d_v")] = double(first.outputExact.cols());
    json[QLatin1String("features")] = first.featuresQ.size() > 0
                                          ? QJsonValue(double(first.featuresQ.cols()))
                                          : QJsonValue(QJsonValue::Null);
    json[QLatin1String("tokens")] = QJsonArray::fromStringList(result.labels);
    if (result.gridRows > 0)
        json[QLatin1String("patch_grid")] = QJsonArray{result.gridRows, result.gridCols};
    if (result.model)
        json[QLatin1String("model")] = modelJson(*result.model);
    json[QLatin1String("metrics")] = metricsJson(result.metrics);
    QJsonArray heads;
    for (const HeadResult& head : result.heads) {
        QJsonObject entry = metricsJson(head.metrics);
        QJsonArray rows;
        for (const Eigen::Index row : head.nonPositiveRows)
            rows.append(double(row));
        entry[QLatin1String("nonpositive_row_indices")] = rows;
        heads.append(entry);
    }
    json[QLatin1String("per_head")] = heads;
    QJsonArray warnings;
    for (const ResultWarning& warning : result.warnings)
        warnings.append(QJsonObject{{QLatin1String("code"), warning.code},
                                    {QLatin1String("message"), warning.message}});
    json[QLatin1String("warnings")] = warnings;
    json[QLatin1String("seconds")] =
        QJsonObject{{QLatin1String("approximate"), result.secondsApprox},
                    {QLatin1String("exact"), result.secondsExact}};
    return json;
}

namespace {

// Every file writeResultFiles can write.
const char* const kResultFileNames[] = {
    "attention_exact.npy", "attention_approx.npy",  "kernel_exact.npy", "kernel_approx.npy",
    "output_exact.npy",    "output_approx.npy",     "features_q.npy",   "features_k.npy",
    "projection.npy",      "queries.npy",           "keys.npy",         "values.npy",
    "projection_keys.npy", "projection_values.npy", "metrics.json"};

}  // namespace

QStringList writeResultFiles(const ExperimentResult& result, const QString& directory,
                             const AttentionInput* input)
{
    AtomicFileSet files(directory);
    writeStacked(files, QStringLiteral("attention_exact.npy"), result, &HeadResult::attentionExact);
    writeStacked(files, QStringLiteral("attention_approx.npy"), result,
                 &HeadResult::attentionApprox);
    writeStacked(files, QStringLiteral("kernel_exact.npy"), result, &HeadResult::kernelExact);
    writeStacked(files, QStringLiteral("kernel_approx.npy"), result, &HeadResult::kernelApprox);
    writeStacked(files, QStringLiteral("output_exact.npy"), result, &HeadResult::outputExact);
    writeStacked(files, QStringLiteral("output_approx.npy"), result, &HeadResult::outputApprox);
    writeStacked(files, QStringLiteral("features_q.npy"), result, &HeadResult::featuresQ);
    writeStacked(files, QStringLiteral("features_k.npy"), result, &HeadResult::featuresK);
    writeStacked(files, QStringLiteral("projection.npy"), result, &HeadResult::projection);
    // The method's other random draws (Linformer's E and F), stacked over the heads.
    for (std::size_t k = 0; k < result.heads.front().drawn.size(); ++k) {
        std::vector<const MatrixD*> heads;
        for (const HeadResult& head : result.heads)
            heads.push_back(&head.drawn[k].matrix);
        writeHeads(files, result.heads.front().drawn[k].file + QStringLiteral(".npy"), result,
                   heads);
    }
    if (input) {
        writeInputTensor(files, QStringLiteral("queries.npy"), result, *input, &HeadTensors::q);
        writeInputTensor(files, QStringLiteral("keys.npy"), result, *input, &HeadTensors::k);
        writeInputTensor(files, QStringLiteral("values.npy"), result, *input, &HeadTensors::v);
    }
    writeAll(files.open(QStringLiteral("metrics.json")),
             QJsonDocument(resultJson(result)).toJson(QJsonDocument::Indented));
    files.commit();
    // A result file of an earlier run that this run did not write (the exact method writes no
    // features, --no-matrices no matrices) would be read as part of this one: remove it.
    const QStringList written = files.filePaths();
    const QDir dir(directory);
    for (const char* name : kResultFileNames) {
        const QString path = dir.absoluteFilePath(QLatin1String(name));
        if (!written.contains(path) && QFileInfo(path).isFile())
            QFile::remove(path);
    }
    return written;
}

}  // namespace attnlab

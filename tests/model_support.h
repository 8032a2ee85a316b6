#pragma once

// Helpers shared by the trained-model tests (test_model, test_vit, test_bad_inputs): comparing the
// C++ forward pass with the float64 references of tests/data/models, and copying and damaging a
// checkpoint (its JSON files and its safetensors weights, byte by byte); the spec of a model
// reading a text.

#include "attention/exact_attention.h"
#include "experiment_spec.h"
#include "io/npy.h"
#include "model/safetensors.h"
#include "model/transformer_blocks.h"
#include "test_support.h"
#include "types.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QtEndian>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

namespace attnlab::test {

const QString kModelFixtures = QStringLiteral(ATTNLAB_TEST_DATA "/models");

// A spec of model input: the model at `modelPath` reads `text` causally, as language models do,
// and `method` with m features (seed 3) approximates its attention.
inline ExperimentSpec modelInputSpec(const QString& modelPath, const QString& text,
                                     const QString& method = QStringLiteral("favor-positive"),
                                     int m = 16)
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = modelPath;
    spec.input.text = text;
    spec.causal = true;
    spec.setMethod(method);
    spec.approximation.features = m;
    spec.approximation.seed = 3;
    return spec;
}

// tests/data/gguf, and its file <name>.gguf.
inline const QString kGgufFixtures = QStringLiteral(ATTNLAB_TEST_DATA "/gguf");
inline QString ggufFixture(const QString& name)
{
    return kGgufFixtures + QLatin1Char('/') + name + QStringLiteral(".gguf");
}

// An array of the reference folder of a fixture (tests/data/models/<fixture>/reference/<name>).
inline NpyArray reference(const QString& fixture, const QString& name)
{
    return readNpy(kModelFixtures + QLatin1Char('/') + fixture + QStringLiteral("/reference/") +
                   name);
}

// The token ids of a reference folder's tokens.json ({"ids": [...]}).
inline std::vector<int> referenceTokensIn(const QString& referenceFolder)
{
    QFile file(referenceFolder + QStringLiteral("/tokens.json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    std::vector<int> ids;
    for (const QJsonValue id :
         QJsonDocument::fromJson(file.readAll())[QStringLiteral("ids")].toArray())
        ids.push_back(id.toInt());
    return ids;
}

// The token ids of a fixture's reference (tests/data/models/<fixture>/reference/tokens.json).
inline std::vector<int> referenceTokens(const QString& fixture)
{
    return referenceTokensIn(kModelFixtures + QLatin1Char('/') + fixture +
                             QStringLiteral("/reference"));
}

// P = softmax(q_h k_g^T / sqrt(d) + mask) of query head h of a captured layer, g its key/value
// head, by the definition in double: key j is visible to query i when j <= i and, with a window
// W > 0, j > i - W.
inline MatrixD attentionByHand(const LayerQkv& layer, int heads, int head, int window)
{
    const Eigen::Index d = layer.q.cols() / heads;
    const Eigen::Index group = heads / (layer.k.cols() / d);
    const MatrixD q = layer.q.middleCols(head * d, d).cast<double>();
    const MatrixD k = layer.k.middleCols(head / group * d, d).cast<double>();
    const Eigen::Index length = q.rows();
    MatrixD p = MatrixD::Zero(length, length);
    for (Eigen::Index i = 0; i < length; ++i) {
        const Eigen::Index first = window > 0 ? std::max<Eigen::Index>(0, i - window + 1) : 0;
        double largest = -std::numeric_limits<double>::infinity();
        for (Eigen::Index j = first; j <= i; ++j)
            largest = std::max(largest, (p(i, j) = q.row(i).dot(k.row(j)) / std::sqrt(double(d))));
        double sum = 0;
        for (Eigen::Index j = first; j <= i; ++j)
            sum += (p(i, j) = std::exp(p(i, j) - largest));
        p.row(i) /= sum;
    }
    return p;
}

// max |computed - expected| / max(1, max |expected|), where value(i) gives computed entry i of
// expected's C order.
template <typename Computed>
double scaledError(const NpyArray& expected, Computed&& value)
{
    double largest = 1;
    for (const double x : expected.values)
        largest = std::max(largest, std::abs(x));
    double error = 0;
    for (std::size_t i = 0; i < expected.values.size(); ++i)
        error = std::max(error, std::abs(double(value(qint64(i))) - expected.values[i]));
    return error / largest;
}

// scaledError of a captured L x (H d) matrix (head h in columns [h d, (h + 1) d)) against its
// H x L x d reference.
inline double capturedError(const NpyArray& expected, const Matrix<float>& captured)
{
    const qint64 length = expected.shape.at(1);
    const qint64 d = expected.shape.at(2);
    return scaledError(expected, [&](qint64 index) {
        const qint64 h = index / (length * d), i = (index / d) % length, j = index % d;
        return captured(i, h * d + j);
    });
}

// What is off in layer l's captured Q (L x H d), K and V (L x H_kv d) against the fixture's
// q_layer{l}.npy (H x L x d), k_layer{l}.npy and v_layer{l}.npy (H_kv x L x d): the first whose
// shape differs or whose scaledError is above tolerance, as "k layer 1: error 3e-05"; empty when
// nothing is off.
inline QString capturedQkvMismatch(const QString& fixture, const LayerQkv& layer, std::size_t l,
                                   qint64 heads, qint64 keyValueHeads, double tolerance)
{
    const qint64 length = layer.q.rows();
    const qint64 d = layer.q.cols() / heads;
    for (const auto& [symbol, matrix, count] :
         {std::tuple{QStringLiteral("q"), &layer.q, heads},
          std::tuple{QStringLiteral("k"), &layer.k, keyValueHeads},
          std::tuple{QStringLiteral("v"), &layer.v, keyValueHeads}}) {
        const NpyArray expected =
            reference(fixture, QStringLiteral("%1_layer%2.npy").arg(symbol).arg(l));
        if (expected.shape != std::vector<qint64>{count, length, d} ||
            matrix->cols() != count * d || matrix->rows() != length)
            return QStringLiteral("%1 layer %2: %3 x %4 captured, the reference's shape differs")
                .arg(symbol)
                .arg(l)
                .arg(matrix->rows())
                .arg(matrix->cols());
        const double error = capturedError(expected, *matrix);
        if (!(error <= tolerance))
            return QStringLiteral("%1 layer %2: error %3").arg(symbol).arg(l).arg(error);
    }
    return {};
}

// What is off in layer l's attention, one L x L matrix per head, against the fixture's
// attention_layer{l}.npy (H x L x L): "attention layer 1: error 3e-05" when its scaledError is
// above tolerance; empty otherwise.
template <typename AttentionMatrix>
QString attentionMismatch(const QString& fixture, const std::vector<AttentionMatrix>& attention,
                          std::size_t l, double tolerance)
{
    const qint64 length = attention.front().rows();
    const double error = scaledError(
        reference(fixture, QStringLiteral("attention_layer%1.npy").arg(l)), [&](qint64 index) {
            return attention[std::size_t(index / (length * length))]
                .data()[index % (length * length)];
        });
    if (!(error <= tolerance))
        return QStringLiteral("attention layer %1: error %2").arg(l).arg(error);
    return {};
}

// What is off in the captured layers of a model of `layerCount` layers against the fixture's
// reference: the number of layers; Q, K, V (capturedQkvMismatch, H heads each); the attention
// formed from them, P = softmax(Q_h K_h^T / sqrt(d) (+ causal mask)), against
// attention_layer{l}.npy (attentionMismatch). Empty when nothing is off.
inline QString capturedLayersMismatch(const QString& fixture, const std::vector<LayerQkv>& layers,
                                      std::size_t layerCount, qint64 heads, bool causal,
                                      double tolerance)
{
    if (layers.size() != layerCount)
        return QStringLiteral("%1 layers captured, expected %2").arg(layers.size()).arg(layerCount);
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const LayerQkv& layer = layers[l];
        if (const QString off = capturedQkvMismatch(fixture, layer, l, heads, heads, tolerance);
            !off.isEmpty())
            return off;
        const qint64 d = layer.q.cols() / heads;
        std::vector<Matrix<float>> attention;
        for (qint64 h = 0; h < heads; ++h)
            attention.push_back(materialisedAttention<float>(
                                    layer.q.middleCols(h * d, d), layer.k.middleCols(h * d, d),
                                    layer.v.middleCols(h * d, d), 1 / std::sqrt(double(d)), causal)
                                    .attention);
        if (const QString off = attentionMismatch(fixture, attention, l, tolerance); !off.isEmpty())
            return off;
    }
    return {};
}

inline QByteArray littleEndian64(quint64 value)
{
    char bytes[8];
    qToLittleEndian(value, bytes);
    return QByteArray(bytes, 8);
}

// A file: the 8-byte length of header, header, then data.
inline QByteArray safetensorsFile(const QByteArray& header, const QByteArray& data)
{
    return littleEndian64(quint64(header.size())) + header + data;
}

// One tensor of a header written by hand.
struct RawTensor {
    QString name;
    QString dtype;
    QList<qint64> shape;
    QByteArray data;
};

// A valid file holding tensors one after another in the order given.
inline QByteArray safetensorsOf(const QList<RawTensor>& tensors)
{
    QJsonObject header;
    QByteArray data;
    for (const RawTensor& tensor : tensors) {
        QJsonArray shape;
        for (const qint64 dim : tensor.shape)
            shape.append(dim);
        header.insert(tensor.name,
                      QJsonObject{{QStringLiteral("dtype"), tensor.dtype},
                                  {QStringLiteral("shape"), shape},
                                  {QStringLiteral("data_offsets"),
                                   QJsonArray{data.size(), data.size() + tensor.data.size()}}});
        data += tensor.data;
    }
    QByteArray text = QJsonDocument(header).toJson(QJsonDocument::Compact);
    text.append(QByteArray((8 - text.size() % 8) % 8, ' '));
    return safetensorsFile(text, data);
}

// The tensors of a safetensors file as RawTensor, in file order (to write it again changed).
inline QList<RawTensor> rawTensorsOf(const QString& path)
{
    const SafetensorsFile file(path);
    QFile raw(path);
    if (!raw.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    const QByteArray bytes = raw.readAll();
    const qint64 dataStart = 8 + qint64(qFromLittleEndian<quint64>(bytes.constData()));
    QList<RawTensor> tensors;
    for (const TensorEntry& entry : file.entries()) {
        RawTensor tensor{
            entry.name,
            entry.dtypeName,
            {},
            bytes.mid(dataStart + qint64(entry.begin), qint64(entry.end - entry.begin))};
        for (const std::int64_t dim : entry.shape)
            tensor.shape.append(dim);
        tensors.append(tensor);
    }
    return tensors;
}

// Damages the safetensors file at path as words say: "drop NAME" removes a tensor, "retype NAME
// DTYPE" gives it another dtype (its bytes unchanged), "reshape NAME R C" another shape of the
// same size; "truncate" cuts off the file's last 100 bytes. Returns false for other words.
inline bool damageWeights(const QString& path, const QStringList& words)
{
    if (words[0] == QLatin1String("truncate")) {
        QFile file(path);
        return file.resize(file.size() - 100);
    }
    if (words[0] != QLatin1String("drop") && words[0] != QLatin1String("retype") &&
        words[0] != QLatin1String("reshape"))
        return false;
    QList<RawTensor> tensors = rawTensorsOf(path);
    for (qsizetype i = 0; i < tensors.size(); ++i) {
        if (tensors[i].name != words[1])
            continue;
        if (words[0] == QLatin1String("drop"))
            tensors.removeAt(i);
        else if (words[0] == QLatin1String("retype"))
            tensors[i].dtype = words[2];
        else
            tensors[i].shape = {words[2].toLongLong(), words[3].toLongLong()};
        break;
    }
    writeBytes(path, safetensorsOf(tensors));
    return true;
}

// Copies the files of a fixture folder of tests/data/models (not its reference/) into dir.
inline void copyFixture(const QString& fixture, const QString& dir)
{
    const QDir source(kModelFixtures + QLatin1Char('/') + fixture);
    for (const QString& name : source.entryList(QDir::Files))
        if (!QFile::copy(source.filePath(name), dir + QLatin1Char('/') + name))
            qFatal("cannot copy %s", qPrintable(name));
}

// Rewrites the JSON object of the file at path as edit changes it.
inline void editJson(const QString& path, const std::function<void(QJsonObject&)>& edit)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    file.close();
    edit(json);
    writeBytes(path, QJsonDocument(json).toJson());
}

// Rewrites dir/config.json as edit changes it.
inline void editConfig(const QString& dir, const std::function<void(QJsonObject&)>& edit)
{
    editJson(dir + QStringLiteral("/config.json"), edit);
}

// Damages the checkpoint copied into folder as words say, in the terms its tests share: "remove
// FILE" deletes a file; "config drop KEY" removes a key of config.json, "config KEY VALUE [KEY
// VALUE ...]" sets keys (to the whole number VALUE is, or else to the string); the other words
// damage folder/model.safetensors as damageWeights says. Returns false for words none of them
// knows, and when the file to remove is not there.
inline bool damageCheckpoint(const QString& folder, const QStringList& words)
{
    if (words[0] == QLatin1String("remove"))
        return QFile::remove(folder + QLatin1Char('/') + words[1]);
    if (words[0] == QLatin1String("config") && words[1] == QLatin1String("drop")) {
        editConfig(folder, [&](QJsonObject& c) { c.remove(words[2]); });
        return true;
    }
    if (words[0] == QLatin1String("config")) {
        editConfig(folder, [&](QJsonObject& c) {
            for (qsizetype w = 1; w + 1 < words.size(); w += 2) {
                bool number = false;
                const int value = words[w + 1].toInt(&number);
                c.insert(words[w], number ? QJsonValue(value) : QJsonValue(words[w + 1]));
            }
        });
        return true;
    }
    return damageWeights(folder + QStringLiteral("/model.safetensors"), words);
}

}  // namespace attnlab::test

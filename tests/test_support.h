#pragma once

// Helpers shared by the test executables: writing files and making PNG files byte by byte, so
// that tests can make valid, truncated or lying images without QtGui; the rows of a test run on
// full and on causal attention.

#include "remedy.h"

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>
#include <QtEndian>

#include <array>
#include <Eigen/Core>

#include <functional>
#include <random>
#include <vector>

namespace attnlab::test {

// The message of the E that `action` throws; empty when it throws nothing (anything else
// propagates and fails the test).
template <typename E>
QString thrownMessage(const std::function<void()>& action)
{
    try {
        action();
    } catch (const E& error) {
        return error.message();
    }
    return {};
}

// The same, with the settings that get past the error (remediesOf) in *remedies.
template <typename E>
QString thrownMessage(const std::function<void()>& action, Remedies* remedies)
{
    try {
        action();
    } catch (const E& error) {
        *remedies = remediesOf(error);
        return error.message();
    }
    return {};
}

// Whether an error message blames `culprit` for `problem`: it starts with culprit (the file or
// folder at fault, which the messages of core's errors name first) and contains problem.
inline bool blames(const QString& message, const QString& culprit, const QString& problem)
{
    return message.startsWith(culprit) && message.contains(problem);
}

// The data of a test run once on full and once on causal attention: a bool column "causal", a
// row `fullName` (false), then a row "causal" (true).
inline void addFullAndCausalRows(const char* fullName = "full")
{
    QTest::addColumn<bool>("causal");
    QTest::newRow(fullName) << false;
    QTest::newRow("causal") << true;
}

// Values f(p) for p = 0, 1, ... in C order: element (h, i, j) of a (H, L, d) array is at
// p = (h L + i) d + j.
inline std::vector<double> arrayValues(const std::vector<qint64>& shape,
                                       const std::function<double(qint64)>& f)
{
    qint64 count = 1;
    for (const qint64 dim : shape)
        count *= dim;
    std::vector<double> values(std::size_t(count), 0.0);
    for (qint64 p = 0; p < count; ++p)
        values[std::size_t(p)] = f(p);
    return values;
}

// A rows x cols matrix (a MatrixD, spelled out: this header does not bring core's types, which
// cli_support.h shadows) of uniform values in [0, 1), fixed by `seed`: the heatmaps' tests and
// benchmark draw their matrices so.
inline Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> uniformMatrix(
    int rows, int cols, unsigned seed)
{
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> matrix(rows, cols);
    for (Eigen::Index i = 0; i < matrix.size(); ++i)
        matrix.data()[i] = uniform(generator);
    return matrix;
}

// The bytes of the file at path; empty when it cannot be read (or does not exist).
inline QByteArray readBytes(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The bytes of a file the test needs; stops the test program when it cannot be read.
inline QByteArray fileBytes(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return file.readAll();
}

// Writes bytes to path, or stops the test program.
inline void writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

// The CRC-32 of PNG chunks (ISO 3309, reflected polynomial 0xEDB88320), bit by bit.
inline quint32 crc32(const QByteArray& bytes)
{
    quint32 crc = 0xFFFFFFFFu;
    for (const char byte : bytes) {
        crc ^= quint8(byte);
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 1u) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return crc ^ 0xFFFFFFFFu;
}

inline QByteArray bigEndian32(quint32 value)
{
    char bytes[4];
    qToBigEndian(value, bytes);
    return QByteArray(bytes, 4);
}

// One PNG chunk: length, type, data, CRC-32 of type and data.
inline QByteArray pngChunk(const char* type, const QByteArray& data)
{
    const QByteArray typeAndData = QByteArray(type, 4) + data;
    return bigEndian32(quint32(data.size())) + typeAndData + bigEndian32(crc32(typeAndData));
}

// A PNG whose header declares width x height 8-bit RGB pixels, holding the given scanlines
// (each a filter byte and 3 bytes a pixel), compressed as one IDAT chunk.
inline QByteArray pngFile(quint32 width, quint32 height, const QByteArray& scanlines)
{
    QByteArray header = bigEndian32(width) + bigEndian32(height);
    header.append(char(8)).append(char(2)).append(char(0)).append(char(0)).append(char(0));
    // qCompress gives a 4-byte length then a zlib stream, which is what IDAT holds.
    return QByteArray("\x89PNG\r\n\x1a\n", 8) + pngChunk("IHDR", header) +
           pngChunk("IDAT", qCompress(scanlines).mid(4)) + pngChunk("IEND", QByteArray());
}

// A PNG of width x height pixels, pixel (x, y) of colour rgb(x, y).
inline QByteArray pngImage(int width, int height,
                           const std::function<std::array<quint8, 3>(int, int)>& rgb)
{
    QByteArray scanlines;
    for (int y = 0; y < height; ++y) {
        scanlines.append(char(0));  // filter type None
        for (int x = 0; x < width; ++x)
            for (const quint8 channel : rgb(x, y))
                scanlines.append(char(channel));
    }
    return pngFile(quint32(width), quint32(height), scanlines);
}

// A PNG that declares width x height pixels but holds the data of one 16-pixel row only: a
// decoder that trusts the header would try to allocate width x height pixels.
inline QByteArray pngDeclaring(quint32 width, quint32 height)
{
    return pngFile(width, height, QByteArray(1 + 3 * 16, '\0'));
}

}  // namespace attnlab::test

#pragma once

// What the tests of the input layer share: comparisons of matrices, varied texts, noise images,
// arrays given by a formula, and a fixture that writes arrays and files to a temporary folder.

#include "errors.h"
#include "ui/images/image_loader.h"
#include "inputs/inputs.h"
#include "io/npy.h"
#include "inputs/text.h"
#include "test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace attnlab::test {

// True when a and b have the same shape and the same bits.
inline bool sameBits(const MatrixD& a, const MatrixD& b)
{
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), sizeof(double) * std::size_t(a.size())) == 0;
}

// max |a - b| / max(|b|, tiny) over the entries; infinity when the shapes differ.
inline double relativeDifference(const MatrixD& a, const MatrixD& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    const double scale = std::max(b.cwiseAbs().maxCoeff(), 1e-300);
    return (a - b).cwiseAbs().maxCoeff() / scale;
}

// mean_i s |x_i|^2 over the rows of x with s = 1/sqrt(d), d its number of columns.
inline double meanScaledSquaredNorm(const MatrixD& x)
{
    return x.rowwise().squaredNorm().mean() / std::sqrt(double(x.cols()));
}

// A text of `count` words from a vocabulary of a few hundred made-up words, in a scrambled order,
// so that both the token embeddings and the positions vary.
inline QString variedText(int count)
{
    static const char* const syllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be",
                                            "da", "fu", "go", "hi", "ju", "pe", "ze", "wa"};
    constexpr int n = int(sizeof(syllables) / sizeof(syllables[0]));
    QStringList words;
    for (int i = 0; i < count; ++i) {
        const int a = (i * 7 + 3) % n;
        const int b = (i * 13 / 5) % n;
        words.append(QString::fromLatin1(syllables[a]) + QString::fromLatin1(syllables[b]) +
                     (i % 3 == 0 ? QStringLiteral("n") : QString()));
    }
    return words.join(QLatin1Char(' '));
}

// An image of deterministic pseudo-random RGB values in [0, 1] (a linear congruential generator,
// so the pixels depend on nothing in the code under test).
inline ImagePixels noiseImage(int width, int height, std::uint32_t seed = 1)
{
    ImagePixels image;
    image.width = width;
    image.height = height;
    image.rgb.resize(std::size_t(width) * height * 3);
    std::uint32_t state = seed;
    for (float& value : image.rgb) {
        state = state * 1664525u + 1013904223u;
        value = float(state >> 8) / float(1u << 24);
    }
    return image;
}

// A fixture for tests that read files: a temporary folder, arrays and raw bytes written to it.
class InputsFixture : public QObject {
protected:
    // Writes an array given by f into the temporary folder as `name` (float64) and returns its
    // path.
    QString saveArray(const QString& name, const std::vector<qint64>& shape,
                      const std::function<double(qint64)>& f)
    {
        const QString path = m_dir.filePath(name);
        const std::vector<double> values = arrayValues(shape, f);
        saveNpy(path, values.data(), shape, NpyDtype::Float64);
        return path;
    }

    QString writeTemp(const QString& name, const QByteArray& bytes)
    {
        const QString path = m_dir.filePath(name);
        writeBytes(path, bytes);
        return path;
    }

    QTemporaryDir m_dir;
};

}  // namespace attnlab::test

#pragma once

// What the tests of the command line share: running the program, reading what it wrote, the
// formulas' error measures, and a fixture of temporary folders and arrays.

#include "app_process.h"
#include "io/npy.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include <Eigen/Core>

#ifdef Q_OS_UNIX
#include <sys/resource.h>
#endif

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace attnlab {
QString defaultText();  // core/inputs/inputs.h, whose Matrix would clash with these tests'
}

namespace attnlab::test {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline const QString kApp = QStringLiteral(ATTNLAB_APP);

// Every file a favor-* run writes.
inline const QStringList kAllFiles = {
    "attention_exact.npy", "attention_approx.npy", "kernel_exact.npy", "kernel_approx.npy",
    "output_exact.npy",    "output_approx.npy",    "features_q.npy",   "features_k.npy",
    "projection.npy",      "metrics.json"};

inline const QStringList kMetricKeys = {
    "max_abs", "mean_abs",   "rel_frobenius_attention", "rel_frobenius_output", "mean_tv",
    "mean_kl", "kernel_mse", "nonpositive_rows"};

// Runs attention-lab with `arguments`, in `workingDirectory` when given, for at most 60 s.
// childSetup, when given, runs in the child before the program starts (Unix only).
inline AppRun runApp(const QStringList& arguments, const QString& workingDirectory = QString(),
                     const std::function<void()>& childSetup = {})
{
    return runAttentionLab(arguments, workingDirectory, 60000, childSetup);
}

// "compute" followed by the arguments.
inline AppRun compute(const QStringList& arguments, const QString& workingDirectory = QString())
{
    return runApp(QStringList{"compute"} + arguments, workingDirectory);
}

inline QJsonObject readJson(const QString& path)
{
    return QJsonDocument::fromJson(readBytes(path)).object();
}

// The contents of every file in `directory`, by name (sub-directories as empty entries).
inline std::map<QString, QByteArray> snapshot(const QString& directory)
{
    std::map<QString, QByteArray> files;
    const QFileInfoList entries =
        QDir(directory).entryInfoList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
    for (const QFileInfo& entry : entries)
        files[entry.fileName()] = entry.isFile() ? readBytes(entry.filePath()) : QByteArray();
    return files;
}

inline QStringList entriesOf(const QString& directory)
{
    return QDir(directory).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot,
                                     QDir::Name);
}

inline NpyArray readArray(const QString& path)
{
    NpyReadOptions options;
    options.requireFinite = false;
    return readNpy(path, options);
}

// Slice h of a 3-D array, or the array itself when it is 2-D (h = 0).
inline Matrix sliceOf(const NpyArray& array, qint64 h = 0)
{
    const bool threeD = array.shape.size() == 3;
    const qint64 rows = array.shape[threeD ? 1 : 0];
    const qint64 cols = array.shape.size() >= 2 ? array.shape[threeD ? 2 : 1] : 1;
    return Eigen::Map<const Matrix>(array.values.data() + h * rows * cols, rows, cols);
}

inline std::vector<qint64> shape(std::initializer_list<qint64> dims)
{
    return std::vector<qint64>(dims);
}

// max over the entries of |a - b| / max(|b|, floor).
inline double maxRelativeError(const Matrix& a, const Matrix& b, double floor = 1e-300)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j)
            worst =
                std::max(worst, std::abs(a(i, j) - b(i, j)) / std::max(std::abs(b(i, j)), floor));
    return worst;
}

inline double maxAbsError(const Matrix& a, const Matrix& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    return (a - b).cwiseAbs().maxCoeff();
}

// Row-normalises a: row i divided by its sum.
inline Matrix rowNormalised(const Matrix& a)
{
    Matrix p = a;
    for (Eigen::Index i = 0; i < p.rows(); ++i)
        p.row(i) /= p.row(i).sum();
    return p;
}

inline std::array<quint8, 3> noisePixel(int x, int y)
{
    const quint32 h = quint32(x) * 2654435761u ^ quint32(y) * 40503u;
    return {quint8(h >> 8), quint8(h >> 16), quint8(h >> 24)};
}

// A fixture for tests that write files: a temporary folder for the run, new empty folders in it
// and arrays saved in it.
class CliFixture : public QObject {
protected:
    // A new empty folder inside the temporary folder.
    QString newFolder(const QString& name)
    {
        const QString path = m_dir.filePath(QStringLiteral("%1_%2").arg(name).arg(++m_folders));
        if (!QDir().mkpath(path))
            qFatal("cannot create %s", qPrintable(path));
        return path;
    }

    // Saves an array f(0), f(1), ... (C order) as float64 and returns its path.
    QString saveArray(const QString& name, const std::vector<qint64>& arrayShape,
                      const std::function<double(qint64)>& f)
    {
        const std::vector<double> values = arrayValues(arrayShape, f);
        const QString path = m_dir.filePath(name);
        saveNpy(path, values.data(), arrayShape, NpyDtype::Float64);
        return path;
    }

    // The fixture is usable and the program is there.
    void checkFixture()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY2(QFileInfo(kApp).isExecutable(), qPrintable(kApp));
    }

    QTemporaryDir m_dir;
    int m_folders = 0;
};

}  // namespace attnlab::test

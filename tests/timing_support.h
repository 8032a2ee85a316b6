#pragma once

// What the tests of the timing sweep share: synthetic sweep results, the CSV's expected form.

#include "allocation_peak.h"
#include "errors.h"
#include "attention/random.h"
#include "sessions/session.h"
#include "test_support.h"
#include "sweeps/timing_sweep.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

namespace attnlab::test {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline const QByteArray kHeader =
    "method,causal,L,d,m,threads,reps,seconds_median,seconds_min,seconds_max,gflops,peak_bytes,"
    "status";

inline bool sameNumber(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// A point of a hand-made result: Ok with the given median time, or NaN times with another status.
inline SweepPoint point(TimedMethod method, Eigen::Index length, double seconds,
                        PointStatus status = PointStatus::Ok)
{
    SweepPoint p;
    p.method = method;
    p.length = length;
    const double time = status == PointStatus::Ok ? seconds : kNaN;
    p.secondsMedian = p.secondsMin = p.secondsMax = time;
    p.gflops = status == PointStatus::Ok ? 1.0 : kNaN;
    p.workingSetBytes = 1000;
    p.peakBytes = kNaN;
    p.status = status;
    return p;
}

inline const TimedMethod kExact{Method::ExactStreaming, false};
inline const TimedMethod kFavor{Method::FavorPositive, false};

// A result with the two curves t_exact(L) and t_linear(L) at the given lengths.
inline SweepResult twoCurves(const std::vector<Eigen::Index>& lengths,
                             const std::function<double(double)>& exact,
                             const std::function<double(double)>& linear)
{
    SweepResult result;
    result.spec.methods = {kExact, kFavor};
    result.spec.lengths = lengths;
    for (const Eigen::Index length : lengths) {
        result.points.push_back(point(kExact, length, exact(double(length))));
        result.points.push_back(point(kFavor, length, linear(double(length))));
    }
    return result;
}

// What is wrong with a sweep CSV (empty when nothing): a first line "# sgemm_gflops=<positive
// number>", the documented header, `rows` rows of 13 fields: a method name, causal 0/1, integer
// L, d, threads, reps, m integer or empty, times and GFLOP/s positive numbers (min <= median <=
// max) for ok rows and empty otherwise, peak bytes an integer or empty, a documented status.
inline QString csvProblem(const QByteArray& csv, int rows)
{
    if (!csv.endsWith('\n'))
        return QStringLiteral("no final newline");
    const QList<QByteArray> lines = csv.chopped(1).split('\n');
    static const QRegularExpression rate(QStringLiteral("^# sgemm_gflops=([-+0-9.eE]+)$"));
    const QRegularExpressionMatch match = rate.match(QString::fromLatin1(lines.value(0)));
    bool ok = false;
    if (!match.hasMatch() || !(match.captured(1).toDouble(&ok) > 0) || !ok)
        return QStringLiteral("first line: %1").arg(QString::fromLatin1(lines.value(0)));
    if (lines.value(1) != kHeader)
        return QStringLiteral("header: %1").arg(QString::fromLatin1(lines.value(1)));
    if (lines.size() != rows + 2)
        return QStringLiteral("%1 rows instead of %2").arg(lines.size() - 2).arg(rows);
    const auto isInteger = [](const QByteArray& field) {
        bool ok = false;
        return field.toLongLong(&ok) >= 0 && ok;
    };
    const auto positive = [](const QByteArray& field) {
        bool ok = false;
        const double value = field.toDouble(&ok);
        return ok && value > 0 && std::isfinite(value);
    };
    for (int r = 2; r < lines.size(); ++r) {
        const QList<QByteArray> f = lines[r].split(',');
        const QString where = QStringLiteral("row %1 \"%2\": ").arg(r - 1).arg(lines[r]);
        if (f.size() != 13)
            return where + QStringLiteral("%1 fields").arg(f.size());
        Method algorithm;
        if (!parseMethod(QString::fromLatin1(f[0]), &algorithm))
            return where + QStringLiteral("method");
        if (f[1] != "0" && f[1] != "1")
            return where + QStringLiteral("causal");
        for (const int i : {2, 3, 5, 6})
            if (!isInteger(f[i]) || f[i].toLongLong() < 1)
                return where + QStringLiteral("field %1 is not a positive integer").arg(i + 1);
        if (!f[4].isEmpty() && !isInteger(f[4]))
            return where + QStringLiteral("m");
        PointStatus status;
        if (!parsePointStatus(QString::fromLatin1(f[12]), &status))
            return where + QStringLiteral("status");
        if (status == PointStatus::Ok) {
            for (const int i : {7, 8, 9, 10})
                if (!positive(f[i]))
                    return where + QStringLiteral("field %1 is not a positive number").arg(i + 1);
            if (!(f[8].toDouble() <= f[7].toDouble() && f[7].toDouble() <= f[9].toDouble()))
                return where + QStringLiteral("not min <= median <= max");
            if (!f[11].isEmpty() && !isInteger(f[11]))
                return where + QStringLiteral("peak_bytes");
        } else {
            for (const int i : {7, 8, 9, 10, 11})
                if (!f[i].isEmpty())
                    return where + QStringLiteral("field %1 should be empty").arg(i + 1);
        }
    }
    return QString();
}

}  // namespace attnlab::test

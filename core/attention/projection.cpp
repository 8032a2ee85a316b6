#include "attention/projection.h"

#include "named_values.h"
#include "attention/random.h"
#include "cancellation.h"

#include <cmath>
#include <vector>

namespace attnlab {

namespace {

// Rows of W drawn between two polls of throwIfCancelled() in the row-by-row loops: a few
// hundred microseconds of work.
constexpr int kRowsBetweenPolls = 1024;

// Q of the Householder QR decomposition G = Q R of the d x d row-major matrix g, with column j
// of Q multiplied by sign(R_jj). Plain loops in a fixed order (see the header).
std::vector<double> signCorrectedQ(std::vector<double> g, int d)
{
    std::vector<std::vector<double>> reflectors(d);
    std::vector<double> diagonalSign(d, 1.0);
    for (int k = 0; k < d; ++k) {
        double norm2 = 0.0;
        for (int i = k; i < d; ++i)
            norm2 += g[i * d + k] * g[i * d + k];
        const double norm = std::sqrt(norm2);
        const double x0 = g[k * d + k];
        // H_k x = alpha e_1 with alpha = -sign(x0) |x|, so that v = x - alpha e_1 does not cancel.
        const double alpha = x0 >= 0.0 ? -norm : norm;
        diagonalSign[k] = alpha >= 0.0 ? 1.0 : -1.0;
        std::vector<double>& v = reflectors[k];
        v.assign(d - k, 0.0);
        for (int i = k; i < d; ++i)
            v[i - k] = g[i * d + k];
        v[0] -= alpha;
        double vNorm2 = 0.0;
        for (const double vi : v)
            vNorm2 += vi * vi;
        if (vNorm2 == 0.0) {
            v.clear();  // the column is already a multiple of e_1: H_k = I
            continue;
        }
        const double vNorm = std::sqrt(vNorm2);
        for (double& vi : v)
            vi /= vNorm;
        for (int j = k; j < d; ++j) {  // G[k:, k:] -= 2 v (v^T G[k:, k:])
            double dot = 0.0;
            for (int i = k; i < d; ++i)
                dot += v[i - k] * g[i * d + j];
            for (int i = k; i < d; ++i)
                g[i * d + j] -= 2.0 * v[i - k] * dot;
        }
    }
    // Q = H_0 H_1 ... H_{d-1} I, applied from the right-most reflector.
    std::vector<double> q(std::size_t(d) * d, 0.0);
    for (int i = 0; i < d; ++i)
        q[i * d + i] = 1.0;
    for (int k = d - 1; k >= 0; --k) {
        const std::vector<double>& v = reflectors[k];
        if (v.empty())
            continue;
        for (int j = 0; j < d; ++j) {
            double dot = 0.0;
            for (int i = k; i < d; ++i)
                dot += v[i - k] * q[i * d + j];
            for (int i = k; i < d; ++i)
                q[i * d + j] -= 2.0 * v[i - k] * dot;
        }
    }
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j)
            q[i * d + j] *= diagonalSign[j];
    return q;
}

}  // namespace

MatrixD randomProjection(int m, int d, ProjectionKind kind, RowNorm rowNorm, std::uint64_t seed,
                         std::uint64_t substream)
{
    Rng rng(seed, RandomStream::Projection, substream);
    MatrixD w(m, d);
    if (kind == ProjectionKind::Iid) {
        for (int i = 0; i < m; ++i) {
            if (i % kRowsBetweenPolls == 0)
                throwIfCancelled();
            for (int j = 0; j < d; ++j)
                w(i, j) = rng.normal();
        }
        if (rowNorm == RowNorm::SqrtD) {
            for (int i = 0; i < m; ++i) {
                double norm2 = 0.0;
                for (int j = 0; j < d; ++j)
                    norm2 += w(i, j) * w(i, j);
                const double factor = std::sqrt(double(d)) / std::sqrt(norm2);
                for (int j = 0; j < d; ++j)
                    w(i, j) *= factor;
            }
        }
        return w;
    }

    for (int blockStart = 0; blockStart < m; blockStart += d) {
        throwIfCancelled();  // one QR decomposition of a d x d block: about 3 d^3 flops
        std::vector<double> g(std::size_t(d) * d);
        for (double& x : g)
            x = rng.normal();
        const std::vector<double> q = signCorrectedQ(std::move(g), d);
        const int rows = std::min(d, m - blockStart);
        if (kind == ProjectionKind::Simplex && d > 1) {
            // Row r of S Q^T: (Q_jr - mean_k Q_jk) / sqrt(1 - 1/d) for each column j.
            const double norm = std::sqrt(1.0 - 1.0 / d);
            for (int j = 0; j < d; ++j) {
                double mean = 0.0;
                for (int k = 0; k < d; ++k)
                    mean += q[j * d + k];
                mean /= d;
                for (int r = 0; r < rows; ++r)
                    w(blockStart + r, j) = (q[j * d + r] - mean) / norm;
            }
            continue;
        }
        for (int r = 0; r < rows; ++r)  // row r of the block is column r of Q
            for (int j = 0; j < d; ++j)
                w(blockStart + r, j) = q[j * d + r];
    }
    for (int i = 0; i < m; ++i) {
        if (i % kRowsBetweenPolls == 0)
            throwIfCancelled();
        double length = std::sqrt(double(d));
        if (rowNorm == RowNorm::Chi) {
            double norm2 = 0.0;
            for (int j = 0; j < d; ++j) {
                const double g = rng.normal();
                norm2 += g * g;
            }
            length = std::sqrt(norm2);
        }
        for (int j = 0; j < d; ++j)
            w(i, j) *= length;
    }
    return w;
}

const std::vector<ProjectionKind>& projectionKinds()
{
    static const std::vector<ProjectionKind> kinds{ProjectionKind::Orthogonal, ProjectionKind::Iid,
                                                   ProjectionKind::Simplex};
    return kinds;
}

QString projectionKindName(ProjectionKind kind)
{
    switch (kind) {
        case ProjectionKind::Orthogonal: return QStringLiteral("orthogonal");
        case ProjectionKind::Iid: return QStringLiteral("iid");
        case ProjectionKind::Simplex: return QStringLiteral("simplex");
    }
    Q_UNREACHABLE();
}

QString rowNormName(RowNorm norm)
{
    return norm == RowNorm::Chi ? QStringLiteral("chi") : QStringLiteral("sqrt-d");
}

bool parseProjectionKind(const QString& name, ProjectionKind* kind)
{
    return parseName(name, projectionKinds(), projectionKindName, kind);
}

bool parseRowNorm(const QString& name, RowNorm* norm)
{
    return parseName(name, {RowNorm::Chi, RowNorm::SqrtD}, rowNormName, norm);
}

}  // namespace attnlab

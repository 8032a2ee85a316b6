#include "attention/metrics.h"

#include "named_values.h"
#include <algorithm>
#include <cmath>

namespace attnlab {

MatrixD attentionError(const MatrixD& exact, const MatrixD& approx, ErrorKind kind)
{
    return exact.binaryExpr(
        approx, [kind](double p, double pApprox) { return attentionErrorOf(p, pApprox, kind); });
}

QString errorKindName(ErrorKind kind)
{
    switch (kind) {
        case ErrorKind::Signed: return QStringLiteral("signed");
        case ErrorKind::Absolute: return QStringLiteral("absolute");
        case ErrorKind::Relative: return QStringLiteral("relative");
    }
    Q_UNREACHABLE();
}

bool parseErrorKind(const QString& name, ErrorKind* kind)
{
    return parseName(name, {ErrorKind::Signed, ErrorKind::Absolute, ErrorKind::Relative},
                     errorKindName, kind);
}

template <typename T>
void MetricsAccumulator::addAttentionRows(Eigen::Index begin, bool causal,
                                          const Eigen::Ref<const Matrix<T>>& p,
                                          const Eigen::Ref<const Matrix<T>>& pApprox,
                                          const MatrixD* kernel, const MatrixD* kernelApprox,
                                          ExactRowSide exactSide)
{
    m_haveAttention = true;
    m_properties.addRows<T>(begin, causal, p, pApprox, exactSide);
    const double largestFinite = double(std::numeric_limits<T>::max());
    // Clamping at T's smallest subnormal changes no positive value, and makes P_ij = 0 add
    // P^_ij to the KL sum (0 times a finite logarithm, whatever P^_ij is).
    constexpr double tiny = std::numeric_limits<T>::denorm_min();
    // Row by row: one fused loop over the unmasked entries that the compiler vectorises (sums in
    // double), then the logarithms of the KL terms as one vectorised array expression.
    Eigen::ArrayXd exact(p.cols()), approx(p.cols()), ratio(p.cols());
    for (Eigen::Index r = 0; r < p.rows(); ++r) {
        const Eigen::Index visible = causal ? std::min(p.cols(), begin + r + 1) : p.cols();
        const T* pRow = p.row(r).data();
        const T* pApproxRow = pApprox.row(r).data();
        double* exactRow = exact.data();
        double* approxRow = approx.data();
        double* ratioRow = ratio.data();
        double rowAbs = 0, rowMax = 0, squaredError = 0, squaredExact = 0;
        int undefinedKl = 0;
#pragma omp simd reduction(+ : rowAbs, squaredError, squaredExact) reduction(max : rowMax) \
    reduction(| : undefinedKl)
        for (Eigen::Index j = 0; j < visible; ++j) {
            const double e = double(pRow[j]);
            const double a = double(pApproxRow[j]);
            const double error = std::abs(a - e);
            rowAbs += error;
            rowMax = std::max(rowMax, error);
            squaredError += error * error;
            squaredExact += e * e;
            undefinedKl |= int((e > 0) & (a <= 0));
            exactRow[j] = e;
            approxRow[j] = a;
            // In float the ratio P_ij / P^_ij stays finite in double: one logarithm serves.
            ratioRow[j] = std::is_same_v<T, float> ? std::max(e, tiny) / std::max(a, tiny)
                                                   : std::max(a, tiny);
        }
        m_maxAbs = std::max(m_maxAbs, rowMax);
        m_sumAbs += rowAbs;
        m_sumTotalVariation += rowAbs / 2;
        m_sumSquaredError += squaredError;
        m_sumSquaredExact += squaredExact;
        if (undefinedKl)
            m_klDefined = false;
        // The generalised KL's terms P_ij log(P_ij / P^_ij) - P_ij + P^_ij are each >= 0, so the
        // sum is >= 0 (up to rounding) also where P^'s rows do not sum to 1.
        if (m_klDefined) {
            const auto e = exact.head(visible);
            const auto a = approx.head(visible);
            if constexpr (std::is_same_v<T, float>)
                m_sumKl += (e * ratio.head(visible).log() - e + a).sum();
            else  // P_ij / P^_ij could overflow (P^_ij subnormal): a difference of logarithms
                m_sumKl += (e * (e.max(tiny).log() - ratio.head(visible).log()) - e + a).sum();
        }
        m_entries += visible;
        ++m_rows;
        if (kernel && kernelApprox) {
            m_haveKernel = true;
            const double* kRow = kernel->row(r).data();
            const double* kApproxRow = kernelApprox->row(r).data();
            double squaredKernelError = 0;
            qint64 overflow = 0;
#pragma omp simd reduction(+ : squaredKernelError, overflow)
            for (Eigen::Index j = 0; j < visible; ++j) {
                const double k = kRow[j];
                const double kApprox = kApproxRow[j];
                // Counted unless both are within the range (NaN is not); & of ints, not &&,
                // keeps the vectorised loop free of branches (clang warns on & of bools).
                overflow += 1 - (int(std::abs(k) <= largestFinite) &
                                 int(std::abs(kApprox) <= largestFinite));
                squaredKernelError += (kApprox - k) * (kApprox - k);
            }
            m_kernelOverflow += overflow;
            m_kernelSumSquaredError += squaredKernelError;
            m_kernelEntries += visible;
        }
    }
}

void MetricsAccumulator::addOutputs(const MatrixD& output, const MatrixD& outputApprox)
{
    m_haveOutput = true;
    m_outputSquaredError += (outputApprox - output).squaredNorm();
    m_outputSquared += output.squaredNorm();
}

void MetricsAccumulator::add(const MetricsAccumulator& other)
{
    m_haveAttention = m_haveAttention || other.m_haveAttention;
    m_maxAbs = std::max(m_maxAbs, other.m_maxAbs);
    m_sumAbs += other.m_sumAbs;
    m_sumSquaredError += other.m_sumSquaredError;
    m_sumSquaredExact += other.m_sumSquaredExact;
    m_sumTotalVariation += other.m_sumTotalVariation;
    m_sumKl += other.m_sumKl;
    m_klDefined = m_klDefined && other.m_klDefined;
    m_entries += other.m_entries;
    m_rows += other.m_rows;
    m_haveKernel = m_haveKernel || other.m_haveKernel;
    m_kernelSumSquaredError += other.m_kernelSumSquaredError;
    m_kernelEntries += other.m_kernelEntries;
    m_kernelOverflow += other.m_kernelOverflow;
    m_haveOutput = m_haveOutput || other.m_haveOutput;
    m_outputSquaredError += other.m_outputSquaredError;
    m_outputSquared += other.m_outputSquared;
    m_nonPositiveRows += other.m_nonPositiveRows;
    m_properties.add(other.m_properties);
}

AttentionMetrics MetricsAccumulator::metrics() const
{
    AttentionMetrics metrics;
    metrics.properties = m_properties.properties();
    if (m_haveAttention && m_rows > 0) {
        metrics.maxAbsError = m_maxAbs;
        metrics.meanAbsError = m_sumAbs / double(m_entries);
        metrics.relFrobeniusAttention = std::sqrt(m_sumSquaredError / m_sumSquaredExact);
        metrics.meanTotalVariation = m_sumTotalVariation / double(m_rows);
        // Every term of the generalised KL is >= 0; rounding can leave the sum a hair below zero
        // where P^ = P.
        if (m_klDefined)
            metrics.meanKl = std::max(0.0, m_sumKl / double(m_rows));
    }
    if (m_haveKernel && m_kernelEntries > 0 && m_kernelOverflow == 0)
        metrics.kernelMse = m_kernelSumSquaredError / double(m_kernelEntries);
    if (m_haveOutput && m_outputSquared > 0)
        metrics.relFrobeniusOutput = std::sqrt(m_outputSquaredError / m_outputSquared);
    metrics.nonPositiveRows = m_nonPositiveRows;
    metrics.kernelOverflow = m_kernelOverflow;
    return metrics;
}

template void MetricsAccumulator::addAttentionRows<float>(Eigen::Index, bool,
                                                          const Eigen::Ref<const Matrix<float>>&,
                                                          const Eigen::Ref<const Matrix<float>>&,
                                                          const MatrixD*, const MatrixD*,
                                                          ExactRowSide);
template void MetricsAccumulator::addAttentionRows<double>(Eigen::Index, bool,
                                                           const Eigen::Ref<const MatrixD>&,
                                                           const Eigen::Ref<const MatrixD>&,
                                                           const MatrixD*, const MatrixD*,
                                                           ExactRowSide);

}  // namespace attnlab

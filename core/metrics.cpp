#include "metrics.h"

#include <cmath>

namespace attnlab {

MatrixD attentionError(const MatrixD& exact, const MatrixD& approx, ErrorKind kind)
{
    switch (kind) {
        case ErrorKind::Signed: return approx - exact;
        case ErrorKind::Absolute: return (approx - exact).cwiseAbs();
        case ErrorKind::Relative:
            return (exact.array() > 0)
                .select((approx - exact).cwiseAbs().array() / exact.array(), 0.0)
                .matrix();
    }
    Q_UNREACHABLE();
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
    for (const ErrorKind candidate : {ErrorKind::Signed, ErrorKind::Absolute, ErrorKind::Relative}) {
        if (errorKindName(candidate) == name) {
            *kind = candidate;
            return true;
        }
    }
    return false;
}

template <typename T>
void MetricsAccumulator::addAttentionRows(Eigen::Index begin, bool causal, const Matrix<T>& p,
                                          const Matrix<T>& pApprox, const MatrixD* kernel,
                                          const MatrixD* kernelApprox)
{
    m_haveAttention = true;
    const double largestFinite = double(std::numeric_limits<T>::max());
    // Row by row, as vectorised array expressions over the unmasked entries of the row (a row
    // stays in the L1 cache across the few passes).
    Eigen::ArrayXd exact(p.cols()), approx(p.cols()), error(p.cols());
    for (Eigen::Index r = 0; r < p.rows(); ++r) {
        const Eigen::Index visible = causal ? std::min(p.cols(), begin + r + 1) : p.cols();
        auto e = exact.head(visible);
        auto a = approx.head(visible);
        auto err = error.head(visible);
        e = p.row(r).head(visible).template cast<double>().transpose().array();
        a = pApprox.row(r).head(visible).template cast<double>().transpose().array();
        err = (a - e).abs();
        const double rowAbs = err.sum();
        m_maxAbs = std::max(m_maxAbs, err.maxCoeff());
        m_sumAbs += rowAbs;
        m_sumTotalVariation += rowAbs / 2;
        m_sumSquaredError += err.square().sum();
        m_sumSquaredExact += e.square().sum();
        if (m_klDefined) {
            if (((e > 0) && (a <= 0)).any())
                m_klDefined = false;
            else  // P_ij = 0 adds 0; log P_ij - log P^_ij stays finite where P_ij / P^_ij would
                  // overflow (P^_ij subnormal)
                m_sumKl += (e > 0).select(e * (e.log() - a.log()), 0.0).sum();
        }
        m_entries += visible;
        ++m_rows;
        if (kernel && kernelApprox) {
            m_haveKernel = true;
            const auto k = kernel->row(r).head(visible).array();
            const auto kApprox = kernelApprox->row(r).head(visible).array();
            m_kernelOverflow += qint64(
                (!((k.abs() <= largestFinite) && (kApprox.abs() <= largestFinite))).count());
            m_kernelSumSquaredError += (kApprox - k).square().sum();
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
}

AttentionMetrics MetricsAccumulator::metrics() const
{
    AttentionMetrics metrics;
    if (m_haveAttention && m_rows > 0) {
        metrics.maxAbsError = m_maxAbs;
        metrics.meanAbsError = m_sumAbs / double(m_entries);
        metrics.relFrobeniusAttention = std::sqrt(m_sumSquaredError / m_sumSquaredExact);
        metrics.meanTotalVariation = m_sumTotalVariation / double(m_rows);
        if (m_klDefined)
            metrics.meanKl = m_sumKl / double(m_rows);
    }
    if (m_haveKernel && m_kernelEntries > 0)
        metrics.kernelMse = m_kernelSumSquaredError / double(m_kernelEntries);
    if (m_haveOutput && m_outputSquared > 0)
        metrics.relFrobeniusOutput = std::sqrt(m_outputSquaredError / m_outputSquared);
    metrics.nonPositiveRows = m_nonPositiveRows;
    metrics.kernelOverflow = m_kernelOverflow;
    return metrics;
}

template void MetricsAccumulator::addAttentionRows<float>(Eigen::Index, bool,
                                                          const Matrix<float>&,
                                                          const Matrix<float>&, const MatrixD*,
                                                          const MatrixD*);
template void MetricsAccumulator::addAttentionRows<double>(Eigen::Index, bool,
                                                           const Matrix<double>&,
                                                           const Matrix<double>&, const MatrixD*,
                                                           const MatrixD*);

}  // namespace attnlab

#pragma once

#include "attention/row_properties.h"
#include "types.h"

#include <QString>
#include <QtGlobal>

#include <cmath>
#include <limits>

namespace attnlab {

// How far the approximation is from exact attention. A value that does not apply (no P^ for the
// exact method, KL where P^ has non-positive entries) is NaN and is written as null.
struct AttentionMetrics {
    static constexpr double notApplicable = std::numeric_limits<double>::quiet_NaN();

    double maxAbsError = notApplicable;            // max_ij |P^_ij - P_ij|
    double meanAbsError = notApplicable;           // mean |P^_ij - P_ij| over the unmasked entries
    double relFrobeniusAttention = notApplicable;  // |P^ - P|_F / |P|_F
    double relFrobeniusOutput = notApplicable;     // |O^ - O|_F / |O|_F
    double meanTotalVariation = notApplicable;     // mean_i 1/2 sum_j |P^_ij - P_ij|
    double meanKl = notApplicable;                 // mean_i sum_j [P log(P/P^) - P + P^]_ij
    // mean (A^_ij - A_ij)^2 over the unmasked entries; n/a when an entry of A or A^ is beyond the
    // range of the chosen precision (kernelOverflow), as the kernel files then hold inf
    double kernelMse = notApplicable;
    qint64 nonPositiveRows = 0;  // rows whose denominator is <= 0
    qint64 kernelOverflow = 0;   // entries of A or A^ beyond the range of the chosen precision
    // Entropy of the rows and monotonicity in q.k (row_properties.h).
    RowProperties properties;
};

enum class ErrorKind {
    Signed,    // P^_ij - P_ij
    Absolute,  // |P^_ij - P_ij|
    Relative,  // |P^_ij - P_ij| / P_ij, 0 where P_ij = 0 (masked entries)
};

// The error of one entry P^_ij against P_ij.
inline double attentionErrorOf(double exact, double approx, ErrorKind kind)
{
    switch (kind) {
        case ErrorKind::Signed: return approx - exact;
        case ErrorKind::Absolute: return std::abs(approx - exact);
        case ErrorKind::Relative: return exact > 0 ? std::abs(approx - exact) / exact : 0.0;
    }
    return 0.0;
}

// The error map of the approximation, entry by entry.
MatrixD attentionError(const MatrixD& exact, const MatrixD& approx, ErrorKind kind);

QString errorKindName(ErrorKind kind);  // "signed", "absolute", "relative"
bool parseErrorKind(const QString& name, ErrorKind* kind);

// Sums over row blocks (and heads, and threads) from which the metrics are formed. Rows of P and
// P^ arrive in blocks; nothing of size L x L is kept.
class MetricsAccumulator {
public:
    // Rows [begin, begin + p.rows()) of P and P^ (and of A and A^ when given, in double).
    // Causal: entries j > i are masked and left out of the means. Kernel entries beyond the
    // range of T (the precision the engine runs in), or not finite, count as overflow. The rows'
    // entropies and monotonicity too (RowPropertiesAccumulator, P's side of them through
    // exactSide).
    template <typename T>
    void addAttentionRows(Eigen::Index begin, bool causal, const Eigen::Ref<const Matrix<T>>& p,
                          const Eigen::Ref<const Matrix<T>>& pApprox, const MatrixD* kernel,
                          const MatrixD* kernelApprox, ExactRowSide exactSide = {});

    // O and O^ of one head (in any order of heads).
    void addOutputs(const MatrixD& output, const MatrixD& outputApprox);

    void addNonPositiveRows(qint64 count) { m_nonPositiveRows += count; }

    // Adds another accumulator's sums (another thread's rows, or another head).
    void add(const MetricsAccumulator& other);

    AttentionMetrics metrics() const;

private:
    bool m_haveAttention = false;
    double m_maxAbs = 0;
    double m_sumAbs = 0;
    double m_sumSquaredError = 0;
    double m_sumSquaredExact = 0;
    double m_sumTotalVariation = 0;
    double m_sumKl = 0;
    bool m_klDefined = true;
    qint64 m_entries = 0;
    qint64 m_rows = 0;
    bool m_haveKernel = false;
    double m_kernelSumSquaredError = 0;
    qint64 m_kernelEntries = 0;
    qint64 m_kernelOverflow = 0;
    bool m_haveOutput = false;
    double m_outputSquaredError = 0;
    double m_outputSquared = 0;
    qint64 m_nonPositiveRows = 0;
    RowPropertiesAccumulator m_properties;
};

}  // namespace attnlab

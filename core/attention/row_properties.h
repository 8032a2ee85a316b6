#pragma once

#include "types.h"

#include <QtGlobal>

#include <cstdint>
#include <limits>
#include <vector>

namespace attnlab {

// The two properties of trained softmax attention that Hedgehog (Zhang et al., ICLR 2024) names,
// and that fixed feature maps lack (docs/design.md section 2.9):
// - low entropy ("spiky" rows): H(P_i) = -sum_j P_ij log P_ij over the keys row i sees, in nats;
// - monotonicity in q.k: within a row, more weight for a larger q_i.k_j. A head's monotonicity
//   is the mean over its rows of Spearman's rank correlation between q_i.k_j and P^_ij over the
//   keys the row sees (rows with at least 3 keys, neither ranking constant); the ranks of
//   q_i.k_j are those of the exact P_ij, which increases with it (keys whose P_ij underflows to
//   0 in the engine's precision share their mean rank). Exact attention's is 1.
// The curve of mean weight by rank: for r = 0, 1, ..., the mean over rows of the weight on the
// key of rank r by q.k (r = 0 the largest), exact and approximate.

// Ranks r = 0 .. kRankCurveLength - 1 of the curve.
inline constexpr int kRankCurveLength = 32;
// The rows a long head's monotonicity and curve are taken over, at most (evenly spaced: row i
// when i is a multiple of ceil(L / kPropertyRows)); the entropies take every row.
inline constexpr Eigen::Index kPropertyRows = 512;

// The step between the rows a head of L keys takes its monotonicity and curve over:
// ceil(L / kPropertyRows).
inline Eigen::Index propertyRowStride(Eigen::Index length)
{
    return (length + kPropertyRows - 1) / kPropertyRows;
}

struct RowProperties {
    static constexpr double notApplicable = std::numeric_limits<double>::quiet_NaN();

    double entropyExact = notApplicable;   // mean_i H(P_i)
    double entropyApprox = notApplicable;  // mean_i H(P^_i); n/a where P^ has a negative entry
    double monotonicity = notApplicable;   // mean_i Spearman(q_i.k_j, P^_ij)
    std::vector<double> rankCurveExact;    // mean_i P_i,(r), r < kRankCurveLength
    std::vector<double> rankCurveApprox;   // mean_i P^_i,(r)
};

// Spearman's rank correlation of x and y (the Pearson correlation of their ranks, ties at their
// mean rank); NaN when n < 3 or either is constant.
double spearmanCorrelation(const Eigen::Ref<const VectorD>& x, const Eigen::Ref<const VectorD>& y);

// What the row properties take from P alone, kept with a result so that another P^ beside the
// same P needs only its own ranks: each row's entropy H(P_i), and for each sampled row (i a
// multiple of ceil(L / kPropertyRows)) the ranks of the keys it sees by P_ij (1-based, ties at
// their mean rank; stored in float, which holds every half-integer below 2^23 exactly) and its
// kRankCurveLength keys of largest P_ij, the largest first (of equal P_ij, the later key
// first). About 4 min(L, kPropertyRows) L bytes: 1 MiB at L = 512, 8 MiB at L = 4096.
class ExactRowProperties {
public:
    explicit ExactRowProperties(Eigen::Index length);

    // The bytes an ExactRowProperties of L keys holds.
    static double bytesFor(Eigen::Index length);

    // Row i's entropy H(P_i).
    double entropy(Eigen::Index i) const { return m_entropy[i]; }
    void setEntropy(Eigen::Index i, double entropy) { m_entropy[i] = entropy; }

    // Sampled row i's ranks of its first `visible` keys, into `into` (as they were set).
    void ranks(Eigen::Index i, Eigen::Index visible, VectorD& into) const;
    // Sampled row i's keys of largest P_ij, at most kRankCurveLength.
    const std::uint32_t* top(Eigen::Index i) const;
    // Sets sampled row i: the ranks of its first ranks.size() keys and its keys of largest P_ij
    // (top, at most kRankCurveLength).
    void setRow(Eigen::Index i, const VectorD& ranks, const std::vector<std::uint32_t>& top);

private:
    Eigen::Index m_length;
    Eigen::Index m_stride;
    VectorD m_entropy;
    std::vector<float> m_ranks;        // sampled row i at (i / m_stride) L
    std::vector<std::uint32_t> m_top;  // sampled row i at (i / m_stride) kRankCurveLength
};

// P's side of a block of rows: read from known when given (the same P's), else computed, and
// written into record when given.
struct ExactRowSide {
    const ExactRowProperties* known = nullptr;
    ExactRowProperties* record = nullptr;
};

// Sums over rows (and heads, and threads) from which RowProperties are formed, as
// MetricsAccumulator's.
class RowPropertiesAccumulator {
public:
    // Rows [begin, begin + p.rows()) of P and P^ (L keys each; causal: row i sees keys j <= i).
    // P's entropies, ranks and keys of largest weight come from exactSide.known when given; the
    // sums are the same to the last bit either way.
    template <typename T>
    void addRows(Eigen::Index begin, bool causal, const Eigen::Ref<const Matrix<T>>& p,
                 const Eigen::Ref<const Matrix<T>>& pApprox, ExactRowSide exactSide = {});

    void add(const RowPropertiesAccumulator& other);

    RowProperties properties() const;

private:
    double m_entropyExact = 0;
    double m_entropyApprox = 0;
    bool m_entropyApproxDefined = true;
    qint64 m_rows = 0;
    double m_spearman = 0;
    qint64 m_spearmanRows = 0;
    std::vector<double> m_curveExact = std::vector<double>(kRankCurveLength, 0.0);
    std::vector<double> m_curveApprox = std::vector<double>(kRankCurveLength, 0.0);
    std::vector<qint64> m_curveRows = std::vector<qint64>(kRankCurveLength, 0);
};

}  // namespace attnlab

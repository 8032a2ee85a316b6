#include "attention/row_properties.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab {

namespace {

// The ranks of x (1-based), ties at their mean rank.
VectorD ranks(const Eigen::Ref<const VectorD>& x)
{
    const Eigen::Index n = x.size();
    std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), Eigen::Index(0));
    std::sort(order.begin(), order.end(),
              [&](Eigen::Index a, Eigen::Index b) { return x[a] < x[b]; });
    VectorD rank(n);
    for (Eigen::Index first = 0; first < n;) {
        Eigen::Index last = first;
        while (last + 1 < n && x[order[std::size_t(last + 1)]] == x[order[std::size_t(first)]])
            ++last;
        const double mean = 0.5 * double(first + last) + 1;
        for (Eigen::Index k = first; k <= last; ++k)
            rank[order[std::size_t(k)]] = mean;
        first = last + 1;
    }
    return rank;
}

// -sum_j p_j log p_j over the positive entries.
double entropy(const Eigen::Ref<const VectorD>& p)
{
    double sum = 0;
    for (const double value : p)
        if (value > 0)
            sum -= value * std::log(value);
    return sum;
}

}  // namespace

double spearmanCorrelation(const Eigen::Ref<const VectorD>& x, const Eigen::Ref<const VectorD>& y)
{
    if (x.size() < 3)
        return RowProperties::notApplicable;
    const VectorD rx = ranks(x), ry = ranks(y);
    const VectorD cx = rx.array() - rx.mean(), cy = ry.array() - ry.mean();
    const double denominator = std::sqrt(cx.squaredNorm() * cy.squaredNorm());
    return denominator > 0 ? cx.dot(cy) / denominator : RowProperties::notApplicable;
}

template <typename T>
void RowPropertiesAccumulator::addRows(Eigen::Index begin, bool causal,
                                       const Eigen::Ref<const Matrix<T>>& p,
                                       const Eigen::Ref<const Matrix<T>>& pApprox)
{
    const Eigen::Index keys = p.cols();
    const Eigen::Index stride = (keys + kPropertyRows - 1) / kPropertyRows;
    for (Eigen::Index r = 0; r < p.rows(); ++r) {
        const Eigen::Index i = begin + r;
        const Eigen::Index visible = causal ? std::min(i + 1, keys) : keys;
        const VectorD exact = p.row(r).head(visible).transpose().template cast<double>();
        const VectorD approx = pApprox.row(r).head(visible).transpose().template cast<double>();
        m_entropyExact += entropy(exact);
        m_entropyApprox += entropy(approx);
        m_entropyApproxDefined = m_entropyApproxDefined && (approx.array() >= 0).all();
        ++m_rows;
        if (i % stride != 0)
            continue;
        const double rho = spearmanCorrelation(exact, approx);
        if (std::isfinite(rho)) {
            m_spearman += rho;
            ++m_spearmanRows;
        }
        // The keys by descending q.k (descending P), the first kRankCurveLength of them.
        std::vector<Eigen::Index> order(static_cast<std::size_t>(visible));
        std::iota(order.begin(), order.end(), Eigen::Index(0));
        const std::size_t top = std::min<std::size_t>(order.size(), kRankCurveLength);
        std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(top), order.end(),
                          [&](Eigen::Index a, Eigen::Index b) {
                              return exact[a] > exact[b] || (exact[a] == exact[b] && a > b);
                          });
        for (std::size_t rank = 0; rank < top; ++rank) {
            m_curveExact[rank] += exact[order[rank]];
            m_curveApprox[rank] += approx[order[rank]];
            ++m_curveRows[rank];
        }
    }
}

void RowPropertiesAccumulator::add(const RowPropertiesAccumulator& other)
{
    m_entropyExact += other.m_entropyExact;
    m_entropyApprox += other.m_entropyApprox;
    m_entropyApproxDefined = m_entropyApproxDefined && other.m_entropyApproxDefined;
    m_rows += other.m_rows;
    m_spearman += other.m_spearman;
    m_spearmanRows += other.m_spearmanRows;
    for (std::size_t r = 0; r < std::size_t(kRankCurveLength); ++r) {
        m_curveExact[r] += other.m_curveExact[r];
        m_curveApprox[r] += other.m_curveApprox[r];
        m_curveRows[r] += other.m_curveRows[r];
    }
}

RowProperties RowPropertiesAccumulator::properties() const
{
    RowProperties properties;
    if (m_rows == 0)
        return properties;
    properties.entropyExact = m_entropyExact / double(m_rows);
    if (m_entropyApproxDefined)
        properties.entropyApprox = m_entropyApprox / double(m_rows);
    if (m_spearmanRows > 0)
        properties.monotonicity = m_spearman / double(m_spearmanRows);
    for (std::size_t r = 0; r < std::size_t(kRankCurveLength) && m_curveRows[r] > 0; ++r) {
        properties.rankCurveExact.push_back(m_curveExact[r] / double(m_curveRows[r]));
        properties.rankCurveApprox.push_back(m_curveApprox[r] / double(m_curveRows[r]));
    }
    return properties;
}

template void RowPropertiesAccumulator::addRows<float>(Eigen::Index, bool,
                                                       const Eigen::Ref<const Matrix<float>>&,
                                                       const Eigen::Ref<const Matrix<float>>&);
template void RowPropertiesAccumulator::addRows<double>(Eigen::Index, bool,
                                                        const Eigen::Ref<const Matrix<double>>&,
                                                        const Eigen::Ref<const Matrix<double>>&);

}  // namespace attnlab

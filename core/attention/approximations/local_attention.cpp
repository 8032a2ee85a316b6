#include "attention/approximations/local_attention.h"

#include "attention/row_ops.h"
#include "parallel.h"

#include <cmath>

namespace attnlab {

namespace {

// For the block of queries q (its ranges from windowRanges): row r's exp(s q_r.k_j - M_r) for
// the keys j of its window, M_r the window's largest score, and 0 for the other keys of its
// group's range, into weights (laid out as for bandScores); sums_r = sum of the row's weights.
template <typename T>
void windowExponentials(const Eigen::Ref<const Matrix<T>>& q, const BandKeys<T>& keys, double scale,
                        const KeyRanges& ranges, Eigen::Ref<Matrix<T>> weights,
                        Eigen::Ref<Vector<T>> sums)
{
    bandScores<T>(q, keys, T(scale), ranges, weights);
    for (Eigen::Index r = 0; r < ranges.rows(); ++r) {
        const Eigen::Index first = ranges.first[std::size_t(r)];
        const Eigen::Index last = ranges.last[std::size_t(r)];
        auto inside = weights.row(r).segment(first - ranges.spanFirst, last - first + 1);
        sums[r] = expShiftedSum(inside.data(), inside.size(), inside.maxCoeff());
        clearOutsideRange<T>(weights, ranges, r);
    }
}

template <typename T>
class LocalRows final : public ApproximateRows<T> {
public:
    LocalRows(const Matrix<T>& q, const Matrix<T>& k, double scale, SlidingWindow window)
        : m_q(q), m_k(k), m_keys(BandKeys<T>::of(k)), m_scale(scale), m_window(window)
    {
    }

    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const override
    {
        const Eigen::Index rows = p.rows();
        const KeyRanges ranges = windowRanges(m_window, begin, rows);
        Matrix<T> weights(rows, ranges.spanCols);
        Vector<T> sums(rows);
        windowExponentials<T>(m_q.middleRows(begin, rows), m_keys, m_scale, ranges, weights, sums);
        p.setZero();
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index first = ranges.first[std::size_t(r)];
            const Eigen::Index count = ranges.last[std::size_t(r)] - first + 1;
            p.row(r).segment(first, count) =
                weights.row(r).segment(first - ranges.spanFirst, count) / sums[r];
        }
        if (!kernel)
            return;
        kernel->setZero(rows, p.cols());
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index i = begin + r;
            for (Eigen::Index j = m_window.first(i); j <= m_window.last(i); ++j)
                (*kernel)(r, j) = std::exp(m_scale * m_q.row(i).template cast<double>().dot(
                                                         m_k.row(j).template cast<double>()));
        }
    }

private:
    const Matrix<T>& m_q;
    const Matrix<T>& m_k;
    BandKeys<T> m_keys;
    double m_scale;
    SlidingWindow m_window;
};

}  // namespace

template <typename T>
LocalAttention<T>::LocalAttention(const ApproximationSpec& spec, int /*d*/, Eigen::Index /*length*/,
                                  double scale, HeadSite /*site*/)
    : m_width(Eigen::Index(spec.value(windowParameter()))), m_scale(scale)
{
}

template <typename T>
double LocalAttention<T>::flops(const CostShape& s)
{
    const double w = std::min(s.window, s.length);
    return 2.0 * s.length * w * (s.d + s.dv);
}

template <typename T>
double LocalAttention<T>::workingSetFloats(const CostShape& s)
{
    const double block = double(kBandBlockRows);
    return (s.length + kBandPanelKeys) * s.d +
           s.threads * block * (block + s.window + 2 * kBandPanelKeys);
}

template <typename T>
ApproximateOutput<T> LocalAttention<T>::output(const Matrix<T>& q, const Matrix<T>& k,
                                               const Matrix<T>& v, bool causal,
                                               Eigen::Index /*chunk*/) const
{
    const SlidingWindow window{m_width, causal, k.rows()};
    const BandKeys<T> keys = BandKeys<T>::of(k);
    ApproximateOutput<T> result;
    result.output.resize(q.rows(), v.cols());
    forEachRowBlock(q.rows(), kBandBlockRows, [&](Eigen::Index begin, Eigen::Index end) {
        const Eigen::Index rows = end - begin;
        const KeyRanges ranges = windowRanges(window, begin, rows);
        Matrix<T> weights(rows, ranges.spanCols);
        Vector<T> sums(rows);
        windowExponentials<T>(q.middleRows(begin, rows), keys, m_scale, ranges, weights, sums);
        Matrix<T> numerator(rows, v.cols());
        bandTimes<T>(weights, ranges, v, numerator);
        divideRows<T>(numerator, sums, result.output.middleRows(begin, rows));
    });
    return result;
}

template <typename T>
std::unique_ptr<ApproximateRows<T>> LocalAttention<T>::rows(const Matrix<T>& q, const Matrix<T>& k,
                                                            bool causal) const
{
    return std::make_unique<LocalRows<T>>(q, k, m_scale, SlidingWindow{m_width, causal, k.rows()});
}

template class LocalAttention<float>;
template class LocalAttention<double>;

}  // namespace attnlab

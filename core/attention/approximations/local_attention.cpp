#include "attention/approximations/local_attention.h"

#include "attention/row_ops.h"
#include "parallel.h"

#include <cmath>

namespace attnlab {

namespace {

// The scores s q_i.k_j of the queries [begin, begin + rows) against their block's key span
// [spanFirst, spanFirst + scores.cols()), softmaxed inside each row's window and 0 outside it.
template <typename T>
void windowSoftmax(const Matrix<T>& q, const Matrix<T>& k, double scale,
                   const SlidingWindow& window, Eigen::Index begin, Eigen::Index spanFirst,
                   Eigen::Ref<Matrix<T>> scores)
{
    const Eigen::Index rows = scores.rows(), span = scores.cols();
    scores.noalias() = q.middleRows(begin, rows) * k.middleRows(spanFirst, span).transpose();
    scores *= T(scale);
    for (Eigen::Index r = 0; r < rows; ++r) {
        const Eigen::Index lo = window.first(begin + r) - spanFirst;
        const Eigen::Index count = window.last(begin + r) - spanFirst - lo + 1;
        auto inside = scores.row(r).segment(lo, count);
        const T sum = expShiftedSum(inside.data(), count, inside.maxCoeff());
        inside /= sum;
        scores.row(r).head(lo).setZero();
        scores.row(r).tail(span - lo - count).setZero();
    }
}

template <typename T>
class LocalRows final : public ApproximateRows<T> {
public:
    LocalRows(const Matrix<T>& q, const Matrix<T>& k, double scale, SlidingWindow window)
        : m_q(q), m_k(k), m_scale(scale), m_window(window)
    {
    }

    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const override
    {
        const Eigen::Index rows = p.rows();
        const Eigen::Index spanFirst = m_window.first(begin);
        const Eigen::Index span = m_window.last(begin + rows - 1) - spanFirst + 1;
        p.setZero();
        windowSoftmax<T>(m_q, m_k, m_scale, m_window, begin, spanFirst,
                         p.middleCols(spanFirst, span));
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
    double m_scale;
    SlidingWindow m_window;
};

}  // namespace

template <typename T>
LocalAttention<T>::LocalAttention(const ApproximationSpec& spec, int /*d*/, Eigen::Index /*length*/,
                                  double scale, int /*head*/)
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
    const double block = double(windowBlockRows(Eigen::Index(s.window)));
    return s.threads * block * (block + s.window);
}

template <typename T>
ApproximateOutput<T> LocalAttention<T>::output(const Matrix<T>& q, const Matrix<T>& k,
                                               const Matrix<T>& v, bool causal,
                                               Eigen::Index /*chunk*/) const
{
    const SlidingWindow window{m_width, causal, k.rows()};
    ApproximateOutput<T> result;
    result.output.resize(q.rows(), v.cols());
    forEachRowBlock(q.rows(), windowBlockRows(m_width), [&](Eigen::Index begin, Eigen::Index end) {
        const Eigen::Index spanFirst = window.first(begin);
        const Eigen::Index span = window.last(end - 1) - spanFirst + 1;
        Matrix<T> scores(end - begin, span);
        windowSoftmax<T>(q, k, m_scale, window, begin, spanFirst, scores);
        result.output.middleRows(begin, end - begin).noalias() =
            scores * v.middleRows(spanFirst, span);
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

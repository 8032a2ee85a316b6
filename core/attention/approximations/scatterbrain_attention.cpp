#include "attention/approximations/scatterbrain_attention.h"

#include "attention/approximations/local_attention.h"
#include "attention/linear_attention.h"
#include "parallel.h"

#include <cmath>

namespace attnlab {

namespace {

// phi(k_j) for every key at one common scale kappa: phi(k_j) = Phi_j omega_j exp(kappa), with
// omega_j = exp(c_j - kappa) <= 1 applied where the keys are used (to a block's products, to the
// values of the low-rank sums), not to the L x m mantissas.
template <typename T>
struct MappedKeys {
    Matrix<T> phi;   // Phi, L x m
    Vector<T> weight;  // omega_j
    T scale = 0;     // kappa
};

template <typename T>
MappedKeys<T> mapKeys(const FeatureMap<T>& phi, const Matrix<T>& k)
{
    MappedKeys<T> keys;
    keys.phi.resize(k.rows(), phi.featureCount());
    Vector<T> logScale(k.rows());
    forEachRowBlock(k.rows(), kFeatureBlock, [&](Eigen::Index begin, Eigen::Index end) {
        phi.map(k.middleRows(begin, end - begin), keys.phi.middleRows(begin, end - begin),
                logScale.segment(begin, end - begin));
    });
    keys.scale = logScale.maxCoeff();
    keys.weight = (logScale.array() - keys.scale).exp();
    return keys;
}

// One block of queries [begin, begin + rows), with their features Phi (phi(q_i) = Phi_i
// exp(c_i)), against its key span [spanFirst, spanFirst + span): the exact scores
// E_ij = s q_i.k_j over the span, the feature products G_ij = omega_j Phi_i . Phi_j
// (phi(q_i).phi(k_j) = G_ij exp(c_i + kappa)), and each row's reference exponent
// r_i = max(c_i + kappa, max_{j in W(i)} E_ij), with alpha_i = exp(c_i + kappa - r_i): the row's
// terms divided by exp(r_i) are at most 1.
template <typename T>
struct WindowBlock {
    Matrix<T> scores;  // E, rows x span
    Matrix<T> products;  // G, rows x span
    Vector<T> reference;  // r_i
    Vector<T> alpha;      // alpha_i

    WindowBlock(const Eigen::Ref<const Matrix<T>>& phiQ,
                const Eigen::Ref<const Vector<T>>& queryLogScale, const Matrix<T>& q,
                const Matrix<T>& k, const MappedKeys<T>& keys, double scale,
                const SlidingWindow& window, Eigen::Index begin, Eigen::Index spanFirst,
                Eigen::Index span)
        : scores(phiQ.rows(), span),
          products(phiQ.rows(), span),
          reference(phiQ.rows()),
          alpha(phiQ.rows())
    {
        const Eigen::Index rows = phiQ.rows();
        scores.noalias() = q.middleRows(begin, rows) * k.middleRows(spanFirst, span).transpose();
        scores *= T(scale);
        products.noalias() = phiQ * keys.phi.middleRows(spanFirst, span).transpose();
        products.array().rowwise() *= keys.weight.segment(spanFirst, span).transpose().array();
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index lo = window.first(begin + r) - spanFirst;
            const Eigen::Index count = window.last(begin + r) - window.first(begin + r) + 1;
            const T lowRank = queryLogScale[r] + keys.scale;
            reference[r] = std::max(lowRank, scores.row(r).segment(lo, count).maxCoeff());
            alpha[r] = std::exp(lowRank - reference[r]);
        }
    }
};

// The weights C (rows x span) of a block's span divided by exp(r_i): non-causal, the window's
// correction exp(E_ij - r_i) - alpha_i G_ij (the low-rank sums count every key); causal, the
// keys of the span before the window alpha_i G_ij, the window exp(E_ij - r_i), 0 after i (the
// low-rank sums count only the keys before the span).
template <typename T>
Matrix<T> spanWeights(const WindowBlock<T>& block, const SlidingWindow& window, Eigen::Index begin,
                      Eigen::Index spanFirst)
{
    const Eigen::Index rows = block.scores.rows(), span = block.scores.cols();
    Matrix<T> weights = Matrix<T>::Zero(rows, span);
    for (Eigen::Index r = 0; r < rows; ++r) {
        const Eigen::Index lo = window.first(begin + r) - spanFirst;
        const Eigen::Index hi = window.last(begin + r) - spanFirst;
        const T shift = block.reference[r], alpha = block.alpha[r];
        weights.row(r).segment(lo, hi - lo + 1) =
            (block.scores.row(r).segment(lo, hi - lo + 1).array() - shift).exp();
        if (window.causal)
            weights.row(r).head(lo) = alpha * block.products.row(r).head(lo);
        else
            weights.row(r).segment(lo, hi - lo + 1) -=
                alpha * block.products.row(r).segment(lo, hi - lo + 1);
    }
    return weights;
}

// The low-rank sums S = sum_j omega_j Phi_j v_j^T and z = sum_j omega_j Phi_j over a range of
// keys.
template <typename T>
struct LowRankSums {
    Matrix<T> s;
    Vector<T> z;
};

template <typename T>
LowRankSums<T> lowRankSums(const MappedKeys<T>& keys, const Matrix<T>& v, Eigen::Index first,
                           Eigen::Index count)
{
    LowRankSums<T> sums{Matrix<T>::Zero(keys.phi.cols(), v.cols()),
                        Vector<T>::Zero(keys.phi.cols())};
    if (count == 0)
        return sums;
    const auto weight = keys.weight.segment(first, count);
    const Matrix<T> weightedValues = weight.asDiagonal() * v.middleRows(first, count);
    sums.s.noalias() = keys.phi.middleRows(first, count).transpose() * weightedValues;
    sums.z.noalias() = keys.phi.middleRows(first, count).transpose() * weight;
    return sums;
}

template <typename T>
class ScatterbrainRows final : public ApproximateRows<T> {
public:
    ScatterbrainRows(const FeatureMap<T>& phi, const Matrix<T>& q, const Matrix<T>& k,
                     double scale, SlidingWindow window)
        : m_phi(phi), m_q(q), m_k(k), m_scale(scale), m_window(window), m_keys(mapKeys(phi, k))
    {
    }

    // Row i: alpha_i G_ij for the keys outside the window (up to i when causal), exp(E_ij - r_i)
    // inside it; A^ is that times exp(r_i), P^ that divided by its sum.
    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const override
    {
        const Eigen::Index rows = p.rows(), keys = m_k.rows();
        Matrix<T> phiQ(rows, m_phi.featureCount());
        Vector<T> queryLogScale(rows);
        m_phi.map(m_q.middleRows(begin, rows), phiQ, queryLogScale);
        const WindowBlock<T> block(phiQ, queryLogScale, m_q, m_k, m_keys, m_scale, m_window,
                                   begin, 0, keys);
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index i = begin + r;
            const Eigen::Index lo = m_window.first(i), hi = m_window.last(i);
            const Eigen::Index visible = m_window.causal ? i + 1 : keys;
            p.row(r).head(visible) = block.alpha[r] * block.products.row(r).head(visible);
            p.row(r).tail(keys - visible).setZero();
            for (Eigen::Index j = lo; j <= hi; ++j)
                p(r, j) = std::exp(block.scores(r, j) - block.reference[r]);
        }
        if (kernel) {
            *kernel = p.template cast<double>();
            for (Eigen::Index r = 0; r < rows; ++r)
                kernel->row(r) *= std::exp(double(block.reference[r]));
        }
        const Vector<T> sums = p.rowwise().sum();
        divideRows<T>(Matrix<T>(p), sums, p);
    }

private:
    const FeatureMap<T>& m_phi;
    const Matrix<T>& m_q;
    const Matrix<T>& m_k;
    double m_scale;
    SlidingWindow m_window;
    MappedKeys<T> m_keys;
};

// Query rows whose features and low-rank products are formed at a time; each such block takes
// its window's part in sub-blocks of windowBlockRows(w) rows, so the products stay large while
// the spans stay short.
constexpr Eigen::Index kLowRankBlock = 64;

}  // namespace

template <typename T>
ScatterbrainAttention<T>::ScatterbrainAttention(const ApproximationSpec& spec, int d,
                                                Eigen::Index /*length*/, double scale, int head)
    : m_phi(spec, d, scale, head),
      m_width(Eigen::Index(spec.value(windowParameter()))),
      m_scale(scale)
{
}

template <typename T>
double ScatterbrainAttention<T>::flops(const CostShape& s)
{
    const double w = std::min(s.window, s.length);
    return 4 * s.length * s.m * (s.d + s.dv) + 2 * s.length * w * (s.d + s.dv) +
           2 * s.length * w * s.m;
}

template <typename T>
double ScatterbrainAttention<T>::workingSetFloats(const CostShape& s)
{
    const double block = double(kLowRankBlock);
    const double span = (s.causal ? block : double(windowBlockRows(Eigen::Index(s.window)))) +
                        s.window;
    return s.length * s.m + s.threads * (block * (s.m + s.dv + 1) + 3 * block * span);
}

template <typename T>
ApproximateOutput<T> ScatterbrainAttention<T>::output(const Matrix<T>& q, const Matrix<T>& k,
                                                      const Matrix<T>& v, bool causal,
                                                      Eigen::Index /*chunk*/) const
{
    const SlidingWindow window{m_width, causal, k.rows()};
    const MappedKeys<T> keys = mapKeys<T>(m_phi, k);
    const Eigen::Index length = q.rows();
    const Eigen::Index blocks = (length + kLowRankBlock - 1) / kLowRankBlock;
    const auto spanFirst = [&](Eigen::Index b) { return window.first(b * kLowRankBlock); };

    // The low-rank sums each block adds to its span: every key (non-causal), or the keys before
    // the block's span (causal: the prefix sums of the keys between consecutive spans' starts).
    std::vector<LowRankSums<T>> before;
    LowRankSums<T> all;
    if (causal) {
        before.resize(std::size_t(blocks));
        forEachRowBlock(blocks, 1, [&](Eigen::Index b, Eigen::Index) {
            const Eigen::Index first = b == 0 ? 0 : spanFirst(b - 1);
            before[std::size_t(b)] = lowRankSums<T>(keys, v, first, spanFirst(b) - first);
        });
        for (std::size_t b = 1; b < before.size(); ++b) {
            before[b].s += before[b - 1].s;
            before[b].z += before[b - 1].z;
        }
    } else {
        all = lowRankSums<T>(keys, v, 0, k.rows());
    }

    ApproximateOutput<T> result;
    result.output.resize(length, v.cols());
    Vector<T> denominators(length);
    const Eigen::Index subRows = windowBlockRows(m_width);
    const FeatureMap<T>& phi = m_phi;
    forEachRowBlock(length, kLowRankBlock, [&](Eigen::Index begin, Eigen::Index end) {
        const Eigen::Index rows = end - begin;
        Matrix<T> phiQ(rows, phi.featureCount());
        Vector<T> queryLogScale(rows);
        phi.map(q.middleRows(begin, rows), phiQ, queryLogScale);
        const LowRankSums<T>& sums = causal ? before[std::size_t(begin / kLowRankBlock)] : all;
        Matrix<T> lowRank(rows, v.cols());
        lowRank.noalias() = phiQ * sums.s;
        const Vector<T> lowRankDenominator = phiQ * sums.z;
        for (Eigen::Index sub = begin; sub < end; sub += subRows) {
            const Eigen::Index n = std::min(subRows, end - sub), offset = sub - begin;
            // Causal: the span reaches back to the block's, where its low-rank sums end.
            const Eigen::Index first = window.first(causal ? begin : sub);
            const Eigen::Index span = window.last(sub + n - 1) - first + 1;
            const WindowBlock<T> block(phiQ.middleRows(offset, n),
                                       queryLogScale.segment(offset, n), q, k, keys, m_scale,
                                       window, sub, first, span);
            const Matrix<T> weights = spanWeights<T>(block, window, sub, first);
            Matrix<T> numerator(n, v.cols());
            numerator.noalias() = block.alpha.asDiagonal() * lowRank.middleRows(offset, n);
            numerator.noalias() += weights * v.middleRows(first, span);
            auto den = denominators.segment(sub, n);
            den = block.alpha.cwiseProduct(lowRankDenominator.segment(offset, n)) +
                  weights.rowwise().sum();
            divideRows<T>(numerator, den, result.output.middleRows(sub, n));
        }
    });
    result.nonPositiveRows = nonPositiveEntries(denominators);
    return result;
}

template <typename T>
std::unique_ptr<ApproximateRows<T>> ScatterbrainAttention<T>::rows(const Matrix<T>& q,
                                                                   const Matrix<T>& k,
                                                                   bool causal) const
{
    return std::make_unique<ScatterbrainRows<T>>(m_phi, q, k, m_scale,
                                                 SlidingWindow{m_width, causal, k.rows()});
}

template class ScatterbrainAttention<float>;
template class ScatterbrainAttention<double>;

}  // namespace attnlab

#include "attention/approximations/scatterbrain_attention.h"

#include "attention/band_products.h"
#include "attention/linear_attention.h"
#include "attention/row_ops.h"
#include "parallel.h"

#include <cmath>
#include <optional>

namespace attnlab {

namespace {

// phi(k_j) for every key at one common scale kappa: phi(k_j) = Phi_j omega_j exp(kappa), with
// omega_j = exp(c_j - kappa) <= 1 applied where the keys are used, not to the L x m mantissas Phi
// (kept arranged for the band products). With values, also the low-rank sums of every block of
// keys, each at its own scale.
template <typename T>
struct MappedKeys {
    BandKeys<T> phi;
    Vector<T> weight;  // omega_j
    T scale;           // kappa
    std::optional<BlockSummaries<T>> blocks;
};

// MappedKeys of k, with the sums of the blocks [start(c), start(c + 1)) for c in [0, blocks)
// (each start a multiple of kBandPanelKeys, from 0 to the last key), summed `merged` blocks
// together: sums slot s holds the blocks [s merged, (s + 1) merged), and a slot without keys has
// empty sums. On the engine threads, each slot's blocks in order on one thread (the same sums
// whichever thread), `group` consecutive blocks mapped at a time (fewer, larger products for short
// blocks; merged and group each 1 or a multiple of the other), each block's sums formed while its
// Phi is in cache and, when arranged is given, its keys themselves arranged into it for the band
// products; v may be null (no sums).
template <typename T, typename Start>
MappedKeys<T> mapAllKeys(const FeatureMap<T>& phi, const Matrix<T>& k, const Matrix<T>* v,
                         BandKeys<T>* arranged, Eigen::Index blocks, Eigen::Index merged,
                         Eigen::Index group, Start&& start)
{
    const Eigen::Index features = phi.featureCount();
    MappedKeys<T> keys{BandKeys<T>(k.rows(), features), Vector<T>(k.rows()), T(0), {}};
    if (v)
        keys.blocks.emplace((blocks + merged - 1) / merged, features, v->cols());
    Vector<T>& logScale = keys.weight;                 // c_j until every key is mapped
    const Eigen::Index run = std::max(merged, group);  // blocks one thread takes in turn
    forEachRowBlock(blocks, run, [&](Eigen::Index firstRun, Eigen::Index endRun) {
        for (Eigen::Index firstBlock = firstRun; firstBlock < endRun; firstBlock += group) {
            const Eigen::Index endBlock = std::min(firstBlock + group, endRun);
            const Eigen::Index begin = start(firstBlock), rows = start(endBlock) - begin;
            Matrix<T> mantissas(rows, features);
            if (rows > 0) {
                phi.mapKeys(k.middleRows(begin, rows), mantissas, logScale.segment(begin, rows));
                keys.phi.set(begin, mantissas);
                if (arranged)
                    arranged->set(begin, k.middleRows(begin, rows));
            }
            for (Eigen::Index c = firstBlock; v && c < endBlock; ++c) {
                const Eigen::Index first = start(c), count = start(c + 1) - first;
                keys.blocks->add(c / merged, mantissas.middleRows(first - begin, count),
                                 logScale.segment(first, count), v->middleRows(first, count));
            }
        }
    });
    keys.scale = logScale.maxCoeff();
    keys.weight = (logScale.array() - keys.scale).exp();
    return keys;
}

// A query row's reference exponent r_i = max(c_i + kappa, max_{j in W(i)} s q_i.k_j) and
// alpha_i = exp(c_i + kappa - r_i): the row's terms divided by exp(r_i) are at most 1.
template <typename T>
struct RowReference {
    T reference;
    T alpha;

    RowReference(T lowRankExponent, T windowMax)
        : reference(std::max(lowRankExponent, windowMax)),
          alpha(std::exp(lowRankExponent - reference))
    {
    }
};

// The queries [begin, begin + rows) with their features Phi_i (phi(q_i) = Phi_i exp(c_i)) against
// the keys of their ranges: E_ij = s q_i.k_j into scores, G_ij = Phi_i . Phi_j into products
// (bandScores).
template <typename T>
struct BandBlock {
    KeyRanges ranges;
    Matrix<T> scores;
    Matrix<T> products;

    BandBlock(KeyRanges blockRanges, const Eigen::Ref<const Matrix<T>>& q, const BandKeys<T>& keys,
              double scale, const Eigen::Ref<const Matrix<T>>& phiQ, const BandKeys<T>& phiK)
        : ranges(std::move(blockRanges)),
          scores(q.rows(), ranges.spanCols),
          products(q.rows(), ranges.spanCols)
    {
        bandScores<T>(q, keys, T(scale), ranges, scores);
        bandScores<T>(phiQ, phiK, T(1), ranges, products);
    }
};

// A block's weights divided by exp(r_i), in place of its scores: non-causal (ranges = the
// windows), the window's correction exp(E_ij - r_i) - alpha_i omega_j G_ij, since the low-rank
// sums count every key; causal (ranges from where the block's low-rank sums stop to i),
// alpha_i omega_j G_ij for the keys before the window and exp(E_ij - r_i) inside it. 0 for the
// other keys of a row's group. Returns each row's alpha_i and, in weightSums, its weights' sum.
template <typename T>
Vector<T> blockWeights(BandBlock<T>& block, const Eigen::Ref<const Vector<T>>& queryLogScale,
                       const MappedKeys<T>& keys, const SlidingWindow& window, Eigen::Index begin,
                       Eigen::Ref<Vector<T>> weightSums)
{
    const KeyRanges& ranges = block.ranges;
    Vector<T> alpha(ranges.rows());
    for (Eigen::Index r = 0; r < ranges.rows(); ++r) {
        const Eigen::Index first = ranges.first[std::size_t(r)];
        const Eigen::Index last = ranges.last[std::size_t(r)];
        const Eigen::Index windowFirst = window.first(begin + r);
        auto row = block.scores.row(r);
        const auto products = block.products.row(r);
        const auto columns = [&](Eigen::Index from, Eigen::Index to) {
            return Eigen::seq(from - ranges.spanFirst, to - ranges.spanFirst);
        };
        auto inside = row(columns(windowFirst, last));
        const RowReference<T> reference(queryLogScale[r] + keys.scale, inside.maxCoeff());
        alpha[r] = reference.alpha;
        T sum = expShiftedSum(inside.data(), inside.size(), reference.reference);
        if (window.causal) {
            auto before = row(columns(first, windowFirst - 1));
            const auto omega = keys.weight.segment(first, before.size()).transpose();
            before =
                reference.alpha * omega.cwiseProduct(products(columns(first, windowFirst - 1)));
            sum += before.sum();
        } else {
            const auto omega = keys.weight.segment(windowFirst, inside.size()).transpose();
            const auto g = products(columns(windowFirst, last));
            inside -= reference.alpha * omega.cwiseProduct(g);
            sum -= reference.alpha * omega.dot(g);
        }
        weightSums[r] = sum;
        clearOutsideRange<T>(block.scores, ranges, r);
    }
    return alpha;
}

template <typename T>
class ScatterbrainRows final : public ApproximateRows<T> {
public:
    ScatterbrainRows(const FeatureMap<T>& phi, const Matrix<T>& q, const Matrix<T>& k, double scale,
                     SlidingWindow window)
        : m_phi(phi),
          m_q(q),
          m_k(k),
          m_scale(scale),
          m_window(window),
          m_keys(mapAllKeys<T>(
              phi, k, nullptr, nullptr, (k.rows() + kFeatureBlock - 1) / kFeatureBlock, 1, 1,
              [&](Eigen::Index c) { return std::min(c * kFeatureBlock, k.rows()); }))
    {
    }

    // Row i, with E_ij = s q_i.k_j and G_ij = Phi_i . Phi_j over every key: alpha_i omega_j G_ij
    // for the keys outside the window (up to i when causal), exp(E_ij - r_i) inside it; A^ is
    // that times exp(r_i), P^ that divided by its sum.
    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const override
    {
        const Eigen::Index rows = p.rows(), keys = m_k.rows();
        Matrix<T> phiQ(rows, m_phi.featureCount());
        Vector<T> queryLogScale(rows);
        m_phi.mapQueries(m_q.middleRows(begin, rows), phiQ, queryLogScale);
        const KeyRanges everyKey = keyRanges(
            begin, rows, [](Eigen::Index) { return Eigen::Index(0); },
            [&](Eigen::Index) { return keys - 1; });
        Matrix<T> products(rows, everyKey.spanCols);
        bandScores<T>(phiQ, m_keys.phi, T(1), everyKey, products);
        Matrix<T> scores(rows, keys);
        scores.noalias() = T(m_scale) * m_q.middleRows(begin, rows) * m_k.transpose();
        Vector<T> reference(rows);
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index i = begin + r;
            const Eigen::Index lo = m_window.first(i), count = m_window.last(i) - lo + 1;
            const Eigen::Index visible = m_window.causal ? i + 1 : keys;
            const RowReference<T> row(queryLogScale[r] + m_keys.scale,
                                      scores.row(r).segment(lo, count).maxCoeff());
            reference[r] = row.reference;
            const auto omega = m_keys.weight.head(visible).transpose();
            p.row(r).head(visible) = row.alpha * omega.cwiseProduct(products.row(r).head(visible));
            p.row(r).tail(keys - visible).setZero();
            p.row(r).segment(lo, count) =
                (scores.row(r).segment(lo, count).array() - row.reference).exp().matrix();
        }
        if (kernel) {
            *kernel = p.template cast<double>();
            for (Eigen::Index r = 0; r < rows; ++r)
                kernel->row(r) *= std::exp(double(reference[r]));
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

}  // namespace

template <typename T>
ScatterbrainAttention<T>::ScatterbrainAttention(const ApproximationSpec& spec, int d,
                                                Eigen::Index /*length*/, double scale,
                                                HeadSite site)
    : ScatterbrainAttention(std::make_unique<PositiveRandomFeatures<T>>(spec, d, scale, site),
                            Eigen::Index(spec.value(windowParameter())), scale)
{
}

template <typename T>
ScatterbrainAttention<T>::ScatterbrainAttention(std::unique_ptr<FeatureMap<T>> phi,
                                                Eigen::Index width, double scale)
    : m_phi(std::move(phi)), m_width(width), m_scale(scale)
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
    // Keys and queries per block (as in output()), and the keys of a query block's ranges:
    // causal, back to the start of a key block, plus the window and the panels' rounding.
    const double block = s.causal ? double(kBandBlockRows) : double(kFeatureBlock);
    const double span = (s.causal ? 2 * block : block) + s.window + 2 * kBandPanelKeys;
    const double summary = s.m * (s.dv + 1);
    return (s.length + kBandPanelKeys) * (s.m + s.d) + s.length +
           std::ceil(s.length / block) * summary +
           s.threads * (block * s.m + block * (s.m + s.dv + 1) + 2 * block * span);
}

template <typename T>
ApproximateOutput<T> ScatterbrainAttention<T>::output(const Matrix<T>& q, const Matrix<T>& k,
                                                      const Matrix<T>& v, bool causal,
                                                      Eigen::Index /*chunk*/) const
{
    const SlidingWindow window{m_width, causal, k.rows()};
    const FeatureMap<T>& phi = *m_phi;
    const Eigen::Index length = k.rows();
    // Blocks of b queries and of keys, key block c holding the keys [start(c), start(c + 1)),
    // start(c) = max(0, c b - reach). Causal, query block c's low-rank sums are the key blocks
    // before c, and reach, the window's w - 1 keys back rounded up to whole panels, makes them
    // stop at or before its first window start; short blocks keep the keys from there to each
    // window short. Otherwise (reach 0) the blocks of linear attention, which keep the low-rank
    // products large, and every query block's sums are every key block's.
    const Eigen::Index block = causal ? kBandBlockRows : kFeatureBlock;
    const Eigen::Index reach =
        causal ? (m_width - 1 + kBandPanelKeys - 1) / kBandPanelKeys * kBandPanelKeys : 0;
    const auto start = [&](Eigen::Index c) {
        return std::clamp<Eigen::Index>(c * block - reach, 0, length);
    };
    const Eigen::Index keyBlocks = (length + reach + block - 1) / block;
    // Causal, each key block's own sums, made prefix sums; otherwise one sum per engine thread's
    // share of the key blocks, added up.
    const Eigen::Index merged = causal ? 1 : (keyBlocks + engineThreads() - 1) / engineThreads();
    BandKeys<T> bandKeys(length, k.cols());
    MappedKeys<T> keys =
        mapAllKeys<T>(phi, k, &v, &bandKeys, keyBlocks, merged, kFeatureBlock / block, start);
    BlockSummaries<T>& sums = *keys.blocks;
    sums.prefixSums();

    ApproximateOutput<T> result;
    result.output.resize(q.rows(), v.cols());
    Vector<T> denominators(q.rows());
    forEachRowBlock(q.rows(), block, [&](Eigen::Index begin, Eigen::Index end) {
        const Eigen::Index rows = end - begin;
        const Eigen::Index sumsEnd = causal ? begin / block : sums.blocks();  // sums before it
        Matrix<T> phiQ(rows, phi.featureCount());
        Vector<T> queryLogScale(rows);
        phi.mapQueries(q.middleRows(begin, rows), phiQ, queryLogScale);
        BandBlock<T> band(
            keyRanges(
                begin, rows,
                [&](Eigen::Index i) { return causal ? start(sumsEnd) : window.first(i); },
                [&](Eigen::Index i) { return window.last(i); }),
            q.middleRows(begin, rows), bandKeys, m_scale, phiQ, keys.phi);
        auto den = denominators.segment(begin, rows);
        Matrix<T> numerator(rows, v.cols());
        const Vector<T> alpha = blockWeights<T>(band, queryLogScale, keys, window, begin, den);
        bandTimes<T>(band.scores, band.ranges, v, numerator);
        if (sumsEnd > 0) {
            // The sums' own scale brought to kappa.
            const Vector<T> lowRankAlpha = alpha * std::exp(sums.scale(sumsEnd - 1) - keys.scale);
            // The product on its own first: Eigen's diagonal times a nested product ran the
            // product 1.7x slower.
            const Matrix<T> lowRank = phiQ * sums.s(sumsEnd - 1);
            numerator += lowRankAlpha.asDiagonal() * lowRank;
            den += lowRankAlpha.cwiseProduct(phiQ * sums.z(sumsEnd - 1));
        }
        divideRows<T>(numerator, den, result.output.middleRows(begin, rows));
    });
    result.nonPositiveRows = nonPositiveEntries(denominators);
    return result;
}

template <typename T>
std::unique_ptr<ApproximateRows<T>> ScatterbrainAttention<T>::rows(const Matrix<T>& q,
                                                                   const Matrix<T>& k,
                                                                   bool causal) const
{
    return std::make_unique<ScatterbrainRows<T>>(*m_phi, q, k, m_scale,
                                                 SlidingWindow{m_width, causal, k.rows()});
}

template class ScatterbrainAttention<float>;
template class ScatterbrainAttention<double>;

}  // namespace attnlab

#include "attention/band_products.h"

#include "parallel.h"

#include <type_traits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ATTNLAB_BAND_KERNELS 1
#else
#define ATTNLAB_BAND_KERNELS 0
#endif

namespace attnlab {

namespace {

template <typename T>
constexpr bool usesPanels()
{
    return ATTNLAB_BAND_KERNELS && std::is_same_v<T, float>;
}

#if ATTNLAB_BAND_KERNELS

// s_r,0..15 = factor sum_l a_rl panel_l,0..15 for R rows of a (row stride lda): 12 accumulators
// of 8 lanes, two panel loads and R broadcasts per l.
template <int R>
void scoresTile(const float* a, Eigen::Index lda, Eigen::Index dims, const float* panel,
                float factor, float* s, Eigen::Index lds)
{
    __m256 low[R], high[R];
    for (int r = 0; r < R; ++r)
        low[r] = high[r] = _mm256_setzero_ps();
    for (Eigen::Index l = 0; l < dims; ++l) {
        const __m256 keysLow = _mm256_loadu_ps(panel + l * kBandPanelKeys);
        const __m256 keysHigh = _mm256_loadu_ps(panel + l * kBandPanelKeys + 8);
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(a + r * lda + l);
            low[r] = _mm256_fmadd_ps(x, keysLow, low[r]);
            high[r] = _mm256_fmadd_ps(x, keysHigh, high[r]);
        }
    }
    const __m256 f = _mm256_set1_ps(factor);
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(s + r * lds, _mm256_mul_ps(low[r], f));
        _mm256_storeu_ps(s + r * lds + 8, _mm256_mul_ps(high[r], f));
    }
}

// o_r,0..8C = sum_j s_rj v_j,0..8C for R rows of s and count keys (row strides lds, ldv, ldo).
template <int R, int C>
void timesTile(const float* s, Eigen::Index lds, Eigen::Index count, const float* v,
               Eigen::Index ldv, float* o, Eigen::Index ldo)
{
    __m256 acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            acc[r][c] = _mm256_setzero_ps();
    for (Eigen::Index j = 0; j < count; ++j) {
        __m256 values[C];
        for (int c = 0; c < C; ++c)
            values[c] = _mm256_loadu_ps(v + j * ldv + 8 * c);
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(s + r * lds + j);
            for (int c = 0; c < C; ++c)
                acc[r][c] = _mm256_fmadd_ps(x, values[c], acc[r][c]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            _mm256_storeu_ps(o + r * ldo + 8 * c, acc[r][c]);
}

// Calls body(std::integral_constant<int, n>) for n in [1, kBandGroupRows], so the tiles' row
// count is a compile-time constant.
template <typename Body>
void withGroupRows(Eigen::Index n, Body&& body)
{
    static_assert(kBandGroupRows == 6);
    switch (n) {
    case 1: body(std::integral_constant<int, 1>()); break;
    case 2: body(std::integral_constant<int, 2>()); break;
    case 3: body(std::integral_constant<int, 3>()); break;
    case 4: body(std::integral_constant<int, 4>()); break;
    case 5: body(std::integral_constant<int, 5>()); break;
    default: body(std::integral_constant<int, 6>()); break;
    }
}

void scoresKernel(const Eigen::Ref<const Matrix<float>>& a, const BandKeys<float>& keys,
                  float factor, const KeyRanges& ranges, Eigen::Ref<Matrix<float>> s)
{
    const Eigen::Index dims = a.cols();
    for (Eigen::Index g = 0; g < a.rows(); g += kBandGroupRows) {
        const Eigen::Index n = std::min(kBandGroupRows, a.rows() - g);
        const Eigen::Index firstPanel = ranges.groupFirst(g, n) / kBandPanelKeys;
        const Eigen::Index lastPanel = ranges.groupLast(g, n) / kBandPanelKeys;
        withGroupRows(n, [&](auto rows) {
            for (Eigen::Index p = firstPanel; p <= lastPanel; ++p)
                scoresTile<rows()>(a.data() + g * a.outerStride(), a.outerStride(), dims, keys.panel(p), factor,
                                   &s(g, p * kBandPanelKeys - ranges.spanFirst), s.outerStride());
        });
    }
}

void timesKernel(const Eigen::Ref<const Matrix<float>>& s, const KeyRanges& ranges,
                 const Matrix<float>& v, Eigen::Ref<Matrix<float>> o)
{
    const Eigen::Index columns = v.cols();
    for (Eigen::Index g = 0; g < s.rows(); g += kBandGroupRows) {
        const Eigen::Index n = std::min(kBandGroupRows, s.rows() - g);
        const Eigen::Index first = ranges.groupFirst(g, n);
        const Eigen::Index count = ranges.groupLast(g, n) - first + 1;
        const float* weights = s.data() + g * s.outerStride() + (first - ranges.spanFirst);
        withGroupRows(n, [&](auto rows) {
            Eigen::Index c = 0;
            for (; c + 16 <= columns; c += 16)
                timesTile<rows(), 2>(weights, s.outerStride(), count, &v(first, c), columns,
                                     &o(g, c), o.outerStride());
            if (c + 8 <= columns) {
                timesTile<rows(), 1>(weights, s.outerStride(), count, &v(first, c), columns,
                                     &o(g, c), o.outerStride());
                c += 8;
            }
            if (c < columns)
                o.block(g, c, n, columns - c).noalias() =
                    s.block(g, first - ranges.spanFirst, n, count) *
                    v.block(first, c, count, columns - c);
        });
    }
}

#endif

}  // namespace

Eigen::Index KeyRanges::groupFirst(Eigen::Index r, Eigen::Index n) const
{
    return *std::min_element(first.begin() + r, first.begin() + r + n);
}

Eigen::Index KeyRanges::groupLast(Eigen::Index r, Eigen::Index n) const
{
    return *std::max_element(last.begin() + r, last.begin() + r + n);
}

template <typename T>
BandKeys<T>::BandKeys(Eigen::Index keys, Eigen::Index dims) : m_keys(keys), m_dims(dims)
{
    const Eigen::Index panels = (keys + kBandPanelKeys - 1) / kBandPanelKeys;
    m_data.resize((usesPanels<T>() ? panels * kBandPanelKeys : keys) * dims);
}

template <typename T>
BandKeys<T> BandKeys<T>::of(const Matrix<T>& x)
{
    BandKeys keys(x.rows(), x.cols());
    forEachRowBlock(x.rows(), 64 * kBandPanelKeys, [&](Eigen::Index begin, Eigen::Index end) {
        keys.set(begin, x.middleRows(begin, end - begin));
    });
    return keys;
}

template <typename T>
void BandKeys<T>::set(Eigen::Index begin, const Eigen::Ref<const Matrix<T>>& rows)
{
    if constexpr (!usesPanels<T>()) {
        Eigen::Map<Matrix<T>>(m_data.data() + begin * m_dims, rows.rows(), m_dims) = rows;
        return;
    }
    for (Eigen::Index first = 0; first < rows.rows(); first += kBandPanelKeys) {
        T* out = m_data.data() + (begin + first) / kBandPanelKeys * m_dims * kBandPanelKeys;
        const Eigen::Index count = std::min(kBandPanelKeys, rows.rows() - first);
        if (count < kBandPanelKeys)
            std::fill(out, out + m_dims * kBandPanelKeys, T(0));
        for (Eigen::Index t = 0; t < count; ++t) {
            const T* in = rows.data() + (first + t) * rows.outerStride();
            for (Eigen::Index l = 0; l < m_dims; ++l)
                out[l * kBandPanelKeys + t] = in[l];
        }
    }
}

template <typename T>
void bandScores(const Eigen::Ref<const Matrix<T>>& a, const BandKeys<T>& keys, T factor,
                const KeyRanges& ranges, Eigen::Ref<Matrix<T>> s)
{
#if ATTNLAB_BAND_KERNELS
    if constexpr (std::is_same_v<T, float>) {
        scoresKernel(a, keys, factor, ranges, s);
        return;
    }
#endif
    for (Eigen::Index g = 0; g < a.rows(); g += kBandGroupRows) {
        const Eigen::Index n = std::min(kBandGroupRows, a.rows() - g);
        const Eigen::Index first = ranges.groupFirst(g, n);
        const Eigen::Index count = ranges.groupLast(g, n) - first + 1;
        s.block(g, first - ranges.spanFirst, n, count).noalias() =
            factor * a.middleRows(g, n) * keys.rows(first, count).transpose();
    }
}

template <typename T>
void bandTimes(const Eigen::Ref<const Matrix<T>>& s, const KeyRanges& ranges, const Matrix<T>& v,
               Eigen::Ref<Matrix<T>> o)
{
#if ATTNLAB_BAND_KERNELS
    if constexpr (std::is_same_v<T, float>) {
        timesKernel(s, ranges, v, o);
        return;
    }
#endif
    for (Eigen::Index g = 0; g < s.rows(); g += kBandGroupRows) {
        const Eigen::Index n = std::min(kBandGroupRows, s.rows() - g);
        const Eigen::Index first = ranges.groupFirst(g, n);
        const Eigen::Index count = ranges.groupLast(g, n) - first + 1;
        o.middleRows(g, n).noalias() =
            s.block(g, first - ranges.spanFirst, n, count) * v.middleRows(first, count);
    }
}

template class BandKeys<float>;
template class BandKeys<double>;
template void bandScores<float>(const Eigen::Ref<const Matrix<float>>&, const BandKeys<float>&,
                                float, const KeyRanges&, Eigen::Ref<Matrix<float>>);
template void bandScores<double>(const Eigen::Ref<const Matrix<double>>&,
                                 const BandKeys<double>&, double, const KeyRanges&,
                                 Eigen::Ref<Matrix<double>>);
template void bandTimes<float>(const Eigen::Ref<const Matrix<float>>&, const KeyRanges&,
                               const Matrix<float>&, Eigen::Ref<Matrix<float>>);
template void bandTimes<double>(const Eigen::Ref<const Matrix<double>>&, const KeyRanges&,
                                const Matrix<double>&, Eigen::Ref<Matrix<double>>);

}  // namespace attnlab

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

// Arranged keys larger than this go to memory by streaming stores: they would not stay in the
// caches until the band products read them anyway (measured at L = 16384, m = 256: 3% faster;
// at L <= 4096 streaming is 2% slower).
constexpr double kStreamedKeysBytes = 8.0 * 1024 * 1024;

template <typename T>
constexpr bool usesPanels()
{
    return ATTNLAB_BAND_KERNELS && std::is_same_v<T, float>;
}

#if ATTNLAB_BAND_KERNELS

// s_r,o..o+8H = factor sum_l a_rl panel_l,o..o+8H for R rows of a (row stride lda), the panel's
// 8 H keys from key o (H = 2: the whole panel; 1: the half o = 0 or 8 holding the keys in use):
// R H accumulators of 8 lanes, H panel loads and R broadcasts per l. With `ahead`, also the panel
// there is fetched into L2, a line per l.
template <int R, int H>
void scoresTile(const float* a, Eigen::Index lda, Eigen::Index dims, const float* panel,
                Eigen::Index o, float factor, float* s, Eigen::Index lds, const float* ahead)
{
    __m256 acc[R][H];
    for (int r = 0; r < R; ++r)
        for (int h = 0; h < H; ++h)
            acc[r][h] = _mm256_setzero_ps();
    for (Eigen::Index l = 0; l < dims; ++l) {
        if (ahead)
            _mm_prefetch(reinterpret_cast<const char*>(ahead + l * kBandPanelKeys), _MM_HINT_T1);
        __m256 keys[H];
        for (int h = 0; h < H; ++h)
            keys[h] = _mm256_loadu_ps(panel + l * kBandPanelKeys + o + 8 * h);
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(a + r * lda + l);
            for (int h = 0; h < H; ++h)
                acc[r][h] = _mm256_fmadd_ps(x, keys[h], acc[r][h]);
        }
    }
    const __m256 f = _mm256_set1_ps(factor);
    for (int r = 0; r < R; ++r)
        for (int h = 0; h < H; ++h)
            _mm256_storeu_ps(s + r * lds + o + 8 * h, _mm256_mul_ps(acc[r][h], f));
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

// The 8 x 8 block at in (row stride ld) transposed into out (row stride kBandPanelKeys, 32-byte
// aligned when Streaming: stores that bypass the caches, for keys too many to stay in them, skip
// reading the lines they overwrite).
template <bool Streaming>
void transpose8(const float* in, Eigen::Index ld, float* out)
{
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i)
        r[i] = _mm256_loadu_ps(in + i * ld);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    const auto store = [&](float* to, __m256 x) {
        if constexpr (Streaming)
            _mm256_stream_ps(to, x);
        else
            _mm256_storeu_ps(to, x);
    };
    for (int i = 0; i < 4; ++i) {
        store(out + i * kBandPanelKeys, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        store(out + (i + 4) * kBandPanelKeys, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
}

// One whole panel: the 16 rows at in (row stride ld, dims values each) dimension by dimension.
template <bool Streaming>
void packPanel(const float* in, Eigen::Index ld, Eigen::Index dims, float* out)
{
    Eigen::Index l = 0;
    for (; l + 8 <= dims; l += 8)
        for (Eigen::Index t = 0; t < kBandPanelKeys; t += 8)
            transpose8<Streaming>(in + t * ld + l, ld, out + l * kBandPanelKeys + t);
    for (; l < dims; ++l)
        for (Eigen::Index t = 0; t < kBandPanelKeys; ++t)
            out[l * kBandPanelKeys + t] = in[t * ld + l];
}

void scoresKernel(const Eigen::Ref<const Matrix<float>>& a, const BandKeys<float>& keys,
                  float factor, const KeyRanges& ranges, Eigen::Ref<Matrix<float>> s)
{
    const Eigen::Index dims = a.cols();
    // The panel after the last one fetched ahead: the first group whose range ends in a panel
    // fetches the next, which the groups after it reach (the hardware prefetcher, seeing each
    // group go back to its first panel, did not: the products waited on memory).
    Eigen::Index fetched = -1;
    ranges.forEachGroup([&](Eigen::Index g, Eigen::Index n, Eigen::Index first, Eigen::Index last) {
        const Eigen::Index next = last / kBandPanelKeys + 1;
        const float* ahead = nullptr;
        if (next > fetched && next < keys.panelCount()) {
            ahead = keys.panel(next);
            fetched = next;
        }
        const float* rows = a.data() + g * a.outerStride();
        withGroupRows(n, [&](auto r) {
            for (Eigen::Index p = first / kBandPanelKeys; p <= last / kBandPanelKeys; ++p) {
                float* out = s.data() + g * s.outerStride() + p * kBandPanelKeys - ranges.spanFirst;
                // Only the half of an end panel that holds keys in use, when one half does.
                const Eigen::Index from = std::max(first - p * kBandPanelKeys, Eigen::Index(0));
                const Eigen::Index to = std::min(last - p * kBandPanelKeys, kBandPanelKeys - 1);
                if (from >= 8 || to < 8)
                    scoresTile<r(), 1>(rows, a.outerStride(), dims, keys.panel(p),
                                       from >= 8 ? 8 : 0, factor, out, s.outerStride(), ahead);
                else
                    scoresTile<r(), 2>(rows, a.outerStride(), dims, keys.panel(p), 0, factor, out,
                                       s.outerStride(), ahead);
                ahead = nullptr;
            }
        });
    });
}

void timesKernel(const Eigen::Ref<const Matrix<float>>& s, const KeyRanges& ranges,
                 const Matrix<float>& v, Eigen::Ref<Matrix<float>> o)
{
    const Eigen::Index columns = v.cols();
    ranges.forEachGroup([&](Eigen::Index g, Eigen::Index n, Eigen::Index first, Eigen::Index last) {
        const Eigen::Index count = last - first + 1;
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
    });
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
BandKeys<T>::BandKeys(Eigen::Index keys, Eigen::Index dims) : m_dims(dims)
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
    } else {
#if ATTNLAB_BAND_KERNELS
        const bool streaming = double(m_data.size()) * sizeof(T) > kStreamedKeysBytes;
#endif
        for (Eigen::Index first = 0; first < rows.rows(); first += kBandPanelKeys) {
            T* out = m_data.data() + (begin + first) / kBandPanelKeys * m_dims * kBandPanelKeys;
            const Eigen::Index count = std::min(kBandPanelKeys, rows.rows() - first);
            const T* in = rows.data() + first * rows.outerStride();
#if ATTNLAB_BAND_KERNELS
            if (count == kBandPanelKeys) {
                if (streaming)
                    packPanel<true>(in, rows.outerStride(), m_dims, out);
                else
                    packPanel<false>(in, rows.outerStride(), m_dims, out);
                continue;
            }
#endif
            std::fill(out, out + m_dims * kBandPanelKeys, T(0));
            for (Eigen::Index t = 0; t < count; ++t)
                for (Eigen::Index l = 0; l < m_dims; ++l)
                    out[l * kBandPanelKeys + t] = in[t * rows.outerStride() + l];
        }
#if ATTNLAB_BAND_KERNELS
        if (streaming)
            _mm_sfence();  // the streamed panels visible before any other thread reads them
#endif
    }
}

template <typename T>
void bandScores(const BandInput<T>& a, const BandKeys<T>& keys, T factor, const KeyRanges& ranges,
                BandOutput<T> s)
{
#if ATTNLAB_BAND_KERNELS
    if constexpr (std::is_same_v<T, float>) {
        scoresKernel(a, keys, factor, ranges, s);
        return;
    }
#endif
    ranges.forEachGroup([&](Eigen::Index g, Eigen::Index n, Eigen::Index first, Eigen::Index last) {
        const Eigen::Index count = last - first + 1;
        s.block(g, first - ranges.spanFirst, n, count).noalias() =
            factor * a.middleRows(g, n) * keys.rows(first, count).transpose();
    });
}

template <typename T>
void bandTimes(const BandInput<T>& s, const KeyRanges& ranges, const Matrix<T>& v, BandOutput<T> o)
{
#if ATTNLAB_BAND_KERNELS
    if constexpr (std::is_same_v<T, float>) {
        timesKernel(s, ranges, v, o);
        return;
    }
#endif
    ranges.forEachGroup([&](Eigen::Index g, Eigen::Index n, Eigen::Index first, Eigen::Index last) {
        const Eigen::Index count = last - first + 1;
        o.middleRows(g, n).noalias() =
            s.block(g, first - ranges.spanFirst, n, count) * v.middleRows(first, count);
    });
}

template class BandKeys<float>;
template class BandKeys<double>;
template void bandScores<float>(const BandInput<float>&, const BandKeys<float>&, float,
                                const KeyRanges&, BandOutput<float>);
template void bandScores<double>(const BandInput<double>&, const BandKeys<double>&, double,
                                 const KeyRanges&, BandOutput<double>);
template void bandTimes<float>(const BandInput<float>&, const KeyRanges&, const Matrix<float>&,
                               BandOutput<float>);
template void bandTimes<double>(const BandInput<double>&, const KeyRanges&, const Matrix<double>&,
                                BandOutput<double>);

}  // namespace attnlab

#pragma once

#include "types.h"

#include <algorithm>
#include <vector>

namespace attnlab {

// The products of local attention and of Scatterbrain's window, restricted to a band of keys
// around each query. A block of b query rows against its whole key span as two GEMMs computes
// up to b more keys per row than the window's w; here rows go in groups of kBandGroupRows and
// each group takes only the keys of its own rows' ranges (for the scores rounded out to whole
// panels of kBandPanelKeys keys, or half panels at the ends), so about w + 12 keys per row. With
// AVX2 and FMA, float runs in register-tiled kernels (6 rows x 16 keys or 16 value columns);
// otherwise, and for double, in Eigen products group by group.

// The keys query i sees in a sliding window of w keys among L: causal, the w latest keys
// [i - w + 1, i]; otherwise w keys centred on i, [i - floor((w - 1) / 2), i + ceil((w - 1) / 2)];
// both clipped to [0, L).
struct SlidingWindow {
    Eigen::Index width;
    bool causal;
    Eigen::Index length;

    Eigen::Index first(Eigen::Index i) const
    {
        return std::max<Eigen::Index>(0, i - (causal ? width - 1 : (width - 1) / 2));
    }
    // The last key, inclusive.
    Eigen::Index last(Eigen::Index i) const
    {
        return std::min(length - 1, causal ? i : i + width / 2);
    }
    // Whether every query's window holds every key it may see, so that attention restricted to
    // it is exact: w >= L when causal, w >= 2L - 1 when centred.
    bool coversEveryPair() const { return causal ? width >= length : width >= 2 * length - 1; }
};

// Query rows handled together by the band kernels, keys per panel of the packed keys, and the
// query rows local attention and Scatterbrain take per block (a multiple of the group: a block's
// scratch is its rows by its span, about w + 48 + 32 keys).
inline constexpr Eigen::Index kBandGroupRows = 6;
inline constexpr Eigen::Index kBandPanelKeys = 16;
inline constexpr Eigen::Index kBandBlockRows = 48;

// The keys [first[r], last[r]] row r of a block of query rows takes part with (non-empty), and
// the columns of the block's scratch scores: column 0 is key spanFirst (a multiple of
// kBandPanelKeys) and there are spanCols columns, whole panels covering every row's range.
struct KeyRanges {
    std::vector<Eigen::Index> first;
    std::vector<Eigen::Index> last;
    Eigen::Index spanFirst = 0;
    Eigen::Index spanCols = 0;

    Eigen::Index rows() const { return Eigen::Index(first.size()); }
    // The union of the ranges of the rows [r, r + n): the keys bandTimes sums for those rows.
    Eigen::Index groupFirst(Eigen::Index r, Eigen::Index n) const;
    Eigen::Index groupLast(Eigen::Index r, Eigen::Index n) const;

    // f(g, n, first, last) for each group of kBandGroupRows rows [g, g + n) in turn (the last
    // group shorter), [first, last] = [groupFirst(g, n), groupLast(g, n)]: the band products'
    // walk.
    template <typename F>
    void forEachGroup(F&& f) const
    {
        for (Eigen::Index g = 0; g < rows(); g += kBandGroupRows) {
            const Eigen::Index n = std::min(kBandGroupRows, rows() - g);
            f(g, n, groupFirst(g, n), groupLast(g, n));
        }
    }
};

// Sets to 0 row r's entries of s (laid out as for bandScores) for the keys of its group's range
// outside its own range, which bandTimes would otherwise add to its sum.
template <typename T>
void clearOutsideRange(Eigen::Ref<Matrix<T>> s, const KeyRanges& ranges, Eigen::Index r)
{
    const Eigen::Index group = r / kBandGroupRows * kBandGroupRows;
    const Eigen::Index n = std::min(kBandGroupRows, ranges.rows() - group);
    const Eigen::Index first = ranges.first[std::size_t(r)], last = ranges.last[std::size_t(r)];
    const Eigen::Index groupFirst = ranges.groupFirst(group, n);
    const Eigen::Index groupLast = ranges.groupLast(group, n);
    s.row(r).segment(groupFirst - ranges.spanFirst, first - groupFirst).setZero();
    s.row(r).segment(last + 1 - ranges.spanFirst, groupLast - last).setZero();
}

// KeyRanges for the rows [begin, begin + rows), row i seeing [firstOf(i), lastOf(i)].
template <typename First, typename Last>
KeyRanges keyRanges(Eigen::Index begin, Eigen::Index rows, First&& firstOf, Last&& lastOf)
{
    KeyRanges ranges;
    ranges.first.resize(std::size_t(rows));
    ranges.last.resize(std::size_t(rows));
    Eigen::Index low = firstOf(begin), high = lastOf(begin);
    for (Eigen::Index r = 0; r < rows; ++r) {
        ranges.first[std::size_t(r)] = firstOf(begin + r);
        ranges.last[std::size_t(r)] = lastOf(begin + r);
        low = std::min(low, ranges.first[std::size_t(r)]);
        high = std::max(high, ranges.last[std::size_t(r)]);
    }
    ranges.spanFirst = low / kBandPanelKeys * kBandPanelKeys;
    ranges.spanCols = (high / kBandPanelKeys + 1) * kBandPanelKeys - ranges.spanFirst;
    return ranges;
}

// KeyRanges of the rows [begin, begin + rows) in a sliding window.
inline KeyRanges windowRanges(const SlidingWindow& window, Eigen::Index begin, Eigen::Index rows)
{
    return keyRanges(
        begin, rows, [&](Eigen::Index i) { return window.first(i); },
        [&](Eigen::Index i) { return window.last(i); });
}

// Keys x_j (rows of dims values) arranged for bandScores. Float with AVX2: panels of
// kBandPanelKeys keys, each stored dimension by dimension (x_{16p..16p+15, l} contiguous for
// every l), zero past the last key; otherwise the rows as they are.
template <typename T>
class BandKeys {
public:
    // Room for `keys` keys, none set yet: every key must be set before use.
    BandKeys(Eigen::Index keys, Eigen::Index dims);
    // The rows of x, set by blocks on the engine threads.
    static BandKeys of(const Matrix<T>& x);

    // Sets the keys [begin, begin + rows.rows()) to the rows of `rows`: begin a multiple of
    // kBandPanelKeys, and the block's end too unless it is the last key. Threads may set
    // disjoint blocks at once.
    void set(Eigen::Index begin, const Eigen::Ref<const Matrix<T>>& rows);

    // Panel p (packed float only), of panelCount().
    const T* panel(Eigen::Index p) const { return m_data.data() + p * m_dims * kBandPanelKeys; }
    Eigen::Index panelCount() const { return m_data.size() / (m_dims * kBandPanelKeys); }
    // The keys [first, first + count) as rows (unpacked only).
    Eigen::Map<const Matrix<T>> rows(Eigen::Index first, Eigen::Index count) const
    {
        return Eigen::Map<const Matrix<T>>(m_data.data() + first * m_dims, count, m_dims);
    }

private:
    Eigen::Index m_dims;
    Vector<T> m_data;  // uninitialised until set: set() writes every value
};

// The matrices the band products take, with Ref's stride for a matrix written out: clang mangles
// a function template's Ref parameter through Ref's dependent default stride differently in the
// declaration and in the definition, which left the explicit instantiations unresolved.
template <typename T>
using BandInput = Eigen::Ref<const Matrix<T>, 0, Eigen::OuterStride<>>;
template <typename T>
using BandOutput = Eigen::Ref<Matrix<T>, 0, Eigen::OuterStride<>>;

// S_rj = factor a_r . x_j for every row r of a and at least every key j of r's group's range
// (KeyRanges::groupFirst..groupLast of its kBandGroupRows rows; the kernels take whole panels, or
// the half of an end panel that holds the range's keys), written to s (rows x spanCols, column c
// is key spanFirst + c); other columns left as they were.
template <typename T>
void bandScores(const BandInput<T>& a, const BandKeys<T>& keys, T factor, const KeyRanges& ranges,
                BandOutput<T> s);

// o_r = sum_j s_rj v_j over the keys j of r's group (groupFirst..groupLast), for every row r of s
// (laid out as for bandScores): the caller zeroes the entries of a row outside its own range.
template <typename T>
void bandTimes(const BandInput<T>& s, const KeyRanges& ranges, const Matrix<T>& v, BandOutput<T> o);

}  // namespace attnlab

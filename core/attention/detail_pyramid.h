#pragma once

#include "types.h"

#include <functional>
#include <vector>

namespace attnlab {

// The level-of-detail pyramid a heatmap draws a large matrix from, so that a redraw at any zoom
// reads about four cells per pixel. Level 0 is the R x C matrix itself (not stored here); level
// l >= 1 has ceil(R / 2^l) x ceil(C / 2^l) cells, each the signed extreme of the (up to) 2 x 2
// cells of level l - 1 below it: the entry of largest magnitude, with its sign, NaN only when all
// of them are NaN. Levels stop at the first with at most 64 cells on each side. A block mean
// would fade a one-cell-wide diagonal or a lone large error by the block size; the extreme keeps
// them. Also the matrix's smallest and largest entries and its smallest magnitude, NaN ignored.
//
// Levels are kept in float: a pixel's colour needs no more, and at L = 4096 the pyramid takes
// a third of a float matrix (21 MiB). The engine fills level 1 in its own pass over blocks of
// rows, while the rows are in cache (addRows, from several threads on disjoint blocks), then
// finish() builds the coarser levels.
class DetailPyramid {
public:
    // An empty pyramid for an R x C matrix, to be filled by addRows and finish().
    DetailPyramid(Eigen::Index rows, Eigen::Index cols);

    // Rows [begin, begin + count) of a matrix, row-major and contiguous: a pointer into the
    // matrix itself, or into scratch after filling it.
    using RowsReader =
        std::function<const double*(Eigen::Index begin, Eigen::Index count, MatrixD& scratch)>;

    // The pyramid of an R x C matrix read in blocks of rows, finished; on all engine threads
    // when the matrix is large.
    static DetailPyramid of(Eigen::Index rows, Eigen::Index cols, const RowsReader& read);

    // The pyramid of a whole matrix, finished.
    template <typename T>
    static DetailPyramid of(const Matrix<T>& matrix);

    // Reduces rows [begin, begin + count) of the matrix, given row-major and contiguous at rows,
    // into level 1 and the bounds. begin is even, and count is even unless the block ends the
    // matrix. Calls for disjoint blocks may run at the same time.
    template <typename T>
    void addRows(Eigen::Index begin, const T* rows, Eigen::Index count);

    // Builds levels 2 and up from level 1 and totals the bounds, once every row was added.
    void finish();

    Eigen::Index rows() const { return m_rows; }
    Eigen::Index cols() const { return m_cols; }
    // The number of stored levels: levels 1 .. levelCount().
    int levelCount() const { return int(m_levels.size()); }
    // Level l, 1 <= l <= levelCount().
    const Matrix<float>& level(int l) const { return m_levels[std::size_t(l - 1)]; }

    // Whether the matrix has an entry that is not NaN; the bounds below are meaningful only then.
    bool hasValues() const { return m_lower <= m_upper; }
    double lower() const { return m_lower; }
    double upper() const { return m_upper; }
    // The smallest |entry|, NaN ignored.
    double smallestMagnitude() const { return m_smallestMagnitude; }

private:
    // The bounds of a block of level-0 rows, kept with the block's first pair of rows.
    struct RowBounds {
        double lower;
        double upper;
        double smallestMagnitude;
    };

    Eigen::Index m_rows = 0;
    Eigen::Index m_cols = 0;
    std::vector<Matrix<float>> m_levels;  // m_levels[l - 1]: level l
    std::vector<RowBounds> m_rowBounds;   // per pair of level-0 rows (a block's first)
    double m_lower;
    double m_upper;
    double m_smallestMagnitude;
};

// Of two values, the one of larger magnitude, keeping its sign; a NaN only when both are NaN.
// Written without branches so that loops over it vectorise.
template <typename T>
inline T signedExtreme(T a, T b)
{
    return ((std::abs(b) > std::abs(a)) | (a != a)) ? b : a;
}

}  // namespace attnlab

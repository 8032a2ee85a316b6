#include "attention/detail_pyramid.h"

#include "memory_budget.h"
#include "parallel.h"

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// The pyramid stops at the first level with at most this many cells on each side.
constexpr Eigen::Index kCoarsestLevelSide = 64;
// Levels with at least this many cells are reduced on all engine threads; smaller ones take a
// millisecond or two on one, less than waking the others can cost on a busy machine.
constexpr Eigen::Index kParallelLevelCells = Eigen::Index(1) << 20;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// out[j] = signed extreme of top[2j], top[2j + 1], bottom[2j], bottom[2j + 1] for the columns
// that exist; pair is scratch space of `cols` entries.
template <typename T>
void reducePairOfRows(const T* top, const T* bottom, Eigen::Index cols, T* pair, float* out)
{
#pragma omp simd
    for (Eigen::Index j = 0; j < cols; ++j)
        pair[j] = signedExtreme(top[j], bottom[j]);
#pragma omp simd
    for (Eigen::Index j = 0; j < cols / 2; ++j)
        out[j] = float(signedExtreme(pair[2 * j], pair[2 * j + 1]));
    if (cols % 2 != 0)
        out[cols / 2] = float(pair[cols - 1]);
}

// coarser = the 2 x 2 signed extremes of finer.
void reduceLevel(const Matrix<float>& finer, Matrix<float>& coarser)
{
    const Eigen::Index rows = finer.rows();
    const Eigen::Index cols = finer.cols();
    coarser.resize((rows + 1) / 2, (cols + 1) / 2);
    const auto reduceRows = [&](Eigen::Index begin, Eigen::Index end) {
        std::vector<float> pair(static_cast<std::size_t>(cols));
        for (Eigen::Index i = begin; i < end; ++i) {
            const float* top = finer.data() + 2 * i * cols;
            const float* bottom = 2 * i + 1 < rows ? top + cols : top;
            reducePairOfRows(top, bottom, cols, pair.data(), coarser.data() + i * coarser.cols());
        }
    };
    if (finer.size() >= kParallelLevelCells)
        forEachRowBlock(coarser.rows(), 16, reduceRows);
    else
        reduceRows(0, coarser.rows());
}

}  // namespace

DetailPyramid::DetailPyramid(Eigen::Index rows, Eigen::Index cols)
    : m_rows(rows),
      m_cols(cols),
      m_rowBounds(std::size_t((rows + 1) / 2), RowBounds{kInfinity, -kInfinity, kInfinity}),
      m_lower(kInfinity),
      m_upper(-kInfinity),
      m_smallestMagnitude(kInfinity)
{
    std::size_t levels = 0;
    for (Eigen::Index r = rows, c = cols; std::max(r, c) > kCoarsestLevelSide;
         r = (r + 1) / 2, c = (c + 1) / 2)
        ++levels;
    m_levels.resize(levels);
    if (levels > 0) {
        m_levels[0].resize((rows + 1) / 2, (cols + 1) / 2);
        adviseHugePages(m_levels[0].data(), std::size_t(m_levels[0].size()) * sizeof(float));
    }
}

DetailPyramid DetailPyramid::of(Eigen::Index rows, Eigen::Index cols, const RowsReader& read)
{
    DetailPyramid pyramid(rows, cols);
    constexpr Eigen::Index blockRows = 32;
    const auto addBlock = [&](Eigen::Index begin, Eigen::Index end) {
        MatrixD scratch;
        pyramid.addRows(begin, read(begin, end - begin, scratch), end - begin);
    };
    if (rows * cols >= kParallelLevelCells) {
        forEachRowBlock(rows, blockRows, addBlock);
    } else {
        for (Eigen::Index begin = 0; begin < rows; begin += blockRows)
            addBlock(begin, std::min(rows, begin + blockRows));
    }
    pyramid.finish();
    return pyramid;
}

template <typename T>
DetailPyramid DetailPyramid::of(const Matrix<T>& matrix)
{
    if constexpr (std::is_same_v<T, double>) {
        return of(matrix.rows(), matrix.cols(),
                  [&matrix](Eigen::Index begin, Eigen::Index, MatrixD&) {
                      return matrix.data() + begin * matrix.cols();
                  });
    } else {
        return of(matrix.rows(), matrix.cols(),
                  [&matrix](Eigen::Index begin, Eigen::Index count, MatrixD& scratch) {
                      scratch = matrix.middleRows(begin, count).template cast<double>();
                      return static_cast<const double*>(scratch.data());
                  });
    }
}

template <typename T>
void DetailPyramid::addRows(Eigen::Index begin, const T* rows, Eigen::Index count)
{
    if (!m_levels.empty()) {
        std::vector<T> pair(static_cast<std::size_t>(m_cols));
        for (Eigen::Index r = 0; r < count; r += 2) {
            const T* top = rows + r * m_cols;
            reducePairOfRows(top, r + 1 < count ? top + m_cols : top, m_cols, pair.data(),
                             m_levels[0].data() + (begin + r) / 2 * m_levels[0].cols());
        }
    }
    // The block's bounds, kept with its first pair of rows (Eigen's reductions vectorise with
    // NaN ignored; a hand-written loop would not).
    const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> values(rows, count * m_cols);
    m_rowBounds[std::size_t(begin / 2)] = {
        double(values.template minCoeff<Eigen::PropagateNumbers>()),
        double(values.template maxCoeff<Eigen::PropagateNumbers>()),
        double(values.abs().template minCoeff<Eigen::PropagateNumbers>())};
}

void DetailPyramid::finish()
{
    for (std::size_t level = 1; level < m_levels.size(); ++level)
        reduceLevel(m_levels[level - 1], m_levels[level]);
    // std::min(x, NaN) is x: rows of NaN only leave the bounds as they were.
    for (const RowBounds& bounds : m_rowBounds) {
        m_lower = std::min(m_lower, bounds.lower);
        m_upper = std::max(m_upper, bounds.upper);
        m_smallestMagnitude = std::min(m_smallestMagnitude, bounds.smallestMagnitude);
    }
}

template DetailPyramid DetailPyramid::of<float>(const Matrix<float>&);
template DetailPyramid DetailPyramid::of<double>(const MatrixD&);
template void DetailPyramid::addRows<float>(Eigen::Index, const float*, Eigen::Index);
template void DetailPyramid::addRows<double>(Eigen::Index, const double*, Eigen::Index);

}  // namespace attnlab

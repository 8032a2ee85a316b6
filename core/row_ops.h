#pragma once

#include <Eigen/Core>

#include <limits>

namespace attnlab {

template <typename T>
constexpr T minusInfinity()
{
    return -std::numeric_limits<T>::infinity();
}

// m_rj <- factor exp(m_rj - shift_r) for every row r of a row-major matrix. Row by row, so that
// Eigen's vectorised exp runs along the contiguous rows (a colwise() broadcast over a row-major
// matrix is evaluated one scalar at a time, about six times slower here).
template <typename Derived, typename Shift>
void expShiftedRows(const Eigen::MatrixBase<Derived>& matrix, const Shift& shift,
                    typename Derived::Scalar factor = 1)
{
    auto& m = const_cast<Eigen::MatrixBase<Derived>&>(matrix);
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        m.row(r) = (m.row(r).array() - shift[r]).exp() * factor;
}

}  // namespace attnlab

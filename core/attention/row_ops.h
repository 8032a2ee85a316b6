#pragma once

#include "parallel.h"
#include "types.h"

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

// x_j <- exp(x_j - shift) for the n values at x, and returns their sum: the step of an online
// softmax, where shift is the row's running maximum, so that every argument x_j - shift is at
// most 0 (or -inf, for a masked score). Arguments below -87.34 are raised to it, as Eigen's exp
// clamps them: exp(-inf) gives the smallest normal number, not 0.
// Float, compiled for AVX2 and FMA: one pass, 8 values at a time, with Cephes' expf (the two-part
// Cody-Waite reduction x = n ln 2 + r, |r| <= ln 2 / 2, and exp(r) as 1 + r + r^2 p(r) with p of
// degree 5; exp(x) = 2^n exp(r)): within 2 ulp of exp, about twice as fast as Eigen's exp and a
// separate sum. Otherwise (and for double) Eigen's exp and sum.
float expShiftedSum(float* x, Eigen::Index n, float shift);
double expShiftedSum(double* x, Eigen::Index n, double shift);

// Softmax of every row of a row-major matrix, in place: x_rj <- exp(x_rj - M_r) / sum_j
// exp(x_rj - M_r) with M_r = max_j x_rj, the exponentials by expShiftedSum (so every entry must
// be finite: leave masked entries out of the matrix rather than set them to -inf).
template <typename T>
void softmaxRows(Eigen::Ref<Matrix<T>> x)
{
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        T* row = x.row(r).data();
        const T shift = x.row(r).maxCoeff();
        const T sum = expShiftedSum(row, x.cols(), shift);
        x.row(r) /= sum;
    }
}

// softmax(s x y^T) row by row (L_x x L_y): the product on every engine thread, then softmaxRows
// in blocks of 64 rows spread over the engine threads. Linformer's P- and Nystromformer's F, A~
// and B.
template <typename T>
Matrix<T> softmaxOfScores(const Matrix<T>& x, const Matrix<T>& y, double scale)
{
    constexpr Eigen::Index kSoftmaxBlock = 64;
    Matrix<T> scores(x.rows(), y.rows());
    scores.noalias() = (T(scale) * x) * y.transpose();
    forEachRowBlock(scores.rows(), kSoftmaxBlock, [&](Eigen::Index begin, Eigen::Index end) {
        softmaxRows<T>(scores.middleRows(begin, end - begin));
    });
    return scores;
}

// For every row r of a row-major matrix, with M_r = max_j (x_rj + b_j) written to rowMax[r]:
// x_rj <- factor exp(x_rj + b_j - M_r), where b is `bias` (1 x cols) or 0 when bias is null. Row
// by row, so each row stays in cache between its maximum and its exponentials (expShiftedSum's).
template <typename T>
void expBelowRowMax(Eigen::Ref<Matrix<T>> x, const Eigen::Matrix<T, 1, Eigen::Dynamic>* bias,
                    T factor, Eigen::Ref<Vector<T>> rowMax)
{
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        auto row = x.row(r);
        if (bias)
            row += *bias;
        rowMax[r] = row.maxCoeff();
        expShiftedSum(row.data(), x.cols(), rowMax[r]);
        if (factor != T(1))
            row *= factor;
    }
}

// sum_i x_i and sum_i x_i^2 (coordinate by coordinate) over the rows of x.
struct ColumnMoments {
    VectorD sums;
    VectorD squares;
};

// ColumnMoments of x in one pass, by blocks of 1024 rows on the engine threads: each block summed
// in T, the blocks in double in a fixed order (the same sums for any number of threads).
template <typename T>
ColumnMoments columnMoments(const Eigen::Ref<const Matrix<T>>& x)
{
    constexpr Eigen::Index kBlockRows = 1024;
    const Eigen::Index blocks = (x.rows() + kBlockRows - 1) / kBlockRows;
    MatrixD sums = MatrixD::Zero(blocks, x.cols());
    MatrixD squares = MatrixD::Zero(blocks, x.cols());
    forEachRowBlock(x.rows(), kBlockRows, [&](Eigen::Index begin, Eigen::Index end) {
        Eigen::Matrix<T, 1, Eigen::Dynamic> sum =
            Eigen::Matrix<T, 1, Eigen::Dynamic>::Zero(x.cols());
        Eigen::Matrix<T, 1, Eigen::Dynamic> square = sum;
        for (Eigen::Index r = begin; r < end; ++r) {
            sum += x.row(r);
            square += x.row(r).cwiseAbs2();
        }
        sums.row(begin / kBlockRows) = sum.template cast<double>();
        squares.row(begin / kBlockRows) = square.template cast<double>();
    });
    return {sums.colwise().sum().transpose(), squares.colwise().sum().transpose()};
}

}  // namespace attnlab

#pragma once

#include <Eigen/Core>

namespace attnlab {

// Rows are tokens (queries, keys, values, features), so matrices are row-major: a block of rows
// is contiguous and maps one to one onto a C-order .npy array.
template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

using MatrixD = Matrix<double>;
using VectorD = Vector<double>;

// The arithmetic the engine runs in. Results are handed out as double either way (a float
// converts to double exactly), except the L x L matrices P and P^, kept in this precision
// (ResultMatrix); files are written in the precision they were computed in.
enum class Precision { Float, Double };

}  // namespace attnlab

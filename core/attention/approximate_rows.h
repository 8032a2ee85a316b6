#pragma once

#include "types.h"

#include <cmath>
#include <vector>

namespace attnlab {

// O^ of an approximation, and the rows where it divides by a denominator that is not positive.
template <typename T>
struct ApproximateOutput {
    Matrix<T> output;  // O^ (L x d_v)
    // Rows i whose denominator (phi(q_i)^T z, or the method's row sum of A^) is not positive.
    // Their output is numerator / denominator where that is finite, else 0.
    std::vector<Eigen::Index> nonPositiveRows;
};

// Rows of P^ (and of A^, where the method defines it) formed explicitly, for display and metrics.
template <typename T>
class ApproximateRows {
public:
    virtual ~ApproximateRows() = default;

    // Rows [begin, begin + p.rows()) of P^ (0 for j > i when causal). When kernel is not null and
    // the method has a kernel (MethodInfo::hasKernel), it receives the same rows of A^ at their
    // true scale, in double.
    virtual void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const = 0;
};

// out_i = num_i / den_i where den_i is finite and not 0, else 0.
template <typename T>
void divideRows(const Eigen::Ref<const Matrix<T>>& numerator,
                const Eigen::Ref<const Vector<T>>& denominator, Eigen::Ref<Matrix<T>> out)
{
    for (Eigen::Index r = 0; r < out.rows(); ++r) {
        const T den = denominator[r];
        if (den != T(0) && std::isfinite(den))
            out.row(r) = numerator.row(r) / den;
        else
            out.row(r).setZero();
    }
}

// The indices i where denominators[i] is not positive or not finite.
template <typename T>
std::vector<Eigen::Index> nonPositiveEntries(const Vector<T>& denominators)
{
    std::vector<Eigen::Index> rows;
    for (Eigen::Index i = 0; i < denominators.size(); ++i)
        if (!(denominators[i] > T(0)) || !std::isfinite(denominators[i]))
            rows.push_back(i);
    return rows;
}

}  // namespace attnlab

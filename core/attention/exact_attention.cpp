#include "attention/exact_attention.h"

#include "parallel.h"
#include "attention/row_ops.h"

#include <cmath>

namespace attnlab {

namespace {

// Rows per block when P is formed in full.
constexpr Eigen::Index kRowBlock = 32;

// Sets m(r, c) to value where key j0 + c lies after query i0 + r (the causal mask). Scores are
// masked with -inf before the row maxima are taken, and the exponentials with 0 after: Eigen's
// vectorised exp clamps its argument, so exp(-inf) gives the smallest normal number, not 0.
template <typename Block>
void maskFutureKeys(Block&& m, Eigen::Index i0, Eigen::Index j0,
                    typename std::decay_t<Block>::Scalar value)
{
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        const Eigen::Index firstMasked = std::max<Eigen::Index>(0, i0 + r + 1 - j0);
        if (firstMasked < m.cols())
            m.row(r).tail(m.cols() - firstMasked).setConstant(value);
    }
}

}  // namespace

template <typename T>
void exactAttentionRows(const Matrix<T>& q, const Matrix<T>& k, double scale, bool causal,
                        Eigen::Index begin, Eigen::Ref<Matrix<T>, 0, Eigen::OuterStride<>> p,
                        double* logNormaliser)
{
    const Eigen::Index rows = p.rows();
    p.noalias() = (q.middleRows(begin, rows) * T(scale)) * k.transpose();
    if (causal)
        maskFutureKeys(p, begin, 0, minusInfinity<T>());
    const Vector<T> rowMax = p.rowwise().maxCoeff();
    expShiftedRows(p, rowMax);
    if (causal)
        maskFutureKeys(p, begin, 0, T(0));
    const Vector<T> rowSum = p.rowwise().sum();
    if (logNormaliser)
        for (Eigen::Index r = 0; r < rows; ++r)
            logNormaliser[r] = double(rowMax[r]) + std::log(double(rowSum[r]));
    p = rowSum.cwiseInverse().asDiagonal() * p;
}

template <typename T>
void exactKernelRows(const Eigen::Ref<const Matrix<T>>& p, const double* logNormaliser,
                     MatrixD& kernel)
{
    kernel.resize(p.rows(), p.cols());
    for (Eigen::Index r = 0; r < p.rows(); ++r) {
        const double factor = std::exp(logNormaliser[r]);
        if (std::isfinite(factor)) {
            kernel.row(r) = p.row(r).template cast<double>() * factor;
        } else {
            kernel.row(r) = p.row(r).template cast<double>();
            for (double& value : kernel.row(r))
                value = value == 0.0 ? 0.0 : std::exp(logNormaliser[r] + std::log(value));
        }
    }
}

void queryAttention(const ConstRows& q, const ConstRows& k, const ConstRows& v, float scale,
                    Eigen::MatrixXf& scores, Rows out)
{
    const Eigen::Index n = k.rows();
    scores.resize(n, q.rows());
    scores.noalias() = k * (q.transpose() * scale);
    for (Eigen::Index r = 0; r < q.rows(); ++r) {
        float* column = scores.col(r).data();
        const float sum = expShiftedSum(column, n, scores.col(r).maxCoeff());
        scores.col(r) /= sum;
    }
    out.noalias() = scores.transpose() * v;
}

template <typename T>
Matrix<T> streamingAttention(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                             double scale, bool causal)
{
    const Eigen::Index length = q.rows();
    const Eigen::Index keyCount = k.rows();
    const Matrix<T> scaledQ = q * T(scale);
    Matrix<T> output(length, v.cols());
    forEachRowBlock(length, kStreamingQueryTile, [&](Eigen::Index begin, Eigen::Index end) {
        const Eigen::Index rows = end - begin;
        Matrix<T> scores(rows, kStreamingKeyTile);
        Matrix<T> accumulator = Matrix<T>::Zero(rows, v.cols());
        Vector<T> runningMax = Vector<T>::Constant(rows, minusInfinity<T>());
        Vector<T> runningSum = Vector<T>::Zero(rows);
        Vector<T> correction(rows);
        const Eigen::Index keyEnd = causal ? std::min(end, keyCount) : keyCount;
        for (Eigen::Index j0 = 0; j0 < keyEnd; j0 += kStreamingKeyTile) {
            const Eigen::Index cols = std::min(kStreamingKeyTile, keyEnd - j0);
            auto tile = scores.leftCols(cols);
            tile.noalias() = scaledQ.middleRows(begin, rows) * k.middleRows(j0, cols).transpose();
            const bool masked = causal && j0 + cols > begin + 1;
            if (masked)
                maskFutureKeys(tile, begin, j0, minusInfinity<T>());
            // Row by row, so that the row stays in L1 from its maximum through its sum. The first
            // tile holds key 0, which no query masks, so runningMax is finite after it.
            for (Eigen::Index r = 0; r < rows; ++r) {
                auto row = tile.row(r);
                const T newMax = std::max(runningMax[r], row.maxCoeff());
                correction[r] = std::exp(runningMax[r] - newMax);
                runningMax[r] = newMax;
                // (A masked score's exp, the smallest normal number, adds nothing visible to the
                // sum, which holds exp(0) = 1; it is set to 0 before it weighs a value.)
                runningSum[r] =
                    runningSum[r] * correction[r] + expShiftedSum(row.data(), cols, newMax);
                if (masked)
                    maskFutureKeys(row, begin + r, j0, T(0));
            }
            accumulator = correction.asDiagonal() * accumulator;
            accumulator.noalias() += tile * v.middleRows(j0, cols);
        }
        output.middleRows(begin, rows) = runningSum.cwiseInverse().asDiagonal() * accumulator;
    });
    return output;
}

template <typename T>
MaterialisedAttention<T> materialisedAttention(const Matrix<T>& q, const Matrix<T>& k,
                                               const Matrix<T>& v, double scale, bool causal)
{
    MaterialisedAttention<T> result;
    result.attention.resize(q.rows(), k.rows());
    forEachRowBlock(q.rows(), kRowBlock, [&](Eigen::Index begin, Eigen::Index end) {
        exactAttentionRows<T>(q, k, scale, causal, begin,
                              result.attention.middleRows(begin, end - begin));
    });
    result.output.noalias() = result.attention * v;
    return result;
}

template void exactAttentionRows<float>(const Matrix<float>&, const Matrix<float>&, double, bool,
                                        Eigen::Index,
                                        Eigen::Ref<Matrix<float>, 0, Eigen::OuterStride<>>,
                                        double*);
template void exactAttentionRows<double>(const Matrix<double>&, const Matrix<double>&, double, bool,
                                         Eigen::Index,
                                         Eigen::Ref<Matrix<double>, 0, Eigen::OuterStride<>>,
                                         double*);
template void exactKernelRows<float>(const Eigen::Ref<const Matrix<float>>&, const double*,
                                     MatrixD&);
template void exactKernelRows<double>(const Eigen::Ref<const MatrixD>&, const double*, MatrixD&);
template Matrix<float> streamingAttention<float>(const Matrix<float>&, const Matrix<float>&,
                                                 const Matrix<float>&, double, bool);
template Matrix<double> streamingAttention<double>(const Matrix<double>&, const Matrix<double>&,
                                                   const Matrix<double>&, double, bool);
template MaterialisedAttention<float> materialisedAttention<float>(const Matrix<float>&,
                                                                   const Matrix<float>&,
                                                                   const Matrix<float>&, double,
                                                                   bool);
template MaterialisedAttention<double> materialisedAttention<double>(const Matrix<double>&,
                                                                     const Matrix<double>&,
                                                                     const Matrix<double>&, double,
                                                                     bool);

}  // namespace attnlab

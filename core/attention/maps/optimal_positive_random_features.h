#pragma once

#include "attention/maps/random_projection_map.h"
#include "attention/row_ops.h"

#include <cmath>

namespace attnlab {

// FAVOR++, the optimal positive random features (OPRFs) of Likhosherstov et al., "Chefs' Random
// Tables: Non-Trigonometric Random Features", NeurIPS 2022: for A < 1/8, B = sqrt(1 - 4A) and
// D = (1 - 4A)^(d/4),
//   phi(x) = m^-1/2 D exp(A |w_k|^2 + B w_k.x' - |x'|^2 / 2),  k = 1..m,
// unbiased for exp(x'.y') when each w_k is marginally N(0, I_d): E[f(x) f(y)] =
// D^2 (1 - 4A)^(-d/2) exp(B^2 |x' + y'|^2 / (2 (1 - 4A)) - |x'|^2/2 - |y'|^2/2) = exp(x'.y').
// A = 0 is FAVOR+ positive. The A that minimises the mean log second moment over every pair of
// the sequence's queries x'_i and keys y'_j is (the paper's Theorem 3.2)
//   A* = (1 - 2 rho - sqrt((2 rho + 1)^2 + 8 rho)) / 16,  rho = sum_ij |x'_i + y'_j|^2 / (d L L_k),
// where sum_ij |x'_i + y'_j|^2 = L_k sum |x'_i|^2 + L sum |y'_j|^2 + 2 (sum x'_i).(sum y'_j).
// A* depends on every query and key, so causal attention keeps the fixed A of the spec.
// With u_ik = A |w_k|^2 + B (W x'_i)_k and M_i = max_k u_ik: Phi_i = m^-1/2 exp(u_i - M_i),
// c_i = M_i + (d/4) log(1 - 4A) - |x'_i|^2 / 2. C = m.
template <typename T>
class OptimalPositiveRandomFeatures final : public RandomProjectionMap<T> {
public:
    OptimalPositiveRandomFeatures(const ApproximationSpec& spec, int d, double scale, HeadSite site)
        : RandomProjectionMap<T>(spec, d, scale, site),
          m_d(d),
          m_scale(scale),
          m_fixedA(spec.value(favorAParameter())),
          m_useFixedA(spec.isOn(favorFixedAParameter())),
          m_squaredRowNorms(
              this->m_projection.rowwise().squaredNorm().transpose().template cast<T>())
    {
        setA(m_fixedA);
    }

    // A* for queries x'_i = sqrt(s) q_i and keys y'_j = sqrt(s) k_j (formula above).
    static double optimalA(const Eigen::Ref<const Matrix<T>>& q,
                           const Eigen::Ref<const Matrix<T>>& k, double scale)
    {
        const double lq = double(q.rows()), lk = double(k.rows()), d = double(q.cols());
        const ColumnMoments queries = columnMoments<T>(q);
        const ColumnMoments keys = columnMoments<T>(k);
        const double pairs =
            lk * queries.squares.sum() + lq * keys.squares.sum() + 2 * queries.sums.dot(keys.sums);
        const double rho = scale * pairs / (d * lq * lk);
        return (1 - 2 * rho - std::sqrt((2 * rho + 1) * (2 * rho + 1) + 8 * rho)) / 16;
    }

    void fit(const Eigen::Ref<const Matrix<T>>& q, const Eigen::Ref<const Matrix<T>>& k,
             bool causal) override
    {
        setA(causal || m_useFixedA ? m_fixedA : optimalA(q, k, m_scale));
    }

    // The A the map uses now.
    double closedFormParameter() const override { return m_a; }

    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        // u_ik = B (W x'_i)_k + A |w_k|^2: B folded into the projection, A |w|^2 the bias of
        // each row's exponentials.
        phi.noalias() = x * m_scaledProjectionTimesB;
        Vector<T> rowMax(x.rows());
        expBelowRowMax<T>(phi, &m_bias, T(1 / std::sqrt(double(this->m_features))), rowMax);
        logScale = (rowMax - this->halfSquaredNorms(x)).array() + T(m_logD);
    }

    // The MSE of phi(x).phi(y) for SM = exp(x'.y') with iid rows (x, y here are x', y'):
    // 1/m (E[(f(x) f(y))^2] - SM^2) with E[(f(x) f(y))^2] =
    // (1 - 4A)^d (1 - 8A)^(-d/2) exp(2 (1 - 4A) |x' + y'|^2 / (1 - 8A) - |x'|^2 - |y'|^2);
    // at A = 0 it is Lemma 2's MSE of FAVOR+ positive. Written as SM^2 expm1(...) / m.
    static double kernelMse(double m, const VectorD& x, const VectorD& y, double a)
    {
        const double d = double(x.size());
        const double logSecondMoment = d * std::log1p(-4 * a) - d / 2 * std::log1p(-8 * a) +
                                       2 * (1 - 4 * a) * (x + y).squaredNorm() / (1 - 8 * a) -
                                       x.squaredNorm() - y.squaredNorm();
        const double twoLogKernel = 2 * x.dot(y);
        return std::exp(twoLogKernel) * std::expm1(logSecondMoment - twoLogKernel) / m;
    }

private:
    void setA(double a)
    {
        m_a = a;
        m_b = std::sqrt(1 - 4 * a);
        m_logD = double(m_d) / 4 * std::log1p(-4 * a);
        m_bias = m_squaredRowNorms * T(a);
        m_scaledProjectionTimesB = this->m_scaledProjectionT * T(m_b);
    }

    int m_d;
    double m_scale;
    double m_fixedA;
    bool m_useFixedA;
    Eigen::Matrix<T, 1, Eigen::Dynamic> m_squaredRowNorms;  // |w_k|^2, k = 1..m
    double m_a = 0;
    double m_b = 1;
    double m_logD = 0;
    Eigen::Matrix<T, 1, Eigen::Dynamic> m_bias;  // A |w_k|^2
    Matrix<T> m_scaledProjectionTimesB;          // B (sqrt(s) W)^T, d x m
};

}  // namespace attnlab

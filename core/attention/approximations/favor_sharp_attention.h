#pragma once

#include "attention/approximation.h"
#include "attention/maps/optimal_positive_random_features.h"

namespace attnlab {

// FAVOR# with simplified asymmetric dense-exponential random features, SADERFs (Likhosherstov et
// al., "FAVOR#: Sharp Attention Kernel Approximations via New Classes of Positive Random
// Features", 2023): FAVOR++ (optimal positive random features) on queries and keys rescaled
// coordinate by coordinate in opposite directions,
//   x''_i = Psi x'_i,  y''_j = Psi^-1 y'_j,  Psi = diag(psi_1 .. psi_d),
// which keeps every x'_i.y'_j = x''_i.y''_j (so the kernel exp(x'.y') and softmax are unchanged)
// while the features see balanced coordinates. The paper's optimal diagonal is
//   psi_l = (sum_j k_jl^2 / sum_i q_il^2)^(1/4)
// (a coordinate that is 0 for every query or every key keeps psi_l = 1), and A* is then fitted
// to x'', y'' as FAVOR++ fits it:
//   phi(x'') = (1 - 4A)^(d/4) m^-1/2 exp(A |w_k|^2 + sqrt(1 - 4A) w_k.x'' - |x''|^2 / 2).
// Psi and A* look at every query and key: no causal form. P^ = D^-1 phi(Q'') phi(K'')^T and
// O^ = P^ V by linear attention (linear_attention.h).
template <typename T>
class FavorSharpAttention final : public Approximation<T> {
public:
    FavorSharpAttention(const ApproximationSpec& spec, int d, Eigen::Index length, double scale,
                        HeadSite site);

    // FAVOR++'s flops (4 L m d for the features, 4 L m d_v for the products) and 4 L d for Psi
    // and the rescaled rows.
    static double flops(const CostShape& shape);
    // phi(K) and a block of phi(Q), as linear attention keeps them, and the rescaled Q and K.
    static double workingSetFloats(const CostShape& shape);

    // Psi from q and k, the rescaled rows Psi q and Psi^-1 k (kept for output() and rows(),
    // which take the q and k fitted last), then A* from them. Throws InputError when causal.
    void fit(const Matrix<T>& q, const Matrix<T>& k, bool causal) override;
    ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                bool causal, Eigen::Index chunk) const override;
    std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                             bool causal) const override;
    MatrixD projection() const override { return m_phi.projection(); }

    // psi_1 .. psi_d of the last fit (1 before it).
    const Eigen::Matrix<T, 1, Eigen::Dynamic>& rescaling() const { return m_psi; }
    // The A the features use (A* of the last fit).
    double parameterA() const { return m_phi.closedFormParameter(); }

private:
    // Throws InputError when causal, std::logic_error when q and k are not the rows fitted.
    void requireFitted(const Matrix<T>& q, const Matrix<T>& k, bool causal) const;

    OptimalPositiveRandomFeatures<T> m_phi;
    Eigen::Matrix<T, 1, Eigen::Dynamic> m_psi;
    Matrix<T> m_queries;  // Psi q of the last fit
    Matrix<T> m_keys;     // Psi^-1 k
};

}  // namespace attnlab

#pragma once

#include "attention/fitted_feature_maps.h"
#include "types.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace attnlab {

// The fit of one head's Hedgehog maps by distillation (docs/design.md section 2.12): the model is
// frozen, and the maps' parameters theta = (W_q, b_q, W_k, b_k) minimise the mean over the
// training rows of the cross-entropy between the exact attention row P_i and the linear
// attention row P^_i,
//   l(theta) = (1/N) sum_i CE_i,   CE_i = -sum_j P_ij log P^_ij,
//   P^_ij = phi_q(q_i).phi_k(k_j) / sum_j' phi_q(q_i).phi_k(k_j')   (j, j' <= i when causal),
// whose minimum over P^ is the entropy H(P_i): CE_i - H(P_i) = KL(P_i || P^_i).

// One window of a head's training text: its queries and keys as the map sees them, x' = sqrt(s) x
// (rows in order of position), and the exact rows P (0 above the diagonal when causal).
struct FitWindow {
    MatrixD queries;  // L x d
    MatrixD keys;     // L x d
    MatrixD exact;    // P, L x L
};

// A head's training data: the windows of its text, and whether its attention is causal.
struct HeadFitData {
    std::vector<FitWindow> windows;
    bool causal = true;

    Eigen::Index rows() const;
};

// theta as one vector: W_q (row by row), b_q, W_k, b_k; and back (the window weight kept).
VectorD packParameters(const FittedHeadMaps& maps);
void unpackParameters(const VectorD& theta, FittedHeadMaps& maps);

// l(theta) over the windows `batch` (indices into data.windows; all of them when empty), and,
// with `gradient` not null, its gradient (in packParameters' order), analytic: with phi_q(q_i) =
// Phi_i exp(M_i), phi_k(k_j) = Psi_j exp(kappa) (M_i = max_f |u_if|, kappa the largest |v_jf|
// of the window), Ahat_ij = Phi_i.Psi_j and R_ij = (P^_ij - P_ij) / Ahat_ij (0 where masked),
//   dl/du_i = Phi+_i o (R Psi)+_i - Phi-_i o (R Psi)-_i,  dl/dv_j likewise with R^T Phi,
//   dl/dW_q = sum_i dl/du_i x'_i^T, dl/db_q = sum_i dl/du_i (and the keys'), all over N,
// u = W_q x' + b_q, v = W_k y' + b_k, + and - the two halves of the features; the scales
// exp(M_i), exp(kappa) cancel. Also the mean row entropy of P over the batch, so that
// l - entropy is the mean row KL(P || P^). Products in double on the calling thread.
struct DistillationLoss {
    double crossEntropy = 0;
    double entropy = 0;
    double kl() const { return crossEntropy - entropy; }
};
DistillationLoss distillationLoss(const FittedHeadMaps& maps, const HeadFitData& data,
                                  const std::vector<std::size_t>& batch, VectorD* gradient);

// How a head is fitted.
struct DistillationSettings {
    int steps = 400;             // Adam steps
    double learningRate = 0.05;  // Adam's step size (decayed by a cosine to a tenth of it)
    int batchWindows = 8;        // windows per step, drawn without replacement, seeded
    std::uint64_t seed = 0;      // the batches' draws
};

// Adam (Kingma and Ba 2015: beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8) on l(theta) from `maps`,
// `settings.steps` steps. After each step, step(t, kl) gets the step (1-based) and the batch's
// mean row KL; it returns false to stop (cancel). Returns the maps of the last step. Throws
// InputError when the loss or a parameter is no longer finite (naming the step); the maps given
// are not touched.
FittedHeadMaps fitHeadMaps(const FittedHeadMaps& maps, const HeadFitData& data,
                           const DistillationSettings& settings,
                           const std::function<bool(int, double)>& step);

// hedgehog-window's log gamma for the maps and a window of w keys (causal): the weight of the
// features outside the window that minimises the mean row cross-entropy of the rows
//   A^_ij = exp(s q_i.k_j) for i - w < j <= i,  gamma phi_q(q_i).phi_k(k_j) for j <= i - w.
// With E_i and B_i the two parts' row sums and p_i the exact mass outside the window, CE is
// convex in t = log gamma with derivative (1/N) sum_i (sigma(t + log B_i - log E_i) - p_i):
// its root, by bisection on [-40, 40] (the end reached when the derivative keeps its sign).
double fitWindowLogWeight(const FittedHeadMaps& maps, const HeadFitData& data, int window);

}  // namespace attnlab

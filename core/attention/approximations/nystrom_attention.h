#pragma once

#include "attention/approximation.h"

namespace attnlab {

// Nystromformer (Xiong et al., "Nystromformer: A Nystrom-Based Algorithm for Approximating
// Self-Attention", AAAI 2021). Landmarks: Q~ and K~ (m x d), the means of m consecutive segments
// of the rows of Q and K (segment t is rows [floor(t L / m), floor((t + 1) L / m)); m is at most
// L). With softmax taken row by row,
//   F = softmax(s Q K~^T) (L x m),  A~ = softmax(s Q~ K~^T) (m x m),  B = softmax(s Q~ K^T) (m x
//   L), P^ = F A~^+ B,  O^ = F (A~^+ (B V)),
// where B V and F (A~^+ B V) are exact softmax attention of the landmarks over the keys and of
// the queries over the landmarks (streamingAttention), so O^ never forms F or B;
// where A~^+ is the Moore-Penrose pseudo-inverse: by the paper's iteration (Razavi et al. 2014),
//   Z_0 = A~^T / max_j sum_i A~_ij,  Z_{n+1} = 1/4 Z_n (13 I - A~ Z_n (15 I - A~ Z_n (7 I - A~
//   Z_n))),
// 6 iterations unless the spec says otherwise, or exactly (complete orthogonal decomposition, in
// double). P^'s rows sum to 1 when A~^+ is the exact inverse; entries can be negative. The
// paper's optional convolution of V is left out. Non-causal only: every landmark mixes all
// positions.
template <typename T>
class NystromAttention final : public Approximation<T> {
public:
    NystromAttention(const ApproximationSpec& spec, int d, Eigen::Index length, double scale,
                     HeadSite site);

    // The landmarks for m asked and L positions: m, at most L (at least 1). At m = L each
    // segment is one row, so Q~ = Q and K~ = K; more landmarks would repeat rows, so m past L
    // runs, and costs, as m = L.
    static double landmarks(double m, double length);

    // 4 L m d (F and B) + 4 L m d_v (B V and F times the rest) + 8 m^3 per iteration (6) +
    // 2 m^2 d_v, with m the landmarks taken (at most L).
    static double flops(const CostShape& shape);
    // F, B, and the pseudo-inverse with its work matrices.
    static double workingSetFloats(const CostShape& shape);

    ApproximateOutput<T> output(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                                bool causal, Eigen::Index chunk) const override;
    std::unique_ptr<ApproximateRows<T>> rows(const Matrix<T>& q, const Matrix<T>& k,
                                             bool causal) const override;

    // The landmarks: the segment means of the m segments of x's rows.
    static Matrix<T> segmentMeans(const Matrix<T>& x, Eigen::Index m);

    // F, A~^+ and B for q and k (the parts of P^ = F A~^+ B).
    struct Factors {
        Matrix<T> f;     // L x m
        Matrix<T> pinv;  // m x m
        Matrix<T> b;     // m x L
    };
    Factors factors(const Matrix<T>& q, const Matrix<T>& k) const;

private:
    // A~^+ for the landmarks, by the spec's method.
    Matrix<T> landmarkPseudoInverse(const Matrix<T>& queryLandmarks,
                                    const Matrix<T>& keyLandmarks) const;

    Eigen::Index m_landmarks;
    bool m_exactPinv;
    int m_iterations;
    double m_scale;
};

}  // namespace attnlab

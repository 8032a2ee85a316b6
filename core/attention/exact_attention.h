#pragma once

#include "types.h"

namespace attnlab {

// Tile shapes of the streaming kernel: a query tile and one key tile of scores stay in L2. (The
// timing sweep's working-set model counts them too.)
inline constexpr Eigen::Index kStreamingQueryTile = 128;
inline constexpr Eigen::Index kStreamingKeyTile = 256;

// Exact softmax attention of one head: queries Q (L x d), keys K (L_k x d), values V (L_k x d_v),
// scale s. Kernel A_ij = exp(s q_i.k_j), set to 0 for j > i when causal; P = D^-1 A with
// D = diag(A 1); output O = P V.

// Rows [begin, begin + p.rows()) of P, computed stably: with M_i the largest unmasked s q_i.k_j,
// P_ij = exp(s q_i.k_j - M_i) / sum_j exp(s q_i.k_j - M_i); masked entries are exactly 0.
// When logNormaliser is not null it receives, for each row, log Z_i = M_i + log sum_j
// exp(s q_i.k_j - M_i) in double: the log of the softmax denominator Z_i = sum_j A_ij, from
// which exactKernelRows forms A again.
// (p's stride type is spelled out, as Eigen's default for a row-major matrix: clang 14 mangles the
// defaulted form differently in the caller and in the explicit instantiation, which fails to link.)
template <typename T>
void exactAttentionRows(const Matrix<T>& q, const Matrix<T>& k, double scale, bool causal,
                        Eigen::Index begin, Eigen::Ref<Matrix<T>, 0, Eigen::OuterStride<>> p,
                        double* logNormaliser = nullptr);

// Rows of the kernel A_ij = exp(s q_i.k_j) = P_ij Z_i from rows of P and their log Z_i
// (exactAttentionRows), in double: a row scaling, or where Z_i itself exceeds the double range,
// entry by entry exp(log Z_i + log P_ij) (inf where A_ij does). 0 where P_ij is 0 (masked).
// Accurate to the precision P is kept in; a result that reuses an exact P forms the same A.
template <typename T>
void exactKernelRows(const Eigen::Ref<const Matrix<T>>& p, const double* logNormaliser,
                     MatrixD& kernel);

// O = P V without any L x L buffer: key tiles stream past each query tile with an online softmax
// (running row maxima m_i and sums l_i; when a tile raises m_i the partial sums are rescaled by
// exp(m_i_old - m_i_new)). Memory O((L + tile) d). Query tiles run in parallel on the engine
// threads.
template <typename T>
Matrix<T> streamingAttention(const Matrix<T>& q, const Matrix<T>& k, const Matrix<T>& v,
                             double scale, bool causal);

// P (L x L_k) formed in full, and O = P V.
// Softmax attention of the g queries that share one key/value head at one position (incremental
// decoding: a key/value cache, or local attention's sliding window): for each row r of q (g x d),
//   o_r = sum_j exp(s q_r.k_j - M_r) v_j / sum_j exp(s q_r.k_j - M_r),  M_r = max_j s q_r.k_j,
// over the n rows of k (n x d) and v (n x d_v, n >= 1), written to row r of out (g x d_v).
// scores is the caller's work buffer (resized to n x g; one column per query, so that each
// column's exponentials run on contiguous values). Single-threaded.
using ConstRows = Eigen::Ref<const Matrix<float>, 0, Eigen::OuterStride<>>;
using Rows = Eigen::Ref<Matrix<float>, 0, Eigen::OuterStride<>>;
void queryAttention(const ConstRows& q, const ConstRows& k, const ConstRows& v, float scale,
                    Eigen::MatrixXf& scores, Rows out);

template <typename T>
struct MaterialisedAttention {
    Matrix<T> attention;
    Matrix<T> output;
};
template <typename T>
MaterialisedAttention<T> materialisedAttention(const Matrix<T>& q, const Matrix<T>& k,
                                               const Matrix<T>& v, double scale, bool causal);

}  // namespace attnlab

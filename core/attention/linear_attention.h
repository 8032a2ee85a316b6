#pragma once

#include "attention/approximate_rows.h"
#include "attention/feature_maps.h"
#include "types.h"

#include <vector>

namespace attnlab {

// Shapes of the kernels' work buffers (the timing sweep's working-set model counts them too).
// Rows of queries or keys mapped to features at a time in the non-causal form.
inline constexpr Eigen::Index kFeatureBlock = 256;
// The causal form keeps, for the chunks of one window, their features and key sums between its
// passes: windows hold about this much (so that it stays in cache), and a few chunks per thread.
inline constexpr double kCausalWindowBytes = 2.0 * 1024 * 1024;
inline constexpr Eigen::Index kMinChunksPerThread = 4;
// Rows per chunk of the causal form, unless the caller chooses.
inline constexpr Eigen::Index kDefaultCausalChunk = 48;

// Approximate attention through a feature map phi: A^ = phi(Q) phi(K)^T (masked when causal),
// P^ = D^-1 A^, O^ = P^ V.

// The key side of linear attention at a common log-scale c: S = sum_j phi(k_j) v_j^T (C x d_v)
// and z = sum_j phi(k_j) (C), held as mantissas with S_true = S exp(scale), z_true = z exp(scale).
template <typename T>
struct KeySummary {
    Matrix<T> s;
    Vector<T> z;
    T scale;  // -inf while no key has been added

    KeySummary(Eigen::Index features, Eigen::Index valueDim);

    // Adds the keys with mantissa rows phiK (log-scales c) and values v. Rescales phiK in place
    // to this summary's scale (the larger of its old scale and max c).
    void add(Eigen::Ref<Matrix<T>> phiK, const Eigen::Ref<const Vector<T>>& logScale,
             const Eigen::Ref<const Matrix<T>>& v);

    // Makes this the summary of exactly the keys phiK (rescaled in place as add() does).
    void assign(Eigen::Ref<Matrix<T>> phiK, const Eigen::Ref<const Vector<T>>& logScale,
                const Eigen::Ref<const Matrix<T>>& v);

    // Adds another summary (both rescaled to the larger scale).
    void add(const KeySummary& other);

    // Multiplies S and z by exp(scale - newScale) and takes newScale as the scale.
    void rescaleTo(T newScale);

    // S and z at their true scale, in double (0 while no key has been added; inf where an entry
    // exceeds the double range).
    MatrixD trueScaleState() const;
    VectorD trueScaleNormalizer() const;
};

// The key summaries of consecutive blocks of keys, held together (one allocation for all, so
// that many short blocks cost no more to hold than a few long ones): S_c (C x d_v), z_c and the
// scale of block c, each made on any thread. Every block must be added to (with keys or not)
// before prefixSums() or any read.
template <typename T>
class BlockSummaries {
public:
    BlockSummaries(Eigen::Index blocks, Eigen::Index features, Eigen::Index valueDim);

    // Adds to block c the keys with mantissa rows phiK (log-scales c_j, possibly none) and values
    // v, at the larger of the block's scale and max c_j, weighting the values rather than the keys
    // (left as they are): S_c += phiK^T (omega V), z_c += phiK^T omega, omega_j =
    // exp(c_j - scale). A block not added to before has no keys: S_c = 0, z_c = 0.
    void add(Eigen::Index c, const Eigen::Ref<const Matrix<T>>& phiK,
             const Eigen::Ref<const Vector<T>>& logScale, const Eigen::Ref<const Matrix<T>>& v);
    // In place, block c becomes the sum of blocks 0..c at the largest of their scales, as adding
    // each to the next would make it; the columns of S spread over the engine threads.
    void prefixSums();

    auto s(Eigen::Index c) const { return m_s.middleCols(c * m_valueDim, m_valueDim); }
    auto z(Eigen::Index c) const { return m_z.row(c).transpose(); }
    // -inf for a block without keys.
    T scale(Eigen::Index c) const { return m_scale[c]; }
    Eigen::Index blocks() const { return m_scale.size(); }

private:
    Eigen::Index m_valueDim;
    // S_c in columns [c d_v, (c + 1) d_v), column-major: phiK^T (omega V) is formed about 8%
    // faster into columns than into rows.
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor> m_s;
    Matrix<T> m_z;  // z_c^T in row c
    Vector<T> m_scale;
};

// O^ in linear form, O(L C d_v), never through an L x L matrix.
// Non-causal: O^ = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1), key blocks summed in parallel.
// Causal: o_i = phi(q_i)^T S_i / phi(q_i)^T z_i with S_i = sum_{j<=i} phi(k_j) v_j^T and
// z_i = sum_{j<=i} phi(k_j), by chunks of `chunk` rows: within a chunk a masked chunk x chunk block
// phi(Q_c) phi(K_c)^T, between chunks the running (S, z). Chunks run in parallel in windows: each
// chunk's own sums, then the prefix states in order, then every chunk's outputs.
template <typename T>
ApproximateOutput<T> linearAttention(const FeatureMap<T>& phi, const Matrix<T>& q,
                                     const Matrix<T>& k, const Matrix<T>& v, bool causal,
                                     Eigen::Index chunk = kDefaultCausalChunk);

// The floats linear attention with C features needs besides Q, K, V and O (the timing sweep's
// working-set model), with `projected` values a row for W x' (m for the maps that draw W, else 0).
// Non-causal, per thread: phi of a key block and of a query block, their projections and
// log-scales, the numerators of the query block, a partial key summary; then the total key
// summary and the L denominators. Causal: a window of chunks (phi(Q), phi(K) and each chunk's key
// sums), per thread the masked chunk x chunk block, numerators and projections; the running state
// and the L denominators.
double linearAttentionWorkingSetFloats(const CostShape& shape, double features, double projected);

// Rows of A^ and P^ formed explicitly (the masked quadratic form), for display and metrics.
// The keys are mapped once, in the constructor (L x C values).
template <typename T>
class FeatureMapRows final : public ApproximateRows<T> {
public:
    FeatureMapRows(const FeatureMap<T>& phi, const Matrix<T>& q, const Matrix<T>& k, bool causal);

    // Rows [begin, begin + p.rows()) of P^ = D^-1 A^, with A^_ij = phi(q_i).phi(k_j) (0 for j > i
    // when causal). A row whose denominator is 0 or not finite is set to 0. When kernel is not
    // null it receives the same rows of A^ at their true scale, in double.
    void rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p,
              MatrixD* kernel = nullptr) const override;

private:
    const FeatureMap<T>& m_phi;
    const Matrix<T>& m_q;
    bool m_causal;
    Matrix<T> m_phiK;            // key mantissas
    Vector<T> m_keyLogScale;     // c_j
    Vector<T> m_prefixMaxScale;  // max_{j' <= j} c_j'
};

}  // namespace attnlab

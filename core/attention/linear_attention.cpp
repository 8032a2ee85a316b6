#include "attention/linear_attention.h"

#include "parallel.h"
#include "attention/row_ops.h"

#include <cmath>

namespace attnlab {

namespace {

// phiK_j <- phiK_j exp(c_j - scale): key rows brought to a common scale. Nothing to do when every
// c_j already is that scale (the maps without exponentials).
template <typename T>
void rescaleKeyRows(Eigen::Ref<Matrix<T>> phiK, const Eigen::Ref<const Vector<T>>& logScale,
                    T scale)
{
    if (logScale.minCoeff() == scale && logScale.maxCoeff() == scale)
        return;
    const Vector<T> weights = (logScale.array() - scale).exp();
    phiK = weights.asDiagonal() * phiK;
}

template <typename T>
ApproximateOutput<T> nonCausalLinearAttention(const FeatureMap<T>& phi, const Matrix<T>& q,
                                              const Matrix<T>& k, const Matrix<T>& v)
{
    const Eigen::Index features = phi.featureCount();
    std::vector<KeySummary<T>> partial(engineThreads(), KeySummary<T>(features, v.cols()));
#pragma omp parallel
    {
        Matrix<T> phiK(kFeatureBlock, features);
        Vector<T> logScale(kFeatureBlock);
        KeySummary<T>& mine = partial[engineThreadIndex()];
        const Eigen::Index blocks = (k.rows() + kFeatureBlock - 1) / kFeatureBlock;
#pragma omp for schedule(static)
        for (Eigen::Index b = 0; b < blocks; ++b) {
            const Eigen::Index begin = b * kFeatureBlock;
            const Eigen::Index rows = std::min(kFeatureBlock, k.rows() - begin);
            phi.mapKeys(k.middleRows(begin, rows), phiK.topRows(rows), logScale.head(rows));
            mine.add(phiK.topRows(rows), logScale.head(rows), v.middleRows(begin, rows));
        }
    }
    KeySummary<T> keys(features, v.cols());
    for (const KeySummary<T>& part : partial)
        keys.add(part);

    ApproximateOutput<T> result;
    result.output.resize(q.rows(), v.cols());
    Vector<T> denominators(q.rows());
    forEachRowBlock(q.rows(), kFeatureBlock, [&](Eigen::Index begin, Eigen::Index end) {
        const Eigen::Index rows = end - begin;
        Matrix<T> phiQ(rows, features);
        Vector<T> logScale(rows);  // each query's own scale cancels in the ratio
        phi.mapQueries(q.middleRows(begin, rows), phiQ, logScale);
        const Matrix<T> numerator = phiQ * keys.s;
        denominators.segment(begin, rows) = phiQ * keys.z;
        divideRows<T>(numerator, denominators.segment(begin, rows),
                      result.output.middleRows(begin, rows));
    });
    result.nonPositiveRows = nonPositiveEntries(denominators);
    return result;
}

template <typename T>
ApproximateOutput<T> causalLinearAttention(const FeatureMap<T>& phi, const Matrix<T>& q,
                                           const Matrix<T>& k, const Matrix<T>& v,
                                           Eigen::Index chunk)
{
    const Eigen::Index length = q.rows();
    const Eigen::Index features = phi.featureCount();
    const double bytesPerChunk =
        sizeof(T) * double(features) * (double(v.cols()) + 1 + 2.0 * double(chunk));
    const Eigen::Index totalChunks = (length + chunk - 1) / chunk;
    const Eigen::Index windowChunks =
        std::min(totalChunks, std::max(kMinChunksPerThread * engineThreads(),
                                       Eigen::Index(kCausalWindowBytes / bytesPerChunk)));
    const Eigen::Index windowRows = windowChunks * chunk;

    ApproximateOutput<T> result;
    result.output.resize(length, v.cols());
    Vector<T> denominators(length);

    Matrix<T> phiQ(windowRows, features);
    Matrix<T> phiK(windowRows, features);
    Vector<T> queryLogScale(windowRows);
    Vector<T> keyLogScale(windowRows);
    // Pass 1 leaves each chunk's own key sums here; pass 2 swaps in the state before the chunk.
    std::vector<KeySummary<T>> chunkSums(windowChunks, KeySummary<T>(features, v.cols()));
    std::vector<T> ownScale(windowChunks);
    KeySummary<T> state(features, v.cols());

    for (Eigen::Index windowStart = 0; windowStart < length; windowStart += windowRows) {
        const Eigen::Index rowsInWindow = std::min(windowRows, length - windowStart);
        const Eigen::Index chunks = (rowsInWindow + chunk - 1) / chunk;

#pragma omp parallel for schedule(static)
        for (Eigen::Index c = 0; c < chunks; ++c) {
            const Eigen::Index local = c * chunk;
            const Eigen::Index rows = std::min(chunk, rowsInWindow - local);
            const Eigen::Index global = windowStart + local;
            phi.mapQueries(q.middleRows(global, rows), phiQ.middleRows(local, rows),
                           queryLogScale.segment(local, rows));
            phi.mapKeys(k.middleRows(global, rows), phiK.middleRows(local, rows),
                        keyLogScale.segment(local, rows));
            KeySummary<T>& own = chunkSums[c];
            own.assign(phiK.middleRows(local, rows), keyLogScale.segment(local, rows),
                       v.middleRows(global, rows));
            ownScale[c] = own.scale;
        }

        for (Eigen::Index c = 0; c < chunks; ++c) {
            std::swap(state, chunkSums[c]);  // chunkSums[c] now holds the state before chunk c
            state.add(chunkSums[c]);         // ... and state, chunk c's own sums: add the prefix
        }

#pragma omp parallel
        {
            Matrix<T> inner(chunk, chunk);
            Matrix<T> numerator(chunk, v.cols());
#pragma omp for schedule(static)
            for (Eigen::Index c = 0; c < chunks; ++c) {
                const Eigen::Index local = c * chunk;
                const Eigen::Index rows = std::min(chunk, rowsInWindow - local);
                const Eigen::Index global = windowStart + local;
                const KeySummary<T>& before = chunkSums[c];
                const auto phiQc = phiQ.middleRows(local, rows);
                // Bring the state before the chunk (scale `before.scale`) and the chunk's own
                // keys (scale ownScale[c]) to one scale; the query's own scale cancels.
                const T common = std::max(before.scale, ownScale[c]);
                const T beforeFactor =
                    before.scale == minusInfinity<T>() ? T(0) : std::exp(before.scale - common);
                const T ownFactor = std::exp(ownScale[c] - common);
                // The masked block phi(Q_c) phi(K_c)^T, j <= i: only its lower triangle is
                // formed, and it multiplies V_c as a triangular matrix (half the flops each).
                auto block = inner.topLeftCorner(rows, rows);
                block.setZero();
                block.template triangularView<Eigen::Lower>() =
                    ownFactor * (phiQc * phiK.middleRows(local, rows).transpose());
                auto num = numerator.topRows(rows);
                num.noalias() = beforeFactor * (phiQc * before.s);
                num.noalias() +=
                    block.template triangularView<Eigen::Lower>() * v.middleRows(global, rows);
                auto den = denominators.segment(global, rows);
                den.noalias() = beforeFactor * (phiQc * before.z);
                den += block.rowwise().sum();
                divideRows<T>(num, denominators.segment(global, rows),
                              result.output.middleRows(global, rows));
            }
        }
    }
    result.nonPositiveRows = nonPositiveEntries(denominators);
    return result;
}

}  // namespace

template <typename T>
KeySummary<T>::KeySummary(Eigen::Index features, Eigen::Index valueDim)
    : s(Matrix<T>::Zero(features, valueDim)),
      z(Vector<T>::Zero(features)),
      scale(minusInfinity<T>())
{
}

template <typename T>
void KeySummary<T>::rescaleTo(T newScale)
{
    if (scale != minusInfinity<T>() && newScale != scale) {
        const T factor = std::exp(scale - newScale);
        s *= factor;
        z *= factor;
    }
    scale = newScale;
}

template <typename T>
MatrixD KeySummary<T>::trueScaleState() const
{
    if (scale == minusInfinity<T>())
        return MatrixD::Zero(s.rows(), s.cols());
    return s.template cast<double>() * std::exp(double(scale));
}

template <typename T>
VectorD KeySummary<T>::trueScaleNormalizer() const
{
    if (scale == minusInfinity<T>())
        return VectorD::Zero(z.size());
    return z.template cast<double>() * std::exp(double(scale));
}

template <typename T>
void KeySummary<T>::add(Eigen::Ref<Matrix<T>> phiK, const Eigen::Ref<const Vector<T>>& logScale,
                        const Eigen::Ref<const Matrix<T>>& v)
{
    if (phiK.rows() == 0)
        return;
    const T blockMax = logScale.maxCoeff();
    if (blockMax > scale)
        rescaleTo(blockMax);
    rescaleKeyRows(phiK, logScale, scale);
    s.noalias() += phiK.transpose() * v;
    z += phiK.colwise().sum().transpose();
}

template <typename T>
void KeySummary<T>::assign(Eigen::Ref<Matrix<T>> phiK, const Eigen::Ref<const Vector<T>>& logScale,
                           const Eigen::Ref<const Matrix<T>>& v)
{
    scale = logScale.maxCoeff();
    rescaleKeyRows(phiK, logScale, scale);
    s.noalias() = phiK.transpose() * v;
    z = phiK.colwise().sum().transpose();
}

template <typename T>
void KeySummary<T>::add(const KeySummary& other)
{
    if (other.scale == minusInfinity<T>())
        return;
    if (other.scale > scale)
        rescaleTo(other.scale);
    const T factor = std::exp(other.scale - scale);
    s += other.s * factor;
    z += other.z * factor;
}

template <typename T>
BlockSummaries<T>::BlockSummaries(Eigen::Index blocks, Eigen::Index features, Eigen::Index valueDim)
    : m_valueDim(valueDim),
      m_s(features, blocks * valueDim),
      m_z(blocks, features),
      m_scale(Vector<T>::Constant(blocks, minusInfinity<T>()))
{
}

template <typename T>
void BlockSummaries<T>::add(Eigen::Index c, const Eigen::Ref<const Matrix<T>>& phiK,
                            const Eigen::Ref<const Vector<T>>& logScale,
                            const Eigen::Ref<const Matrix<T>>& v)
{
    auto s = m_s.middleCols(c * m_valueDim, m_valueDim);
    auto z = m_z.row(c);
    const bool empty = m_scale[c] == minusInfinity<T>();  // S_c and z_c not yet written
    if (phiK.rows() == 0) {
        if (empty) {
            s.setZero();
            z.setZero();
        }
        return;
    }
    const T scale = std::max(m_scale[c], logScale.maxCoeff());
    const Vector<T> omega = (logScale.array() - scale).exp();
    if (empty) {
        s.noalias() = phiK.transpose() * (omega.asDiagonal() * v);
        z.noalias() = (phiK.transpose() * omega).transpose();
    } else {
        if (scale != m_scale[c]) {
            const T factor = std::exp(m_scale[c] - scale);
            s *= factor;
            z *= factor;
        }
        s.noalias() += phiK.transpose() * (omega.asDiagonal() * v);
        z.noalias() += (phiK.transpose() * omega).transpose();
    }
    m_scale[c] = scale;
}

template <typename T>
void BlockSummaries<T>::prefixSums()
{
    // The scale of each prefix, and the factor exp(from - to) that brings sums at scale `from` to
    // scale `to` >= from (0 for sums without keys, scale -inf).
    T largest = minusInfinity<T>();
    Vector<T> scales(m_scale.size());
    for (Eigen::Index c = 0; c < m_scale.size(); ++c)
        scales[c] = largest = std::max(largest, m_scale[c]);
    const auto factor = [](T from, T to) {
        return from == minusInfinity<T>() ? T(0) : std::exp(from - to);
    };
    // S by value columns on the engine threads (each block's part of them contiguous); z, a row
    // per block, in turn.
    forEachRowBlock(m_valueDim, 4, [&](Eigen::Index begin, Eigen::Index end) {
        for (Eigen::Index c = 1; c < m_scale.size(); ++c) {
            const T carried = factor(scales[c - 1], scales[c]);
            const T own = factor(m_scale[c], scales[c]);
            auto sums = m_s.middleCols(c * m_valueDim + begin, end - begin);
            sums = own * sums + carried * m_s.middleCols((c - 1) * m_valueDim + begin, end - begin);
        }
    });
    for (Eigen::Index c = 1; c < m_scale.size(); ++c)
        m_z.row(c) = factor(m_scale[c], scales[c]) * m_z.row(c) +
                     factor(scales[c - 1], scales[c]) * m_z.row(c - 1);
    m_scale = scales;
}

double linearAttentionWorkingSetFloats(const CostShape& shape, double features, double projected)
{
    const double c = features, dv = shape.dv, l = shape.length, t = shape.threads;
    const double summary = c * (dv + 1);  // S and z
    if (!shape.causal)
        return t * (double(kFeatureBlock) * (2 * c + 2 * projected + dv + 2) + summary) + summary +
               l;
    const double chunk = double(kDefaultCausalChunk);
    const double floatsPerChunk = c * (dv + 1 + 2 * chunk);
    const double totalChunks = std::ceil(l / chunk);
    const double windowChunks =
        std::min(totalChunks, std::max(double(kMinChunksPerThread) * t,
                                       std::floor(kCausalWindowBytes / (4.0 * floatsPerChunk))));
    return windowChunks * (floatsPerChunk + 2 * chunk) +
           t * (chunk * chunk + chunk * (dv + 2 * projected)) + summary + l;
}

template <typename T>
ApproximateOutput<T> linearAttention(const FeatureMap<T>& phi, const Matrix<T>& q,
                                     const Matrix<T>& k, const Matrix<T>& v, bool causal,
                                     Eigen::Index chunk)
{
    return causal ? causalLinearAttention(phi, q, k, v, chunk)
                  : nonCausalLinearAttention(phi, q, k, v);
}

template <typename T>
FeatureMapRows<T>::FeatureMapRows(const FeatureMap<T>& phi, const Matrix<T>& q, const Matrix<T>& k,
                                  bool causal)
    : m_phi(phi),
      m_q(q),
      m_causal(causal),
      m_phiK(k.rows(), phi.featureCount()),
      m_keyLogScale(k.rows()),
      m_prefixMaxScale(k.rows())
{
    forEachRowBlock(k.rows(), kFeatureBlock, [&](Eigen::Index begin, Eigen::Index end) {
        m_phi.mapKeys(k.middleRows(begin, end - begin), m_phiK.middleRows(begin, end - begin),
                      m_keyLogScale.segment(begin, end - begin));
    });
    T running = minusInfinity<T>();
    for (Eigen::Index j = 0; j < k.rows(); ++j)
        m_prefixMaxScale[j] = running = std::max(running, m_keyLogScale[j]);
}

template <typename T>
void FeatureMapRows<T>::rows(Eigen::Index begin, Eigen::Ref<Matrix<T>> p, MatrixD* kernel) const
{
    const Eigen::Index rows = p.rows();
    const Eigen::Index keys = m_phiK.rows();
    Matrix<T> phiQ(rows, m_phi.featureCount());
    Vector<T> queryLogScale(rows);
    m_phi.mapQueries(m_q.middleRows(begin, rows), phiQ, queryLogScale);
    // One key scale for the block: the largest c_j among the keys any of its rows sees.
    const Eigen::Index visibleKeys = m_causal ? std::min(keys, begin + rows) : keys;
    const T keyScale = m_prefixMaxScale[visibleKeys - 1];
    const Vector<T> keyWeight = (m_keyLogScale.head(visibleKeys).array() - keyScale).exp();
    p.leftCols(visibleKeys).noalias() = phiQ * m_phiK.topRows(visibleKeys).transpose();
    p.leftCols(visibleKeys) = p.leftCols(visibleKeys) * keyWeight.asDiagonal();
    p.rightCols(keys - visibleKeys).setZero();
    if (m_causal) {
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index firstMasked = std::min(keys, begin + r + 1);
            p.row(r).tail(keys - firstMasked).setZero();
        }
    }
    if (kernel) {
        kernel->resize(rows, keys);
        for (Eigen::Index r = 0; r < rows; ++r) {
            const double factor = std::exp(double(queryLogScale[r]) + double(keyScale));
            if (std::isfinite(factor)) {
                kernel->row(r) = p.row(r).template cast<double>() * factor;
            } else {  // 0 stays 0 rather than 0 * inf
                kernel->row(r) = p.row(r).template cast<double>();
                for (double& value : kernel->row(r))
                    value = value == 0.0 ? 0.0 : value * factor;
            }
        }
    }
    const Vector<T> denominators = p.rowwise().sum();
    divideRows<T>(Matrix<T>(p), denominators, p);
}

#define ATTNLAB_INSTANTIATE(T)                                                                 \
    template struct KeySummary<T>;                                                             \
    template class BlockSummaries<T>;                                                          \
    template ApproximateOutput<T> linearAttention<T>(const FeatureMap<T>&, const Matrix<T>&,   \
                                                     const Matrix<T>&, const Matrix<T>&, bool, \
                                                     Eigen::Index);                            \
    template class FeatureMapRows<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab

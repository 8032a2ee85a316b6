#pragma once

#include "attention/feature_maps.h"
#include "attention/fitted_feature_maps.h"

#include <cmath>

namespace attnlab {

// Hedgehog's fitted feature maps (Zhang et al., "The Hedgehog & the Porcupine: Expressive Linear
// Attentions with Softmax Mimicry", ICLR 2024): per layer and query head, a query map and a key
// map of the same form with their own parameters,
//   phi_q(x) = [exp(W_q x' + b_q), exp(-(W_q x' + b_q))],
//   phi_k(x) = [exp(W_k x' + b_k), exp(-(W_k x' + b_k))],
// x' = sqrt(s) x, W of d_f x d and b of d_f fitted so that the rows of phi_q(Q) phi_k(K)^T,
// normalised, match the model's softmax rows (core/fitting). With u_i = W x'_i + b and
// M_i = max_f |u_if|: Phi_i = [exp(u_i - M_i), exp(-u_i - M_i)], c_i = M_i (plus, for the query
// side, a constant log-weight: hedgehog-window's log gamma). C = 2 d_f.
template <typename T>
class HedgehogFeatures final : public FeatureMap<T> {
public:
    // The cost model's C and rows of W x': 2d and d, the maps' default d_f = d (a fitted file's
    // own d_f decides the map's C: featureCountOf).
    static Eigen::Index featureCount(int d, int /*m*/) { return 2 * Eigen::Index(d); }
    static Eigen::Index projectedRows(int d, int /*m*/) { return d; }

    // The maps of `site` in spec.fittedMaps (fittedHeadMaps: InputError without them).
    HedgehogFeatures(const ApproximationSpec& spec, int d, double scale, HeadSite site)
        : HedgehogFeatures(fittedHeadMaps(spec, d, site), scale)
    {
    }

    // One head's maps at scale s; queryLogWeight is added to every query's log-scale.
    HedgehogFeatures(const FittedHeadMaps& maps, double scale, double queryLogWeight = 0)
        : FeatureMap<T>(2 * Eigen::Index(maps.featureDim())),
          m_query(maps.queryWeight, maps.queryBias, scale),
          m_key(maps.keyWeight, maps.keyBias, scale),
          m_queryLogWeight(T(queryLogWeight))
    {
    }

    void mapQueries(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
                    Eigen::Ref<Vector<T>> logScale) const override
    {
        m_query.map(x, phi, logScale);
        logScale.array() += m_queryLogWeight;
    }

    void mapKeys(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
                 Eigen::Ref<Vector<T>> logScale) const override
    {
        m_key.map(x, phi, logScale);
    }

private:
    // One side's W and b, with sqrt(s) folded into W: u = x (sqrt(s) W)^T + b.
    struct Side {
        Matrix<T> weightT;                         // (sqrt(s) W)^T, d x d_f
        Eigen::Matrix<T, 1, Eigen::Dynamic> bias;  // b^T

        Side(const MatrixD& weight, const VectorD& b, double scale)
            : weightT((std::sqrt(scale) * weight).transpose().template cast<T>()),
              bias(b.transpose().template cast<T>())
        {
        }

        void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
                 Eigen::Ref<Vector<T>> logScale) const
        {
            const Eigen::Index f = weightT.cols();
            auto u = phi.leftCols(f);
            u.noalias() = x * weightT;
            u.rowwise() += bias;
            logScale = u.cwiseAbs().rowwise().maxCoeff();
            phi.rightCols(f) = (-u.array()).colwise() - logScale.array();
            u = u.array().colwise() - logScale.array();
            phi = phi.array().exp();
        }
    };

    Side m_query;
    Side m_key;
    T m_queryLogWeight;
};

}  // namespace attnlab

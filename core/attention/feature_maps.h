#pragma once

#include "attention/approximation_spec.h"
#include "types.h"

#include <QString>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace attnlab {

// Which rows a feature map maps: queries or keys.
enum class FeatureSide { Query, Key };

// A feature map: phi_q for queries and phi_k for keys, R^d -> R^C, with phi_q(q).phi_k(k)
// approximating the softmax kernel exp(q'.k') (or, for elu+1 and ReLU, a kernel of its own), where
// x' = sqrt(s) x. The linear-attention code only sees this interface. As fast-transformers'
// FeatureMap, a symmetric map (phi_q = phi_k: every random-feature map, elu+1, Taylor2) writes one
// function, map(), which both sides call; an asymmetric one (the fitted maps of hedgehog)
// overrides mapQueries() and mapKeys().
//
// Exponential maps would overflow for large |x'|, so each side returns each row as a mantissa row
// and a log-scale: phi(x_i) = Phi_i exp(c_i). Maps without exponentials return c_i = 0. Attention
// uses ratios, so a common key scale and each query's own scale cancel; exports multiply them
// back.
template <typename T>
class FeatureMap {
public:
    virtual ~FeatureMap() = default;

    // C, the length of phi(x).
    Eigen::Index featureCount() const { return m_featureCount; }

    // For the rows x_i of x (n x d, raw queries, or raw keys), writes Phi (n x C) and c (n) with
    // phi_q(x_i) (or phi_k(x_i)) = Phi_i exp(c_i).
    virtual void mapQueries(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
                            Eigen::Ref<Vector<T>> logScale) const
    {
        map(x, phi, logScale);
    }
    virtual void mapKeys(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
                         Eigen::Ref<Vector<T>> logScale) const
    {
        map(x, phi, logScale);
    }
    // The side's map, as mapQueries or mapKeys.
    void mapSide(FeatureSide side, const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
                 Eigen::Ref<Vector<T>> logScale) const
    {
        if (side == FeatureSide::Query)
            mapQueries(x, phi, logScale);
        else
            mapKeys(x, phi, logScale);
    }

    // Fits what the map takes from the data itself, before it maps the rows of q and k: FAVOR++'s
    // optimal A* from every query and key. A causal map must not look ahead, so with causal set
    // it keeps what it was made with. The other maps take nothing from the data.
    virtual void fit(const Eigen::Ref<const Matrix<T>>& /*q*/,
                     const Eigen::Ref<const Matrix<T>>& /*k*/, bool /*causal*/)
    {
    }

    // The parameter the registry's closed-form kernel MSE takes as fitted (FAVOR++'s A); 0 for
    // the maps without one.
    virtual double closedFormParameter() const { return 0; }

    // The random projection W (m x d, applied to x'), empty for maps that draw none.
    const MatrixD& projection() const { return m_projection; }

protected:
    explicit FeatureMap(Eigen::Index featureCount) : m_featureCount(featureCount) {}

    // A symmetric map's one function, phi_q = phi_k (mapQueries and mapKeys call it). An
    // asymmetric map overrides both sides instead and never reaches this.
    virtual void map(const Eigen::Ref<const Matrix<T>>& /*x*/, Eigen::Ref<Matrix<T>> /*phi*/,
                     Eigen::Ref<Vector<T>> /*logScale*/) const
    {
        throw std::logic_error("an asymmetric feature map must override mapQueries and mapKeys");
    }

    Eigen::Index m_featureCount;
    MatrixD m_projection;
};

// C, the number of features the map of spec has for d-dimensional rows, without drawing W (the
// registry's cost model): m (positive, ReLU), 2m (hyperbolic, trigonometric), d (elu+1),
// 1 + d + d (d + 1) / 2 (Taylor2), 2 d_f for fitted maps (their file's d_f; 2d before a fit).
Eigen::Index featureCountOf(const ApproximationSpec& spec, int d);

// The map of spec (its method's class, from the registry) for d-dimensional rows and scale s, at
// `site`: the projection of head h is drawn from (spec.seed, h), so heads have independent W;
// fitted maps are those of (layer, head) in spec.fittedMaps. Throws InputError when a fitted
// method has no maps for the site (none loaded, another head dimension, a head not fitted).
template <typename T>
std::unique_ptr<FeatureMap<T>> makeFeatureMap(const ApproximationSpec& spec, int d, double scale,
                                              HeadSite site);
// The same at head h of layer 0.
template <typename T>
std::unique_ptr<FeatureMap<T>> makeFeatureMap(const ApproximationSpec& spec, int d, double scale,
                                              int head = 0)
{
    return makeFeatureMap<T>(spec, d, scale, HeadSite{0, head});
}

// phi_q(x_i) (side Query) or phi_k(x_i) (side Key) of every row at its true scale, Phi_i exp(c_i),
// in double (entries can overflow to inf where the true value exceeds the double range).
template <typename T>
MatrixD trueScaleFeatures(const FeatureMap<T>& phi, const Matrix<T>& x, FeatureSide side);
// The same for a symmetric map, whose sides agree (the key side is taken).
template <typename T>
MatrixD trueScaleFeatures(const FeatureMap<T>& phi, const Matrix<T>& x)
{
    return trueScaleFeatures(phi, x, FeatureSide::Key);
}

}  // namespace attnlab

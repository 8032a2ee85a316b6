#pragma once

#include "attention/approximation_spec.h"
#include "types.h"

#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnlab {

// A feature map phi: R^d -> R^C with phi(q).phi(k) approximating the softmax kernel exp(q'.k')
// (or, for elu+1 and ReLU, a kernel of its own), where x' = sqrt(s) x. The linear-attention code
// only sees this interface.
//
// Exponential maps would overflow for large |x'|, so map() returns each row as a mantissa row and a
// log-scale: phi(x_i) = Phi_i exp(c_i). Maps without exponentials return c_i = 0. Attention uses
// ratios, so a common key scale and each query's own scale cancel; exports multiply them back.
template <typename T>
class FeatureMap {
public:
    virtual ~FeatureMap() = default;

    // C, the length of phi(x).
    Eigen::Index featureCount() const { return m_featureCount; }

    // For the rows x_i of x (n x d, raw queries or keys), writes Phi (n x C) and c (n) with
    // phi(x_i) = Phi_i exp(c_i).
    virtual void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
                     Eigen::Ref<Vector<T>> logScale) const = 0;

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

    Eigen::Index m_featureCount;
    MatrixD m_projection;
};

// C, the number of features the map of spec has for d-dimensional rows, without drawing W (the
// registry's cost model): m (positive, ReLU), 2m (hyperbolic, trigonometric), d (elu+1),
// 1 + d + d (d + 1) / 2 (Taylor2).
Eigen::Index featureCountOf(const ApproximationSpec& spec, int d);

// The map of spec (its method's class, from the registry) for d-dimensional rows and scale s.
// The projection of head h is drawn from (spec.seed, h), so heads have independent W.
template <typename T>
std::unique_ptr<FeatureMap<T>> makeFeatureMap(const ApproximationSpec& spec, int d, double scale,
                                              int head = 0);

// phi(x_i) of every row at its true scale, Phi_i exp(c_i), in double (entries can overflow to inf
// where the true value exceeds the double range).
template <typename T>
MatrixD trueScaleFeatures(const FeatureMap<T>& phi, const Matrix<T>& x);

}  // namespace attnlab

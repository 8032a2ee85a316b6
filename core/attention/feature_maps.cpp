#include "attention/feature_maps.h"

#include "attention/row_ops.h"

#include <cmath>

namespace attnlab {

namespace {

// Shared by the maps that draw W: the projection folded with sqrt(s), so that one product gives
// U = X (sqrt(s) W)^T, U_ik = w_k . x'_i.
template <typename T>
class RandomProjectionMap : public FeatureMap<T> {
public:
    RandomProjectionMap(const FeatureMapSpec& spec, int d, double scale, int head)
        : FeatureMap<T>(featureCountOf(spec, d)), m_features(spec.features), m_halfScale(scale / 2)
    {
        this->m_projection =
            randomProjection(spec.features, d, spec.projection, spec.rowNorm, spec.seed, head);
        m_scaledProjectionT = (std::sqrt(scale) * this->m_projection).transpose().template cast<T>();
    }

protected:
    // U = X (sqrt(s) W)^T, written into u (n x m).
    void project(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> u) const
    {
        u.noalias() = x * m_scaledProjectionT;
    }

    // |x'_i|^2 / 2 = s |x_i|^2 / 2 for each row.
    Vector<T> halfSquaredNorms(const Eigen::Ref<const Matrix<T>>& x) const
    {
        return x.rowwise().squaredNorm() * T(m_halfScale);
    }

    Eigen::Index m_features;
    double m_halfScale;
    Matrix<T> m_scaledProjectionT;  // (sqrt(s) W)^T, d x m
};

// FAVOR+ positive: phi(x) = m^-1/2 exp(W x' - |x'|^2 / 2). With M_i = max_k (W x'_i)_k:
// Phi_i = m^-1/2 exp(W x'_i - M_i), c_i = M_i - |x'_i|^2 / 2.
template <typename T>
class PositiveRandomFeatures final : public RandomProjectionMap<T> {
public:
    using RandomProjectionMap<T>::RandomProjectionMap;


    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        this->project(x, phi);
        const Vector<T> rowMax = phi.rowwise().maxCoeff();
        logScale = rowMax - this->halfSquaredNorms(x);
        const T norm = T(1 / std::sqrt(double(this->m_features)));
        expShiftedRows(phi, rowMax, norm);
    }
};

// FAVOR+ hyperbolic: phi(x) = (2m)^-1/2 exp(-|x'|^2 / 2) [exp(W x'), exp(-W x')]. With
// M_i = max_k |(W x'_i)_k|: Phi_i = (2m)^-1/2 [exp(W x'_i - M_i), exp(-W x'_i - M_i)],
// c_i = M_i - |x'_i|^2 / 2.
template <typename T>
class HyperbolicRandomFeatures final : public RandomProjectionMap<T> {
public:
    using RandomProjectionMap<T>::RandomProjectionMap;


    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        const Eigen::Index m = this->m_features;
        auto u = phi.leftCols(m);
        this->project(x, u);
        const Vector<T> rowMax = u.cwiseAbs().rowwise().maxCoeff();
        logScale = rowMax - this->halfSquaredNorms(x);
        const T norm = T(1 / std::sqrt(2.0 * double(m)));
        phi.rightCols(m) = -u;
        expShiftedRows(phi, rowMax, norm);
    }
};

// Trigonometric random Fourier features: phi(x) = m^-1/2 exp(|x'|^2 / 2) [cos(W x'), sin(W x')].
// Phi_i = m^-1/2 [cos(W x'_i), sin(W x'_i)], c_i = |x'_i|^2 / 2.
template <typename T>
class TrigonometricRandomFeatures final : public RandomProjectionMap<T> {
public:
    using RandomProjectionMap<T>::RandomProjectionMap;


    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        const Eigen::Index m = this->m_features;
        auto u = phi.leftCols(m);
        this->project(x, u);
        logScale = this->halfSquaredNorms(x);
        const T norm = T(1 / std::sqrt(double(m)));
        phi.rightCols(m) = u.array().sin() * norm;
        u = u.array().cos() * norm;
    }
};

// Performer-ReLU (generalised attention): phi(x) = m^-1/2 ReLU(W x') + epsilon.
template <typename T>
class ReluRandomFeatures final : public RandomProjectionMap<T> {
public:
    ReluRandomFeatures(const FeatureMapSpec& spec, int d, double scale, int head)
        : RandomProjectionMap<T>(spec, d, scale, head), m_epsilon(T(spec.reluEpsilon))
    {
    }


    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        this->project(x, phi);
        const T norm = T(1 / std::sqrt(double(this->m_features)));
        phi = phi.array().max(T(0)) * norm + m_epsilon;
        logScale.setZero();
    }

private:
    T m_epsilon;
};

// elu+1 (Katharopoulos et al. 2020): phi(x) = elu(x) + 1, i.e. x + 1 for x > 0 and exp(x)
// otherwise, elementwise on the raw row x (or on x' = sqrt(s) x when asked). C = d.
template <typename T>
class EluFeatures final : public FeatureMap<T> {
public:
    EluFeatures(const FeatureMapSpec& spec, int d, double scale)
        : FeatureMap<T>(featureCountOf(spec, d)),
          m_inputScale(T(spec.eluOnScaled ? std::sqrt(scale) : 1.0))
    {
    }


    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        // elu(x) + 1 = max(x, 0) + exp(min(x, 0)), which vectorises (select does not).
        const auto scaled = x.array() * m_inputScale;
        phi = scaled.max(T(0)) + scaled.min(T(0)).exp();
        logScale.setZero();
    }

private:
    T m_inputScale;
};

// Degree-2 Taylor map: phi(x) = [1, x', (x'_a x'_b c_ab)_{a <= b}] with c_aa = 1/sqrt(2) and
// c_ab = 1 otherwise, so phi(x).phi(y) = 1 + x'.y' + (x'.y')^2 / 2 exactly (the upper triangle of
// vec(x' x'^T) / sqrt(2), folded). C = 1 + d + d (d + 1) / 2.
template <typename T>
class Taylor2Features final : public FeatureMap<T> {
public:
    Taylor2Features(const FeatureMapSpec& spec, int d, double scale)
        : FeatureMap<T>(featureCountOf(spec, d)), m_d(d), m_sqrtScale(T(std::sqrt(scale)))
    {
    }


    void map(const Eigen::Ref<const Matrix<T>>& x, Eigen::Ref<Matrix<T>> phi,
             Eigen::Ref<Vector<T>> logScale) const override
    {
        const T halfSqrt2 = T(1 / std::sqrt(2.0));
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
            const Vector<T> xs = x.row(i).transpose() * m_sqrtScale;
            phi(i, 0) = T(1);
            phi.row(i).segment(1, m_d) = xs.transpose();
            Eigen::Index column = 1 + m_d;
            for (Eigen::Index a = 0; a < m_d; ++a) {
                phi(i, column++) = xs[a] * xs[a] * halfSqrt2;
                for (Eigen::Index b = a + 1; b < m_d; ++b)
                    phi(i, column++) = xs[a] * xs[b];
            }
        }
        logScale.setZero();
    }

private:
    Eigen::Index m_d;
    T m_sqrtScale;
};

}  // namespace

const std::vector<FeatureMapInfo>& featureMapRegistry()
{
    static const std::vector<FeatureMapInfo> registry = {
        {FeatureMapKind::FavorPositive, QStringLiteral("favor-positive"),
         QStringLiteral("FAVOR+ positive"), true, true, false},
        {FeatureMapKind::FavorHyperbolic, QStringLiteral("favor-hyperbolic"),
         QStringLiteral("FAVOR+ hyperbolic"), true, true, false},
        {FeatureMapKind::FavorTrig, QStringLiteral("favor-trig"),
         QStringLiteral("Trigonometric (random Fourier)"), true, true, true},
        {FeatureMapKind::FavorRelu, QStringLiteral("favor-relu"),
         QStringLiteral("Performer-ReLU"), true, false, false},
        {FeatureMapKind::Elu, QStringLiteral("elu"), QStringLiteral("elu+1 linear attention"),
         false, false, false},
        {FeatureMapKind::Taylor2, QStringLiteral("taylor2"), QStringLiteral("Degree-2 Taylor"),
         false, false, true},
    };
    return registry;
}

const FeatureMapInfo& featureMapInfo(FeatureMapKind kind)
{
    for (const FeatureMapInfo& info : featureMapRegistry())
        if (info.kind == kind)
            return info;
    Q_UNREACHABLE();
}

bool parseFeatureMapKind(const QString& name, FeatureMapKind* kind)
{
    for (const FeatureMapInfo& info : featureMapRegistry()) {
        if (info.name == name) {
            *kind = info.kind;
            return true;
        }
    }
    return false;
}

Eigen::Index featureCountOf(const FeatureMapSpec& spec, int d)
{
    const Eigen::Index m = spec.features;
    switch (spec.kind) {
        case FeatureMapKind::FavorPositive:
        case FeatureMapKind::FavorRelu: return m;
        case FeatureMapKind::FavorHyperbolic:
        case FeatureMapKind::FavorTrig: return 2 * m;
        case FeatureMapKind::Elu: return d;
        case FeatureMapKind::Taylor2: return 1 + Eigen::Index(d) + Eigen::Index(d) * (d + 1) / 2;
    }
    Q_UNREACHABLE();
}

template <typename T>
std::unique_ptr<FeatureMap<T>> makeFeatureMap(const FeatureMapSpec& spec, int d, double scale,
                                              int head)
{
    switch (spec.kind) {
        case FeatureMapKind::FavorPositive:
            return std::make_unique<PositiveRandomFeatures<T>>(spec, d, scale, head);
        case FeatureMapKind::FavorHyperbolic:
            return std::make_unique<HyperbolicRandomFeatures<T>>(spec, d, scale, head);
        case FeatureMapKind::FavorTrig:
            return std::make_unique<TrigonometricRandomFeatures<T>>(spec, d, scale, head);
        case FeatureMapKind::FavorRelu:
            return std::make_unique<ReluRandomFeatures<T>>(spec, d, scale, head);
        case FeatureMapKind::Elu:
            return std::make_unique<EluFeatures<T>>(spec, d, scale);
        case FeatureMapKind::Taylor2:
            return std::make_unique<Taylor2Features<T>>(spec, d, scale);
    }
    Q_UNREACHABLE();
}

template <typename T>
MatrixD trueScaleFeatures(const FeatureMap<T>& phi, const Matrix<T>& x)
{
    Matrix<T> mantissa(x.rows(), phi.featureCount());
    Vector<T> logScale(x.rows());
    phi.map(x, mantissa, logScale);
    MatrixD features = mantissa.template cast<double>();
    for (Eigen::Index i = 0; i < features.rows(); ++i) {
        const double factor = std::exp(double(logScale[i]));
        for (double& value : features.row(i))
            value = value == 0.0 ? 0.0 : value * factor;  // 0 stays 0 even where exp(c_i) = inf
    }
    return features;
}

template std::unique_ptr<FeatureMap<float>> makeFeatureMap<float>(const FeatureMapSpec&, int,
                                                                  double, int);
template std::unique_ptr<FeatureMap<double>> makeFeatureMap<double>(const FeatureMapSpec&, int,
                                                                    double, int);
template MatrixD trueScaleFeatures<float>(const FeatureMap<float>&, const Matrix<float>&);
template MatrixD trueScaleFeatures<double>(const FeatureMap<double>&, const Matrix<double>&);

}  // namespace attnlab

#include "fitting/distillation.h"

#include "attention/random.h"
#include "errors.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnlab {

namespace {

// The smallest mantissa product a log is taken of: a product that underflowed (its exponents
// below -745) counts as this rather than 0, so that the loss stays finite and its gradient
// pushes the entry up.
constexpr double kSmallestProduct = 1e-300;

// One side's features as mantissas: u = x W^T + b, Phi = [exp(u - c), exp(-u - c)] with c a
// row's largest |u| (queries) or the window's (keys, one common scale): phi = Phi exp(c).
struct SideFeatures {
    MatrixD phi;    // L x 2 d_f
    VectorD scale;  // c per row

    SideFeatures(const MatrixD& x, const MatrixD& weight, const VectorD& bias, bool perRow)
    {
        const Eigen::Index f = weight.rows();
        MatrixD u = x * weight.transpose();
        u.rowwise() += bias.transpose();
        scale = u.cwiseAbs().rowwise().maxCoeff();
        if (!perRow)
            scale.setConstant(scale.size() ? scale.maxCoeff() : 0.0);
        phi.resize(u.rows(), 2 * f);
        phi.leftCols(f) = u.array().colwise() - scale.array();
        phi.rightCols(f) = (-u).array().colwise() - scale.array();
        phi = phi.array().exp();  // one contiguous block: Eigen's vectorised exp
    }

    // dl/du from dl/dPhi (G, L x 2 d_f): G+ o Phi+ - G- o Phi-.
    MatrixD chain(const MatrixD& g) const
    {
        const Eigen::Index f = phi.cols() / 2;
        return g.leftCols(f).cwiseProduct(phi.leftCols(f)) -
               g.rightCols(f).cwiseProduct(phi.rightCols(f));
    }
};

// Sum over the rows i of -sum_j P_ij log P_ij.
double rowEntropySum(const MatrixD& p)
{
    double sum = 0;
    for (Eigen::Index i = 0; i < p.size(); ++i) {
        const double value = p.data()[i];
        if (value > 0)
            sum -= value * std::log(value);
    }
    return sum;
}

// One window's summed cross-entropy, with its gradient added (unnormalised) to the four parts.
double windowCrossEntropy(const FittedHeadMaps& maps, const FitWindow& window, bool causal,
                          FittedHeadMaps* gradient)
{
    const SideFeatures queries(window.queries, maps.queryWeight, maps.queryBias, true);
    const SideFeatures keys(window.keys, maps.keyWeight, maps.keyBias, false);
    const Eigen::Index length = window.queries.rows();
    MatrixD products(length, window.keys.rows());
    if (causal) {
        products.setZero();
        products.triangularView<Eigen::Lower>() = queries.phi * keys.phi.transpose();
    } else {
        products.noalias() = queries.phi * keys.phi.transpose();
    }
    double crossEntropy = 0;
    // R_ij = P^_ij / Ahat_ij - P_ij / Ahat_ij = 1 / Z_i - P_ij / Ahat_ij, in place of Ahat.
    for (Eigen::Index i = 0; i < length; ++i) {
        const Eigen::Index visible = causal ? i + 1 : products.cols();
        auto row = products.row(i).head(visible).array();
        const auto exact = window.exact.row(i).head(visible).array();
        const double z = row.sum();
        row = row.max(kSmallestProduct);
        // P_ij log Ahat_ij is 0 where P_ij is (0 log Ahat, Ahat > 0).
        crossEntropy += std::log(z) - (exact * row.log()).sum();
        row = 1 / z - exact / row;
    }
    if (!gradient)
        return crossEntropy;
    MatrixD queryGradient(length, queries.phi.cols());
    MatrixD keyGradient(window.keys.rows(), keys.phi.cols());
    if (causal) {
        queryGradient.noalias() = products.triangularView<Eigen::Lower>() * keys.phi;
        keyGradient.noalias() = products.transpose().triangularView<Eigen::Upper>() * queries.phi;
    } else {
        queryGradient.noalias() = products * keys.phi;
        keyGradient.noalias() = products.transpose() * queries.phi;
    }
    const MatrixD du = queries.chain(queryGradient);
    const MatrixD dv = keys.chain(keyGradient);
    gradient->queryWeight.noalias() += du.transpose() * window.queries;
    gradient->queryBias += du.colwise().sum().transpose();
    gradient->keyWeight.noalias() += dv.transpose() * window.keys;
    gradient->keyBias += dv.colwise().sum().transpose();
    return crossEntropy;
}

std::vector<std::size_t> everyWindow(const HeadFitData& data)
{
    std::vector<std::size_t> all(data.windows.size());
    std::iota(all.begin(), all.end(), std::size_t(0));
    return all;
}

// Adam's moments and its update of theta.
struct Adam {
    VectorD first;
    VectorD second;
    int t = 0;

    explicit Adam(Eigen::Index size) : first(VectorD::Zero(size)), second(VectorD::Zero(size)) {}

    void update(VectorD& theta, const VectorD& gradient, double rate)
    {
        constexpr double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
        ++t;
        first = beta1 * first + (1 - beta1) * gradient;
        second = beta2 * second + (1 - beta2) * gradient.cwiseAbs2();
        const double correction1 = 1 - std::pow(beta1, t);
        const double correction2 = 1 - std::pow(beta2, t);
        theta.array() -= rate * (first.array() / correction1) /
                         ((second.array() / correction2).sqrt() + epsilon);
    }
};

// The batches of an epoch: the windows in a seeded order, cut into batches.
class BatchDraw {
public:
    BatchDraw(std::size_t windows, int batch, std::uint64_t seed)
        : m_order(windows),
          m_batch(std::size_t(std::max(1, batch))),
          m_rng(seed, RandomStream::FeatureMapFit, 2)
    {
        std::iota(m_order.begin(), m_order.end(), std::size_t(0));
    }

    std::vector<std::size_t> next()
    {
        if (m_order.size() <= m_batch)
            return m_order;
        if (m_next + m_batch > m_order.size())
            m_next = 0;
        if (m_next == 0)
            shuffle();
        std::vector<std::size_t> batch(m_order.begin() + std::ptrdiff_t(m_next),
                                       m_order.begin() + std::ptrdiff_t(m_next + m_batch));
        m_next += m_batch;
        return batch;
    }

private:
    // Fisher-Yates with the seeded generator.
    void shuffle()
    {
        for (std::size_t i = m_order.size() - 1; i > 0; --i) {
            const auto j = std::size_t(m_rng.uniform() * double(i + 1));
            std::swap(m_order[i], m_order[std::min(j, i)]);
        }
    }

    std::vector<std::size_t> m_order;
    std::size_t m_batch;
    std::size_t m_next = 0;
    Rng m_rng;
};

}  // namespace

Eigen::Index HeadFitData::rows() const
{
    Eigen::Index rows = 0;
    for (const FitWindow& window : windows)
        rows += window.queries.rows();
    return rows;
}

VectorD packParameters(const FittedHeadMaps& maps)
{
    const Eigen::Index weights = maps.queryWeight.size(), biases = maps.queryBias.size();
    VectorD theta(2 * (weights + biases));
    theta.segment(0, weights) = Eigen::Map<const VectorD>(maps.queryWeight.data(), weights);
    theta.segment(weights, biases) = maps.queryBias;
    theta.segment(weights + biases, weights) =
        Eigen::Map<const VectorD>(maps.keyWeight.data(), weights);
    theta.segment(2 * weights + biases, biases) = maps.keyBias;
    return theta;
}

void unpackParameters(const VectorD& theta, FittedHeadMaps& maps)
{
    const Eigen::Index weights = maps.queryWeight.size(), biases = maps.queryBias.size();
    Eigen::Map<VectorD>(maps.queryWeight.data(), weights) = theta.segment(0, weights);
    maps.queryBias = theta.segment(weights, biases);
    Eigen::Map<VectorD>(maps.keyWeight.data(), weights) = theta.segment(weights + biases, weights);
    maps.keyBias = theta.segment(2 * weights + biases, biases);
}

DistillationLoss distillationLoss(const FittedHeadMaps& maps, const HeadFitData& data,
                                  const std::vector<std::size_t>& batch, VectorD* gradient)
{
    const std::vector<std::size_t> windows = batch.empty() ? everyWindow(data) : batch;
    FittedHeadMaps sums;
    if (gradient) {
        sums.queryWeight = MatrixD::Zero(maps.queryWeight.rows(), maps.queryWeight.cols());
        sums.keyWeight = MatrixD::Zero(maps.keyWeight.rows(), maps.keyWeight.cols());
        sums.queryBias = VectorD::Zero(maps.queryBias.size());
        sums.keyBias = VectorD::Zero(maps.keyBias.size());
    }
    DistillationLoss loss;
    double rows = 0;
    for (const std::size_t w : windows) {
        const FitWindow& window = data.windows[w];
        loss.crossEntropy +=
            windowCrossEntropy(maps, window, data.causal, gradient ? &sums : nullptr);
        loss.entropy += rowEntropySum(window.exact);
        rows += double(window.queries.rows());
    }
    loss.crossEntropy /= rows;
    loss.entropy /= rows;
    if (gradient)
        *gradient = packParameters(sums) / rows;
    return loss;
}

FittedHeadMaps fitHeadMaps(const FittedHeadMaps& maps, const HeadFitData& data,
                           const DistillationSettings& settings,
                           const std::function<bool(int, double)>& step)
{
    FittedHeadMaps fitted = maps;
    VectorD theta = packParameters(maps);
    Adam adam(theta.size());
    BatchDraw batches(data.windows.size(), settings.batchWindows, settings.seed);
    VectorD gradient;
    for (int t = 1; t <= settings.steps; ++t) {
        unpackParameters(theta, fitted);
        const DistillationLoss loss = distillationLoss(fitted, data, batches.next(), &gradient);
        if (!std::isfinite(loss.crossEntropy))
            throw InputError(QStringLiteral("the fit diverged at step %1 of %2: its loss is no "
                                            "longer finite; lower the learning rate (now %3)")
                                 .arg(t)
                                 .arg(settings.steps)
                                 .arg(settings.learningRate));
        if (!gradient.allFinite())
            throw InputError(QStringLiteral("the fit diverged at step %1 of %2: its gradient "
                                            "overflowed (the cross-entropy there was %3); lower "
                                            "the learning rate (now %4)")
                                 .arg(t)
                                 .arg(settings.steps)
                                 .arg(loss.crossEntropy)
                                 .arg(settings.learningRate));
        // A cosine from the rate down to a tenth of it over the steps.
        const double progress = settings.steps > 1 ? double(t - 1) / (settings.steps - 1) : 0;
        const double rate =
            settings.learningRate * (0.1 + 0.45 * (1 + std::cos(progress * 3.141592653589793)));
        adam.update(theta, gradient, rate);
        if (step && !step(t, loss.kl()))
            break;
    }
    unpackParameters(theta, fitted);
    if (!theta.allFinite())
        throw InputError(QStringLiteral("the fit diverged: its parameters are not finite after "
                                        "%1 steps; lower the learning rate (now %2)")
                             .arg(settings.steps)
                             .arg(settings.learningRate));
    return fitted;
}

double fitWindowLogWeight(const FittedHeadMaps& maps, const HeadFitData& data, int window)
{
    // Per row: log E_i, log B_i (-inf without keys outside the window) and p_i.
    std::vector<double> logWindow, logOutside, exactOutside;
    for (const FitWindow& part : data.windows) {
        const SideFeatures queries(part.queries, maps.queryWeight, maps.queryBias, true);
        const SideFeatures keys(part.keys, maps.keyWeight, maps.keyBias, false);
        const MatrixD scores = part.queries * part.keys.transpose();
        const MatrixD products = queries.phi * keys.phi.transpose();
        for (Eigen::Index i = 0; i < part.queries.rows(); ++i) {
            const Eigen::Index first = std::max<Eigen::Index>(0, i - window + 1);
            const auto inside = scores.row(i).segment(first, i - first + 1);
            const double top = inside.maxCoeff();
            logWindow.push_back(top + std::log((inside.array() - top).exp().sum()));
            const double outside = products.row(i).head(first).sum();
            // log of the true sum: the mantissas' times exp(M_i + kappa).
            logOutside.push_back(outside > 0 ? std::log(outside) + queries.scale[i] + keys.scale[0]
                                             : -std::numeric_limits<double>::infinity());
            exactOutside.push_back(part.exact.row(i).head(first).sum());
        }
    }
    const auto derivative = [&](double t) {
        double sum = 0;
        for (std::size_t i = 0; i < logWindow.size(); ++i) {
            const double x = t + logOutside[i] - logWindow[i];
            sum += (std::isfinite(x) ? 1 / (1 + std::exp(-x)) : 0.0) - exactOutside[i];
        }
        return sum;
    };
    double low = -40, high = 40;
    if (derivative(low) >= 0)
        return low;
    if (derivative(high) <= 0)
        return high;
    for (int iteration = 0; iteration < 80; ++iteration) {
        const double middle = (low + high) / 2;
        (derivative(middle) < 0 ? low : high) = middle;
    }
    return (low + high) / 2;
}

}  // namespace attnlab

#include "model/rotary_blocks.h"

#include "model/decoding_state.h"
#include "parallel.h"

#include <cmath>

namespace attnlab {

using Eigen::Index;

namespace {

// Rows per block of the element-wise passes (RoPE, RMSNorm, the gate).
constexpr Index kElementRows = 16;

QString scalingText(const RopeSettings& settings)
{
    switch (settings.scaling) {
        case RopeScalingType::None: return QString();
        case RopeScalingType::Linear:
            return QStringLiteral(", linear scaling (factor %1)").arg(settings.factor);
        case RopeScalingType::Llama3:
            return QStringLiteral(
                       ", llama3 scaling (factor %1, low_freq_factor %2, high_freq_factor "
                       "%3, original_max_position_embeddings %4)")
                .arg(settings.factor)
                .arg(settings.lowFrequencyFactor)
                .arg(settings.highFrequencyFactor)
                .arg(settings.originalPositions);
        case RopeScalingType::Factors:
            return QStringLiteral(", a scaling factor per frequency (rope_freqs)");
    }
    return QString();
}

}  // namespace

std::vector<double> RopeSettings::inverseFrequencies() const
{
    const int half = rotaryDims / 2;
    std::vector<double> frequencies(static_cast<std::size_t>(half));
    const double low = originalPositions / lowFrequencyFactor;    // wavelengths above: scaled
    const double high = originalPositions / highFrequencyFactor;  // below: kept
    for (int i = 0; i < half; ++i) {
        const double base = std::pow(theta, -2.0 * i / rotaryDims);
        double f = base;
        if (scaling == RopeScalingType::Linear) {
            f = base / factor;
        } else if (scaling == RopeScalingType::Factors) {
            f = base / frequencyFactors.at(std::size_t(i));
        } else if (scaling == RopeScalingType::Llama3) {
            const double wavelength = 2 * M_PI / base;
            if (wavelength > low) {
                f = base / factor;
            } else if (wavelength >= high) {
                const double t = (originalPositions / wavelength - lowFrequencyFactor) /
                                 (highFrequencyFactor - lowFrequencyFactor);
                f = (1 - t) * base / factor + t * base;
            }
        }
        frequencies[std::size_t(i)] = f;
    }
    return frequencies;
}

QString RopeSettings::description(int headDim) const
{
    return QStringLiteral("RoPE (rotate-half) on %1 of %2 dimensions, theta %3%4")
        .arg(rotaryDims)
        .arg(headDim)
        .arg(theta)
        .arg(scalingText(*this));
}

RopeTable ropeTable(const RopeSettings& settings, Index length, Index first)
{
    const std::vector<double> frequencies = settings.inverseFrequencies();
    const Index half = Index(frequencies.size());
    RopeTable table{Matrix<float>(length, half), Matrix<float>(length, half)};
    for (Index r = 0; r < length; ++r)
        for (Index i = 0; i < half; ++i) {
            const double angle = double(first + r) * frequencies[std::size_t(i)];
            table.cos(r, i) = float(std::cos(angle));
            table.sin(r, i) = float(std::sin(angle));
        }
    return table;
}

void applyRope(Matrix<float>& x, Index first, int heads, Index d, const RopeTable& table)
{
    const Index half = table.cos.cols();
    forEachRowBlock(x.rows(), kElementRows, [&](Index begin, Index end) {
        for (Index p = begin; p < end; ++p) {
            const auto c = table.cos.row(p).array();
            const auto s = table.sin.row(p).array();
            for (int h = 0; h < heads; ++h) {
                auto low = x.row(p).segment(first + h * d, half).array();
                auto high = x.row(p).segment(first + h * d + half, half).array();
                const Eigen::Array<float, 1, Eigen::Dynamic> x1 = low;
                low = x1 * c - high * s;
                high = high * c + x1 * s;
            }
        }
    });
}

void rmsNormalise(const Matrix<float>& x, const Vector<float>& gain, float epsilon,
                  Matrix<float>& out)
{
    forEachRowBlock(x.rows(), kElementRows, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) {
            const float inverse =
                1.0f / std::sqrt(x.row(i).squaredNorm() / float(x.cols()) + epsilon);
            out.row(i).array() = x.row(i).array() * (inverse * gain.transpose().array());
        }
    });
}

void siluGate(const Matrix<float>& gateUp, Matrix<float>& hidden)
{
    const Index inner = hidden.cols();
    forEachRowBlock(gateUp.rows(), kElementRows, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) {
            const auto gate = gateUp.row(i).head(inner).array();
            hidden.row(i).array() =
                gate / (1.0f + (-gate).exp()) * gateUp.row(i).tail(inner).array();
        }
    });
}

void RotaryAttention::run(const Matrix<float>& a, int layer, const ForwardOptions& options,
                          ForwardResult& result, Matrix<float>& qkv, Matrix<float>& outputs) const
{
    const Index length = a.rows();
    const Index d = heads.d;
    const Index queryWidth = Index(heads.heads) * d;
    const Index keyWidth = Index(heads.keyValueHeads) * d;
    threadedProduct(a, weight, qkv, false);
    if (bias.size() > 0)
        forEachRowBlock(length, kElementRows, [&](Index begin, Index end) {
            qkv.middleRows(begin, end - begin).rowwise() += bias.transpose();
        });
    applyRope(qkv, 0, heads.heads, d, rope);
    applyRope(qkv, queryWidth, heads.keyValueHeads, d, rope);
    if (options.captureQkv)
        result.layers.push_back({qkv.leftCols(queryWidth), qkv.middleCols(queryWidth, keyWidth),
                                 qkv.rightCols(keyWidth)});
    const std::size_t l = std::size_t(layer);
    if (decoding)
        decoding->attend(layer, qkv, outputs);
    else if (l < options.replaced.size() && options.replaced[l] && options.replacement)
        replacedAttention(qkv, heads, layer, options.replacement, outputs);
    else
        softmaxAttention(qkv, heads, float(1 / std::sqrt(double(d))), true, window, outputs);
}

}  // namespace attnlab

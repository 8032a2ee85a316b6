#include "generation/recurrent_layer.h"

#include "parallel.h"

#include <atomic>

namespace attnlab {

using Eigen::Index;

RecurrentLayer::RecurrentLayer(const ApproximationSpec& spec, const AttentionHeads& heads,
                               double scale, int layer)
    : m_shape(heads)
{
    for (int h = 0; h < heads.heads; ++h)
        m_heads.push_back(makeRecurrentAttention(spec, int(heads.d), scale, HeadSite{layer, h}));
}

void RecurrentLayer::attend(const Matrix<float>& qkv, Matrix<float>& out)
{
    const Index d = m_shape.d;
    const int group = m_shape.heads / m_shape.keyValueHeads;
    const Index keyColumn = Index(m_shape.heads) * d;
    const Index valueColumn = keyColumn + Index(m_shape.keyValueHeads) * d;
    std::atomic<Index> nonPositive = 0;
    for (Index r = 0; r < qkv.rows(); ++r) {
        forEachRowBlock(m_shape.heads, 1, [&](Index h, Index) {
            const Index g = h / group;
            const bool positive = m_heads[std::size_t(h)]->step(
                qkv.row(r).segment(h * d, d), qkv.row(r).segment(keyColumn + g * d, d),
                qkv.row(r).segment(valueColumn + g * d, d), out.row(r).segment(h * d, d));
            if (!positive)
                ++nonPositive;
        });
        if (m_observer)
            m_observer(r, out);
    }
    m_nonPositive += nonPositive;
}

double RecurrentLayer::bytes() const
{
    double floats = 0;
    for (const std::unique_ptr<RecurrentAttention>& head : m_heads)
        floats += head->stateFloats();
    return floats * sizeof(float);
}

}  // namespace attnlab

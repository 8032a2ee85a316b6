#include "attention/approximations/window_recurrence.h"

#include "attention/exact_attention.h"

namespace attnlab {

namespace {

// The rows the ring starts with.
constexpr Eigen::Index kFirstRows = 16;

}  // namespace

WindowCache::WindowCache(Eigen::Index window, Eigen::Index d, Eigen::Index valueDim)
    : m_keys(0, d), m_values(0, valueDim), m_window(window)
{
}

Eigen::Index WindowCache::nextRow()
{
    const Eigen::Index row = m_tokens % m_window;
    if (row == m_keys.rows()) {
        const Eigen::Index rows = std::min(m_window, std::max(kFirstRows, 2 * m_keys.rows()));
        m_keys.conservativeResize(rows, Eigen::NoChange);
        m_values.conservativeResize(rows, Eigen::NoChange);
    }
    return row;
}

WindowRecurrence::WindowRecurrence(Eigen::Index window, Eigen::Index d, Eigen::Index valueDim,
                                   double scale)
    : m_cache(window, d, valueDim), m_scale(float(scale))
{
}

bool WindowRecurrence::step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
                            const Eigen::Ref<const Eigen::RowVectorXf>& k,
                            const Eigen::Ref<const Eigen::RowVectorXf>& v,
                            Eigen::Ref<Eigen::RowVectorXf> y)
{
    m_cache.push(k, v, [](const auto&, const auto&) {});
    const Eigen::Map<const Matrix<float>> query(q.data(), 1, q.size());
    Eigen::Map<Matrix<float>> output(y.data(), 1, y.size());
    queryAttention(query, m_cache.keys(), m_cache.values(), m_scale, m_scores, output);
    return true;
}

}  // namespace attnlab

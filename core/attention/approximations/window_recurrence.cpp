#include "attention/approximations/window_recurrence.h"

#include "attention/exact_attention.h"

namespace attnlab {

namespace {

// The rows the ring starts with.
constexpr Eigen::Index kFirstRows = 16;

}  // namespace

WindowRecurrence::WindowRecurrence(Eigen::Index window, Eigen::Index d, Eigen::Index valueDim,
                                   double scale)
    : m_keys(0, d), m_values(0, valueDim), m_window(window), m_scale(float(scale))
{
}

bool WindowRecurrence::step(const Eigen::Ref<const Eigen::RowVectorXf>& q,
                            const Eigen::Ref<const Eigen::RowVectorXf>& k,
                            const Eigen::Ref<const Eigen::RowVectorXf>& v,
                            Eigen::Ref<Eigen::RowVectorXf> y)
{
    const Eigen::Index row = m_tokens % m_window;
    if (row == m_keys.rows()) {
        const Eigen::Index rows = std::min(m_window, std::max(kFirstRows, 2 * m_keys.rows()));
        m_keys.conservativeResize(rows, Eigen::NoChange);
        m_values.conservativeResize(rows, Eigen::NoChange);
    }
    m_keys.row(row) = k;
    m_values.row(row) = v;
    ++m_tokens;
    const Eigen::Map<const Matrix<float>> query(q.data(), 1, q.size());
    Eigen::Map<Matrix<float>> output(y.data(), 1, y.size());
    queryAttention(query, m_keys.topRows(held()), m_values.topRows(held()), m_scale, m_scores,
                   output);
    return true;
}

double WindowRecurrence::stateFloats() const
{
    return double(held() * (m_keys.cols() + m_values.cols()));
}

}  // namespace attnlab

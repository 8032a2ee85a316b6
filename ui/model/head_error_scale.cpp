#include "ui/model/head_error_scale.h"

#include "ui/model/head_grid_style.h"

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

using namespace heads;

HeadErrorScale::HeadErrorScale(const std::vector<HeadSurveyEntry>& entries)
{
    double lower = std::numeric_limits<double>::infinity();
    double upper = -std::numeric_limits<double>::infinity();
    for (const HeadSurveyEntry& entry : entries) {
        const double error = entry.metrics.relFrobeniusAttention;
        if (!std::isfinite(error))
            continue;
        lower = std::min(lower, error);
        upper = std::max(upper, error);
    }
    if (!(upper >= lower))
        return;
    m_valid = true;
    if (lower > 0 && upper >= 10 * lower) {
        m_log = true;
        m_lower = lower;
        m_upper = upper;
    } else {
        m_lower = 0;
        m_upper = upper > 0 ? upper : 1;
    }
}

double HeadErrorScale::position(double error) const
{
    if (!m_valid || !std::isfinite(error))
        return std::numeric_limits<double>::quiet_NaN();
    if (m_log) {
        if (error <= 0)
            return 0;
        return clamp(std::log(error / m_lower) / std::log(m_upper / m_lower), 0, 1);
    }
    return clamp((error - m_lower) / (m_upper - m_lower), 0, 1);
}

QColor HeadErrorScale::color(double error) const
{
    const double t = position(error);
    return std::isnan(t) ? kNoErrorColor : colorAt(t);
}

QColor HeadErrorScale::colorAt(double t)
{
    const double x = clamp(t, 0, 1) * double(kErrorColors.size() - 1);
    const int i = std::min(int(x), int(kErrorColors.size()) - 2);
    const double f = x - i;
    const QColor a = QColor::fromRgb(kErrorColors[std::size_t(i)]);
    const QColor b = QColor::fromRgb(kErrorColors[std::size_t(i) + 1]);
    return QColor::fromRgbF(float(a.redF() + f * (b.redF() - a.redF())),
                            float(a.greenF() + f * (b.greenF() - a.greenF())),
                            float(a.blueF() + f * (b.blueF() - a.blueF())));
}

std::vector<double> HeadErrorScale::ticks() const
{
    if (!m_valid)
        return {};
    const double middle = m_log ? std::sqrt(m_lower * m_upper) : 0.5 * (m_lower + m_upper);
    return {m_lower, middle, m_upper};
}

}  // namespace attnlab::ui

#pragma once

#include "sweeps/downstream.h"

#include <QColor>

#include <vector>

namespace attnlab::ui {

// The colour scale of the heads' approximation error e = |P^ - P|_F / |P|_F (the relative
// Frobenius error of P), shared by the grid's cell frames and the norms chart: sequential, light
// yellow (the smallest error of the survey, or 0) through orange to dark red (the largest), on a
// log scale when the errors span a factor of 10 or more, else linear from 0. Heads without an
// error (the exact method) are grey.
class HeadErrorScale {
public:
    HeadErrorScale() = default;
    explicit HeadErrorScale(const std::vector<HeadSurveyEntry>& entries);

    bool isValid() const { return m_valid; }  // some head has a finite error
    bool isLogarithmic() const { return m_log; }
    double lower() const { return m_lower; }
    double upper() const { return m_upper; }
    // Where e falls on the scale, in [0, 1] (clamped); NaN for a NaN e or an invalid scale.
    double position(double error) const;
    // The colour of e; grey for NaN.
    QColor color(double error) const;
    // The colour at position t in [0, 1].
    static QColor colorAt(double t);
    // The values of the ticks the legend labels: the ends and a middle value.
    std::vector<double> ticks() const;

private:
    bool m_valid = false;
    bool m_log = false;
    double m_lower = 0;
    double m_upper = 1;
};

}  // namespace attnlab::ui

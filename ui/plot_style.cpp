#include "plot_style.h"

namespace attnlab::ui {

int niceStep(double minimum)
{
    constexpr int kLargest = 100'000'000;
    for (int decade = 1; decade < kLargest; decade *= 10)
        for (const int factor : {1, 2, 5})
            if (factor * decade >= minimum)
                return factor * decade;
    return kLargest;
}

QFont sizedFont(const QFont& base, double points, bool bold)
{
    QFont font = base;
    font.setPointSizeF(points);
    font.setBold(bold);
    return font;
}

}  // namespace attnlab::ui

#include "ui/model/head_grid_style.h"

#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace attnlab::ui::heads {

QString number(double value)
{
    if (!std::isfinite(value))
        return QStringLiteral("n/a");
    return QString::number(value, 'g', 3);
}

QString approxSymbol()
{
    return QStringLiteral("P\u0302");
}

QFont scaledFont(const QFont& base, double factor, bool bold)
{
    QFont font = base;
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else
        font.setPixelSize(std::max(1, int(std::lround(font.pixelSize() * factor))));
    font.setBold(bold);
    return font;
}

bool showHeadToolTip(QWidget* widget, QHelpEvent* help, const QString& text, const QRect& area)
{
    if (text.isEmpty()) {
        QToolTip::hideText();
        help->ignore();
        return true;
    }
    QToolTip::showText(help->globalPos(), text, widget, area);
    return true;
}

}  // namespace attnlab::ui::heads

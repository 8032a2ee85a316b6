#include "ui/common/number_text.h"

#include <QCoreApplication>

#include <cstdlib>

namespace attnlab::ui {

QString durationText(qint64 milliseconds)
{
    const auto tr = [](const char* text) {
        return QCoreApplication::translate("attnlab::ui", text);
    };
    if (milliseconds < 1000)
        return tr("%1\u00a0ms").arg(milliseconds);
    if (milliseconds < 9950)  // from 9.95 s on, one decimal would read "10.0 s"
        return tr("%1\u00a0s").arg(double(milliseconds) / 1000, 0, 'f', 1);
    const qint64 seconds = (milliseconds + 500) / 1000;
    if (seconds < 60)
        return tr("%1\u00a0s").arg(seconds);
    return tr("%1\u00a0min %2\u00a0s").arg(seconds / 60).arg(seconds % 60);
}

QString superscript(int exponent)
{
    static const QString digits =
        QStringLiteral("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079");
    QString text = exponent < 0 ? QStringLiteral("\u207b") : QString();
    for (const QChar digit : QString::number(std::abs(exponent)))
        text += digits[digit.digitValue()];
    return text;
}

}  // namespace attnlab::ui

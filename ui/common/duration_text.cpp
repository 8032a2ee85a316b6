#include "ui/common/duration_text.h"

#include <QCoreApplication>

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

}  // namespace attnlab::ui

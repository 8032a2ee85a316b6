#include "ui/common/window_hints.h"

#include <QCoreApplication>

namespace attnlab::ui {

QString windowMessage(const QString& message, Remedy remedy)
{
    switch (remedy) {
        case Remedy::RaiseMemoryBudget:
            return message + QLatin1Char(' ') +
                   QCoreApplication::translate("attnlab::ui",
                                               "The memory budget is set in Edit > Memory Budget.");
        case Remedy::KeepLastTokens:
            return message + QLatin1Char(' ') +
                   QCoreApplication::translate(
                       "attnlab::ui", "(the Input dock's \u201cKeep the last tokens\u201d box)");
        case Remedy::None: break;
    }
    return message;
}

}  // namespace attnlab::ui

#include "ui/common/window_hints.h"

#include <QCoreApplication>

namespace attnlab::ui {

namespace {

// Where the window changes the setting remedy; empty for the Stepper's kept states, which the
// page chooses itself around the position shown.
QString placeOf(Remedy remedy)
{
    const auto tr = [](const char* text) {
        return QCoreApplication::translate("attnlab::ui", text);
    };
    switch (remedy) {
        case Remedy::RaiseMemoryBudget: return tr("Edit > Memory Budget");
        case Remedy::KeepLastTokens:
            return tr("the Input dock's \u201cKeep the last tokens\u201d box");
        case Remedy::FewerFeatures: return tr("the Method dock's Features m");
        case Remedy::FewerReplacedLayers: return tr("the Generate page's Replace in");
        case Remedy::FewerGeneratedTokens: return tr("the Generate page's Tokens N");
        case Remedy::FewerKeptStates: break;
        case Remedy::FitMaps:
        case Remedy::FitLayers: return tr("Model > Fit Feature Maps to This Model");
        case Remedy::NoCausalMask: return tr("the Method dock's Causal mask");
        case Remedy::LowerNormMultiplier: return tr("the Method dock's Norm multiplier");
        case Remedy::LowerScale: return tr("the Method dock's Scale s");
        case Remedy::LowerInputNorm: return tr("the Random tab's Row norm");
    }
    return QString();
}

}  // namespace

QString windowMessage(const QString& message, const Remedies& remedies)
{
    QStringList places;
    for (const Remedy remedy : remedies)
        places.append(placeOf(remedy));
    return withPlaces(message, QCoreApplication::translate("attnlab::ui", "Settings:"), places,
                      QStringLiteral("; "));
}

}  // namespace attnlab::ui

#pragma once

#include "errors.h"

#include <QList>
#include <QStringList>

#include <exception>
#include <utility>

namespace attnlab {

// A setting the user can change to get past a refusal. The engine's message says what to change
// in its own words ("use fewer features", "raise the memory budget") without naming an interface,
// and the error lists those settings in the order it names them; each front end adds where each
// is changed, in one place each (the command line an option, the window a menu, dock or page:
// withPlaces).
enum class Remedy {
    RaiseMemoryBudget,     // MemoryBudget: every ResourceError, named last
    KeepLastTokens,        // InputSpec::keepLastTokens: a text longer than the model reads
    FewerFeatures,         // ApproximationSpec::features, m
    FewerReplacedLayers,   // GenerationSpec::layers, the layers whose attention is replaced
    FewerGeneratedTokens,  // GenerationSpec::tokens
    FewerKeptStates,       // CausalStepsOptions::statesFrom and statesTo
    FitMaps,               // fitting feature maps to the model read (FitSpec)
    FitLayers,             // FitSpec::layers: fit a layer too, or fewer layers at a time
    NoCausalMask,          // ExperimentSpec::causal
    LowerNormMultiplier,   // ExperimentSpec::normMultiplier
    LowerScale,            // ExperimentSpec::scale
    LowerInputNorm,        // InputSpec::rowNorm
};
using Remedies = QList<Remedy>;

// An Error (InputError or ResourceError) that settings get past: remedies, in the order the
// message names them.
template <typename Error>
class WithRemedies : public Error {
public:
    WithRemedies(const QString& message, Remedies remedies)
        : Error(message), m_remedies(std::move(remedies))
    {
    }
    const Remedies& remedies() const { return m_remedies; }

private:
    Remedies m_remedies;
};
using RemedyInputError = WithRemedies<InputError>;
// MemoryBudget::require throws it, with RaiseMemoryBudget last.
using RemedyResourceError = WithRemedies<ResourceError>;

// The settings that get past `error`, in the order its message names them: a RemedyInputError's
// or RemedyResourceError's own, RaiseMemoryBudget for another ResourceError, else none.
inline Remedies remediesOf(const std::exception& error)
{
    if (const auto* input = dynamic_cast<const RemedyInputError*>(&error))
        return input->remedies();
    if (const auto* resource = dynamic_cast<const RemedyResourceError*>(&error))
        return resource->remedies();
    if (dynamic_cast<const ResourceError*>(&error))
        return {Remedy::RaiseMemoryBudget};
    return {};
}

// message, then one sentence "<lead> <places, joined by separator>." (message gets a period
// first when it has none): how a front end says where the settings that get past a refusal are
// changed. Empty places (a setting the front end has no place for) are left out; with none left,
// message as it is.
QString withPlaces(const QString& message, const QString& lead, QStringList places,
                   const QString& separator);

}  // namespace attnlab

#pragma once

#include "errors.h"

#include <exception>

namespace attnlab {

// A setting the user can change to get past a refusal. The engine's message says what to change
// in its own words ("raise the memory budget", "keep its last 32 tokens") without naming an
// interface; each front end adds where that setting is changed in it, in one place each (the
// command line an option, the window a menu or field).
enum class Remedy {
    None,
    RaiseMemoryBudget,  // MemoryBudget: every ResourceError
    KeepLastTokens,     // InputSpec::keepLastTokens: a text longer than the model reads
};

// An InputError that a setting gets past (remedy).
class RemedyInputError : public InputError {
public:
    RemedyInputError(const QString& message, Remedy remedy) : InputError(message), m_remedy(remedy)
    {
    }
    Remedy remedy() const { return m_remedy; }

private:
    Remedy m_remedy;
};

// The setting that gets past `error`: RaiseMemoryBudget for a ResourceError (they are all over
// the budget), a RemedyInputError's own, else None.
inline Remedy remedyOf(const std::exception& error)
{
    if (dynamic_cast<const ResourceError*>(&error))
        return Remedy::RaiseMemoryBudget;
    if (const auto* input = dynamic_cast<const RemedyInputError*>(&error))
        return input->remedy();
    return Remedy::None;
}

}  // namespace attnlab

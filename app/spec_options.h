#pragma once

#include "experiment.h"

#include <QCommandLineParser>

namespace attnlab {

// The command-line options that describe an experiment (input, method, parameters), shared by
// the subcommands that compute one.
void addSpecOptions(QCommandLineParser& parser);

// The spec the parsed options describe (defaults where an option is absent). Throws InputError
// naming the option for a malformed value or conflicting inputs.
ExperimentSpec specFromOptions(const QCommandLineParser& parser);

// Q, K, V for the spec: reads text and image files and builds the input. Throws InputError
// naming the file, ResourceError over the budget.
AttentionInput inputFromSpec(const ExperimentSpec& spec, const MemoryBudget& budget);

// The --memory-budget option's value, or the default budget.
MemoryBudget budgetFromOptions(const QCommandLineParser& parser);

}  // namespace attnlab

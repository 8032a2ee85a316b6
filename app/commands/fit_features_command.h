#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab fit-features --model M --text-file F [--layers all|N,...] [--steps N]
// [--features C] [--window W] --out FILE.safetensors [--curves FILE.csv]`: Hedgehog's feature
// maps fitted to every head of the chosen layers of a language model (core/fitting), written as
// a safetensors file for --feature-map; progress on stderr (a terminal, or --progress), each
// head's KL before and after on stdout. arguments[0] is "fit-features". Returns the exit status;
// throws InputError, ResourceError, OutputError.
int runFitFeaturesCommand(const QStringList& arguments);

}  // namespace attnlab

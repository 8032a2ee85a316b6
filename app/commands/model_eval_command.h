#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab model-eval [--model PATH|builtin] [--text STR | --text-file F] --methods LIST
// --features LIST [--layers all|N,...] [--seeds K] --out FILE.csv [--plot FILE]`: what replacing
// softmax attention by each approximation inside a trained model does to its next-token
// predictions (core/sweeps/downstream.h), one CSV row per (method, m, replaced layers, seed),
// with a progress line per row on stderr and a summary on stdout; --plot draws the chart of
// agreement and KL against m (ui/model/model_eval_chart.h) offscreen. arguments[0] is "model-eval".
// Returns the exit status; throws InputError, ResourceError, OutputError.
int runModelEvalCommand(const QStringList& arguments);

}  // namespace attnlab

#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab model-eval [--model PATH|builtin|builtin-vit] [--text STR | --text-file F |
// --image F | --images F1,F2,... | --image-folder DIR] --methods LIST --features LIST
// [--layers all|N,...] [--seeds K] --out FILE.csv [--plot FILE] [--predictions FILE.csv]`: what
// replacing softmax attention by each approximation inside a trained model does to its
// predictions (core/sweeps/downstream.h): a GPT-2's next tokens, or a ViT's classes over the
// images. One CSV row per (method, m, replaced layers, seed), with a progress line per row (and,
// for images, every twentieth of them) on stderr and a summary on stdout; --predictions writes
// each image's class, exact and approximate; --plot draws the chart of agreement and KL against m
// (ui/model/model_eval_chart.h) offscreen. arguments[0] is "model-eval". Returns the exit status;
// throws InputError, ResourceError, OutputError.
int runModelEvalCommand(const QStringList& arguments);

}  // namespace attnlab

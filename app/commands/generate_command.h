#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab generate --model PATH|builtin --prompt TEXT --tokens N --method M [--layers ...]
// [--greedy | --temperature T --top-k K --sample-seed S] [--seed S] [method parameters] --out DIR
// [--plot]`: continues the prompt twice, with exact attention over a key/value cache and with
// the method's recurrent form in the replaced layers (core/generation/generation.h), and writes
// into DIR (all or none) tokens.json, steps.csv and, with --plot, kl.png, cost.png and
// memory.png. arguments[0] is "generate". Returns the exit status; throws InputError,
// ResourceError, OutputError.
int runGenerateCommand(const QStringList& arguments);

}  // namespace attnlab

#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab compute [input] [method] --out DIR`: computes exact and approximate attention and
// writes the arrays and metrics.json into DIR (all or none). arguments[0] is "compute".
// Returns the exit status; throws InputError, ResourceError, OutputError.
int runComputeCommand(const QStringList& arguments);

}  // namespace attnlab

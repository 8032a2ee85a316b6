#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab bench --methods LIST --lengths LIST|MIN:MAX ... --out FILE.csv [--plot FILE]`: the
// timing-vs-length sweep of core/sweeps/timing_sweep.h, written as CSV (atomically), with progress
// lines on stderr and a summary (sgemm rate, fitted slopes, crossover lengths) on stdout.
// arguments[0] is "bench". Returns the exit status; throws InputError, OutputError.
int runBenchCommand(const QStringList& arguments);

}  // namespace attnlab

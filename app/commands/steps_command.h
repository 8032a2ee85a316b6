#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab steps [input] [method] --out DIR [--from I --to J] [--head H]`: runs one head's
// causal linear attention as a recurrence, token by token (core/sweeps/causal_steps.h), and writes
// into DIR (all or none): states.npy (S_i of the chosen positions, count x C x M), normalizers.npy
// (z_i, L x C), outputs.npy (recurrent y_i, L x M), outputs_parallel.npy (chunked form),
// outputs_exact_causal.npy (causal softmax) and steps.json (one record per position). Positions are
// 0-based tokens t; the state after token t is S_i with i = t + 1. arguments[0] is "steps". Returns
// the exit status; throws InputError, ResourceError, OutputError.
int runStepsCommand(const QStringList& arguments);

}  // namespace attnlab

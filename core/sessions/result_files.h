#pragma once

#include "experiment.h"

#include <QJsonObject>
#include <QStringList>

namespace attnlab {

// The metrics as JSON, with the names the command line and CSV files use (rel_frobenius_attention,
// rel_frobenius_output, max_abs, mean_abs, mean_tv, mean_kl, kernel_mse, nonpositive_rows,
// kernel_overflow); a metric that does not apply is null.
QJsonObject metricsJson(const AttentionMetrics& metrics);

// What metrics.json holds: the spec as run, the shapes, the tokens, for a language model's input
// the model ("model": architecture, query_heads, key_value_heads, key_value_head_of_query_head,
// head_dim, positional_encoding, rope {theta, rotary_dims, scaling}, sliding_window), every metric
// (over all heads and per head), the rows with non-positive denominators, the warnings and the
// timings.
QJsonObject resultJson(const ExperimentResult& result);

// Writes what result holds into directory, all files or none (AtomicFileSet): attention_exact,
// attention_approx, kernel_exact, kernel_approx, output_exact, output_approx, features_q,
// features_k, projection (.npy, float32 or float64 as computed; one head: 2-D arrays, several: a
// leading head axis) and metrics.json; with input also queries, keys and values (H x L x d
// always, as attention saw them: after the norm multiplier, before the scale). Result files of an
// earlier run that this one does not write are removed, so the folder holds one result. Returns
// the paths written. Throws OutputError.
QStringList writeResultFiles(const ExperimentResult& result, const QString& directory,
                             const AttentionInput* input = nullptr);

}  // namespace attnlab

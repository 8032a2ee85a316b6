#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab errors [input options] --methods LIST --features LIST --seeds N [--projections
// orthogonal,iid] [--sweep features|norm|length] [--norms LIST] [--lengths LIST] [--pair A,B]
// [--metric NAME] --out FILE.csv [--plot FILE.png|svg|pdf]`: the error sweep of
// core/sweeps/error_sweep.h on one input, written as CSV (atomically), with a progress line per
// curve point on stderr and a summary (fitted slopes, kernel MSE against Lemma 2) on stdout; --plot
// draws the Error analysis page's chart (ui/errors/error_chart.h) offscreen. arguments[0] is
// "errors". Returns the exit status; throws InputError, ResourceError, OutputError.
int runErrorsCommand(const QStringList& arguments);

}  // namespace attnlab

#pragma once

#include "sweeps/error_sweep.h"

#include <QJsonObject>
#include <QString>

#include <map>
#include <vector>

namespace attnlab {

// The Error analysis page in a session (the view's "errors" object): its controls (the methods
// and projections ticked, what is swept, the values entered for each kind of sweep, m, the seeds,
// the kernel MSE's pair), the metric and axis the chart shows, and the sweep it shows. The page
// reads and writes it; `attention-lab errors --save-session` writes it for a sweep computed
// headless, so that the window opens on it.
struct ErrorPageState {
    // The ranges of the page's controls.
    static constexpr int maxFeatures = 65536;
    static constexpr int maxSeeds = 100'000;
    static constexpr int maxPairIndex = 1 << 30;

    std::vector<Method> methods;
    std::vector<ProjectionKind> projections;
    ErrorSweepKind sweep = ErrorSweepKind::Features;
    std::map<ErrorSweepKind, QString> values;  // the values text of each kind ("8, 16, 32")
    int features = 64;
    int seeds = 8;
    int pairQuery = 0;
    int pairKey = 1;
    ErrorMetric metric = ErrorMetric::RelFrobeniusAttention;
    ErrorAxis axis = ErrorAxis::Value;
    ErrorSweepResult result;  // no rows: none is shown

    // The values text a page starts with for `kind`.
    static QString defaultValues(ErrorSweepKind kind);
    // The state of a page that has just run `result` and shows `metric` against `axis`.
    static ErrorPageState showing(const ErrorSweepResult& result, ErrorMetric metric,
                                  ErrorAxis axis = ErrorAxis::Value);

    // {"methods", "projections", "sweep", "values": {kind: text}, "features", "seeds",
    // "pair_query", "pair_key", "metric", "axis", "result" (only with rows)}.
    QJsonObject toJson() const;
    // Throws InputError naming the field when the state is malformed.
    static ErrorPageState fromJson(const QJsonObject& json);
};

// The kinds of error sweep, in the order the page offers them.
const std::vector<ErrorSweepKind>& errorSweepKinds();

}  // namespace attnlab

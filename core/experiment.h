#pragma once

#include "experiment_spec.h"
#include "attention/approximation.h"
#include "attention/detail_pyramid.h"
#include "attention/feature_maps.h"
#include "inputs/inputs.h"
#include "attention/linear_attention.h"
#include "memory_budget.h"
#include "attention/metrics.h"
#include "attention/result_matrix.h"
#include "types.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace attnlab {

// A plain-words warning attached to a result; code is stable ("nonpositive-denominator",
// "overflow", "feature-overflow", "kl-undefined", "entropy-undefined", "monotonicity-undefined",
// "output-zero", "window-covers-every-pair", "size-past-length", "causal-form": what causal
// mode changes in the method, "input": what the input changed, such as tokens dropped from a text
// longer than the model reads).
struct ResultWarning {
    QString code;
    QString message;
    int head = -1;  // the head it is about (its message says "in head h"); -1: the whole result
};

struct HeadResult {
    ResultMatrix attentionExact;   // P (L x L), when matrices were asked for
    ResultMatrix attentionApprox;  // P^ (not for the exact method)
    MatrixD kernelExact;           // A = exp(s Q K^T), masked
    MatrixD kernelApprox;          // A^ = phi(Q) phi(K)^T, masked
    MatrixD outputExact;           // O = P V (L x d_v)
    MatrixD outputApprox;          // O^ in linear form (or streamed, for the exact method)
    MatrixD featuresQ;             // phi(Q) (L x C) at true scale, when features were asked for
    MatrixD featuresK;             // phi(K)
    MatrixD projection;            // W (m x d), applied to x' = sqrt(s) x; empty when no W is drawn
    std::vector<DrawnMatrix> drawn;  // other random matrices of the method (Linformer's E, F)
    VectorD logNormaliser;           // log Z_i, Z_i = sum_j A_ij: A_ij = P_ij Z_i
    // Level-of-detail pyramids of P, P^ and the signed error P^ - P, when asked for.
    std::shared_ptr<const DetailPyramid> exactPyramid;
    std::shared_ptr<const DetailPyramid> approxPyramid;
    std::shared_ptr<const DetailPyramid> errorPyramid;
    // P's entropies, ranks and keys of largest weight for the row properties, when matrices were
    // asked for and there is a P^: kept with P for the next approximation of the same input.
    std::shared_ptr<const ExactRowProperties> exactRowProperties;
    std::vector<Eigen::Index> nonPositiveRows;
    AttentionMetrics metrics;
};

struct ExperimentResult {
    ExperimentSpec spec;
    double scale = 0;  // s as used
    QStringList labels;
    int gridRows = 0;
    int gridCols = 0;
    std::optional<LanguageModelInfo> model;  // the input's model, for a language model's input
    std::vector<HeadResult> heads;
    AttentionMetrics metrics;  // over all heads together
    std::vector<ResultWarning> warnings;
    // The approximate output (linear form, or streaming exact), its W, E, F drawn beforehand.
    double secondsApprox = 0;
    double secondsExact = 0;  // exact attention rows, output and metrics
    // The exact side (P, O, log Z, P's pyramid and row properties) was taken over from
    // ComputeOptions::sameInputAs; secondsExact then counts the metrics pass only.
    bool exactKept = false;
};

struct ComputeOptions {
    bool matrices = true;  // keep P and P^ (L x L each)
    bool kernels = true;   // with matrices: keep A and A^ too
    bool features = true;  // keep phi(Q), phi(K)
    // With matrices: build the heatmaps' level-of-detail pyramids of P, P^ and P^ - P in the row
    // pass, while the rows are in cache.
    bool pyramids = false;
    // A result computed before from the same input (the caller vouches for that). When its exact
    // side fits this request (the same scale, mask and precision, with P kept), its P, O, log Z,
    // P's pyramid and P's side of the row properties (entropies, ranks) are shared instead of
    // computed again: a new seed, m or feature map redraws only the approximation. The numbers
    // are the same either way.
    std::shared_ptr<const ExperimentResult> sameInputAs;
    MemoryBudget budget;
    // Installed as compute()'s CancellationScope: polled on the calling thread between blocks of
    // work, W's draw included; when it returns true, compute throws Cancelled.
    std::function<bool()> cancelled;
    // Called on the calling thread as the work goes on: `done` of `total` steps, two a head (its
    // output, approximate with W's draw or streamed exact, then the rows of P and P^ with the
    // metrics).
    std::function<void(int done, int total)> progress;
    // Called on the calling thread once the request has passed its checks (range, memory
    // budget), before its work starts, with largeRunNotice's text when the run is expected to be
    // long or large; not called otherwise.
    std::function<void(const QString& notice)> announce;
};

// What compute(spec, input, options) is expected to cost, worked out before it starts from the
// method registry's cost model (methods.h), for each of the H heads:
// - W's draw, for the maps that draw one, in plain loops: orthogonal and simplex rows one QR
//   decomposition of a d x d Gaussian block per d rows (2 d^3 flops, d^2 normal draws), chi row
//   norms d more draws a row; iid rows m d draws;
// - the products: the approximate output (MethodInfo::flops), the rows of P and O = P V
//   (2 L^2 (d + d_v)), the rows of P^ (2 L^2 C for C features, else the method's flops again)
//   and, when features are kept, phi(Q) and phi(K) mapped again (4 L m d);
// - the memory it holds at once (bytes): the matrices kept as the memory budget counts them, W
//   (m x d, double) and phi(Q), phi(K) (double) of every head, and one head's working memory: W
//   again in the engine's precision, the features of queries and keys, the method's working set.
// Seconds: products at 20 GFLOP/s, the loops of W's draw at 1 GFLOP/s and 40 ns a normal draw,
// and 1 s per GB held (memory is written at least once). Measured on the 2-core machine this was
// built on (the built-in example: L = 25, 4 heads, d = 64) with m = 524288: 30.6 s and 2.96 GB
// resident; the model says about 33 s and 2.9 GiB (with m = 1048576, 66 s and 5.8 GiB).
struct ComputeCost {
    double seconds = 0;
    double bytes = 0;
};
ComputeCost expectedComputeCost(const ExperimentSpec& spec, const AttentionInput& input,
                                const ComputeOptions& options);

// Above either bound a run is announced before it starts (the command line's stderr, the
// window's status bar): about 5 s or 1 GiB.
constexpr double kAnnouncedRunSeconds = 5;
constexpr double kAnnouncedRunBytes = double(1 << 30);

// The rates the expected costs are worked out with (expectedComputeCost, and model-eval's and
// generate's in downstream.h): products at 20 GFLOP/s, W's draw in plain loops at 1 GFLOP/s and
// 40 ns a normal draw, and 1 s per GB held.
constexpr double kProductFlopsPerSecond = 20e9;
constexpr double kLoopFlopsPerSecond = 1e9;
constexpr double kSecondsPerNormalDraw = 40e-9;
constexpr double kSecondsPerByteHeld = 1e-9;

// "expected to take about 40 s and 2.1 GiB (what)" when cost exceeds kAnnouncedRunSeconds or
// kAnnouncedRunBytes; empty otherwise.
QString expectedRunNotice(const ComputeCost& cost, const QString& what);

// expectedRunNotice of a compute() run, what being its shape: "m = 1048576 features for L = 25,
// 4 heads".
QString largeRunNotice(const ComputeCost& cost, const ExperimentSpec& spec,
                       const AttentionInput& input);

// Throws InputError when a value of spec is out of range, or when the queries and keys (or the
// values) of input are so large that the products of attention would overflow the precision:
// max(s, 1) |x|^2 for the longest query or key x above 1e15 in float, 1e150 in double (without
// the check, s q.k = inf gives inf - inf = NaN after the row maxima); and when a language
// model's input meets feature maps fitted to another model (requireMapsOfModel).
void requireComputable(const ExperimentSpec& spec, const AttentionInput& input);

// The engine threads for L positions, head dimension d, C features and H heads: spec.threads,
// or for 0 one thread when the work is small (L^2 (d + C) H below 2^28 multiply-adds, a few
// milliseconds: waking a team of threads costs more than it saves, and in the window the GUI
// thread wants the other core) and every hardware thread otherwise.
int engineThreadsFor(const ExperimentSpec& spec, Eigen::Index length, Eigen::Index d,
                     Eigen::Index features, Eigen::Index heads);

// Runs exact attention and the approximation of spec on input; deterministic for a given spec.
// The L x L matrices are formed in blocks of rows (metrics need no L x L memory); they are kept
// only when asked for. Throws InputError (spec out of range), ResourceError (the memory the
// request needs exceeds the budget, checked before anything large is allocated) and Cancelled.
ExperimentResult compute(const ExperimentSpec& spec, const AttentionInput& input,
                         const ComputeOptions& options = {});

// The shape of spec on input for a method's cost model (methods.h): L, d, d_v, m, w, causal,
// one thread.
CostShape costShapeOf(const ExperimentSpec& spec, const AttentionInput& input);

}  // namespace attnlab

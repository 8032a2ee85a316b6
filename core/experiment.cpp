#include "experiment.h"

#include "named_values.h"
#include "cancellation.h"
#include "errors.h"
#include "remedy.h"
#include "attention/approximation.h"
#include "attention/approximations/checkpoint_attention.h"
#include "attention/band_products.h"
#include "attention/exact_attention.h"
#include "attention/fitted_feature_maps.h"
#include "attention/linear_attention.h"
#include "inputs/model_input.h"
#include "io/json_fields.h"
#include "parallel.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// Rows of P and P^ formed at a time in the row pass.
constexpr Eigen::Index kRowBlock = 32;

// comparing: a second checkpoint's exact attention takes the approximation's place, whose
// parameters are then not read.
void validate(const ExperimentSpec& spec, bool comparing)
{
    const ApproximationSpec& approximation = spec.approximation;
    if (!spec.exactMethod && !comparing) {
        const MethodInfo& info = methodInfo(approximation.kind);
        // An exact method has no approximation to make (the window's method list once gave its
        // separator's empty data, Method 0).
        require(isApproximation(approximation.kind),
                QStringLiteral("%1 is exact attention, not an approximation: ask for the exact "
                               "method instead")
                    .arg(info.name));
        for (const MethodParameter* parameter : info.parameters) {
            const double value = approximation.value(*parameter);
            const bool integral = parameter->kind != MethodParameter::Kind::Real;
            require(
                std::isfinite(value) && value >= parameter->minimum &&
                    value <= parameter->maximum && (!integral || value == std::floor(value)),
                QStringLiteral("%1: %2 must be %3 from %4 to %5 (got %6)")
                    .arg(info.name, parameter->option,
                         integral ? QStringLiteral("a whole number") : QStringLiteral("a number"))
                    .arg(parameter->minimum)
                    .arg(parameter->maximum)
                    .arg(value));
        }
        requireCausalForm(approximation.kind, spec.causal, causalReason(spec.input));
    }
    require(!spec.scale || (std::isfinite(*spec.scale) && *spec.scale > 0),
            QStringLiteral("the scale s must be a positive number (got %1)")
                .arg(spec.scale.value_or(0)));
    require(spec.threads >= 0,
            QStringLiteral("the number of threads must be >= 0 (got %1)").arg(spec.threads));
    require(spec.chunkSize >= 1,
            QStringLiteral("the chunk size must be at least 1 (got %1)").arg(spec.chunkSize));
}

// The largest max(s, 1) |q_i| |k_j| the arithmetic is trusted with: products of two such values
// (the degree-2 Taylor map squares them) stay finite in float; in double the bound is far larger.
double largestLogitBound(Precision precision)
{
    return precision == Precision::Float ? 1e15 : 1e150;
}

// Refuses queries and keys (and values) so large that the products of attention would overflow
// the precision: without this, s q.k = inf gives inf - inf = NaN after the row maxima.
void requireRepresentable(const ExperimentSpec& spec, const AttentionInput& input)
{
    double largestQuery = 0, largestKey = 0, largestValue = 0;
    for (const HeadTensors& head : input.heads) {
        for (Eigen::Index i = 0; i < head.q.rows(); ++i)
            largestQuery = std::max(largestQuery, head.q.row(i).stableNorm());
        for (Eigen::Index i = 0; i < head.k.rows(); ++i)
            largestKey = std::max(largestKey, head.k.row(i).stableNorm());
        largestValue = std::max(largestValue, head.v.cwiseAbs().maxCoeff());
    }
    const double limit = largestLogitBound(spec.precision);
    const double largest = std::max(largestQuery, largestKey);
    const double bound = std::max(spec.resolvedScale(input.headDim()), 1.0) * largest * largest;
    const QString precision = precisionName(spec.precision);
    if (!(bound <= limit))
        throw RemedyInputError(
            QStringLiteral("the queries and keys are too large for %1 arithmetic: max(s, 1) "
                           "|x|^2 reaches %2 for the longest query or key x, above the %3 that "
                           "keeps every product finite%4. Lower the norm multiplier, the scale or "
                           "the norm of the input.")
                .arg(precision)
                .arg(bound, 0, 'g', 3)
                .arg(limit, 0, 'g', 3)
                .arg(spec.precision == Precision::Float
                         ? QStringLiteral(" (double precision allows up to %1)")
                               .arg(largestLogitBound(Precision::Double), 0, 'g', 3)
                         : QString()),
            {Remedy::LowerNormMultiplier, Remedy::LowerScale, Remedy::LowerInputNorm});
    require(largestValue <= limit,
            QStringLiteral("the values are too large for %1 arithmetic: |v| reaches %2, above %3")
                .arg(precision)
                .arg(largestValue, 0, 'g', 3)
                .arg(limit, 0, 'g', 3));
}

// The bytes one head keeps with its matrices (none without options.matrices): P and P^ in the
// engine's precision, A and A^ in double when kernels are asked for, a pyramid (a third of a float
// matrix) for each of P, P^ and P^ - P when pyramids are, and with P^ P's side of the row
// properties (ExactRowProperties). The budget check and the expected cost both count this.
double keptMatrixBytesPerHead(const ExperimentSpec& spec, Eigen::Index length,
                              const ComputeOptions& options)
{
    if (!options.matrices)
        return 0.0;
    const double scalarBytes = spec.precision == Precision::Float ? 4.0 : 8.0;
    const int attention = spec.exactMethod ? 1 : 2;
    const double bytesPerEntry = attention * scalarBytes +
                                 (options.kernels ? attention * 8.0 : 0.0) +
                                 (options.pyramids ? (2 * attention - 1) * 4.0 / 3.0 : 0.0);
    const double rowProperties = spec.exactMethod ? 0.0 : ExactRowProperties::bytesFor(length);
    return double(length) * double(length) * bytesPerEntry + rowProperties;
}

// The memory a request keeps or needs at once, checked before any of it is allocated.
void requireMemory(const ExperimentSpec& spec, const AttentionInput& input,
                   const ComputeOptions& options, Eigen::Index features)
{
    const double length = double(input.length());
    const double heads = double(input.heads.size());
    const double scalarBytes = spec.precision == Precision::Float ? 4.0 : 8.0;
    if (options.matrices) {
        const int matrices = (spec.exactMethod ? 1 : 2) * (options.kernels ? 2 : 1);
        options.budget.require(
            heads * keptMatrixBytesPerHead(spec, input.length(), options),
            QStringLiteral("Keeping the L x L matrices (%1 x %2 matrices of %3 x %3)")
                .arg(countOf(qint64(heads), QStringLiteral("head"), QStringLiteral("heads")))
                .arg(matrices)
                .arg(qint64(length)),
            QStringLiteral("Use fewer positions, or raise the memory budget; the command line "
                           "can also leave out the matrices (--no-matrices) and still give the "
                           "outputs and every metric in linear memory."));
    }
    if (spec.exactMethod || !input.comparison.empty())
        return;
    const MethodInfo& info = methodInfo(spec.approximation.kind);
    if (features > 0) {
        // Keys mapped once for the rows of P^, plus the features kept for export.
        const double keptFeatures = options.features ? heads * 2.0 * length * features * 8.0 : 0.0;
        options.budget.require(
            length * features * scalarBytes + keptFeatures,
            QStringLiteral("The features phi(Q), phi(K) (%1 x %2)")
                .arg(qint64(length))
                .arg(features),
            QStringLiteral("Use fewer features or positions, or raise the memory budget."));
        return;
    }
    // A method without features: its own working memory (the cost model's), twice over (the
    // output and the rows of P^ each build it).
    const double working = 2 * info.workingSetFloats(costShapeOf(spec, input)) * scalarBytes;
    options.budget.require(
        working,
        QStringLiteral("The working memory of %1 (L = %2)").arg(info.name).arg(qint64(length)),
        QStringLiteral("Use a smaller m or window, fewer positions, or raise the memory budget."));
}

// Whether previous, computed from the same input, holds the exact side this request needs: P
// and log Z for every head at the same scale, mask and precision (and P's pyramid when
// pyramids are asked for).
bool exactSideFits(const ExperimentResult& previous, const ExperimentSpec& spec,
                   const AttentionInput& input, double scale, const ComputeOptions& options)
{
    if (previous.spec.precision != spec.precision || previous.spec.causal != spec.causal ||
        previous.scale != scale || previous.heads.size() != input.heads.size() || !options.matrices)
        return false;
    return std::all_of(previous.heads.begin(), previous.heads.end(), [&](const HeadResult& head) {
        return head.attentionExact.rows() == input.length() &&
               head.logNormaliser.size() == input.length() &&
               (!options.pyramids || head.exactPyramid);
    });
}

// The detail pyramids of one head's P, P^ and P^ - P, built in the row pass.
struct HeadPyramids {
    std::optional<DetailPyramid> exact, approx, error;

    // Finishes those built and shares them with the head.
    void storeInto(HeadResult& head)
    {
        for (auto [built, shared] :
             {std::pair(&exact, &head.exactPyramid), std::pair(&approx, &head.approxPyramid),
              std::pair(&error, &head.errorPyramid)}) {
            if (*built) {
                (*built)->finish();
                *shared = std::make_shared<const DetailPyramid>(std::move(**built));
            }
        }
    }
};

// One head's O^ into head, its time added to *seconds: the second checkpoint's exact attention
// (CheckpointAttention) when `comparison` is its head, exact streaming for the method "exact",
// else the approximation, made (W, E, F drawn, as a trained model holds them) before the clock
// starts, as `bench` times it, and fitted to the data (FAVOR++'s A, Nystrom's landmarks) on the
// clock. Returns the approximation (null for "exact").
template <typename T>
std::unique_ptr<Approximation<T>> approximateHead(const ExperimentSpec& spec, const Matrix<T>& q,
                                                  const Matrix<T>& k, const Matrix<T>& v,
                                                  const HeadTensors* comparison, double scale,
                                                  int headIndex, HeadResult& head, double* seconds)
{
    QElapsedTimer timer;
    std::unique_ptr<Approximation<T>> approximation;
    if (comparison) {
        approximation = std::make_unique<CheckpointAttention<T>>(
            comparison->q.cast<T>(), comparison->k.cast<T>(), comparison->v.cast<T>(), scale);
        timer.start();
        head.outputApprox = approximation->output(q, k, v, spec.causal, spec.chunkSize)
                                .output.template cast<double>();
    } else if (spec.exactMethod) {
        timer.start();
        head.outputApprox =
            streamingAttention<T>(q, k, v, scale, spec.causal).template cast<double>();
    } else {
        approximation = makeApproximation<T>(spec.approximation, int(q.cols()), q.rows(), scale,
                                             HeadSite{spec.input.layer, headIndex});
        throwIfCancelled();
        timer.start();
        approximation->fit(q, k, spec.causal);
        ApproximateOutput<T> approximate =
            approximation->output(q, k, v, spec.causal, spec.chunkSize);
        head.outputApprox = approximate.output.template cast<double>();
        head.nonPositiveRows = std::move(approximate.nonPositiveRows);
    }
    *seconds += timer.nsecsElapsed() * 1e-9;
    if (approximation) {
        head.projection = approximation->projection();
        head.drawn = approximation->drawnMatrices();
    }
    return approximation;
}

// P (when keepExact), P^ (when keepApprox) and O of the row pass into the head, or the kept
// result's P and O; P's side of the row properties, the kept one or that recorded.
template <typename T>
void storeAttention(HeadResult& head, const HeadResult* kept, Matrix<T>&& exact, Matrix<T>&& approx,
                    const Matrix<T>& outputExact, bool keepExact, bool keepApprox,
                    std::shared_ptr<const ExactRowProperties> recorded)
{
    head.exactRowProperties =
        kept && kept->exactRowProperties ? kept->exactRowProperties : std::move(recorded);
    if (kept) {
        head.attentionExact = kept->attentionExact;
        head.exactPyramid = kept->exactPyramid;
        head.outputExact = kept->outputExact;
    } else {
        if (keepExact)
            head.attentionExact = ResultMatrix(std::move(exact));
        head.outputExact = outputExact.template cast<double>();
    }
    if (keepApprox)
        head.attentionApprox = ResultMatrix(std::move(approx));
}

// The head's metrics from the row pass's accumulators (added up in block order) and its outputs,
// also added to allHeads.
void addHeadMetrics(HeadResult& head, const std::vector<MetricsAccumulator>& accumulators,
                    MetricsAccumulator& allHeads)
{
    MetricsAccumulator metrics;
    for (const MetricsAccumulator& part : accumulators)
        metrics.add(part);
    metrics.addOutputs(head.outputExact, head.outputApprox);
    metrics.addNonPositiveRows(qint64(head.nonPositiveRows.size()));
    head.metrics = metrics.metrics();
    allHeads.add(metrics);
}

// m resized to L x L (its entries not set), in huge pages where the system has them.
template <typename Scalar>
void allocateSquare(Matrix<Scalar>& m, Eigen::Index length)
{
    m.resize(length, length);
    adviseHugePages(m.data(), std::size_t(m.size()) * sizeof(Scalar));
}

// comparison: the second checkpoint's head, whose exact attention is the approximate side
// (CheckpointAttention), or null.
template <typename T>
void computeHead(const ExperimentSpec& spec, const HeadTensors& tensors,
                 const HeadTensors* comparison, int headIndex, const ComputeOptions& options,
                 double scale, const HeadResult* kept, ExperimentResult& result,
                 MetricsAccumulator& allHeads)
{
    const Matrix<T> q = tensors.q.cast<T>();
    const Matrix<T> k = tensors.k.cast<T>();
    const Matrix<T> v = tensors.v.cast<T>();
    const Eigen::Index length = q.rows();
    HeadResult& head = result.heads[headIndex];

    const std::unique_ptr<Approximation<T>> approximation =
        approximateHead(spec, q, k, v, comparison, scale, headIndex, head, &result.secondsApprox);
    const int steps = 2 * int(result.heads.size());
    if (options.progress)
        options.progress(2 * headIndex + 1, steps);
    throwIfCancelled();

    QElapsedTimer timer;
    timer.start();
    const bool keepKernels = options.matrices && options.kernels;
    const bool pyramids = options.matrices && options.pyramids;
    // P and log Z: taken over from the kept result, or formed here.
    const Matrix<T>* keptP = kept ? kept->attentionExact.template as<T>() : nullptr;
    Matrix<T> exact, approx;
    if (!keptP && options.matrices)
        allocateSquare(exact, length);
    if (approximation && options.matrices)
        allocateSquare(approx, length);
    head.logNormaliser = keptP ? kept->logNormaliser : VectorD(length);
    const bool approxKernel =
        approximation && (comparison || methodInfo(spec.approximation.kind).hasKernel);
    if (keepKernels)
        allocateSquare(head.kernelExact, length);
    if (keepKernels && approxKernel)
        allocateSquare(head.kernelApprox, length);
    HeadPyramids built;
    if (pyramids && !keptP)
        built.exact.emplace(length, length);
    if (pyramids && approximation) {
        built.approx.emplace(length, length);
        built.error.emplace(length, length);
    }
    std::unique_ptr<ApproximateRows<T>> approxRows;
    if (approximation)
        approxRows = approximation->rows(q, k, spec.causal);
    Matrix<T> outputExact(keptP ? 0 : length, v.cols());
    // P's side of the row properties: the kept result's, or recorded here for the next one.
    const ExactRowProperties* knownRows =
        keptP && kept->exactRowProperties ? kept->exactRowProperties.get() : nullptr;
    std::shared_ptr<ExactRowProperties> recordedRows;
    if (!knownRows && approxRows && options.matrices)
        recordedRows = std::make_shared<ExactRowProperties>(length);
    // One accumulator per row block, added up in block order: the sums, and so the metrics, do
    // not depend on which thread took which block.
    std::vector<MetricsAccumulator> accumulators((length + kRowBlock - 1) / kRowBlock);
    // The blocks stop when compute()'s CancellationScope says so (options.cancelled).
    forEachRowBlock(length, kRowBlock, [&](Eigen::Index begin, Eigen::Index end) {
        const Eigen::Index rows = end - begin;
        // Rows of P and P^ go straight into the kept matrices, or into scratch blocks.
        Matrix<T> exactScratch, approxScratch;
        const T* exactRows = nullptr;
        if (keptP) {
            exactRows = keptP->data() + begin * length;
        } else {
            if (exact.size() == 0)
                exactScratch.resize(rows, length);
            T* target = exact.size() ? exact.data() + begin * length : exactScratch.data();
            Eigen::Map<Matrix<T>> p(target, rows, length);
            exactAttentionRows<T>(q, k, scale, spec.causal, begin, p,
                                  head.logNormaliser.data() + begin);
            outputExact.middleRows(begin, rows).noalias() = p * v;
            if (built.exact)
                built.exact->addRows(begin, target, rows);
            exactRows = target;
        }
        const Eigen::Map<const Matrix<T>> p(exactRows, rows, length);
        MatrixD kernel;  // A, for the matrices and the kernel MSE
        if (keepKernels || approxRows)
            exactKernelRows<T>(p, head.logNormaliser.data() + begin, kernel);
        if (keepKernels)
            head.kernelExact.middleRows(begin, rows) = kernel;
        if (!approxRows)
            return;
        if (approx.size() == 0)
            approxScratch.resize(rows, length);
        T* approxTarget = approx.size() ? approx.data() + begin * length : approxScratch.data();
        Eigen::Map<Matrix<T>> pApprox(approxTarget, rows, length);
        MatrixD kernelApprox;
        approxRows->rows(begin, pApprox, approxKernel ? &kernelApprox : nullptr);
        accumulators[begin / kRowBlock].addAttentionRows<T>(begin, spec.causal, p, pApprox, &kernel,
                                                            approxKernel ? &kernelApprox : nullptr,
                                                            {knownRows, recordedRows.get()});
        if (keepKernels && approxKernel)
            head.kernelApprox.middleRows(begin, rows) = kernelApprox;
        if (built.approx) {
            built.approx->addRows(begin, approxTarget, rows);
            const Matrix<T> error = pApprox - p;
            built.error->addRows(begin, error.data(), rows);
        }
    });
    storeAttention(head, keptP ? kept : nullptr, std::move(exact), std::move(approx), outputExact,
                   options.matrices, options.matrices && approximation, std::move(recordedRows));
    built.storeInto(head);
    addHeadMetrics(head, accumulators, allHeads);

    throwIfCancelled();
    const FeatureMap<T>* phi = approximation ? approximation->featureMap() : nullptr;
    if (phi && options.features) {
        head.featuresQ = trueScaleFeatures(*phi, q, FeatureSide::Query);
        head.featuresK = trueScaleFeatures(*phi, k, FeatureSide::Key);
    }
    result.secondsExact += timer.nsecsElapsed() * 1e-9;
    if (options.progress)
        options.progress(2 * headIndex + 2, steps);
}

// Entries of m beyond the range of T (or not finite).
template <typename T>
qint64 countBeyondRange(const MatrixD& m)
{
    const double largest = double(std::numeric_limits<T>::max());
    return qint64((m.array().abs() > largest || !m.array().isFinite()).count());
}

// "<count> <noun> of <values> exceed(s) the <precision> range (written as inf<aside>).
// <consequence>", the noun and verb in the count's number, for head `head`.
ResultWarning beyondRangeWarning(const QString& code, qint64 count, const QString& noun,
                                 const QString& nouns, const QString& values,
                                 const QString& precision, const QString& aside,
                                 const QString& consequence, int head)
{
    return {code,
            QStringLiteral("%1 of %2 %3 the %4 range (written as inf%5). %6")
                .arg(countOf(count, noun, nouns), values,
                     inNumber(count, QStringLiteral("exceeds"), QStringLiteral("exceed")),
                     precision, aside, consequence),
            head};
}

// Head h's warnings: non-positive denominators, kernel entries and features beyond the
// precision's range.
template <typename T>
void addHeadWarnings(ExperimentResult& result, std::size_t h)
{
    const HeadResult& head = result.heads[h];
    const QString precision = precisionName(result.spec.precision);
    const QString where =
        result.heads.size() > 1 ? QStringLiteral(" in head %1").arg(h) : QString();
    const qint64 nonPositive = qint64(head.nonPositiveRows.size());
    if (nonPositive > 0) {
        QStringList first;
        for (qint64 i = 0; i < std::min<qint64>(5, nonPositive); ++i)
            first.append(QString::number(head.nonPositiveRows[std::size_t(i)]));
        result.warnings.push_back(
            {QStringLiteral("nonpositive-denominator"),
             QStringLiteral("%1 of %2 rows%3 %4 a non-positive denominator phi(q_i).z (%5 %6%7): "
                            "%8 Their outputs are numerator / denominator, or 0 where the "
                            "denominator is 0.")
                 .arg(nonPositive)
                 .arg(result.labels.size())
                 .arg(where, inNumber(nonPositive, QStringLiteral("has"), QStringLiteral("have")),
                      inNumber(nonPositive, QStringLiteral("row"), QStringLiteral("rows")),
                      first.join(QStringLiteral(", ")),
                      nonPositive > 5 ? QStringLiteral(", ...") : QString(),
                      methodInfo(result.spec.approximation.kind).canBeNegative
                          ? QStringLiteral("these features can be negative, and their estimate "
                                           "of the softmax normaliser is not positive there.")
                          : QStringLiteral("every feature product of these rows underflowed to 0 "
                                           "against the keys' common scale.")),
             int(h)});
    }
    // The exact method has no A^ and so no metrics of A: count the kept A itself.
    const qint64 kernelOverflow = result.spec.exactMethod ? countBeyondRange<T>(head.kernelExact)
                                                          : head.metrics.kernelOverflow;
    if (kernelOverflow > 0)
        result.warnings.push_back(beyondRangeWarning(
            QStringLiteral("overflow"), kernelOverflow, QStringLiteral("entry"),
            QStringLiteral("entries"), QStringLiteral("the kernel matrices A or A^") + where,
            precision, QStringLiteral("; the kernel MSE is not given"),
            QStringLiteral("P, P^ and the outputs are not affected: they are computed with "
                           "maxima subtracted."),
            int(h)));
    const qint64 featureOverflow =
        countBeyondRange<T>(head.featuresQ) + countBeyondRange<T>(head.featuresK);
    if (featureOverflow > 0)
        result.warnings.push_back(beyondRangeWarning(
            QStringLiteral("feature-overflow"), featureOverflow, QStringLiteral("feature value"),
            QStringLiteral("feature values"), QStringLiteral("phi(q_i), phi(k_j)") + where,
            precision, QString(),
            QStringLiteral("Attention is not affected: it is computed with stabilised "
                           "exponentials."),
            int(h)));
}

template <typename T>
void addWarnings(ExperimentResult& result)
{
    const Eigen::Index length = result.labels.size();
    for (std::size_t h = 0; h < result.heads.size(); ++h)
        addHeadWarnings<T>(result, h);
    // A second checkpoint in the approximation's place: the method's own notes do not apply.
    const bool approximating =
        !result.spec.exactMethod && result.spec.input.comparisonModelPath.isEmpty();
    const MethodInfo& method = methodInfo(result.spec.approximation.kind);
    if (approximating && method.takes(windowParameter())) {
        const SlidingWindow window{Eigen::Index(result.spec.approximation.value(windowParameter())),
                                   result.spec.causal, length};
        if (window.coversEveryPair())
            result.warnings.push_back(
                {QStringLiteral("window-covers-every-pair"),
                 QStringLiteral("The window w = %1 holds every key of all %2 queries (%3): %4 is "
                                "exact here, and its error is float rounding. Set w below %5 to "
                                "see it approximate.")
                     .arg(window.width)
                     .arg(length)
                     .arg(result.spec.causal ? QStringLiteral("causal, w >= L")
                                             : QStringLiteral("centred, w >= 2L - 1"),
                          method.title)
                     .arg(result.spec.causal ? length : 2 * length - 1)});
    }
    const QString sizeNote = !approximating
                                 ? QString()
                                 : sizePastLengthNote(result.spec.approximation.kind,
                                                      {result.spec.approximation.features}, length);
    if (!sizeNote.isEmpty())
        result.warnings.push_back({QStringLiteral("size-past-length"), sizeNote});
    if (approximating && result.spec.causal) {
        const QString note = method.causalNote;
        if (!note.isEmpty())
            result.warnings.push_back({QStringLiteral("causal-form"), note});
    }
    if (std::isnan(result.metrics.relFrobeniusOutput)) {
        result.warnings.push_back(
            {QStringLiteral("output-zero"),
             QStringLiteral("The relative error of the output, |O^ - O|_F / |O|_F, is undefined: "
                            "the exact output O is 0 (every value v_j is 0).")});
    }
    if (!result.spec.exactMethod && std::isnan(result.metrics.meanKl)) {
        result.warnings.push_back(
            {QStringLiteral("kl-undefined"),
             QStringLiteral("The mean KL divergence KL(P || P^) is undefined: P^ has entries <= 0 "
                            "where P is positive.")});
    }
    const RowProperties& properties = result.metrics.properties;
    if (!result.spec.exactMethod && std::isnan(properties.entropyApprox)) {
        result.warnings.push_back(
            {QStringLiteral("entropy-undefined"),
             QStringLiteral("The entropy of P^'s rows is undefined: P^ has negative or non-finite "
                            "entries.")});
    }
    if (!result.spec.exactMethod && std::isnan(properties.monotonicity)) {
        result.warnings.push_back(
            {QStringLiteral("monotonicity-undefined"),
             QStringLiteral("The monotonicity in q.k is undefined: no row sees 3 keys or more "
                            "with weights that differ, so no rank correlation can be taken.")});
    }
}

template <typename T>
ExperimentResult computeIn(const ExperimentSpec& spec, const AttentionInput& input,
                           const ComputeOptions& options)
{
    ExperimentResult result;
    result.spec = spec;
    result.scale = spec.resolvedScale(input.headDim());
    result.labels = input.labels;
    result.gridRows = input.gridRows;
    result.model = input.model;
    result.gridCols = input.gridCols;
    result.heads.resize(input.heads.size());
    MetricsAccumulator allHeads;
    const ExperimentResult* kept = options.sameInputAs.get();
    result.exactKept = kept && exactSideFits(*kept, spec, input, result.scale, options);
    for (std::size_t h = 0; h < input.heads.size(); ++h) {
        throwIfCancelled();
        computeHead<T>(
            spec, input.heads[h], input.comparison.empty() ? nullptr : &input.comparison[h], int(h),
            options, result.scale, result.exactKept ? &kept->heads[h] : nullptr, result, allHeads);
    }
    result.metrics = allHeads.metrics();
    for (const QString& note : input.notes)
        result.warnings.push_back({QStringLiteral("input"), note});
    addWarnings<T>(result);
    return result;
}

}  // namespace

void requireComputable(const ExperimentSpec& spec, const AttentionInput& input)
{
    validate(spec, !input.comparison.empty());
    requireRepresentable(spec, input);
    // Maps fitted to a model serve that model only (another one of the same d would take them).
    const ApproximationSpec& approximation = spec.approximation;
    if (!spec.exactMethod && input.comparison.empty() && input.model &&
        methodInfo(approximation.kind).needsFittedMaps && approximation.fittedMaps)
        requireMapsOfModel(*approximation.fittedMaps, modelFolder(spec.input.modelPath),
                           input.model->layers, input.model->heads, input.model->headDim);
}

int engineThreadsFor(const ExperimentSpec& spec, Eigen::Index length, Eigen::Index d,
                     Eigen::Index features, Eigen::Index heads)
{
    if (spec.threads > 0)
        return spec.threads;
    const double work = double(length) * double(length) * double(d + features) * double(heads);
    return work < double(1 << 28) ? 1 : hardwareThreads();
}

ExperimentResult compute(const ExperimentSpec& spec, const AttentionInput& input,
                         const ComputeOptions& options)
{
    requireComputable(spec, input);
    const bool features = !spec.exactMethod && input.comparison.empty() &&
                          methodInfo(spec.approximation.kind).hasFeatures();
    const Eigen::Index featureCount =
        features ? featureCountOf(spec.approximation, int(input.headDim())) : 0;
    requireMemory(spec, input, options, featureCount);
    if (options.announce) {
        const QString notice =
            largeRunNotice(expectedComputeCost(spec, input, options), spec, input);
        if (!notice.isEmpty())
            options.announce(notice);
    }
    const auto featuresRun = Eigen::Index(featuresUsed(spec.approximation, input.length()));
    const CancellationScope cancellation(options.cancelled);
    setEngineThreads(engineThreadsFor(spec, input.length(), input.headDim(),
                                      spec.exactMethod ? 0 : std::max(featureCount, featuresRun),
                                      Eigen::Index(input.heads.size())));
    return spec.precision == Precision::Float ? computeIn<float>(spec, input, options)
                                              : computeIn<double>(spec, input, options);
}

CostShape costShapeOf(const ExperimentSpec& spec, const AttentionInput& input)
{
    CostShape shape;
    shape.length = double(input.length());
    shape.d = double(input.headDim());
    shape.dv = double(input.valueDim());
    shape.m = spec.approximation.features;
    shape.window = spec.approximation.value(windowParameter());
    shape.causal = spec.causal;
    shape.threads = 1;
    return shape;
}

ComputeCost expectedComputeCost(const ExperimentSpec& spec, const AttentionInput& input,
                                const ComputeOptions& options)
{
    const CostShape shape = costShapeOf(spec, input);
    const double heads = double(input.heads.size());
    const double length = shape.length, d = shape.d, dv = shape.dv, m = shape.m;
    const double scalarBytes = spec.precision == Precision::Float ? 4.0 : 8.0;
    const MethodInfo& info =
        methodInfo(spec.exactMethod ? Method::ExactStreaming : spec.approximation.kind);
    const double features =
        info.hasFeatures() ? double(featureCountOf(spec.approximation, int(d))) : 0.0;
    const bool drawsW = !spec.exactMethod && info.drawsProjection;

    double drawFlops = 0, normalDraws = 0;
    if (drawsW) {
        if (spec.approximation.projection == ProjectionKind::Iid) {
            normalDraws = m * d;
        } else {
            const double blocks = std::ceil(m / d);
            drawFlops = blocks * 2 * d * d * d;
            normalDraws = blocks * d * d + (spec.approximation.rowNorm == RowNorm::Chi ? m * d : 0);
        }
    }
    double productFlops = info.flops(shape) + 2 * length * length * (d + dv);
    if (!spec.exactMethod)
        productFlops += features > 0 ? 2 * length * length * features : info.flops(shape);
    if (options.features && drawsW)
        productFlops += 4 * length * m * d;

    const double keptPerHead = keptMatrixBytesPerHead(spec, input.length(), options) +
                               (drawsW ? m * d * 8 : 0.0) +
                               (options.features ? 2 * length * features * 8 : 0.0);
    const double workingMemory =
        (drawsW ? m * d * (8 + scalarBytes) : 0.0) + 2 * length * features * scalarBytes +
        (spec.exactMethod ? 0.0 : info.workingSetFloats(shape) * scalarBytes);

    ComputeCost cost;
    cost.bytes = heads * keptPerHead + workingMemory;
    cost.seconds = heads * (drawFlops / kLoopFlopsPerSecond + normalDraws * kSecondsPerNormalDraw +
                            productFlops / kProductFlopsPerSecond) +
                   cost.bytes * kSecondsPerByteHeld;
    return cost;
}

QString expectedRunNotice(const ComputeCost& cost, const QString& what)
{
    if (cost.seconds <= kAnnouncedRunSeconds && cost.bytes <= kAnnouncedRunBytes)
        return QString();
    const QString seconds = cost.seconds < 100 ? QString::number(cost.seconds, 'g', 2)
                                               : QString::number(std::round(cost.seconds), 'f', 0);
    const QString size =
        cost.bytes < double(1 << 30)
            ? QStringLiteral("%1 MiB").arg(cost.bytes / double(1 << 20), 0, 'f', 0)
            : QStringLiteral("%1 GiB").arg(cost.bytes / double(1 << 30), 0, 'f', 1);
    return QStringLiteral("expected to take about %1 s and %2 (%3)").arg(seconds, size, what);
}

QString largeRunNotice(const ComputeCost& cost, const ExperimentSpec& spec,
                       const AttentionInput& input)
{
    QString shape = QStringLiteral("L = %1").arg(input.length());
    const MethodInfo& info = methodInfo(spec.approximation.kind);
    if (!spec.exactMethod && info.takes(featuresParameter()))
        shape = QStringLiteral("m = %1%2 for %3")
                    .arg(spec.approximation.features)
                    .arg(info.hasFeatures() ? QStringLiteral(" features") : QString(), shape);
    if (input.heads.size() > 1)
        shape += QStringLiteral(", %1 heads").arg(input.heads.size());
    return expectedRunNotice(cost, shape);
}

}  // namespace attnlab

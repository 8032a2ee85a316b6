#include "experiment.h"

#include "cancellation.h"
#include "errors.h"
#include "attention/approximation.h"
#include "attention/band_products.h"
#include "attention/exact_attention.h"
#include "attention/linear_attention.h"
#include "inputs/model_input.h"
#include "io/json_fields.h"
#include "parallel.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>

#include <atomic>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// Rows of P and P^ formed at a time in the row pass.
constexpr Eigen::Index kRowBlock = 32;

void require(bool condition, const QString& message)
{
    if (!condition)
        throw InputError(message);
}

void validate(const ExperimentSpec& spec)
{
    const ApproximationSpec& approximation = spec.approximation;
    if (!spec.exactMethod) {
        const MethodInfo& info = methodInfo(approximation.kind);
        for (const MethodParameter* parameter : info.parameters) {
            const double value = approximation.value(*parameter);
            const bool integral = parameter->kind != MethodParameter::Kind::Real;
            require(std::isfinite(value) && value >= parameter->minimum &&
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
    require(bound <= limit,
            QStringLiteral("the queries and keys are too large for %1 arithmetic: max(s, 1) |x|^2 "
                           "reaches %2 for the longest query or key x, above the %3 that keeps "
                           "every product finite. Lower the norm multiplier (--norm-multiplier), "
                           "the scale (--scale) or the norm of the input (--norm)%4.")
                .arg(precision)
                .arg(bound, 0, 'g', 3)
                .arg(limit, 0, 'g', 3)
                .arg(spec.precision == Precision::Float
                         ? QStringLiteral(" (double precision allows up to %1)")
                               .arg(largestLogitBound(Precision::Double), 0, 'g', 3)
                         : QString()));
    require(largestValue <= limit,
            QStringLiteral("the values are too large for %1 arithmetic: |v| reaches %2, above %3")
                .arg(precision)
                .arg(largestValue, 0, 'g', 3)
                .arg(limit, 0, 'g', 3));
}

QString countOf(qint64 count, const QString& singular, const QString& plural)
{
    return QStringLiteral("%1 %2").arg(count).arg(count == 1 ? singular : plural);
}

// The memory a request keeps or needs at once, checked before any of it is allocated.
void requireMemory(const ExperimentSpec& spec, const AttentionInput& input,
                   const ComputeOptions& options, Eigen::Index features)
{
    const double length = double(input.length());
    const double heads = double(input.heads.size());
    const double scalarBytes = spec.precision == Precision::Float ? 4.0 : 8.0;
    if (options.matrices) {
        // P and P^ in the engine's precision, A and A^ in double, and a pyramid (a third of a
        // float matrix) for each of P, P^ and P^ - P.
        const int attention = spec.exactMethod ? 1 : 2;
        const int matrices = attention * (options.kernels ? 2 : 1);
        const double bytesPerEntry = attention * scalarBytes + (options.kernels ? attention * 8.0 : 0.0) +
                                     (options.pyramids ? (2 * attention - 1) * 4.0 / 3.0 : 0.0);
        options.budget.require(
            heads * length * length * bytesPerEntry,
            QStringLiteral("Keeping the L x L matrices (%1 x %2 matrices of %3 x %3)")
                .arg(countOf(qint64(heads), QStringLiteral("head"), QStringLiteral("heads")))
                .arg(matrices)
                .arg(qint64(length)),
            QStringLiteral("Leave out the matrices (--no-matrices) to get the outputs and every "
                           "metric in linear memory, or raise the memory budget "
                           "(--memory-budget)."));
    }
    if (spec.exactMethod)
        return;
    const MethodInfo& info = methodInfo(spec.approximation.kind);
    if (features > 0) {
        // Keys mapped once for the rows of P^, plus the features kept for export.
        const double keptFeatures = options.features ? heads * 2.0 * length * features * 8.0 : 0.0;
        options.budget.require(
            length * features * scalarBytes + keptFeatures,
            QStringLiteral("The features phi(Q), phi(K) (%1 x %2)").arg(qint64(length)).arg(features),
            QStringLiteral("Use fewer features or positions, or raise the memory budget "
                           "(--memory-budget)."));
        return;
    }
    // A method without features: its own working memory (the cost model's), twice over (the
    // output and the rows of P^ each build it).
    const double working = 2 * info.workingSetFloats(costShapeOf(spec, input)) * scalarBytes;
    options.budget.require(
        working, QStringLiteral("The working memory of %1 (L = %2)").arg(info.name).arg(qint64(length)),
        QStringLiteral("Use a smaller m or window, fewer positions, or raise the memory budget "
                       "(--memory-budget)."));
}

// Whether previous, computed from the same input, holds the exact side this request needs: P
// and log Z for every head at the same scale, mask and precision (and P's pyramid when
// pyramids are asked for).
bool exactSideFits(const ExperimentResult& previous, const ExperimentSpec& spec,
                   const AttentionInput& input, double scale, const ComputeOptions& options)
{
    if (previous.spec.precision != spec.precision || previous.spec.causal != spec.causal ||
        previous.scale != scale || previous.heads.size() != input.heads.size() ||
        !options.matrices)
        return false;
    return std::all_of(previous.heads.begin(), previous.heads.end(), [&](const HeadResult& head) {
        return head.attentionExact.rows() == input.length() &&
               head.logNormaliser.size() == input.length() &&
               (!options.pyramids || head.exactPyramid);
    });
}

template <typename T>
void computeHead(const ExperimentSpec& spec, const HeadTensors& tensors, int headIndex,
                 const ComputeOptions& options, double scale, const HeadResult* kept,
                 ExperimentResult& result, MetricsAccumulator& allHeads)
{
    const Matrix<T> q = tensors.q.cast<T>();
    const Matrix<T> k = tensors.k.cast<T>();
    const Matrix<T> v = tensors.v.cast<T>();
    const Eigen::Index length = q.rows();
    HeadResult& head = result.heads[headIndex];

    QElapsedTimer timer;
    std::unique_ptr<Approximation<T>> approximation;
    if (spec.exactMethod) {
        timer.start();
        head.outputApprox = streamingAttention<T>(q, k, v, scale, spec.causal).template cast<double>();
    } else {
        // Made (W, E, F drawn, as a trained model holds them) before the timing, as `bench`
        // times it; fitting to the data (FAVOR++'s A, Nystrom's landmarks) is timed.
        approximation =
            makeApproximation<T>(spec.approximation, int(q.cols()), length, scale, headIndex);
        throwIfCancelled();
        timer.start();
        approximation->fit(q, k, spec.causal);
        ApproximateOutput<T> approximate =
            approximation->output(q, k, v, spec.causal, spec.chunkSize);
        head.outputApprox = approximate.output.template cast<double>();
        head.nonPositiveRows = std::move(approximate.nonPositiveRows);
    }
    result.secondsApprox += timer.nsecsElapsed() * 1e-9;
    if (approximation) {
        head.projection = approximation->projection();
        head.drawn = approximation->drawnMatrices();
    }
    const int steps = 2 * int(result.heads.size());
    if (options.progress)
        options.progress(2 * headIndex + 1, steps);
    throwIfCancelled();

    timer.restart();
    const bool keepKernels = options.matrices && options.kernels;
    const bool pyramids = options.matrices && options.pyramids;
    // P and log Z: taken over from the kept result, or formed here.
    const Matrix<T>* keptP = kept ? kept->attentionExact.template as<T>() : nullptr;
    Matrix<T> exact;
    if (!keptP && options.matrices) {
        exact.resize(length, length);
        adviseHugePages(exact.data(), std::size_t(exact.size()) * sizeof(T));
    }
    Matrix<T> approx;
    if (approximation && options.matrices) {
        approx.resize(length, length);
        adviseHugePages(approx.data(), std::size_t(approx.size()) * sizeof(T));
    }
    head.logNormaliser = keptP ? kept->logNormaliser : VectorD(length);
    const bool approxKernel = approximation && methodInfo(spec.approximation.kind).hasKernel;
    if (keepKernels) {
        head.kernelExact.resize(length, length);
        adviseHugePages(head.kernelExact.data(), std::size_t(head.kernelExact.size()) * 8);
        if (approxKernel) {
            head.kernelApprox.resize(length, length);
            adviseHugePages(head.kernelApprox.data(), std::size_t(head.kernelApprox.size()) * 8);
        }
    }
    std::optional<DetailPyramid> exactPyramid, approxPyramid, errorPyramid;
    if (pyramids && !keptP)
        exactPyramid.emplace(length, length);
    if (pyramids && approximation) {
        approxPyramid.emplace(length, length);
        errorPyramid.emplace(length, length);
    }
    std::unique_ptr<ApproximateRows<T>> approxRows;
    if (approximation)
        approxRows = approximation->rows(q, k, spec.causal);
    Matrix<T> outputExact(keptP ? 0 : length, v.cols());
    // One accumulator per row block, added up in block order: the sums, and so the metrics, do
    // not depend on which thread took which block.
    std::vector<MetricsAccumulator> accumulators((length + kRowBlock - 1) / kRowBlock);
    std::atomic<bool> stopped = false;
    forEachRowBlock(length, kRowBlock, [&](Eigen::Index begin, Eigen::Index end) {
        if (stopped || (options.cancelled && options.cancelled())) {
            stopped = true;
            return;
        }
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
            if (exactPyramid)
                exactPyramid->addRows(begin, target, rows);
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
        accumulators[begin / kRowBlock].addAttentionRows<T>(
            begin, spec.causal, p, pApprox, &kernel, approxKernel ? &kernelApprox : nullptr);
        if (keepKernels && approxKernel)
            head.kernelApprox.middleRows(begin, rows) = kernelApprox;
        if (approxPyramid) {
            approxPyramid->addRows(begin, approxTarget, rows);
            const Matrix<T> error = pApprox - p;
            errorPyramid->addRows(begin, error.data(), rows);
        }
    });
    if (stopped)
        throw Cancelled();
    if (keptP) {
        head.attentionExact = kept->attentionExact;
        head.exactPyramid = kept->exactPyramid;
        head.outputExact = kept->outputExact;
    } else {
        if (options.matrices)
            head.attentionExact = ResultMatrix(std::move(exact));
        head.outputExact = outputExact.template cast<double>();
    }
    if (options.matrices && approximation)
        head.attentionApprox = ResultMatrix(std::move(approx));
    for (auto [built, shared] : {std::pair(&exactPyramid, &head.exactPyramid),
                                 std::pair(&approxPyramid, &head.approxPyramid),
                                 std::pair(&errorPyramid, &head.errorPyramid)}) {
        if (*built) {
            (*built)->finish();
            *shared = std::make_shared<const DetailPyramid>(std::move(**built));
        }
    }

    MetricsAccumulator metrics;
    for (const MetricsAccumulator& part : accumulators)
        metrics.add(part);
    metrics.addOutputs(head.outputExact, head.outputApprox);
    metrics.addNonPositiveRows(qint64(head.nonPositiveRows.size()));
    head.metrics = metrics.metrics();
    allHeads.add(metrics);

    throwIfCancelled();
    const FeatureMap<T>* phi = approximation ? approximation->featureMap() : nullptr;
    if (phi && options.features) {
        head.featuresQ = trueScaleFeatures(*phi, q);
        head.featuresK = trueScaleFeatures(*phi, k);
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

template <typename T>
void addWarnings(ExperimentResult& result)
{
    const QString precision = precisionName(result.spec.precision);
    const Eigen::Index length = result.labels.size();
    for (std::size_t h = 0; h < result.heads.size(); ++h) {
        const HeadResult& head = result.heads[h];
        const QString where = result.heads.size() > 1 ? QStringLiteral(" in head %1").arg(h)
                                                      : QString();
        if (!head.nonPositiveRows.empty()) {
            QStringList first;
            for (std::size_t i = 0; i < std::min<std::size_t>(5, head.nonPositiveRows.size()); ++i)
                first.append(QString::number(head.nonPositiveRows[i]));
            result.warnings.push_back(
                {QStringLiteral("nonpositive-denominator"),
                 QStringLiteral("%1 of %2 rows%3 have a non-positive denominator phi(q_i).z "
                                "(rows %4%5): %6 Their outputs are numerator / denominator, or 0 "
                                "where the denominator is 0.")
                     .arg(head.nonPositiveRows.size())
                     .arg(length)
                     .arg(where, first.join(QStringLiteral(", ")),
                          head.nonPositiveRows.size() > 5 ? QStringLiteral(", ...") : QString(),
                          methodInfo(result.spec.approximation.kind).canBeNegative
                              ? QStringLiteral("these features can be negative, and their "
                                               "estimate of the softmax normaliser is not "
                                               "positive there.")
                              : QStringLiteral("every feature product of these rows underflowed "
                                               "to 0 against the keys' common scale."))});
        }
        // The exact method has no A^ and so no metrics of A: count the kept A itself.
        const qint64 kernelOverflow = result.spec.exactMethod
                                          ? countBeyondRange<T>(head.kernelExact)
                                          : head.metrics.kernelOverflow;
        if (kernelOverflow > 0) {
            result.warnings.push_back(
                {QStringLiteral("overflow"),
                 QStringLiteral("%1 entries of the kernel matrices A or A^%2 exceed the %3 range "
                                "(they are written as inf). P, P^ and the outputs are not affected: "
                                "they are computed with maxima subtracted.")
                     .arg(kernelOverflow)
                     .arg(where, precision)});
        }
        const qint64 featureOverflow =
            countBeyondRange<T>(head.featuresQ) + countBeyondRange<T>(head.featuresK);
        if (featureOverflow > 0) {
            result.warnings.push_back(
                {QStringLiteral("feature-overflow"),
                 QStringLiteral("%1 feature values phi(q_i), phi(k_j)%2 exceed the %3 range (they "
                                "are written as inf). Attention is not affected: it is computed "
                                "with stabilised exponentials.")
                     .arg(featureOverflow)
                     .arg(where, precision)});
        }
    }
    const MethodInfo& method = methodInfo(result.spec.approximation.kind);
    if (!result.spec.exactMethod && method.takes(windowParameter())) {
        const SlidingWindow window{
            Eigen::Index(result.spec.approximation.value(windowParameter())), result.spec.causal,
            length};
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
    const QString sizeNote =
        result.spec.exactMethod
            ? QString()
            : sizePastLengthNote(result.spec.approximation.kind,
                                 {result.spec.approximation.features}, length);
    if (!sizeNote.isEmpty())
        result.warnings.push_back({QStringLiteral("size-past-length"), sizeNote});
    if (!result.spec.exactMethod && result.spec.causal) {
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
    result.exactKept =
        kept && exactSideFits(*kept, spec, input, result.scale, options);
    for (std::size_t h = 0; h < input.heads.size(); ++h) {
        throwIfCancelled();
        computeHead<T>(spec, input.heads[h], int(h), options, result.scale,
                       result.exactKept ? &kept->heads[h] : nullptr, result, allHeads);
    }
    result.metrics = allHeads.metrics();
    for (const QString& note : input.notes)
        result.warnings.push_back({QStringLiteral("input"), note});
    addWarnings<T>(result);
    return result;
}

// A parameter's value as a session writes it: a switch as true or false, a choice by its name,
// a number otherwise.
QJsonValue parameterJson(const MethodParameter& parameter, double value)
{
    switch (parameter.kind) {
        case MethodParameter::Kind::Switch: return value != 0;
        case MethodParameter::Kind::Choice: return parameter.format(value);
        case MethodParameter::Kind::Integer:
        case MethodParameter::Kind::Real: return value;
    }
    return value;
}

// Reads the parameter's field of json (when present) into spec, or throws InputError naming it.
void readParameter(const QJsonObject& json, const MethodParameter& parameter,
                   ApproximationSpec* spec)
{
    const QJsonValue value = json.value(parameter.field);
    if (value.isUndefined())
        return;
    double parsed = 0;
    bool ok = false;
    switch (parameter.kind) {
        case MethodParameter::Kind::Switch:
            ok = value.isBool();
            parsed = value.toBool() ? 1 : 0;
            break;
        case MethodParameter::Kind::Choice:
            ok = value.isString() && parameter.parse(value.toString(), &parsed);
            break;
        case MethodParameter::Kind::Integer:
        case MethodParameter::Kind::Real:
            ok = value.isDouble() &&
                 parameter.parse(QString::number(value.toDouble(), 'g', 17), &parsed);
            break;
    }
    require(ok, QStringLiteral("%1: expected %2, got %3")
                    .arg(parameter.field,
                         parameter.kind == MethodParameter::Kind::Switch
                             ? QStringLiteral("true or false")
                         : parameter.kind == MethodParameter::Kind::Choice
                             ? parameter.choices.join(QStringLiteral(" or "))
                             : QStringLiteral("a number from %1 to %2")
                                   .arg(parameter.minimum)
                                   .arg(parameter.maximum),
                         QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(
                                               QJsonDocument::Compact))
                             .mid(1)
                             .chopped(1)));
    spec->setValue(parameter, parsed);
}

QJsonValue optionalNumber(const std::optional<double>& value)
{
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

}  // namespace

QString ExperimentSpec::methodName() const
{
    return exactMethod ? QStringLiteral("exact") : methodInfo(approximation.kind).name;
}

bool ExperimentSpec::setMethod(const QString& name)
{
    if (name == QLatin1String("exact")) {
        exactMethod = true;
        return true;
    }
    if (!parseApproximation(name, &approximation.kind))
        return false;
    exactMethod = false;
    return true;
}

double ExperimentSpec::resolvedScale(Eigen::Index d) const
{
    return scale.value_or(1.0 / std::sqrt(double(d)));
}

QJsonObject ExperimentSpec::toJson() const
{
    QJsonObject in;
    in[QLatin1String("kind")] = inputKindName(input.kind);
    in[QLatin1String("text")] = input.text;
    in[QLatin1String("tokens")] = tokenModeName(input.tokenMode);
    in[QLatin1String("positional_encoding")] = input.positionalEncoding;
    in[QLatin1String("model")] = input.modelPath;
    in[QLatin1String("layer")] = input.layer;
    in[QLatin1String("keep_last")] = input.keepLastTokens;
    in[QLatin1String("image")] = input.imagePath;
    in[QLatin1String("patch")] = input.patchSize;
    in[QLatin1String("image_size")] = input.imageSize;
    in[QLatin1String("length")] = input.length;
    in[QLatin1String("row_norm")] = optionalNumber(input.rowNorm);
    in[QLatin1String("clusters")] = input.clusters;
    in[QLatin1String("q")] = input.queryPath;
    in[QLatin1String("k")] = input.keyPath;
    in[QLatin1String("v")] = input.valuePath;
    in[QLatin1String("d")] = input.headDim;
    in[QLatin1String("heads")] = input.heads;
    in[QLatin1String("projection")] = headProjectionName(input.projection);
    in[QLatin1String("seed")] = double(input.seed);
    in[QLatin1String("norm_multiplier")] = input.normMultiplier;

    QJsonObject json;
    json[QLatin1String("version")] = 1;
    json[QLatin1String("input")] = in;
    json[QLatin1String("method")] = methodName();
    json[QLatin1String("features")] = approximation.features;
    json[QLatin1String("projection")] = projectionKindName(approximation.projection);
    json[QLatin1String("row_norm")] = rowNormName(approximation.rowNorm);
    json[QLatin1String("seed")] = double(approximation.seed);
    for (const MethodParameter* parameter : methodParameters())
        if (parameter != &featuresParameter())
            json[parameter->field] = parameterJson(*parameter, approximation.value(*parameter));
    json[QLatin1String("scale")] = optionalNumber(scale);
    json[QLatin1String("causal")] = causal;
    json[QLatin1String("precision")] = precisionName(precision);
    json[QLatin1String("threads")] = threads;
    json[QLatin1String("chunk")] = chunkSize;
    return json;
}

ExperimentSpec ExperimentSpec::fromJson(const QJsonObject& json)
{
    ExperimentSpec spec;
    const JsonFields top(json, QString());
    int version = 1;
    top.read("version", &version, 1, std::numeric_limits<int>::max());
    require(version == 1, QStringLiteral("version %1 is not known to this Attention Lab (it reads "
                                         "version 1); a newer version wrote it")
                              .arg(version));
    if (json.contains(QLatin1String("input"))) {
        require(json.value(QLatin1String("input")).isObject(),
                QStringLiteral("input must be an object"));
        const QJsonObject inputObject = json.value(QLatin1String("input")).toObject();
        const JsonFields in(inputObject, QStringLiteral("input."));
        InputSpec& input = spec.input;
        in.readName("kind", &input.kind, parseInputKind);
        in.read("text", &input.text);
        in.readName("tokens", &input.tokenMode, parseTokenMode);
        in.read("positional_encoding", &input.positionalEncoding);
        in.read("model", &input.modelPath);
        in.read("layer", &input.layer, 0, SpecLimits::layers);
        in.read("keep_last", &input.keepLastTokens);
        in.read("image", &input.imagePath);
        in.read("patch", &input.patchSize, 1, SpecLimits::patchSize);
        in.read("image_size", &input.imageSize, 1, SpecLimits::imageSize);
        in.read("length", &input.length, 1, SpecLimits::length);
        in.read("row_norm", &input.rowNorm, true);
        in.read("clusters", &input.clusters, 0, SpecLimits::clusters);
        in.read("q", &input.queryPath);
        in.read("k", &input.keyPath);
        in.read("v", &input.valuePath);
        in.read("d", &input.headDim, 1, SpecLimits::headDim);
        in.read("heads", &input.heads, 1, SpecLimits::heads);
        in.readName("projection", &input.projection, parseHeadProjection);
        in.readSeed("seed", &input.seed);
        in.read("norm_multiplier", &input.normMultiplier, false);
        require(input.patchSize <= input.imageSize,
                QStringLiteral("input.patch (%1) must not be larger than input.image_size (%2)")
                    .arg(input.patchSize)
                    .arg(input.imageSize));
    }
    QString method = spec.methodName();
    top.read("method", &method);
    require(spec.setMethod(method), QStringLiteral("method: unknown value \"%1\"").arg(method));
    top.read("features", &spec.approximation.features, int(featuresParameter().minimum),
             int(featuresParameter().maximum));
    top.readName("projection", &spec.approximation.projection, parseProjectionKind);
    top.readName("row_norm", &spec.approximation.rowNorm, parseRowNorm);
    top.readSeed("seed", &spec.approximation.seed);
    for (const MethodParameter* parameter : methodParameters())
        if (parameter != &featuresParameter())
            readParameter(json, *parameter, &spec.approximation);
    top.read("scale", &spec.scale, false);
    top.read("causal", &spec.causal);
    top.readName("precision", &spec.precision, parsePrecision);
    top.read("threads", &spec.threads, 0, SpecLimits::threads);
    top.read("chunk", &spec.chunkSize, 1, SpecLimits::chunkSize);
    return spec;
}

void requireComputable(const ExperimentSpec& spec, const AttentionInput& input)
{
    validate(spec);
    requireRepresentable(spec, input);
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
    const bool features = !spec.exactMethod && methodInfo(spec.approximation.kind).hasFeatures();
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
    constexpr double productFlopsPerSecond = 20e9;
    constexpr double loopFlopsPerSecond = 1e9;
    constexpr double secondsPerNormalDraw = 40e-9;
    constexpr double secondsPerByteHeld = 1e-9;

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

    const int matrices = spec.exactMethod ? 1 : 2;
    const double keptPerHead =
        (options.matrices
             ? length * length * matrices * (scalarBytes + (options.kernels ? 8.0 : 0.0))
             : 0.0) +
        (drawsW ? m * d * 8 : 0.0) + (options.features ? 2 * length * features * 8 : 0.0);
    const double workingMemory =
        (drawsW ? m * d * (8 + scalarBytes) : 0.0) + 2 * length * features * scalarBytes +
        (spec.exactMethod ? 0.0 : info.workingSetFloats(shape) * scalarBytes);

    ComputeCost cost;
    cost.bytes = heads * keptPerHead + workingMemory;
    cost.seconds = heads * (drawFlops / loopFlopsPerSecond + normalDraws * secondsPerNormalDraw +
                            productFlops / productFlopsPerSecond) +
                   cost.bytes * secondsPerByteHeld;
    return cost;
}

QString largeRunNotice(const ComputeCost& cost, const ExperimentSpec& spec,
                       const AttentionInput& input)
{
    if (cost.seconds <= kAnnouncedRunSeconds && cost.bytes <= kAnnouncedRunBytes)
        return QString();
    const QString seconds = cost.seconds < 100 ? QString::number(cost.seconds, 'g', 2)
                                               : QString::number(std::round(cost.seconds), 'f', 0);
    const QString size =
        cost.bytes < double(1 << 30)
            ? QStringLiteral("%1 MiB").arg(cost.bytes / double(1 << 20), 0, 'f', 0)
            : QStringLiteral("%1 GiB").arg(cost.bytes / double(1 << 30), 0, 'f', 1);
    QString shape = QStringLiteral("L = %1").arg(input.length());
    const MethodInfo& info = methodInfo(spec.approximation.kind);
    if (!spec.exactMethod && info.takes(featuresParameter()))
        shape = QStringLiteral("m = %1%2 for %3")
                    .arg(spec.approximation.features)
                    .arg(info.hasFeatures() ? QStringLiteral(" features") : QString(), shape);
    if (input.heads.size() > 1)
        shape += QStringLiteral(", %1 heads").arg(input.heads.size());
    return QStringLiteral("expected to take about %1 s and %2 (%3)").arg(seconds, size, shape);
}

QString precisionName(Precision precision)
{
    return precision == Precision::Float ? QStringLiteral("float") : QStringLiteral("double");
}

bool parsePrecision(const QString& name, Precision* precision)
{
    if (name == QLatin1String("float"))
        *precision = Precision::Float;
    else if (name == QLatin1String("double"))
        *precision = Precision::Double;
    else
        return false;
    return true;
}

ExperimentSpec exampleSpec()
{
    const BuiltinExample example = builtinExample();
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = QString::fromLatin1(kBuiltinModel);
    spec.input.text = example.text;
    spec.input.layer = example.layer;
    spec.causal = true;
    return spec;
}

}  // namespace attnlab

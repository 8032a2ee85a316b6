#include "experiment_spec.h"

#include "named_values.h"
#include "errors.h"
#include "inputs/model_input.h"
#include "io/json_fields.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace attnlab {

namespace {

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
    require(
        ok,
        QStringLiteral("%1: expected %2, got %3")
            .arg(parameter.field,
                 parameter.kind == MethodParameter::Kind::Switch ? QStringLiteral("true or false")
                 : parameter.kind == MethodParameter::Kind::Choice
                     ? parameter.choices.join(QStringLiteral(" or "))
                     : QStringLiteral("a number from %1 to %2")
                           .arg(parameter.minimum)
                           .arg(parameter.maximum),
                 QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact))
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

QString ExperimentSpec::methodTitle() const
{
    return input.comparisonModelPath.isEmpty()
               ? approximation.titleWithSize()
               : QStringLiteral("Checkpoint %1").arg(modelDisplayName(input.comparisonModelPath));
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
    in[QLatin1String("comparison_model")] = input.comparisonModelPath;
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
    // A second checkpoint in the approximation's place is recorded as the method "checkpoint".
    json[QLatin1String("method")] =
        input.comparisonModelPath.isEmpty() ? methodName() : QStringLiteral("checkpoint");
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
    if (!featureMapFile.isEmpty())
        json[QLatin1String("feature_map")] = featureMapFile;
    return json;
}

ExperimentSpec ExperimentSpec::fromJson(const QJsonObject& json)
{
    ExperimentSpec spec;
    const JsonFields top(json, QString());
    top.requireVersion(1);
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
        in.read("comparison_model", &input.comparisonModelPath);
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
    if (method == QLatin1String("checkpoint"))
        require(!spec.input.comparisonModelPath.isEmpty(),
                QStringLiteral("method: \"checkpoint\" needs input.comparison_model, the second "
                               "checkpoint"));
    else
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
    top.read("feature_map", &spec.featureMapFile);
    return spec;
}

QString precisionName(Precision precision)
{
    return precision == Precision::Float ? QStringLiteral("float") : QStringLiteral("double");
}

bool parsePrecision(const QString& name, Precision* precision)
{
    return parseName(name, {Precision::Float, Precision::Double}, precisionName, precision);
}

ExperimentSpec exampleSpec()
{
    const BuiltinExample example = builtinExample(QString::fromLatin1(kDefaultTextModel));
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = QString::fromLatin1(kDefaultTextModel);
    spec.input.text = example.text;
    spec.input.layer = example.layer;
    spec.causal = true;
    return spec;
}

}  // namespace attnlab

#include "commands/spec_options.h"

#include "errors.h"
#include "ui/plotting/figure_export.h"
#include "ui/images/image_loader.h"
#include "fitting/feature_map_file.h"
#include "fitting/feature_map_fit.h"
#include "inputs/text.h"
#include "inputs/model_input.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <QStringDecoder>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace attnlab {

namespace {

// Bytes of text a --text-file may hold.
constexpr qint64 kMaxTextFileBytes = 256 * 1024 * 1024;

QString option(const char* name)
{
    return QString::fromLatin1(name);
}

// The command-line option of a method parameter: a flag for a switch, else an option taking a
// value (N, X, or a choice's names).
QCommandLineOption optionOf(const MethodParameter& parameter)
{
    switch (parameter.kind) {
        case MethodParameter::Kind::Switch: return {parameter.option, parameter.description};
        case MethodParameter::Kind::Choice:
            return {parameter.option, parameter.description,
                    parameter.choices.join(QLatin1Char('|'))};
        case MethodParameter::Kind::Integer:
            return {parameter.option, parameter.description,
                    &parameter == &featuresParameter() ? QStringLiteral("M") : QStringLiteral("N")};
        case MethodParameter::Kind::Real: break;
    }
    return {parameter.option, parameter.description, QStringLiteral("X")};
}

// The value of --name, given, as an integer in [minimum, maximum].
qint64 requiredInteger(const QCommandLineParser& parser, const char* name, qint64 minimum,
                       qint64 maximum)
{
    const QString text = parser.value(option(name));
    bool ok = false;
    const qint64 value = text.trimmed().toLongLong(&ok);
    if (!ok || value < minimum || value > maximum)
        throw InputError(QStringLiteral("--%1: expected an integer from %2 to %3, got \"%4\"")
                             .arg(QLatin1String(name))
                             .arg(minimum)
                             .arg(maximum)
                             .arg(text));
    return value;
}

// The value of a method parameter's option (1 for a switch that is set), in the registry's range.
double parameterValue(const QCommandLineParser& parser, const MethodParameter& parameter)
{
    if (parameter.kind == MethodParameter::Kind::Switch)
        return 1;
    const QString text = parser.value(parameter.option).trimmed();
    double value = 0;
    if (!parameter.parse(text, &value)) {
        const QString expected = parameter.kind == MethodParameter::Kind::Choice
                                     ? parameter.choices.join(QStringLiteral(" or "))
                                     : QStringLiteral("%1 from %2 to %3")
                                           .arg(parameter.kind == MethodParameter::Kind::Integer
                                                    ? QStringLiteral("an integer")
                                                    : QStringLiteral("a number"))
                                           .arg(parameter.format(parameter.minimum),
                                                parameter.format(parameter.maximum));
        throw InputError(
            QStringLiteral("--%1: expected %2, got \"%3\"").arg(parameter.option, expected, text));
    }
    return value;
}

template <typename Enum, typename Parser>
void nameOption(const QCommandLineParser& parser, const char* name, Enum* out, Parser parse,
                const QString& choices)
{
    if (!parser.isSet(option(name)))
        return;
    const QString text = parser.value(option(name));
    if (!parse(text, out))
        throw InputError(QStringLiteral("--%1: unknown value \"%2\" (choose %3)")
                             .arg(QLatin1String(name), text, choices));
}

}  // namespace

QString readTextFile(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw InputError(
            QStringLiteral("%1: cannot open the text file: %2").arg(path, file.errorString()));
    // Read at most one byte past the limit: size() is 0 for pipes and devices.
    const QByteArray bytes = file.read(kMaxTextFileBytes + 1);
    if (bytes.size() > kMaxTextFileBytes)
        throw InputError(QStringLiteral("%1: the text file is larger than the %2 MiB Attention "
                                        "Lab reads")
                             .arg(path)
                             .arg(kMaxTextFileBytes / (1024 * 1024)));
    QStringDecoder decoder(QStringDecoder::Utf8);
    const QString text = decoder.decode(bytes);
    if (decoder.hasError())
        throw InputError(QStringLiteral("%1: the text file is not valid UTF-8").arg(path));
    return text;
}

QList<QCommandLineOption> methodOptions(const QString& methodHelp)
{
    QList<QCommandLineOption> options{
        {option("method"), methodHelp, QStringLiteral("NAME")},
        {option("projection"),
         QStringLiteral("Random projection W: orthogonal blocks, iid "
                        "Gaussian rows or simplex blocks (SimRFs) "
                        "(default orthogonal)."),
         QStringLiteral("orthogonal|iid|simplex")},
        {option("row-norm"),
         QStringLiteral("Lengths of the rows of W: chi (as Gaussian rows) or "
                        "sqrt-d (default chi)."),
         QStringLiteral("chi|sqrt-d")},
        {option("seed"), QStringLiteral("Seed of the projection W (default 0)."),
         QStringLiteral("S")},
        {option("feature-map"),
         QStringLiteral("hedgehog, hedgehog-window: the feature maps fitted to the model's "
                        "heads (a .safetensors file fit-features wrote, for this model)."),
         QStringLiteral("FILE")},
    };
    // Every method's parameters, from the registry, after --method.
    qsizetype next = 1;
    for (const MethodParameter* parameter : methodParameters())
        options.insert(next++, optionOf(*parameter));
    return options;
}

void addSpecOptions(QCommandLineParser& parser, const QList<QCommandLineOption>& replacements)
{
    const QString methods =
        QStringLiteral("exact, ") + methodNames(approximationMethods(), QStringLiteral(", "));
    QList<QCommandLineOption> options{
        {option("model"),
         QStringLiteral("Input: a trained model; the Q, K, V of its --layer, "
                        "every head, are the input. A language model (GPT-2, "
                        "Llama, Mistral, Qwen2, GPT-NeoX; grouped-query heads "
                        "with their own key/value head, queries and keys after "
                        "RoPE) reads the text (--text, --text-file, or a short example "
                        "sentence), causal as it computes it: PATH is a folder "
                        "with config.json, the .safetensors weights (or shards "
                        "and model.safetensors.index.json) and tokenizer.json "
                        "(or vocab.json + merges.txt), a .gguf file "
                        "(llama.cpp's, quantized or not: F32, F16, BF16, Q8_0, "
                        "Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K), or builtin "
                        "for the built-in KJV Llama (builtin-kjv-llama; "
                        "builtin-kjv-gpt2 names the KJV GPT-2). A ViT (model_type \"vit\" in "
                        "config.json) reads --image FILE, resized as its "
                        "preprocessor_config.json says, without a mask; the "
                        "tokens are [CLS] and the patches: PATH is a folder "
                        "with config.json, preprocessor_config.json and the "
                        ".safetensors weights, or builtin-vit for the built-in "
                        "ViT (Fashion-MNIST)."),
         QStringLiteral("PATH|FILE.gguf|builtin|builtin-vit")},
        {option("layer"),
         QStringLiteral("Model input: the layer whose heads are shown, from 0 "
                        "(default 0; with no input option at all, the "
                        "built-in example's layer %1).")
             .arg(exampleSpec().input.layer),
         QStringLiteral("N")},
        {option("keep-last"), QStringLiteral("Model input: a text longer than the model reads "
                                             "keeps its last tokens (with a warning) instead of "
                                             "being refused.")},
        {option("text"),
         QStringLiteral("Input: this text, split into tokens (default: a short "
                        "example sentence)."),
         QStringLiteral("STR")},
        {option("text-file"), QStringLiteral("Input: the text of a UTF-8 file."),
         QStringLiteral("FILE")},
        {option("tokens"),
         QStringLiteral("Text tokens: words (and punctuation marks) or "
                        "characters (default words)."),
         QStringLiteral("words|characters")},
        {option("no-positional"), QStringLiteral("Text and image: leave out the sinusoidal "
                                                 "positional encoding.")},
        {option("image"),
         QStringLiteral("Input: an image (PNG, JPEG, ...), split into patches "
                        "(or read by a ViT given with --model)."),
         QStringLiteral("FILE")},
        {option("patch"), QStringLiteral("Image: patch side in pixels (default 16)."),
         QStringLiteral("N")},
        {option("image-size"),
         QStringLiteral("Image: the longest side is scaled to N pixels "
                        "before patching (default 224)."),
         QStringLiteral("N")},
        {option("random"), QStringLiteral("Input: L random Gaussian queries and keys."),
         QStringLiteral("L")},
        {option("norm"),
         QStringLiteral("Random input: the norm of every query and key row "
                        "(default d^(1/4), which gives |x'| = 1 at the default "
                        "scale)."),
         QStringLiteral("X")},
        {option("clusters"),
         QStringLiteral("Random input: rows gather around C directions, "
                        "which makes attention peaked (default 0: none)."),
         QStringLiteral("C")},
        {QStringList{option("q"), option("queries")},
         QStringLiteral("Input: queries from a .npy file, L x d or H x L x d "
                        "(float32 or float64)."),
         QStringLiteral("FILE")},
        {QStringList{option("k"), option("keys")},
         QStringLiteral("Input: keys from a .npy file, the shape of the queries."),
         QStringLiteral("FILE")},
        {QStringList{option("v"), option("values")},
         QStringLiteral("Input: values from a .npy file, L x d_v or H x L x d_v "
                        "(default: the keys)."),
         QStringLiteral("FILE")},
        {QStringList{option("d"), option("head-dim")},
         QStringLiteral("Head dimension d of text, image and random input "
                        "(default 64)."),
         QStringLiteral("N")},
        {option("heads"),
         QStringLiteral("Number of heads H of text, image and random input "
                        "(default 1); tokens are vectors of H d numbers."),
         QStringLiteral("H")},
        {option("input-projection"),
         QStringLiteral("How Q, K, V come from token vectors X: random (Q = X Wq, K = X Wk, "
                        "V = X Wv, seeded Gaussian), tied (Wk = Wq) or identity (Q = K = V = X) "
                        "(default tied)."),
         QStringLiteral("random|tied|identity")},
        {option("input-seed"),
         QStringLiteral("Seed of the embeddings, Wq, Wk, Wv and random "
                        "input (default 0)."),
         QStringLiteral("S")},
        {option("norm-multiplier"),
         QStringLiteral("Multiply every query and key by X (default "
                        "1): approximation error grows with |x'|."),
         QStringLiteral("X")},
        {option("scale"),
         QStringLiteral("Scale s (inverse temperature) in exp(s q.k) (default "
                        "1/sqrt(d))."),
         QStringLiteral("X")},
        {option("causal"), QStringLiteral("Causal mask: query i sees keys j <= i.")},
        {option("chunk"), QStringLiteral("Rows per chunk of the causal linear form (default 48)."),
         QStringLiteral("N")},
        {option("precision"), QStringLiteral("Arithmetic: float or double (default float)."),
         QStringLiteral("float|double")},
        {option("threads"),
         QStringLiteral("Engine threads (default 0: one per hardware "
                        "thread)."),
         QStringLiteral("N")},
        {option("memory-budget"),
         QStringLiteral("The most memory the large arrays may take, "
                        "e.g. 4G or 512M (default half the machine's "
                        "memory)."),
         QStringLiteral("SIZE")},
    };
    // The method and its parameters after the input's options.
    const qsizetype scale = std::distance(
        options.begin(),
        std::find_if(options.begin(), options.end(), [](const QCommandLineOption& shared) {
            return shared.names().contains(QStringLiteral("scale"));
        }));
    const QList<QCommandLineOption> method = methodOptions(
        QStringLiteral("The approximation (default favor-positive), one of: %1. exact compares "
                       "streaming with materialised exact attention.")
            .arg(methods));
    for (qsizetype i = 0; i < method.size(); ++i)
        options.insert(scale + i, method[i]);
    for (const QCommandLineOption& replacement : replacements)
        for (QCommandLineOption& shared : options)
            if (shared.names() == replacement.names())
                shared = replacement;
    parser.addOptions(options);
}

// The options of the text reader with random embeddings (a model has its own).
constexpr const char* kEmbeddingOptions[] = {
    "heads", "d", "input-projection", "tokens", "no-positional", "input-seed"};

namespace {

// The input options given: one input at most, each with the options it takes. *model: --model
// is given; *vit: it names a ViT. The names of the input options given ("--text", ...).
QStringList checkInputOptions(const QCommandLineParser& parser, bool* model, bool* vit)
{
    QStringList inputs;
    for (const char* name : {"text", "text-file", "image", "random", "q"})
        if (parser.isSet(option(name)))
            inputs.append(QStringLiteral("--%1").arg(QLatin1String(name)));
    if (inputs.size() > 1)
        throw InputError(QStringLiteral("%1: choose one input (--text, --text-file, --image, "
                                        "--random or --q with --k)")
                             .arg(inputs.join(QStringLiteral(", "))));
    if (parser.isSet(option("k")) && !parser.isSet(option("q")))
        throw InputError(QStringLiteral("--k: keys need queries too (--q FILE)"));
    if (parser.isSet(option("v")) && !parser.isSet(option("q")))
        throw InputError(QStringLiteral("--v: values need queries and keys (--q, --k)"));
    *model = parser.isSet(option("model"));
    for (const char* name : {"random", "q"})
        if (*model && parser.isSet(option(name)))
            throw InputError(QStringLiteral("--model, --%1: a model reads text (--text or "
                                            "--text-file) or, a ViT, an image (--image), not "
                                            "other input")
                                 .arg(QLatin1String(name)));
    for (const char* name : {"patch", "image-size"})
        if (*model && parser.isSet(option(name)))
            throw InputError(QStringLiteral("--%1: with a model, the image size and patches "
                                            "are the model's own (a ViT's config.json and "
                                            "preprocessor_config.json)")
                                 .arg(QLatin1String(name)));
    // A ViT reads an image; a language model the text.
    // (the built-in KJV Llama when --model is not given)
    const ModelArchitecture architecture = *model && !parser.value(option("model")).isEmpty()
                                               ? modelArchitectureOf(parser.value(option("model")))
                                               : ModelArchitecture::Gpt2;
    *vit = *model && architecture == ModelArchitecture::Vit;
    if (*vit) {
        for (const char* name : {"text", "text-file", "keep-last"})
            if (parser.isSet(option(name)))
                throw InputError(QStringLiteral("--%1: the model %2 is a ViT: it reads an image "
                                                "(--image FILE), not text")
                                     .arg(QLatin1String(name), parser.value(option("model"))));
    } else if (*model && parser.isSet(option("image"))) {
        throw InputError(
            QStringLiteral("--image: the model %1 is a %2, a language model: it "
                           "reads text (--text or --text-file), not an image")
                .arg(parser.value(option("model")), architectureDisplayName(architecture)));
    }
    if (*vit && parser.isSet(option("causal")))
        throw InputError(QStringLiteral("--causal: the ViT %1 attends without a mask, as it was "
                                        "trained")
                             .arg(parser.value(option("model"))));
    return inputs;
}

// The input source the options give (a text or its file, an image, random rows, Q/K/V files).
void readInputSource(const QCommandLineParser& parser, InputSpec& input)
{
    if (parser.isSet(option("text"))) {
        input.text = parser.value(option("text"));
        if (input.text.isEmpty())
            throw InputError(QStringLiteral("--text: the text has no tokens (it is empty)"));
    } else if (parser.isSet(option("text-file"))) {
        const QString path = parser.value(option("text-file"));
        input.text = readTextFile(path);
        if (input.text.isEmpty())
            throw InputError(
                QStringLiteral("%1: the text file has no tokens (it is empty)").arg(path));
    } else if (parser.isSet(option("image"))) {
        input.kind = InputKind::Image;
        input.imagePath = parser.value(option("image"));
    } else if (parser.isSet(option("random"))) {
        input.kind = InputKind::Random;
        input.length = int(requiredInteger(parser, "random", 1, SpecLimits::length));
    } else if (parser.isSet(option("q"))) {
        if (!parser.isSet(option("k")))
            throw InputError(QStringLiteral("--q: queries need keys too (--k FILE)"));
        input.kind = InputKind::Files;
        input.queryPath = parser.value(option("q"));
        input.keyPath = parser.value(option("k"));
        input.valuePath = parser.value(option("v"));
        if (parser.isSet(option("heads")) || parser.isSet(option("d")))
            throw InputError(QStringLiteral("--heads, --d: with --q/--k the heads and d come "
                                            "from the shapes of the files"));
    }
}

// Whether the example's model reads the input without --model: with DefaultInput::Model, when
// no input option is given, or when a text is (--text, --text-file) with an option only a model
// takes (--layer, --keep-last).
bool builtinModelReads(const QCommandLineParser& parser, const QStringList& inputs, bool model,
                       DefaultInput defaultInput)
{
    if (model || defaultInput != DefaultInput::Model)
        return false;
    const bool text = inputs == QStringList{QStringLiteral("--text")} ||
                      inputs == QStringList{QStringLiteral("--text-file")};
    return inputs.isEmpty() ||
           (text && (parser.isSet(option("layer")) || parser.isSet(option("keep-last"))));
}

// The model input, when --model is given or the example's model reads the input
// (builtinModelReads) and no option of the random-embedding reader is given.
void readModelInput(const QCommandLineParser& parser, InputSpec& input, bool model, bool vit,
                    bool builtinModel)
{
    // The options of the random-embedding reader ask for the text example it reads, not the
    // built-in model's.
    bool embeddingOptions = false;
    for (const char* name : kEmbeddingOptions)
        embeddingOptions = embeddingOptions || parser.isSet(option(name));
    const bool exampleModel = builtinModel && !embeddingOptions;
    const bool textGiven = parser.isSet(option("text")) || parser.isSet(option("text-file"));
    if (model || exampleModel) {
        input.kind = InputKind::Model;
        const ExperimentSpec example = exampleSpec();
        input.modelPath = model ? parser.value(option("model")) : example.input.modelPath;
        if (input.modelPath.isEmpty())
            throw InputError(QStringLiteral("--model: expected a model folder, a .gguf file, "
                                            "builtin or builtin-vit"));
        if (!vit && !textGiven)
            input.text = example.input.text;
        input.layer = exampleModel && !textGiven ? example.input.layer : 0;
        if (parser.isSet(option("layer")))
            input.layer = int(requiredInteger(parser, "layer", 0, SpecLimits::layers - 1));
        input.keepLastTokens = parser.isSet(option("keep-last"));
        for (const char* name : kEmbeddingOptions)
            if (parser.isSet(option(name)))
                throw InputError(QStringLiteral("--%1: with a model, the tokens, heads, d and "
                                                "projections are the model's own")
                                     .arg(QLatin1String(name)));
    }
    for (const char* name : {"layer", "keep-last"})
        if (input.kind != InputKind::Model && parser.isSet(option(name)))
            throw InputError(QStringLiteral("--%1: only for model input (--model PATH|builtin)")
                                 .arg(QLatin1String(name)));
}

// The input's parameters: tokens, patches, norms, clusters, d, heads, projections, seed.
void readInputParameters(const QCommandLineParser& parser, InputSpec& input)
{
    nameOption(parser, "tokens", &input.tokenMode, parseTokenMode,
               QStringLiteral("words or characters"));
    input.positionalEncoding = !parser.isSet(option("no-positional"));
    if (parser.isSet(option("patch")))
        input.patchSize = int(requiredInteger(parser, "patch", 1, SpecLimits::patchSize));
    if (parser.isSet(option("image-size")))
        input.imageSize = int(requiredInteger(parser, "image-size", 1, SpecLimits::imageSize));
    if (parser.isSet(option("norm")))
        input.rowNorm = positiveOption(parser, "norm", 0, true);
    if (parser.isSet(option("clusters")))
        input.clusters = int(requiredInteger(parser, "clusters", 0, SpecLimits::clusters));
    if (parser.isSet(option("d")))
        input.headDim = int(requiredInteger(parser, "d", 1, SpecLimits::headDim));
    if (parser.isSet(option("heads")))
        input.heads = int(requiredInteger(parser, "heads", 1, SpecLimits::heads));
    nameOption(parser, "input-projection", &input.projection, parseHeadProjection,
               QStringLiteral("random, tied or identity"));
    if (parser.isSet(option("input-seed")))
        input.seed = std::uint64_t(requiredInteger(parser, "input-seed", 0, (qint64(1) << 53) - 1));
    input.normMultiplier = positiveOption(parser, "norm-multiplier", input.normMultiplier);
}

// Throws InputError naming an option of one kind of input given with another, where it would
// have no effect: --norm and --clusters (random input), --tokens (text), --patch and --image-size
// (image), --no-positional (text and image).
void refuseOptionsOfOtherInputs(const QCommandLineParser& parser, const InputSpec& input)
{
    struct Only {
        const char* option;
        std::initializer_list<InputKind> kinds;
        const char* input;
    };
    const Only onlyFor[] = {
        {"norm", {InputKind::Random}, "random input (--random L)"},
        {"clusters", {InputKind::Random}, "random input (--random L)"},
        {"tokens", {InputKind::Text}, "text read with random embeddings (--text without --model)"},
        {"patch", {InputKind::Image}, "image input (--image without --model)"},
        {"image-size", {InputKind::Image}, "image input (--image without --model)"},
        {"no-positional",
         {InputKind::Text, InputKind::Image},
         "text and image input without --model"},
    };
    for (const Only& only : onlyFor)
        if (parser.isSet(option(only.option)) &&
            std::find(only.kinds.begin(), only.kinds.end(), input.kind) == only.kinds.end())
            throw InputError(QStringLiteral("--%1: only for %2; the %3 input has no use for it")
                                 .arg(QLatin1String(only.option), QLatin1String(only.input),
                                      inputKindName(input.kind)));
}

}  // namespace

void readMethodOptions(const QCommandLineParser& parser, ExperimentSpec& spec)
{
    if (parser.isSet(option("method"))) {
        const QString method = parser.value(option("method"));
        if (!spec.setMethod(method))
            throw InputError(
                QStringLiteral("--method: unknown method \"%1\" (choose exact, %2)")
                    .arg(method, methodNames(approximationMethods(), QStringLiteral(", "))));
    }
    ApproximationSpec& map = spec.approximation;
    for (const MethodParameter* parameter : methodParameters())
        if (parser.isSet(parameter->option))
            map.setValue(*parameter, parameterValue(parser, *parameter));
    nameOption(parser, "projection", &map.projection, parseProjectionKind,
               QStringLiteral("orthogonal, iid or simplex"));
    nameOption(parser, "row-norm", &map.rowNorm, parseRowNorm, QStringLiteral("chi or sqrt-d"));
    if (parser.isSet(option("seed")))
        map.seed = std::uint64_t(requiredInteger(parser, "seed", 0, (qint64(1) << 53) - 1));
    if (parser.isSet(option("feature-map"))) {
        spec.featureMapFile = parser.value(option("feature-map"));
        map.fittedMaps = readFeatureMaps(spec.featureMapFile);
    }
}

void requireFeatureMapsForModel(const FittedFeatureMaps& maps, const QString& modelPath)
{
    if (modelArchitectureOf(modelPath) == ModelArchitecture::Vit)
        throw InputError(QStringLiteral("--feature-map %1: fitted feature maps are fitted to a "
                                        "language model's heads, and %2 is a ViT")
                             .arg(maps.file, modelPath));
    const QString folder = modelFolder(modelPath);
    requireFeatureMapsFit(maps, folder, languageModelInfo(folder));
}

ExperimentSpec specFromOptions(const QCommandLineParser& parser, DefaultInput defaultInput)
{
    ExperimentSpec spec;
    InputSpec& input = spec.input;
    bool model = false;
    bool vit = false;
    const QStringList inputs = checkInputOptions(parser, &model, &vit);
    readInputSource(parser, input);
    readModelInput(parser, input, model, vit,
                   builtinModelReads(parser, inputs, model, defaultInput));
    readInputParameters(parser, input);
    // White space is text to a model's tokenizer (GPT-2's "\n"), not to words or characters.
    if (input.kind == InputKind::Text && tokenize(input.text, input.tokenMode).isEmpty())
        throw InputError(QStringLiteral("%1: the text has no tokens (only white space, which "
                                        "--tokens %2 drops; a model's tokenizer reads it: --model)")
                             .arg(parser.isSet(option("text")) ? QStringLiteral("--text")
                                                               : parser.value(option("text-file")),
                                  tokenModeName(input.tokenMode)));
    refuseOptionsOfOtherInputs(parser, input);
    readMethodOptions(parser, spec);
    if (spec.approximation.fittedMaps && input.kind == InputKind::Model)
        requireFeatureMapsForModel(*spec.approximation.fittedMaps, input.modelPath);
    if (parser.isSet(option("scale")))
        spec.scale = positiveOption(parser, "scale", 0);
    // A GPT-2's attention is causal as it was trained: its approximation is causal too (a ViT's
    // is not).
    spec.causal = parser.isSet(option("causal")) || (input.kind == InputKind::Model && !vit);
    if (parser.isSet(option("chunk")))
        spec.chunkSize = int(requiredInteger(parser, "chunk", 1, SpecLimits::chunkSize));
    nameOption(parser, "precision", &spec.precision, parsePrecision,
               QStringLiteral("float or double"));
    if (parser.isSet(option("threads")))
        spec.threads = int(requiredInteger(parser, "threads", 0, SpecLimits::threads));
    return spec;
}

ExperimentSpec specFromOptionsExcept(const QCommandLineParser& parser, const QStringList& excluded,
                                     const QString& command, DefaultInput defaultInput)
{
    QCommandLineParser specParser;
    addSpecOptions(specParser);
    QStringList args{command};
    QSet<QString> seen;
    for (const QString& name : parser.optionNames()) {
        if (excluded.contains(name) || seen.contains(name))
            continue;
        seen.insert(name);
        const QStringList values = parser.values(name);
        args.append(values.isEmpty() ? QStringLiteral("--") + name
                                     : QStringLiteral("--%1=%2").arg(name, values.last()));
    }
    if (!specParser.parse(args))
        throw InputError(specParser.errorText());
    return specFromOptions(specParser, defaultInput);
}

double positiveOption(const QCommandLineParser& parser, const char* name, double fallback,
                      bool allowZero)
{
    if (!parser.isSet(option(name)))
        return fallback;
    const QString text = parser.value(option(name));
    bool ok = false;
    const double value = text.toDouble(&ok);
    if (!ok || !std::isfinite(value) || value < 0 || (!allowZero && value == 0))
        throw InputError(QStringLiteral("--%1: expected a number %2 0, got \"%3\"")
                             .arg(QLatin1String(name),
                                  allowZero ? QStringLiteral(">=") : QStringLiteral(">"), text));
    return value;
}

qint64 integerOption(const QCommandLineParser& parser, const char* name, qint64 fallback,
                     qint64 minimum, qint64 maximum)
{
    return parser.isSet(option(name)) ? requiredInteger(parser, name, minimum, maximum) : fallback;
}

QStringList listOption(const QCommandLineParser& parser, const char* name, const QString& fallback)
{
    const QString text = parser.isSet(option(name)) ? parser.value(option(name)) : fallback;
    QStringList items;
    for (const QString& item : text.split(QLatin1Char(','))) {
        if (item.trimmed().isEmpty())
            throw InputError(QStringLiteral("--%1: an empty item in \"%2\" (items are separated "
                                            "by commas)")
                                 .arg(QLatin1String(name), text));
        items.append(item.trimmed());
    }
    return items;
}

QCommandLineOption comparisonModelOption()
{
    return {option("compare-model"),
            QStringLiteral("A second checkpoint of the same language model (a folder or a .gguf "
                           "file: a quantized one, say), whose exact attention on the same tokens "
                           "and layer takes the approximation's place: how far the second "
                           "checkpoint strays from --model's, measured as an approximation's "
                           "error is. Refused, with the reason, when the two differ in "
                           "architecture, shape or tokenizer."),
            QStringLiteral("PATH|FILE.gguf")};
}

void readComparisonModel(const QCommandLineParser& parser, ExperimentSpec& spec)
{
    if (!parser.isSet(option("compare-model")))
        return;
    if (spec.input.kind != InputKind::Model)
        throw InputError(QStringLiteral("--compare-model: only with a language model's input "
                                        "(--model PATH|FILE.gguf)"));
    if (parser.isSet(option("method")))
        throw InputError(QStringLiteral("--compare-model, --method: the second checkpoint's "
                                        "exact attention is the approximation; leave out "
                                        "--method"));
    spec.input.comparisonModelPath = parser.value(option("compare-model"));
    if (spec.input.comparisonModelPath.isEmpty())
        throw InputError(QStringLiteral("--compare-model: expected a model folder or a .gguf "
                                        "file"));
}

namespace {

// The layer that `text` (part of --layers's item `item`) names, from 0 and below layerCount when
// that is known (> 0). Throws InputError naming --layers, the item and what the option takes.
int layerNumber(const QString& text, const QString& item, int layerCount, const QString& takes)
{
    bool ok = false;
    const int layer = text.trimmed().toInt(&ok);
    if (!ok || layer < 0 || (layerCount > 0 && layer >= layerCount))
        throw InputError(
            QStringLiteral("--layers: \"%1\" is not a layer%2 (%3)")
                .arg(item, layerCount > 0 ? QStringLiteral(" of this model") : QString(), takes));
    return layer;
}

// "numbers from 0 to 11" (or "from 0" when the count is not known) and how they are joined.
QString layerNumbersText(int layerCount, const QString& joined)
{
    return layerCount > 0
               ? QStringLiteral("numbers from 0 to %1 %2").arg(layerCount - 1).arg(joined)
               : QStringLiteral("numbers from 0 %1").arg(joined);
}

}  // namespace

std::vector<int> layerListOption(const QCommandLineParser& parser, int layerCount)
{
    const QStringList items = listOption(parser, "layers", QStringLiteral("all"));
    if (items == QStringList{QStringLiteral("all")})
        return {};
    const QString takes = QStringLiteral("all alone, or ") +
                          layerNumbersText(layerCount, QStringLiteral("separated by commas"));
    std::vector<int> layers;
    for (const QString& item : items) {
        if (item == QLatin1String("all"))
            throw InputError(QStringLiteral("--layers: \"%1\" mixes all with layer numbers (%2)")
                                 .arg(parser.value(option("layers")), takes));
        layers.push_back(layerNumber(item, item, layerCount, takes));
    }
    return layers;
}

std::vector<std::vector<int>> layerSetsOption(const QCommandLineParser& parser, int layerCount)
{
    const QString takes =
        QStringLiteral("all, or ") +
        layerNumbersText(layerCount, QStringLiteral("joined by + to replace several together"));
    std::vector<std::vector<int>> sets;
    for (const QString& item : listOption(parser, "layers", QStringLiteral("all"))) {
        std::vector<int> set;
        if (item == QLatin1String("all")) {
            for (int layer = 0; layer < layerCount; ++layer)
                set.push_back(layer);
        } else {
            for (const QString& part : item.split(QLatin1Char('+')))
                set.push_back(layerNumber(part, item, layerCount, takes));
        }
        sets.push_back(set);
    }
    return sets;
}

AttentionInput inputFromSpec(const ExperimentSpec& spec, const MemoryBudget& budget)
{
    const InputSpec& input = spec.input;
    const bool vit = input.kind == InputKind::Model &&
                     modelArchitectureOf(input.modelPath) == ModelArchitecture::Vit;
    if (input.kind != InputKind::Image && !vit)
        return buildInput(input, nullptr, budget);
    if (vit && input.imagePath.isEmpty())
        throw InputError(QStringLiteral("--model %1: the model is a ViT: it reads an image "
                                        "(--image FILE)")
                             .arg(input.modelPath));
    // A ViT resizes the decoded image itself, as its preprocessor says.
    const ImagePixels pixels = loadImagePixels(input.imagePath, vit ? 0 : input.imageSize);
    return buildInput(input, &pixels, budget);
}

void warnMethodsLeftOut(const QStringList& skipped, const ExperimentSpec& spec)
{
    const QString why = causalReason(spec.input) == CausalBecause::LanguageModel
                            ? QStringLiteral("a language model's attention is causal")
                            : QStringLiteral("--causal is on");
    QTextStream err(stderr);
    for (const QString& name : skipped)
        err << "warning: --methods: " << name << " left out: it has no causal form, and " << why
            << '\n';
}

MemoryBudget budgetFromOptions(const QCommandLineParser& parser)
{
    if (!parser.isSet(option("memory-budget")))
        return MemoryBudget();
    const QString text = parser.value(option("memory-budget"));
    const qint64 bytes = parseByteSize(text);
    if (bytes <= 0)
        throw InputError(QStringLiteral("--memory-budget: expected a size such as 512M or 4G, "
                                        "got \"%1\"")
                             .arg(text));
    return MemoryBudget(bytes);
}

}  // namespace attnlab

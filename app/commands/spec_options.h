#pragma once

#include "experiment.h"

#include <QCommandLineParser>

namespace attnlab {

// The command-line options that describe an experiment (input, method, parameters), shared by
// the subcommands that compute one. An option of `replacements` takes the place of the shared
// option of the same name: a subcommand that reads one differently says so in its help (or
// hides it from the help with QCommandLineOption::HiddenFromHelp).
void addSpecOptions(QCommandLineParser& parser, const QList<QCommandLineOption>& replacements = {});

// The options of a method: --method (described by methodHelp), every parameter of the registry,
// --projection, --row-norm and --seed, as addSpecOptions lists them; for a subcommand that takes
// a method without the rest of an experiment (generate).
QList<QCommandLineOption> methodOptions(const QString& methodHelp);

// Sets spec's method (spec.exactMethod for "exact"), its parameters, W's projection, row norms
// and seed from methodOptions()' options, and the fitted maps of --feature-map (read, with
// spec.featureMapFile), leaving the others as they are. Throws InputError naming the option for
// an unknown method or a value out of range, and the file for a bad feature-map file.
void readMethodOptions(const QCommandLineParser& parser, ExperimentSpec& spec);

// Throws InputError naming the maps' file when they were not fitted to the model modelPath names
// (a folder, a .gguf file, builtin): another model, another shape, or a ViT.
void requireFeatureMapsForModel(const FittedFeatureMaps& maps, const QString& modelPath);

// What a subcommand computes when no input option is given: the built-in model on its example
// sentence (compute, render: what a new user sees first), or the random-embedding text input.
// An option of the random-embedding reader (--heads, --d, --input-projection, --tokens,
// --no-positional, --input-seed) without an input asks for the text input instead; with Model,
// an option only a model takes (--layer, --keep-last) with --text or --text-file asks for the
// built-in model to read that text.
enum class DefaultInput { Model, Text };

// The spec the parsed options describe (defaults where an option is absent). Throws InputError
// naming the option for a malformed value or conflicting inputs.
ExperimentSpec specFromOptions(const QCommandLineParser& parser,
                               DefaultInput defaultInput = DefaultInput::Text);

// The spec of parser's options other than `excluded` (a subcommand's own, such as the lists of a
// sweep), parsed again as `compute` parses them; `command` ("attention-lab errors") names the
// subcommand in messages. Throws InputError as specFromOptions does.
ExperimentSpec specFromOptionsExcept(const QCommandLineParser& parser, const QStringList& excluded,
                                     const QString& command,
                                     DefaultInput defaultInput = DefaultInput::Text);

// --compare-model PATH: a second checkpoint of the model of --model (a folder or a .gguf file)
// whose exact attention takes the approximation's place.
QCommandLineOption comparisonModelOption();
// Sets spec.input.comparisonModelPath from --compare-model. Throws InputError naming the option
// without model input, or with --method (the second checkpoint is the approximation).
void readComparisonModel(const QCommandLineParser& parser, ExperimentSpec& spec);

// The text of a UTF-8 file (at most 256 MiB). Throws InputError naming the file when it cannot be
// read, is too large or is not UTF-8.
QString readTextFile(const QString& path);

// The value of --name as an integer in [minimum, maximum], or `fallback` when it is absent.
// Throws InputError naming the option for anything else.
qint64 integerOption(const QCommandLineParser& parser, const char* name, qint64 fallback,
                     qint64 minimum, qint64 maximum);

// The value of --name as a finite number > 0 (>= 0 with allowZero), or `fallback` when it is
// absent. Throws InputError naming the option for anything else.
double positiveOption(const QCommandLineParser& parser, const char* name, double fallback,
                      bool allowZero = false);

// The comma-separated items of --name (or of `fallback` when it is absent), trimmed. Throws
// InputError naming the option for an empty item.
QStringList listOption(const QCommandLineParser& parser, const char* name, const QString& fallback);

// --layers as one set (generate, fit-features): "all" (the default: the empty list, every layer)
// or layer numbers separated by commas, each from 0, and below layerCount when that is known
// (layerCount > 0; 0: the caller checks them against the model). Throws InputError naming
// --layers for an item that is not such a layer, or "all" among numbers.
std::vector<int> layerListOption(const QCommandLineParser& parser, int layerCount);

// --layers as sets (model-eval, one row each): sets separated by commas, each "all" (every layer,
// listed) or layer numbers joined by "+" ("0+3"), below layerCount. Throws InputError naming
// --layers for a set that names another layer.
std::vector<std::vector<int>> layerSetsOption(const QCommandLineParser& parser, int layerCount);

// Q, K, V for the spec: reads text and image files (for a ViT, the image as decoded: the model
// resizes it) and builds the input. Throws InputError naming the file, ResourceError over the
// budget.
AttentionInput inputFromSpec(const ExperimentSpec& spec, const MemoryBudget& budget);

// The --memory-budget option's value, or the default budget.
MemoryBudget budgetFromOptions(const QCommandLineParser& parser);

// Warns on stderr, a line each, that the methods named in `skipped` (skipMethodsWithoutCausalForm)
// were left out of --methods, and why spec's attention is causal: "a language model's attention
// is causal" or "--causal is on".
void warnMethodsLeftOut(const QStringList& skipped, const ExperimentSpec& spec);

}  // namespace attnlab

#pragma once

class QCommandLineParser;

namespace attnlab {

// The subcommands of `attention-lab`, one file each, in the order of command_line's table. A
// subcommand is two functions: add<Name>Options gives a parser the command's description and
// options; run<Name>Command runs the command on the parsed options and returns its exit status
// (docs/design.md section 4.4).

// `attention-lab compute [input] [method] --out DIR`: computes exact and approximate attention and
// writes the arrays and metrics.json into DIR (all or none). Throws InputError, ResourceError,
// OutputError.
void addComputeOptions(QCommandLineParser& parser);
int runComputeCommand(const QCommandLineParser& parser);

// `attention-lab render [input] [method] --out DIR [--format png,svg,pdf] [--size WxH] [--query
// N]`: computes like the window and writes the figures it shows, drawn by the same code:
// attention_exact, attention_approx and attention_error, and query_row (with --query) and
// image_overlay (image input) in each format. Throws InputError, ResourceError, OutputError.
void addRenderOptions(QCommandLineParser& parser);
int runRenderCommand(const QCommandLineParser& parser);

// `attention-lab bench --methods LIST --lengths LIST|MIN:MAX ... --out FILE.csv [--plot FILE]`: the
// timing-vs-length sweep of core/sweeps/timing_sweep.h, written as CSV (atomically), with progress
// lines on stderr and a summary (sgemm rate, fitted slopes, crossover lengths) on stdout. Throws
// InputError, OutputError.
void addBenchOptions(QCommandLineParser& parser);
int runBenchCommand(const QCommandLineParser& parser);

// `attention-lab steps [input] [method] --out DIR [--from I --to J] [--head H]`: runs one head's
// causal linear attention as a recurrence, token by token (core/sweeps/causal_steps.h), and writes
// into DIR (all or none): states.npy (S_i of the chosen positions, count x C x M), normalizers.npy
// (z_i, L x C), outputs.npy (recurrent y_i, L x M), outputs_parallel.npy (chunked form),
// outputs_exact_causal.npy (causal softmax) and steps.json (one record per position). Positions are
// 0-based tokens t; the state after token t is S_i with i = t + 1. Throws InputError,
// ResourceError, OutputError.
void addStepsOptions(QCommandLineParser& parser);
int runStepsCommand(const QCommandLineParser& parser);

// `attention-lab errors [input options] --methods LIST --features LIST --seeds N [--projections
// orthogonal,iid] [--sweep features|norm|length] [--norms LIST] [--lengths LIST] [--pair A,B]
// [--metric NAME] --out FILE.csv [--plot FILE.png|svg|pdf]`: the error sweep of
// core/sweeps/error_sweep.h on one input, written as CSV (atomically), with a progress line per
// curve point on stderr (a terminal, or --progress) and a summary (fitted slopes, kernel MSE
// against Lemma 2) on stdout; --plot draws the Error analysis page's chart
// (ui/errors/error_chart.h) offscreen. Throws InputError, ResourceError, OutputError.
void addErrorsOptions(QCommandLineParser& parser);
int runErrorsCommand(const QCommandLineParser& parser);

// `attention-lab model-eval [--model PATH|builtin|builtin-vit] [--text STR | --text-file F |
// --image F | --images F1,F2,... | --image-folder DIR] --methods LIST --features LIST [--layers
// all|N,...] [--seeds K] --out FILE.csv [--plot FILE] [--predictions FILE.csv]`: what replacing
// softmax attention by each approximation inside a trained model does to its predictions
// (core/sweeps/downstream.h): a GPT-2's next tokens, or a ViT's classes over the images. One CSV
// row per (method, m, replaced layers, seed), with a progress line per row (and, for images, every
// twentieth of them) on stderr and a summary on stdout; --predictions writes each image's class,
// exact and approximate; --plot draws the chart of agreement and KL against m
// (ui/model/model_eval_chart.h) offscreen. Throws InputError, ResourceError, OutputError.
void addModelEvalOptions(QCommandLineParser& parser);
int runModelEvalCommand(const QCommandLineParser& parser);

// `attention-lab generate --model PATH|builtin --prompt TEXT --tokens N --method M [--layers ...]
// [--greedy | --temperature T --top-k K --sample-seed S] [--seed S] [method parameters] --out DIR
// [--plot]`: continues the prompt twice, with exact attention over a key/value cache and with the
// method's recurrent form in the replaced layers (core/generation/generation.h), and writes into
// DIR (all or none) tokens.json, steps.csv and, with --plot, kl.png, cost.png and memory.png.
// Throws InputError, ResourceError, OutputError.
void addGenerateOptions(QCommandLineParser& parser);
int runGenerateCommand(const QCommandLineParser& parser);

// `attention-lab fit-features --model M --text-file F [--layers all|N,...] [--steps N] [--features
// C] [--window W] --out FILE.safetensors [--curves FILE.csv]`: Hedgehog's feature maps fitted to
// every head of the chosen layers of a language model (core/fitting), written as a safetensors file
// for --feature-map; progress on stderr (a terminal, or --progress), each head's KL before and
// after on stdout. Throws InputError, ResourceError, OutputError.
void addFitFeaturesOptions(QCommandLineParser& parser);
int runFitFeaturesCommand(const QCommandLineParser& parser);

}  // namespace attnlab

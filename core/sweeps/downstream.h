#pragma once

#include "experiment.h"
#include "attention/metrics.h"
#include "attention/row_properties.h"
#include "model/language_model.h"
#include "model/named_heads.h"
#include "model/vit_model.h"

#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace attnlab {

// What replacing softmax attention by an approximation inside a trained model does to its
// predictions: the model runs twice on the same input, once as trained (exact softmax in every
// layer: causal for a language model, unmasked for ViT) and once with the approximation of
// `method` in the replaced layers (every query head of each, on its key/value group's keys and
// values; without Mistral's sliding window, which a replaced layer does not apply), and the
// predicted distributions p_i = softmax(logits_i) of the two runs are compared prediction by
// prediction: a text's next token at each position (a language model), an image's class (ViT: one
// prediction, from the [CLS] token).

struct TokenProbability {
    int id = 0;  // a token id, or a class
    double probability = 0;
};

// The rows' properties (entropy, monotonicity: attention/row_properties.h) of one replaced head,
// on the queries and keys it receives in the approximate run.
struct HeadRowProperties {
    int layer = 0;
    int head = 0;
    RowProperties properties;
};

struct DownstreamComparison {
    std::vector<int> replacedLayers;  // 0-based, ascending
    // Per prediction i (L positions of a text; one for an image):
    std::vector<int> exactTop1;   // argmax p_i
    std::vector<int> approxTop1;  // argmax p^_i
    std::vector<double> kl;       // KL(p_i || p^_i) = sum_t p_it log(p_it / p^_it)
    std::vector<std::vector<TokenProbability>> exactTop5;  // the 5 likeliest tokens (or classes)
    std::vector<std::vector<TokenProbability>> approxTop5;
    // Summaries:
    double top1Agreement = 0;  // fraction of predictions with exactTop1 == approxTop1
    double meanKl = 0;         // mean_i KL(p_i || p^_i)
    double maxKl = 0;          // max_i KL(p_i || p^_i)
    // mean over the replaced heads of |P^ - P|_F / |P|_F, where P and P^ are exact and
    // approximate attention (causal for a language model) on the queries and keys that head
    // receives in the approximate run (so from the first replaced layer on, what the approximation
    // really sees).
    double relFrobeniusAttentionMean = 0;
    std::vector<double> relFrobeniusPerLayer;  // the same mean per replaced layer
    // Every replaced head's row properties, in the order the model ran them (layer by layer).
    std::vector<HeadRowProperties> heads;
};

// Runs the comparison. method: exactMethod (streaming exact: a sanity check, agreement 1) or a
// feature map with its parameters and seed; its scale (1/sqrt(d) by default, as both models);
// causal for a language model and not for ViT, as each model was trained (method.causal is not
// read). Head h of every replaced layer draws the random numbers of head h (the W the
// single-layer views show); fitted maps are those of its layer and head. exact: the model's own
// forward pass on the same input with logits (cachedForward gives it), so repeated comparisons
// reuse it. Runs on the engine threads engineThreadsFor gives for the replaced heads and the m the
// method runs with (featuresUsed: Nystrom's m past L runs, and costs, as m = L), set on the calling
// thread. Throws InputError (a layer the model does not have, no layers, a ViT without a
// classifier), Cancelled.
DownstreamComparison compareDownstream(const LanguageModel& model, const std::vector<int>& ids,
                                       const ForwardResult& exact, const ExperimentSpec& method,
                                       const std::vector<int>& replacedLayers,
                                       const std::function<bool()>& cancelled = {});
DownstreamComparison compareDownstream(const VitModel& model, const PixelTensor& pixels,
                                       const ForwardResult& exact, const ExperimentSpec& method,
                                       const std::vector<int>& replacedLayers,
                                       const std::function<bool()>& cancelled = {});

// Two checkpoints of one language model compared as the exact and the approximate run are: p_i
// from first's logits, p^_i from second's (the same ids), and the attention error of every head of
// every layer, |P_2 - P_1|_F / |P_1|_F (replacedLayers: all of them).
DownstreamComparison compareCheckpoints(const ForwardResult& first, const ForwardResult& second,
                                        int heads);

// log softmax(logits) in double: l_t - max l - log sum_t' exp(l_t' - max l).
VectorD logSoftmax(const Eigen::Ref<const Vector<float>>& logits);

// KL(p || q) = sum_t p_t log(p_t / q_t) of p = softmax(exactLogits) and q = softmax(approxLogits),
// in double, never below 0; inf when approxLogits has an entry that is not finite (an
// approximation whose denominators reach zero can leave no distribution).
double predictionKl(const Eigen::Ref<const Vector<float>>& exactLogits,
                    const Eigen::Ref<const Vector<float>>& approxLogits);

// The layers sorted, without repeats. Throws InputError for none, or for a layer outside
// [0, layerCount), naming it.
std::vector<int> checkedLayers(std::vector<int> layers, int layerCount);

// The comparisons of the same method and layers on several inputs (the images of a ViT) as one,
// an input's predictions after another's: agreement, mean and largest KL over all their
// predictions together; the attention errors (overall and per layer) averaged over the
// comparisons. Throws std::invalid_argument for none.
DownstreamComparison combinedComparison(const std::vector<DownstreamComparison>& comparisons);

// One row of `attention-lab model-eval` and of the window's chart against m: one method, m,
// set of replaced layers and seed on one text or on a set of images.
struct ModelEvalRow {
    QString method;  // "favor-positive", ...
    // m, the method's size (local's and hedgehog-window's is their window w); fitted maps'
    // features C = 2 d_f for hedgehog; 0 for a method without either (exact, elu, ...).
    int features = 0;
    int window = 0;  // w for a method with a window (local, hedgehog-window, Scatterbrain); else 0
    QString layers;  // layersName()
    std::uint64_t seed = 0;
    int tokens = 0;  // L: the text's tokens; for a ViT the patches plus one ([CLS])
    double top1Agreement = 0;
    double meanKl = 0;
    double maxKl = 0;
    double relFrobeniusAttentionMean = 0;
    std::vector<HeadRowProperties> heads;  // every replaced head's (images: averaged)
};

// The row of one comparison.
ModelEvalRow modelEvalRow(const ExperimentSpec& method, const DownstreamComparison& comparison,
                          int layerCount);
// The row of comparisons of the same method and layers on several inputs of `tokens` tokens
// each (the images of a ViT): agreement, mean and max KL over all their predictions together;
// the relative Frobenius error of attention averaged over the comparisons.
ModelEvalRow modelEvalRow(const ExperimentSpec& method,
                          const std::vector<DownstreamComparison>& comparisons, int layerCount,
                          int tokens);

// The CSV of rows, with the header
// method,m,layers,seed,tokens,top1_agreement,mean_kl,max_kl,rel_frobenius_attention_mean,window
// (window empty for a method without one) and numbers written as csv.h writes them.
QString modelEvalCsv(const std::vector<ModelEvalRow>& rows);

// The per-head CSV beside it: one line per replaced head of each row, with the header
// layer,head,method,m,layers,seed,entropy_exact,entropy_approx,monotonicity (row_properties.h:
// mean row entropies of P and P^ in nats, mean Spearman correlation of P^ with q.k; empty where
// not defined).
QString modelEvalHeadsCsv(const std::vector<ModelEvalRow>& rows);

// "all" when layers are every layer of a model with layerCount layers (more than one), else
// "2" or "0+3": the names `model-eval --layers` reads.
QString layersName(const std::vector<int>& layers, int layerCount);
// The same in words, for titles: "all layers", "layer 2" or "layers 0+3".
QString layersPhrase(const std::vector<int>& layers, int layerCount);

// What replacing attention in `heads` query heads (head dimension d) costs, worked out before the
// work starts from the method registry's cost model, with expectedComputeCost's rates
// (experiment.h: kProductFlopsPerSecond, ...). Every head keeps its W (m x d in double, and its
// scaled copy in float) from the start to the end of the run.
// - compareDownstream on L tokens: each head's W, its output (MethodInfo::flops) and the rows of
//   P and P^ for the attention error (2 L^2 d, and 2 L^2 C or the output's flops again); bytes:
//   every head's W and one head's working memory (its L x C features twice, the method's
//   working set).
ComputeCost expectedDownstreamCost(const ApproximationSpec& method, int heads, int d,
                                   Eigen::Index length, bool causal);
// - one recurrent run of `tokens` tokens (Generation runs two): each head's W, and per token
//   phi(q), phi(k) (4 m d with W, 4 C d) with the state's update and read (4 C d) or the
//   window's (4 min(tokens, w) d); bytes: every head's W and state after the last token (C d + C
//   floats for a map, 2 min(tokens, w) d for a window, both for hedgehog-window).
ComputeCost expectedRecurrentCost(const ApproximationSpec& method, int heads, int d,
                                  Eigen::Index tokens);

// One small picture and the numbers of every head of a model on one text, for the head grid.
struct HeadSurveyEntry {
    int layer = 0;
    int head = 0;
    // The key/value head this query head reads in a model with grouped-query attention (query
    // heads of a group share it); -1 when every head has its own.
    int keyValueHead = -1;
    MatrixD thumbnailExact;    // P averaged over blocks to at most thumbnailSize x thumbnailSize
    MatrixD thumbnailApprox;   // P^ likewise (empty for the exact method)
    AttentionMetrics metrics;  // approximate against exact, this head alone
    // Norms of x' = sqrt(s) x over the positions, queries and keys: the error of FAVOR+ grows
    // like exp(|q' + k'|^2).
    double meanQueryNorm = 0;
    double maxQueryNorm = 0;
    double meanKeyNorm = 0;
    double maxKeyNorm = 0;
    // What the model's folder names this head (heads.json: "induction head"), if anything.
    std::optional<NamedHead> role;
};

// Every layer and head of spec's model input (spec.input.kind == Model; spec.input.layer is
// ignored), under spec's method, causal for a language model and not for ViT (whose image is
// `image`, the pixels of spec.input.imagePath). progress(done, total) after each layer. Throws as
// compute does, InputError for another input kind.
std::vector<HeadSurveyEntry> surveyHeads(const ExperimentSpec& spec, const ComputeOptions& options,
                                         int thumbnailSize = 48,
                                         const std::function<void(int, int)>& progress = {},
                                         const ImagePixels* image = nullptr);

}  // namespace attnlab

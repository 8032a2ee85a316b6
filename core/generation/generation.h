#pragma once

#include "attention/approximation_spec.h"
#include "generation/token_sampler.h"
#include "memory_budget.h"
#include "model/decoding_state.h"
#include "model/language_model.h"
#include "types.h"

#include <QByteArray>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace attnlab {

class FeatureMapRecurrence;

// A language model continuing a prompt, token by token, twice (docs/design.md section 2.11):
// once with its own softmax attention over a key/value cache (the exact run), once with an
// approximation in the replaced layers run as its recurrent form (the approximate run: a feature
// map's state S_i = S_{i-1} + phi(k_i) v_i^T, z_i = z_{i-1} + phi(k_i) per query head, or local
// attention's sliding cache), each run fed its own tokens. A third run, the approximate model fed
// the exact run's tokens (teacher-forced), gives the KL between the two next-token distributions
// on the same text: a curve that measures the attention, not the drift of two texts apart. Both
// continuations choose with the same uniform draw at each step (TokenSampler).

// What to generate.
struct GenerationSpec {
    QString prompt;
    std::vector<int> promptIds;  // the prompt's token ids, read instead of the text when given
    int tokens = 32;             // N, the tokens to generate
    // The approximation, its parameters and W's seed; it must have a causal and a recurrent form.
    ApproximationSpec approximation;
    // The replaced layers (0-based); empty: every layer.
    std::vector<int> replacedLayers;
    SamplingSettings sampling;
    // The head each step reports in full (FollowedHead): a layer of the model, or -1 for none.
    int followLayer = -1;
    int followHead = 0;
    // The engine threads of a step; 0: one when a step's work is small (below 2^24 multiply-adds
    // at the last position: waking a team of threads for each of its many small products costs
    // more than it saves, and on a busy machine a product waits a time slice for its slower
    // thread), every hardware thread otherwise.
    int threads = 0;
};

// One query head of the approximate run at one step: its rows, and for a feature map in a
// replaced layer the recurrence's state after the token (what the Stepper page shows of a head).
struct FollowedHead {
    int layer = 0;
    int head = 0;
    VectorD query;  // q_i, k_i, v_i (d each; after RoPE, before the scale)
    VectorD key;
    VectorD value;
    bool hasState = false;  // a feature map in a replaced layer: the fields below are set
    MatrixD state;          // S_i (C x d_v) at its true scale
    VectorD normalizer;     // z_i (C)
    VectorD queryFeatures;  // phi(q_i), phi(k_i) (C)
    VectorD keyFeatures;
    double denominator = 0;  // phi(q_i)^T z_i
    VectorD output;  // y_i (d_v), the head's output as the recurrence gave it (with hasState)
};

// What step k (0-based) of a generation gives: token k of each continuation, from the logits
// after the model read the token at `position` = P - 1 + k (P the prompt's tokens).
struct GenerationStep {
    int index = 0;
    Eigen::Index position = 0;
    int exactToken = 0;   // the exact run's token k
    int approxToken = 0;  // the approximate run's token k
    double uniform = 0;   // the draw both used (NaN when greedy)
    // KL(p || q) = sum_t p_t log(p_t / q_t) of the next-token distributions (softmax of the
    // logits, temperature 1) of the exact run, p, and of the approximate model fed the exact
    // tokens, q; inf where q has no finite logits.
    double kl = 0;
    bool sameToken = false;        // exactToken == approxToken
    bool forcedSameToken = false;  // the teacher-forced approximate model chose exactToken too
    // Wall-clock seconds of the step's forward pass (embedding to logits) of the exact and the
    // free-running approximate run, and of their attention alone (every layer's).
    double exactSeconds = 0;
    double approxSeconds = 0;
    double exactAttentionSeconds = 0;
    double approxAttentionSeconds = 0;
    // The bytes held from token to token after the step: the exact run's key/value cache
    // (2 (P + k) d floats per key/value head and layer) and the approximate run's memory (the
    // replaced layers' states, plus the key/value cache of the layers it does not replace).
    double cacheBytes = 0;
    double stateBytes = 0;
    std::optional<FollowedHead> followed;  // when GenerationSpec::followLayer is set
    // Step 0 with a followed head: the head at each prompt token read before the step (positions
    // 0 to P - 2, in order), so that a view can step through the whole text.
    std::vector<FollowedHead> followedPrompt;
};

// A generation run step by step (a window's worker calls next() once per token, reporting each
// step as it comes, and stops between tokens when cancelled). Not thread-safe; one thread at a
// time.
class Generation {
public:
    // Checks everything and prepares the three runs (draws W); nothing is generated yet. Throws
    // InputError (a prompt without tokens; P + N past the model's positions; N < 1; a method
    // without a causal form or a recurrent form, saying why; a layer or followed head the model
    // does not have; a temperature not > 0 or a top-k < 0), ResourceError (the caches and states
    // of the three runs, with the approximation's random features, over budget) and Cancelled
    // (polled while W is drawn). Once the checks have passed, before W is drawn, calls announce
    // with expectedRunNotice's text when the run is expected to be long or large
    // (expectedRecurrentCost for the two approximate runs).
    Generation(std::shared_ptr<const LanguageModel> model, const GenerationSpec& spec,
               const MemoryBudget& budget = MemoryBudget(), std::function<bool()> cancelled = {},
               const std::function<void(const QString&)>& announce = {});
    ~Generation();

    const LanguageModel& model() const { return *m_model; }
    const GenerationSpec& spec() const { return m_spec; }
    const std::vector<int>& promptIds() const { return m_prompt; }
    const std::vector<int>& replacedLayers() const { return m_replaced; }
    // The continuations so far.
    const std::vector<int>& exactIds() const { return m_exactIds; }
    const std::vector<int>& approxIds() const { return m_approxIds; }
    int stepsDone() const { return int(m_exactIds.size()); }
    bool finished() const { return stepsDone() == m_spec.tokens; }
    // The (token, query head) pairs of the replaced layers whose denominator phi(q_i)^T z_i was
    // not positive so far in the approximate run (maps whose features can be negative).
    Eigen::Index nonPositiveDenominators() const;

    // Generates the next token of both continuations (the prompt is read first, at the first
    // call), with the engine threads of spec().threads set on the calling thread. Requires
    // !finished(). Throws Cancelled when the constructor's cancelled() says so (polled between the
    // runs, between layers and between the blocks of the engine's loops) or, without one, a
    // CancellationScope the caller installed (between the runs and the engine's blocks); the
    // generation is then spent.
    // Throws InputError when the approximate model gives no finite logit.
    GenerationStep next();

private:
    struct Runs;
    void readPrompt();
    // The followed head's rows in row r of a call's captured rows, and its state when it is a
    // feature map's in a replaced layer (`observed`: what the layer's row observer kept of r).
    FollowedHead followedHead(const LayerQkv& rows, Eigen::Index r,
                              const FollowedHead* observed) const;

    std::shared_ptr<const LanguageModel> m_model;
    GenerationSpec m_spec;
    std::function<bool()> m_cancelled;
    TokenSampler m_sampler;
    std::vector<int> m_prompt;
    std::vector<int> m_replaced;
    std::vector<int> m_exactIds;
    std::vector<int> m_approxIds;
    int m_threads = 1;
    std::unique_ptr<Runs> m_runs;
};

// The decoding state of the approximate model (LanguageModel::decode): the method's recurrent form
// in the layers marked in `replaced` (RecurrentLayer, head h's draws for query head h, scale
// 1/sqrt(d) as the model's), a key/value cache with room for `tokens` in the others. Throws
// InputError when the method has no recurrent form, Cancelled (through a CancellationScope)
// while W is drawn.
DecodingState approximateDecodingState(const LanguageModel& model, const ApproximationSpec& spec,
                                       const std::vector<bool>& replaced, Eigen::Index tokens);

// A whole generation, as `attention-lab generate` writes it.
struct GenerationResult {
    std::vector<int> promptIds;
    std::vector<int> exactIds;
    std::vector<int> approxIds;
    std::vector<GenerationStep> steps;
    std::vector<int> replacedLayers;
    Eigen::Index nonPositiveDenominators = 0;
};

// Runs `generation` to its end; progress(done, total) after each token; throws as next() does.
GenerationResult runGeneration(Generation& generation,
                               const std::function<void(int, int)>& progress = {});

// The index of the first step whose tokens differ, or -1 when the continuations agree.
int firstDivergence(const GenerationResult& result);

// tokens.json: the model, the method with its parameters, the layers, the sampling, the prompt's
// ids and text, and for each continuation its ids, its text and each token's text, and the first
// divergence (generation_files.cpp).
QByteArray generationTokensJson(const GenerationResult& result, const LanguageModel& model,
                                const GenerationSpec& spec);

// steps.csv: one line per step, with the header
// step,position,exact_ms,approx_ms,exact_attention_ms,approx_attention_ms,kl,same_token,
// cache_bytes,state_bytes,exact_token,approx_token,forced_same_token
// (kl empty where it is not finite) (generation_files.cpp).
QByteArray generationStepsCsv(const GenerationResult& result);

}  // namespace attnlab

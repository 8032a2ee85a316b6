#include "generation/generation.h"

#include "named_values.h"
#include "attention/approximation.h"
#include "attention/approximations/feature_map_recurrence.h"
#include "cancellation.h"
#include "errors.h"
#include "generation/recurrent_layer.h"
#include "model/key_value_cache.h"
#include "parallel.h"
#include "sweeps/downstream.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab {

using Eigen::Index;

namespace {

void requireSampling(const SamplingSettings& sampling)
{
    if (sampling.greedy)
        return;
    if (!(sampling.temperature > 0) || !std::isfinite(sampling.temperature))
        throw InputError(
            QStringLiteral("temperature %1: expected a number > 0").arg(sampling.temperature));
    if (sampling.topK < 0)
        throw InputError(
            QStringLiteral("top-k %1: expected 0 (every token) or more").arg(sampling.topK));
}

}  // namespace

DecodingState approximateDecodingState(const LanguageModel& model, const ApproximationSpec& spec,
                                       const std::vector<bool>& replaced, Index tokens)
{
    const AttentionHeads heads{model.heads(), model.keyValueHeads(), model.headDim()};
    const double scale = 1 / std::sqrt(double(model.headDim()));
    std::vector<std::unique_ptr<LayerMemory>> memories;
    for (int l = 0; l < model.layers(); ++l) {
        if (replaced[std::size_t(l)]) {
            memories.push_back(std::make_unique<RecurrentLayer>(spec, heads, scale, l));
        } else {
            auto cache = std::make_unique<KeyValueCache>(heads, model.info().slidingWindow);
            cache->reserve(tokens);
            memories.push_back(std::move(cache));
        }
    }
    return DecodingState(std::move(memories));
}

// The three runs: the exact model, the approximate model fed the exact tokens (teacher-forced)
// and fed its own (free-running).
struct Generation::Runs {
    DecodingState exact;
    DecodingState forced;
    DecodingState free;
    bool promptRead = false;
    // The free-running run's replaced layers, and the followed head's recurrence when it is a
    // feature map in a replaced layer.
    std::vector<const RecurrentLayer*> replaced;
    const FeatureMapRecurrence* followed = nullptr;
    // What the followed layer's row observer kept of the tokens of the current call: the head's
    // output y_i and, while the prompt is read, its state.
    bool readingPrompt = false;
    std::vector<FollowedHead> observed;
    std::vector<FollowedHead> promptHeads;  // the followed head at the prompt's tokens
};

namespace {

// The state of a feature map's recurrence after its last token, at its true scale.
void copyState(const FeatureMapRecurrence& recurrence, FollowedHead& head)
{
    head.hasState = true;
    head.state = recurrence.state();
    head.normalizer = recurrence.normalizer();
    head.queryFeatures = recurrence.queryFeatures();
    head.keyFeatures = recurrence.keyFeatures();
    head.denominator = recurrence.denominator();
}

}  // namespace

Generation::Generation(std::shared_ptr<const LanguageModel> model, const GenerationSpec& spec,
                       const MemoryBudget& budget, std::function<bool()> cancelled,
                       const std::function<void(const QString&)>& announce)
    : m_model(std::move(model)),
      m_spec(spec),
      m_cancelled(std::move(cancelled)),
      m_sampler(spec.sampling)
{
    const LanguageModelInfo& info = m_model->info();
    if (spec.promptIds.empty() && spec.prompt.trimmed().isEmpty())
        throw InputError(QStringLiteral("the prompt is empty: give the text to continue"));
    m_prompt = spec.promptIds.empty() ? m_model->tokenizer().encode(spec.prompt) : spec.promptIds;
    if (m_prompt.empty())
        throw InputError(QStringLiteral("the prompt has no tokens: give the text to continue"));
    checkTokens(m_prompt, info, m_model->folder());
    if (spec.tokens < 1)
        throw InputError(
            QStringLiteral("%1 tokens to generate: expected at least 1").arg(spec.tokens));
    const qint64 total = qint64(m_prompt.size()) + spec.tokens;
    if (total > info.positions) {
        const qint64 room = info.positions - qint64(m_prompt.size());
        const QString token = QStringLiteral("token");
        const QString tokens = QStringLiteral("tokens");
        throw InputError(
            QStringLiteral("the prompt's %1 and the %2 to generate make %3, past the %4 "
                           "positions %5 reads: %6")
                .arg(countOf(qint64(m_prompt.size()), token, tokens),
                     countOf(spec.tokens, token, tokens))
                .arg(total)
                .arg(info.positions)
                .arg(m_model->folder(),
                     room > 0
                         ? QStringLiteral("generate at most %1").arg(countOf(room, token, tokens))
                         : QStringLiteral("the prompt leaves no room, shorten it")));
    }
    requireCausalForm(spec.approximation.kind, true, CausalBecause::LanguageModel);
    requireRecurrentForm(spec.approximation.kind);
    requireSampling(spec.sampling);
    std::vector<int> layers = spec.replacedLayers;
    if (layers.empty())
        for (int l = 0; l < info.layers; ++l)
            layers.push_back(l);
    m_replaced = checkedLayers(layers, info.layers);
    if (spec.followLayer >= info.layers || spec.followLayer < -1)
        throw InputError(QStringLiteral("followed layer %1: the model has layers 0 to %2")
                             .arg(spec.followLayer)
                             .arg(info.layers - 1));
    if (spec.followLayer >= 0 && (spec.followHead < 0 || spec.followHead >= info.heads))
        throw InputError(QStringLiteral("followed head %1: the model has heads 0 to %2")
                             .arg(spec.followHead)
                             .arg(info.heads - 1));

    // What the three runs hold at the end: the exact cache, and twice the approximate model's
    // (the replaced layers' W and states, the others' caches). Drawing every W takes the
    // approximate runs' time when m is large.
    const double cacheFloatsPerLayer = 2.0 * double(total) * info.headDim * info.keyValueHeads;
    const double replaced = double(m_replaced.size());
    const ComputeCost recurrent = expectedRecurrentCost(
        spec.approximation, int(replaced) * info.heads, info.headDim, Index(total));
    const double bytes =
        sizeof(float) * cacheFloatsPerLayer * (info.layers + 2 * (info.layers - replaced)) +
        2 * recurrent.bytes;
    budget.require(
        bytes,
        QStringLiteral("Generating %1 after a prompt of %2 with %3 (the key/value "
                       "caches, states and random features of the exact and "
                       "approximate runs)")
            .arg(
                countOf(spec.tokens, QStringLiteral("token"), QStringLiteral("tokens")),
                countOf(qint64(m_prompt.size()), QStringLiteral("token"), QStringLiteral("tokens")),
                spec.approximation.titleWithSize()),
        QStringLiteral("Use fewer features or replaced layers, generate fewer tokens, "
                       "or raise the memory budget."),
        {Remedy::FewerFeatures, Remedy::FewerReplacedLayers, Remedy::FewerGeneratedTokens});
    if (announce) {
        const QString notice =
            expectedRunNotice({2 * recurrent.seconds, bytes},
                              QStringLiteral("%1 in %2 of %3 tokens")
                                  .arg(spec.approximation.titleWithSize(),
                                       countOf(qint64(replaced) * info.heads,
                                               QStringLiteral("head"), QStringLiteral("heads")))
                                  .arg(total));
        if (!notice.isEmpty())
            announce(notice);
    }

    // A step's multiply-adds at the last position: the weights (about 12 width^2 a layer, and
    // the output head) and the cache's attention.
    const double width = double(info.heads) * info.headDim;
    const double stepWork = info.layers * (12 * width * width + 2.0 * total * width) +
                            double(info.vocabularySize) * width;
    m_threads =
        spec.threads > 0 ? spec.threads : (stepWork < double(1 << 24) ? 1 : hardwareThreads());

    std::vector<bool> isReplaced(std::size_t(info.layers), false);
    for (const int l : m_replaced)
        isReplaced[std::size_t(l)] = true;
    const CancellationScope cancellation(m_cancelled);  // W's draw polls it
    m_runs = std::make_unique<Runs>(
        Runs{m_model->decodingState(total),
             approximateDecodingState(*m_model, spec.approximation, isReplaced, total),
             approximateDecodingState(*m_model, spec.approximation, isReplaced, total),
             false,
             {},
             nullptr,
             false,
             {},
             {}});
    for (const int l : m_replaced)
        m_runs->replaced.push_back(&dynamic_cast<const RecurrentLayer&>(m_runs->free.layer(l)));
    if (spec.followLayer >= 0 && isReplaced[std::size_t(spec.followLayer)]) {
        auto& layer = dynamic_cast<RecurrentLayer&>(m_runs->free.layer(spec.followLayer));
        m_runs->followed = dynamic_cast<const FeatureMapRecurrence*>(&layer.head(spec.followHead));
        if (m_runs->followed)
            layer.setRowObserver([runs = m_runs.get(),
                                  column = Index(spec.followHead) * info.headDim,
                                  d = Index(info.headDim)](Index row, const Matrix<float>& out) {
                FollowedHead head;
                head.output = out.row(row).segment(column, d).transpose().cast<double>();
                if (runs->readingPrompt)  // a step's state is read after its (timed) pass
                    copyState(*runs->followed, head);
                runs->observed.push_back(std::move(head));
            });
    }
}

Generation::~Generation() = default;

Eigen::Index Generation::nonPositiveDenominators() const
{
    Index count = 0;
    for (const RecurrentLayer* layer : m_runs->replaced)
        count += layer->nonPositiveDenominators();
    return count;
}

void Generation::readPrompt()
{
    m_runs->promptRead = true;
    if (m_prompt.size() < 2)
        return;
    // Every token but the last, whose logits give the first new token.
    const std::vector<int> read(m_prompt.begin(), m_prompt.end() - 1);
    ForwardOptions options;
    options.captureQkv = false;
    options.logits = false;
    options.cancelled = m_cancelled;
    for (DecodingState* state : {&m_runs->exact, &m_runs->forced})
        m_model->decode(read, *state, options);
    // The free run reports the followed head at every prompt token (its rows captured, its state
    // kept by the layer's row observer), the computation unchanged.
    options.captureQkv = m_spec.followLayer >= 0;
    m_runs->readingPrompt = true;
    const ForwardResult free = m_model->decode(read, m_runs->free, options);
    m_runs->readingPrompt = false;
    if (m_spec.followLayer < 0)
        return;
    const LayerQkv& rows = free.layers[std::size_t(m_spec.followLayer)];
    for (Index r = 0; r < Index(read.size()); ++r)
        m_runs->promptHeads.push_back(
            followedHead(rows, r, m_runs->followed ? &m_runs->observed[std::size_t(r)] : nullptr));
    m_runs->observed.clear();
}

FollowedHead Generation::followedHead(const LayerQkv& rows, Index r,
                                      const FollowedHead* observed) const
{
    const Index d = m_model->headDim();
    const Index g = m_model->keyValueHead(m_spec.followHead);
    FollowedHead head = observed ? *observed : FollowedHead();
    head.layer = m_spec.followLayer;
    head.head = m_spec.followHead;
    head.query = rows.q.row(r).segment(m_spec.followHead * d, d).transpose().cast<double>();
    head.key = rows.k.row(r).segment(g * d, d).transpose().cast<double>();
    head.value = rows.v.row(r).segment(g * d, d).transpose().cast<double>();
    return head;
}

GenerationStep Generation::next()
{
    if (finished())
        throw std::logic_error("Generation::next: every token is generated");
    // m_cancelled, installed here, is polled between layers and by the engine's loops inside them;
    // without it, a scope the caller installed is.
    const CancellationScope cancellation(m_cancelled);
    throwIfCancelled();
    setEngineThreads(m_threads);
    if (!m_runs->promptRead)
        readPrompt();
    const int k = stepsDone();
    GenerationStep step;
    step.index = k;
    step.position = Index(m_prompt.size()) - 1 + k;
    ForwardOptions options;
    options.captureQkv = false;
    options.cancelled = m_cancelled;
    // The step's forward pass on `state`, timed whole and its attention alone.
    const auto timed = [&](DecodingState& state, int token, const ForwardOptions& o,
                           double* seconds, double* attentionSeconds) {
        const double attentionBefore = state.attentionSeconds();
        QElapsedTimer timer;
        timer.start();
        ForwardResult result = m_model->decode({token}, state, o);
        if (seconds)
            *seconds = double(timer.nsecsElapsed()) * 1e-9;
        if (attentionSeconds)
            *attentionSeconds = state.attentionSeconds() - attentionBefore;
        return result;
    };
    const int fedExact = k == 0 ? m_prompt.back() : m_exactIds.back();
    const int fedApprox = k == 0 ? m_prompt.back() : m_approxIds.back();
    const ForwardResult exact =
        timed(m_runs->exact, fedExact, options, &step.exactSeconds, &step.exactAttentionSeconds);
    throwIfCancelled();
    const ForwardResult forced = timed(m_runs->forced, fedExact, options, nullptr, nullptr);
    throwIfCancelled();
    ForwardOptions freeOptions = options;
    freeOptions.captureQkv = m_spec.followLayer >= 0;
    const ForwardResult free = timed(m_runs->free, fedApprox, freeOptions, &step.approxSeconds,
                                     &step.approxAttentionSeconds);

    step.uniform = m_sampler.uniform(k);
    step.exactToken = m_sampler.choose(exact.logits.row(0).transpose(), step.uniform);
    step.approxToken = m_sampler.choose(free.logits.row(0).transpose(), step.uniform);
    if (step.approxToken < 0)
        throw InputError(QStringLiteral("the approximate model (%1) gave no finite logit at "
                                        "position %2: its attention overflowed")
                             .arg(methodInfo(m_spec.approximation.kind).name)
                             .arg(step.position));
    step.sameToken = step.exactToken == step.approxToken;
    step.forcedSameToken =
        m_sampler.choose(forced.logits.row(0).transpose(), step.uniform) == step.exactToken;
    step.kl = predictionKl(exact.logits.row(0).transpose(), forced.logits.row(0).transpose());
    step.cacheBytes = m_runs->exact.bytes();
    step.stateBytes = m_runs->free.bytes();
    if (m_spec.followLayer >= 0) {
        FollowedHead followed = followedHead(free.layers[std::size_t(m_spec.followLayer)], 0,
                                             m_runs->followed ? &m_runs->observed.back() : nullptr);
        if (m_runs->followed)
            copyState(*m_runs->followed, followed);
        m_runs->observed.clear();
        step.followed = std::move(followed);
        if (k == 0)
            step.followedPrompt = std::move(m_runs->promptHeads);
    }
    m_exactIds.push_back(step.exactToken);
    m_approxIds.push_back(step.approxToken);
    return step;
}

GenerationResult runGeneration(Generation& generation,
                               const std::function<void(int, int)>& progress)
{
    GenerationResult result;
    const int total = generation.spec().tokens;
    while (!generation.finished()) {
        result.steps.push_back(generation.next());
        if (progress)
            progress(generation.stepsDone(), total);
    }
    result.promptIds = generation.promptIds();
    result.exactIds = generation.exactIds();
    result.approxIds = generation.approxIds();
    result.replacedLayers = generation.replacedLayers();
    result.nonPositiveDenominators = generation.nonPositiveDenominators();
    return result;
}

int firstDivergence(const GenerationResult& result)
{
    for (std::size_t k = 0; k < result.exactIds.size(); ++k)
        if (result.exactIds[k] != result.approxIds[k])
            return int(k);
    return -1;
}

}  // namespace attnlab

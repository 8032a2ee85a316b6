#include "model/gguf_tokenizer.h"

#include "model/hf_tokenizer.h"
#include "model/tokenizer_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace attnlab {

namespace {

// tokenizer.ggml.token_type (llama.cpp's llama_token_type).
constexpr std::int64_t kUnknownToken = 2;
constexpr std::int64_t kControlToken = 3;
constexpr std::int64_t kUserDefinedToken = 4;

// The tokenizer.json pieces of the models llama.cpp's converter names with a tokenizer.ggml.pre
// (convert_hf_to_gguf_update.py), as those models' tokenizer.json files have them.
struct PreTokenizerPipeline {
    QStringList names;
    const char* normalizer;    // JSON
    const char* preTokenizer;  // JSON
    bool ignoreMerges;
};

const std::vector<PreTokenizerPipeline>& pipelines()
{
    static const std::vector<PreTokenizerPipeline> table = {
        // GPT-2's byte-level pattern (also GPT-NeoX's, MPT's, OLMo's, Phi-2's); "default" is what
        // llama.cpp assumes when the converter did not recognise the tokenizer.
        {{QStringLiteral("default"), QStringLiteral("gpt-2"), QStringLiteral("phi-2"),
          QStringLiteral("mpt"), QStringLiteral("olmo")},
         "null",
         R"json({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                 "use_regex": true})json",
         false},
        // Llama 3.
        {{QStringLiteral("llama-bpe"), QStringLiteral("llama3"), QStringLiteral("llama-v3")},
         "null",
         R"json({"type": "Sequence", "pretokenizers": [
                 {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
                  "behavior": "Isolated", "invert": false},
                 {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                  "use_regex": false}]})json",
         true},
        // Qwen2 (and the DeepSeek-R1 distillations of it).
        {{QStringLiteral("qwen2"), QStringLiteral("deepseek-r1-qwen")},
         R"json({"type": "NFC"})json",
         R"json({"type": "Sequence", "pretokenizers": [
                 {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
                  "behavior": "Isolated", "invert": false},
                 {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
                  "use_regex": false}]})json",
         false},
        // SmolLM and StarCoder: single digits, then GPT-2's pattern.
        {{QStringLiteral("smollm"), QStringLiteral("starcoder")},
         "null",
         R"json({"type": "Sequence", "pretokenizers": [
                 {"type": "Digits", "individual_digits": true},
                 {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                  "use_regex": true}]})json",
         false},
    };
    return table;
}

QJsonValue json(const char* text)
{
    return QJsonDocument::fromJson(QByteArray("[") + text + "]").array().at(0);
}

// The vocabulary and the token types of the metadata.
struct GgufVocabulary {
    std::vector<QString> symbols;  // by id
    std::vector<std::int64_t> types;
    QHash<QString, int> ids;
};

GgufVocabulary readVocabulary(const GgufFile& file)
{
    const QString tokensKey = QStringLiteral("tokenizer.ggml.tokens");
    const std::vector<QByteArrayView> tokens = file.byteStrings(tokensKey);
    if (tokens.empty() || tokens.size() > std::size_t(kLargestTokenId) + 1)
        file.refuseKey(tokensKey, QStringLiteral("holds %1 tokens; a vocabulary has 1 to %2")
                                      .arg(tokens.size())
                                      .arg(kLargestTokenId + 1));
    GgufVocabulary vocabulary;
    vocabulary.symbols.reserve(tokens.size());
    vocabulary.ids.reserve(qsizetype(tokens.size()));
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const QString symbol = QString::fromUtf8(tokens[i]);
        vocabulary.symbols.push_back(symbol);
        if (symbol.isEmpty())
            continue;  // llama.cpp keeps such a token unreachable
        const int earlier = vocabulary.ids.value(symbol, -1);
        if (earlier >= 0)
            file.refuseKey(tokensKey, QStringLiteral("holds %1 twice, at %2 and %3")
                                          .arg(quotedSymbol(symbol))
                                          .arg(earlier)
                                          .arg(i));
        vocabulary.ids.insert(symbol, int(i));
    }
    const QString typesKey = QStringLiteral("tokenizer.ggml.token_type");
    if (file.contains(typesKey)) {
        vocabulary.types = file.integers(typesKey);
        if (vocabulary.types.size() != tokens.size())
            file.refuseKey(typesKey, QStringLiteral("holds %1 types for %2 tokens")
                                         .arg(vocabulary.types.size())
                                         .arg(tokens.size()));
    }
    return vocabulary;
}

// tokenizer.ggml.merges as (left, right) pairs.
std::vector<std::pair<QString, QString>> readMerges(const GgufFile& file)
{
    const QString key = QStringLiteral("tokenizer.ggml.merges");
    const std::vector<QByteArrayView> merges = file.byteStrings(key);
    std::vector<std::pair<QString, QString>> pairs;
    pairs.reserve(merges.size());
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const QString merge = QString::fromUtf8(merges[i]);
        const qsizetype space = merge.indexOf(u' ', 1);
        if (space < 0 || space + 1 >= merge.size())
            file.refuseKey(
                QStringLiteral("%1[%2]").arg(key).arg(i),
                QStringLiteral("is %1; a merge is \"left right\"").arg(quotedSymbol(merge)));
        pairs.emplace_back(merge.left(space), merge.mid(space + 1));
    }
    return pairs;
}

// SentencePieceExtractor's merges: every split of a piece into two pieces of the vocabulary, the
// pieces by score (higher first, then by id), the splits of a piece by the ids of their halves.
std::vector<std::pair<QString, QString>> mergesFromScores(const GgufFile& file,
                                                          const GgufVocabulary& vocabulary)
{
    const QString key = QStringLiteral("tokenizer.ggml.scores");
    const std::vector<float> scores = file.floats(key);
    if (scores.size() != vocabulary.symbols.size())
        file.refuseKey(key, QStringLiteral("holds %1 scores for %2 tokens")
                                .arg(scores.size())
                                .arg(vocabulary.symbols.size()));
    struct Merge {
        int piece;
        int left;
        int right;
    };
    std::vector<Merge> merges;
    for (int piece = 0; piece < int(vocabulary.symbols.size()); ++piece) {
        const QString& symbol = vocabulary.symbols[std::size_t(piece)];
        const std::size_t first = merges.size();
        for (qsizetype k = 1; k < symbol.size(); ++k) {
            if (symbol[k].isLowSurrogate())
                continue;  // not between the halves of a character
            const int left = vocabulary.ids.value(symbol.left(k), -1);
            const int right = left < 0 ? -1 : vocabulary.ids.value(symbol.mid(k), -1);
            if (right >= 0)
                merges.push_back({piece, left, right});
        }
        std::sort(merges.begin() + std::ptrdiff_t(first), merges.end(),
                  [](const Merge& a, const Merge& b) {
                      return a.left != b.left ? a.left < b.left : a.right < b.right;
                  });
    }
    std::stable_sort(merges.begin(), merges.end(), [&](const Merge& a, const Merge& b) {
        return scores[std::size_t(a.piece)] > scores[std::size_t(b.piece)];
    });
    std::vector<std::pair<QString, QString>> pairs;
    pairs.reserve(merges.size());
    for (const Merge& merge : merges)
        pairs.emplace_back(vocabulary.symbols[std::size_t(merge.left)],
                           vocabulary.symbols[std::size_t(merge.right)]);
    return pairs;
}

// The id at key, refused unless it is a token of the vocabulary.
int tokenId(const GgufFile& file, const QString& key, std::size_t tokens)
{
    const std::uint64_t id = file.unsignedInteger(key);
    if (id >= tokens)
        file.refuseKey(
            key, QStringLiteral("is %1; the tokens have ids 0 to %2").arg(id).arg(tokens - 1));
    return int(id);
}

// The parts of a "gpt2" tokenizer: the pre-tokenizer tokenizer.ggml.pre names.
void byteLevelParts(const GgufFile& file, const GgufVocabulary& vocabulary,
                    HfTokenizer::Parts& parts)
{
    const QString preKey = QStringLiteral("tokenizer.ggml.pre");
    const QString pre = file.string(preKey, QStringLiteral("default"));
    const auto found =
        std::find_if(pipelines().begin(), pipelines().end(),
                     [&](const PreTokenizerPipeline& p) { return p.names.contains(pre); });
    if (found == pipelines().end())
        file.refuseKey(preKey, QStringLiteral("is %1, a pre-tokenizer Attention Lab does not know "
                                              "(it reads %2)")
                                   .arg(quotedSymbol(pre),
                                        ggufPreTokenizerNames().join(QStringLiteral(", "))));
    parts.normalizer = HfNormalizer::read(file.path(), preKey, json(found->normalizer));
    parts.preTokenizer = HfPreTokenizer::read(file.path(), preKey, json(found->preTokenizer));
    parts.decoder = HfDecoder::read(file.path(), preKey,
                                    json(R"json({"type": "ByteLevel", "add_prefix_space": true,
                                                 "trim_offsets": true, "use_regex": true})json"));
    HfBpeModel::Settings settings;
    settings.ignoreMerges = found->ignoreMerges;
    parts.model = HfBpeModel::fromVocabulary(
        file.path(), vocabulary.ids, QStringLiteral("tokenizer.ggml.tokens"), readMerges(file),
        QStringLiteral("tokenizer.ggml.merges"), settings);
}

// The parts of a "llama" (SentencePiece) tokenizer, as Hugging Face's Llama tokenizer.json.
void sentencePieceParts(const GgufFile& file, const GgufVocabulary& vocabulary,
                        HfTokenizer::Parts& parts)
{
    const bool prefix = file.boolean(QStringLiteral("tokenizer.ggml.add_space_prefix"), true);
    const QString where = QStringLiteral("tokenizer.ggml.model");
    parts.normalizer = HfNormalizer::read(
        file.path(), where,
        json(prefix
                 ? R"json({"type": "Sequence", "normalizers": [
                          {"type": "Prepend", "prepend": "▁"},
                          {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})json"
                 : R"json({"type": "Replace", "pattern": {"String": " "}, "content": "▁"})json"));
    parts.decoder = HfDecoder::read(file.path(), where,
                                    json(prefix ? R"json({"type": "Sequence", "decoders": [
                          {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                          {"type": "ByteFallback"}, {"type": "Fuse"},
                          {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})json"
                                                : R"json({"type": "Sequence", "decoders": [
                          {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                          {"type": "ByteFallback"}, {"type": "Fuse"}]})json"));
    HfBpeModel::Settings settings;
    settings.byteFallback = true;
    settings.fuseUnk = true;
    const QString unkKey = QStringLiteral("tokenizer.ggml.unknown_token_id");
    if (file.contains(unkKey))
        settings.unkToken =
            vocabulary.symbols[std::size_t(tokenId(file, unkKey, vocabulary.symbols.size()))];
    parts.model = HfBpeModel::fromVocabulary(
        file.path(), vocabulary.ids, QStringLiteral("tokenizer.ggml.tokens"),
        mergesFromScores(file, vocabulary), QStringLiteral("tokenizer.ggml.scores"), settings);
}

}  // namespace

QStringList ggufPreTokenizerNames()
{
    QStringList names;
    for (const PreTokenizerPipeline& pipeline : pipelines())
        names += pipeline.names;
    return names;
}

std::shared_ptr<const TextTokenizer> ggufTokenizer(const GgufFile& file)
{
    const QString modelKey = QStringLiteral("tokenizer.ggml.model");
    if (!file.contains(modelKey))
        file.refuseKey(modelKey, QStringLiteral("is missing: the file holds no tokenizer"));
    const QString model = file.string(modelKey);
    if (model != QLatin1String("gpt2") && model != QLatin1String("llama"))
        file.refuseKey(modelKey,
                       QStringLiteral("is %1; Attention Lab reads the tokenizers \"gpt2\" "
                                      "(byte-level BPE) and \"llama\" (SentencePiece)")
                           .arg(quotedSymbol(model)));
    const GgufVocabulary vocabulary = readVocabulary(file);
    HfTokenizer::Parts parts;
    if (model == QLatin1String("gpt2"))
        byteLevelParts(file, vocabulary, parts);
    else
        sentencePieceParts(file, vocabulary, parts);
    for (std::size_t id = 0; id < vocabulary.types.size(); ++id) {
        const std::int64_t type = vocabulary.types[id];
        if (vocabulary.symbols[id].isEmpty() ||
            (type != kControlToken && type != kUnknownToken && type != kUserDefinedToken))
            continue;
        HfTokenizer::AddedToken token;
        token.id = int(id);
        token.content = vocabulary.symbols[id];
        token.special = type != kUserDefinedToken;
        parts.added.push_back(token);
    }
    const std::size_t tokens = vocabulary.symbols.size();
    const bool sentencePiece = model == QLatin1String("llama");
    if (file.boolean(QStringLiteral("tokenizer.ggml.add_bos_token"), sentencePiece))
        parts.prefixIds.push_back(
            tokenId(file, QStringLiteral("tokenizer.ggml.bos_token_id"), tokens));
    if (file.boolean(QStringLiteral("tokenizer.ggml.add_eos_token"), false))
        parts.suffixIds.push_back(
            tokenId(file, QStringLiteral("tokenizer.ggml.eos_token_id"), tokens));
    return std::make_shared<const HfTokenizer>(
        HfTokenizer::fromParts(file.path(), std::move(parts)));
}

}  // namespace attnlab

#include "model/hf_tokenizer.h"

#include "io/json_types.h"
#include "model/byte_level.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>

namespace attnlab {
namespace {

// The code point that ends text[0, end), or 0 at the start.
char32_t codePointBefore(const QString& text, qsizetype end)
{
    if (end <= 0)
        return 0;
    const QChar last = text[end - 1];
    if (last.isLowSurrogate() && end >= 2 && text[end - 2].isHighSurrogate())
        return QChar::surrogateToUcs4(text[end - 2], last);
    return last.unicode();
}

// The code point that starts text[start, ...), or 0 at the end.
char32_t codePointAt(const QString& text, qsizetype start)
{
    if (start >= text.size())
        return 0;
    const QChar first = text[start];
    if (first.isHighSurrogate() && start + 1 < text.size() && text[start + 1].isLowSurrogate())
        return QChar::surrogateToUcs4(first, text[start + 1]);
    return first.unicode();
}

// A word character for single_word (Rust's char::is_alphanumeric, or '_').
bool isWordCharacter(char32_t c)
{
    return c != 0 && (c == U'_' || QChar::isLetterOrNumber(c));
}

// The ids of an array of integers at `field` (a template's special token).
std::vector<int> idsOf(const TokenizerFields& fields, const QString& key)
{
    const QJsonValue value = fields.value(key);
    if (!value.isArray())
        fields.refuse(key,
                      QStringLiteral("is %1; expected an array of ids").arg(jsonTypeName(value)));
    std::vector<int> ids;
    for (const QJsonValue id : value.toArray()) {
        const double number = id.toDouble(-1.0);
        if (!id.isDouble() || number < 0 || number > kLargestTokenId ||
            number != std::trunc(number))
            fields.refuse(key, QStringLiteral("holds %1; ids are integers from 0 to %2")
                                   .arg(id.isDouble() ? QString::number(number) : jsonTypeName(id))
                                   .arg(kLargestTokenId));
        ids.push_back(int(number));
    }
    return ids;
}

}  // namespace

HfTokenizer HfTokenizer::fromFile(const QString& path)
{
    const QJsonDocument document = readTokenizerJson(path);
    if (!document.isObject())
        refuseTokenizer(path, QStringLiteral("is not a JSON object; a tokenizer.json is one"));
    return HfTokenizer(path, TokenizerFields(path, QString(), document.object()));
}

HfTokenizer HfTokenizer::fromParts(const QString& path, Parts parts)
{
    HfTokenizer tokenizer(path);
    tokenizer.m_normalizer = std::move(parts.normalizer);
    tokenizer.m_preTokenizer = std::move(parts.preTokenizer);
    tokenizer.m_model = std::move(parts.model);
    tokenizer.m_decoder = std::move(parts.decoder);
    tokenizer.m_size = tokenizer.m_model.size();
    for (const AddedToken& token : parts.added)
        tokenizer.addAddedToken(token);
    tokenizer.m_prefixIds = std::move(parts.prefixIds);
    tokenizer.m_suffixIds = std::move(parts.suffixIds);
    for (const std::vector<int>* ids : {&tokenizer.m_prefixIds, &tokenizer.m_suffixIds})
        for (const int id : *ids)
            tokenizer.m_size = std::max(tokenizer.m_size, id + 1);
    return tokenizer;
}

HfTokenizer::HfTokenizer(const QString& path, const TokenizerFields& root)
    : m_path(path),
      m_normalizer(HfNormalizer::read(path, QStringLiteral("normalizer"),
                                      root.value(QStringLiteral("normalizer")))),
      m_preTokenizer(HfPreTokenizer::read(path, QStringLiteral("pre_tokenizer"),
                                          root.value(QStringLiteral("pre_tokenizer")))),
      m_model(HfBpeModel::read(root.object(QStringLiteral("model")))),
      m_decoder(
          HfDecoder::read(path, QStringLiteral("decoder"), root.value(QStringLiteral("decoder"))))
{
    m_size = m_model.size();
    readAddedTokens(root);
    readComponents(path, root.name(QStringLiteral("post_processor")),
                   root.value(QStringLiteral("post_processor")), QStringLiteral("processors"),
                   [&](const TokenizerFields& processor) { readPostProcessor(processor); });
    for (const int id : m_prefixIds)
        m_size = std::max(m_size, id + 1);
    for (const int id : m_suffixIds)
        m_size = std::max(m_size, id + 1);
}

void HfTokenizer::readAddedTokens(const TokenizerFields& root)
{
    if (root.isNull(QStringLiteral("added_tokens")))
        return;
    const QJsonValue list = root.value(QStringLiteral("added_tokens"));
    if (!list.isArray())
        root.refuse(QStringLiteral("added_tokens"),
                    QStringLiteral("is %1; expected an array").arg(jsonTypeName(list)));
    const QJsonArray tokens = list.toArray();
    for (qsizetype i = 0; i < tokens.size(); ++i) {
        const TokenizerFields token(m_path, QStringLiteral("added_tokens[%1]").arg(i), tokens[i]);
        AddedToken added;
        added.id = token.integer(QStringLiteral("id"), 0, kLargestTokenId, -1);
        if (added.id < 0)
            token.refuse(QStringLiteral("id"), QStringLiteral("is missing"));
        added.content = token.string(QStringLiteral("content"));
        if (added.content.isEmpty())
            token.refuse(QStringLiteral("content"), QStringLiteral("is empty"));
        added.special = token.boolean(QStringLiteral("special"), false);
        added.singleWord = token.boolean(QStringLiteral("single_word"), false);
        added.lstrip = token.boolean(QStringLiteral("lstrip"), false);
        added.rstrip = token.boolean(QStringLiteral("rstrip"), false);
        added.normalized = token.boolean(QStringLiteral("normalized"), !added.special);
        if (m_addedIndex.contains(added.id))
            token.refuse(QStringLiteral("id"), QStringLiteral("is %1, which an earlier added token "
                                                              "has")
                                                   .arg(added.id));
        addAddedToken(added);
    }
}

void HfTokenizer::addAddedToken(const AddedToken& token)
{
    const QString match = token.normalized ? m_normalizer.normalize(token.content) : token.content;
    m_addedIndex.insert(token.id, qsizetype(m_added.size()));
    m_size = std::max(m_size, token.id + 1);
    if (!match.isEmpty())
        m_addedByFirst[token.normalized ? 1 : 0][match[0].unicode()].push_back(
            qsizetype(m_added.size()));
    m_added.push_back(token);
    m_addedMatch.push_back(match);
}

void HfTokenizer::readPostProcessor(const TokenizerFields& processor)
{
    const QString type = processor.type();
    if (type == QStringLiteral("TemplateProcessing")) {
        readTemplate(processor);
    } else if (type == QStringLiteral("ByteLevel")) {
        // Only moves offsets; the ids stay.
    } else {
        processor.refuseType(QStringLiteral("Attention Lab reads the post-processors "
                                            "TemplateProcessing, ByteLevel and Sequence"));
    }
}

void HfTokenizer::readTemplate(const TokenizerFields& processor)
{
    // "single": [{"SpecialToken": {"id": "<s>", ...}}, {"Sequence": {"id": "A", ...}}], each
    // special token's ids in "special_tokens": {"<s>": {"ids": [1], ...}}.
    const QJsonValue single = processor.value(QStringLiteral("single"));
    if (!single.isArray())
        processor.refuse(QStringLiteral("single"),
                         QStringLiteral("is %1; expected an array of SpecialToken and Sequence "
                                        "items")
                             .arg(jsonTypeName(single)));
    const TokenizerFields specials = processor.object(QStringLiteral("special_tokens"));
    std::vector<int> before;
    std::vector<int> after;
    bool sawSequence = false;
    const QJsonArray items = single.toArray();
    for (qsizetype i = 0; i < items.size(); ++i) {
        const TokenizerFields item(
            m_path, QStringLiteral("%1[%2]").arg(processor.name(QStringLiteral("single"))).arg(i),
            items[i]);
        if (!item.isNull(QStringLiteral("Sequence"))) {
            const QString which =
                item.object(QStringLiteral("Sequence")).string(QStringLiteral("id"));
            if (which != QStringLiteral("A") || sawSequence)
                item.refuse(QStringLiteral("Sequence"),
                            QStringLiteral("is sequence %1; the single template holds sequence A "
                                           "once")
                                .arg(quotedSymbol(which)));
            sawSequence = true;
            continue;
        }
        if (item.isNull(QStringLiteral("SpecialToken")))
            item.refuse(QString(), QStringLiteral("is neither {\"SpecialToken\": ...} nor "
                                                  "{\"Sequence\": ...}"));
        const QString name =
            item.object(QStringLiteral("SpecialToken")).string(QStringLiteral("id"));
        if (specials.isNull(name))
            item.refuse(QStringLiteral("SpecialToken"),
                        QStringLiteral("names %1, which special_tokens does not hold")
                            .arg(quotedSymbol(name)));
        const std::vector<int> ids = idsOf(specials.object(name), QStringLiteral("ids"));
        std::vector<int>& side = sawSequence ? after : before;
        side.insert(side.end(), ids.begin(), ids.end());
    }
    if (!sawSequence)
        processor.refuse(QStringLiteral("single"), QStringLiteral("has no Sequence A"));
    // Applied after the processors before it: its ids go outside theirs.
    m_prefixIds.insert(m_prefixIds.begin(), before.begin(), before.end());
    m_suffixIds.insert(m_suffixIds.end(), after.begin(), after.end());
}

std::vector<HfTokenizer::Section> HfTokenizer::sections(const TextPiece& piece,
                                                        bool normalized) const
{
    // Leftmost-longest matches, as the Rust library's Aho-Corasick automaton finds them; a match
    // refused by single_word stays text, and the search goes on after it.
    const QString& text = piece.text;
    std::vector<Section> out;
    qsizetype start = 0;  // of the text not yet given out
    qsizetype i = 0;
    while (i < text.size()) {
        const AddedToken* best = nullptr;
        const QString* bestMatch = nullptr;
        const auto candidates = m_addedByFirst[normalized ? 1 : 0].constFind(text[i].unicode());
        if (candidates != m_addedByFirst[normalized ? 1 : 0].constEnd()) {
            for (const qsizetype index : *candidates) {
                const QString& match = m_addedMatch[size_t(index)];
                if ((!best || match.size() > bestMatch->size()) &&
                    QStringView(text).mid(i).startsWith(match)) {
                    best = &m_added[size_t(index)];
                    bestMatch = &match;
                }
            }
        }
        if (!best) {
            ++i;
            continue;
        }
        qsizetype matchStart = i;
        qsizetype matchEnd = i + bestMatch->size();
        i = matchEnd;
        if (best->singleWord && (isWordCharacter(codePointBefore(text, matchStart)) ||
                                 isWordCharacter(codePointAt(text, matchEnd))))
            continue;
        if (best->lstrip)
            while (matchStart > start && QChar::isSpace(codePointBefore(text, matchStart)))
                --matchStart;
        if (best->rstrip)
            while (matchEnd < text.size() && text[matchEnd].isSpace())
                ++matchEnd;
        if (matchStart > start)
            out.push_back(
                {-1, {text.mid(start, matchStart - start), piece.startsText && start == 0}});
        out.push_back({best->id, {}});
        start = i = matchEnd;
    }
    if (start < text.size())
        out.push_back({-1, {text.mid(start), piece.startsText && start == 0}});
    return out;
}

std::vector<int> HfTokenizer::encode(const QString& text) const
{
    std::vector<int> ids = m_prefixIds;
    for (const Section& raw : sections({withoutLoneSurrogates(text), true}, false)) {
        if (raw.addedId >= 0) {
            ids.push_back(raw.addedId);
            continue;
        }
        const TextPiece normalized{m_normalizer.normalize(raw.text.text), raw.text.startsText};
        for (const Section& section : sections(normalized, true)) {
            if (section.addedId >= 0) {
                ids.push_back(section.addedId);
                continue;
            }
            for (const TextPiece& piece : m_preTokenizer.split(section.text))
                m_model.tokenize(piece.text, ids);
        }
    }
    ids.insert(ids.end(), m_suffixIds.begin(), m_suffixIds.end());
    return ids;
}

const HfTokenizer::AddedToken* HfTokenizer::addedToken(int id) const
{
    const auto index = m_addedIndex.constFind(id);
    if (index == m_addedIndex.constEnd() || *index >= qsizetype(m_added.size()))
        return nullptr;
    return &m_added[size_t(*index)];
}

QString HfTokenizer::symbol(int id) const
{
    if (const AddedToken* added = addedToken(id))
        return added->content;
    return m_model.symbol(id);
}

QString HfTokenizer::decode(const std::vector<int>& ids) const
{
    QStringList symbols;
    for (const int id : ids) {
        const AddedToken* added = addedToken(id);
        if (added && added->special)
            continue;
        const QString shown = symbol(id);
        if (!shown.isEmpty())
            symbols.append(shown);
    }
    return m_decoder.decode(symbols, true);
}

QString HfTokenizer::text(int id) const
{
    if (const AddedToken* added = addedToken(id))
        return added->content;
    const QString stored = m_model.symbol(id);
    return stored.isEmpty() ? QString() : m_decoder.decode({stored}, false);
}

QString HfTokenizer::label(int id) const
{
    const AddedToken* added = addedToken(id);
    if (added && added->special)
        return added->content;
    return tokenLabel(text(id));
}

int HfTokenizer::vocabularySize() const
{
    return m_size;
}

}  // namespace attnlab

#include "model/gpt2_tokenizer.h"

#include "model/byte_level.h"
#include "model/tokenizer_json.h"

#include "errors.h"
#include "io/json_types.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <functional>

namespace attnlab {
namespace {

// The top-level value of a document: its object or its array.
QJsonValue rootOf(const QJsonDocument& document)
{
    if (document.isObject())
        return document.object();
    if (document.isArray())
        return document.array();
    return QJsonValue();
}

}  // namespace

void Gpt2Tokenizer::setVocabulary(const QString& source, const QHash<QString, int>& ids)
{
    m_source = source;
    m_ids = ids;
    int largest = -1;
    for (auto it = ids.begin(); it != ids.end(); ++it)
        largest = std::max(largest, it.value());
    m_symbols.assign(size_t(largest + 1), QString());
    m_added.assign(size_t(largest + 1), false);
    for (auto it = ids.begin(); it != ids.end(); ++it)
        m_symbols[size_t(it.value())] = it.key();
    m_byteIds.assign(256, -1);
    for (int b = 0; b < 256; ++b)
        m_byteIds[size_t(b)] = ids.value(QString(byteLevelCharacter(quint8(b))), -1);
}

void Gpt2Tokenizer::addMerge(const QString& where, const QString& left, const QString& right,
                             int rank)
{
    const QString merged = left + right;
    for (const QString* symbol : {&left, &right, &merged}) {
        if (!m_ids.contains(*symbol))
            refuseTokenizer(where, QStringLiteral("the merge %1 %2 makes %3, but %4 is not in the "
                                                  "vocabulary %5")
                                       .arg(quotedSymbol(left), quotedSymbol(right),
                                            quotedSymbol(merged), quotedSymbol(*symbol), m_source));
    }
    // insert() replaces: a pair listed twice keeps its last rank, as dict(zip(merges, ranks)).
    m_merges.insert(m_ids.value(left), m_ids.value(right), rank, m_ids.value(merged));
}

Gpt2Tokenizer Gpt2Tokenizer::fromVocabAndMerges(const QString& vocabPath, const QString& mergesPath)
{
    Gpt2Tokenizer tokenizer;
    tokenizer.setVocabulary(vocabPath, vocabularyOf(vocabPath, QStringLiteral("the vocabulary"),
                                                    rootOf(readTokenizerJson(vocabPath))));

    // encoder.py reads bpe_data.split('\n')[1:-1]: the "#version" line, then one pair a line.
    const QStringList lines = QString::fromUtf8(readTokenizerFile(mergesPath)).split(u'\n');
    qsizetype end = lines.size();  // blank lines at the end are allowed
    while (end > 0 && lines[end - 1].trimmed().isEmpty())
        --end;
    int rank = 0;
    for (qsizetype i = 0; i < end; ++i) {
        const QString where = QStringLiteral("%1 line %2").arg(mergesPath, QString::number(i + 1));
        if (i == 0 && lines[i].startsWith(QStringLiteral("#version")))
            continue;
        // merge_str.split(): the symbols are separated by white space (byte-level symbols
        // hold none).
        const QStringList symbols = lines[i].simplified().split(u' ', Qt::SkipEmptyParts);
        if (symbols.size() != 2)
            refuseTokenizer(where,
                            QStringLiteral("expected two symbols separated by a space, found %1 "
                                           "(%2)")
                                .arg(QString::number(symbols.size()), quotedSymbol(lines[i])));
        tokenizer.addMerge(where, symbols[0], symbols[1], rank++);
    }
    return tokenizer;
}

Gpt2Tokenizer Gpt2Tokenizer::fromTokenizerJson(const QString& path)
{
    const QJsonDocument document = readTokenizerJson(path);
    if (!document.isObject())
        refuseTokenizer(path, QStringLiteral("is %1; expected a tokenizer.json object")
                                  .arg(jsonTypeName(rootOf(document))));
    const QJsonObject root = document.object();
    const QJsonValue model = root.value(QStringLiteral("model"));
    if (!model.isObject())
        refuseTokenizer(path,
                        QStringLiteral("model is %1; expected an object").arg(jsonTypeName(model)));
    const QJsonValue type = model[QStringLiteral("type")];
    if (!type.isUndefined() && type.toString() != QStringLiteral("BPE"))
        refuseTokenizer(
            path, QStringLiteral("model.type is %1; Attention Lab reads BPE tokenizers")
                      .arg(type.isString() ? quotedSymbol(type.toString()) : jsonTypeName(type)));
    // GPT-2's pre-tokenization is ByteLevel (its pattern, bytes_to_unicode), no prefix space.
    const QJsonValue pre = root.value(QStringLiteral("pre_tokenizer"));
    if (!pre.isUndefined() && !pre.isNull()) {
        const QString preType = pre[QStringLiteral("type")].toString();
        if (preType != QStringLiteral("ByteLevel"))
            refuseTokenizer(path,
                            QStringLiteral("pre_tokenizer.type is %1; Attention Lab reads GPT-2's "
                                           "byte-level tokenizers (ByteLevel)")
                                .arg(quotedSymbol(preType)));
        if (pre[QStringLiteral("add_prefix_space")].toBool())
            refuseTokenizer(path,
                            QStringLiteral("pre_tokenizer.add_prefix_space is true; GPT-2 adds no "
                                           "space before the text"));
    }

    Gpt2Tokenizer tokenizer;
    tokenizer.setVocabulary(
        path, vocabularyOf(path, QStringLiteral("model.vocab"), model[QStringLiteral("vocab")]));

    const std::vector<std::pair<QString, QString>> merges =
        mergePairs(TokenizerFields(path, QStringLiteral("model"), model));
    for (std::size_t i = 0; i < merges.size(); ++i)
        tokenizer.addMerge(QStringLiteral("%1 model.merges[%2]").arg(path).arg(i), merges[i].first,
                           merges[i].second, int(i));

    // added_tokens: [{"id": 50256, "content": "<|endoftext|>", ...}, ...]
    const QJsonValue added = root.value(QStringLiteral("added_tokens"));
    if (!added.isUndefined() && !added.isNull() && !added.isArray())
        refuseTokenizer(
            path, QStringLiteral("added_tokens is %1; expected an array").arg(jsonTypeName(added)));
    const QJsonArray addedList = added.toArray();
    for (qsizetype i = 0; i < addedList.size(); ++i) {
        const QJsonValue token = addedList[i];
        const QJsonValue idValue = token[QStringLiteral("id")];
        const QJsonValue content = token[QStringLiteral("content")];
        const double number = idValue.toDouble(-1.0);
        if (!idValue.isDouble() || number != std::trunc(number) || number < 0 ||
            number > kLargestTokenId || !content.isString() || content.toString().isEmpty())
            refuseTokenizer(path,
                            QStringLiteral("added_tokens[%1] is not {\"id\": an integer from 0 to "
                                           "%2, \"content\": a string}")
                                .arg(i)
                                .arg(kLargestTokenId));
        const size_t id = size_t(number);
        const QString text = content.toString();
        if (id < tokenizer.m_symbols.size() && !tokenizer.m_symbols[id].isEmpty()) {
            if (tokenizer.m_symbols[id] == text)
                continue;  // GPT-2's <|endoftext|> is in the vocabulary too
            refuseTokenizer(path,
                            QStringLiteral("added_tokens[%1] gives the id %2 to %3, which is %4's")
                                .arg(i)
                                .arg(id)
                                .arg(quotedSymbol(text), quotedSymbol(tokenizer.m_symbols[id])));
        }
        if (id >= tokenizer.m_symbols.size()) {
            tokenizer.m_symbols.resize(id + 1);
            tokenizer.m_added.resize(id + 1, false);
        }
        tokenizer.m_symbols[id] = text;
        tokenizer.m_added[id] = true;
    }
    return tokenizer;
}

Gpt2Tokenizer Gpt2Tokenizer::fromFolder(const QString& folder)
{
    const QDir dir(folder);
    if (!QFileInfo(folder).isDir())
        refuseTokenizer(folder,
                        QStringLiteral("not a folder (looked for the tokenizer files vocab.json "
                                       "and merges.txt, or tokenizer.json)"));
    const QString vocab = dir.filePath(QStringLiteral("vocab.json"));
    const QString merges = dir.filePath(QStringLiteral("merges.txt"));
    if (QFileInfo::exists(vocab) && QFileInfo::exists(merges))
        return fromVocabAndMerges(vocab, merges);
    const QString json = dir.filePath(QStringLiteral("tokenizer.json"));
    if (QFileInfo::exists(json))
        return fromTokenizerJson(json);
    refuseTokenizer(folder, QStringLiteral("no tokenizer: looked for vocab.json and merges.txt, or "
                                           "tokenizer.json"));
}

std::vector<int> Gpt2Tokenizer::encode(const QString& text) const
{
    std::vector<int> ids;
    const QString subject = withoutLoneSurrogates(text);
    std::vector<int> word;
    qsizetype covered = 0;
    QRegularExpressionMatchIterator pieces = gpt2PieceExpression().globalMatch(subject);
    while (pieces.hasNext()) {
        const QRegularExpressionMatch piece = pieces.next();
        if (piece.capturedStart() != covered)
            break;
        covered = piece.capturedEnd();
        const QByteArray utf8 = piece.capturedView().toUtf8();
        word.clear();
        for (const char c : utf8) {
            const int byte = quint8(c);
            const int id = m_byteIds.empty() ? -1 : m_byteIds[size_t(byte)];
            if (id < 0)
                refuseTokenizer(m_source.isEmpty() ? QStringLiteral("the tokenizer") : m_source,
                                QStringLiteral("the vocabulary has no symbol %1 for the byte 0x%2")
                                    .arg(quotedSymbol(QString(byteLevelCharacter(quint8(byte)))),
                                         QStringLiteral("%1").arg(byte, 2, 16, QChar(u'0'))));
            word.push_back(id);
        }
        m_merges.applyInPasses(word);
        ids.insert(ids.end(), word.begin(), word.end());
    }
    // Every character is white space, a letter, a number or other: the pieces cover the text.
    // PCRE2 stopping early (a resource limit) would leave the rest out without a word.
    if (covered != subject.size())
        throw InputError(QStringLiteral("the text could not be split into GPT-2's pieces after "
                                        "character %1 of %2")
                             .arg(covered)
                             .arg(subject.size()));
    return ids;
}

QString Gpt2Tokenizer::symbol(int id) const
{
    if (id < 0 || size_t(id) >= m_symbols.size())
        return {};
    return m_symbols[size_t(id)];
}

QByteArray Gpt2Tokenizer::bytes(int id) const
{
    if (id < 0 || size_t(id) >= m_symbols.size())
        return {};
    const QString& symbol = m_symbols[size_t(id)];
    if (m_added[size_t(id)])
        return symbol.toUtf8();
    QByteArray result;
    result.reserve(symbol.size());
    for (qsizetype i = 0; i < symbol.size(); ++i) {
        const int byte = byteOfByteLevelCharacter(symbol[i]);
        if (byte >= 0) {
            result.append(char(byte));
        } else {
            // Not a bytes_to_unicode character (a vocabulary made otherwise): its own UTF-8.
            const qsizetype length = symbol[i].isHighSurrogate() && i + 1 < symbol.size() ? 2 : 1;
            result.append(QStringView(symbol).mid(i, length).toUtf8());
            i += length - 1;
        }
    }
    return result;
}

QString Gpt2Tokenizer::text(int id) const
{
    return decodeUtf8(bytes(id));
}

QString Gpt2Tokenizer::decode(const std::vector<int>& ids) const
{
    QByteArray joined;
    for (const int id : ids)
        joined.append(bytes(id));
    return decodeUtf8(joined);
}

QString Gpt2Tokenizer::label(int id) const
{
    return tokenLabel(text(id));
}

int Gpt2Tokenizer::vocabularySize() const
{
    return int(m_symbols.size());
}

}  // namespace attnlab

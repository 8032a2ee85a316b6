#include "model/hf_bpe_model.h"

#include "io/json_types.h"

#include <QJsonArray>

#include <algorithm>
#include <functional>

namespace attnlab {

QString byteFallbackSymbol(quint8 byte)
{
    return QStringLiteral("<0x%1>").arg(
        QString::number(byte, 16).toUpper().rightJustified(2, u'0'));
}

HfBpeModel HfBpeModel::read(const TokenizerFields& model)
{
    const QString type = model.string(QStringLiteral("type"), QStringLiteral("BPE"));
    if (type != QStringLiteral("BPE"))
        model.refuseType(QStringLiteral("Attention Lab reads BPE tokenizers"));
    const QJsonValue dropout = model.value(QStringLiteral("dropout"));
    if (!model.isNull(QStringLiteral("dropout")) && dropout.toDouble(-1.0) != 0.0)
        model.refuse(QStringLiteral("dropout"),
                     QStringLiteral("is %1; Attention Lab reads BPE without dropout (null)")
                         .arg(dropout.isDouble() ? QString::number(dropout.toDouble())
                                                 : jsonTypeName(dropout)));
    for (const QString& key :
         {QStringLiteral("continuing_subword_prefix"), QStringLiteral("end_of_word_suffix")}) {
        const QString affix = model.string(key, QString());
        if (!affix.isEmpty())
            model.refuse(key, QStringLiteral("is %1; Attention Lab reads BPE tokenizers without "
                                             "one (null)")
                                  .arg(quotedSymbol(affix)));
    }

    Settings settings;
    settings.unkToken = model.string(QStringLiteral("unk_token"), QString());
    settings.fuseUnk = model.boolean(QStringLiteral("fuse_unk"), false);
    settings.byteFallback = model.boolean(QStringLiteral("byte_fallback"), false);
    settings.ignoreMerges = model.boolean(QStringLiteral("ignore_merges"), false);
    return fromVocabulary(model.path(),
                          vocabularyOf(model.path(), model.name(QStringLiteral("vocab")),
                                       model.value(QStringLiteral("vocab"))),
                          model.name(QStringLiteral("vocab")), mergePairs(model),
                          model.name(QStringLiteral("merges")), settings);
}

HfBpeModel HfBpeModel::fromVocabulary(const QString& path, QHash<QString, int> ids,
                                      const QString& vocabularyName,
                                      const std::vector<std::pair<QString, QString>>& merges,
                                      const QString& mergesName, const Settings& settings)
{
    HfBpeModel bpe;
    bpe.m_path = path;
    bpe.m_ids = std::move(ids);
    int largest = -1;
    for (auto it = bpe.m_ids.cbegin(); it != bpe.m_ids.cend(); ++it)
        largest = std::max(largest, it.value());
    bpe.m_symbols.assign(size_t(largest + 1), QString());
    for (auto it = bpe.m_ids.cbegin(); it != bpe.m_ids.cend(); ++it)
        bpe.m_symbols[size_t(it.value())] = it.key();
    for (int b = 0; b < 256; ++b)
        bpe.m_byteIds[size_t(b)] = bpe.id(byteFallbackSymbol(quint8(b)));
    bpe.m_unkToken = settings.unkToken;
    bpe.m_fuseUnk = settings.fuseUnk;
    bpe.m_byteFallback = settings.byteFallback;
    bpe.m_ignoreMerges = settings.ignoreMerges;
    bpe.addMerges(merges, vocabularyName, mergesName);
    return bpe;
}

void HfBpeModel::addMerges(const std::vector<std::pair<QString, QString>>& merges,
                           const QString& vocabularyName, const QString& mergesName)
{
    m_merges.reserve(qsizetype(merges.size()));
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const auto& [left, right] = merges[i];
        const QString merged = left + right;
        for (const QString& symbol : {left, right, merged}) {
            if (!m_ids.contains(symbol))
                refuseTokenizer(
                    m_path, QStringLiteral("%1[%2] makes %3 from %4 and %5, but %6 is "
                                           "not in %7")
                                .arg(mergesName)
                                .arg(i)
                                .arg(quotedSymbol(merged), quotedSymbol(left), quotedSymbol(right),
                                     quotedSymbol(symbol), vocabularyName));
        }
        m_merges.insert(id(left), id(right), int(i), id(merged));
    }
}

QString HfBpeModel::symbol(int id) const
{
    if (id < 0 || id >= size())
        return {};
    return m_symbols[size_t(id)];
}

std::vector<int> HfBpeModel::firstSymbols(const QString& piece) const
{
    std::vector<int> word;
    // An unknown run waiting to be written: its unk_token id (written before the next known
    // character, as the Rust library does; after the bytes of a byte fallback in between).
    int pendingUnk = -1;
    for (qsizetype i = 0; i < piece.size();) {
        const qsizetype length =
            piece[i].isHighSurrogate() && i + 1 < piece.size() && piece[i + 1].isLowSurrogate() ? 2
                                                                                                : 1;
        const QString character = piece.mid(i, length);
        i += length;
        const int known = id(character);
        if (known >= 0) {
            if (pendingUnk >= 0)
                word.push_back(pendingUnk);
            pendingUnk = -1;
            word.push_back(known);
            continue;
        }
        if (m_byteFallback) {
            const QByteArray bytes = character.toUtf8();
            const bool allKnown = std::all_of(bytes.begin(), bytes.end(),
                                              [&](char b) { return m_byteIds[quint8(b)] >= 0; });
            if (allKnown) {
                for (const char b : bytes)
                    word.push_back(m_byteIds[quint8(b)]);
                continue;
            }
        }
        if (m_unkToken.isEmpty())
            continue;
        const int unk = id(m_unkToken);
        if (unk < 0)
            refuseTokenizer(m_path, QStringLiteral("model.unk_token %1 is not in model.vocab, and "
                                                   "the text holds a character outside it")
                                        .arg(quotedSymbol(m_unkToken)));
        if (pendingUnk >= 0 && !m_fuseUnk)
            word.push_back(pendingUnk);
        pendingUnk = unk;
    }
    if (pendingUnk >= 0)
        word.push_back(pendingUnk);
    return word;
}

void HfBpeModel::tokenize(const QString& piece, std::vector<int>& ids) const
{
    if (piece.isEmpty())
        return;
    if (m_ignoreMerges) {
        const int whole = id(piece);
        if (whole >= 0) {
            ids.push_back(whole);
            return;
        }
    }
    std::vector<int> word = firstSymbols(piece);
    m_merges.applyOneAtATime(word);
    ids.insert(ids.end(), word.begin(), word.end());
}

}  // namespace attnlab

#pragma once

#include "model/bpe_merges.h"
#include "model/text_tokenizer.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>

#include <vector>

namespace attnlab {

// GPT-2's byte-level BPE tokenizer (Radford et al. 2019; openai/gpt-2 encoder.py), giving exactly
// GPT-2's token ids:
// 1. pre-tokenization by GPT-2's pattern
//    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//    with the semantics of Python's `regex` module that encoder.py uses: matched on code points
//    (an emoji outside the BMP is one character), case-sensitive ("'S" is not a contraction),
//    \s the Unicode White_Space characters (which PCRE2's \s is not: it adds U+180E), \p{L} and
//    \p{N} by the Unicode tables of the PCRE2 that Qt uses (characters assigned after its
//    Unicode version count as neither); a lone UTF-16 surrogate is read as U+FFFD;
// 2. each piece's UTF-8 bytes mapped to printable characters by bytes_to_unicode (printable
//    Latin-1 bytes stand for themselves, the others for U+0100 upwards: a space is "Ġ" U+0120,
//    a newline "Ċ" U+010A);
// 3. the merges applied in rank order (lowest rank first, every occurrence of that pair left to
//    right) until none applies;
// 4. each resulting symbol looked up in the vocabulary.
// Text such as "<|endoftext|>" is encoded as text, as encoder.py does: added (special) tokens
// of a tokenizer.json only name their ids for symbol(), text() and label().
// Every merge must make a symbol of the vocabulary from two symbols of the vocabulary (a merges
// file that does not belong to the vocabulary is refused when loaded, as Hugging Face does); a
// pair listed twice takes the rank of its last line, as encoder.py's dict does.
// All functions are const and keep no cache: encode() may run in several threads at once.
class Gpt2Tokenizer : public TextTokenizer {
public:
    // From GPT-2's vocab.json (symbol -> id) and merges.txt ("#version" line optional, then one
    // "left right" pair a line, rank = line order). Throws InputError naming the file and line.
    static Gpt2Tokenizer fromVocabAndMerges(const QString& vocabPath, const QString& mergesPath);
    // From a Hugging Face tokenizer.json whose model is BPE (model.vocab, model.merges as
    // "a b" strings or [a, b] pairs; added_tokens name more ids) and whose pre-tokenizer, if
    // any, is ByteLevel without add_prefix_space. Throws InputError naming the file.
    static Gpt2Tokenizer fromTokenizerJson(const QString& path);
    // From a model folder: vocab.json + merges.txt when both are there, else tokenizer.json.
    // Throws InputError naming the folder when neither is there.
    static Gpt2Tokenizer fromFolder(const QString& folder);

    // The token ids of text. Throws InputError naming the symbol when a byte of the text has no
    // symbol in the vocabulary (never with GPT-2's own vocabulary).
    std::vector<int> encode(const QString& text) const override;
    // The text of ids: their bytes joined, then decoded as UTF-8 (so a character split across
    // tokens comes back whole); unknown ids are skipped. decode(encode(t)) == t for any valid t.
    QString decode(const std::vector<int>& ids) const override;
    // The vocabulary's symbol of an id, as stored ("Ġcat"); empty for an unknown id.
    QString symbol(int id) const;
    // The bytes an id stands for (the symbol through the inverse of bytes_to_unicode; an added
    // token's content as UTF-8): " cat". Empty for an unknown id.
    QByteArray bytes(int id) const;
    // The text an id stands for (its bytes decoded as UTF-8; a token holding part of a
    // multi-byte character shows U+FFFD): " cat".
    QString text(int id) const override;
    // The label a heatmap shows for an id: its text with a leading space drawn as "␣"
    // (U+2423; every space of a token of spaces only), a newline as "\n" (the two characters),
    // a tab as "\t", a carriage return as "\r"; "␣cat".
    QString label(int id) const override;
    // The number of ids (the largest id + 1).
    int vocabularySize() const override;

private:
    // Fills m_ids, m_symbols and m_byteIds from symbol -> id pairs read from `source`.
    void setVocabulary(const QString& source, const QHash<QString, int>& ids);
    // Adds the merge left + right of `rank`; throws InputError starting with `where` when a
    // symbol is not in the vocabulary.
    void addMerge(const QString& where, const QString& left, const QString& right, int rank);

    // encode() is called from several threads at once (the window's worker, the command line):
    // it must not write shared state without a lock.
    QString m_source;                // the file the vocabulary came from, for messages
    QHash<QString, int> m_ids;       // symbol -> id
    std::vector<QString> m_symbols;  // id -> symbol (empty where no symbol has the id)
    std::vector<bool> m_added;       // id -> an added token (its symbol is its text)
    std::vector<int> m_byteIds;      // byte -> id of its bytes_to_unicode symbol, -1 if none
    BpeMerges m_merges;              // rank = the merge's line in merges.txt
};

}  // namespace attnlab

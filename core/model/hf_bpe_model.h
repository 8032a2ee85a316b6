#pragma once

#include "model/bpe_merges.h"
#include "model/tokenizer_json.h"

#include <QHash>
#include <QString>

#include <array>
#include <utility>
#include <vector>

namespace attnlab {

// The symbol of a byte in a vocabulary with byte fallback: "<0x0A>" (two upper-case hex digits).
QString byteFallbackSymbol(quint8 byte);

// The BPE model of a Hugging Face tokenizer.json ("model": {"type": "BPE", ...}), as the Rust
// library's models/bpe runs it (no dropout):
// - with ignore_merges, a piece that is itself in the vocabulary is that one id;
// - otherwise the piece's characters are its first symbols: a character of the vocabulary is its
//   id; one outside it is, with byte_fallback, its UTF-8 bytes as the symbols <0xNN> (when all of
//   them are in the vocabulary), else unk_token (consecutive unknown characters make one unk_token
//   with fuse_unk), else dropped;
// - then merges apply one at a time, the pair of lowest rank first and, among equal ranks, the
//   leftmost (which can order merges differently from GPT-2's encoder.py, Gpt2Tokenizer, when a
//   merge makes a pair of lower rank than its own).
// Merges are "left right" strings or [left, right] pairs, rank = position in the list (a pair
// listed twice takes its last rank); left, right and left + right must all be in the vocabulary.
class HfBpeModel {
public:
    // How the model treats what the vocabulary lacks, and whether whole pieces skip the merges.
    struct Settings {
        QString unkToken;  // empty when there is none
        bool fuseUnk = false;
        bool byteFallback = false;
        bool ignoreMerges = false;
    };

    // From the object `model` of a tokenizer.json. Throws InputError naming the file and field.
    static HfBpeModel read(const TokenizerFields& model);
    // From a vocabulary (symbol -> id, ids in [0, kLargestTokenId]) and merges (left, right) in
    // rank order, from any file (a GGUF file's metadata); vocabularyName and mergesName name them
    // in messages ("tokenizer.ggml.tokens", "tokenizer.ggml.merges"). Throws InputError naming
    // path as read() does for the merges.
    static HfBpeModel fromVocabulary(const QString& path, QHash<QString, int> ids,
                                     const QString& vocabularyName,
                                     const std::vector<std::pair<QString, QString>>& merges,
                                     const QString& mergesName, const Settings& settings);

    // Appends the ids of one pre-tokenized piece. Throws InputError naming the file when the
    // piece needs unk_token and the vocabulary has no such symbol.
    void tokenize(const QString& piece, std::vector<int>& ids) const;
    // The id of a symbol, -1 when it is not in the vocabulary.
    int id(const QString& symbol) const { return m_ids.value(symbol, -1); }
    // The symbol of an id as stored ("▁the", "Ġthe", "<0x0A>"); empty for an unknown id.
    QString symbol(int id) const;
    // The largest id of the vocabulary + 1.
    int size() const { return int(m_symbols.size()); }

private:
    // Adds the merges (left, right and left + right in the vocabulary), rank = position; the
    // names for messages.
    void addMerges(const std::vector<std::pair<QString, QString>>& merges,
                   const QString& vocabularyName, const QString& mergesName);
    // The first symbols of a piece: its characters' ids, byte fallback and unk_token applied.
    std::vector<int> firstSymbols(const QString& piece) const;

    QString m_path;  // the tokenizer.json, for messages
    QHash<QString, int> m_ids;
    std::vector<QString> m_symbols;    // id -> symbol, empty where no symbol has the id
    BpeMerges m_merges;                // rank = the merge's position in the list
    std::array<int, 256> m_byteIds{};  // byte -> id of "<0xNN>", -1 if none
    QString m_unkToken;                // empty when there is none
    bool m_fuseUnk = false;
    bool m_byteFallback = false;
    bool m_ignoreMerges = false;
};

}  // namespace attnlab

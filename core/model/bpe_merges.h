#pragma once

#include <QHash>

#include <vector>

namespace attnlab {

// The merges of a byte-pair encoding: a pair of symbol ids -> the pair's rank and the id of the
// merged symbol; and the two ways the tokenizers apply them to a word (the ids of its first
// symbols), GPT-2's encoder.py (Gpt2Tokenizer) and Hugging Face's tokenizers (HfBpeModel), which
// order the merges differently only when a merge makes a pair of lower rank than its own.
class BpeMerges {
public:
    struct Merge {
        int rank;
        int id;  // of the merged symbol
    };

    void reserve(qsizetype count) { m_merges.reserve(count); }
    // Adds the merge left + right -> merged of rank; a pair added again keeps its last rank.
    void insert(int left, int right, int rank, int merged);
    // The merge of the pair (left, right), or null when it has none.
    const Merge* find(int left, int right) const;

    // GPT-2's bpe(): while some adjacent pair has a rank, take the pair of lowest rank and merge
    // every occurrence of it, left to right without overlap ("a a a" -> "aa a"). All pairs of the
    // lowest rank are taken out together and merged in order of position, which is encoder.py's
    // pass, in O(n log n) for a word of n symbols instead of O(n) a merge (a 100,000-letter piece
    // would take seconds). A merge never makes a pair of its own rank (the merged symbol is longer
    // than both halves), and pairs it makes of a lower rank (merges files are not always in
    // order) wait for the next pass, as in encoder.py.
    void applyInPasses(std::vector<int>& word) const;
    // Hugging Face's Word::merge_all without dropout: merges one at a time, the pair of lowest
    // rank first and, among equal ranks, the leftmost.
    void applyOneAtATime(std::vector<int>& word) const;

private:
    static quint64 pairKey(int left, int right)
    {
        return (quint64(quint32(left)) << 32) | quint32(right);
    }
    QHash<quint64, Merge> m_merges;  // pairKey(left id, right id) -> rank and merged id
};

}  // namespace attnlab

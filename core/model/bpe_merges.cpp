#include "model/bpe_merges.h"

#include <algorithm>
#include <functional>

namespace attnlab {

namespace {

// A word being merged: its symbols stay at their first positions, linked both ways (a merged-away
// position holds -1), and the pairs of adjacent symbols that have a merge wait in a min-heap by
// (rank, position). A pair in the heap is stale once a symbol at its place has changed; the
// callers check before merging.
class MergeQueue {
public:
    struct Pair {
        int rank;
        int position;  // of the left symbol
        int left;
        int right;
        int merged;
        bool operator>(const Pair& other) const
        {
            return rank != other.rank ? rank > other.rank : position > other.position;
        }
    };

    MergeQueue(std::vector<int>& word, const BpeMerges& merges)
        : m_word(word), m_merges(merges), m_next(word.size()), m_previous(word.size())
    {
        const int size = int(word.size());
        for (int p = 0; p < size; ++p) {
            m_next[size_t(p)] = p + 1 < size ? p + 1 : -1;
            m_previous[size_t(p)] = p - 1;
        }
        for (int p = 0; p + 1 < size; ++p)
            pushPairAt(p);
    }

    bool empty() const { return m_heap.empty(); }
    const Pair& top() const { return m_heap.front(); }
    Pair pop()
    {
        std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<>());
        const Pair pair = m_heap.back();
        m_heap.pop_back();
        return pair;
    }
    // The position of the symbol after the one at p, or -1.
    int next(int p) const { return m_next[size_t(p)]; }
    int symbol(int p) const { return m_word[size_t(p)]; }

    // The symbol at p and the next one become `merged`; the pairs it now makes with its
    // neighbours are queued.
    void merge(int p, int merged)
    {
        const int q = m_next[size_t(p)];
        m_word[size_t(p)] = merged;
        m_word[size_t(q)] = -1;
        m_next[size_t(p)] = m_next[size_t(q)];
        if (m_next[size_t(q)] >= 0)
            m_previous[size_t(m_next[size_t(q)])] = p;
        if (m_previous[size_t(p)] >= 0)
            pushPairAt(m_previous[size_t(p)]);
        pushPairAt(p);
    }

    // Drops the merged-away positions from the word.
    void finish() { m_word.erase(std::remove(m_word.begin(), m_word.end(), -1), m_word.end()); }

private:
    void pushPairAt(int p)
    {
        const int q = m_next[size_t(p)];
        if (q < 0)
            return;
        const int left = m_word[size_t(p)];
        const int right = m_word[size_t(q)];
        const BpeMerges::Merge* merge = m_merges.find(left, right);
        if (!merge)
            return;
        m_heap.push_back({merge->rank, p, left, right, merge->id});
        std::push_heap(m_heap.begin(), m_heap.end(), std::greater<>());
    }

    std::vector<int>& m_word;
    const BpeMerges& m_merges;
    std::vector<int> m_next;  // the position of the next symbol, or -1
    std::vector<int> m_previous;
    std::vector<Pair> m_heap;
};

}  // namespace

void BpeMerges::insert(int left, int right, int rank, int merged)
{
    m_merges.insert(pairKey(left, right), {rank, merged});
}

const BpeMerges::Merge* BpeMerges::find(int left, int right) const
{
    const auto merge = m_merges.constFind(pairKey(left, right));
    return merge == m_merges.constEnd() ? nullptr : &*merge;
}

void BpeMerges::applyInPasses(std::vector<int>& word) const
{
    if (word.size() < 2)
        return;
    MergeQueue queue(word, *this);
    std::vector<MergeQueue::Pair> pass;
    while (!queue.empty()) {
        pass.clear();
        const int rank = queue.top().rank;
        while (!queue.empty() && queue.top().rank == rank)
            pass.push_back(queue.pop());
        for (const MergeQueue::Pair& pair : pass) {  // left to right
            const int p = pair.position;
            const int q = queue.next(p);
            if (queue.symbol(p) != pair.left || q < 0 || queue.symbol(q) != pair.right)
                continue;  // stale, or overlapping the merge just before ("a a a")
            queue.merge(p, pair.merged);
        }
    }
    queue.finish();
}

void BpeMerges::applyOneAtATime(std::vector<int>& word) const
{
    if (word.size() < 2)
        return;
    MergeQueue queue(word, *this);
    while (!queue.empty()) {
        const MergeQueue::Pair pair = queue.pop();
        const int p = pair.position;
        const int q = queue.next(p);
        if (queue.symbol(p) < 0 || q < 0)
            continue;  // merged away, or now the last symbol
        const Merge* merge = find(queue.symbol(p), queue.symbol(q));
        if (!merge || merge->id != pair.merged)
            continue;  // the symbols at p no longer make the pair's merged id
        queue.merge(p, pair.merged);
    }
    queue.finish();
}

}  // namespace attnlab

#include "model/key_value_cache.h"

#include "attention/exact_attention.h"
#include "parallel.h"

#include <algorithm>
#include <cmath>

namespace attnlab {

using Eigen::Index;

namespace {

// The rows a cache starts with when nothing was reserved.
constexpr Index kFirstRows = 64;

}  // namespace

KeyValueCache::KeyValueCache(const AttentionHeads& heads, Index window)
    : m_heads(heads),
      m_window(window),
      m_scale(float(1 / std::sqrt(double(heads.d)))),
      m_keys(std::size_t(heads.keyValueHeads), Matrix<float>(0, heads.d)),
      m_values(std::size_t(heads.keyValueHeads), Matrix<float>(0, heads.d))
{
}

void KeyValueCache::reserve(Index tokens)
{
    if (tokens <= m_keys.front().rows())
        return;
    for (std::size_t g = 0; g < m_keys.size(); ++g) {
        m_keys[g].conservativeResize(tokens, Eigen::NoChange);
        m_values[g].conservativeResize(tokens, Eigen::NoChange);
    }
}

void KeyValueCache::append(const Matrix<float>& qkv)
{
    const Index rows = qkv.rows();
    const Index d = m_heads.d;
    const Index keyColumn = Index(m_heads.heads) * d;
    const Index valueColumn = keyColumn + Index(m_heads.keyValueHeads) * d;
    if (m_length + rows > m_keys.front().rows())
        reserve(std::max({m_length + rows, 2 * m_keys.front().rows(), kFirstRows}));
    for (Index g = 0; g < m_heads.keyValueHeads; ++g) {
        m_keys[std::size_t(g)].middleRows(m_length, rows) = qkv.middleCols(keyColumn + g * d, d);
        m_values[std::size_t(g)].middleRows(m_length, rows) =
            qkv.middleCols(valueColumn + g * d, d);
    }
    m_length += rows;
}

void KeyValueCache::attend(const Matrix<float>& qkv, Matrix<float>& out)
{
    const Index rows = qkv.rows();
    const Index d = m_heads.d;
    const Index group = m_heads.heads / m_heads.keyValueHeads;
    const Index first = m_length;
    // Every row's keys and values first: row r's query then reads the keys up to its own.
    append(qkv);
    const Index tasks = rows * m_heads.keyValueHeads;
    forEachRowBlock(tasks, 1, [&](Index task, Index) {
        const Index r = task / m_heads.keyValueHeads;
        const Index g = task % m_heads.keyValueHeads;
        const Index i = first + r;  // the token's position: it sees keys [begin, i]
        const Index begin = m_window > 0 ? std::max<Index>(0, i + 1 - m_window) : 0;
        const Eigen::Map<const Matrix<float>> queries(qkv.row(r).data() + g * group * d, group, d);
        Eigen::Map<Matrix<float>> outputs(out.row(r).data() + g * group * d, group, d);
        Eigen::MatrixXf scores;
        queryAttention(queries, m_keys[std::size_t(g)].middleRows(begin, i + 1 - begin),
                       m_values[std::size_t(g)].middleRows(begin, i + 1 - begin), m_scale, scores,
                       outputs);
    });
}

double KeyValueCache::bytes() const
{
    return 2.0 * double(m_length) * double(m_heads.d) * m_heads.keyValueHeads * sizeof(float);
}

}  // namespace attnlab

#include "attention/random.h"

#include <cmath>

namespace attnlab {

namespace {

std::uint64_t splitMix64(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::uint64_t rotateLeft(std::uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

}  // namespace

Rng::Rng(std::uint64_t seed, RandomStream stream, std::uint64_t substream)
{
    // Mix the three words one after the other so that (seed, stream, substream) triples that
    // differ anywhere start far apart.
    std::uint64_t mixer = seed;
    std::uint64_t key = splitMix64(mixer);
    mixer = key ^ static_cast<std::uint64_t>(stream);
    key = splitMix64(mixer);
    mixer = key ^ substream;
    for (std::uint64_t& word : m_state)
        word = splitMix64(mixer);
}

Rng Rng::fromState(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3)
{
    Rng rng;
    rng.m_state[0] = s0;
    rng.m_state[1] = s1;
    rng.m_state[2] = s2;
    rng.m_state[3] = s3;
    return rng;
}

std::uint64_t Rng::nextBits()
{
    const std::uint64_t result = rotateLeft(m_state[1] * 5, 7) * 9;
    const std::uint64_t t = m_state[1] << 17;
    m_state[2] ^= m_state[0];
    m_state[3] ^= m_state[1];
    m_state[1] ^= m_state[2];
    m_state[0] ^= m_state[3];
    m_state[2] ^= t;
    m_state[3] = rotateLeft(m_state[3], 45);
    return result;
}

double Rng::uniform()
{
    return (double(nextBits() >> 11) + 0.5) * 0x1.0p-53;
}

double Rng::normal()
{
    for (;;) {
        const double u = uniform();
        const double v = 1.7156 * (uniform() - 0.5);
        const double x = u - 0.449871;
        const double y = std::abs(v) + 0.386595;
        const double q = x * x + y * (0.19600 * y - 0.25472 * x);
        if (q < 0.27597)
            return v / u;
        if (q <= 0.27846 && v * v <= -4.0 * std::log(u) * u * u)
            return v / u;
    }
}

std::uint64_t hashText(QStringView text)
{
    std::uint64_t hash = 0xCBF29CE484222325ULL;
    for (const QChar c : text) {
        hash ^= c.unicode();
        hash *= 0x100000001B3ULL;
    }
    return hash;
}

}  // namespace attnlab

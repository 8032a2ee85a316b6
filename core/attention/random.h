#pragma once

#include <QStringView>

#include <cstdint>

namespace attnlab {

// Independent random streams drawn from one user seed. Each use of randomness in the engine has
// its own stream, so changing, say, the number of features does not move the token embeddings.
enum class RandomStream : std::uint64_t {
    Projection = 1,   // W of the random-feature maps (one sub-stream per head)
    TokenEmbedding,   // the Gaussian vector of each token (one sub-stream per token text)
    QueryWeights,     // Wq (one sub-stream per head)
    KeyWeights,       // Wk
    ValueWeights,     // Wv
    PatchEmbedding,   // the linear patch embedding of image input
    RandomInput,      // Q, K, V of random input
    KeyProjection,    // Linformer's E (one sub-stream per head)
    ValueProjection,  // Linformer's F
    TokenSampling,    // the uniform draw of each generated token (one sub-stream per step)
    FeatureMapFit,    // a fit's initial rows of W past d and its batches (fitted feature maps)
};

// A portable pseudo-random generator: xoshiro256** (Blackman and Vigna), seeded through
// splitmix64 from (seed, stream, substream). The same arguments give the same numbers on every
// platform, compiler and standard library, unlike std::normal_distribution.
class Rng {
public:
    explicit Rng(std::uint64_t seed, RandomStream stream = RandomStream::Projection,
                 std::uint64_t substream = 0);

    // A generator with the given xoshiro256** state (not all zero), for known-answer tests
    // against the reference implementation.
    static Rng fromState(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3);

    // The next 64 random bits.
    std::uint64_t nextBits();

    // Uniform on the open interval (0, 1), with 53 random bits.
    double uniform();

    // Standard normal N(0, 1) by Leva's ratio-of-uniforms method (ACM TOMS 18, 1992): the value
    // is v / u, one correctly rounded division, so it is bit-identical wherever IEEE doubles are;
    // the logarithm only decides acceptance in a thin band of (u, v).
    double normal();

private:
    Rng() = default;

    std::uint64_t m_state[4];
};

// 64-bit FNV-1a hash of the UTF-16 code units of text: the sub-stream of a token's embedding.
std::uint64_t hashText(QStringView text);

}  // namespace attnlab

#pragma once

// What the tests of one head's attention share: a random head of a given norm.

#include "inputs/inputs.h"

#include <cstdint>

namespace attnlab::test {

// Q, K, V of random input: L rows of dimension d, queries and keys of norm `norm`, from `seed`.
inline HeadTensors randomHead(int length, int d, double norm, std::uint64_t seed)
{
    InputSpec spec;
    spec.kind = InputKind::Random;
    spec.length = length;
    spec.headDim = d;
    spec.rowNorm = norm;
    spec.seed = seed;
    return buildInput(spec).heads.front();
}

}  // namespace attnlab::test

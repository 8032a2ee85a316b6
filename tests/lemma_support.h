#pragma once

// What the tests of the error analysis share: the kernel MSE of one pair as docs/design.md 2.10
// writes it (Lemma 2), computed here and not by the code under test.

#include "attention/methods.h"
#include "types.h"

#include <cmath>

namespace attnlab::test {

// Lemma 2 as docs/design.md 2.10 writes it, with z = x + y and SM = exp(x.y).
inline double designLemma2(Method kind, double m, const VectorD& x, const VectorD& y)
{
    const double sm = std::exp(x.dot(y));
    const double z2 = (x + y).squaredNorm();
    const double positive = 1 / m * std::exp(z2) * sm * sm * (1 - std::exp(-z2));
    if (kind == Method::FavorPositive)
        return positive;
    if (kind == Method::FavorHyperbolic)
        return 0.5 * (1 - std::exp(-z2)) * positive;
    const double d2 = 1 - std::exp(-(x - y).squaredNorm());
    return 1 / (2 * m) * std::exp(z2) / (sm * sm) * d2 * d2;
}

}  // namespace attnlab::test

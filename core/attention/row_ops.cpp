#include "attention/row_ops.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>

namespace attnlab {

namespace {

// The argument below which exp(x) is not a normal float: exp(-87.33654) = 2^-126.
constexpr float kSmallestNormalExponent = -87.33654f;

template <typename T>
T eigenExpShiftedSum(T* x, Eigen::Index n, T shift)
{
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> values(x, n);
    values = (values - shift).exp();
    return values.sum();
}

}  // namespace

float expShiftedSum(float* x, Eigen::Index n, float shift)
{
#if defined(__AVX2__) && defined(__FMA__)
    // Cephes expf: ln 2 in two parts (the first exact in 9 bits) and the polynomial p.
    const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
    const __m256 ln2High = _mm256_set1_ps(0.693359375f);
    const __m256 ln2Low = _mm256_set1_ps(-2.12194440e-4f);
    const __m256 p5 = _mm256_set1_ps(1.9875691500e-4f);
    const __m256 p4 = _mm256_set1_ps(1.3981999507e-3f);
    const __m256 p3 = _mm256_set1_ps(8.3334519073e-3f);
    const __m256 p2 = _mm256_set1_ps(4.1665795894e-2f);
    const __m256 p1 = _mm256_set1_ps(1.6666665459e-1f);
    const __m256 p0 = _mm256_set1_ps(5.0000001201e-1f);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 lowest = _mm256_set1_ps(kSmallestNormalExponent);
    const __m256 shifts = _mm256_set1_ps(shift);
    const __m256i bias = _mm256_set1_epi32(127);
    __m256 sums = _mm256_setzero_ps();
    Eigen::Index j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 t = _mm256_max_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), shifts), lowest);
        const __m256 k =
            _mm256_round_ps(_mm256_mul_ps(t, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256 r = _mm256_fnmadd_ps(k, ln2High, t);
        r = _mm256_fnmadd_ps(k, ln2Low, r);
        __m256 p = _mm256_fmadd_ps(p5, r, p4);
        p = _mm256_fmadd_ps(p, r, p3);
        p = _mm256_fmadd_ps(p, r, p2);
        p = _mm256_fmadd_ps(p, r, p1);
        p = _mm256_fmadd_ps(p, r, p0);
        const __m256 expR = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, one));
        // 2^k for k in [-126, 0]: k + 127 in the exponent field.
        const __m256 twoToK = _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), bias), 23));
        const __m256 value = _mm256_mul_ps(expR, twoToK);
        _mm256_storeu_ps(x + j, value);
        sums = _mm256_add_ps(sums, value);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sums);
    float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    if (j < n)
        sum += eigenExpShiftedSum(x + j, n - j, shift);
    return sum;
#else
    return eigenExpShiftedSum(x, n, shift);
#endif
}

double expShiftedSum(double* x, Eigen::Index n, double shift)
{
    return eigenExpShiftedSum(x, n, shift);
}

}  // namespace attnlab

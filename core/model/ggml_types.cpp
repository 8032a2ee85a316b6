#include "model/ggml_types.h"

#include <QFloat16>
#include <QStringList>
#include <QtEndian>

#include <array>
#include <cstring>

namespace attnlab {

namespace {

// ggml.c's type_traits: every type number ggml defines, with its block. The numbers missing here
// (4, 5, 31-33, 36-38) are types ggml removed.
struct NumberedTraits {
    std::uint32_t type;
    GgmlTypeTraits traits;
};
constexpr NumberedTraits kTypes[] = {
    {0, {"F32", 1, 4, true}},          {1, {"F16", 1, 2, true}},
    {2, {"Q4_0", 32, 18, true}},       {3, {"Q4_1", 32, 20, true}},
    {6, {"Q5_0", 32, 22, true}},       {7, {"Q5_1", 32, 24, true}},
    {8, {"Q8_0", 32, 34, true}},       {9, {"Q8_1", 32, 36, false}},
    {10, {"Q2_K", 256, 84, false}},    {11, {"Q3_K", 256, 110, false}},
    {12, {"Q4_K", 256, 144, true}},    {13, {"Q5_K", 256, 176, true}},
    {14, {"Q6_K", 256, 210, true}},    {15, {"Q8_K", 256, 292, false}},
    {16, {"IQ2_XXS", 256, 66, false}}, {17, {"IQ2_XS", 256, 74, false}},
    {18, {"IQ3_XXS", 256, 98, false}}, {19, {"IQ1_S", 256, 50, false}},
    {20, {"IQ4_NL", 32, 18, false}},   {21, {"IQ3_S", 256, 110, false}},
    {22, {"IQ2_S", 256, 82, false}},   {23, {"IQ4_XS", 256, 136, false}},
    {24, {"I8", 1, 1, false}},         {25, {"I16", 1, 2, false}},
    {26, {"I32", 1, 4, false}},        {27, {"I64", 1, 8, false}},
    {28, {"F64", 1, 8, false}},        {29, {"IQ1_M", 256, 56, false}},
    {30, {"BF16", 1, 2, true}},        {34, {"TQ1_0", 256, 54, false}},
    {35, {"TQ2_0", 256, 66, false}},   {39, {"MXFP4", 32, 17, false}},
    {40, {"NVFP4", 64, 36, false}},    {41, {"Q1_0", 128, 18, false}},
    {42, {"Q2_0", 64, 18, false}},
};

constexpr std::int64_t kSuperBlock = 256;  // QK_K

// A half-precision number stored little-endian at p.
inline float halfAt(const unsigned char* p)
{
    const quint16 bits = qFromLittleEndian<quint16>(p);
    qfloat16 half;
    std::memcpy(static_cast<void*>(&half), &bits, sizeof bits);
    return float(half);
}

void fromF32(const unsigned char* data, std::int64_t count, float* out)
{
    qFromLittleEndian<float>(data, count, out);
}

void fromF16(const unsigned char* data, std::int64_t count, float* out)
{
    // Through an aligned buffer of qfloat16 (the data may sit at an odd offset), then Qt's bulk
    // conversion (F16C instructions where the CPU has them).
    constexpr std::int64_t chunk = 1024;
    std::array<qfloat16, chunk> buffer;
    for (std::int64_t i = 0; i < count; i += chunk) {
        const std::int64_t n = std::min(chunk, count - i);
        qFromLittleEndian<quint16>(data + 2 * i, n, static_cast<void*>(buffer.data()));
        qFloatFromFloat16(out + i, buffer.data(), n);
    }
}

void fromBF16(const unsigned char* data, std::int64_t count, float* out)
{
    for (std::int64_t i = 0; i < count; ++i) {
        const quint32 bits = quint32(qFromLittleEndian<quint16>(data + 2 * i)) << 16;
        std::memcpy(out + i, &bits, sizeof bits);
    }
}

// block_q8_0: d (half), qs[32] (int8).
void fromQ8_0(const unsigned char* block, std::int64_t blocks, float* out)
{
    for (std::int64_t b = 0; b < blocks; ++b, block += 34, out += 32) {
        const float d = halfAt(block);
        const auto* qs = reinterpret_cast<const signed char*>(block + 2);
        for (int j = 0; j < 32; ++j)
            out[j] = float(qs[j]) * d;
    }
}

// block_q4_0: d, qs[16]; value j the low nibble of qs[j], value j + 16 its high nibble.
void fromQ4_0(const unsigned char* block, std::int64_t blocks, float* out)
{
    for (std::int64_t b = 0; b < blocks; ++b, block += 18, out += 32) {
        const float d = halfAt(block);
        const unsigned char* qs = block + 2;
        for (int j = 0; j < 16; ++j) {
            out[j] = float((qs[j] & 0x0F) - 8) * d;
            out[j + 16] = float((qs[j] >> 4) - 8) * d;
        }
    }
}

// block_q4_1: d, m, qs[16].
void fromQ4_1(const unsigned char* block, std::int64_t blocks, float* out)
{
    for (std::int64_t b = 0; b < blocks; ++b, block += 20, out += 32) {
        const float d = halfAt(block);
        const float m = halfAt(block + 2);
        const unsigned char* qs = block + 4;
        for (int j = 0; j < 16; ++j) {
            out[j] = float(qs[j] & 0x0F) * d + m;
            out[j + 16] = float(qs[j] >> 4) * d + m;
        }
    }
}

// The 5-bit values of a Q5 block, low nibbles in qs[16], fifth bits in qh: bit j for value j.
inline void fiveBitValues(const unsigned char* qh, const unsigned char* qs, int* values)
{
    const quint32 high = qFromLittleEndian<quint32>(qh);
    for (int j = 0; j < 16; ++j) {
        values[j] = (qs[j] & 0x0F) | int(((high >> j) << 4) & 0x10);
        values[j + 16] = (qs[j] >> 4) | int((high >> (j + 12)) & 0x10);
    }
}

// block_q5_0: d, qh[4], qs[16].
void fromQ5_0(const unsigned char* block, std::int64_t blocks, float* out)
{
    int q[32];
    for (std::int64_t b = 0; b < blocks; ++b, block += 22, out += 32) {
        const float d = halfAt(block);
        fiveBitValues(block + 2, block + 6, q);
        for (int j = 0; j < 32; ++j)
            out[j] = float(q[j] - 16) * d;
    }
}

// block_q5_1: d, m, qh[4], qs[16].
void fromQ5_1(const unsigned char* block, std::int64_t blocks, float* out)
{
    int q[32];
    for (std::int64_t b = 0; b < blocks; ++b, block += 24, out += 32) {
        const float d = halfAt(block);
        const float m = halfAt(block + 2);
        fiveBitValues(block + 4, block + 8, q);
        for (int j = 0; j < 32; ++j)
            out[j] = float(q[j]) * d + m;
    }
}

// get_scale_min_k4: the 6-bit scale and minimum of group j (of 8) from the 12 bytes q.
inline void scaleAndMin(int j, const unsigned char* q, int& scale, int& min)
{
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// The blocks of Q4_K and Q5_K: d, dmin, scales[12], then the quants, 256 values in 8 groups of 32
// taken two at a time: (d s_g) q - (dmin m_g). quant(l, g) gives the quant of value l (< 32) of
// group g from the block's bytes.
template <std::int64_t BlockBytes, typename Quant>
void fromScaledGroups(const unsigned char* block, std::int64_t blocks, float* out, Quant quant)
{
    for (std::int64_t b = 0; b < blocks; ++b, block += BlockBytes) {
        const float d = halfAt(block);
        const float dmin = halfAt(block + 2);
        const unsigned char* scales = block + 4;
        for (int g = 0; g < 8; g += 2, out += 64) {
            int scale, min;
            scaleAndMin(g, scales, scale, min);
            const float d1 = d * float(scale), m1 = dmin * float(min);
            scaleAndMin(g + 1, scales, scale, min);
            const float d2 = d * float(scale), m2 = dmin * float(min);
            for (int l = 0; l < 32; ++l)
                out[l] = d1 * float(quant(block, l, g)) - m1;
            for (int l = 0; l < 32; ++l)
                out[l + 32] = d2 * float(quant(block, l, g + 1)) - m2;
        }
    }
}

// block_q4_K: qs[128] after the 16 bytes of scales; the 32 bytes of a pair of groups hold group
// 2i's values in their low nibbles and group 2i + 1's in their high nibbles.
void fromQ4_K(const unsigned char* block, std::int64_t blocks, float* out)
{
    fromScaledGroups<144>(block, blocks, out, [](const unsigned char* b, int l, int g) {
        const unsigned char q = b[16 + 32 * (g / 2) + l];
        return g % 2 == 0 ? q & 0x0F : q >> 4;
    });
}

// block_q5_K: qh[32], then qs[128] as Q4_K's; the fifth bit of value l of group g is bit g of
// qh[l].
void fromQ5_K(const unsigned char* block, std::int64_t blocks, float* out)
{
    fromScaledGroups<176>(block, blocks, out, [](const unsigned char* b, int l, int g) {
        const unsigned char q = b[48 + 32 * (g / 2) + l];
        return (g % 2 == 0 ? q & 0x0F : q >> 4) | (((b[16 + l] >> g) & 1) << 4);
    });
}

// block_q6_K: ql[128], qh[64], scales[16] (int8), d. Each half of 128 values: 64 bytes of ql and
// 32 of qh; value l + 32 k (k < 4) takes its low 4 bits from ql[l + 32 (k & 1)] (low nibble for
// k < 2, high for k >= 2) and its high 2 bits from bits 2k of qh[l]; group l / 16 + 2 k.
void fromQ6_K(const unsigned char* block, std::int64_t blocks, float* out)
{
    for (std::int64_t b = 0; b < blocks; ++b, block += 210) {
        const float d = halfAt(block + 208);
        const unsigned char* ql = block;
        const unsigned char* qh = block + 128;
        const auto* sc = reinterpret_cast<const signed char*>(block + 192);
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, out += 128) {
            for (int l = 0; l < 32; ++l) {
                const int group = l / 16;
                const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                out[l] = d * float(sc[group]) * float(q1);
                out[l + 32] = d * float(sc[group + 2]) * float(q2);
                out[l + 64] = d * float(sc[group + 4]) * float(q3);
                out[l + 96] = d * float(sc[group + 6]) * float(q4);
            }
        }
    }
}

}  // namespace

const GgmlTypeTraits* ggmlTypeTraits(std::uint32_t type)
{
    for (const NumberedTraits& entry : kTypes)
        if (entry.type == type)
            return &entry.traits;
    return nullptr;
}

QString readableGgmlTypes()
{
    return QStringLiteral("F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K");
}

void dequantizeGgml(GgmlType type, const unsigned char* blocks, std::int64_t count, float* out)
{
    switch (type) {
        case GgmlType::F32: return fromF32(blocks, count, out);
        case GgmlType::F16: return fromF16(blocks, count, out);
        case GgmlType::BF16: return fromBF16(blocks, count, out);
        case GgmlType::Q8_0: return fromQ8_0(blocks, count / 32, out);
        case GgmlType::Q4_0: return fromQ4_0(blocks, count / 32, out);
        case GgmlType::Q4_1: return fromQ4_1(blocks, count / 32, out);
        case GgmlType::Q5_0: return fromQ5_0(blocks, count / 32, out);
        case GgmlType::Q5_1: return fromQ5_1(blocks, count / 32, out);
        case GgmlType::Q4_K: return fromQ4_K(blocks, count / kSuperBlock, out);
        case GgmlType::Q5_K: return fromQ5_K(blocks, count / kSuperBlock, out);
        case GgmlType::Q6_K: return fromQ6_K(blocks, count / kSuperBlock, out);
    }
}

}  // namespace attnlab

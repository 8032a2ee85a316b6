#pragma once

#include <QString>

#include <cstdint>

namespace attnlab {

// The tensor types of ggml (ggml.h's enum ggml_type, the numbers GGUF files store) and the
// dequantization of the ones Attention Lab reads, block by block as ggml-quants.c defines them.
// A block holds blockSize values in blockBytes bytes; a row of a tensor (its dimension 0, the
// fastest) is a whole number of blocks.
enum class GgmlType : std::uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    BF16 = 30,
};

// What a ggml type number stands for: its name as llama.cpp prints it ("Q4_K", "IQ2_XXS"), its
// block and whether Attention Lab dequantizes it.
struct GgmlTypeTraits {
    const char* name;
    std::int64_t blockSize;   // values per block
    std::int64_t blockBytes;  // bytes per block
    bool readable;            // one of the types of GgmlType
};

// The traits of a ggml type number, or nullptr for a number ggml does not define (removed types
// such as 4, 5 and 31-33 included).
const GgmlTypeTraits* ggmlTypeTraits(std::uint32_t type);

// "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K": the types read, for
// messages.
QString readableGgmlTypes();

// Writes the `count` values held by the blocks at `blocks` to out, for a readable type (count a
// multiple of its block size; the caller has checked that count / blockSize blocks lie in the
// file). With d the block's scale and, for the types with a minimum, m (half precision stored,
// computed in float as ggml does), each value is:
//   F32, F16, BF16: the value itself (BF16: the upper 16 bits of a float);
//   Q8_0: d q, q a signed byte;  Q4_0: d (q - 8);  Q4_1: d q + m, q a 4-bit value whose
//     byte j of 16 holds value j (low nibble) and value j + 16 (high nibble);
//   Q5_0: d (q - 16);  Q5_1: d q + m, q's fifth bit for value j the bit j of a 32-bit qh;
//   Q4_K, Q5_K (blocks of 256 in 8 groups of 32): (d s_g) q - (dmin m_g), s_g and m_g 6-bit
//     numbers packed in 12 bytes (get_scale_min_k4), Q5_K's fifth bit in qh;
//   Q6_K (16 groups of 16): (d s_g) (q - 32), q of 6 bits (4 in ql, 2 in qh), s_g a signed byte.
void dequantizeGgml(GgmlType type, const unsigned char* blocks, std::int64_t count, float* out);

}  // namespace attnlab

// MX and plain matmul numerics of the PE (SPEC §5; seed 003 §3, §4). Pure C++.
//
// Values: every operand element is decoded to an FP32 value. An MX element is
// code value x 2^(s-127) computed as one FP32 multiply of two exact FP32
// values (the code's value and the E8M0 scale; 2^-127..2^127 are FP32
// values), so it is exact unless the product leaves the FP32 range, where it
// rounds RNE (overflow to +-Inf, gradual underflow); s = 0xFF gives NaN.
//
// Accumulation (SPEC §5 convention): PSUM[m][n] = sum over k ascending of
// W[k][m] * X[k][n] in FP32, one rounding per multiply and one per add (this
// file is compiled with -ffp-contract=off, and the steps are written apart,
// so no FMA contracts them). Overwrite: the first addend is the k = 0
// product. Accumulate: the first addend is the old PSUM value, then every
// product in k order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "models/numerics/formats.h"

namespace tpb::num {

// The element format of an MX x4 word for a DTYPE ordinal (E4M3, E5M2, E3M4,
// E2M5, E2M1, INT4), or nullopt.
std::optional<Format> mx_element_format(std::uint8_t dtype);
// The element format of a plain (non-MX) matmul operand: BF16, FP16, FP32,
// FP8 E2M5 / E3M4 / E4M3 / E5M2; nullopt for anything else.
std::optional<Format> plain_element_format(std::uint8_t dtype);
// Bytes of one x4 word: 2 for the 4-bit formats, else 4.
unsigned mx_word_bytes(Format f);
// Bytes of one plain element.
unsigned plain_elem_bytes(Format f);

// 2^(s-127) as an FP32 value; NaN for s = 0xFF.
float e8m0_scale(std::uint8_t s);
// Lane l (0..3) of an x4 word: FP8 -> byte l; 4-bit -> bits [4l+3:4l].
std::uint32_t x4_lane_code(Format f, std::uint32_t word, unsigned lane);
// The four values of one x4 word under E8M0 scale `s`, lane 0 first.
void decode_x4(Format f, std::uint32_t word, std::uint8_t s, float out[4]);
// The FP32 value of one plain element code (exact: every such format fits FP32).
float decode_plain(Format f, std::uint32_t code);

// acc[m * N + n] (M x N, row-major) = (accumulate ? acc[m][n] : first product)
// + sum over k < kdim of w[k * M + m] * x[k * N + n], k ascending, FP32 with
// one rounding per multiply and per add.
void matmul_fp32(const float* w, const float* x, std::size_t kdim, std::size_t M, std::size_t N,
                 float* acc, bool accumulate);

}  // namespace tpb::num

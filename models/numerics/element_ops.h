// Element-wise operations on tensors of DTYPE elements (pure C++): the
// conversion of DVE tensor_copy (SPEC §11) and the add on write of a DMA
// descriptor (SPEC §10). Both go through the one codec of formats.h.
//
// Conversion: the same DTYPE is copied bit-exactly; different DTYPEs go
// through FP32 (every source value is an FP32 value, so this is exact) and
// are rounded once, to nearest even, into the destination, saturating to
// its largest finite magnitude as `tpbsim convert` does (Inf stays Inf where
// the destination has it; NaN becomes the destination's NaN, or 0 in INT8 /
// UINT8).
//
// Add: FP32 elements add in FP32 (IEEE: round to nearest even, overflow to
// Inf); the exact sum of two BF16, FP16 or FP8 elements is rounded once to
// their format, to nearest even, saturating as a conversion does (Inf stays
// Inf, NaN gives NaN); the integer DTYPEs add modulo 2^bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "models/numerics/formats.h"

namespace tpb::num {

// The numeric format of a DTYPE ordinal that tensor_copy converts: FP32,
// BF16, FP16, FP8_EXP2 (E2M5), FP8_EXP3 (E3M4), FP8_EXP4 (E4M3), FP8_EXP5
// (E5M2), INT8 (S8), UINT8 (U8); nullopt for any other ordinal.
std::optional<Format> element_format(std::uint8_t dtype);

// Converts n elements of in_dtype at src into out_dtype at dst
// (little-endian, packed, isa::dtype_size() bytes each). Same DTYPE: a byte
// copy, for any DTYPE with a size. Otherwise both must be
// is_numeric_dtype() (through FP32: widen_f32 then narrow_f32); returns
// false (nothing written) when not.
bool convert_elements(std::uint8_t in_dtype, std::uint8_t out_dtype, const std::uint8_t* src,
                      std::uint8_t* dst, std::size_t n);

// Every DTYPE the vector instructions of SPEC §18 read and write as numbers:
// the element_format()s and INT16, UINT16, INT32, UINT32.
bool is_numeric_dtype(std::uint8_t dtype);
// n elements of `dtype` at src as FP32 values: exact, but INT32 / UINT32
// past 2^24 round to nearest even. false (nothing written) unless
// is_numeric_dtype.
bool widen_f32(std::uint8_t dtype, const std::uint8_t* src, float* out, std::size_t n);
// n FP32 values into `dtype` at dst as convert_elements does from FP32: one
// rounding to nearest even, saturating (Inf stays where the format has it;
// NaN the format's NaN, 0 in an integer); the integers round to an integer
// first. false (nothing written) unless is_numeric_dtype.
bool narrow_f32(std::uint8_t dtype, const float* src, std::uint8_t* dst, std::size_t n);

// The DTYPEs add_elements accepts: FP32, BF16, FP16, FP8_EXP2..5, INT8,
// UINT8, INT16, UINT16, INT32, UINT32.
bool is_add_dtype(std::uint8_t dtype);
// acc[i] = acc[i] + src[i] for n elements of `dtype` (see above); returns
// false (nothing written) for a DTYPE that is_add_dtype refuses.
bool add_elements(std::uint8_t dtype, const std::uint8_t* src, std::uint8_t* acc, std::size_t n);

}  // namespace tpb::num

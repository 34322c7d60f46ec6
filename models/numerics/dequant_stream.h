// TensorDequantize word-stream transforms (SPEC §3), written for speed:
// whole-byte / whole-word table lookups, no per-element branching in the hot
// loops. Pure C++. (The MX block quantize of SPEC §4: mx_quantize.h.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/isa/encodings.h"

namespace tpb::num {

// Words consumed / produced per step of a transform (SPEC §3):
//   group 0, 4-bit: 1 -> 2;  group 0, FP6: 3 -> 4;  group 8, 4-bit MX: 5 -> 8.
struct DequantRatio {
  unsigned src_words;
  unsigned dst_words;
};
// Returns {0,0} for a format/group pair that is not valid.
DequantRatio dequant_ratio(isa::DequantFmt fmt, unsigned group_size);

// Transforms `steps` whole steps: reads steps*src_words words from `src`,
// writes steps*dst_words words to `dst`. src and dst must not overlap.
// Values: decode(code) [x 2^(s-127) for MX], RNE to the output FP8 format,
// saturated to its largest finite magnitude; s = 0xFF gives NaN.
void dequant_words(isa::DequantFmt fmt, unsigned group_size, const std::uint32_t* src,
                   std::uint32_t* dst, std::size_t steps);

// The SIMD nibble-lookup paths (SSSE3, chosen at run time) and the portable
// table paths give identical words; this forces the portable ones (for tests
// and benchmarks; not thread-safe against a running dequant_words).
void dequant_force_portable(bool on);

// Scalar reference of one code (used by the tables and by tests that want a
// second algorithm): output FP8 byte of `code` under optional E8M0 scale.
std::uint8_t dequant_code(isa::DequantFmt fmt, std::uint8_t code, bool has_scale,
                          std::uint8_t scale);

}  // namespace tpb::num

// MX block quantization (SPEC §4; OCP Microscaling Formats v1.0 §6.3): the
// block scale rule, the DVE's QuantizeMX block, and the host's quantizers of
// the GEMM generator (tpbsim.kernels.quant, docs/KERNELS.md "The
// quantizer": the activations and weights as the hardware is handed them,
// with the exact FP32 values the PE multiplies). Pure C++; the host threads
// are the caller's (ForRanges), so this layer has none of its own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "models/numerics/formats.h"

namespace tpb::num {

// The E8M0 scale of an MX block (SPEC §4, OCP MX §6.3: X = 2^(floor(log2
// amax) - emax_elem)): the block's largest biased FP32 exponent (zero and
// subnormals count 0) minus the element format's emax, clamped to [0, 254].
inline int mx_scale(unsigned max_biased_exponent, int emax) {
  return std::clamp(static_cast<int>(max_biased_exponent) - emax, 0, 254);
}
// The biased FP32 exponent field of a value (0 for zero and subnormals).
inline unsigned biased_exponent(float x) { return (bits_from_f32(x) >> 23) & 0xFFu; }
// An element format's emax (OCP MX §5: the exponent of its largest normal):
// E4M3 8, E5M2 15, FP6 E2M3 2, FP4 E2M1 2.
int element_emax(Format f);

// QuantizeMX (SPEC §4). emax offsets: ocp = {E4M3: 8, E5M2: 15},
// neuron-alt = {7, 14}.
enum class MxEmax : std::uint8_t { Ocp, NeuronAlt };
enum class MxOut : std::uint8_t { E4M3, E5M2 };
enum class MxIn : std::uint8_t { Fp32, Bf16, Fp16 };
// QuantizeMX's emax offset for its output format under `emax`.
int mx_emax_offset(MxOut out, MxEmax emax);

// Quantizes one 8 (partition) x 4 (element) block given as FP32 bit patterns
// in row-major order (row = partition). Writes the 8 packed u32 words (one per
// partition, element 4j.. in byte 0..) and returns the E8M0 scale byte; a
// block holding NaN or Inf gets scale 0xFF and NaN codes.
std::uint8_t mx_quantize_block(const std::uint32_t in_bits[32], MxOut out, MxEmax emax,
                               std::uint32_t out_words[8]);

// How a caller runs independent ranges of work on its threads: body(begin,
// end) over [0, n), cut into chunks of at least `min_chunk` items, returning
// when every chunk is done (the platform passes fw::parallel_for's pool).
using RangeBody = std::function<void(std::size_t, std::size_t)>;
using ForRanges = std::function<void(std::size_t n, std::size_t min_chunk, const RangeBody& body)>;

// MX quantization along rows: x is [rows][cols] finite float32 values, cols a
// multiple of `block`; each block of `block` consecutive elements of a row
// gets the scale mx_scale(its largest biased exponent, emax) and the codes
// encode(code, x x 2^(127 - s)) (RNE, saturating). `used` is the value the PE
// multiplies, decode(code) x 2^(s - 127) as one FP32 multiply. bf16_first:
// x is rounded to BF16 first (RNE, saturating), as the activations are before
// QuantizeMX, and `bf16` holds those codes.
struct MxRows {
  const float* x = nullptr;
  std::size_t rows = 0, cols = 0, block = 32;
  Format code = Format::E4M3;
  int emax = 8;
  bool bf16_first = false;
  std::uint8_t* codes = nullptr;   // [rows][cols]
  std::uint8_t* scales = nullptr;  // [rows][cols / block]
  float* used = nullptr;           // [rows][cols]
  std::uint16_t* bf16 = nullptr;   // [rows][cols], with bf16_first
};
void mx_quantize_rows(const MxRows& q, const ForRanges& for_ranges);

// The host's packing of the group-8 weight formats (fp4, int4, nf4; seed 000
// group 8) from W^T [n][k] finite float32 values (k % 4 == 0, n % 8 == 0). A
// group is 8 codes of a partition's stream: lanes 0-3 (k = 4p + l) of
// columns 2j and 2j + 1. Its E8M0 scale (group8_scale): Ocp, the MX rule
// with the code's emax; Absmax, the smallest power of two 2^e with amax <=
// top x 2^e (s = e + 127, clamped to [0, 254]; 127 for an all-zero group).
// Codes: encode(code, FP32(x x 2^(127-s))). POOL's value: the exact code x
// 2^(s-127), clamped to +-FLT_MAX, to FP32, to the FP8 `out` format (RNE,
// saturating). data is [k/4][n/8 x 20] bytes: per 8 columns one chunk of 5
// little-endian words, word 0 the 4 groups' scales, word 1 + g the 8 codes of
// group g, code j in bits 4j; used is [n][k], the values the PE multiplies.
enum class Group8Rule : std::uint8_t { Ocp, Absmax };
int group8_scale(double amax, Format code, Group8Rule rule, double top);
struct Group8 {
  const float* wt = nullptr;  // [n][k]
  std::size_t n = 0, k = 0;
  Format code = Format::Fp4E2M1, out = Format::E5M2;
  Group8Rule rule = Group8Rule::Ocp;
  double top = 6.0;
  std::uint8_t* data = nullptr;  // [k/4][n/8 x 20]
  float* used = nullptr;         // [n][k]
};
void group8_quantize(const Group8& q, const ForRanges& for_ranges);

}  // namespace tpb::num

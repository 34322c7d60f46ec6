// Test-side QuantizeMX reference (SPEC §4), written independently of
// models/numerics: FP16 / BF16 widened from their field formulas, the block
// scale from the biased exponent by bit arithmetic, q by a nearest-code search
// over the FP8 codes (ties to the even code, finite codes only = saturation).
// Plus an instruction builder and a case generator. Pure C++ (also used by
// the e2e tests).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "sc_tests/unit/test_numerics_ref.h"
#include "sc_tests/unit/test_tensor3d.h"

namespace tpb::dveref {

// ---- formats, from their field definitions --------------------------------

inline float f32_of_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline std::uint32_t bits_of_f32(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// FP16: 1-5-10, bias 15; exponent 31 is Inf / NaN.
inline double fp16_value(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 31)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0)
    v = std::ldexp(double(m), -24);
  else
    v = std::ldexp(1.0 + m / 1024.0, e - 15);
  return s ? -v : v;
}

// The FP32 bit pattern of an element of in_dtype (raw = its little-endian code).
inline std::uint32_t fp32_bits(isa::Dtype in, std::uint32_t raw) {
  if (in == isa::Dtype::Fp32) return raw;
  if (in == isa::Dtype::Bf16) return (raw & 0xFFFF) << 16;  // BF16 = the top half of FP32
  const double v = fp16_value(static_cast<std::uint16_t>(raw));
  if (std::isnan(v)) return 0x7FC00000u;
  return bits_of_f32(static_cast<float>(v));
}

// RNE with saturation: the nearest finite code of x's sign, ties to even (the
// test-side search of sc_tests/unit/test_numerics_ref.h).
inline std::uint8_t fp8_round(bool e4m3, double x) {
  return static_cast<std::uint8_t>(
      numref::nearest_fp8(e4m3 ? numref::kE4M3 : numref::kE5M2, x, 0x7F));
}

// One 8 x 4 block: returns the E8M0 scale, fills q[row][k].
inline std::uint8_t quantize_block(const std::uint32_t bits[8][4], bool e4m3, bool neuron_alt,
                                   std::uint8_t q[8][4]) {
  int max_e = 0;
  bool special = false;
  for (int r = 0; r < 8; ++r)
    for (int k = 0; k < 4; ++k) {
      const int e = int((bits[r][k] >> 23) & 0xFF);
      if (e == 0xFF) special = true;
      if (e > max_e) max_e = e;
    }
  if (special) {
    for (int r = 0; r < 8; ++r)
      for (int k = 0; k < 4; ++k) q[r][k] = 0x7F;  // NaN (docs/CONVENTIONS.md: 0x7F)
    return 0xFF;
  }
  const int emax = e4m3 ? (neuron_alt ? 7 : 8) : (neuron_alt ? 14 : 15);
  const int s = std::min(254, std::max(0, max_e - emax));
  for (int r = 0; r < 8; ++r)
    for (int k = 0; k < 4; ++k)
      q[r][k] = fp8_round(e4m3, std::ldexp(double(f32_of_bits(bits[r][k])), 127 - s));
  return static_cast<std::uint8_t>(s);
}

// Whole operand: raw[c][k] = element k (pattern order) of channel c.
struct QmxResult {
  std::vector<std::vector<std::uint32_t>> words;  // [channel][column]
  std::vector<std::vector<std::uint8_t>> scales;  // [block row][column]
};
inline QmxResult quantize_ref(isa::Dtype in, bool e4m3, bool neuron_alt,
                              const std::vector<std::vector<std::uint32_t>>& raw) {
  QmxResult r;
  const std::size_t ch = raw.size(), cols = raw.empty() ? 0 : raw[0].size() / 4;
  r.words.assign(ch, std::vector<std::uint32_t>(cols, 0));
  r.scales.assign(ch / 8, std::vector<std::uint8_t>(cols, 0));
  for (std::size_t b = 0; b < ch / 8; ++b)
    for (std::size_t j = 0; j < cols; ++j) {
      std::uint32_t bits[8][4];
      std::uint8_t q[8][4];
      for (int rr = 0; rr < 8; ++rr)
        for (int k = 0; k < 4; ++k) bits[rr][k] = fp32_bits(in, raw[8 * b + rr][4 * j + k]);
      r.scales[b][j] = quantize_block(bits, e4m3, neuron_alt, q);
      for (int rr = 0; rr < 8; ++rr)
        r.words[8 * b + rr][j] = std::uint32_t{q[rr][0]} | std::uint32_t{q[rr][1]} << 8 |
                                 std::uint32_t{q[rr][2]} << 16 | std::uint32_t{q[rr][3]} << 24;
    }
  return r;
}

// ---- instructions ---------------------------------------------------------

using testref::t3;

inline isa::RawInst qmx_inst(isa::Dtype in, bool e4m3, unsigned channels, const isa::Tensor3D& src,
                             std::uint32_t data, std::uint32_t scale, std::uint16_t num,
                             std::int8_t step = 1, std::uint8_t pidx = 0, isa::Events ev = {}) {
  isa::S3DMX1Quant q{};
  q.header = {0xE3, isa::kInstWordLen, 0, 0};
  q.events = ev;
  q.src_mem_pattern.t = src;
  q.num_active_channels = static_cast<std::uint8_t>(channels);
  q.in_dtype = static_cast<std::uint8_t>(in);
  q.out_dtype = static_cast<std::uint8_t>(e4m3 ? isa::Dtype::Fp8Exp4 : isa::Dtype::Fp8Exp5);
  q.dst_mem_pattern.t.start_addr.raw = data;
  q.dst_mem_pattern.t.scale_addr.raw = scale;
  q.dst_mem_pattern.t.num_elem[0] = num;
  q.dst_mem_pattern.t.step_elem[0] = step;
  q.dst_mem_pattern.t.scale_pidx = pidx;
  return isa::encode(q);
}

// Element byte offsets of a pattern relative to its start (dim 0 innermost).
inline std::vector<std::int64_t> elem_offsets(const isa::Tensor3D& t, unsigned es) {
  std::vector<std::int64_t> out;
  for (int i2 = 0; i2 < t.num_elem[2]; ++i2)
    for (int i1 = 0; i1 < t.num_elem[1]; ++i1)
      for (int i0 = 0; i0 < t.num_elem[0]; ++i0)
        out.push_back((std::int64_t{i0} * t.step_elem[0] + std::int64_t{i1} * t.step_elem[1] +
                       std::int64_t{i2} * t.step_elem[2]) *
                      es);
  return out;
}

inline unsigned elem_size(isa::Dtype in) { return in == isa::Dtype::Fp32 ? 4 : 2; }

// ---- value generator --------------------------------------------------------

struct Rng {
  std::uint64_t x;
  std::uint32_t next() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(x >> 33);
  }
};

// Raw code of element k of channel c: per block a base biased exponent (tiny
// blocks whose scale clamps to 0, ordinary and huge ones), elements 0..12
// binades below it (some subnormal or zero), random signs and mantissas;
// with `specials`, about one block in 8 holds an Inf or a NaN.
inline std::uint32_t gen_elem(isa::Dtype in, std::uint32_t seed, unsigned c, unsigned k,
                              bool specials) {
  Rng blk{(std::uint64_t{seed} << 32) ^ (std::uint64_t{c / 8} << 20) ^ (k / 4) ^ 0x9E3779B9ull};
  blk.next();
  const std::uint32_t kind = blk.next() % 16;
  const bool special_block = specials && kind == 0;
  const unsigned special_pos = blk.next() % 32;
  const bool fp16 = in == isa::Dtype::Fp16;
  int base;
  if (fp16)
    base = kind < 2   ? 1 + int(blk.next() % 3)
           : kind < 4 ? 28 + int(blk.next() % 3)
                      : 5 + int(blk.next() % 22);
  else
    base = kind < 2   ? 1 + int(blk.next() % 7)
           : kind < 4 ? 248 + int(blk.next() % 7)
                      : 90 + int(blk.next() % 70);
  Rng el{(std::uint64_t{seed} << 32) ^ (std::uint64_t{c} << 18) ^ k ^ 0x5bd1e995ull};
  el.next();
  const std::uint32_t r = el.next();
  const std::uint32_t sign = (r >> 31) & 1;
  int e = base - int(el.next() % 13);
  if (el.next() % 16 == 0) e = 0;  // subnormal or zero
  if (e < 0) e = 0;
  const std::uint32_t mant = el.next();
  const bool here = special_block && (c % 8) * 4 + (k % 4) == special_pos;
  const bool nan = here && (r & 1);
  if (fp16) {
    std::uint32_t m = mant & 1023;
    if (here) return sign << 15 | 31u << 10 | (nan ? (m | 1) : 0);
    return sign << 15 | std::uint32_t(e) << 10 | m;
  }
  if (in == isa::Dtype::Bf16) {
    std::uint32_t m = mant & 127;
    if (here) return sign << 15 | 255u << 7 | (nan ? (m | 1) : 0);
    return sign << 15 | std::uint32_t(e) << 7 | m;
  }
  std::uint32_t m = mant & 0x7FFFFF;
  if (here) return sign << 31 | 255u << 23 | (nan ? (m | 1) : 0);
  return sign << 31 | std::uint32_t(e) << 23 | m;
}

}  // namespace tpb::dveref

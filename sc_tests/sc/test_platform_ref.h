// Test-side helpers for the platform tests: instruction builders and an
// independent TensorDequantize reference (literal code tables, std::ldexp and
// a nearest-code search over every FP8 code; no call into models/numerics).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "sc_tests/unit/test_numerics_ref.h"

namespace tpb::platref {

// Code tables and the FP8 nearest-code search are the test-side references of
// sc_tests/unit/test_numerics_ref.h (literal tables, textbook formulas).
using numref::kFp4;
using numref::kInt4;
using numref::kNf4;
inline double fp6_e2m3(unsigned code) { return numref::fp6(numref::kFp6E2M3, code); }

inline bool fp8_is_nan(bool e4m3, std::uint8_t b) {
  return e4m3 ? (b & 0x7F) == 0x7F : ((b >> 2) & 31) == 31 && (b & 3) != 0;
}
// Nearest code, ties to the even code, saturating to the largest finite.
inline std::uint8_t fp8_nearest(bool e4m3, double v) {
  return static_cast<std::uint8_t>(
      numref::nearest_fp8(e4m3 ? numref::kE4M3 : numref::kE5M2, v, 0x7F));
}

// Reference of one partition's stream: words in src-pattern order -> words
// in dst-pattern order (SPEC §3).
inline std::vector<std::uint32_t> dequant_ref(unsigned fmt, unsigned group,
                                              const std::vector<std::uint32_t>& src) {
  const bool e4m3 = fmt == 3 || fmt == 4;
  auto code_value = [&](unsigned c) {
    return fmt == 1 ? kFp4[c] : fmt == 2 ? kInt4[c] : double(kNf4[c]);
  };
  std::vector<std::uint8_t> out;
  if (fmt == 4) {
    for (std::size_t w = 0; w + 2 < src.size(); w += 3) {
      // 96-bit little-endian bit string, code k = bits[6k+5:6k].
      for (unsigned k = 0; k < 16; ++k) {
        unsigned code = 0;
        for (unsigned b = 0; b < 6; ++b) {
          const unsigned bit = 6 * k + b;
          code |= ((src[w + bit / 32] >> (bit % 32)) & 1u) << b;
        }
        out.push_back(fp8_nearest(true, fp6_e2m3(code)));
      }
    }
  } else if (group == 0) {
    for (std::uint32_t w : src)
      for (unsigned k = 0; k < 8; ++k)
        out.push_back(fp8_nearest(e4m3, code_value((w >> 4 * k) & 15)));
  } else {
    for (std::size_t w = 0; w + 4 < src.size(); w += 5) {
      for (unsigned j = 0; j < 32; ++j) {
        const unsigned s = (src[w] >> (8 * (j / 8))) & 0xFF;
        const unsigned code = (src[w + 1 + j / 8] >> (4 * (j % 8))) & 15;
        if (s == 0xFF) {
          out.push_back(0xFF);  // NaN marker, compared with fp8_is_nan
          continue;
        }
        out.push_back(fp8_nearest(e4m3, std::ldexp(code_value(code), int(s) - 127)));
      }
    }
  }
  std::vector<std::uint32_t> words(out.size() / 4);
  std::memcpy(words.data(), out.data(), words.size() * 4);
  return words;
}

// Byte-wise comparison where NaN equals any NaN of the format.
inline bool fp8_word_equal(bool e4m3, std::uint32_t got, std::uint32_t want) {
  for (unsigned k = 0; k < 4; ++k) {
    const auto g = static_cast<std::uint8_t>(got >> 8 * k),
               w = static_cast<std::uint8_t>(want >> 8 * k);
    const bool wn = fp8_is_nan(e4m3, w) || w == 0xFF;
    if (wn ? !fp8_is_nan(e4m3, g) : g != w) return false;
  }
  return true;
}

inline isa::Tensor3D t3d(std::uint32_t start, std::int16_t s0, std::uint16_t n0,
                         std::int16_t s1 = 0, std::uint16_t n1 = 1, std::int16_t s2 = 0,
                         std::uint16_t n2 = 1) {
  isa::Tensor3D t{};
  t.start_addr.raw = start;
  t.step_elem[0] = s0, t.step_elem[1] = s1, t.step_elem[2] = s2;
  t.num_elem[0] = n0, t.num_elem[1] = n1, t.num_elem[2] = n2;
  return t;
}

inline isa::RawInst dequant_inst(unsigned fmt, unsigned group, unsigned channels,
                                 const isa::Tensor3D& src, const isa::Tensor3D& dst,
                                 isa::Events ev = {}) {
  isa::S3D3TensDequant d{};
  d.header = {0x7b, isa::kInstWordLen, 0, 0};
  d.events = ev;
  d.src_mem_pattern.t = src;
  d.dst_mem_pattern.t = dst;
  d.in_dtype = d.out_dtype = static_cast<std::uint8_t>(isa::Dtype::Uint32);
  d.num_active_channels = static_cast<std::uint8_t>(channels);
  d.dequant_fmt = static_cast<std::uint8_t>(fmt);
  d.group_size = static_cast<std::uint8_t>(group);
  return isa::encode(d);
}

// Deterministic source words; MX scale bytes kept in a range that exercises
// subnormal, normal and saturating outputs (and one NaN scale, 0xFF).
inline std::vector<std::uint32_t> make_words(std::size_t n, std::uint32_t seed, unsigned group) {
  std::vector<std::uint32_t> v(n);
  std::uint32_t x = seed * 2654435761u + 12345u;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = x ^ (x >> 13);
    if (group == 8 && i % 5 == 0) {
      std::uint32_t s = 0;
      for (unsigned g = 0; g < 4; ++g) {
        x = x * 1664525u + 1013904223u;
        const unsigned r = (x >> 24) % 40;
        const unsigned b = r == 39 ? 0xFF : 127 - 20 + r;  // 2^-20 .. 2^18, and NaN
        s |= b << (8 * g);
      }
      v[i] = s;
    }
  }
  return v;
}

}  // namespace tpb::platref

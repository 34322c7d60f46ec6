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

namespace tpb::platref {

// FP4 E2M1 (OCP MX), INT4, NF4 (QLoRA, seed 000 §4.2) and FP6 E2M3 values.
inline const double kFp4[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                                -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};
inline const double kInt4[16] = {0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1};
inline const float kNf4[16] = {-1.0f,
                               -0.6961928009986877f,
                               -0.5250730514526367f,
                               -0.39491748809814453f,
                               -0.28444138169288635f,
                               -0.18477343022823334f,
                               -0.09105003625154495f,
                               0.0f,
                               0.07958029955625534f,
                               0.16093020141124725f,
                               0.24611230194568634f,
                               0.33791524171829224f,
                               0.44070982933044434f,
                               0.5626170039176941f,
                               0.7229568362236023f,
                               1.0f};
inline double fp6_e2m3(unsigned code) {
  static const double kPos[32] = {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875,
                                  1.0, 1.125, 1.25, 1.375, 1.5, 1.625, 1.75, 1.875,
                                  2.0, 2.25,  2.5,  2.75,  3.0, 3.25,  3.5,  3.75,
                                  4.0, 4.5,   5.0,  5.5,   6.0, 6.5,   7.0,  7.5};
  const double v = kPos[code & 31];
  return (code & 32) ? -v : v;
}

// Positive finite FP8 magnitudes by code 0..127 (textbook field formulas).
// E5M2: bias 15, Inf/NaN at exponent 31. E4M3fn: bias 7, NaN = 0x7F only.
inline double fp8_value(bool e4m3, unsigned code) {
  const unsigned mbits = e4m3 ? 3 : 2, ebits = e4m3 ? 4 : 5, bias = e4m3 ? 7 : 15;
  const unsigned e = (code >> mbits) & ((1u << ebits) - 1), m = code & ((1u << mbits) - 1);
  if (e == 0) return std::ldexp(double(m), 1 - int(bias) - int(mbits));
  return std::ldexp(1.0 + double(m) / (1u << mbits), int(e) - int(bias));
}
inline bool fp8_is_nan(bool e4m3, std::uint8_t b) {
  return e4m3 ? (b & 0x7F) == 0x7F : ((b >> 2) & 31) == 31 && (b & 3) != 0;
}
// Nearest code, ties to the even code, saturating to the largest finite.
inline std::uint8_t fp8_nearest(bool e4m3, double v) {
  const unsigned max_code = e4m3 ? 0x7E : 0x7B;
  const unsigned sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(v);
  unsigned best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (unsigned c = 0; c <= max_code; ++c) {
    const double err = std::fabs(fp8_value(e4m3, c) - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) best = c, best_err = err;
  }
  return static_cast<std::uint8_t>(sign | best);
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

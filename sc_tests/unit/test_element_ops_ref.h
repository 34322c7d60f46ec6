// Test-side reference of the tensor element DTYPEs (tensor_copy, the DMA add
// on write), written from the format definitions and independent of
// models/numerics: the textbook decode (-1)^s 2^(e-bias) (1 + m/2^M) with
// subnormals and the special codes of each kind, and the reference rounding:
// the finite value of the same sign nearest to v found by binary search over
// every finite code, ties to the even code, saturating at the largest finite
// magnitude; the integers by the C library's round-to-nearest-even.
#pragma once

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace tpb::elemref {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Float kinds: IEEE (top exponent Inf / NaN), E4M3 "fn" (only S.1111.111 is
// NaN, no Inf); integers signed or unsigned.
enum class Kind { Ieee, Fn, Int, Uint };
struct Def {
  std::uint8_t dtype;  // the DTYPE ordinal (SPEC §2)
  const char* name;
  unsigned bytes;
  Kind kind;
  int E, M, bias;  // floats
};

// DTYPE ordinals: SPEC §2 (written out, not read from the ISA headers).
inline const Def kDefs[] = {
    {0x08, "fp32", 4, Kind::Ieee, 8, 23, 127},   {0x05, "bf16", 2, Kind::Ieee, 8, 7, 127},
    {0x06, "fp16", 2, Kind::Ieee, 5, 10, 15},    {0x0C, "fp8_e2m5", 1, Kind::Ieee, 2, 5, 1},
    {0x0D, "fp8_e3m4", 1, Kind::Ieee, 3, 4, 3},  {0x0E, "fp8_e4m3", 1, Kind::Fn, 4, 3, 7},
    {0x0F, "fp8_e5m2", 1, Kind::Ieee, 5, 2, 15}, {0x01, "int8", 1, Kind::Int, 0, 0, 0},
    {0x02, "uint8", 1, Kind::Uint, 0, 0, 0},
};

inline double value(const Def& d, std::uint32_t code) {
  if (d.kind == Kind::Int) return static_cast<double>(static_cast<std::int8_t>(code & 0xFF));
  if (d.kind == Kind::Uint) return static_cast<double>(code & 0xFF);
  const std::uint32_t s = (code >> (d.E + d.M)) & 1u;
  const std::uint32_t e = (code >> d.M) & ((1u << d.E) - 1u);
  const std::uint32_t m = code & ((1u << d.M) - 1u);
  const std::uint32_t e_all = (1u << d.E) - 1u, m_all = (1u << d.M) - 1u;
  const double sign = s ? -1.0 : 1.0;
  if (d.kind == Kind::Fn && e == e_all && m == m_all) return kNaN;
  if (d.kind == Kind::Ieee && e == e_all) return m == 0 ? sign * kInf : kNaN;
  if (e == 0) return sign * std::ldexp(static_cast<double>(m), 1 - d.bias - d.M);
  return sign *
         std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -d.M), static_cast<int>(e) - d.bias);
}

// The positive finite codes of a float format in value order.
inline std::vector<std::pair<double, std::uint32_t>> positive_codes(const Def& d) {
  std::vector<std::pair<double, std::uint32_t>> v;
  const std::uint32_t n = 1u << (d.E + d.M);
  for (std::uint32_t c = 0; c < n; ++c) {
    const double x = value(d, c);
    if (std::isfinite(x)) v.push_back({x, c});
  }
  std::sort(v.begin(), v.end());
  return v;
}

// The reference code of value v in d (saturating; see the file comment).
inline std::uint32_t nearest(const Def& d, double v) {
  if (d.kind == Kind::Int || d.kind == Kind::Uint) {
    if (std::isnan(v)) return 0;
    const double lo = d.kind == Kind::Int ? -128 : 0, hi = d.kind == Kind::Int ? 127 : 255;
    std::fesetround(FE_TONEAREST);
    const double r = std::clamp(std::nearbyint(std::clamp(v, -1e9, 1e9)), lo, hi);
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(r)) & 0xFFu;
  }
  if (d.M == 23) {
    // FP32: the host's double -> float conversion (round to nearest even).
    const float f = static_cast<float>(v);
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  const std::uint32_t sign = std::signbit(v) ? 1u << (d.E + d.M) : 0u;
  if (std::isnan(v)) {
    // Any NaN code will do: the caller compares NaN-ness.
    return d.kind == Kind::Fn ? sign | ((1u << (d.E + d.M)) - 1u)
                              : sign | (((1u << d.E) - 1u) << d.M) | 1u;
  }
  static thread_local const Def* cached = nullptr;
  static thread_local std::vector<std::pair<double, std::uint32_t>> codes;
  if (cached != &d) {
    codes = positive_codes(d);
    cached = &d;
  }
  const double a = std::fabs(v);
  if (std::isinf(a) && d.kind == Kind::Ieee) return sign | (((1u << d.E) - 1u) << d.M);
  if (a >= codes.back().first) return sign | codes.back().second;  // saturation
  const auto hi = std::lower_bound(codes.begin(), codes.end(), std::make_pair(a, 0u));
  if (hi->first == a) return sign | hi->second;
  const auto lo = hi - 1;
  const double dl = a - lo->first, dh = hi->first - a;
  if (dl < dh) return sign | lo->second;
  if (dh < dl) return sign | hi->second;
  return sign | ((lo->second & 1u) == 0 ? lo->second : hi->second);
}

inline std::uint32_t load(const std::uint8_t* p, unsigned bytes) {
  std::uint32_t v = 0;
  std::memcpy(&v, p, bytes);
  return v;
}

// True when two codes of d are the same value (every NaN equals every NaN).
inline bool same(const Def& d, std::uint32_t a, std::uint32_t b) {
  if (d.kind == Kind::Ieee || d.kind == Kind::Fn) {
    const bool na = std::isnan(value(d, a)), nb = std::isnan(value(d, b));
    if (na || nb) return na && nb;
  }
  return a == b;
}

}  // namespace tpb::elemref

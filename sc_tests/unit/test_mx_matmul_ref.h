// An independent reference for the PE matmul numerics (SPEC §5), written from
// the format definitions: codes decoded by their formulas in double, every
// FP32 rounding done from the exact value (a double product of two floats is
// exact; a double sum is corrected by its TwoSum error before rounding).
// Shared by the unit and the platform tests; never calls the model.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "models/numerics/formats.h"

namespace tpb::mxref {

using tpb::num::Format;

inline double nan_d() { return std::numeric_limits<double>::quiet_NaN(); }

// Minifloat with `e` exponent bits, `m` mantissa bits, bias 2^(e-1)-1;
// ieee: the top exponent is Inf / NaN; fn (E4M3): only S.1111.111 is NaN.
inline double minifloat(std::uint32_t c, int e, int m, bool ieee, bool fn) {
  const int bias = (1 << (e - 1)) - 1;
  const bool neg = (c >> (e + m)) & 1;
  const int ex = (c >> m) & ((1 << e) - 1);
  const int mant = c & ((1 << m) - 1);
  double v;
  if (ieee && ex == (1 << e) - 1)
    v = mant == 0 ? std::numeric_limits<double>::infinity() : nan_d();
  else if (fn && ex == (1 << e) - 1 && mant == (1 << m) - 1)
    v = nan_d();
  else if (ex == 0)
    v = std::ldexp(double(mant), 1 - bias - m);
  else
    v = std::ldexp(1.0 + std::ldexp(double(mant), -m), ex - bias);
  return neg ? -v : v;
}

inline double ref_decode(Format f, std::uint32_t c) {
  switch (f) {
    case Format::E4M3:
      return minifloat(c, 4, 3, false, true);
    case Format::E5M2:
      return minifloat(c, 5, 2, true, false);
    case Format::E3M4:
      return minifloat(c, 3, 4, true, false);
    case Format::E2M5:
      return minifloat(c, 2, 5, true, false);
    case Format::Fp4E2M1:
      return minifloat(c, 2, 1, false, false);
    case Format::Int4:
      return (c & 8) ? double(int(c) - 16) : double(c);
    default:
      return nan_d();
  }
}

inline float round_f(double exact) {
  return static_cast<float>(exact);
}  // exact input: one rounding

// FP32 RNE of a + b from the exact sum (TwoSum error decides ties).
inline float ref_add(float a, float b) {
  const double s = double(a) + double(b);
  if (std::isnan(s) || std::isinf(s)) return static_cast<float>(s);
  const double bb = s - double(a);
  const double err = (double(a) - (s - bb)) + (double(b) - bb);
  const float r = static_cast<float>(s);
  if (err == 0) return r;
  const float other = std::nextafter(r, err > 0 ? std::numeric_limits<float>::infinity()
                                                : -std::numeric_limits<float>::infinity());
  // s is a float midpoint: the exact sum lies on err's side of it.
  if (double(r) + (double(other) - double(r)) / 2 == s) return other;
  return r;  // elsewhere the exact sum rounds as s does
}

inline float ref_mul(float a, float b) { return round_f(double(a) * double(b)); }

// The same operations with the NaN bits of an x86 FP32 multiply / add: a NaN
// operand is returned quietened (bit 22 set), a's when both are NaNs; an
// invalid operation (Inf x 0, Inf - Inf) returns the default NaN 0xFFC00000.
inline float f32_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline float quieted(float a) {
  std::uint32_t b;
  std::memcpy(&b, &a, 4);
  return f32_bits(b | 0x00400000u);
}
inline float ref_mul_x86(float a, float b) {
  if (std::isnan(a)) return quieted(a);
  if (std::isnan(b)) return quieted(b);
  const float r = ref_mul(a, b);
  return std::isnan(r) ? f32_bits(0xFFC00000u) : r;
}
inline float ref_add_x86(float a, float b) {
  if (std::isnan(a)) return quieted(a);
  if (std::isnan(b)) return quieted(b);
  const float r = ref_add(a, b);
  return std::isnan(r) ? f32_bits(0xFFC00000u) : r;
}

inline float ref_value(Format f, std::uint32_t code, std::uint8_t s) {
  if (s == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return round_f(ref_decode(f, code) * std::ldexp(1.0, int(s) - 127));
}

inline bool same(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  std::uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// The FP32 value of the plain formats (BF16 / FP16 / FP32 bits), by formula.
inline float ref_plain(Format f, std::uint32_t c) {
  switch (f) {
    case Format::Bf16: {
      const std::uint32_t b = c << 16;
      float v;
      std::memcpy(&v, &b, 4);
      return v;
    }
    case Format::Fp16:
      return round_f(minifloat(c, 5, 10, true, false));
    case Format::Fp32: {
      float v;
      std::memcpy(&v, &c, 4);
      return v;
    }
    default:
      return round_f(ref_decode(f, c));
  }
}

}  // namespace tpb::mxref

// Test-side reference values of the numeric formats, written from the format
// definitions and independent of models/numerics (no call into the code under
// test): literal tables for the 4- and 6-bit formats, the textbook formula for
// the FP8 family, and a nearest-value search (ties to the even code) as the
// reference rounding.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tpb::numref {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// OCP MX FP4 E2M1, codes 0..15.
inline const double kFp4[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                                -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};
// INT4 two's complement, codes 0..15.
inline const double kInt4[16] = {0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1};
// QLoRA NF4 codebook (seed 000 §4.2), rounded to FP32 as the seed's table is.
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
// OCP MX FP6 E2M3, positive codes 0..31 (code | 0x20 is the negative).
inline const double kFp6E2M3[32] = {
    0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875,  // subnormal m/8
    1.0, 1.125, 1.25, 1.375, 1.5, 1.625, 1.75, 1.875,  //
    2.0, 2.25,  2.5,  2.75,  3.0, 3.25,  3.5,  3.75,   //
    4.0, 4.5,   5.0,  5.5,   6.0, 6.5,   7.0,  7.5};
// OCP MX FP6 E3M2, positive codes 0..31.
inline const double kFp6E3M2[32] = {
    0.0, 0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.4375,  // subnormal m/4 * 2^-2
    0.5, 0.625,  0.75,  0.875,  1.0,  1.25,   1.5,   1.75,    //
    2.0, 2.5,    3.0,   3.5,    4.0,  5.0,    6.0,   7.0,     //
    8.0, 10.0,   12.0,  14.0,   16.0, 20.0,   24.0,  28.0};

inline double fp6(const double* pos, unsigned code) {
  const double v = pos[code & 31u];
  return (code & 32u) ? -v : v;
}

// FP8 family by the textbook formula (-1)^s * 2^(e-bias) * (1 + m/2^M), with
// subnormals 2^(1-bias) * m/2^M, and the special-value rules per kind.
enum class Fp8Kind { E4M3Fn, Ieee };
struct Fp8Def {
  int E, M, bias;
  Fp8Kind kind;
};
inline const Fp8Def kE4M3{4, 3, 7, Fp8Kind::E4M3Fn};
inline const Fp8Def kE5M2{5, 2, 15, Fp8Kind::Ieee};
inline const Fp8Def kE3M4{3, 4, 3, Fp8Kind::Ieee};
inline const Fp8Def kE2M5{2, 5, 1, Fp8Kind::Ieee};

inline double fp8(const Fp8Def& d, unsigned code) {
  const int s = (code >> 7) & 1;
  const int e = (code >> d.M) & ((1 << d.E) - 1);
  const int m = code & ((1 << d.M) - 1);
  const int e_all = (1 << d.E) - 1, m_all = (1 << d.M) - 1;
  const double sign = s ? -1.0 : 1.0;
  // E4M3 fn: only S.1111.111 is NaN, no Inf. IEEE-like: top exponent is Inf/NaN.
  if (d.kind == Fp8Kind::E4M3Fn && e == e_all && m == m_all) return kNaN;
  if (d.kind == Fp8Kind::Ieee && e == e_all) return m == 0 ? sign * kInf : kNaN;
  if (e == 0) return sign * std::pow(2.0, 1 - d.bias) * (m / std::pow(2.0, d.M));
  return sign * std::pow(2.0, e - d.bias) * (1.0 + m / std::pow(2.0, d.M));
}

// Reference RNE: the finite code of the same sign nearest to v, ties to the
// even code; NaN -> nan_code. A value beyond the largest finite magnitude
// lands on it (saturation falls out of the search).
inline unsigned nearest_fp8(const Fp8Def& d, double v, unsigned nan_code) {
  if (std::isnan(v)) return nan_code;
  const unsigned sign = std::signbit(v) ? 0x80u : 0u;
  // Saturation by definition: at or beyond the largest finite magnitude (far
  // beyond it, double distances to the top codes would round equal).
  unsigned max_c = 0x7Fu;
  while (std::isnan(fp8(d, max_c)) || std::isinf(fp8(d, max_c))) --max_c;
  if (std::fabs(v) >= fp8(d, max_c)) return sign | max_c;
  unsigned best = 0;
  double best_d = kInf;
  bool have = false;
  for (unsigned c = sign; c < sign + 0x80u; ++c) {
    const double cv = fp8(d, c);
    if (std::isnan(cv) || std::isinf(cv)) continue;
    const double dist = std::fabs(v - cv);
    if (!have || dist < best_d || (dist == best_d && (c & 1u) == 0)) {
      best = c;
      best_d = dist;
      have = true;
    }
  }
  return best;
}

}  // namespace tpb::numref

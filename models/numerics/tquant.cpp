#include "models/numerics/tquant.h"

#include "models/isa/names.h"

namespace tpb::num {

namespace {

using i128 = __int128;

// A finite FP32 value as sign * significand * 2^exponent (significand < 2^24).
struct Dyadic {
  bool neg;
  std::uint32_t sig;
  int exp;
};
Dyadic split(std::uint32_t bits) {
  const std::uint32_t e = (bits >> 23) & 0xFFu, f = bits & 0x7FFFFFu;
  if (e == 0) return {(bits >> 31) != 0, f, -149};
  return {(bits >> 31) != 0, f | 0x800000u, static_cast<int>(e) - 150};
}

// Largest shift kept exact. A product below 2^-53 in magnitude (shift past
// 101 with a 48-bit significand) rounds, in every mode, as any other nonzero
// value of the same sign and magnitude below 1/2 does: it is replaced by
// +-2^-101. A product of 2^60 or more is an integer divisible by 256 whose
// magnitude is past every destination range: it is replaced by +-2^64.
constexpr int kMaxShift = 101;
constexpr int kMaxLeft = 60;

}  // namespace

const char* rmode_name(RMode m) {
  const std::string_view n = isa::rmode_names().name(static_cast<std::uint8_t>(m));
  return n.empty() ? "?" : n.data();
}

QuantResult tquant_element(std::uint32_t x_bits, std::uint32_t m_bits, std::int32_t zero_point,
                           QuantType type, RMode rmode, bool saturate) {
  const Dyadic x = split(x_bits), m = split(m_bits);
  const std::uint64_t sig = std::uint64_t{x.sig} * m.sig;  // < 2^48, exact
  const bool neg = x.neg != m.neg;
  int exp = x.exp + m.exp;
  // value = num / 2^shift exactly.
  i128 num = 0;
  int shift = 0;
  if (sig == 0) {
    num = zero_point;
  } else if (exp >= 0) {
    const i128 p = exp > kMaxLeft ? (i128{1} << 64) : (i128{sig} << exp);
    num = (neg ? -p : p) + zero_point;
  } else {
    shift = -exp;
    i128 p = sig;
    if (shift > kMaxShift) {
      shift = kMaxShift;
      p = 1;
    }
    // Scaled by multiplication: shifting a negative value left is undefined in C++17.
    num = (neg ? -p : p) + i128{zero_point} * (i128{1} << shift);
  }
  // Floor and remainder: num = q * 2^shift + r, 0 <= r < 2^shift.
  const i128 q = num >> shift;  // arithmetic shift: floor
  const i128 r = num - q * (i128{1} << shift);
  QuantResult out;
  i128 y = q;
  if (r != 0) {
    out.inexact = true;
    const i128 half = i128{1} << (shift - 1);
    switch (rmode) {
      case RMode::Rne:
        y = r > half ? q + 1 : r < half ? q : q + (q & 1);
        break;
      case RMode::Rmm:  // ties away from zero; q + 1/2 > 0 iff q >= 0
        y = r > half ? q + 1 : r < half ? q : (q >= 0 ? q + 1 : q);
        break;
      case RMode::Rtz:  // the value is q + r/2^shift: positive iff q >= 0
        y = q >= 0 ? q : q + 1;
        break;
      case RMode::Rdn:
        y = q;
        break;
      case RMode::Rup:
        y = q + 1;
        break;
    }
  }
  const i128 lo = type == QuantType::S8 ? -128 : 0;
  const i128 hi = type == QuantType::S8 ? 127 : 255;
  if (y < lo || y > hi) {
    if (saturate) {
      out.saturated = true;
      y = y < lo ? lo : hi;
    } else {
      out.wrapped = true;  // the low 8 bits of the two's complement integer
    }
  }
  out.code = static_cast<std::uint8_t>(static_cast<std::uint64_t>(y) & 0xFFu);
  return out;
}

}  // namespace tpb::num

// TQUANT arithmetic (seed 002, SPEC §6), pure C++: y = round_RMode(x *
// multiplier + zero_point) with exactly one rounding, then a clamp (Sat 1) or
// a reduction modulo 256 (Sat 0) into S8 / U8.
//
// x and the multiplier are finite FP32 values; their product is exact
// (24 x 24 bit significands, binary exponent in [-298, 208]) and the sum with
// the integer zero point is formed exactly as a dyadic rational n / 2^s, so
// the only rounding is the final one to an integer. Magnitudes too large or
// too small for a 128-bit numerator are replaced by a stand-in with the same
// rounding decision, sign, range verdict and residue modulo 256 (see
// tquant.cpp), so the result is exact for every input.
#pragma once

#include <cstdint>

namespace tpb::num {

// Rounding modes of B.DATR.RMode (SPEC §6): 0 RNE, 1 RTZ, 2 RDN, 3 RUP, 4 RMM.
enum class RMode : std::uint8_t { Rne = 0, Rtz = 1, Rdn = 2, Rup = 3, Rmm = 4 };
inline constexpr unsigned kNumRModes = 5;
const char* rmode_name(RMode m);  // "RNE", ...

enum class QuantType : std::uint8_t { S8, U8 };

struct QuantResult {
  std::uint8_t code = 0;   // the destination byte (S8 two's complement, or U8)
  bool inexact = false;    // the exact value was not an integer
  bool saturated = false;  // Sat 1 clamped the rounded value
  bool wrapped = false;    // Sat 0 reduced the rounded value modulo 256
};

// Precondition (checked by the caller's legality rules): x_bits is a finite
// FP32 value, m_bits a positive finite nonzero FP32 value, zero_point in the
// destination type's range. Never rounds anything but the final result.
QuantResult tquant_element(std::uint32_t x_bits, std::uint32_t m_bits, std::int32_t zero_point,
                           QuantType type, RMode rmode, bool saturate);

}  // namespace tpb::num

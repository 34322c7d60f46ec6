// Numeric formats of the model (pure C++, no SystemC).
//
// decode() is exact: every code of every format is a double without rounding.
// encode() rounds to nearest, ties to even (RNE), from the exact double value,
// and either saturates to the largest finite magnitude or overflows to Inf
// (NaN for formats without Inf; modulo wrap for the integer formats).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tpb::num {

enum class Format : std::uint8_t {
  Fp32,
  Bf16,
  Fp16,
  E4M3,     // FP8 E4M3, OCP "fn": no Inf, NaN = S.1111.111, max 448
  E5M2,     // FP8 E5M2, IEEE-like: Inf, NaN, max 57344
  E3M4,     // FP8 E3M4, IEEE-like
  E2M5,     // FP8 E2M5, IEEE-like
  Fp6E2M3,  // OCP MX FP6: no Inf, no NaN, max 7.5
  Fp6E3M2,  // OCP MX FP6: no Inf, no NaN, max 28
  Fp4E2M1,  // OCP MX FP4: no Inf, no NaN, max 6
  Int4,     // two's complement -8..7
  Nf4,      // QLoRA NormalFloat4 codebook, index 7 = 0.0
  E8M0,     // 2^(s-127), 0xFF = NaN, no sign, no zero
  S8,
  U8,
  // FP8 E4M3 as NKI's legacy float8_e4m3 (SPEC §18: the FP8 of v2 / v3):
  // IEEE-like, bias 7, exponent 1111 is Inf (mantissa 0) or NaN, max 240.
  // Appended, so every earlier format keeps its number (the DPI's ids).
  E4M3Legacy,
};
inline constexpr int kNumFormats = 16;

enum class Overflow : std::uint8_t { Saturate, NonSaturate };

struct FormatInfo {
  Format format;
  const char* name;  // CLI name: fp32 bf16 fp16 e4m3 e5m2 e3m4 e2m5 fp6_e2m3 ...
  unsigned bits;     // code width
  bool is_float;     // has a sign/exponent/mantissa structure
  bool has_inf;
  bool has_nan;
  double max_finite;  // largest finite magnitude
};
const FormatInfo& info(Format f);
std::optional<Format> parse_format(std::string_view name);
// Every format's CLI name in Format order, joined by `sep`: "fp32 bf16 ... u8".
std::string format_list(std::string_view sep = " ");

// Exact value of a code (code must fit in info(f).bits; higher bits ignored).
double decode(Format f, std::uint32_t code);
// RNE encode of a value. NaN input encodes to the format's NaN (or 0 where it
// has none: FP6, FP4, INT4, NF4, S8, U8 — see CONVENTIONS).
std::uint32_t encode(Format f, double value, Overflow ov = Overflow::Saturate);

// Bit-level helpers for the IEEE containers.
float f32_from_bits(std::uint32_t b);
std::uint32_t bits_from_f32(float f);

// The QLoRA NF4 codebook (seed 000 §4.2), as FP32 values.
extern const float kNf4Codebook[16];

// One line of `tpbsim convert`: "VALUE -> 0xHEX DECIMAL" (SPEC §9). VALUE is a
// decimal number or 0x... meaning a code of `from`. Returns std::nullopt and
// sets `error` when VALUE cannot be parsed.
std::optional<std::string> convert_line(Format from, Format to, std::string_view value,
                                        std::string& error);
// As above with the overflow rule of every narrowing step (`--no-sat`).
std::optional<std::string> convert_line(Format from, Format to, std::string_view value,
                                        std::string& error, Overflow ov);

}  // namespace tpb::num

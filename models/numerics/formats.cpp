// Numeric formats: one parameterized minifloat codec for every float format,
// plus the integer, codebook (NF4) and exponent-only (E8M0) formats.
#include "models/numerics/formats.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace tpb::num {

namespace {

// How the top exponent field is used.
enum class Specials : std::uint8_t {
  None,  // every code is finite (OCP MX FP6 / FP4)
  Ieee,  // exp all-ones: mantissa 0 = Inf, otherwise NaN
  Fn,    // OCP "fn" (E4M3): only S.1..1.1..1 is NaN, no Inf
};

struct MiniFloat {
  unsigned ebits;
  unsigned mbits;
  int bias;
  Specials specials;
};

struct FormatDesc {
  FormatInfo info;
  MiniFloat mf;  // meaningful when info.is_float and the format is not E8M0
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Indexed by Format ordinal. max_finite is filled from the codec at startup
// for the minifloats (see max_code()), written here for the others.
const FormatDesc kDesc[kNumFormats] = {
    {{Format::Fp32, "fp32", 32, true, true, true, 0}, {8, 23, 127, Specials::Ieee}},
    {{Format::Bf16, "bf16", 16, true, true, true, 0}, {8, 7, 127, Specials::Ieee}},
    {{Format::Fp16, "fp16", 16, true, true, true, 0}, {5, 10, 15, Specials::Ieee}},
    {{Format::E4M3, "e4m3", 8, true, false, true, 0}, {4, 3, 7, Specials::Fn}},
    {{Format::E5M2, "e5m2", 8, true, true, true, 0}, {5, 2, 15, Specials::Ieee}},
    {{Format::E3M4, "e3m4", 8, true, true, true, 0}, {3, 4, 3, Specials::Ieee}},
    {{Format::E2M5, "e2m5", 8, true, true, true, 0}, {2, 5, 1, Specials::Ieee}},
    {{Format::Fp6E2M3, "fp6_e2m3", 6, true, false, false, 0}, {2, 3, 1, Specials::None}},
    {{Format::Fp6E3M2, "fp6_e3m2", 6, true, false, false, 0}, {3, 2, 3, Specials::None}},
    {{Format::Fp4E2M1, "fp4_e2m1", 4, true, false, false, 0}, {2, 1, 1, Specials::None}},
    {{Format::Int4, "int4", 4, false, false, false, 7.0}, {}},
    {{Format::Nf4, "nf4", 4, false, false, false, 1.0}, {}},
    {{Format::E8M0, "e8m0", 8, true, false, true, 0x1p127}, {}},
    {{Format::S8, "s8", 8, false, false, false, 127.0}, {}},
    {{Format::U8, "u8", 8, false, false, false, 255.0}, {}},
    {{Format::E4M3Legacy, "e4m3_legacy", 8, true, true, true, 0}, {4, 3, 7, Specials::Ieee}},
};

bool is_minifloat(Format f) {
  return static_cast<int>(f) <= static_cast<int>(Format::Fp4E2M1) || f == Format::E4M3Legacy;
}

const MiniFloat& mf_of(Format f) { return kDesc[static_cast<int>(f)].mf; }

// Largest finite magnitude code (sign bit clear).
std::uint32_t max_code(const MiniFloat& m) {
  const std::uint32_t all = (1u << (m.ebits + m.mbits)) - 1u;
  switch (m.specials) {
    case Specials::None:
      return all;
    case Specials::Fn:
      return all - 1u;  // S.1111.110
    case Specials::Ieee:
      return all - (1u << m.mbits);  // top exponent - 1, mantissa all ones
  }
  return all;
}

std::uint32_t nan_code(const MiniFloat& m) {
  const std::uint32_t all = (1u << (m.ebits + m.mbits)) - 1u;
  if (m.specials == Specials::Fn) return all;
  // Canonical quiet NaN: top exponent, mantissa MSB set.
  return (((1u << m.ebits) - 1u) << m.mbits) | (1u << (m.mbits - 1));
}

std::uint32_t inf_code(const MiniFloat& m) { return ((1u << m.ebits) - 1u) << m.mbits; }

double mf_decode(const MiniFloat& m, std::uint32_t code) {
  const unsigned width = 1 + m.ebits + m.mbits;
  code &= (width == 32) ? 0xFFFFFFFFu : ((1u << width) - 1u);
  const bool neg = (code >> (m.ebits + m.mbits)) & 1u;
  const std::uint32_t emask = (1u << m.ebits) - 1u;
  const std::uint32_t mmask = (1u << m.mbits) - 1u;
  const std::uint32_t e = (code >> m.mbits) & emask;
  const std::uint32_t man = code & mmask;
  double v;
  if (m.specials == Specials::Ieee && e == emask) {
    v = man == 0 ? kInf : kNaN;
  } else if (m.specials == Specials::Fn && e == emask && man == mmask) {
    v = kNaN;
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - m.bias - static_cast<int>(m.mbits));
  } else {
    v = std::ldexp(static_cast<double>(man | (1u << m.mbits)),
                   static_cast<int>(e) - m.bias - static_cast<int>(m.mbits));
  }
  if (std::isnan(v)) return v;
  return neg ? -v : v;
}

// Round-to-nearest-even of a finite non-negative double to a multiple of
// 2^q_exp, returned as the integer count of 2^q_exp (saturating the count at
// 2^62, far beyond any code magnitude, so callers see overflow).
std::uint64_t rne_scaled(double mag, int q_exp) {
  if (mag == 0.0) return 0;
  int e2;
  const double fr = std::frexp(mag, &e2);  // mag = fr * 2^e2, fr in [0.5, 1)
  // mag = sig * 2^(e2 - 53), sig < 2^53 exact.
  const auto sig = static_cast<std::uint64_t>(std::ldexp(fr, 53));
  const int shift = q_exp - (e2 - 53);  // right shift of sig
  if (shift <= 0) {
    if (-shift >= 9) return std::uint64_t{1} << 62;  // sig << 9 may exceed 2^62
    return sig << -shift;
  }
  if (shift > 54) return 0;  // below a quarter quantum
  const std::uint64_t q = sig >> shift;
  const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) return q + 1;
  return q;
}

std::uint32_t mf_encode(const MiniFloat& m, double v, Overflow ov) {
  const std::uint32_t sign_bit = 1u << (m.ebits + m.mbits);
  if (std::isnan(v)) return m.specials == Specials::None ? 0u : nan_code(m);
  const bool neg = std::signbit(v);
  const std::uint32_t sgn = neg ? sign_bit : 0u;
  const std::uint32_t maxc = max_code(m);
  const auto overflow = [&]() -> std::uint32_t {
    if (ov == Overflow::NonSaturate) {
      if (m.specials == Specials::Ieee) return sgn | inf_code(m);
      if (m.specials == Specials::Fn) return sgn | nan_code(m);
    }
    return sgn | maxc;
  };
  const double mag = std::fabs(v);
  if (std::isinf(mag)) {
    // Inf is a value, not an overflow: kept where the format has it.
    if (m.specials == Specials::Ieee) return sgn | inf_code(m);
    return overflow();
  }
  if (mag == 0.0) return sgn;
  const int emin = 1 - m.bias;  // exponent of the smallest normal
  int e2;
  std::frexp(mag, &e2);
  const int e_unb = e2 - 1;  // mag in [2^e_unb, 2^(e_unb+1))
  const int top_e = static_cast<int>((1u << m.ebits) - 1u);
  if (e_unb + m.bias > top_e) return overflow();
  std::uint64_t code;
  if (e_unb < emin) {
    // Subnormal quantum; a result of 2^M lands on the smallest normal.
    code = rne_scaled(mag, emin - static_cast<int>(m.mbits));
  } else {
    const std::uint64_t q = rne_scaled(mag, e_unb - static_cast<int>(m.mbits));
    // q in [2^M, 2^(M+1)]; adding to the exponent field carries into it.
    code = (static_cast<std::uint64_t>(e_unb + m.bias) << m.mbits) + (q - (1u << m.mbits));
  }
  if (code > maxc) return overflow();
  return sgn | static_cast<std::uint32_t>(code);
}

// RNE of a finite double to an integer value (as double, exact).
double rne_integer(double v) {
  const double fl = std::floor(v);
  const double frac = v - fl;  // exact
  if (frac > 0.5) return fl + 1.0;
  if (frac < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

std::uint32_t int_encode(double v, double lo, double hi, unsigned bits, Overflow ov) {
  if (std::isnan(v)) return 0;
  if (std::isinf(v)) v = v > 0 ? hi : lo;  // wrap of Inf is undefined: saturate
  const double r = rne_integer(v);
  const std::uint32_t mask = (1u << bits) - 1u;
  if (ov == Overflow::Saturate) {
    const double c = r < lo ? lo : (r > hi ? hi : r);
    return static_cast<std::uint32_t>(static_cast<std::int64_t>(c)) & mask;
  }
  // Two's-complement wrap: r mod 2^bits (fmod is exact).
  const double modulus = std::ldexp(1.0, static_cast<int>(bits));
  double w = std::fmod(r, modulus);
  if (w < 0) w += modulus;
  return static_cast<std::uint32_t>(w) & mask;
}

// Nearest codebook entry, decided exactly: between adjacent entries a < b the
// boundary is their midpoint (a + b) / 2, which is exact in double (two FP32
// values of magnitude <= 1 sum without rounding; halving is exact), so the
// comparison of v with it has no rounding error. A tie goes to the even
// index. At or past the end entries (+-1.0, also +-Inf and any huge value)
// the result saturates to index 0 / 15 (SPEC §9 convert). NaN: the zero code
// (NF4 has no NaN; CONVENTIONS).
std::uint32_t nf4_encode(double v) {
  if (std::isnan(v)) return 7;
  if (v <= static_cast<double>(kNf4Codebook[0])) return 0;
  if (v >= static_cast<double>(kNf4Codebook[15])) return 15;
  std::uint32_t i = 0;
  while (v > static_cast<double>(kNf4Codebook[i + 1])) ++i;  // cb[i] < v <= cb[i + 1]
  const double mid =
      (static_cast<double>(kNf4Codebook[i]) + static_cast<double>(kNf4Codebook[i + 1])) / 2;
  if (v < mid) return i;
  if (v > mid) return i + 1;
  return (i & 1u) == 0 ? i : i + 1;
}

std::uint32_t e8m0_encode(double v, Overflow ov) {
  if (std::isnan(v) || v < 0) return 0xFF;  // -0 is a zero, not negative
  if (v < 0x1p-127) return 0x00;            // no zero: the smallest scale
  if (std::isinf(v)) return ov == Overflow::Saturate ? 0xFE : 0xFF;
  int e2;
  const double fr = std::frexp(v, &e2);  // v = 2fr * 2^(e2-1), 2fr in [1, 2)
  // Mantissa-less RNE: significand 1.f rounds to 1 or 2; the tie 1.5 goes to 2.
  const int e = (fr >= 0.75) ? e2 : e2 - 1;
  const int s = e + 127;
  if (s > 254) return ov == Overflow::Saturate ? 0xFE : 0xFF;
  return s < 0 ? 0x00 : static_cast<std::uint32_t>(s);
}

const FormatInfo* build_infos() {
  static FormatInfo infos[kNumFormats];
  for (int i = 0; i < kNumFormats; ++i) {
    infos[i] = kDesc[i].info;
    const auto f = static_cast<Format>(i);
    if (is_minifloat(f)) infos[i].max_finite = mf_decode(mf_of(f), max_code(mf_of(f)));
  }
  return infos;
}

// A code printed as the shortest round-trip decimal of its exact value.
std::string value_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

}  // namespace

const float kNf4Codebook[16] = {
    -1.0f,
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
    1.0f,
};

const FormatInfo& info(Format f) {
  static const FormatInfo* infos = build_infos();
  return infos[static_cast<int>(f)];
}

std::optional<Format> parse_format(std::string_view name) {
  for (int i = 0; i < kNumFormats; ++i) {
    if (name == kDesc[i].info.name) return static_cast<Format>(i);
  }
  return std::nullopt;
}

std::string format_list(std::string_view sep) {
  std::string out;
  for (int i = 0; i < kNumFormats; ++i) (out += i ? sep : "") += kDesc[i].info.name;
  return out;
}

double decode(Format f, std::uint32_t code) {
  if (is_minifloat(f)) return mf_decode(mf_of(f), code);
  switch (f) {
    case Format::Int4: {
      const int v = static_cast<int>(code & 0xFu);
      return static_cast<double>(v >= 8 ? v - 16 : v);
    }
    case Format::Nf4:
      return static_cast<double>(kNf4Codebook[code & 0xFu]);
    case Format::E8M0:
      return (code & 0xFFu) == 0xFFu ? kNaN : std::ldexp(1.0, static_cast<int>(code & 0xFFu) - 127);
    case Format::S8: {
      const int v = static_cast<int>(code & 0xFFu);
      return static_cast<double>(v >= 128 ? v - 256 : v);
    }
    case Format::U8:
      return static_cast<double>(code & 0xFFu);
    default:
      return kNaN;
  }
}

std::uint32_t encode(Format f, double value, Overflow ov) {
  if (is_minifloat(f)) return mf_encode(mf_of(f), value, ov);
  switch (f) {
    case Format::Int4:
      return int_encode(value, -8.0, 7.0, 4, ov);
    case Format::Nf4:
      return nf4_encode(value);
    case Format::E8M0:
      return e8m0_encode(value, ov);
    case Format::S8:
      return int_encode(value, -128.0, 127.0, 8, ov);
    case Format::U8:
      return int_encode(value, 0.0, 255.0, 8, ov);
    default:
      return 0;
  }
}

float f32_from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

std::uint32_t bits_from_f32(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

std::optional<std::string> convert_line(Format from, Format to, std::string_view value,
                                        std::string& error) {
  return convert_line(from, to, value, error, Overflow::Saturate);
}

std::optional<std::string> convert_line(Format from, Format to, std::string_view value,
                                        std::string& error, Overflow ov) {
  const std::string text(value);
  const FormatInfo& fi = info(from);
  double v;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    const std::string digits = text.substr(2);
    if (digits.empty() || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      error = fmt::format("bad code '{}': expected hex digits after 0x", text);
      return std::nullopt;
    }
    const std::size_t first = digits.find_first_not_of('0');
    const std::size_t sig_digits = first == std::string::npos ? 0 : digits.size() - first;
    const unsigned long long code =
        sig_digits > 16 ? ~0ull : std::strtoull(digits.c_str(), nullptr, 16);
    if (sig_digits > 16 || (fi.bits < 64 && code >> fi.bits) != 0) {
      error = fmt::format("code '{}' does not fit in {} ({} bits)", text, fi.name, fi.bits);
      return std::nullopt;
    }
    v = decode(from, static_cast<std::uint32_t>(code));
  } else {
    // strtod would also take hex floats ("0x1p3", "-0x2"): not a VALUE form here.
    if (text.empty() || text.find_first_of("xX") != std::string::npos ||
        std::isspace(static_cast<unsigned char>(text[0]))) {
      error = fmt::format("bad value '{}': expected a decimal number, nan, inf or 0x<code>", text);
      return std::nullopt;
    }
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) {
      error = fmt::format("bad value '{}': expected a decimal number, nan, inf or 0x<code>", text);
      return std::nullopt;
    }
    // ERANGE overflow gives +-HUGE_VAL (= Inf) and underflow a correctly
    // rounded tiny value or 0: both are what the user typed, rounded.
    v = decode(from, encode(from, parsed, ov));
  }
  const std::uint32_t out = encode(to, v, ov);
  const unsigned hex_digits = (info(to).bits + 3) / 4;
  return fmt::format("{} -> 0x{:0{}X} {}", text, out, hex_digits, value_text(decode(to, out)));
}

}  // namespace tpb::num

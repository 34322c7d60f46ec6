// TensorDequantize word streams (SPEC §3) and the MX block quantize (SPEC §4).
//
// Every table entry is computed once by the scalar reference dequant_code()
// (decode -> optional ldexp by the E8M0 scale -> RNE encode, saturating), so
// the fast paths are value-identical to it by construction.
#include "models/numerics/dequant_stream.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/numerics/formats.h"

namespace tpb::num {

namespace {

struct FmtPair {
  Format in;
  Format out;
};

// seed 000 §4: DEQUANT_FMT names the input micro-format and the FP8 output.
bool fmt_pair(isa::DequantFmt fmt, FmtPair& p) {
  switch (fmt) {
    case isa::DequantFmt::E2M1ToE5M2:
      p = {Format::Fp4E2M1, Format::E5M2};
      return true;
    case isa::DequantFmt::Int4ToE5M2:
      p = {Format::Int4, Format::E5M2};
      return true;
    case isa::DequantFmt::Nf4ToE4M3:
      p = {Format::Nf4, Format::E4M3};
      return true;
    case isa::DequantFmt::E2M3ToE4M3:
      p = {Format::Fp6E2M3, Format::E4M3};
      return true;
    default:
      return false;
  }
}

bool is_4bit(isa::DequantFmt fmt) {
  return fmt == isa::DequantFmt::E2M1ToE5M2 || fmt == isa::DequantFmt::Int4ToE5M2 ||
         fmt == isa::DequantFmt::Nf4ToE4M3;
}

// Index 0..2 of the three 4-bit formats.
int idx4(isa::DequantFmt fmt) { return static_cast<int>(fmt) - 1; }

constexpr std::uint8_t kFp8NaN = 0x7F;  // NaN in both E4M3 (fn) and E5M2

struct Tables {
  // group 0, 4-bit: source byte (two codes, low nibble first) -> two FP8 bytes.
  std::uint16_t g0[3][256];
  // group 0, FP6: 12 source bits (two codes) -> two FP8 bytes.
  std::uint16_t fp6[4096];
  // group 8, 4-bit MX: per E8M0 scale, source byte -> two FP8 bytes.
  std::uint16_t mx[3][256][256];

  Tables() {
    static const isa::DequantFmt k4[3] = {isa::DequantFmt::E2M1ToE5M2, isa::DequantFmt::Int4ToE5M2,
                                          isa::DequantFmt::Nf4ToE4M3};
    for (int f = 0; f < 3; ++f) {
      std::uint8_t one[16];
      for (int c = 0; c < 16; ++c)
        one[c] = dequant_code(k4[f], static_cast<std::uint8_t>(c), false, 0);
      for (int b = 0; b < 256; ++b)
        g0[f][b] = static_cast<std::uint16_t>(one[b & 0xF] | (one[b >> 4] << 8));
      for (int s = 0; s < 256; ++s) {
        for (int c = 0; c < 16; ++c)
          one[c] =
              dequant_code(k4[f], static_cast<std::uint8_t>(c), true, static_cast<std::uint8_t>(s));
        for (int b = 0; b < 256; ++b)
          mx[f][s][b] = static_cast<std::uint16_t>(one[b & 0xF] | (one[b >> 4] << 8));
      }
    }
    std::uint8_t one6[64];
    for (int c = 0; c < 64; ++c)
      one6[c] = dequant_code(isa::DequantFmt::E2M3ToE4M3, static_cast<std::uint8_t>(c), false, 0);
    for (int b = 0; b < 4096; ++b)
      fp6[b] = static_cast<std::uint16_t>(one6[b & 0x3F] | (one6[b >> 6] << 8));
  }
};

const Tables& tables() {
  static const Tables* t = new Tables();  // thread-safe static init, never freed
  return *t;
}

inline std::uint32_t expand_word(const std::uint16_t* t, std::uint32_t w, std::uint32_t& hi) {
  hi = t[(w >> 16) & 0xFF] | (static_cast<std::uint32_t>(t[w >> 24]) << 16);
  return t[w & 0xFF] | (static_cast<std::uint32_t>(t[(w >> 8) & 0xFF]) << 16);
}

// 24 source bits = four FP6 codes -> four FP8 bytes.
inline std::uint32_t expand24(const std::uint16_t* t, std::uint32_t bits24) {
  return t[bits24 & 0xFFF] | (static_cast<std::uint32_t>(t[(bits24 >> 12) & 0xFFF]) << 16);
}

}  // namespace

DequantRatio dequant_ratio(isa::DequantFmt fmt, unsigned group_size) {
  if (group_size == 0) {
    if (is_4bit(fmt)) return {1, 2};
    if (fmt == isa::DequantFmt::E2M3ToE4M3) return {3, 4};
  } else if (group_size == 8 && is_4bit(fmt)) {
    return {5, 8};  // FP6 is never MX (seed 000 §5)
  }
  return {0, 0};
}

std::uint8_t dequant_code(isa::DequantFmt fmt, std::uint8_t code, bool has_scale,
                          std::uint8_t scale) {
  FmtPair p;
  if (!fmt_pair(fmt, p)) {
    throw std::invalid_argument("dequant_code: invalid DEQUANT_FMT " +
                                std::to_string(static_cast<unsigned>(fmt)));
  }
  double v = decode(p.in, code & ((1u << info(p.in).bits) - 1u));
  if (has_scale) {
    if (scale == 0xFF) return kFp8NaN;
    v = std::ldexp(v, static_cast<int>(scale) - 127);  // exact in double
  }
  return static_cast<std::uint8_t>(encode(p.out, v, Overflow::Saturate));
}

void dequant_words(isa::DequantFmt fmt, unsigned group_size, const std::uint32_t* src,
                   std::uint32_t* dst, std::size_t steps) {
  const DequantRatio r = dequant_ratio(fmt, group_size);
  if (r.src_words == 0) {
    throw std::invalid_argument("dequant_words: invalid DEQUANT_FMT " +
                                std::to_string(static_cast<unsigned>(fmt)) + " with group_size " +
                                std::to_string(group_size));
  }
  const Tables& t = tables();
  if (fmt == isa::DequantFmt::E2M3ToE4M3) {
    // 96-bit LE bit string of 16 codes; dst word j takes bits [24j, 24j+24).
    const std::uint16_t* t6 = t.fp6;
    for (std::size_t i = 0; i < steps; ++i, src += 3, dst += 4) {
      const std::uint32_t w0 = src[0], w1 = src[1], w2 = src[2];
      dst[0] = expand24(t6, w0 & 0xFFFFFF);
      dst[1] = expand24(t6, ((w0 >> 24) | (w1 << 8)) & 0xFFFFFF);
      dst[2] = expand24(t6, ((w1 >> 16) | (w2 << 16)) & 0xFFFFFF);
      dst[3] = expand24(t6, w2 >> 8);
    }
    return;
  }
  const int f = idx4(fmt);
  if (group_size == 0) {
    const std::uint16_t* tg = t.g0[f];
    for (std::size_t i = 0; i < steps; ++i, ++src, dst += 2)
      dst[0] = expand_word(tg, src[0], dst[1]);
    return;
  }
  // MX chunk: word 0 = four scales, byte g scales source word 1+g.
  for (std::size_t i = 0; i < steps; ++i, src += 5, dst += 8) {
    const std::uint32_t sw = src[0];
    for (unsigned g = 0; g < 4; ++g) {
      const std::uint16_t* ts = t.mx[f][(sw >> (8 * g)) & 0xFF];
      dst[2 * g] = expand_word(ts, src[1 + g], dst[2 * g + 1]);
    }
  }
}

std::uint8_t mx_quantize_block(const std::uint32_t in_bits[32], MxOut out, MxEmax emax,
                               std::uint32_t out_words[8]) {
  // SPEC §4 / seed 003 §2.2: biased FP32 exponent (>>23) max over the block.
  static constexpr int kEmax[2][2] = {{8, 15}, {7, 14}};  // [emax][out]
  const int off = kEmax[emax == MxEmax::Ocp ? 0 : 1][out == MxOut::E4M3 ? 0 : 1];
  unsigned max_e = 0;
  bool special = false;
  for (int i = 0; i < 32; ++i) {
    const unsigned e = (in_bits[i] >> 23) & 0xFFu;
    special |= (e == 0xFFu);
    max_e = e > max_e ? e : max_e;
  }
  if (special) {
    for (int r = 0; r < 8; ++r) out_words[r] = 0x7F7F7F7Fu;
    return 0xFF;
  }
  int s = static_cast<int>(max_e) - off;
  s = s < 0 ? 0 : (s > 254 ? 254 : s);
  const Format of = out == MxOut::E4M3 ? Format::E4M3 : Format::E5M2;
  for (int r = 0; r < 8; ++r) {
    std::uint32_t w = 0;
    for (int j = 0; j < 4; ++j) {
      const double x = static_cast<double>(f32_from_bits(in_bits[4 * r + j]));
      const std::uint32_t q = encode(of, std::ldexp(x, 127 - s), Overflow::Saturate);
      w |= q << (8 * j);
    }
    out_words[r] = w;
  }
  return static_cast<std::uint8_t>(s);
}

}  // namespace tpb::num

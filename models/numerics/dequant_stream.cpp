// TensorDequantize word streams (SPEC §3) and the MX block quantize (SPEC §4).
//
// Every table entry is computed once by the scalar reference dequant_code()
// (decode -> optional ldexp by the E8M0 scale -> RNE encode, saturating), so
// the fast paths are value-identical to it by construction.
#include "models/numerics/dequant_stream.h"

#include <cmath>
#include <stdexcept>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#define TPB_DEQUANT_SSSE3 1
#endif

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
  // The same as 16-entry code -> FP8 byte tables, for the SIMD nibble lookup.
  std::uint8_t n4[3][16];
  std::uint8_t mx16[3][256][16];

  Tables() {
    static const isa::DequantFmt k4[3] = {isa::DequantFmt::E2M1ToE5M2, isa::DequantFmt::Int4ToE5M2,
                                          isa::DequantFmt::Nf4ToE4M3};
    for (int f = 0; f < 3; ++f) {
      std::uint8_t one[16];
      for (int c = 0; c < 16; ++c)
        one[c] = dequant_code(k4[f], static_cast<std::uint8_t>(c), false, 0);
      for (int c = 0; c < 16; ++c) n4[f][c] = one[c];
      for (int b = 0; b < 256; ++b)
        g0[f][b] = static_cast<std::uint16_t>(one[b & 0xF] | (one[b >> 4] << 8));
      for (int s = 0; s < 256; ++s) {
        for (int c = 0; c < 16; ++c)
          mx16[f][s][c] = one[c] =
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

#if TPB_DEQUANT_SSSE3
// SIMD nibble lookup (pshufb): 16 source bytes -> 32 FP8 bytes per step. Code
// k of a word sits in nibble k, so source byte J yields output bytes 2J (low
// nibble) and 2J+1 (high nibble): an interleave of the two lookups.
bool force_portable = false;

bool have_ssse3() {
  static const bool yes = __builtin_cpu_supports("ssse3");
  return yes && !force_portable;
}

__attribute__((target("ssse3"))) std::size_t group0_ssse3(const std::uint8_t table[16],
                                                          const std::uint32_t* src,
                                                          std::uint32_t* dst, std::size_t words) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table));
  const __m128i nib = _mm_set1_epi8(0x0F);
  std::size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i a = _mm_shuffle_epi8(t, _mm_and_si128(x, nib));
    const __m128i b = _mm_shuffle_epi8(t, _mm_and_si128(_mm_srli_epi16(x, 4), nib));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm_unpacklo_epi8(a, b));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i + 4), _mm_unpackhi_epi8(a, b));
  }
  return i;  // words done
}

// One MX chunk per step: the four code words each take the table of their own
// scale; lane masks pick word g's four bytes out of its table's lookup.
__attribute__((target("ssse3"))) std::size_t mx_ssse3(const std::uint8_t (*tables)[16],
                                                      const std::uint32_t* src, std::uint32_t* dst,
                                                      std::size_t steps) {
  const __m128i nib = _mm_set1_epi8(0x0F);
  const __m128i m0 = _mm_setr_epi32(-1, 0, 0, 0), m1 = _mm_setr_epi32(0, -1, 0, 0),
                m2 = _mm_setr_epi32(0, 0, -1, 0), m3 = _mm_setr_epi32(0, 0, 0, -1);
  for (std::size_t i = 0; i < steps; ++i, src += 5, dst += 8) {
    const std::uint32_t sw = src[0];
    const __m128i t0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tables[sw & 0xFF]));
    const __m128i t1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tables[(sw >> 8) & 0xFF]));
    const __m128i t2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tables[(sw >> 16) & 0xFF]));
    const __m128i t3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tables[sw >> 24]));
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 1));
    const __m128i lo = _mm_and_si128(x, nib);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), nib);
    const __m128i a = _mm_or_si128(_mm_or_si128(_mm_and_si128(_mm_shuffle_epi8(t0, lo), m0),
                                                _mm_and_si128(_mm_shuffle_epi8(t1, lo), m1)),
                                   _mm_or_si128(_mm_and_si128(_mm_shuffle_epi8(t2, lo), m2),
                                                _mm_and_si128(_mm_shuffle_epi8(t3, lo), m3)));
    const __m128i b = _mm_or_si128(_mm_or_si128(_mm_and_si128(_mm_shuffle_epi8(t0, hi), m0),
                                                _mm_and_si128(_mm_shuffle_epi8(t1, hi), m1)),
                                   _mm_or_si128(_mm_and_si128(_mm_shuffle_epi8(t2, hi), m2),
                                                _mm_and_si128(_mm_shuffle_epi8(t3, hi), m3)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_unpacklo_epi8(a, b));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 4), _mm_unpackhi_epi8(a, b));
  }
  return steps;
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes && !force_portable;
}

// The 16-byte tables of scale byte g of chunk A (low lane) and chunk B.
__attribute__((target("avx2"))) inline __m256i table_pair(const std::uint8_t (*tables)[16],
                                                          std::uint32_t sa, std::uint32_t sb,
                                                          unsigned g) {
  return _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(tables[(sb >> (8 * g)) & 0xFF]),
                             reinterpret_cast<const __m128i*>(tables[(sa >> (8 * g)) & 0xFF]));
}

// Two MX chunks per step: chunk A in the low 128-bit lane, chunk B in the high
// one (pshufb works within lanes), otherwise as mx_ssse3.
__attribute__((target("avx2"))) std::size_t mx_avx2(const std::uint8_t (*tables)[16],
                                                    const std::uint32_t* src, std::uint32_t* dst,
                                                    std::size_t steps) {
  const __m256i nib = _mm256_set1_epi8(0x0F);
  const __m256i m0 = _mm256_setr_epi32(-1, 0, 0, 0, -1, 0, 0, 0);
  const __m256i m1 = _mm256_setr_epi32(0, -1, 0, 0, 0, -1, 0, 0);
  const __m256i m2 = _mm256_setr_epi32(0, 0, -1, 0, 0, 0, -1, 0);
  const __m256i m3 = _mm256_setr_epi32(0, 0, 0, -1, 0, 0, 0, -1);
  std::size_t i = 0;
  for (; i + 2 <= steps; i += 2, src += 10, dst += 16) {
    const std::uint32_t sa = src[0], sb = src[5];
    const __m256i t0 = table_pair(tables, sa, sb, 0), t1 = table_pair(tables, sa, sb, 1),
                  t2 = table_pair(tables, sa, sb, 2), t3 = table_pair(tables, sa, sb, 3);
    const __m256i x = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(src + 6),
                                          reinterpret_cast<const __m128i*>(src + 1));
    const __m256i lo = _mm256_and_si256(x, nib);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nib);
    const __m256i a =
        _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(_mm256_shuffle_epi8(t0, lo), m0),
                                        _mm256_and_si256(_mm256_shuffle_epi8(t1, lo), m1)),
                        _mm256_or_si256(_mm256_and_si256(_mm256_shuffle_epi8(t2, lo), m2),
                                        _mm256_and_si256(_mm256_shuffle_epi8(t3, lo), m3)));
    const __m256i b =
        _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(_mm256_shuffle_epi8(t0, hi), m0),
                                        _mm256_and_si256(_mm256_shuffle_epi8(t1, hi), m1)),
                        _mm256_or_si256(_mm256_and_si256(_mm256_shuffle_epi8(t2, hi), m2),
                                        _mm256_and_si256(_mm256_shuffle_epi8(t3, hi), m3)));
    const __m256i l = _mm256_unpacklo_epi8(a, b), h = _mm256_unpackhi_epi8(a, b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute2x128_si256(l, h, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8), _mm256_permute2x128_si256(l, h, 0x31));
  }
  return i;  // chunks done
}
#endif

}  // namespace

void dequant_force_portable(bool on) {
#if TPB_DEQUANT_SSSE3
  force_portable = on;
#else
  (void)on;
#endif
}

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
#if TPB_DEQUANT_SSSE3
    if (have_ssse3()) {
      const std::size_t done = group0_ssse3(t.n4[f], src, dst, steps);
      src += done;
      dst += 2 * done;
      steps -= done;
    }
#endif
    const std::uint16_t* tg = t.g0[f];
    for (std::size_t i = 0; i < steps; ++i, ++src, dst += 2)
      dst[0] = expand_word(tg, src[0], dst[1]);
    return;
  }
#if TPB_DEQUANT_SSSE3
  if (have_avx2()) {
    const std::size_t done = mx_avx2(t.mx16[f], src, dst, steps);
    src += 5 * done;
    dst += 8 * done;
    steps -= done;
  }
  if (have_ssse3()) {
    mx_ssse3(t.mx16[f], src, dst, steps);
    return;
  }
#endif
  // MX chunk: word 0 = four scales, byte g scales source word 1+g.
  for (std::size_t i = 0; i < steps; ++i, src += 5, dst += 8) {
    const std::uint32_t sw = src[0];
    for (unsigned g = 0; g < 4; ++g) {
      const std::uint16_t* ts = t.mx[f][(sw >> (8 * g)) & 0xFF];
      dst[2 * g] = expand_word(ts, src[1 + g], dst[2 * g + 1]);
    }
  }
}

}  // namespace tpb::num

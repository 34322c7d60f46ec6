// Compiled with -ffp-contract=off (CMakeLists.txt): a * b + c stays two
// roundings, as SPEC §5's accumulation convention requires.
#include "models/numerics/mx_matmul.h"

#include <cmath>
#include <limits>
#include <vector>

namespace tpb::num {

namespace {

// The numeric format of each DTYPE ordinal a matmul operand can carry (SPEC
// §2), and whether it may be an MX element and a plain element.
struct MatmulDtype {
  std::uint8_t dtype;
  Format format;
  bool mx, plain;
};
constexpr MatmulDtype kMatmulDtypes[] = {
    {0x05, Format::Bf16, false, true}, {0x06, Format::Fp16, false, true},
    {0x08, Format::Fp32, false, true}, {0x0C, Format::E2M5, true, true},
    {0x0D, Format::E3M4, true, true},  {0x0E, Format::E4M3, true, true},
    {0x0F, Format::E5M2, true, true},  {0x10, Format::Fp4E2M1, true, false},
    {0x12, Format::Int4, true, false},
};

std::optional<Format> matmul_format(std::uint8_t dtype, bool mx) {
  for (const MatmulDtype& d : kMatmulDtypes)
    if (d.dtype == dtype && (mx ? d.mx : d.plain)) return d.format;
  return std::nullopt;
}

}  // namespace

std::optional<Format> mx_element_format(std::uint8_t dtype) { return matmul_format(dtype, true); }

std::optional<Format> plain_element_format(std::uint8_t dtype) {
  return matmul_format(dtype, false);
}

unsigned mx_word_bytes(Format f) { return (f == Format::Fp4E2M1 || f == Format::Int4) ? 2 : 4; }

unsigned plain_elem_bytes(Format f) {
  switch (f) {
    case Format::Fp32:
      return 4;
    case Format::Bf16:
    case Format::Fp16:
      return 2;
    default:
      return 1;
  }
}

float e8m0_scale(std::uint8_t s) {
  if (s == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, int(s) - 127);  // 2^-127 .. 2^127: exact FP32 values
}

std::uint32_t x4_lane_code(Format f, std::uint32_t word, unsigned lane) {
  if (mx_word_bytes(f) == 2) return (word >> (4 * lane)) & 0xFu;
  return (word >> (8 * lane)) & 0xFFu;
}

namespace {
// The FP32 value of every code of a format of at most 8 bits, built once.
struct CodeTable {
  float v[256];
  explicit CodeTable(Format f) {
    const unsigned n = 1u << info(f).bits;
    for (unsigned c = 0; c < 256; ++c) v[c] = static_cast<float>(decode(f, c % n));
  }
};
const float* code_table(Format f) {
  static const CodeTable e2m5(Format::E2M5), e3m4(Format::E3M4), e4m3(Format::E4M3),
      e5m2(Format::E5M2), e2m1(Format::Fp4E2M1), int4(Format::Int4);
  switch (f) {
    case Format::E2M5:
      return e2m5.v;
    case Format::E3M4:
      return e3m4.v;
    case Format::E4M3:
      return e4m3.v;
    case Format::E5M2:
      return e5m2.v;
    case Format::Fp4E2M1:
      return e2m1.v;
    case Format::Int4:
      return int4.v;
    default:
      return nullptr;
  }
}
}  // namespace

void decode_x4(Format f, std::uint32_t word, std::uint8_t s, float out[4]) {
  const float* t = code_table(f);
  const float scale = e8m0_scale(s);
  for (unsigned l = 0; l < 4; ++l) {
    const float v =
        t ? t[x4_lane_code(f, word, l)] : static_cast<float>(decode(f, x4_lane_code(f, word, l)));
    out[l] = v * scale;  // one FP32 rounding (exact inside the FP32 range)
  }
}

float decode_plain(Format f, std::uint32_t code) {
  if (f == Format::Fp32) return f32_from_bits(code);
  if (const float* t = code_table(f)) return t[code & 0xFFu];
  return static_cast<float>(decode(f, code));  // BF16 / FP16: exact in FP32
}

void matmul_fp32(const float* w, const float* x, std::size_t kdim, std::size_t M, std::size_t N,
                 float* acc, bool accumulate) {
  if (kdim == 0) return;
  // k outermost per output row keeps every acc[m][n] in k-ascending order and
  // lets the n loop vectorise (element-wise multiply, then add: two roundings).
  for (std::size_t m = 0; m < M; ++m) {
    float* a = acc + m * N;
    std::size_t k = 0;
    if (!accumulate) {
      const float w0 = w[m];
      for (std::size_t n = 0; n < N; ++n) a[n] = w0 * x[n];
      k = 1;
    }
    for (; k < kdim; ++k) {
      const float wk = w[k * M + m];
      const float* xk = x + k * N;
      for (std::size_t n = 0; n < N; ++n) {
        const float p = wk * xk[n];
        a[n] = a[n] + p;
      }
    }
  }
}

}  // namespace tpb::num

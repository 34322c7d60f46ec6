// Compiled with -ffp-contract=off (CMakeLists.txt): a * b + c stays two
// roundings, as SPEC §5's accumulation convention requires. The products and
// sums themselves run in the tile kernels (mx_matmul_kernel.inc).
#include "models/numerics/mx_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "models/numerics/mx_matmul_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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
    {0x12, Format::Int4, true, false}, {0x0B, Format::E4M3Legacy, false, true},
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

namespace {
// a * b in FP32, a's NaN when both are NaNs (the x86 rule, written as one
// instruction so that the compiler cannot swap the operands).
inline float mul_first(float a, float b) {
#if defined(__x86_64__)
  __asm__("mulss %1, %0" : "+x"(a) : "x"(b));
  return a;
#else
  return a * b;
#endif
}

// 2^(s-127) for every E8M0 byte (NaN for 0xFF), built once.
struct ScaleTable {
  float v[256];
  ScaleTable() {
    for (unsigned s = 0; s < 256; ++s) v[s] = e8m0_scale(static_cast<std::uint8_t>(s));
  }
};
const float* scale_table() {
  static const ScaleTable t;
  return t.v;
}

// decode_plain of every 16-bit code of BF16 / FP16, built once on first use.
struct Plain16Table {
  std::vector<float> v;
  explicit Plain16Table(Format f) : v(65536) {
    for (std::uint32_t c = 0; c < 65536; ++c) v[c] = static_cast<float>(decode(f, c));
  }
};
const float* plain16_table(Format f) {
  if (f == Format::Bf16) {
    static const Plain16Table t(Format::Bf16);
    return t.v.data();
  }
  if (f == Format::Fp16) {
    static const Plain16Table t(Format::Fp16);
    return t.v.data();
  }
  return nullptr;
}
}  // namespace

void decode_x4(Format f, std::uint32_t word, std::uint8_t s, float out[4]) {
  const float* t = code_table(f);
  const float scale = e8m0_scale(s);
  for (unsigned l = 0; l < 4; ++l) {
    const float v =
        t ? t[x4_lane_code(f, word, l)] : static_cast<float>(decode(f, x4_lane_code(f, word, l)));
    out[l] = mul_first(v, scale);  // one FP32 rounding (exact inside the FP32 range)
  }
}

float decode_plain(Format f, std::uint32_t code) {
  if (f == Format::Fp32) return f32_from_bits(code);
  if (const float* t = code_table(f)) return t[code & 0xFFu];
  return static_cast<float>(decode(f, code));  // BF16 / FP16: exact in FP32
}

void decode_mx_partition(Format f, const std::uint8_t* words, const std::uint8_t* scales,
                         unsigned p, const PackedLayout& L, float* out) {
  const float* t = code_table(f);
  const float* st = scale_table();
  const std::size_t k0 = std::size_t{4} * p;
  const bool nibbles = mx_word_bytes(f) == 2;
  // Lane l of column j's word.
  const auto code = [&](std::size_t j, unsigned l) -> unsigned {
    if (nibbles) return (words[2 * j + l / 2] >> (4 * (l % 2))) & 0xF;
    return words[4 * j + l];
  };
  std::size_t j = 0;
#if defined(__x86_64__)
  // Four columns at a time (they are adjacent in a panel: panels are
  // multiples of 4 wide): one vector multiply and store per lane.
  for (; j + 4 <= L.cols; j += 4) {
    const __m128 s =
        _mm_setr_ps(st[scales[j]], st[scales[j + 1]], st[scales[j + 2]], st[scales[j + 3]]);
    float* o = out + L.index(k0, j);  // lane l at o + l x panel
    for (unsigned l = 0; l < 4; ++l) {
      __m128 v =
          _mm_setr_ps(t[code(j, l)], t[code(j + 1, l)], t[code(j + 2, l)], t[code(j + 3, l)]);
      __asm__("mulps %1, %0" : "+x"(v) : "x"(s));  // v x s, v's NaN first, as mul_first
      _mm_storeu_ps(o + l * L.panel, v);
    }
  }
#endif
  for (; j < L.cols; ++j) {
    const float s = st[scales[j]];
    float* o = out + L.index(k0, j);
    for (unsigned l = 0; l < 4; ++l) o[l * L.panel] = mul_first(t[code(j, l)], s);  // as decode_x4
  }
}

void decode_plain_partition(Format f, const std::uint8_t* elems, unsigned p, const PackedLayout& L,
                            float* out) {
  const unsigned eb = plain_elem_bytes(f);
  if (const float* t16 = plain16_table(f)) {
    for (std::size_t j = 0; j < L.cols; ++j)
      out[L.index(p, j)] = t16[elems[2 * j] | (unsigned{elems[2 * j + 1]} << 8)];
    return;
  }
  for (std::size_t j = 0; j < L.cols; ++j) {
    std::uint32_t code = 0;
    std::memcpy(&code, elems + j * eb, eb);  // little-endian
    out[L.index(p, j)] = decode_plain(f, code);
  }
}

void pack(const float* a, const PackedLayout& L, PackedFloats& out) {
  out.assign(L.size(), 0.0f);
  for (std::size_t k = 0; k < L.kdim; ++k)
    for (std::size_t j = 0; j < L.cols; ++j) out[L.index(k, j)] = a[k * L.cols + j];
}

std::size_t matmul_tiles(std::size_t M, std::size_t N) {
  return (M + kPanelRows - 1) / kPanelRows * ((N + kPanelCols - 1) / kPanelCols);
}

namespace {
static_assert(kPanelRows == mm_kernels::kTileRows && kPanelCols == mm_kernels::kTileCols);

mm_kernels::TileFn tile_fn(SimdPath path) {
#if defined(__x86_64__) && defined(TPB_SIMD_X86)
  if (path == SimdPath::Avx512) return mm_kernels::avx512::tile;
  if (path == SimdPath::Avx2) return mm_kernels::avx2::tile;
#else
  (void)path;
#endif
  return mm_kernels::baseline::tile;
}
}  // namespace

void matmul_packed(const float* wp, const float* xp, std::size_t kdim, std::size_t M, std::size_t N,
                   float* acc, bool accumulate, std::size_t tile_begin, std::size_t tile_end,
                   SimdPath path) {
  if (kdim == 0) return;
  const mm_kernels::TileFn tile = tile_fn(path);
  const std::size_t m_panels = (M + kPanelRows - 1) / kPanelRows;
  tile_end = std::min(tile_end, matmul_tiles(M, N));
  for (std::size_t t = tile_begin; t < tile_end; ++t) {
    const std::size_t mp = t % m_panels, np = t / m_panels;
    const std::size_t m0 = mp * kPanelRows, n0 = np * kPanelCols;
    const std::size_t rows = std::min(kPanelRows, M - m0), cols = std::min(kPanelCols, N - n0);
    const float* w = wp + mp * kdim * kPanelRows;
    const float* x = xp + np * kdim * kPanelCols;
    float* c = acc + m0 * N + n0;
    if (rows == kPanelRows && cols == kPanelCols) {
      tile(w, x, kdim, c, N, accumulate);
      continue;
    }
    // An edge tile: through a whole tile's buffer (the padding's products are
    // dropped).
    alignas(64) float buf[kPanelRows * kPanelCols] = {};
    if (accumulate)
      for (std::size_t r = 0; r < rows; ++r)
        std::memcpy(buf + r * kPanelCols, c + r * N, cols * sizeof(float));
    tile(w, x, kdim, buf, kPanelCols, accumulate);
    for (std::size_t r = 0; r < rows; ++r)
      std::memcpy(c + r * N, buf + r * kPanelCols, cols * sizeof(float));
  }
}

void matmul_fp32(const float* w, const float* x, std::size_t kdim, std::size_t M, std::size_t N,
                 float* acc, bool accumulate, SimdPath path) {
  if (kdim == 0) return;
  PackedFloats wp, xp;
  pack(w, packed_w_layout(kdim, M), wp);
  pack(x, packed_x_layout(kdim, N), xp);
  matmul_packed(wp.data(), xp.data(), kdim, M, N, acc, accumulate, 0, matmul_tiles(M, N), path);
}

}  // namespace tpb::num

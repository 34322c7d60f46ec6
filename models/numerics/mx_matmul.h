// MX and plain matmul numerics of the PE (SPEC §5; seed 003 §3, §4). Pure C++.
//
// Values: every operand element is decoded to an FP32 value. An MX element is
// code value x 2^(s-127) computed as one FP32 multiply of two exact FP32
// values (the code's value and the E8M0 scale; 2^-127..2^127 are FP32
// values), so it is exact unless the product leaves the FP32 range, where it
// rounds RNE (overflow to +-Inf, gradual underflow); s = 0xFF gives NaN.
//
// Accumulation (SPEC §5 convention): PSUM[m][n] = sum over k ascending of
// W[k][m] * X[k][n] in FP32, one rounding per multiply and one per add (this
// file is compiled with -ffp-contract=off, and the steps are written apart,
// so no FMA contracts them). Overwrite: the first addend is the k = 0
// product. Accumulate: the first addend is the old PSUM value, then every
// product in k order.
//
// Speed: the products and sums run in register-blocked SIMD tile kernels
// (mx_matmul_kernel.inc) vectorised over the output column n: each lane is
// one output's scalar sequence, so the results are the same bits on every
// SIMD path (simd.h), NaN, Inf, overflow and subnormals included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <vector>

#include "models/numerics/formats.h"
#include "models/numerics/simd.h"

namespace tpb::num {

// The element format of an MX x4 word for a DTYPE ordinal (E4M3, E5M2, E3M4,
// E2M5, E2M1, INT4), or nullopt.
std::optional<Format> mx_element_format(std::uint8_t dtype);
// The element format of a plain (non-MX) matmul operand: BF16, FP16, FP32,
// FP8 E2M5 / E3M4 / E4M3 / E5M2; nullopt for anything else.
std::optional<Format> plain_element_format(std::uint8_t dtype);
// Bytes of one x4 word: 2 for the 4-bit formats, else 4.
unsigned mx_word_bytes(Format f);
// Bytes of one plain element.
unsigned plain_elem_bytes(Format f);

// 2^(s-127) as an FP32 value; NaN for s = 0xFF.
float e8m0_scale(std::uint8_t s);
// Lane l (0..3) of an x4 word: FP8 -> byte l; 4-bit -> bits [4l+3:4l].
std::uint32_t x4_lane_code(Format f, std::uint32_t word, unsigned lane);
// The four values of one x4 word under E8M0 scale `s`, lane 0 first.
void decode_x4(Format f, std::uint32_t word, std::uint8_t s, float out[4]);
// The FP32 value of one plain element code (exact: every such format fits FP32).
float decode_plain(Format f, std::uint32_t code);

// ---- the packed operands of the tile kernels ------------------------------------
//
// The matmul runs on operands packed in panels: the stationary W [kdim][M] in
// panels of kPanelRows columns m, the moving X [kdim][N] in panels of
// kPanelCols columns n, each panel contraction-major (k outer), the last one
// padded with zeros. One tile is kPanelRows x kPanelCols outputs over the
// whole contraction; tiles are the unit a caller may split over threads.
inline constexpr std::size_t kPanelRows = 8;   // W panel width (outputs m per tile)
inline constexpr std::size_t kPanelCols = 32;  // X panel width (outputs n per tile)

// Where column j, contraction index k of a packed operand lives.
struct PackedLayout {
  std::size_t panel = 0;  // kPanelRows (W) or kPanelCols (X)
  std::size_t kdim = 0;
  std::size_t cols = 0;  // M (W) or N (X)
  std::size_t index(std::size_t k, std::size_t j) const {
    return (j / panel) * kdim * panel + k * panel + j % panel;
  }
  // Floats of the packed operand: whole panels.
  std::size_t size() const { return (cols + panel - 1) / panel * panel * kdim; }
};
inline PackedLayout packed_w_layout(std::size_t kdim, std::size_t M) {
  return {kPanelRows, kdim, M};
}
inline PackedLayout packed_x_layout(std::size_t kdim, std::size_t N) {
  return {kPanelCols, kdim, N};
}

// 64-byte aligned floats (a packed panel row starts on a cache line).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
  friend bool operator==(CacheLineAllocator, CacheLineAllocator) { return true; }
  friend bool operator!=(CacheLineAllocator, CacheLineAllocator) { return false; }
};
using PackedFloats = std::vector<float, CacheLineAllocator<float>>;

// Packs row-major a[k * cols + j] into `out` (resized to L.size(), padding 0).
void pack(const float* a, const PackedLayout& L, PackedFloats& out);

// Decodes partition p of an MX operand into a packed one: x4 word j of the
// partition (little-endian, mx_word_bytes(f) bytes each, at words + j x that)
// under E8M0 scale scales[j] gives out[L.index(4p + l, j)] for lanes l = 0..3,
// each value as decode_x4 computes it.
void decode_mx_partition(Format f, const std::uint8_t* words, const std::uint8_t* scales,
                         unsigned p, const PackedLayout& L, float* out);
// Decodes partition p of a plain operand: element j (plain_elem_bytes(f)
// bytes, little-endian) gives out[L.index(p, j)] = decode_plain.
void decode_plain_partition(Format f, const std::uint8_t* elems, unsigned p, const PackedLayout& L,
                            float* out);

// Tiles of an M x N output: ceil(M / kPanelRows) x ceil(N / kPanelCols),
// numbered n-panel major (tile t covers m-panel t % m_panels, n-panel t /
// m_panels).
std::size_t matmul_tiles(std::size_t M, std::size_t N);

// Tiles [tile_begin, tile_end) of acc[m * N + n] (M x N, row-major) =
// (accumulate ? acc[m][n] : first product) + sum over k < kdim of W[k][m] *
// X[k][n], k ascending, FP32 with one rounding per multiply and per add, from
// the packed wp (packed_w_layout) and xp (packed_x_layout), on SIMD path
// `path` (every path gives the same bits). Tiles touch disjoint outputs, so
// disjoint tile ranges may run on different threads. kdim == 0 changes
// nothing.
void matmul_packed(const float* wp, const float* xp, std::size_t kdim, std::size_t M, std::size_t N,
                   float* acc, bool accumulate, std::size_t tile_begin, std::size_t tile_end,
                   SimdPath path = simd_path());

// acc[m * N + n] (M x N, row-major) = (accumulate ? acc[m][n] : first product)
// + sum over k < kdim of w[k * M + m] * x[k * N + n], k ascending, FP32 with
// one rounding per multiply and per add: packs both operands and runs every
// tile of matmul_packed on `path`.
void matmul_fp32(const float* w, const float* x, std::size_t kdim, std::size_t M, std::size_t N,
                 float* acc, bool accumulate, SimdPath path = simd_path());

}  // namespace tpb::num

// The AVX-512 path's micro-tile shape (16 floats per vector, 8 x 32
// micro-tiles) on any host: the tile kernel source compiled here once more
// with that shape and this file's own flags (no AVX-512 instructions: the
// compiler splits the 64-byte vectors), against the baseline path. A host
// with AVX-512F also runs the real path in test_mx_matmul.cpp; this one
// checks the shape's loops and indexing everywhere. Without its
// instructions the NaN order of two NaN operands is the compiler's, so the
// values here carry no NaN.
#define TPB_MM_NS avx512_shape
#define TPB_MM_W 16
#define TPB_MM_MR 8
#define TPB_MM_NV 2
#define TPB_MM_ASM 0
// The kernel's helpers are always inlined: GCC's and clang's warning (given
// at the end of the file) that 64-byte vectors would pass differently
// without AVX-512 does not apply.
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include "models/numerics/mx_matmul_kernel.inc"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "models/numerics/mx_matmul.h"

TEST(MxMatmulShapes, Avx512MicroTileShapeMatchesTheBaselineBitForBit) {
  namespace num = tpb::num;
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    const std::size_t M = 8 * (1 + rng() % 16), N = 32 * (1 + rng() % 16);
    const std::size_t kdim = 1 + rng() % 300;
    const bool accumulate = trial % 2;
    std::vector<float> w(kdim * M), x(kdim * N), acc0(M * N);
    const auto draw = [&] {
      const int r = int(rng() % 100);
      if (r == 0) return std::numeric_limits<float>::infinity();
      if (r == 1) return -0.0f;
      if (r == 2) return std::ldexp(1.0f, -140);  // subnormal
      return std::ldexp(float(int(rng() % 2001) - 1000), int(rng() % 60) - 30);
    };
    for (auto& v : w) v = draw();
    for (auto& v : x) v = draw();
    for (auto& v : acc0) v = draw();
    num::PackedFloats wp, xp;
    num::pack(w.data(), num::packed_w_layout(kdim, M), wp);
    num::pack(x.data(), num::packed_x_layout(kdim, N), xp);
    std::vector<float> want = acc0, got = acc0;
    num::matmul_packed(wp.data(), xp.data(), kdim, M, N, want.data(), accumulate, 0,
                       num::matmul_tiles(M, N), num::SimdPath::Baseline);
    for (std::size_t mp = 0; mp < M / 8; ++mp)
      for (std::size_t np = 0; np < N / 32; ++np)
        num::mm_kernels::avx512_shape::tile(wp.data() + mp * kdim * 8, xp.data() + np * kdim * 32,
                                            kdim, got.data() + mp * 8 * N + np * 32, N, accumulate);
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        ASSERT_TRUE(std::isnan(got[i])) << "trial " << trial << " element " << i;
        continue;
      }
      ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0)
          << "trial " << trial << " element " << i << ": " << got[i] << " want " << want[i];
    }
  }
}

// The PE matmul's tile kernels, one per SIMD path (mx_matmul_kernel.inc),
// behind num::matmul_packed (mx_matmul.h). Internal to models/numerics.
#pragma once

#include <cstddef>

namespace tpb::num::mm_kernels {

// One tile: kTileRows outputs m x kTileCols outputs n, all of the contraction.
inline constexpr std::size_t kTileRows = 8;   // rows of a packed stationary panel
inline constexpr std::size_t kTileCols = 32;  // columns of a packed moving panel

// c[r * ldc + j] for r < kTileRows, j < kTileCols (see mx_matmul_kernel.inc
// for the exact arithmetic) from one packed stationary panel (w_panel[k *
// kTileRows + r]) and one packed moving panel (x_panel[k * kTileCols + j]).
using TileFn = void (*)(const float* w_panel, const float* x_panel, std::size_t kdim, float* c,
                        std::size_t ldc, bool accumulate);

namespace baseline {
void tile(const float*, const float*, std::size_t, float*, std::size_t, bool);
}
namespace avx2 {
void tile(const float*, const float*, std::size_t, float*, std::size_t, bool);
}
namespace avx512 {
void tile(const float*, const float*, std::size_t, float*, std::size_t, bool);
}

}  // namespace tpb::num::mm_kernels

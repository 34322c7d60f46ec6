// The host's yardstick for the PE matmul (bench_pe, docs/PERFORMANCE.md): a
// plain FP32 matmul loop with the model's arithmetic (k ascending, one
// rounding per multiply and per add, no FMA), compiled for this host alone
// (-O3 -march=native -ffp-contract=off, bench/CMakeLists.txt).
#pragma once

#include <cstddef>

namespace tpb::bench {

// acc[m * N + n] = (accumulate ? acc[m][n] : w[0][m] * x[0][n]) + sum over
// k of w[k * M + m] * x[k * N + n], k ascending: k outermost per output row,
// the n loop left to the compiler's vectoriser.
void reference_matmul(const float* w, const float* x, std::size_t kdim, std::size_t M,
                      std::size_t N, float* acc, bool accumulate);

}  // namespace tpb::bench

#include "bench/reference/matmul_loop.h"

namespace tpb::bench {

void reference_matmul(const float* w, const float* x, std::size_t kdim, std::size_t M,
                      std::size_t N, float* acc, bool accumulate) {
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

}  // namespace tpb::bench

// The baseline (SSE2, every x86-64; any other target) path of the PE matmul
// tile kernel: 4 floats per vector, 4 x 8 micro-tiles.
#define TPB_MM_NS baseline
#define TPB_MM_W 4
#define TPB_MM_MR 4
#define TPB_MM_NV 2
#if defined(__x86_64__)
#define TPB_MM_ASM 1
#else
#define TPB_MM_ASM 0
#endif
#include "models/numerics/mx_matmul_kernel.inc"

// The AVX-512 path of the PE matmul tile kernel (compiled with -mavx512f,
// chosen at run time): 16 floats per vector, 8 x 32 micro-tiles (16
// accumulators).
#if defined(__x86_64__) && defined(TPB_SIMD_X86)
#define TPB_MM_NS avx512
#define TPB_MM_W 16
#define TPB_MM_MR 8
#define TPB_MM_NV 2
#define TPB_MM_ASM 3
#include "models/numerics/mx_matmul_kernel.inc"
#endif

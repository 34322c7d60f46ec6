// The AVX2 path of the PE matmul tile kernel (compiled with -mavx2, chosen at
// run time): 8 floats per vector, 4 x 16 micro-tiles (8 accumulators).
#if defined(__x86_64__) && defined(TPB_SIMD_X86)
#define TPB_MM_NS avx2
#define TPB_MM_W 8
#define TPB_MM_MR 4
#define TPB_MM_NV 2
#define TPB_MM_ASM 2
#include "models/numerics/mx_matmul_kernel.inc"
#endif

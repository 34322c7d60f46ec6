// GpSimd iota (SPEC §18; nki.isa.iota): element (i0, i1, i2) of active
// partition c = offset + c x channel_multiplier + i0 x step0 + i1 x step1 +
// i2 x step2, in 32-bit integer arithmetic (two's complement, wrapping),
// converted to out_dtype with one rounding of the exact integer (to nearest
// even, saturating), written along the destination pattern in SBUF. One
// worker of the vector shape (firmware_stubs/common/vector_kernel.h); cost
// (TIMING.md [O]) 150 + N: the POOL's startup (its issue overhead) and N
// trips.
#pragma once

#include "models/kernel/kernel.h"

namespace tpb::fw {

void add_iota_kernels(KernelRegistry& r);

}  // namespace tpb::fw

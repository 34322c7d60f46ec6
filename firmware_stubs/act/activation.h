// The Scalar engine's activation (SPEC §18; nki.isa.activation): dst =
// f(src x scale + bias), with scale a scalar or a per-partition FP32
// vector, bias a per-partition vector, and an optional reduce of each
// partition's results (add, or max from V3) into the engine's reduce
// registers, written out to reduce_res. One worker of the vector shape
// (firmware_stubs/common/vector_kernel.h) on the ACT engine, and on the DVE
// of MAVERICK, which folds ACT into the DVE (seed 003).
//
// Conventions (docs/CONVENTIONS.md "Vector instructions"): t = src x scale
// (one rounding: exact with the default scale 1.0), u = t + bias (one
// rounding; no add without a bias), the
// result f(u) (models/numerics/vector_ops.h activate); the reduce of a
// partition's results in index order; the reduce command on the registers:
// reset sets 0, reduce combines (add / max) the reduce into them,
// reset_reduce sets them to it, idle leaves them; the registers are then
// written out when reduce_dtype is not 0. Cost (TIMING.md [O]): N engine
// cycles, + MIN_II (64) when the registers are written out.
#pragma once

#include <array>

#include "models/isa/address_map.h"
#include "models/kernel/kernel.h"

namespace tpb::fw {

// The engine's per-partition reduce registers (one FP32 per lane, by
// absolute partition), in its engine state: they last across instructions.
struct ActReduceState {
  std::array<float, isa::kNumPartitions> regs{};
};

void add_activation_kernels(KernelRegistry& r);

}  // namespace tpb::fw

// The Vector engine's instructions of SPEC §18, on every engine nki.isa lets
// run them (firmware_stubs/common/vector_kernel.h): tensor_tensor (DVE,
// POOL), tensor_scalar (DVE, ACT, POOL), tensor_reduce, tensor_tensor_scan,
// memset (DVE, POOL), reciprocal, bn_stats, bn_aggr, nc_transpose (DVE). Each
// is a fields step (decode, run-time checks, the cost formula of TIMING.md
// [O] as the compute bundle's trips) and a compute function over rows;
// models/numerics/vector_ops.h does the arithmetic.
#pragma once

#include "models/kernel/kernel.h"

namespace tpb::fw {

void add_vector_op_kernels(KernelRegistry& r);

}  // namespace tpb::fw

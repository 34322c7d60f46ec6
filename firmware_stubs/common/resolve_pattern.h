// Resolving a TENSOR3D operand against the engine's registers (SPEC §2):
// shared by every firmware stub that reads or writes strided operands.
#pragma once

#include "firmware_stubs/common/pattern_walk.h"
#include "firmware_stubs/kernel.h"
#include "models/isa/encodings.h"

namespace tpb::fw {

// Resolves an operand: ADDR_REG takes the address from r[bits 4:0];
// SHAPE_REG takes num_elem[0..2] from r[N+1..N+3], N = bits 4:0 (convention).
// Throws KernelFault naming the operand (`which`) for INDIRECT16B /
// MXTENSOR_V2 operands (not modelled) and for a register number past r31.
ResolvedPattern resolve_pattern(const isa::Tensor3D& t, const KernelContext& ctx,
                                const char* which);

}  // namespace tpb::fw

// Resolving operands against the engine's registers (SPEC §2): TENSOR3D and
// MXTENSOR1D, shared by every firmware stub that reads or writes them.
#pragma once

#include <cstdint>
#include <string>

#include "firmware_stubs/common/pattern_walk.h"
#include "models/isa/encodings.h"
#include "models/kernel/kernel.h"

namespace tpb::fw {

// Resolves an operand: ADDR_REG takes the address from r[bits 4:0];
// SHAPE_REG takes num_elem[0..2] from r[N+1..N+3], N = bits 4:0 (convention).
// Throws KernelFault naming the operand (`which`) for INDIRECT16B /
// MXTENSOR_V2 operands (not modelled) and for a register number past r31.
ResolvedPattern resolve_pattern(const isa::Tensor3D& t, const KernelContext& ctx,
                                const char* which);

// The 27-bit address an ADDR4 names: r[bits 4:0] with ADDR_REG (telling
// the context, KernelContext::register_addressed), else the immediate.
std::uint32_t resolve_addr4(isa::Addr4 a, const KernelContext& ctx);

// A resolved MXTENSOR1D (seed 003 §3.2), registers applied.
struct ResolvedMx1d {
  std::uint32_t data = 0;   // 27-bit address of x4 word 0 in the start partition
  std::uint32_t scale = 0;  // 27-bit address of scale byte 0 in the scale base partition
  std::uint32_t num = 0;    // x4 words per partition = block columns
  std::int8_t step = 0;     // in x4 words
  std::uint8_t scale_pidx = 0;
};

// Resolves an MXTENSOR1D: ADDR_REG on either address; SHAPE_REG takes
// num_elem[0] from r[N+1], as TENSOR3D's num_elem[0] (convention). Throws
// KernelFault naming the operand (`which`, e.g. "QuantizeMX dst") for a
// start marker other than IMM / ADDR_REG / SHAPE_REG (MXIndirect16B), a
// scale marker other than IMM / ADDR_REG, or a shape register past r31.
ResolvedMx1d resolve_mx1d(const isa::MxTensor1D& t, const KernelContext& ctx,
                          const std::string& which);
// A scale ADDR4 (MXTENSOR1D or MXTENSOR_V2): IMM or ADDR_REG only.
std::uint32_t resolve_scale_addr4(isa::Addr4 s, const KernelContext& ctx, const std::string& which);

}  // namespace tpb::fw

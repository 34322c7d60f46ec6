// POOL TensorDequantize (opcode 0x7b) firmware stub, seed 000: the dispatch
// chain trampoline @0x01004dc4 -> decode_tensor_dequantize @0x01004df0
// (group 0, all four formats) -> TensorDequantize::proc_4bit_mx_8
// @0x0100511c (group 8), as bundles with per-bundle issue cycles.
#pragma once

#include <cstdint>
#include <vector>

#include "firmware_stubs/common/pattern_walk.h"
#include "firmware_stubs/common/resolve_pattern.h"
#include "firmware_stubs/kernel.h"
#include "models/isa/encodings.h"
#include "models/isa/opcode_table.h"

namespace tpb::fw {

inline constexpr std::uint32_t kTensorDequantizeTrampolineVa = isa::kva::kPoolTensorDequantize;
inline constexpr std::uint32_t kTensorDequantizeStateSlot = 0x02000480;  // seed 000 §1
inline constexpr std::uint32_t kDecodeTensorDequantizeVa = 0x01004df0;   // seed 000 §1
inline constexpr std::uint32_t kProc4bitMx8Va = 0x0100511c;              // seed 000 §1

// Per-instruction state of the kernel (KernelContext::scratch()).
struct DequantState {
  isa::DequantFmt fmt = isa::DequantFmt::Invalid;
  unsigned group = 0;
  unsigned channels = 0;
  ResolvedPattern src, dst;  // counts in UINT32 words per partition
  std::uint64_t src_words = 0, dst_words = 0;
  std::uint64_t mx_chunks = 0;  // proc_4bit_mx_8: count / 5
};

// Word addresses of a pattern in one partition, dim 0 innermost (SPEC §2).
// Throws KernelFault when an element falls outside the partition's slot.
void gather_words(KernelContext& ctx, const ResolvedPattern& p, unsigned partition_delta,
                  std::uint32_t* out, const char* which);
void scatter_words(KernelContext& ctx, const ResolvedPattern& p, unsigned partition_delta,
                   const std::uint32_t* in, const char* which);

// POOL loop trip count: every partition in parallel, the larger of its read
// and write stream at pool_bytes_per_partition_cycle() per trip (TIMING.md).
std::uint64_t dequant_loop_trips(const DequantState& st, const timing::TimingConfig& t);

void add_tensor_dequantize_kernels(KernelRegistry& r);

}  // namespace tpb::fw

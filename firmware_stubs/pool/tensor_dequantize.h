// POOL TensorDequantize (opcode 0x7b) firmware stub, seed 000: the dispatch
// chain trampoline @0x01004dc4 -> decode_tensor_dequantize @0x01004df0
// (group 0, all four formats) -> TensorDequantize::proc_4bit_mx_8
// @0x0100511c (group 8), as bundles with per-bundle issue cycles.
#pragma once

#include <cstdint>
#include <vector>

#include "firmware_stubs/common/pattern_walk.h"
#include "firmware_stubs/common/resolve_pattern.h"
#include "models/isa/encodings.h"
#include "models/isa/opcode_table.h"
#include "models/kernel/kernel.h"

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

// Co-simulation seam (SPEC §9 --cosim; docs/COSIM.md). When the POOL's engine
// state holds a DequantStreamTap with an observer, every TensorDequantize
// hands it the stream of each active channel as the kernel transforms it: the
// source words in src-pattern order and the model's output words in
// dst-pattern order. Pure C++; the listener (platform/cosim) drives an RTL
// datapath with the source words and checks its output against the model's.
struct DequantStream {
  isa::DequantFmt fmt = isa::DequantFmt::Invalid;
  unsigned group = 0;
  unsigned channels = 0;
  unsigned src_partition = 0, dst_partition = 0;  // of channel 0
  std::uint64_t src_words = 0, dst_words = 0;     // per channel
  std::uint64_t start_ps = 0;                     // the engine's time when the stream starts
};
class DequantStreamObserver {
 public:
  virtual ~DequantStreamObserver() = default;
  virtual void begin(const DequantStream& s) = 0;
  // Channel c of the stream begun last: s.src_words source words and the
  // s.dst_words words the model wrote (valid during the call).
  virtual void channel(unsigned c, const std::uint32_t* src, const std::uint32_t* expected) = 0;
};
// The POOL engine state slot the platform sets (fw::EngineState).
struct DequantStreamTap {
  DequantStreamObserver* observer = nullptr;
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

// tensor_copy firmware stubs (SPEC §11, §18; TIMING.md [M]) of the DVE, the
// ACT (from v3) and the POOL (GpSimd, which cannot reach PSUM): copies a
// partitioned TENSOR3D pattern from PSUM or SBUF to SBUF or PSUM, bit-exact
// when the DTYPEs match, through FP32 with RNE and saturation when they
// differ (num::convert_elements). This is how PSUM results leave PSUM.
//
// Dispatch (conventions, docs/CONVENTIONS.md): the DVE kernel_info record
// idx1 {0, 0, 0, 0x23, 0x3200} -> trampoline @0x3200 { call8 0x3240 ;
// exit } -> body @0x3240 of 16-byte FLIX bundles: fields (decode, register
// operands, the run-time checks), load (every active partition's source
// elements, in pattern order), convert (the one-input loop: one element of
// every partition per cycle, TIMING.md "max(64, N)"), store, return. Load,
// convert and store are one pipelined stream (Bundle::stream): the lanes'
// reads, the loop and the writes overlap. The ACT's and POOL's are the same
// steps at their own VAs (isa::kva::kActTensorCopy, kPoolTensorCopy; the
// body at the trampoline + 0x40) under their own bundle names
// ("act.tcopy.convert", "pool.tcopy.convert").
#pragma once

#include <cstdint>
#include <vector>

#include "firmware_stubs/common/resolve_pattern.h"
#include "models/isa/opcode_table.h"
#include "models/kernel/kernel.h"

namespace tpb::fw {

inline constexpr std::uint32_t kTensorCopyTrampolineVa = isa::kva::kDveTensorCopy;  // 0x3200
inline constexpr std::uint32_t kTensorCopyExitVa = 0x3203;
inline constexpr std::uint32_t kTensorCopyBodyVa = 0x3240;  // fields
inline constexpr std::uint32_t kTensorCopyLoadVa = 0x3250;
inline constexpr std::uint32_t kTensorCopyConvertVa = 0x3260;
inline constexpr std::uint32_t kTensorCopyStoreVa = 0x3270;
inline constexpr std::uint32_t kTensorCopyReturnVa = 0x3280;

// Per-instruction state (KernelContext::scratch()) shared by the bundles.
struct TensorCopyState {
  unsigned channels = 0;
  std::uint8_t in_dtype = 0, out_dtype = 0;
  unsigned in_bytes = 0, out_bytes = 0;  // element sizes
  ResolvedPattern src, dst;
  std::uint64_t count = 0;        // elements per partition
  std::vector<std::uint8_t> in;   // [channel][element] source bytes
  std::vector<std::uint8_t> out;  // [channel][element] destination bytes
};

void add_tensor_copy_kernels(KernelRegistry& r);

}  // namespace tpb::fw

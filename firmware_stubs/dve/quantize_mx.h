// DVE QuantizeMX (opcode 0xE3) firmware stub, seed 003 §1-§2, §5; SPEC §4.
// Dispatch chain: trampoline @0x317a { call8 0x2298 ; j 0x31ee } ->
// QuantizeMx L2 stub @0x2298 (sets the kernel_info field: decoded operands
// and the body pointer) -> call8 0x9920, whose tail l32i / callx8 enters the
// body through that data pointer -> the FLIX body: LEG B extract (@0x79ec,
// @0x22b5), LEG A divide / narrow (@0x66a6, @0x6c4b), PACK (@0x216d), and
// the scale scatter.
#pragma once

#include <cstdint>
#include <vector>

#include "firmware_stubs/common/resolve_pattern.h"
#include "models/isa/encodings.h"
#include "models/isa/opcode_table.h"
#include "models/kernel/kernel.h"
#include "models/numerics/mx_quantize.h"

namespace tpb::fw {

inline constexpr std::uint32_t kQuantizeMxTrampolineVa = isa::kva::kDveQuantizeMx;
inline constexpr std::uint32_t kQuantizeMxExitVa = 0x31ee;  // seed 003 §1 (j 0x31ee)
inline constexpr std::uint32_t kQuantizeMxStubVa = 0x2298;  // seed 003 §1
inline constexpr std::uint32_t kDveCallBodyVa = 0x9920;     // seed 003 §1 (call8 0x9920)
// The body's start VA is INFERRED in seed 003 §1; convention: the VA of its
// first bundle, the LEG B extract.
inline constexpr std::uint32_t kQuantizeMxBodyVa = 0x79ec;
inline constexpr std::uint32_t kQmxExtractVa = 0x79ec;    // seed 003 §2.2
inline constexpr std::uint32_t kQmxCaptureVa = 0x22b5;    // seed 003 §2.2
inline constexpr std::uint32_t kQmxDivideVa = 0x66a6;     // seed 003 §2.3
inline constexpr std::uint32_t kQmxNormalizeVa = 0x6c4b;  // seed 003 §2.3
inline constexpr std::uint32_t kQmxPackVa = 0x216d;       // seed 003 §2.3
// Convention: the seed gives no VA for the scale scatter and the return; they
// follow the 16-byte PACK bundle.
inline constexpr std::uint32_t kQmxScatterVa = 0x217d;
inline constexpr std::uint32_t kQmxReturnVa = 0x218d;

// The partition that holds the scales of block row b (SPEC §4, seed 003 §5):
// scale base partition + 32*(b/4) + scale_pidx + b%4.
constexpr unsigned mx_scale_partition(unsigned scale_base, unsigned scale_pidx, unsigned b) {
  return scale_base + 32 * (b / 4) + scale_pidx + b % 4;
}

// The DVE's QuantizeMX options, kept in its EngineState: the platform sets
// the run's --mx-emax here before the run (SPEC §4; ocp by default).
struct QuantizeMxOptions {
  num::MxEmax emax = num::MxEmax::Ocp;
};

// Co-simulation seam (SPEC §9 --cosim; docs/COSIM.md), as the POOL's
// DequantStreamTap: when the DVE's engine state holds a QuantizeMxTap with an
// observer, every QuantizeMX hands it, per instruction, begin() and then
// each 8 x 4 block's elements as read from memory and the model's scale and
// x4 words. Pure C++; the listener (platform/cosim) runs an RTL block
// datapath on the same elements and checks its output against the model's.
struct QuantizeMxStream {
  isa::Dtype in_dtype = isa::Dtype::Fp32;
  num::MxOut out = num::MxOut::E4M3;
  num::MxEmax emax = num::MxEmax::Ocp;
  unsigned block_rows = 0;     // channels / 8
  std::uint32_t cols = 0;      // block columns (x4 words per partition)
  unsigned src_partition = 0;  // of block row 0, partition 0
  unsigned dst_partition = 0;  // of block row 0's x4 words
  std::uint64_t start_ps = 0;  // the engine's time when the blocks are quantized
};
class QuantizeMxObserver {
 public:
  virtual ~QuantizeMxObserver() = default;
  virtual void begin(const QuantizeMxStream& s) = 0;
  // Block row b, column j: raw[4r+k] is element 4j+k of partition 8b+r (its
  // in_dtype code: FP32 bits, or BF16 / FP16 in the low 16 bits); the
  // model's E8M0 scale and x4 words (word r for partition 8b+r).
  virtual void block(unsigned b, std::uint32_t j, const std::uint32_t raw[32], std::uint8_t scale,
                     const std::uint32_t words[8]) = 0;
};
// The DVE engine state slot the platform sets (fw::EngineState).
struct QuantizeMxTap {
  QuantizeMxObserver* observer = nullptr;
};

// Per-instruction state (KernelContext::scratch()): the kernel_info field the
// L2 stub sets, read by the body.
struct QuantizeMxState {
  std::uint32_t body_va = 0;  // l32i a2,[a2,0] of the call helper (seed 003 §1)
  unsigned channels = 0;
  isa::Dtype in_dtype = isa::Dtype::Fp32;
  num::MxOut out = num::MxOut::E4M3;
  num::MxEmax emax = num::MxEmax::Ocp;
  ResolvedPattern src;  // elements of in_dtype
  ResolvedMx1d dst;
  std::uint32_t cols = 0;            // block columns = dst x4 words per partition
  std::uint32_t block_rows = 0;      // channels / 8
  std::vector<std::uint32_t> bits;   // [channel][element] FP32 bit patterns
  std::vector<std::uint32_t> words;  // [channel][column] packed x4 words
  std::vector<std::uint8_t> scales;  // [block row][column] E8M0
  std::vector<std::uint32_t> raw;    // [channel][element] codes, only for a QuantizeMxTap
};

// Widens one in_dtype element exactly to FP32 bits (FP32, BF16, FP16).
std::uint32_t widen_to_fp32_bits(isa::Dtype in, std::uint32_t raw);

void add_quantize_mx_kernels(KernelRegistry& r);

}  // namespace tpb::fw

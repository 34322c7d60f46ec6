// PE matmul firmware stubs (SPEC §5, §18; seed 003 §3): v4 LdweightsMX
// (0x09) / MatmulMX (0x0A) and LDWEIGHTS (0x01) / MATMUL (0x02), MX mode by
// the MXTENSOR_V2 address marker (v5), plain BF16 / FP16 / FP32 / FP8 on
// every generation, with nc_matmul's transpose mode (the stationary's
// elements transposed, bit for bit, in its DTYPE) and FP8 double row (K =
// 2 x rows: partition p's first column block is contraction row 2p, its
// second 2p + 1).
//
// Dispatch (seed 003 §3.1): the PE ladder jumps to handler 0x2baf (op 0x09)
// and 0x2bb7 (op 0x0A); the v5 opcodes reuse them (kernel_info convention).
// Each handler { call8 body ; j exit } calls a body of FLIX bundles: decode
// (fields), the streaming loop, return. The matmul's loop is the scale-MAC
// bundle of seed 003 §3.4 (@0x5fa7: extrpr2nx8 scale extract feeding
// mulus4tan16xr16). Every other VA is a convention (docs/CONVENTIONS.md).
//
// The stationary tensor lives in the PE's EngineState (PeState) from one
// load to the next; the sequencer keeps nothing. The arithmetic of a load or
// a matmul (decoding the operand, the output tiles) may be split over host
// threads (firmware_stubs/common/host_threads.h); its memory accesses stay
// on the engine's thread, in order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/isa/opcode_table.h"
#include "models/kernel/kernel.h"
#include "models/numerics/mx_matmul.h"

namespace tpb::fw {

inline constexpr std::uint32_t kPeLdweightsHandlerVa = isa::kva::kPeLdweightsMx;  // 0x2baf
inline constexpr std::uint32_t kPeMatmulHandlerVa = isa::kva::kPeMatmulMx;        // 0x2bb7
// Conventions: the handlers' j after the 3-byte call8; the bodies' 16-byte
// FLIX bundles placed before the seed's scale-MAC bundle 0x5fa7.
inline constexpr std::uint32_t kPeLdweightsExitVa = 0x2bb2;
inline constexpr std::uint32_t kPeMatmulExitVa = 0x2bba;
inline constexpr std::uint32_t kPeLoadBodyVa = 0x5f57;    // fields 0x5f57, load 0x5f67,
                                                          // fill 0x5f77, return 0x5f87
inline constexpr std::uint32_t kPeMatmulBodyVa = 0x5f97;  // fields 0x5f97, mac 0x5fa7,
                                                          // return 0x5fb7
inline constexpr std::uint32_t kPeScaleMacVa = 0x5fa7;    // seed 003 §3.4

// Largest moving free size: one PSUM bank of 2 KiB = 512 FP32 (TIMING.md [A]).
inline constexpr unsigned kPeMaxMovingColumns = 512;

// MM_INIT_LATENCY (TIMING.md [A, E]): the shortest MultiplyMoving interval
// with a full stationary.
inline constexpr std::uint64_t kPeMmInitCycles = 64;

// The MultiplyMoving initiation interval in PE cycles, its MAC loop's trips
// (SPEC §8, TIMING.md [A, E, O]): max(min(64, stationary columns), moving
// cycles) x factor, where moving cycles are the moving tensor's stream (N
// columns; MX: ceil(4 N / row pump)) and factor is 4 for FP32 inputs, else
// 1. One rule for every matmul of the PE, MX and plain: a small stationary
// shortens the 64-cycle floor (32 columns: 32), K never enters.
inline std::uint64_t pe_moving_interval(std::uint64_t stationary_cols, std::uint64_t moving_cycles,
                                        unsigned factor = 1) {
  return std::max(std::min(kPeMmInitCycles, stationary_cols), moving_cycles) * factor;
}

// The PE's state across instructions (fw::EngineState).
struct PeState {
  bool loaded = false;
  bool mx = false;         // loaded by an MX-mode load
  unsigned rows = 0;       // K: active partitions of the stationary tensor
  unsigned cols = 0;       // M: stationary columns = PSUM partitions written
  unsigned kdim = 0;       // contraction length: 4 x rows (MX) or rows (plain)
  std::uint8_t dtype = 0;  // in_dtype of the load
  unsigned pair = 1;       // plain: 2 for FP8 double row (kdim = 2 x rows)
  num::PackedFloats w;     // [kdim][cols] dequantized to FP32, num::packed_w_layout
  // Plain mode: the stationary's bytes [rows][cols x element], for the
  // transpose mode's bit-exact result.
  std::vector<std::uint8_t> raw;
};

// Registers the handlers and bodies.
void add_pe_matmul_kernels(KernelRegistry& r);

}  // namespace tpb::fw

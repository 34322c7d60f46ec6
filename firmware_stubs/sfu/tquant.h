// SFU TQUANT firmware stub (seed 002, SPEC §6). Dispatch: the SFU
// kernel_info record for the block word (opcode 0x6a) -> trampoline @0x4a00
// { call8 0x4a40 ; exit } -> the TQUANT worker @0x4a40, whose bundles run the
// contract in the seed's order: PE_MASK no-op test, legality
// (Fault_TileLegality), allocation preflight (Fault_TileAllocation), the
// streaming quantize loop over a snapshot of the source, and the atomic
// publish of payload, flags and renamed destination. All VAs are
// conventions (docs/CONVENTIONS.md).
#pragma once

#include <cstdint>

#include "models/isa/opcode_table.h"
#include "models/kernel/kernel.h"
#include "models/state/sfu_tile_file.h"

namespace tpb::fw {

inline constexpr std::uint32_t kTquantTrampolineVa = isa::kva::kSfuTquant;  // 0x4a00
inline constexpr std::uint32_t kTquantWorkerVa = 0x4a40;
// Rows of a tile the SFU processes in parallel lanes (convention): the loop
// issues ceil(ValidRow / 128) x ValidCol trips, one column of 128 rows per
// cycle, like the partition-parallel engines (SPEC §8).
inline constexpr unsigned kSfuLanes = 128;

// The fault classes of seed 002: the message is "<class>: <rule>: <detail>".
inline constexpr const char* kFaultTileLegality = "Fault_TileLegality";
inline constexpr const char* kFaultTileAllocation = "Fault_TileAllocation";

void add_tquant_kernels(KernelRegistry& r);

}  // namespace tpb::fw

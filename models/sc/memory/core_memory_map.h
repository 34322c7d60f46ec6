// The one place that says where each memory-like target of a core sits in
// the address map (SPEC §2, models/isa/address_map.h). The platform owns the
// modules; it calls map_core_memories() once in its constructor, after
// constructing them and before binding anything else to the router (the SFU
// tile file, which the SFU engine owns, is added by the platform with
// add_target(kSfuTileRouteName, isa::region_base(isa::Region::SfuTile), ...)).
//
// Rows, in port order:
//   sbuf.q0..sbuf.q3  isa::sbuf_addr(32q, 0), 32 << 18 bytes each
//   psum              isa::psum_addr(0, 0),   128 << 18 bytes
//   sem               isa::kSemaphoreBase,    64 * 4 bytes
//   regs              isa::kEngineRegBase,    5 * isa::kEngineRegStride bytes
//                     (pool, dve, pe, sfu, act: engine_index order)
//   queue.pool/dve/pe/sfu  isa::kQueueBase + e * isa::kQueueBytes, kQueueBytes each
// and, from map_dma_queues(), map_act_queue() and map_hbm():
//   queue.dma0..queue.dma15  the same, e = 4..19 (after the compute engines')
//   queue.act         the same, e = 20 (after the DMA queues', SPEC §18)
//   hbm               isa::kHbmBase (2^40), isa::kHbmWindow bytes (the target
//                     answers an address error past its capacity)
// Row names come from the one memory-name table, isa::memory_name(), which
// the per-memory stats and the VCD counters use too.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "models/isa/address_map.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/hbm_memory.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/partitioned_memory.h"
#include "models/sc/memory/semaphore_bank.h"

namespace tpb::sc {

inline constexpr const char* kSfuTileRouteName = isa::memory_name(isa::CoreMemory::SfuTiles);

// Global base / size of SBUF quadrant q and of the PSUM.
inline constexpr std::uint64_t sbuf_quadrant_base(unsigned q) {
  return isa::sbuf_addr(q * isa::kPartitionsPerQuadrant, 0);
}
inline constexpr std::uint64_t kSbufQuadrantSpan = std::uint64_t{isa::kPartitionsPerQuadrant}
                                                   << isa::kPartitionShift;
inline constexpr std::uint64_t kPsumSpan = std::uint64_t{isa::kNumPartitions}
                                           << isa::kPartitionShift;
inline constexpr std::uint64_t queue_base(isa::Queue e) {
  return isa::kQueueBase + std::uint64_t{static_cast<unsigned>(e)} * isa::kQueueBytes;
}
std::string sbuf_quadrant_name(unsigned q);  // isa::memory_name: "sbuf.q0".."sbuf.q3"
// isa::memory_name: "queue.pool", ...; a DMA queue's: "queue.dma0" ...
std::string queue_route_name(isa::Queue e);
inline constexpr const char* kHbmRouteName = "hbm";

// Adds the rows above to `router` (binding its initiator socket to each
// target). Throws std::invalid_argument if a module's geometry does not match
// its slot (a quadrant that is not 32 partitions, a PSUM that is not 128, a
// queue larger than isa::kQueueBytes), naming the module.
void map_core_memories(AddressRouter& router, std::array<PartitionedMemory*, 4>& sbuf,
                       PartitionedMemory& psum, SemaphoreBank& sem, EngineRegisterFile& regs,
                       std::array<InstructionQueue*, 4>& queues);

// The DMA queues' instruction queues (queues[q] of Queue::Dma0 + q) and the
// HBM; throws as map_core_memories.
void map_dma_queues(AddressRouter& router,
                    std::array<InstructionQueue*, isa::kNumDmaQueues>& queues);
void map_hbm(AddressRouter& router, HbmMemory& hbm);
// The ACT engine's instruction queue (SPEC §18), queue 20.
void map_act_queue(AddressRouter& router, InstructionQueue& queue);

}  // namespace tpb::sc

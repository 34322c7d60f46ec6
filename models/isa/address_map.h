// The core's address space (SPEC §2): identity between the 27-bit ISA address
// and the TLM address. Pure C++; the SystemC router builds its table from this.
#pragma once

#include <cstdint>
#include <optional>

#include "models/isa/encodings.h"

namespace tpb::isa {

enum class Region : std::uint8_t { Sbuf = 0, Psum = 1, SfuTile = 2, Control = 3 };

inline constexpr unsigned kNumPartitions = 128;
inline constexpr unsigned kPartitionsPerQuadrant = 32;
inline constexpr unsigned kNumQuadrants = 4;
inline constexpr unsigned kPartitionShift = 18;                         // bits[24:18]
inline constexpr std::uint32_t kPartitionSlot = 1u << kPartitionShift;  // 256 KiB
inline constexpr unsigned kRegionShift = 25;                            // bits[26:25]
inline constexpr std::uint32_t kRegionSize = 1u << kRegionShift;

inline constexpr std::uint32_t region_base(Region r) {
  return static_cast<std::uint32_t>(r) << kRegionShift;
}
inline constexpr Region region_of(std::uint32_t addr) {
  return static_cast<Region>((addr >> kRegionShift) & 3u);
}
inline constexpr unsigned partition_of(std::uint32_t addr) {
  return (addr >> kPartitionShift) & 0x7Fu;
}
inline constexpr std::uint32_t offset_of(std::uint32_t addr) { return addr & (kPartitionSlot - 1); }
inline constexpr std::uint32_t sbuf_addr(unsigned partition, std::uint32_t offset) {
  return region_base(Region::Sbuf) | (partition << kPartitionShift) | offset;
}
inline constexpr std::uint32_t psum_addr(unsigned partition, std::uint32_t offset) {
  return region_base(Region::Psum) | (partition << kPartitionShift) | offset;
}

// Capacities per generation (SPEC §2, §10; configurable through the timing
// profile, these are the defaults). HBM: the device's capacity shared equally
// by its cores (TIMING.md [L]): trn1 32 GiB / 2 cores (v2), trn2 96 GiB / 8
// (v3), trn3 144 GiB / 8 (v4; v5 as trn3, convention).
struct MemoryCapacity {
  std::uint32_t sbuf_bytes_per_partition;
  std::uint32_t psum_bytes_per_partition;
  std::uint64_t hbm_bytes;  // per core
};
inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
inline constexpr MemoryCapacity default_capacity(Arch a) {
  switch (a) {
    case Arch::Sunda:
      return {192u * 1024, 16u * 1024, 32 * kGiB / 2};
    case Arch::Cayman:
      return {224u * 1024, 16u * 1024, 96 * kGiB / 8};
    case Arch::Mariana:
    case Arch::Maverick:
      return {256u * 1024, 16u * 1024, 144 * kGiB / 8};
  }
  return {256u * 1024, 16u * 1024, 144 * kGiB / 8};
}

// HBM (SPEC §10): one device-memory target per core at TLM address 2^40 +
// byte offset, outside the 27-bit ISA address space (engine instructions
// cannot name it; DMA descriptors can). A core's HBM window is 2^40 bytes,
// so a capacity is at most that.
inline constexpr std::uint64_t kHbmBase = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kHbmWindow = std::uint64_t{1} << 40;
inline constexpr std::uint64_t hbm_addr(std::uint64_t offset) { return kHbmBase + offset; }

// Control region layout (convention, docs/CONVENTIONS.md):
//   +0x000000  semaphores: 64 x u32
//   +0x001000  engine registers: compute engine i (engine_index) at
//              +0x1000 + i*0x100, 32 x u32 (pool, dve, pe, sfu, act)
//   +0x100000  instruction queues: queue e at +0x100000 + e*kQueueBytes
//              (the compute engines 0..3, the DMA queues 4..19, then the
//              ACT engine's 20, up to +0x1600000)
inline constexpr std::uint32_t kSemaphoreBase = region_base(Region::Control) + 0x000000;
inline constexpr std::uint32_t kEngineRegBase = region_base(Region::Control) + 0x001000;
inline constexpr std::uint32_t kEngineRegStride = 0x100;
inline constexpr std::uint32_t kQueueBase = region_base(Region::Control) + 0x100000;
inline constexpr std::uint32_t kQueueBytes = 0x100000;  // 16384 instructions per engine

// The instruction queues of one core, in the order used for queue
// placement: the first four compute engines', then the 16 DMA queues
// dma0..dma15 (SPEC §10), which execute DMA descriptors directly (no
// kernel_info table) on the core's 16 DMA engines, then the ACT engine's
// (SPEC §18: a fifth compute engine, placed after the others so that every
// queue before it keeps its place; kNumQueues in all).
enum class Queue : std::uint8_t {
  Pool = 0,
  Dve = 1,
  Pe = 2,
  Sfu = 3,
  Dma0 = 4,
  Dma1,
  Dma2,
  Dma3,
  Dma4,
  Dma5,
  Dma6,
  Dma7,
  Dma8,
  Dma9,
  Dma10,
  Dma11,
  Dma12,
  Dma13,
  Dma14,
  Dma15,
  Act = 20,
};
// The compute engines, each with a sequencer, registers and a kernel_info
// table in the core: pool, dve, pe, sfu and act (SPEC §18), numbered 0..4
// by engine_index() (registers, per-engine timing, kernel_info tables).
inline constexpr unsigned kNumEngines = 5;
inline constexpr Queue kEngines[kNumEngines] = {Queue::Pool, Queue::Dve, Queue::Pe, Queue::Sfu,
                                                Queue::Act};
// The one engine-name table (SPEC §9 `.engine pool|dve|pe|sfu|act`), by engine_index.
inline constexpr const char* kEngineNames[kNumEngines] = {"pool", "dve", "pe", "sfu", "act"};
// The DMA queues of one core (TIMING.md [J]: 16 per NeuronCore), Queue::Dma0 on.
inline constexpr unsigned kNumDmaQueues = 16;
inline constexpr const char* kDmaQueueNames[kNumDmaQueues] = {
    "dma0", "dma1", "dma2",  "dma3",  "dma4",  "dma5",  "dma6",  "dma7",
    "dma8", "dma9", "dma10", "dma11", "dma12", "dma13", "dma14", "dma15"};
constexpr bool is_dma_queue(Queue e) {
  return static_cast<unsigned>(e) >= static_cast<unsigned>(Queue::Dma0) &&
         static_cast<unsigned>(e) < static_cast<unsigned>(Queue::Dma0) + kNumDmaQueues;
}
constexpr unsigned dma_queue_index(Queue e) {  // e is a DMA queue
  return static_cast<unsigned>(e) - static_cast<unsigned>(Queue::Dma0);
}
constexpr Queue dma_queue(unsigned q) {  // q < kNumDmaQueues
  return static_cast<Queue>(static_cast<unsigned>(Queue::Dma0) + q);
}
// Every engine with an instruction queue in the core: the compute engines
// and the DMA queues (queue e at kQueueBase + e * kQueueBytes).
inline constexpr unsigned kNumQueues = 21;
constexpr bool is_compute_engine(Queue e) {
  return static_cast<unsigned>(e) < static_cast<unsigned>(Queue::Dma0) || e == Queue::Act;
}
// A compute engine's number 0..4 (pool, dve, pe, sfu, act); e is one.
constexpr unsigned engine_index(Queue e) { return e == Queue::Act ? 4 : static_cast<unsigned>(e); }
// The queues every output lists whether or not the program gives them an
// instruction (the four engines of the seeds); the ACT engine and a DMA
// queue appear in an output only when they have instructions, so a program
// that does not use them gives the outputs it gave before they existed.
constexpr bool listed_when_idle(Queue e) {
  return static_cast<unsigned>(e) < static_cast<unsigned>(Queue::Dma0);
}
constexpr const char* engine_name(Queue e) {
  if (is_compute_engine(e)) return kEngineNames[engine_index(e)];
  return is_dma_queue(e) ? kDmaQueueNames[dma_queue_index(e)] : "";
}
std::optional<Queue> parse_engine(const char* s);  // case-insensitive
// A compute engine or a DMA queue (`.engine`, --trace-engines): pool .. sfu,
// act, dma0 .. dma15, case-insensitive.
std::optional<Queue> parse_queue(const char* s);
// The engine that runs queue e's instructions on `arch`: e itself, but the
// DVE for the ACT queue on MAVERICK, which folds ACT into the DVE (seed 003
// §3.3; docs/CONVENTIONS.md).
constexpr Queue executing_engine(Queue e, Arch arch) {
  return e == Queue::Act && arch == Arch::Maverick ? Queue::Dve : e;
}

// The memories of one core. Their names, from the one memory-name table
// below, name the address-map rows (core_memory_map), the per-memory stats
// and the VCD byte counters.
enum class CoreMemory : std::uint8_t {
  SbufQ0 = 0,  // SBUF quadrants 0..3 (partition / 32)
  SbufQ1,
  SbufQ2,
  SbufQ3,
  Psum,
  Sem,        // semaphore bank
  Regs,       // engine register file
  QueuePool,  // instruction queues, in Queue order
  QueueDve,
  QueuePe,
  QueueSfu,
  SfuTiles,  // SFU tile file (region 2), owned by the SFU engine
};
inline constexpr unsigned kNumCoreMemories = 12;
// The data memories, first in CoreMemory order: sbuf.q0..sbuf.q3 and psum,
// the memories whose bytes the stats and the VCD counters count.
inline constexpr unsigned kNumDataMemories = kNumQuadrants + 1;
inline constexpr const char* kCoreMemoryNames[kNumCoreMemories] = {
    "sbuf.q0", "sbuf.q1",    "sbuf.q2",   "sbuf.q3",  "psum",      "sem",
    "regs",    "queue.pool", "queue.dve", "queue.pe", "queue.sfu", "sfu.tiles"};
constexpr const char* memory_name(CoreMemory m) {
  return static_cast<unsigned>(m) < kNumCoreMemories ? kCoreMemoryNames[static_cast<unsigned>(m)]
                                                     : "";
}
constexpr CoreMemory sbuf_quadrant_memory(unsigned q) {  // q < kNumQuadrants
  return static_cast<CoreMemory>(static_cast<unsigned>(CoreMemory::SbufQ0) + q);
}
constexpr CoreMemory queue_memory(Queue e) {  // e is pool, dve, pe or sfu
  return static_cast<CoreMemory>(static_cast<unsigned>(CoreMemory::QueuePool) +
                                 static_cast<unsigned>(e));
}
static_assert(static_cast<unsigned>(CoreMemory::Psum) == kNumQuadrants);
static_assert(static_cast<unsigned>(CoreMemory::QueueSfu) ==
              static_cast<unsigned>(CoreMemory::QueuePool) + 3);
static_assert(static_cast<unsigned>(CoreMemory::SfuTiles) + 1 == kNumCoreMemories);

}  // namespace tpb::isa

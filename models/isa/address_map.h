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

// Capacities per generation (SPEC §2; configurable through the timing/config
// profile, these are the defaults).
struct MemoryCapacity {
  std::uint32_t sbuf_bytes_per_partition;
  std::uint32_t psum_bytes_per_partition;
};
inline constexpr MemoryCapacity default_capacity(Arch a) {
  switch (a) {
    case Arch::Sunda:
      return {192u * 1024, 16u * 1024};
    case Arch::Cayman:
      return {224u * 1024, 16u * 1024};
    case Arch::Mariana:
    case Arch::Maverick:
      return {256u * 1024, 16u * 1024};
  }
  return {256u * 1024, 16u * 1024};
}

// Control region layout (convention, docs/CONVENTIONS.md):
//   +0x000000  semaphores: 64 x u32
//   +0x001000  engine registers: engine e at +0x1000 + e*0x100, 32 x u32
//   +0x100000  instruction queues: engine e at +0x100000 + e*kQueueBytes
inline constexpr std::uint32_t kSemaphoreBase = region_base(Region::Control) + 0x000000;
inline constexpr std::uint32_t kEngineRegBase = region_base(Region::Control) + 0x001000;
inline constexpr std::uint32_t kEngineRegStride = 0x100;
inline constexpr std::uint32_t kQueueBase = region_base(Region::Control) + 0x100000;
inline constexpr std::uint32_t kQueueBytes = 0x100000;  // 16384 instructions per engine

// The engines of one core, in the order used for register/queue placement.
enum class Engine : std::uint8_t { Pool = 0, Dve = 1, Pe = 2, Sfu = 3 };
inline constexpr unsigned kNumEngines = 4;
const char* engine_name(Engine e);  // "pool", "dve", "pe", "sfu"
std::optional<Engine> parse_engine(const char* s);

}  // namespace tpb::isa

// A partitioned scratchpad target: one SBUF quadrant (32 partitions) or the
// PSUM (128 partitions). SPEC §2: partition = bits[24:18], offset = bits[17:0].
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/sc/memory/mem_timing.h"

namespace tpb::sc {

class PartitionedMemory : public sc_core::sc_module {
 public:
  static constexpr unsigned kPartitionShift = 18;
  static constexpr std::uint64_t kPartitionSlot = std::uint64_t{1} << kPartitionShift;

  tlm_utils::simple_target_socket<PartitionedMemory> socket;

  // Throws std::invalid_argument for a structurally impossible configuration
  // (0 or > 128 partitions, 0 or > 256 KiB per partition): that is a platform
  // configuration error, not bus input.
  PartitionedMemory(sc_core::sc_module_name name, unsigned num_partitions,
                    std::uint32_t bytes_per_partition, MemTiming timing);

  unsigned num_partitions() const { return num_partitions_; }
  std::uint32_t bytes_per_partition() const { return bytes_per_partition_; }
  const MemTiming& timing() const { return timing_; }
  // Bandwidth booking shared by b_transport and DMI users (through
  // DmiTimingExtension); inert unless timing.contention_window is non-zero.
  BandwidthArbiter& arbiter() { return arbiter_; }
  const BandwidthArbiter& arbiter() const { return arbiter_; }
  // Target-local span covered by the storage: num_partitions << 18.
  std::uint64_t span() const { return std::uint64_t{num_partitions_} << kPartitionShift; }

  // Direct backdoor for loaders and dumps (not timed). Nullptr if
  // [local_addr, local_addr + len) is not inside one partition's capacity.
  std::uint8_t* backdoor(std::uint64_t local_addr, std::uint64_t len);

 private:
  struct FreeDeleter {
    void operator()(std::uint8_t* p) const { std::free(p); }
  };

  // True when [addr, addr+len) lies inside one partition's capacity.
  bool in_range(std::uint64_t addr, std::uint64_t len) const;

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);

  unsigned num_partitions_;
  std::uint32_t bytes_per_partition_;
  MemTiming timing_;
  BandwidthArbiter arbiter_;
  // Partition p lives at byte p << 18, so DMI pointer arithmetic equals
  // address arithmetic. calloc so the untouched tail of each 256 KiB slot (and
  // never-written memory) costs no resident pages.
  std::unique_ptr<std::uint8_t, FreeDeleter> storage_;
};

using SbufQuadrant = PartitionedMemory;
using PsumMemory = PartitionedMemory;

}  // namespace tpb::sc

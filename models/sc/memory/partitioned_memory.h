// A partitioned scratchpad target: one SBUF quadrant (32 partitions) or the
// PSUM (128 partitions). SPEC §2: partition = bits[24:18], offset = bits[17:0].
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/sc/memory/mem_timing.h"
#include "models/sc/memory/zeroed_storage.h"

namespace tpb::sc {

// One operation on a memory target, as an observer sees it (SCC's memory
// offers the same kind of operation callback): a scoreboard or a tracer
// attaches here instead of inside the target.
struct MemOp {
  tlm::tlm_command cmd;      // read, write (or ignore)
  std::uint64_t addr;        // target-local address (partition << 18 | offset)
  const std::uint8_t* data;  // the bytes read or written (len of them)
  unsigned len;
  sc_core::sc_time time;  // sc_time_stamp() + the initiator's local offset
  bool debug;             // transport_dbg (loads, dumps): untimed
};
using MemObserver = std::function<void(const MemOp&)>;

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

  // A fresh memory (all zero) of `bytes_per_partition` per partition and
  // `timing`, its bandwidth windows counted from `origin`; DMI granted before
  // is invalidated. Between runs only.
  void reset(std::uint32_t bytes_per_partition, MemTiming timing, sc_core::sc_time origin);

  unsigned num_partitions() const { return num_partitions_; }
  std::uint32_t bytes_per_partition() const { return bytes_per_partition_; }
  const MemTiming& timing() const { return timing_; }
  // Bandwidth booking shared by b_transport and DMI users (through
  // DmiTimingExtension); inert unless timing.contention_window is non-zero.
  BandwidthArbiter& arbiter() { return arbiter_; }
  const BandwidthArbiter& arbiter() const { return arbiter_; }
  // Target-local span covered by the storage: num_partitions << 18.
  std::uint64_t span() const { return std::uint64_t{num_partitions_} << kPartitionShift; }

  // Calls `f` after every successful b_transport and transport_dbg. While
  // an observer is attached the target grants no DMI (and invalidates what
  // it granted), so no access bypasses it; a run with observers is slower.
  void add_observer(MemObserver f);
  bool observed() const { return !observers_.empty(); }

  // Direct backdoor for loaders and dumps (not timed). Nullptr if
  // [local_addr, local_addr + len) is not inside one partition's capacity.
  std::uint8_t* backdoor(std::uint64_t local_addr, std::uint64_t len);

 private:
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
  ZeroedStorage storage_;
  std::vector<MemObserver> observers_;
  bool dmi_granted_ = false;
  void notify(tlm::tlm_command cmd, std::uint64_t addr, const std::uint8_t* data, unsigned len,
              const sc_core::sc_time& offset, bool debug) const;
};

using SbufQuadrant = PartitionedMemory;
using PsumMemory = PartitionedMemory;

}  // namespace tpb::sc

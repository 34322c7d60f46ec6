// The device memory (HBM) of one core (SPEC §10): a TLM-2.0 target of
// `capacity` bytes, reached by the core at TLM address isa::kHbmBase (2^40)
// + offset; this target's local address is the offset.
//
// Storage is sparse: the whole capacity is reserved as address space, and the
// host allocates a page only when it is first written, so a run holds about
// as much host memory as it wrote, whatever the capacity (18 GiB per core on
// trn3); untouched bytes read as zeros without allocating anything.
//
// Timing: every access, b_transport or DMI, costs the HBM latency (a profile
// convention). Bandwidth is not a per-access cost: the initiators that
// stream through the HBM (the DMA queues) move their bytes through
// `bandwidth`, the BandwidthShare that divides the core's HBM bandwidth
// between them (docs/CONVENTIONS.md).
#pragma once

#include <cstdint>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/sc/memory/bandwidth_share.h"

namespace tpb::sc {

struct HbmTiming {
  sc_core::sc_time latency;       // of every access
  std::uint64_t bytes_per_s = 1;  // the core's share of the device bandwidth
};

class HbmMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HbmMemory> socket;
  // The HBM bandwidth, shared by the streams through it.
  BandwidthShare bandwidth;

  // Throws std::invalid_argument for a capacity of 0 or past 2^40 (the
  // core's HBM window) or a bandwidth of 0, std::runtime_error when the host
  // cannot reserve the address space.
  HbmMemory(sc_core::sc_module_name name, std::uint64_t capacity, HbmTiming timing);
  ~HbmMemory() override;
  HbmMemory(const HbmMemory&) = delete;
  HbmMemory& operator=(const HbmMemory&) = delete;

  // A fresh HBM of `capacity` bytes (between runs): every byte zero again,
  // host pages given back, DMI grants invalidated. Throws as the constructor.
  void reset(std::uint64_t capacity, HbmTiming timing);
  // Host memory the storage holds now (resident pages of the reservation),
  // bytes: what a run touched, not the capacity.
  std::uint64_t resident_bytes() const;

  std::uint64_t capacity() const { return capacity_; }
  const HbmTiming& timing() const { return timing_; }

  // Direct backdoor for loaders and dumps (untimed): [addr, addr + len)
  // inside the capacity, else nullptr. Writing through it allocates pages as
  // any write does.
  std::uint8_t* backdoor(std::uint64_t addr, std::uint64_t len);
  // True when [addr, addr + len) lies inside the capacity (no overflow).
  bool in_range(std::uint64_t addr, std::uint64_t len) const {
    return addr <= capacity_ && len <= capacity_ - addr;
  }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);

  std::uint64_t capacity_;
  HbmTiming timing_;
  std::uint8_t* storage_ = nullptr;  // capacity_ bytes of reserved address space
  std::uint64_t mapped_ = 0;         // bytes mapped (capacity rounded up to pages)
  bool dmi_granted_ = false;
  void map(std::uint64_t capacity);
};

}  // namespace tpb::sc

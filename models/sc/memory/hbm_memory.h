// The device memory (HBM) of one core (SPEC §10): a TLM-2.0 target of
// `capacity` bytes, reached by the core at TLM address isa::kHbmBase (2^40)
// + offset; this target's local address is the offset.
//
// Storage is sparse and lazy (HbmStorage): nothing is reserved up front; the
// capacity is cut into chunks of 2 MiB, and a chunk's address space is
// mapped only when it is first written or a DMI pointer into it is asked
// for, its host pages only when they are written. A run's host memory and
// address space follow what it touches, whatever the capacity (18 GiB per
// core on trn3, 144 GiB for a device of 8): it runs under `ulimit -v 4G`.
// Untouched bytes read as zeros without allocating anything. A DMI grant
// covers one chunk (an access across a chunk boundary goes by b_transport,
// which costs the same). Several HbmMemory targets (the cores of a device,
// SPEC §15) may share one storage.
//
// Timing: every access, b_transport or DMI, costs the HBM latency (a profile
// convention). Bandwidth is not a per-access cost: the initiators that
// stream through the HBM (the DMA queues) move their bytes through
// `bandwidth`, the BandwidthShare that divides the core's HBM bandwidth
// between them (docs/CONVENTIONS.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/sc/memory/bandwidth_share.h"

namespace tpb::sc {

struct HbmTiming {
  sc_core::sc_time latency;       // of every access
  std::uint64_t bytes_per_s = 1;  // the core's share of the device bandwidth
};

// The bytes of an HBM: chunks of kChunkBytes mapped on first use.
class HbmStorage {
 public:
  static constexpr std::uint64_t kChunkBytes = std::uint64_t{2} << 20;
  // capacity: in [1, 2^40] (checked by HbmMemory).
  explicit HbmStorage(std::uint64_t capacity);
  ~HbmStorage();
  HbmStorage(const HbmStorage&) = delete;
  HbmStorage& operator=(const HbmStorage&) = delete;

  std::uint64_t capacity() const { return capacity_; }
  // Every byte zero again, every chunk given back; a new capacity.
  void reset(std::uint64_t capacity);
  // Copies [addr, addr + len) (inside the capacity: the caller checks);
  // never-written bytes read as zeros and allocate nothing.
  void read(std::uint64_t addr, std::uint8_t* dst, std::uint64_t len) const;
  void write(std::uint64_t addr, const std::uint8_t* src, std::uint64_t len);
  // The chunk holding `addr`, mapped now if it was not (HostSpaceError, a
  // std::runtime_error, when the host has no address space left for it).
  std::uint8_t* chunk(std::uint64_t addr);
  // The first and last byte (inclusive) of the chunk holding `addr`.
  std::uint64_t chunk_start(std::uint64_t addr) const { return addr / kChunkBytes * kChunkBytes; }
  std::uint64_t chunk_last(std::uint64_t addr) const;
  std::uint64_t mapped_chunks() const { return mapped_; }
  // Host pages written so far (resident), bytes.
  std::uint64_t resident_bytes() const;

 private:
  void free_all();
  std::uint64_t capacity_ = 0;
  std::vector<std::uint8_t*> chunks_;  // by chunk index; null: never touched
  std::uint64_t mapped_ = 0;
};

class HbmMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HbmMemory> socket;
  // The HBM bandwidth, shared by the streams through it.
  BandwidthShare bandwidth;

  // Throws std::invalid_argument for a capacity of 0 or past 2^40 (the
  // core's HBM window) or a bandwidth of 0.
  HbmMemory(sc_core::sc_module_name name, std::uint64_t capacity, HbmTiming timing);
  ~HbmMemory() override;
  HbmMemory(const HbmMemory&) = delete;
  HbmMemory& operator=(const HbmMemory&) = delete;

  // A fresh HBM of `capacity` bytes (between runs): every byte zero again,
  // host memory given back, DMI grants invalidated. Throws as the
  // constructor. (A shared storage is reset by its owner: share_storage.)
  void reset(std::uint64_t capacity, HbmTiming timing);
  // Host memory the storage holds now (resident pages of its chunks),
  // bytes: what a run touched, not the capacity.
  std::uint64_t resident_bytes() const { return storage_->resident_bytes(); }
  // Address space the storage has mapped (touched chunks), bytes.
  std::uint64_t mapped_bytes() const { return storage_->mapped_chunks() * HbmStorage::kChunkBytes; }
  // This target serves `s` from now on (a device's HBM, SPEC §15): DMI
  // grants into the old storage are invalidated.
  void share_storage(std::shared_ptr<HbmStorage> s);
  const std::shared_ptr<HbmStorage>& storage() const { return storage_; }
  // DMI grants of this target invalidated (the shared storage was reset).
  void invalidate_dmi();

  std::uint64_t capacity() const { return storage_->capacity(); }
  const HbmTiming& timing() const { return timing_; }

  // Direct backdoor (untimed): [addr, addr + len) inside the capacity and
  // inside one chunk, else nullptr. Maps the chunk.
  std::uint8_t* backdoor(std::uint64_t addr, std::uint64_t len);
  // True when [addr, addr + len) lies inside the capacity (no overflow).
  bool in_range(std::uint64_t addr, std::uint64_t len) const {
    const std::uint64_t cap = capacity();
    return addr <= cap && len <= cap - addr;
  }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);

  HbmTiming timing_;
  std::shared_ptr<HbmStorage> storage_;
  bool dmi_granted_ = false;
};

}  // namespace tpb::sc

// The 64 u32 semaphores shared by all engines of a core (SPEC §2 EVENTS).
// Sequencers use the C++ API (wait: satisfied() + changed_event(); retire:
// apply_update()); the TLM socket exposes them at isa::kSemaphoreBase.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/encodings.h"
#include "models/sc/memory/mem_timing.h"

namespace tpb::sc {

class SemaphoreBank : public sc_core::sc_module {
 public:
  static constexpr unsigned kCount = isa::kNumSemaphores;
  static constexpr std::uint64_t kSpan = kCount * 4;  // bytes of the TLM window

  tlm_utils::simple_target_socket<SemaphoreBank> socket;

  explicit SemaphoreBank(sc_core::sc_module_name name, MemTiming timing = {});
  // Every semaphore 0 and a new access timing (between runs; notifies nobody).
  void reset(MemTiming timing) {
    timing_ = timing;
    sem_.fill(0);
  }

  // idx >= 64 throws std::out_of_range (the predicates reject such encodings
  // before any sequencer gets here; this is the backstop).
  std::uint32_t get(unsigned idx) const;
  void set(unsigned idx, std::uint32_t v);
  // SPEC §2: Increment +1, Decrement -1 (both wrap mod 2^32), Set = value;
  // None changes nothing and notifies nothing.
  void apply_update(isa::UpdateMode m, unsigned idx, std::uint32_t value);
  // None: true; Equal: sem == value; GreaterEqual: sem >= value (unsigned).
  bool satisfied(isa::WaitMode m, unsigned idx, std::uint32_t value) const;

  // Notified (delta) on every write, including one that stores the value the
  // semaphore already had: a waiter re-evaluates satisfied() on wake-up.
  const sc_core::sc_event& changed_event() const { return changed_; }
  // Called synchronously on every write (idx, new value), for tracing.
  void set_observer(std::function<void(unsigned idx, std::uint32_t value)> f) {
    observer_ = std::move(f);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  static void check_index(unsigned idx);

  MemTiming timing_;
  std::array<std::uint32_t, kCount> sem_{};
  sc_core::sc_event changed_;
  std::function<void(unsigned, std::uint32_t)> observer_;
};

}  // namespace tpb::sc

// One engine's instruction queue (SPEC §7): 64-byte instruction words,
// instruction i at target-local byte 64 * i. The sequencer fetches through
// TLM; the platform fills it with load() (or by TLM writes) before start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/encodings.h"
#include "models/sc/memory/mem_timing.h"

namespace tpb::sc {

class InstructionQueue : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<InstructionQueue> socket;

  // capacity_bytes: a positive multiple of 64 (else std::invalid_argument).
  InstructionQueue(sc_core::sc_module_name name, std::uint32_t capacity_bytes, MemTiming timing);

  // Replaces the contents. Throws std::length_error past capacity (naming
  // both counts), leaving the queue unchanged.
  void load(const std::vector<isa::RawInst>& words);
  // Number of loaded instruction words. TLM reads are allowed in
  // [0, 64 * count()); a TLM write extends count() to cover what it wrote.
  std::size_t count() const { return count_; }
  std::uint32_t capacity_bytes() const { return static_cast<std::uint32_t>(bytes_.size()); }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);

  MemTiming timing_;
  std::vector<std::uint8_t> bytes_;
  std::size_t count_ = 0;
};

}  // namespace tpb::sc

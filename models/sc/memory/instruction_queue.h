// One engine's instruction queue (SPEC §7, §9): a ring of 64-byte instruction
// words, instruction i at target-local byte 64 * (i mod ring words). The
// sequencer fetches through TLM (DMI for reads of the words loaded: the
// grant covers [0, 64 * count()) and is taken back when count() changes);
// the platform attaches the engine's
// instruction source before the start, which fills the first ring-full, and
// the sequencer's instruction fetch refills freed slots during the run, so a
// program of any length streams through. load() fills it from a vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/encodings.h"
#include "models/isa/program_spool.h"
#include "models/sc/memory/mem_timing.h"
#include "models/sc/memory/zeroed_storage.h"

namespace tpb::sc {

class InstructionQueue : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<InstructionQueue> socket;

  // capacity_bytes: a positive multiple of 64 (else std::invalid_argument).
  InstructionQueue(sc_core::sc_module_name name, std::uint32_t capacity_bytes, MemTiming timing);

  // Empties the queue (no program: an engine runs nothing); `timing` is the
  // new access timing.
  void reset(MemTiming timing);
  void clear() { reset(timing_); }
  // Replaces the contents with `words` (any number) on a ring of the whole
  // capacity.
  void load(const std::vector<isa::RawInst>& words);
  // Replaces the contents: the program is src's words, streamed through a
  // ring of ring_words words (1..capacity; std::invalid_argument otherwise);
  // the first min(ring_words, total) words are written at once.
  void attach(std::unique_ptr<isa::InstructionSource> src, std::uint32_t ring_words);
  // Writes the next min(n, total - loaded) words of the program into their
  // ring slots (the caller frees them first); returns how many.
  std::size_t refill(std::size_t n);
  // Words of the program in all, and written into the ring so far.
  std::uint64_t total() const { return src_ ? src_->size() : 0; }
  std::uint64_t loaded() const { return loaded_; }
  std::uint32_t ring_words() const { return ring_words_; }
  // Target-local byte address of instruction i.
  std::uint64_t slot_addr(std::uint64_t i) const {
    return std::uint64_t{isa::kInstBytes} * (i % ring_words_);
  }
  // Words of the ring that hold an instruction. TLM reads are allowed in
  // [0, 64 * count()); a TLM write extends count() to cover what it wrote.
  std::size_t count() const { return count_; }
  std::uint32_t capacity_bytes() const { return static_cast<std::uint32_t>(size_); }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  // count_ becomes n: a DMI answer given for the old count is taken back.
  void set_count(std::size_t n);

  MemTiming timing_;
  // The ring (calloc: a queue that runs nothing, as most DMA queues do,
  // costs no resident memory).
  ZeroedStorage bytes_;
  std::size_t size_ = 0;
  std::size_t count_ = 0;
  std::unique_ptr<isa::InstructionSource> src_;
  std::uint32_t ring_words_ = 1;
  std::uint64_t loaded_ = 0;
  bool dmi_answered_ = false;  // a DMI grant or denial is out (initiators cache both)
};

}  // namespace tpb::sc

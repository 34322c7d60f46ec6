#include "models/sc/memory/instruction_queue.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "models/sc/memory/payload_access.h"

namespace tpb::sc {

InstructionQueue::InstructionQueue(sc_core::sc_module_name name, std::uint32_t capacity_bytes,
                                   MemTiming timing)
    : sc_core::sc_module(name), socket("socket"), timing_(timing) {
  if (capacity_bytes == 0 || capacity_bytes % isa::kInstBytes != 0)
    throw std::invalid_argument(std::string(this->name()) + ": capacity " +
                                std::to_string(capacity_bytes) +
                                " bytes is not a positive multiple of 64");
  bytes_ = zeroed_storage(capacity_bytes);
  size_ = capacity_bytes;
  socket.register_b_transport(this, &InstructionQueue::b_transport);
  socket.register_transport_dbg(this, &InstructionQueue::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &InstructionQueue::get_direct_mem_ptr);
}

void InstructionQueue::reset(MemTiming timing) {
  timing_ = timing;
  std::memset(bytes_.get(), 0, count_ * isa::kInstBytes);
  set_count(0);
  loaded_ = 0;
  ring_words_ = 1;
  src_.reset();
}

void InstructionQueue::load(const std::vector<isa::RawInst>& words) {
  attach(std::make_unique<isa::VectorSource>(words),
         static_cast<std::uint32_t>(size_ / isa::kInstBytes));
}

void InstructionQueue::attach(std::unique_ptr<isa::InstructionSource> src,
                              std::uint32_t ring_words) {
  const std::size_t cap = size_ / isa::kInstBytes;
  if (ring_words == 0 || ring_words > cap)
    throw std::invalid_argument(std::string(name()) + ": a ring of " + std::to_string(ring_words) +
                                " words does not fit the queue's " + std::to_string(cap));
  std::memset(bytes_.get(), 0, count_ * isa::kInstBytes);
  set_count(0);
  loaded_ = 0;
  ring_words_ = ring_words;
  src_ = std::move(src);
  refill(ring_words_);
}

std::size_t InstructionQueue::refill(std::size_t n) {
  if (!src_) return 0;
  n = static_cast<std::size_t>(std::min<std::uint64_t>(n, src_->size() - loaded_));
  std::size_t done = 0;
  while (done < n) {
    // Up to the end of the ring in one read.
    const std::size_t slot = static_cast<std::size_t>(loaded_ % ring_words_);
    const std::size_t k = std::min(n - done, ring_words_ - slot);
    auto* dst = reinterpret_cast<isa::RawInst*>(bytes_.get() + slot * isa::kInstBytes);
    const std::size_t got = src_->read(dst, k);
    if (got != k)
      throw std::runtime_error(std::string(name()) + ": the program ended after " +
                               std::to_string(loaded_ + got) + " of " +
                               std::to_string(src_->size()) + " words");
    loaded_ += k;
    done += k;
    set_count(std::max<std::size_t>(count_, slot + k));
  }
  return done;
}

void InstructionQueue::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  // Reads stop at the loaded words (fetching past the program is a fault the
  // sequencer reports); writes may go anywhere inside the capacity.
  const std::uint64_t limit = cmd == tlm::TLM_READ_COMMAND ? count_ * isa::kInstBytes : size_;
  if (len == 0 || addr >= limit || len > limit - addr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (!streaming_width_ok(trans)) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  if (cmd == tlm::TLM_READ_COMMAND) {
    std::memcpy(trans.get_data_ptr(), bytes_.get() + addr, len);
  } else {
    std::memcpy(bytes_.get() + addr, trans.get_data_ptr(), len);
    set_count(std::max<std::size_t>(count_, (addr + len + isa::kInstBytes - 1) / isa::kInstBytes));
  }
  delay += timing_.access_delay(len);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned InstructionQueue::transport_dbg(tlm::tlm_generic_payload& trans) {
  // Debug access sees the whole capacity (a disassembler may look past the end).
  const std::uint64_t addr = trans.get_address();
  if (addr >= size_) return 0;
  const unsigned n =
      static_cast<unsigned>(std::min<std::uint64_t>(trans.get_data_length(), size_ - addr));
  if (trans.is_read())
    std::memcpy(trans.get_data_ptr(), bytes_.get() + addr, n);
  else if (trans.is_write())
    std::memcpy(bytes_.get() + addr, trans.get_data_ptr(), n);
  else
    return 0;
  return n;
}

bool InstructionQueue::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  // Reads of the loaded words only: reads are bounded by count(), so the
  // grant ends there (and is taken back when count() changes); writes go
  // through b_transport, which extends count().
  dmi_answered_ = true;
  const std::uint64_t loaded = std::uint64_t{count_} * isa::kInstBytes;
  const std::uint64_t addr = trans.get_address();
  if (addr >= loaded) {
    dmi.set_start_address(loaded);
    dmi.set_end_address(size_ - 1);
    dmi.allow_none();
    return false;
  }
  dmi.set_dmi_ptr(bytes_.get());
  dmi.set_start_address(0);
  dmi.set_end_address(loaded - 1);  // inclusive
  dmi.allow_read();
  dmi.set_read_latency(timing_.latency);
  dmi.set_write_latency(timing_.latency);
  // The full timing: an initiator charges access_delay(len), as b_transport does.
  if (auto* ext = trans.get_extension<DmiTimingExtension>()) {
    ext->timing = timing_;
    ext->arbiter = nullptr;
    ext->filled = true;
  }
  return true;
}

void InstructionQueue::set_count(std::size_t n) {
  if (n == count_) return;
  count_ = n;
  if (dmi_answered_) {
    dmi_answered_ = false;
    socket->invalidate_direct_mem_ptr(0, size_ - 1);
  }
}

}  // namespace tpb::sc

#include "models/sc/memory/semaphore_bank.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "models/sc/memory/word_access.h"

namespace tpb::sc {

SemaphoreBank::SemaphoreBank(sc_core::sc_module_name name, MemTiming timing)
    : sc_core::sc_module(name), socket("socket"), timing_(timing), changed_("changed") {
  socket.register_b_transport(this, &SemaphoreBank::b_transport);
  socket.register_transport_dbg(this, &SemaphoreBank::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &SemaphoreBank::get_direct_mem_ptr);
}

void SemaphoreBank::check_index(unsigned idx) {
  if (idx >= kCount)
    throw std::out_of_range("semaphore index " + std::to_string(idx) +
                            " >= " + std::to_string(kCount));
}

std::uint32_t SemaphoreBank::get(unsigned idx) const {
  check_index(idx);
  return sem_[idx];
}

void SemaphoreBank::set(unsigned idx, std::uint32_t v) {
  check_index(idx);
  sem_[idx] = v;
  changed_.notify(sc_core::SC_ZERO_TIME);
  if (observer_) observer_(idx, v);
}

void SemaphoreBank::apply_update(isa::UpdateMode m, unsigned idx, std::uint32_t value) {
  switch (m) {
    case isa::UpdateMode::None:
      return;
    case isa::UpdateMode::Increment:
      set(idx, get(idx) + 1u);
      return;
    case isa::UpdateMode::Decrement:
      set(idx, get(idx) - 1u);
      return;
    case isa::UpdateMode::Set:
      set(idx, value);
      return;
  }
  throw std::invalid_argument("update mode " + std::to_string(static_cast<unsigned>(m)) +
                              " is not one of 0..3");
}

bool SemaphoreBank::satisfied(isa::WaitMode m, unsigned idx, std::uint32_t value) const {
  switch (m) {
    case isa::WaitMode::None:
      return true;
    case isa::WaitMode::Equal:
      return get(idx) == value;
    case isa::WaitMode::GreaterEqual:
      return get(idx) >= value;
  }
  throw std::invalid_argument("wait mode " + std::to_string(static_cast<unsigned>(m)) +
                              " is not one of 0..2");
}

void SemaphoreBank::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const tlm::tlm_response_status st = check_word_access(trans, kSpan);
  if (st != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(st);
    return;
  }
  const unsigned first = static_cast<unsigned>(trans.get_address() / 4);
  const unsigned words = trans.get_data_length() / 4;
  unsigned char* data = trans.get_data_ptr();
  for (unsigned i = 0; i < words; ++i) {
    if (trans.is_read()) {
      std::memcpy(data + 4 * i, &sem_[first + i], 4);
    } else {
      std::uint32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      set(first + i, v);  // through set(): waiters and the observer see bus writes too
    }
  }
  delay += timing_.access_delay(trans.get_data_length());
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned SemaphoreBank::transport_dbg(tlm::tlm_generic_payload& trans) {
  // Debug reads only: a debugger peeking must not wake sequencers.
  if (!trans.is_read() || check_word_access(trans, kSpan, true) != tlm::TLM_OK_RESPONSE) return 0;
  std::memcpy(trans.get_data_ptr(), &sem_[trans.get_address() / 4], trans.get_data_length());
  return trans.get_data_length();
}

bool SemaphoreBank::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  return deny_dmi(dmi, kSpan);  // every write must notify waiters
}

}  // namespace tpb::sc

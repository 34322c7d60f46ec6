#include "models/sc/memory/engine_registers.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "models/sc/memory/word_access.h"

namespace tpb::sc {

EngineRegisterFile::EngineRegisterFile(sc_core::sc_module_name name, MemTiming timing)
    : sc_core::sc_module(name), socket("socket"), timing_(timing) {
  socket.register_b_transport(this, &EngineRegisterFile::b_transport);
  socket.register_transport_dbg(this, &EngineRegisterFile::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &EngineRegisterFile::get_direct_mem_ptr);
}

void EngineRegisterFile::check(isa::Queue e, unsigned r) {
  if (!isa::is_compute_engine(e))
    throw std::out_of_range("queue " + std::to_string(static_cast<unsigned>(e)) +
                            " is not a compute engine (a DMA queue has no registers)");
  if (r >= kRegs)
    throw std::out_of_range("engine register r" + std::to_string(r) + " >= r" +
                            std::to_string(kRegs));
}

std::uint32_t EngineRegisterFile::get(isa::Queue e, unsigned r) const {
  check(e, r);
  return regs_[isa::engine_index(e)][r];
}

void EngineRegisterFile::set(isa::Queue e, unsigned r, std::uint32_t v) {
  check(e, r);
  regs_[isa::engine_index(e)][r] = v;
}

tlm::tlm_response_status EngineRegisterFile::decode(const tlm::tlm_generic_payload& trans,
                                                    unsigned& e, unsigned& r, bool debug) const {
  const tlm::tlm_response_status st = check_word_access(trans, kSpan, debug);
  if (st != tlm::TLM_OK_RESPONSE) return st;
  const std::uint64_t addr = trans.get_address();
  e = static_cast<unsigned>(addr / isa::kEngineRegStride);
  r = static_cast<unsigned>((addr % isa::kEngineRegStride) / 4);
  // An access must stay inside one engine's 32 registers.
  if (r + trans.get_data_length() / 4 > kRegs) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  return tlm::TLM_OK_RESPONSE;
}

void EngineRegisterFile::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  unsigned e = 0, r = 0;
  const tlm::tlm_response_status st = decode(trans, e, r, false);
  if (st != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(st);
    return;
  }
  const unsigned len = trans.get_data_length();
  if (trans.is_read())
    std::memcpy(trans.get_data_ptr(), &regs_[e][r], len);
  else
    std::memcpy(&regs_[e][r], trans.get_data_ptr(), len);
  delay += timing_.access_delay(len);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned EngineRegisterFile::transport_dbg(tlm::tlm_generic_payload& trans) {
  unsigned e = 0, r = 0;
  if (decode(trans, e, r, true) != tlm::TLM_OK_RESPONSE) return 0;
  const unsigned len = trans.get_data_length();
  if (trans.is_read())
    std::memcpy(trans.get_data_ptr(), &regs_[e][r], len);
  else
    std::memcpy(&regs_[e][r], trans.get_data_ptr(), len);
  return len;
}

bool EngineRegisterFile::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  return deny_dmi(dmi, kSpan);
}

}  // namespace tpb::sc

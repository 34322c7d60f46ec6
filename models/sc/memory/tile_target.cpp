#include "models/sc/memory/tile_target.h"

#include "models/sc/memory/word_access.h"

namespace tpb::sc {

TileFileTarget::TileFileTarget(sc_core::sc_module_name name, sfu::TileFile& tiles, MemTiming timing)
    : sc_core::sc_module(name), socket("socket"), tiles_(&tiles), timing_(timing) {
  socket.register_b_transport(this, &TileFileTarget::b_transport);
  socket.register_transport_dbg(this, &TileFileTarget::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &TileFileTarget::get_direct_mem_ptr);
}

tlm::tlm_response_status TileFileTarget::access(tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  if (trans.get_byte_enable_ptr() != nullptr) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  if (trans.get_streaming_width() < len) return tlm::TLM_BURST_ERROR_RESPONSE;
  if (addr >= kSpan || addr + len > kSpan) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  const auto off = static_cast<std::uint32_t>(addr);
  bool ok = false;
  if (trans.is_read())
    ok = tiles_->read(off, trans.get_data_ptr(), len);
  else if (trans.is_write())
    ok = tiles_->write(off, trans.get_data_ptr(), len);
  else
    return tlm::TLM_COMMAND_ERROR_RESPONSE;
  return ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE;
}

void TileFileTarget::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const tlm::tlm_response_status st = access(trans);
  if (st == tlm::TLM_OK_RESPONSE) delay += timing_.access_delay(trans.get_data_length());
  trans.set_response_status(st);
}

unsigned TileFileTarget::transport_dbg(tlm::tlm_generic_payload& trans) {
  return access(trans) == tlm::TLM_OK_RESPONSE ? trans.get_data_length() : 0;
}

bool TileFileTarget::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  return deny_dmi(dmi, kSpan);
}

}  // namespace tpb::sc

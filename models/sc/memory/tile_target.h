// The SFU tile file as a TLM-2.0 target in region 2 of the address map
// (SPEC §2, §6): an adapter over the pure C++ sfu::TileFile, which the
// SFU engine owns in its EngineState. Target-local layout (tile payloads at a
// 256 KiB stride, read-only descriptors and flags) in
// models/state/sfu_tile_file.h and docs/CONVENTIONS.md.
//
// b_transport and transport_dbg: TLM_ADDRESS_ERROR_RESPONSE for a byte
// outside an allocated tile's payload, the descriptors or the flags, or a
// write to the read-only metadata; TLM_BYTE_ENABLE_ERROR_RESPONSE for byte
// enables; TLM_BURST_ERROR_RESPONSE for a streaming width below the length;
// TLM_COMMAND_ERROR_RESPONSE for TLM_IGNORE_COMMAND. No DMI.
#pragma once

#include <cstdint>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/address_map.h"
#include "models/sc/memory/mem_timing.h"
#include "models/state/sfu_tile_file.h"

namespace tpb::sc {

class TileFileTarget : public sc_core::sc_module {
 public:
  static constexpr std::uint64_t kSpan = isa::kRegionSize;  // the whole of region 2

  tlm_utils::simple_target_socket<TileFileTarget> socket;

  TileFileTarget(sc_core::sc_module_name name, sfu::TileFile& tiles, MemTiming timing = {});
  // A new tile file (the SFU engine's, after a core reset) and access timing.
  void reset(sfu::TileFile& tiles, MemTiming timing) {
    tiles_ = &tiles;
    timing_ = timing;
  }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  tlm::tlm_response_status access(tlm::tlm_generic_payload& trans);

  sfu::TileFile* tiles_;
  MemTiming timing_;
};

}  // namespace tpb::sc

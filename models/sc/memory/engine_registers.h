// The 32 u32 registers of each engine (SPEC §2 ADDR_REG / SHAPE_REG), at
// isa::kEngineRegBase + engine * isa::kEngineRegStride. Target-local layout:
// engine e register r at e * 0x100 + 4 * r; bytes 0x80..0xFF of each engine's
// stride are unbacked (address error).
#pragma once

#include <array>
#include <cstdint>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/address_map.h"
#include "models/sc/memory/mem_timing.h"

namespace tpb::sc {

class EngineRegisterFile : public sc_core::sc_module {
 public:
  static constexpr unsigned kRegs = isa::kNumEngineRegs;
  static constexpr std::uint64_t kSpan = std::uint64_t{isa::kNumEngines} * isa::kEngineRegStride;

  tlm_utils::simple_target_socket<EngineRegisterFile> socket;

  explicit EngineRegisterFile(sc_core::sc_module_name name, MemTiming timing = {});
  // Every register 0 and a new access timing (between runs).
  void reset(MemTiming timing) {
    timing_ = timing;
    regs_ = {};
  }

  // r >= 32 or an engine ordinal >= 4 throws std::out_of_range.
  std::uint32_t get(isa::Queue e, unsigned r) const;
  void set(isa::Queue e, unsigned r, std::uint32_t v);

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  // Checks the access; on success `e`, `r` are the first engine/register.
  tlm::tlm_response_status decode(const tlm::tlm_generic_payload& trans, unsigned& e, unsigned& r,
                                  bool debug) const;
  static void check(isa::Queue e, unsigned r);

  MemTiming timing_;
  std::array<std::array<std::uint32_t, kRegs>, isa::kNumEngines> regs_{};
};

}  // namespace tpb::sc

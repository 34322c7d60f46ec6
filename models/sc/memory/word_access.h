// Checks shared by the u32 register-like targets (semaphores, engine
// registers): aligned whole-word accesses only, no byte enables.
#pragma once

#include <cstdint>

#include <tlm>

#include "models/sc/memory/payload_access.h"

namespace tpb::sc {

// Validates `trans` against a window of `span` bytes of u32 words. Returns
// TLM_OK_RESPONSE when the access is an aligned run of whole words inside the
// window; otherwise the error status to return (and sets nothing). Debug
// transport carries no meaningful streaming width or byte enables, so
// `debug` skips those two checks.
inline tlm::tlm_response_status check_word_access(const tlm::tlm_generic_payload& trans,
                                                  std::uint64_t span, bool debug = false) {
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND)
    return tlm::TLM_COMMAND_ERROR_RESPONSE;
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  if (addr % 4 != 0 || addr >= span || len > span - addr) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  if (len == 0 || len % 4 != 0 || (!debug && !streaming_width_ok(trans)))
    return tlm::TLM_BURST_ERROR_RESPONSE;
  if (!debug && trans.get_byte_enable_ptr() != nullptr) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  return tlm::TLM_OK_RESPONSE;
}

// Deny DMI over a whole register window (target-local [0, span - 1]), so an
// initiator does not ask again for every access.
inline bool deny_dmi(tlm::tlm_dmi& dmi, std::uint64_t span) {
  dmi.set_start_address(0);
  dmi.set_end_address(span - 1);
  dmi.allow_none();
  return false;
}

}  // namespace tpb::sc

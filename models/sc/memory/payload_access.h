// A byte-addressed TLM-2.0 target's handling of a generic payload: the
// checks of its attributes before anything is touched, and the move of its
// bytes between the payload's data and the target's storage.
#pragma once

#include <cstdint>
#include <cstring>

#include <tlm>

namespace tpb::sc {

// Shared checks of the generic payload attributes every target in this folder
// performs before touching storage (TLM-2.0 base protocol, SPEC: errors are
// response statuses, never asserts).
inline bool streaming_width_ok(const tlm::tlm_generic_payload& t) {
  return t.get_streaming_width() >= t.get_data_length();
}

// A byte-addressed data target's checks, in order: the command (read, write
// or ignore), the range (`in_range`: the target's own bounds), the streaming
// width, then the byte enables (malformed: zero length, or a lane that is
// neither enabled nor disabled). TLM_OK_RESPONSE when the access may proceed.
inline tlm::tlm_response_status check_data_access(const tlm::tlm_generic_payload& t,
                                                  bool in_range) {
  const tlm::tlm_command cmd = t.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND &&
      cmd != tlm::TLM_IGNORE_COMMAND)
    return tlm::TLM_COMMAND_ERROR_RESPONSE;
  if (!in_range) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  if (!streaming_width_ok(t)) return tlm::TLM_BURST_ERROR_RESPONSE;
  if (const unsigned char* be = t.get_byte_enable_ptr()) {
    const unsigned be_len = t.get_byte_enable_length();
    bool ok = be_len != 0;
    for (unsigned i = 0; ok && i < be_len; ++i)
      ok = be[i] == TLM_BYTE_ENABLED || be[i] == TLM_BYTE_DISABLED;
    if (!ok) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  }
  return tlm::TLM_OK_RESPONSE;
}

// Moves a checked access's bytes between its data and `mem` (the target's
// storage at its address), honouring the byte enables, whose pattern repeats
// every byte_enable_length. An ignore command or a zero length moves nothing
// (the data pointer may then be null).
inline void move_data(tlm::tlm_generic_payload& t, std::uint8_t* mem) {
  const unsigned len = t.get_data_length();
  const tlm::tlm_command cmd = t.get_command();
  if (len == 0 || cmd == tlm::TLM_IGNORE_COMMAND) return;
  unsigned char* data = t.get_data_ptr();
  const unsigned char* be = t.get_byte_enable_ptr();
  const unsigned be_len = t.get_byte_enable_length();
  const bool rd = cmd == tlm::TLM_READ_COMMAND;
  if (!be) {
    std::memcpy(rd ? data : mem, rd ? mem : data, len);
    return;
  }
  for (unsigned i = 0; i < len; ++i)
    if (be[i % be_len] == TLM_BYTE_ENABLED) (rd ? data[i] : mem[i]) = rd ? mem[i] : data[i];
}

}  // namespace tpb::sc

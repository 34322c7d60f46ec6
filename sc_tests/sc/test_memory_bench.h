// Test bench shared by the memory, router and sync tests (qbox style): a raw
// TLM initiator that issues exactly the payload a test wants and records what
// comes back, plus a helper that runs a test body as an SC thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

namespace tpb::sc::test {

struct Access {
  tlm::tlm_response_status status;
  sc_core::sc_time delay;  // what the target(s) added to a zero delay
  std::uint64_t address_after;
};

class TestInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TestInitiator> socket;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> invalidations;

  explicit TestInitiator(sc_core::sc_module_name name)
      : sc_core::sc_module(name), socket("socket") {
    socket.register_invalidate_direct_mem_ptr(this, &TestInitiator::invalidate);
  }

  // streaming_width 0 means "equal to len".
  Access access(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned len,
                const unsigned char* be = nullptr, unsigned be_len = 0,
                unsigned streaming_width = 0) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(data));
    t.set_data_length(len);
    t.set_streaming_width(streaming_width ? streaming_width : len);
    t.set_byte_enable_ptr(const_cast<unsigned char*>(be));
    t.set_byte_enable_length(be_len);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, d);
    return {t.get_response_status(), d, t.get_address()};
  }
  Access read(std::uint64_t addr, void* data, unsigned len) {
    return access(tlm::TLM_READ_COMMAND, addr, data, len);
  }
  Access write(std::uint64_t addr, const void* data, unsigned len) {
    return access(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(data), len);
  }
  std::uint32_t read_u32(std::uint64_t addr) {
    std::uint32_t v = 0xDEADBEEF;
    EXPECT_EQ(read(addr, &v, 4).status, tlm::TLM_OK_RESPONSE) << "read_u32 @" << std::hex << addr;
    return v;
  }
  bool get_dmi(std::uint64_t addr, tlm::tlm_dmi& dmi) {
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(addr);
    return socket->get_direct_mem_ptr(t, dmi);
  }
  unsigned debug(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned len) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(data));
    t.set_data_length(len);
    return socket->transport_dbg(t);
  }

 private:
  void invalidate(sc_dt::uint64 s, sc_dt::uint64 e) { invalidations.emplace_back(s, e); }
};

// A target that grants read-only DMI over its whole 4 KiB and can invalidate
// on request: exercises router translation / fan-out and MemPort caching.
class InvalidatingTarget : public sc_core::sc_module {
 public:
  static constexpr std::uint64_t kSize = 4096;
  tlm_utils::simple_target_socket<InvalidatingTarget> socket;
  std::uint8_t mem[kSize] = {};
  unsigned dmi_requests = 0;

  explicit InvalidatingTarget(sc_core::sc_module_name name)
      : sc_core::sc_module(name), socket("socket") {
    socket.register_b_transport(this, &InvalidatingTarget::b_transport);
    socket.register_get_direct_mem_ptr(this, &InvalidatingTarget::get_dmi);
  }
  void invalidate(std::uint64_t s, std::uint64_t e) { socket->invalidate_direct_mem_ptr(s, e); }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& d) {
    if (t.get_address() + t.get_data_length() > kSize) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (t.is_read())
      std::memcpy(t.get_data_ptr(), mem + t.get_address(), t.get_data_length());
    else
      std::memcpy(mem + t.get_address(), t.get_data_ptr(), t.get_data_length());
    d += sc_core::sc_time(3, sc_core::SC_NS);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  bool get_dmi(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
    ++dmi_requests;
    dmi.set_dmi_ptr(mem);
    dmi.set_start_address(0);
    dmi.set_end_address(kSize - 1);
    dmi.allow_read();
    dmi.set_read_latency(sc_core::sc_time(2, sc_core::SC_NS));
    return true;
  }
};

// Runs `body` as an SC thread (so it may wait()), starts the simulation and
// checks that the body ran to its end. `until` bounds simulated time for
// tests with threads that legitimately never finish.
inline void run_sc(std::function<void()> body, sc_core::sc_time until = sc_core::SC_ZERO_TIME) {
  bool finished = false;
  sc_core::sc_spawn([&] {
    body();
    finished = true;
  });
  if (until == sc_core::SC_ZERO_TIME)
    sc_core::sc_start();
  else
    sc_core::sc_start(until);
  EXPECT_TRUE(finished) << "test body did not run to completion";
}

inline constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024;
// The local address of partition p in a partitioned memory (256 KiB apart).
inline constexpr std::uint64_t slot(unsigned p) { return std::uint64_t{p} << 18; }

inline sc_core::sc_time ns(double v) { return sc_core::sc_time(v, sc_core::SC_NS); }

}  // namespace tpb::sc::test

// A user's platform with a tpbsim NeuronCore inside: the top module owns the
// core as a child and binds its own TLM initiator to the core's host socket.
// Its host thread writes the inputs through TLM, runs a TensorDequantize and
// then a QuantizeMX on the core (two runs of one core: memory carries over),
// reads the results back through TLM and checks them against values it
// computes itself from the format definitions.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/address_map.h"
#include "models/isa/program.h"
#include "platform/core/tpb_core.h"

namespace {

// FP4 E2M1 -> E5M2 (SPEC §3): E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6;
// their E5M2 encodings (bias 15, 2 mantissa bits).
std::uint8_t e2m1_to_e5m2(unsigned code) {
  static const std::uint8_t mag[8] = {0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46};
  return static_cast<std::uint8_t>(mag[code & 7] | ((code & 8) ? 0x80 : 0));
}

struct Top : sc_core::sc_module {
  tpb::platform::TpbCore core;
  tlm_utils::simple_initiator_socket<Top> host;
  int failures = 0;
  bool finished = false;

  SC_HAS_PROCESS(Top);
  explicit Top(sc_core::sc_module_name n)
      : sc_core::sc_module(n),
        core("core", tpb::platform::default_core_config(tpb::isa::Arch::Mariana)),
        host("host") {
    host.bind(core.host_socket);
    SC_THREAD(host_thread);
  }

  void transfer(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned len) {
    tlm::tlm_generic_payload t;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(data));
    t.set_data_length(len);
    t.set_streaming_width(len);
    host->b_transport(t, delay);
    wait(delay);
    if (!t.is_response_ok()) {
      std::printf("TLM %s at 0x%llx failed: %s\n", cmd == tlm::TLM_WRITE_COMMAND ? "write" : "read",
                  static_cast<unsigned long long>(addr), t.get_response_string().c_str());
      ++failures;
    }
  }
  void check(bool ok, const std::string& what) {
    if (!ok) {
      std::printf("MISMATCH: %s\n", what.c_str());
      ++failures;
    }
  }

  void host_thread() {
    using tpb::isa::sbuf_addr;
    // 1. TensorDequantize: one FP4 word in partition 3 -> eight E5M2 bytes.
    std::uint32_t word = 0x9F2E51C7u;
    transfer(tlm::TLM_WRITE_COMMAND, sbuf_addr(3, 0x0), &word, 4);
    core.load_program(
        tpb::isa::parse_program(".arch mariana\n.engine pool\n"
                                "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
                                "src=t3d(sbuf(3, 0x0), step=[1, 0, 0], num=[1, 1, 1]) "
                                "dst=t3d(sbuf(3, 0x100), step=[1, 0, 0], num=[2, 1, 1])\n",
                                "dequant"));
    const tpb::platform::CoreRunResult r1 = core.execute(tpb::platform::CoreRunSetup{});
    check(r1.status == tpb::platform::RunStatus::Ok, "dequant run: " + r1.message);
    std::uint8_t out[8];
    transfer(tlm::TLM_READ_COMMAND, sbuf_addr(3, 0x100), out, 8);
    for (unsigned k = 0; k < 8; ++k)
      check(out[k] == e2m1_to_e5m2((word >> (4 * k)) & 0xF), "dequant byte " + std::to_string(k));

    // 2. QuantizeMX: 32 partitions x 8 FP32 values. In block row b (8
    // partitions), column j (4 elements) every value is m x 2^e with m in
    // {1, 1.25, 1.5, 1.75} and e = b - 3 + 2j, so the block's E8M0 scale is
    // 127 + e - 8 (SPEC §4, emax 8 for E4M3) and each value / 2^(e - 8) is
    // m x 256, the E4M3 code 0x78 | (m - 1) x 8.
    for (unsigned p = 0; p < 32; ++p) {
      std::uint32_t row[8];
      for (unsigned i = 0; i < 8; ++i) {
        const int e = static_cast<int>(p / 8) - 3 + 2 * static_cast<int>(i / 4);
        const unsigned m4 = (p + i) % 4;  // m = 1 + m4 / 4
        row[i] = (static_cast<std::uint32_t>(127 + e) << 23) | (m4 << 21);
      }
      transfer(tlm::TLM_WRITE_COMMAND, sbuf_addr(p, 0x400), row, sizeof row);
    }
    core.load_program(tpb::isa::parse_program(
        ".arch mariana\n.engine dve\n"
        "quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 "
        "src=t3d(sbuf(0, 0x400), step=[1, 0, 0], num=[8, 1, 1]) "
        "dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=2, step=1, scale_pidx=0)\n",
        "quantize"));
    const tpb::platform::CoreRunResult r2 = core.execute(tpb::platform::CoreRunSetup{});
    check(r2.status == tpb::platform::RunStatus::Ok, "quantize run: " + r2.message);
    check(r2.start_ps >= r1.simulated_ps && r2.simulated_ps > r2.start_ps,
          "the second run starts after the first ended (the host's transfers took time)");
    for (unsigned p = 0; p < 32; ++p) {
      std::uint8_t codes[8];
      transfer(tlm::TLM_READ_COMMAND, sbuf_addr(p, 0x1000), codes, 8);
      for (unsigned i = 0; i < 8; ++i) {
        const unsigned m4 = (p + i) % 4;
        check(codes[i] == (0x78u | (m4 * 2)),
              "code p" + std::to_string(p) + " e" + std::to_string(i));
      }
    }
    for (unsigned b = 0; b < 4; ++b) {
      std::uint8_t scales[2];
      transfer(tlm::TLM_READ_COMMAND, sbuf_addr(b, 0x2000), scales, 2);  // SPEC §4 placement
      for (unsigned j = 0; j < 2; ++j)
        check(scales[j] == 127 + (static_cast<int>(b) - 3 + 2 * static_cast<int>(j)) - 8,
              "scale b" + std::to_string(b) + " j" + std::to_string(j));
    }
    // The first run's result is still there (memory carries over).
    transfer(tlm::TLM_READ_COMMAND, sbuf_addr(3, 0x100), out, 8);
    check(out[0] == e2m1_to_e5m2(word & 0xF), "dequant result kept");
    finished = true;
  }
};

}  // namespace

int sc_main(int, char**) {
  Top top("top");
  sc_core::sc_start();
  if (!top.finished) {
    std::printf("FAIL: the host thread did not finish\n");
    return 1;
  }
  std::printf("%s: %d mismatches\n", top.failures ? "FAIL" : "PASS", top.failures);
  return top.failures ? 1 : 0;
}

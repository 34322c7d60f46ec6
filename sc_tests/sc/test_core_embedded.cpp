// The core inside a user's platform (docs/EMBEDDING.md): a host module binds
// its own initiator to TpbCore::host_socket, writes inputs through TLM,
// runs programs with execute() from its own SC_THREAD and reads the results
// back; a fault ends the core's run but not the user's simulation.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/program.h"
#include "models/race/detector.h"
#include "models/state/sfu_tile_file.h"
#include "platform/core/tpb_core.h"

namespace tpb {
namespace {

struct Host : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Host> socket;
  std::function<void(Host&)> body;
  bool done = false;
  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name n, std::function<void(Host&)> b)
      : sc_core::sc_module(n), socket("socket"), body(std::move(b)) {
    SC_THREAD(thread);
  }
  void thread() {
    body(*this);
    done = true;
  }
  tlm::tlm_response_status transfer(tlm::tlm_command cmd, std::uint64_t addr, void* data,
                                    unsigned len) {
    tlm::tlm_generic_payload t;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(data));
    t.set_data_length(len);
    t.set_streaming_width(len);
    socket->b_transport(t, d);
    wait(d);
    return t.get_response_status();
  }
};

const char* kDequant =
    ".arch mariana\n.engine pool\n"
    "tensor_dequantize fmt=int4_to_e5m2 group=0 channels=1 "
    "src=t3d(sbuf(9, 0x0), step=[1, 0, 0], num=[1, 1, 1]) "
    "dst=t3d(sbuf(9, 0x40), step=[1, 0, 0], num=[2, 1, 1])\n";

TEST(CoreEmbedded, HostWritesRunsAndReadsThroughTheHostSocket) {
  platform::TpbCore core("core", platform::default_core_config(isa::Arch::Mariana));
  std::uint8_t out[8] = {};
  platform::CoreRunResult r;
  Host host("host", [&](Host& h) {
    // INT4 codes 0..7 and -8..-1 (two's complement nibbles): 0x87654321
    // holds 1, 2, ..., 7, -8; exact in E5M2: 1 = 0x3C, 2 = 0x40, 3 = 0x42,
    // 4 = 0x44, 5 = 0x45, 6 = 0x46, 7 = 0x47, -8 = 0xC8.
    std::uint32_t w = 0x87654321u;
    EXPECT_EQ(h.transfer(tlm::TLM_WRITE_COMMAND, isa::sbuf_addr(9, 0), &w, 4),
              tlm::TLM_OK_RESPONSE);
    core.load_program(isa::parse_program(kDequant, "dequant"));
    r = core.execute(platform::CoreRunSetup{});
    EXPECT_EQ(h.transfer(tlm::TLM_READ_COMMAND, isa::sbuf_addr(9, 0x40), out, 8),
              tlm::TLM_OK_RESPONSE);
    // Past the partition's capacity: a TLM error, not a crash.
    std::uint32_t x = 0;
    EXPECT_EQ(h.transfer(tlm::TLM_WRITE_COMMAND, isa::sbuf_addr(9, 256 * 1024 - 2), &x, 4),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  host.socket.bind(core.host_socket);
  sc_core::sc_start();
  ASSERT_TRUE(host.done);
  EXPECT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  EXPECT_GT(r.simulated_ps, r.start_ps);
  const std::uint8_t want[8] = {0x3C, 0x40, 0x42, 0x44, 0x45, 0x46, 0x47, 0xC8};
  for (unsigned k = 0; k < 8; ++k) EXPECT_EQ(out[k], want[k]) << k;
  // run() drives the simulation: from sc_main only; execute() waits: from a process only.
  EXPECT_THROW(core.execute(platform::CoreRunSetup{}), std::logic_error);
}

// A fault and a watchdog end the core's run; the user's simulation and its
// other processes go on (no sc_stop), and the core runs again afterwards.
TEST(CoreEmbedded, AFaultEndsTheRunNotTheSimulation) {
  platform::TpbCore core("core", platform::default_core_config(isa::Arch::Mariana));
  platform::CoreRunResult fault, wd, ok;
  sc_core::sc_time after_fault;
  Host host("host", [&](Host&) {
    // group 7 is no group: invalid on every generation.
    core.load_program(isa::parse_program(
        ".arch mariana\n.engine pool\ntensor_dequantize fmt=int4_to_e5m2 group=7 channels=1 "
        "src=t3d(sbuf(9, 0x0), step=[1, 0, 0], num=[1, 1, 1]) "
        "dst=t3d(sbuf(9, 0x40), step=[1, 0, 0], num=[2, 1, 1])\n",
        "bad group"));
    fault = core.execute(platform::CoreRunSetup{});
    wait(1, sc_core::SC_US);
    after_fault = sc_core::sc_time_stamp();
    core.load_program(isa::parse_program(
        ".arch mariana\n.engine pool\ntensor_dequantize fmt=int4_to_e5m2 group=0 channels=1 "
        "src=t3d(sbuf(9, 0x0), step=[1, 0, 0], num=[1, 1, 1]) "
        "dst=t3d(sbuf(9, 0x40), step=[1, 0, 0], num=[2, 1, 1]) wait=ge(sem3, 1)\n",
        "waits"));
    platform::CoreRunSetup limited;
    limited.max_sim_ps = 50000;
    wd = core.execute(limited);
    core.load_program(isa::parse_program(kDequant, "dequant"));
    ok = core.execute(platform::CoreRunSetup{});
  });
  host.socket.bind(core.host_socket);
  sc_core::sc_start();
  ASSERT_TRUE(host.done);
  EXPECT_EQ(fault.status, platform::RunStatus::Fault) << fault.message;
  ASSERT_TRUE(fault.fault.has_value());
  EXPECT_EQ(fault.fault->kind, "invalid");
  EXPECT_GE(after_fault, sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(wd.status, platform::RunStatus::Watchdog) << wd.message;
  EXPECT_EQ(ok.status, platform::RunStatus::Ok) << ok.message;
}

// The race check with the core embedded (SPEC §14): the host socket's
// accesses during a run are an agent of their own. Runs `prog` with the
// check from the host's thread, which does `during` while the core runs.
race::Report run_checked(platform::TpbCore& core, const isa::Program& prog,
                         const std::function<void(Host&)>& during) {
  std::array<std::vector<isa::InstructionNote>, isa::kNumQueues> notes;
  for (unsigned e = 0; e < isa::kNumQueues; ++e)
    for (const isa::ProgramInst& i : prog.queues[e])
      notes[e].push_back(isa::InstructionNote{static_cast<std::uint32_t>(i.loc.line),
                                              isa::events_of(i.raw), i.raw[0]});
  race::CoreProgram cp;
  cp.source.file = prog.path;
  for (unsigned e = 0; e < isa::kNumQueues; ++e) cp.notes[e] = &notes[e];
  race::Report report;
  platform::CoreRunResult r;
  Host host("host", [&](Host& h) {
    core.load_program(prog);
    for (unsigned i = 0; i < isa::kNumSemaphores; ++i) cp.semaphores[i] = core.semaphores().get(i);
    race::Detector d({cp});
    platform::CoreRunSetup setup;
    setup.race = &d;
    core.start(setup);
    during(h);
    wait(core.done_event());
    r = core.finish();
    report = d.finish();
  });
  host.socket.bind(core.host_socket);
  sc_core::sc_start();
  EXPECT_TRUE(host.done);
  EXPECT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  return report;
}

TEST(CoreEmbedded, AHostWritingATileWhileTquantReadsItRaces) {
  platform::TpbCore core("core", platform::default_core_config(isa::Arch::Mariana));
  const std::vector<float> values(8 * 32, 1.5f);
  core.tile_file().load_fp32(1, 8, 24, 32, values.data());
  const race::Report report = run_checked(
      core,
      isa::parse_program(".arch mariana\n.reg sfu r1 = 0x3ebd70a4\n.reg sfu r2 = 0\n"
                         "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=24; B.DIM "
                         "LB1=8; B.DIM LB2=32; B.IOR r1, r2; B.IOT T1, mask=1111, <last>, "
                         "->T0<1>; BSTOP\n",
                         "tquant.tpb"),
      [](Host& h) {
        // Tile T1's payload, row 2, while the SFU reads T1: nothing orders them.
        float x = 2.0f;
        EXPECT_EQ(h.transfer(tlm::TLM_WRITE_COMMAND,
                             isa::region_base(isa::Region::SfuTile) + 1 * sfu::kTilePayloadStride +
                                 2 * 32 * 4,
                             &x, 4),
                  tlm::TLM_OK_RESPONSE);
      });
  ASSERT_EQ(report.races.size(), 1u);
  const race::Race& x = report.races[0];
  EXPECT_EQ(x.memory, race::Memory::Tiles);
  EXPECT_EQ(x.partition_lo, 1u);
  // Named in the order they happened (issue 40): the host wrote the tile
  // before TQUANT read it.
  EXPECT_TRUE(x.first.host);
  EXPECT_EQ(x.second.queue, isa::Queue::Sfu);
  EXPECT_EQ(x.kinds, race::kRaw);
  EXPECT_EQ(race::race_message(x, report.sources),
            "no semaphore orders sfu[0] tquant (tquant.tpb:4) after the host: RAW on tile T1 "
            "bytes 0x100-0x103");
}

TEST(CoreEmbedded, AHostSemaphoreWriteAfterItsDataOrdersTheWaiterByWhatTheRunObserved) {
  platform::TpbCore core("core", platform::default_core_config(isa::Arch::Mariana));
  const race::Report report = run_checked(
      core,
      isa::parse_program(".arch mariana\n.engine pool\ntensor_dequantize fmt=int4_to_e5m2 "
                         "group=0 channels=1 src=t3d(sbuf(9, 0x0), step=[1, 0, 0], num=[1, 1, "
                         "1]) dst=t3d(sbuf(9, 0x40), step=[1, 0, 0], num=[2, 1, 1]) "
                         "wait=ge(sem3, 1)\n",
                         "waits.tpb"),
      [](Host& h) {
        std::uint32_t w = 0x87654321u, one = 1;
        EXPECT_EQ(h.transfer(tlm::TLM_WRITE_COMMAND, isa::sbuf_addr(9, 0), &w, 4),
                  tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(h.transfer(tlm::TLM_WRITE_COMMAND, isa::kSemaphoreBase + 4 * 3, &one, 4),
                  tlm::TLM_OK_RESPONSE);
      });
  EXPECT_TRUE(report.races.empty());
  ASSERT_EQ(report.timing_dependent.size(), 1u);
  EXPECT_EQ(report.timing_dependent[0].first, 3u);
  EXPECT_EQ(report.timing_dependent[0].second, "written by the host during the run");
}

}  // namespace
}  // namespace tpb

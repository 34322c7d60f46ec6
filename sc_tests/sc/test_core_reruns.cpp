// A core runs more than once (SPEC §12): memories, semaphores, PE weights,
// the tile file and simulated time carry over between runs of one core;
// reset() gives a fresh core of another configuration without a new
// elaboration; a run after a fault or a deadlock starts clean (nothing of
// the aborted run executes in it); one Session at a time per process.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/program.h"
#include "platform/core/tpb_core.h"
#include "platform/run/arrays.h"
#include "platform/run/session.h"
#include "sc_tests/sc/test_platform_harness.h"

namespace tpb {
namespace {

// FP4 E2M1 code -> E5M2 byte, from the two format definitions: E2M1 codes
// 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 (bit 3 the sign); E5M2 is IEEE-like
// with bias 15 and 2 mantissa bits: 0.5 = 0x38, 1 = 0x3C, 1.5 = 0x3E, 2 =
// 0x40, 3 = 0x42, 4 = 0x44, 6 = 0x46.
std::uint8_t e2m1_to_e5m2(unsigned code) {
  static const std::uint8_t mag[8] = {0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46};
  return static_cast<std::uint8_t>(mag[code & 7] | ((code & 8) ? 0x80 : 0));
}

// One 1-partition E2M1 -> E5M2 dequant of one source word at partition 0,
// offset `src`, into two words at `dst`, with `events` (EVENTS text).
std::string dequant(std::uint32_t src, std::uint32_t dst, const std::string& events = "") {
  return "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
         "src=t3d(sbuf(0, " +
         std::to_string(src) + "), step=[1, 0, 0], num=[1, 1, 1]) dst=t3d(sbuf(0, " +
         std::to_string(dst) + "), step=[1, 0, 0], num=[2, 1, 1]) " + events + "\n";
}

std::vector<std::uint8_t> expected_bytes(std::uint32_t word) {
  std::vector<std::uint8_t> v;
  for (unsigned k = 0; k < 8; ++k) v.push_back(e2m1_to_e5m2((word >> (4 * k)) & 0xF));
  return v;
}

TEST(CoreReruns, MemoriesSemaphoresAndTimeCarryOver) {
  platform::TpbCore core("tpb", platform::default_core_config(isa::Arch::Mariana));
  const std::uint32_t w1 = 0x76543210u, w2 = 0xFEDCBA98u;
  core.load_memory(isa::sbuf_addr(0, 0), &w1, 4);
  platref::load_mariana_asm(core, ".engine pool\n" + dequant(0, 0x100, "update=inc(sem5)"));
  const platform::CoreRunResult r1 = core.run();
  ASSERT_EQ(r1.status, platform::RunStatus::Ok) << r1.message;
  EXPECT_EQ(r1.instructions, 1u);
  EXPECT_EQ(r1.start_ps, 0u);
  EXPECT_GT(r1.simulated_ps, 0u);
  EXPECT_EQ(core.semaphores().get(5), 1u);
  EXPECT_EQ(core.dump_memory(isa::sbuf_addr(0, 0x100), 8), expected_bytes(w1));

  // Change memory between runs; the second program waits on the semaphore
  // the first one set (without it the run would deadlock).
  core.load_memory(isa::sbuf_addr(0, 0), &w2, 4);
  platref::load_mariana_asm(
      core, ".engine pool\n" + dequant(0, 0x200, "wait=ge(sem5, 1) update=inc(sem5)"));
  std::vector<std::uint64_t> ends;
  core.set_retire_sink([&](const sc::RetireRecord& r) { ends.push_back(r.end_ps); });
  const platform::CoreRunResult r2 = core.run();
  ASSERT_EQ(r2.status, platform::RunStatus::Ok) << r2.message;
  EXPECT_EQ(r2.start_ps, r1.simulated_ps);  // time carries over
  EXPECT_GT(r2.simulated_ps, r2.start_ps);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_GT(ends[0], r1.simulated_ps);
  EXPECT_EQ(core.semaphores().get(5), 2u);
  EXPECT_EQ(core.dump_memory(isa::sbuf_addr(0, 0x200), 8), expected_bytes(w2));
  EXPECT_EQ(core.dump_memory(isa::sbuf_addr(0, 0x100), 8), expected_bytes(w1));  // kept

  // A run with nothing loaded: each program runs once.
  ends.clear();
  const platform::CoreRunResult r3 = core.run();
  EXPECT_EQ(r3.status, platform::RunStatus::Ok);
  EXPECT_EQ(r3.instructions, 0u);
  EXPECT_TRUE(ends.empty());
  EXPECT_EQ(core.stats().engines[0].instructions, 0u);  // stats are the run's own
}

// The PE's stationary weights stay loaded: ldweights in one run, matmul in
// the next gives the PSUM of both in one run; a reset core has no weights.
TEST(CoreReruns, PeWeightsCarryOverAndResetClearsThem) {
  const std::string ld =
      ".engine pe\nldweights_mx in_dtype=fp8_e4m3 rows=128 cols=32 "
      "src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=32, step=1)\n";
  const std::string mm =
      ".engine pe\nmatmul_mx in_dtype=fp8_e4m3 out_dtype=fp32 rows=128 acc=0 "
      "src=mx1d(data=sbuf(0, 0x8000), scale=sbuf(0, 0xc000), num=64, step=1) "
      "dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[64, 1, 1])\n";
  const platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  platform::TpbCore core("tpb", cfg);
  auto fill = [&] {
    // Data words: FP8 E4M3 codes of small magnitude; scales 127 (2^0).
    for (unsigned p = 0; p < 128; ++p) {
      std::vector<std::uint8_t> w(0x100), x(0x100), s(16, 127);
      for (unsigned i = 0; i < w.size(); ++i) {
        w[i] = static_cast<std::uint8_t>(0x30 + ((p * 7 + i * 3) % 16));
        x[i] = static_cast<std::uint8_t>(0x28 + ((p * 5 + i) % 24));
      }
      core.load_memory(isa::sbuf_addr(p, 0x0), w.data(), w.size());
      core.load_memory(isa::sbuf_addr(p, 0x8000), x.data(), x.size());
      if (p % 32 < 4) {
        core.load_memory(isa::sbuf_addr(p, 0x4000), s.data(), s.size());
        core.load_memory(isa::sbuf_addr(p, 0xc000), s.data(), s.size());
      }
    }
  };
  fill();
  platref::load_mariana_asm(core, ld + mm);
  ASSERT_EQ(core.run().status, platform::RunStatus::Ok);
  const std::vector<std::uint8_t> one_run = core.dump_memory(isa::psum_addr(5, 0), 64 * 4);

  core.reset(cfg);
  EXPECT_EQ(core.now_ps(), 0u);
  EXPECT_EQ(core.dump_memory(isa::psum_addr(5, 0), 64 * 4), std::vector<std::uint8_t>(256, 0));
  fill();
  platref::load_mariana_asm(core, mm);  // no weights after a reset
  const platform::CoreRunResult nw = core.run();
  ASSERT_EQ(nw.status, platform::RunStatus::Fault);
  ASSERT_TRUE(nw.fault.has_value());
  EXPECT_EQ(nw.fault->engine, isa::Queue::Pe);
  EXPECT_EQ(nw.fault->index, 0u);

  platref::load_mariana_asm(core, ld);
  ASSERT_EQ(core.run().status, platform::RunStatus::Ok);
  platref::load_mariana_asm(core, mm);
  ASSERT_EQ(core.run().status, platform::RunStatus::Ok);
  EXPECT_EQ(core.dump_memory(isa::psum_addr(5, 0), 64 * 4), one_run);
}

// A reset core times like a fresh one, wherever the process's simulation
// has got to: the same retire times, stats and end, with SBUF contention on
// (bandwidth windows counted from the core's origin).
TEST(CoreReruns, ResetCoreTimesLikeAFreshOne) {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  cfg.timing.sbuf.contention_window_cycles = 64;
  const std::string prog =
      ".engine pool\n" + dequant(0, 0x100, "update=inc(sem1)") + dequant(0x10, 0x300) +
      ".engine dve\nquantize_mx channels=32 in_dtype=bf16 out_dtype=fp8_e4m3 "
      "src=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[512, 1, 1]) "
      "dst=mx1d(data=sbuf(0, 0x4000), scale=sbuf(0, 0x6000), num=128, step=1) wait=ge(sem1, 1)\n";
  platform::TpbCore core("tpb", cfg);
  struct Run {
    std::vector<std::uint64_t> ends;
    platform::CoreRunResult r;
    std::vector<std::uint64_t> busy;  // by stats row
  };
  auto run = [&] {
    Run out;
    for (unsigned p = 0; p < 32; ++p) {
      std::vector<std::uint8_t> v(0x2000);
      for (unsigned i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(p * 31 + i * 7);
      core.load_memory(isa::sbuf_addr(p, 0), v.data(), v.size());
    }
    platref::load_mariana_asm(core, prog);
    core.set_retire_sink([&](const sc::RetireRecord& r) { out.ends.push_back(r.end_ps); });
    out.r = core.run();
    core.set_retire_sink(nullptr);
    const trace::RunStats s = core.stats();
    for (const auto& e : s.engines) out.busy.push_back(e.busy_cycles);
    return out;
  };
  const Run fresh = run();
  ASSERT_EQ(fresh.r.status, platform::RunStatus::Ok) << fresh.r.message;
  // Move the process's time to an odd place, then reset twice.
  platref::load_mariana_asm(core, ".engine pool\n" + dequant(0, 0x900));
  core.run();
  core.reset(platform::default_core_config(isa::Arch::Cayman));
  EXPECT_EQ(core.now_ps(), 0u);
  EXPECT_EQ(core.semaphores().get(1), 0u);
  core.reset(cfg);
  const Run again = run();
  ASSERT_EQ(again.r.status, platform::RunStatus::Ok) << again.r.message;
  EXPECT_EQ(again.ends, fresh.ends);
  EXPECT_EQ(again.r.simulated_ps, fresh.r.simulated_ps);
  EXPECT_EQ(again.busy, fresh.busy);
}

// After a fault or a deadlock the next run starts clean: nothing of the
// aborted program runs in it, even when what it waited for now holds.
TEST(CoreReruns, NothingOfAnAbortedRunExecutesInTheNext) {
  platform::TpbCore core("tpb", platform::default_core_config(isa::Arch::Mariana));
  const std::uint32_t w = 0x13572468u;
  core.load_memory(isa::sbuf_addr(0, 0), &w, 4);
  // Deadlock: POOL's second instruction waits on sem9, which nobody sets.
  platref::load_mariana_asm(
      core, ".engine pool\n" + dequant(0, 0x100) + dequant(0, 0x400, "wait=ge(sem9, 1)"));
  const platform::CoreRunResult d = core.run();
  ASSERT_EQ(d.status, platform::RunStatus::Deadlock);
  EXPECT_NE(d.message.find("pool instruction 1 waits for sem[9] >= 1"), std::string::npos)
      << d.message;
  // Fault on the DVE (a QuantizeMX word with every field zero: invalid)
  // while POOL waits on sem9.
  std::string zero_qmx = ".raw e3 10";
  for (int i = 0; i < 62; ++i) zero_qmx += " 00";
  platref::load_mariana_asm(core, ".engine pool\n" + dequant(0, 0x500, "wait=ge(sem9, 1)") +
                                      ".engine dve\n" + zero_qmx + "\n");
  const platform::CoreRunResult f = core.run();
  ASSERT_EQ(f.status, platform::RunStatus::Fault) << f.message;
  EXPECT_EQ(f.fault->engine, isa::Queue::Dve);
  EXPECT_FALSE(f.fault->predicates.empty());
  // Now sem9 is set by the DVE; POOL's aborted waits must not wake.
  std::vector<std::pair<isa::Queue, std::size_t>> retired;
  core.set_retire_sink([&](const sc::RetireRecord& r) { retired.emplace_back(r.engine, r.index); });
  platref::load_mariana_asm(core,
                            ".engine dve\nquantize_mx channels=32 in_dtype=bf16 out_dtype=fp8_e4m3 "
                            "src=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[16, 1, 1]) "
                            "dst=mx1d(data=sbuf(0, 0x4000), scale=sbuf(0, 0x6000), num=4, step=1) "
                            "update=set(sem9, 1)\n");
  const platform::CoreRunResult ok = core.run();
  ASSERT_EQ(ok.status, platform::RunStatus::Ok) << ok.message;
  EXPECT_EQ(core.semaphores().get(9), 1u);
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_EQ(retired[0].first, isa::Queue::Dve);
  // Neither aborted POOL instruction wrote its destination.
  EXPECT_EQ(core.dump_memory(isa::sbuf_addr(0, 0x400), 8), std::vector<std::uint8_t>(8, 0));
  EXPECT_EQ(core.dump_memory(isa::sbuf_addr(0, 0x500), 8), std::vector<std::uint8_t>(8, 0));
  EXPECT_EQ(core.dump_memory(isa::sbuf_addr(0, 0x100), 8), expected_bytes(w));
}

TEST(CoreReruns, SessionsOpenAtOnceAreCoresOfTheirOwnThenOneIsReused) {
  run::CoreSpec a;
  a.arch = isa::Arch::Mariana;
  auto s1 = std::make_unique<run::Session>(a);
  {
    run::CoreSpec b;
    b.arch = isa::Arch::Cayman;
    run::Session s2(b);  // a second elaboration, in a SystemC context of its own
    EXPECT_EQ(s2.config().arch, isa::Arch::Cayman);
    const std::uint32_t v = 0x22222222u;
    run::write_place(s2, run::HostPlace::rows(isa::Region::Sbuf, 0, 0),
                     reinterpret_cast<const std::uint8_t*>(&v), 1, 4);
    std::uint32_t in1 = 1;
    run::read_place(*s1, run::HostPlace::rows(isa::Region::Sbuf, 0, 0),
                    reinterpret_cast<std::uint8_t*>(&in1), 1, 4);
    EXPECT_EQ(in1, 0u);  // s2's write is not s1's memory
  }
  EXPECT_EQ(run::Session::elaborations(), 2u);
  const std::uint32_t w = 0x11111111u;
  run::write_place(*s1, run::HostPlace::rows(isa::Region::Sbuf, 0, 0),
                   reinterpret_cast<const std::uint8_t*>(&w), 1, 4);
  s1.reset();
  run::CoreSpec c;
  c.arch = isa::Arch::Cayman;
  c.timing_overrides = {{"clocks_mhz.pool", 600}};
  run::Session s3(c);
  EXPECT_EQ(s3.config().arch, isa::Arch::Cayman);
  EXPECT_EQ(s3.config().timing.clock(isa::Queue::Pool), 600u);
  EXPECT_EQ(s3.partition_bytes(isa::Region::Sbuf), 224u * 1024);
  std::uint32_t got = 1;
  run::read_place(s3, run::HostPlace::rows(isa::Region::Sbuf, 0, 0),
                  reinterpret_cast<std::uint8_t*>(&got), 1, 4);
  EXPECT_EQ(got, 0u);  // a fresh core
  // Out of range: refused whole, nothing written.
  std::vector<std::uint8_t> rows(2 * 16, 0xAB);
  EXPECT_THROW(
      run::write_place(s3, run::HostPlace::rows(isa::Region::Sbuf, 127, 0), rows.data(), 2, 16),
      run::InputError);
  std::uint8_t b = 1;
  run::read_place(s3, run::HostPlace::rows(isa::Region::Sbuf, 127, 0), &b, 1, 1);
  EXPECT_EQ(b, 0u);
  EXPECT_THROW(run::write_place(s3, run::HostPlace::rows(isa::Region::Sbuf, 0, 224 * 1024 - 8),
                                rows.data(), 1, 16),
               run::InputError);
}

// A traced run's tracers end with it: a host's semaphore write between runs,
// a reset to another generation and quantum, and a traced run after it
// reach no tracer of the first run's (they wrote into its recorder, freed
// by the reset: AddressSanitizer's stage catches a use). The new quantum
// applies to the next run.
TEST(CoreReruns, TracedRunThenHostWritesResetAndTracedRunAgain) {
  platform::TpbCore core("tpb", platform::default_core_config(isa::Arch::Mariana));
  platform::CoreRunSetup traced;
  traced.trace.signals = true;
  traced.trace.slices = true;
  const std::uint32_t w = 0x76543210u;
  core.load_memory(isa::sbuf_addr(0, 0), &w, 4);
  platref::load_mariana_asm(core, ".engine pool\n" + dequant(0, 0x100, "update=inc(sem5)"));
  ASSERT_EQ(core.run(traced).status, platform::RunStatus::Ok);
  EXPECT_GT(core.recorder().changes_recorded(), 0u);
  const std::uint64_t changes = core.recorder().changes_recorded();
  core.semaphores().set(5, 9);  // between runs: no tracer listens
  EXPECT_EQ(core.recorder().changes_recorded(), changes);
  platform::CoreConfig mav = platform::default_core_config(isa::Arch::Maverick);
  mav.timing.quantum_ns = 1;
  core.reset(mav);
  EXPECT_EQ(tlm::tlm_global_quantum::instance().get(), sc_core::sc_time(1, sc_core::SC_NS));
  core.semaphores().set(5, 3);
  core.load_memory(isa::sbuf_addr(0, 0), &w, 4);
  core.load_program(isa::parse_program(
      ".arch maverick\n.engine pool\n" + dequant(0, 0x100, "wait=ge(sem5, 3) update=inc(sem5)"),
      "test.tpb"));
  ASSERT_EQ(core.run(traced).status, platform::RunStatus::Ok);
  EXPECT_EQ(core.semaphores().get(5), 4u);
  EXPECT_EQ(core.dump_memory(isa::sbuf_addr(0, 0x100), 8), expected_bytes(w));
  EXPECT_GT(core.recorder().changes_recorded(), 0u);
}

}  // namespace
}  // namespace tpb

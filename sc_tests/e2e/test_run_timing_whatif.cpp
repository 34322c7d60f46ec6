// What-if exploration through `tpbsim run --timing` (issue: cycle counts an
// architect can trust): a faster DVE clock, more POOL cores and a narrower
// SBUF change the simulated time the way the hardware would, and the time
// does not depend on the temporal-decoupling quantum.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using nlohmann::json;

struct Outcome {
  std::uint64_t simulated_ps = 0;
  json engines;
  std::string retire;
};

Outcome run(const std::string& dir, const std::string& tag, const std::string& program,
            const json& profile) {
  const std::string prog = dir + "/" + tag + ".tpb", timing = dir + "/" + tag + ".json",
                    stats = dir + "/" + tag + ".stats.json", retire = dir + "/" + tag + ".retire";
  std::ofstream(prog) << program;
  std::ofstream(timing) << profile.dump();
  const ToolResult r = run_tool("run " + prog + " -q --timing " + timing + " --stats " + stats +
                                " --retire " + retire);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json s = json::parse(read_text(stats));
  return Outcome{s.at("simulated_ps").get<std::uint64_t>(), s.at("engines"), read_text(retire)};
}

json engine(const Outcome& r, const std::string& name) {
  for (const auto& e : r.engines)
    if (e.at("name") == name) return e;
  ADD_FAILURE() << "no engine " << name;
  return {};
}

const char* kQuantizeMx = R"(.arch mariana
.engine dve
quantize_mx channels=128 in_dtype=bf16 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4096, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x30000), scale=sbuf(0, 0x38000), num=1024, step=1, scale_pidx=0)
)";

const char* kDequant = R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=128 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4096, 1, 1]) \
    dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[8192, 1, 1])
)";

TEST(TimingWhatIf, DoublingTheDveClockHalvesQuantizeMx) {
  const std::string dir = scratch_dir("whatif-dve-clock");
  const Outcome base = run(dir, "base", kQuantizeMx, json::object());
  const Outcome fast = run(dir, "fast", kQuantizeMx, json{{"clocks_mhz", {{"dve", 2400}}}});
  const double ratio = double(fast.simulated_ps) / double(base.simulated_ps);
  EXPECT_GT(ratio, 0.45) << fast.simulated_ps << " / " << base.simulated_ps;
  EXPECT_LT(ratio, 0.55) << fast.simulated_ps << " / " << base.simulated_ps;
  // The same work in cycles: only the clock changed.
  const double cyc = engine(fast, "dve").at("busy_cycles").get<double>() /
                     engine(base, "dve").at("busy_cycles").get<double>();
  EXPECT_NEAR(cyc, 1.0, 0.05);
}

TEST(TimingWhatIf, DoublingPoolCoresHalvesA128PartitionDequant) {
  const std::string dir = scratch_dir("whatif-pool-cores");
  const Outcome base = run(dir, "base", kDequant, json::object());
  const Outcome more = run(dir, "more", kDequant, json{{"pool_cores", 16}});
  // 150 + 8192 cycles -> 150 + 4096: each core now serves 8 partitions.
  const double ratio = double(more.simulated_ps) / double(base.simulated_ps);
  EXPECT_GT(ratio, 0.45) << more.simulated_ps << " / " << base.simulated_ps;
  EXPECT_LT(ratio, 0.55) << more.simulated_ps << " / " << base.simulated_ps;
}

TEST(TimingWhatIf, HalvingSbufBandwidthSlowsAMemoryBoundKernelOnly) {
  const std::string dir = scratch_dir("whatif-sbuf-bw");
  // Compute-bound at the defaults (64 B per partition lane per memory cycle):
  // half the bandwidth costs nothing.
  const Outcome cb = run(dir, "cb", kDequant, json::object());
  const Outcome cb_half = run(dir, "cb_half", kDequant, json{{"sbuf", {{"beat_cycles", 2}}}});
  EXPECT_EQ(cb_half.simulated_ps, cb.simulated_ps);
  EXPECT_EQ(engine(cb, "pool").at("memory_stall_cycles"), 0);
  // Memory-bound with 4 B beats: half the bandwidth takes about twice as long.
  const Outcome mb =
      run(dir, "mb", kDequant, json{{"sbuf", {{"beat_bytes", 4}, {"beat_cycles", 2}}}});
  const Outcome mb_half =
      run(dir, "mb_half", kDequant, json{{"sbuf", {{"beat_bytes", 4}, {"beat_cycles", 4}}}});
  EXPECT_GT(engine(mb, "pool").at("memory_stall_cycles").get<std::uint64_t>(), 0u);
  const double ratio = double(mb_half.simulated_ps) / double(mb.simulated_ps);
  EXPECT_GT(ratio, 1.6) << mb_half.simulated_ps << " / " << mb.simulated_ps;
  EXPECT_LT(ratio, 2.1) << mb_half.simulated_ps << " / " << mb.simulated_ps;
}

// Three engines' streams ordered by semaphores: POOL -> DVE -> POOL, with the
// DVE also racing POOL for quadrant 0 under a narrow, contended SBUF.
const char* kThreeStreams = R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[512, 1, 1]) \
    dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[1024, 1, 1]) update=inc(sem1)
tensor_dequantize fmt=int4_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[64, 1, 1]) \
    dst=t3d(sbuf(0, 0x5000), step=[1, 0, 0], num=[128, 1, 1])
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x8000), step=[1, 0, 0], num=[256, 1, 1]) \
    dst=t3d(sbuf(0, 0x9000), step=[1, 0, 0], num=[512, 1, 1]) wait=ge(sem2, 1)
.engine dve
quantize_mx channels=32 in_dtype=fp16 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[2048, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x10000), scale=sbuf(0, 0x18000), num=512) wait=ge(sem1, 1) \
    update=inc(sem2)
quantize_mx channels=32 in_dtype=bf16 out_dtype=fp8_e5m2 \
    src=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[1024, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x20000), scale=sbuf(0, 0x28000), num=256)
)";

TEST(TimingWhatIf, TheQuantumDoesNotChangeAnyTime) {
  const std::string dir = scratch_dir("whatif-quantum");
  const json narrow = {{"sbuf", {{"beat_bytes", 8}, {"contention_window_cycles", 64}}}};
  json fine = narrow, coarse = narrow;
  fine["quantum_ns"] = 1;        // about one cycle
  coarse["quantum_ns"] = 10000;  // 10 us
  const Outcome a = run(dir, "fine", kThreeStreams, fine);
  const Outcome b = run(dir, "coarse", kThreeStreams, coarse);
  EXPECT_EQ(a.simulated_ps, b.simulated_ps);
  EXPECT_EQ(a.retire, b.retire);  // every instruction retires at the same time
  EXPECT_EQ(std::count(a.retire.begin(), a.retire.end(), '\n'), 5);
  // Semaphore and memory stalls are reported per engine.
  EXPECT_GT(engine(a, "pool").at("stall_cycles").get<std::uint64_t>(), 0u);
  EXPECT_GT(engine(a, "dve").at("stall_cycles").get<std::uint64_t>(), 0u);
  EXPECT_TRUE(engine(a, "dve").contains("memory_stall_cycles"));
  EXPECT_EQ(engine(a, "dve").at("memory_stall_cycles"), engine(b, "dve").at("memory_stall_cycles"));
}

// Profile values at the top of their range never wrap simulated time: the
// run faults at 2^62 ps naming the cause, and retire times never go back.
TEST(TimingLimits, HugeCycleCountsFaultInsteadOfWrapping) {
  const std::string dir = scratch_dir("limits-huge");
  const std::string prog = dir + "/p.tpb", timing = dir + "/t.json";
  std::ofstream(prog) << R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[16, 1, 1]) \
    dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[32, 1, 1])
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4096, 1, 1]) \
    dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[8192, 1, 1])
)";
  std::ofstream(timing) << json{{"clocks_mhz", {{"pool", 1}}},
                                {"instruction_overhead_cycles", 4294967295u},
                                {"bundle_issue_cycles", {{"pool.decode.widen_loop", 4294967295u}}}}
                               .dump();
  const ToolResult r = run_tool("run " + prog + " -q --timing " + timing + " --retire " + dir +
                                "/r.txt --stats " + dir + "/s.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("simulated time reached"), std::string::npos) << r.err;
  // The first instruction (about 2^32 x 33 cycles at 1 MHz) retired before it.
  const std::string retire = read_text(dir + "/r.txt");
  EXPECT_EQ(std::count(retire.begin(), retire.end(), '\n'), 1) << retire;
  const json s = json::parse(read_text(dir + "/s.json"));
  EXPECT_GE(s.at("simulated_ps").get<std::uint64_t>(), std::stoull(retire));
}

TEST(TimingLimits, AContentionWindowShorterThanABeatIsRefused) {
  const std::string dir = scratch_dir("limits-window");
  std::ofstream(dir + "/t.json")
      << R"({"sbuf": {"beat_cycles": 4294967295, "contention_window_cycles": 1}})";
  const ToolResult r = run_tool("run " + source_path("traces/workloads/pipeline/program.tpb") +
                                " -q --timing " + dir + "/t.json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("'sbuf.contention_window_cycles'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shorter than one beat"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tpb::e2e

// Bandwidth contention between engines (SPEC §8) as an architect uses it: the
// same program, POOL and DVE streaming from SBUF quadrant 0 at the same time
// with no semaphore between them, run with contention off and on through
// `--timing`. With it on, the engines share the quadrant's beats and the run
// takes longer; a program using one engine alone is not slowed down.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using nlohmann::json;

// POOL: E2M1 group 0, 32 partitions x 4096 words from quadrant 0.
// DVE: QuantizeMX of 32 partitions x 4096 FP32 elements, also from quadrant 0.
const char* kBoth = R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4096, 1, 1]) \
    dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[8192, 1, 1])
.engine dve
quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x20000), step=[1, 0, 0], num=[4096, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x30000), scale=sbuf(0, 0x38000), num=1024, step=1, scale_pidx=0)
)";

const char* kPoolAlone = R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4096, 1, 1]) \
    dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[8192, 1, 1])
)";

// Simulated time and per-engine busy cycles of one run.
struct Timing {
  std::uint64_t simulated_ps = 0;
  std::uint64_t pool_busy = 0, dve_busy = 0;
};

Timing run_windowed(const std::string& dir, const char* program, unsigned window_cycles) {
  const std::string prog = dir + "/prog.tpb", timing = dir + "/timing.json",
                    stats = dir + "/stats.json";
  std::ofstream(prog) << program;
  // A narrow SBUF (4 B beats of 2 memory cycles per partition) makes both
  // kernels memory-bound, so bandwidth shared between them shows in time.
  std::ofstream(timing) << json{
      {"sbuf",
       {{"contention_window_cycles", window_cycles},
        {"beat_bytes", 4},
        {"beat_cycles", 2}}}}.dump();
  const ToolResult r = run_tool("run " + prog + " --timing " + timing + " --stats " + stats);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json s = json::parse(read_text(stats));
  Timing t;
  t.simulated_ps = s.at("simulated_ps").get<std::uint64_t>();
  for (const auto& e : s.at("engines")) {
    if (e.at("name") == "pool") t.pool_busy = e.at("busy_cycles").get<std::uint64_t>();
    if (e.at("name") == "dve") t.dve_busy = e.at("busy_cycles").get<std::uint64_t>();
  }
  return t;
}

TEST(RunContention, TwoEnginesOnOneQuadrantSlowEachOtherDown) {
  const std::string dir = scratch_dir("contention");
  const Timing off = run_windowed(dir, kBoth, 0);
  const Timing on = run_windowed(dir, kBoth, 64);
  EXPECT_GT(on.simulated_ps, off.simulated_ps);
  // The engine that runs second in each window waits for the other's beats.
  EXPECT_GT(on.pool_busy + on.dve_busy, off.pool_busy + off.dve_busy);
}

TEST(RunContention, OneEngineAloneIsNotSlowedDown) {
  const std::string dir = scratch_dir("contention-alone");
  const Timing off = run_windowed(dir, kPoolAlone, 0);
  const Timing on = run_windowed(dir, kPoolAlone, 64);
  EXPECT_EQ(on.simulated_ps, off.simulated_ps);
  EXPECT_EQ(on.pool_busy, off.pool_busy);
}

TEST(RunContention, TheEffectiveProfileShowsTheWindow) {
  const std::string dir = scratch_dir("contention-profile");
  std::ofstream(dir + "/t.json") << R"({"psum": {"contention_window_cycles": 32}})";
  const ToolResult r =
      run_tool("run " + source_path("traces/workloads/demo/program.tpb") + " -q --timing " + dir +
               "/t.json --dump-timing " + dir + "/eff.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json eff = json::parse(read_text(dir + "/eff.json"));
  EXPECT_EQ(eff.at("psum").at("contention_window_cycles"), 32);
  EXPECT_EQ(eff.at("sbuf").at("contention_window_cycles"), 0);
}

// A bundle override that names no bundle is an error naming the file and the
// key, before anything runs (exit 1); a real name is taken.
TEST(RunTiming, AMisspeltBundleNameIsRefusedWithTheKeyAndFile) {
  const std::string dir = scratch_dir("timing-bundle-name");
  const std::string prog = source_path("traces/workloads/demo/program.tpb");
  std::ofstream(dir + "/bad.json") << R"({"bundle_issue_cycles": {"pool.mx8.lop": 9}})";
  const ToolResult bad =
      run_tool("run " + prog + " -q --timing " + dir + "/bad.json --stats " + dir + "/s.json");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find(dir + "/bad.json"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("'bundle_issue_cycles.pool.mx8.lop'"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("unknown bundle"), std::string::npos) << bad.err;
  std::ofstream(dir + "/good.json") << R"({"bundle_issue_cycles": {"pool.mx8.loop": 9}})";
  const ToolResult good = run_tool("run " + prog + " -q --timing " + dir + "/good.json");
  EXPECT_EQ(good.exit_code, 0) << good.err;
}

}  // namespace
}  // namespace tpb::e2e

// Stats JSON: every agreed key, values, file round trip through Python.
#include <gtest/gtest.h>

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "models/trace/stats_writer.h"
#include "sc_tests/unit/test_trace_util.h"

namespace tpb::trace {
namespace {

RunStats sample() {
  RunStats s;
  s.arch = "mariana";
  s.program = "traces/examples/dequant.tpb";
  s.simulated_ps = 1234500;
  s.wall_seconds = 0.25;
  s.status = "fault";
  s.message = "pool: instruction 3: tile fault";
  EngineStats pool;
  pool.name = "pool";
  pool.clock_mhz = 1200;
  pool.instructions = 4;
  pool.busy_cycles = 1000;
  pool.stall_cycles = 17;
  pool.memory_stall_cycles = 23;
  pool.fetch_stall_cycles = 29;
  pool.interlock_stall_cycles = 31;
  pool.bundles = {{"proc_4bit_mx_8", 64}, {"decode", 4}};
  pool.bytes_read = 4096;
  pool.bytes_written = 8192;
  s.engines.push_back(pool);
  s.memories.push_back({"sbuf.q0", 100, 200});
  s.memories.push_back({"psum", 0, 3});
  s.traces.push_back({"vcd", "run.vcd", 4096, 77});
  return s;
}

TEST(TraceStats, JsonHasEveryAgreedKey) {
  const nlohmann::json j = stats_to_json(sample());
  EXPECT_EQ(j.at("arch"), "mariana");
  EXPECT_EQ(j.at("program"), "traces/examples/dequant.tpb");
  EXPECT_EQ(j.at("status"), "fault");
  EXPECT_EQ(j.at("message"), "pool: instruction 3: tile fault");
  EXPECT_EQ(j.at("simulated_ps"), 1234500u);
  EXPECT_DOUBLE_EQ(j.at("simulated_ns").get<double>(), 1234.5);
  EXPECT_DOUBLE_EQ(j.at("wall_seconds").get<double>(), 0.25);
  ASSERT_EQ(j.at("engines").size(), 1u);
  const auto& e = j["engines"][0];
  EXPECT_EQ(e.size(), 12u);
  EXPECT_EQ(e.at("name"), "pool");
  EXPECT_DOUBLE_EQ(e.at("clock_mhz").get<double>(), 1200.0);
  EXPECT_EQ(e.at("instructions"), 4u);
  EXPECT_EQ(e.at("busy_cycles"), 1000u);
  EXPECT_EQ(e.at("stall_cycles"), 17u);
  EXPECT_EQ(e.at("memory_stall_cycles"), 23u);
  EXPECT_EQ(e.at("fetch_stall_cycles"), 29u);
  EXPECT_EQ(e.at("interlock_stall_cycles"), 31u);
  EXPECT_EQ(e.at("bundles"), nlohmann::json({{"proc_4bit_mx_8", 64}, {"decode", 4}}));
  EXPECT_EQ(e.at("bytes_read"), 4096u);
  EXPECT_EQ(e.at("bytes_written"), 8192u);
  ASSERT_EQ(j.at("memories").size(), 2u);
  EXPECT_EQ(j["memories"][1],
            nlohmann::json({{"name", "psum"}, {"bytes_read", 0}, {"bytes_written", 3}}));
  ASSERT_EQ(j.at("traces").size(), 1u);
  EXPECT_EQ(
      j["traces"][0],
      nlohmann::json({{"kind", "vcd"}, {"path", "run.vcd"}, {"bytes", 4096}, {"events", 77}}));
  EXPECT_EQ(j.at("mode"), "full");
  EXPECT_FALSE(j.contains("mode_note"));
  EXPECT_TRUE(j.contains("engine_active"));
  EXPECT_EQ(j.size(), 13u);
  RunStats t = sample();
  t.timing_only = true;
  const nlohmann::json k = stats_to_json(t);
  EXPECT_EQ(k.at("mode"), "timing-only");
  EXPECT_NE(k.at("mode_note").get<std::string>().find("no values computed"), std::string::npos);
  EXPECT_EQ(k.size(), 14u);
}

// "Engine active" as the profiler reports it: busy time over the run's own
// time (simulated_ps - start_ps), each compute engine, and the DMA's union.
TEST(TraceStats, EngineActiveIsBusyTimeOverTheRunsTime) {
  RunStats s = sample();  // pool: 1000 cycles at 1200 MHz, the run 1234.5 ns
  nlohmann::json a = engine_active(s);
  EXPECT_EQ(a.size(), 1u);
  EXPECT_DOUBLE_EQ(a.at("pool").get<double>(), (1000 / 1.2) / 1234.5);
  s.start_ps = 234500;  // a later run of the core: its own 1000 ns
  s.dma_active_ps["dma"] = 250000;
  EngineStats q;
  q.name = "dma3";  // a DMA queue is no engine of these figures
  q.clock_mhz = 1400;
  q.busy_cycles = 10;
  s.engines.push_back(q);
  EngineStats idle;
  idle.name = "core1.pe";  // a device's engines keep their prefix
  idle.clock_mhz = 2400;
  s.engines.push_back(idle);
  a = engine_active(s);
  EXPECT_EQ(a.size(), 3u);
  EXPECT_DOUBLE_EQ(a.at("pool").get<double>(), (1000 / 1.2) / 1000.0);
  EXPECT_DOUBLE_EQ(a.at("dma").get<double>(), 0.25);
  EXPECT_EQ(a.at("core1.pe").get<double>(), 0.0);
  EXPECT_FALSE(a.contains("dma3"));
  // Never above 1 (busy cycles are whole cycles), and 0 for an empty run.
  s.engines[0].busy_cycles = 5000;
  EXPECT_EQ(engine_active(s).at("pool").get<double>(), 1.0);
  s.start_ps = s.simulated_ps;
  EXPECT_EQ(engine_active(s).at("dma").get<double>(), 0.0);
  EXPECT_EQ(stats_to_json(s).at("engine_active"), engine_active(s));
}

TEST(TraceStats, CosimSectionHasTotalsAndEveryBlockKind) {
  RunStats s = sample();
  EXPECT_FALSE(stats_to_json(s).contains("cosim"));  // a run without --cosim
  s.cosim.enabled = true;
  CosimBlockStats dq;
  dq.kind = "dequant";
  dq.dut = "tpb_dequant";
  dq.clock_mhz = 1200;
  dq.instructions = 2;
  dq.words_compared = 512;
  dq.mismatches = 3;
  dq.source_words = 256;
  dq.rtl_cycles = 40;
  dq.max_latency_cycles = 2;
  dq.stretched_ps = 700;
  dq.stretched_instructions = 1;
  CosimBlockStats q;
  q.kind = "quantize_mx";
  q.dut = "tpb_quantize_mx";
  q.clock_mhz = 960;
  q.instructions = 1;
  q.counts_blocks = true;  // its comparisons are blocks of words
  q.blocks_compared = 16;
  q.words_compared = 128;
  q.mismatches = 2;
  q.stretched_ps = 50;
  s.cosim.blocks = {dq, q};
  const nlohmann::json c = stats_to_json(s).at("cosim");
  EXPECT_EQ(c.at("words_compared"), 640u);
  EXPECT_EQ(c.at("mismatches"), 5u);
  EXPECT_EQ(c.at("stretched_ps"), 750u);
  EXPECT_EQ(c.size(), 4u);
  const nlohmann::json& d = c.at("blocks").at("dequant");
  EXPECT_EQ(d, nlohmann::json({{"dut", "tpb_dequant"},
                               {"clock_mhz", 1200.0},
                               {"instructions", 2},
                               {"words_compared", 512},
                               {"mismatches", 3},
                               {"source_words", 256},
                               {"rtl_cycles", 40},
                               {"max_latency_cycles", 2},
                               {"stretched_ps", 700},
                               {"stretched_instructions", 1}}));
  const nlohmann::json& m = c.at("blocks").at("quantize_mx");
  EXPECT_EQ(m.at("blocks_compared"), 16u);
  EXPECT_EQ(m.at("words_compared"), 128u);
  EXPECT_DOUBLE_EQ(m.at("clock_mhz").get<double>(), 960.0);
  EXPECT_EQ(m.size(), 11u);
}

TEST(TraceStats, EmptyRunHasEmptyArrays) {
  const nlohmann::json j = stats_to_json(RunStats{});
  EXPECT_TRUE(j.at("engines").is_array());
  EXPECT_TRUE(j.at("engines").empty());
  EXPECT_TRUE(j.at("memories").is_array());
  EXPECT_EQ(j.at("status"), "ok");
  EXPECT_EQ(j.at("simulated_ns"), 0.0);
  // An engine without bundles still has an object, not null.
  RunStats s;
  s.engines.push_back(EngineStats{});
  EXPECT_TRUE(stats_to_json(s)["engines"][0].at("bundles").is_object());
}

TEST(TraceStats, FileIsReadByPython) {
  ASSERT_EQ(::access("/usr/bin/python3", X_OK), 0)
      << "/usr/bin/python3 is missing: run `make` (scripts/install-deps.sh installs it)";
  const std::string dir = testutil::scratch("stats");
  write_stats(sample(), dir + "/s.json");
  const auto r = testutil::run_cmd(
      "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
      "e=d[\"engines\"][0]; print(d[\"simulated_ns\"], e[\"bundles\"][\"proc_4bit_mx_8\"], "
      "d[\"memories\"][0][\"name\"])' " +
      dir + "/s.json");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "1234.5 64 sbuf.q0\n");
}

TEST(TraceStats, UnwritablePathThrowsNamingIt) {
  const std::string path = "/nonexistent-tpbsim-dir/s.json";
  try {
    write_stats(sample(), path);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpb::trace

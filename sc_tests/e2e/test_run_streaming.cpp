// Exploration at scale, as a user runs it: programs longer than a queue
// stream through the rings; traces are cut by engine, window and level and
// their sizes reported; after a fault nothing is recorded past its time on
// any engine (retire, VCD, Perfetto and stats agree).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using nlohmann::json;

// One small POOL instruction: 4 FP4 words of partition 0 -> 8 FP8 words.
const char* kSmall =
    "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
    "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
    "dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[8, 1, 1])";

std::string write_program(const std::string& dir, std::size_t n, const std::string& extra = "") {
  const std::string path = dir + "/p.tpb";
  std::ofstream f(path);
  f << ".arch mariana\n.engine pool\n";
  for (std::size_t i = 0; i < n; ++i) f << kSmall << "\n";
  f << extra;
  return path;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

std::uint64_t file_size(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// VCD: the $var references by scope path, and every #time.
struct Vcd {
  std::vector<std::string> vars;  // "scope.scope.name"
  std::vector<std::uint64_t> times;
  std::string dumpvars_time;
};
Vcd read_vcd(const std::string& path) {
  Vcd v;
  const std::string text = read_text(path);
  for (const VcdVar& x : vcd_var_list(text)) v.vars.push_back(x.path);
  std::string prev;
  for (const std::string& l : lines(text.substr(text.find("$enddefinitions")))) {
    std::istringstream in(l);
    std::string tok;
    in >> tok;
    if (tok[0] == '#') v.times.push_back(std::stoull(tok.substr(1)));
    if (tok == "$dumpvars") v.dumpvars_time = prev;
    prev = tok;
  }
  return v;
}

bool has_var(const Vcd& v, const std::string& name) {
  for (const auto& s : v.vars)
    if (s == name) return true;
  return false;
}

// 20000 instructions: more than the 16384 words of a queue's ring.
TEST(RunStreaming, AProgramLongerThanTheQueueRunsWhole) {
  const std::string d = scratch_dir("stream-long");
  const std::string prog = write_program(d, 20000);
  const ToolResult r =
      run_tool("run " + prog + " --retire " + d + "/r.txt --stats " + d + "/s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rt = read_retire_lines(d + "/r.txt");
  ASSERT_EQ(rt.size(), 20000u);
  for (std::size_t i = 0; i < rt.size(); ++i) {
    ASSERT_EQ(rt[i].index, i);
    if (i > 0) {
      ASSERT_GT(rt[i].end_ps, rt[i - 1].end_ps) << "instruction " << i;
    }
  }
  // Every instruction takes the same time: the ring refills out of sight
  // (fetch at 38 GB/s far outruns 150-cycle instructions).
  const std::uint64_t step = rt[1].end_ps - rt[0].end_ps;
  EXPECT_EQ(rt[16384].end_ps - rt[16383].end_ps, step);
  EXPECT_EQ(rt[19999].end_ps - rt[19998].end_ps, step);
  const json s = json::parse(read_text(d + "/s.json"));
  EXPECT_EQ(s["engines"][0]["instructions"], 20000u);
  EXPECT_EQ(s["engines"][0]["fetch_stall_cycles"], 0u);
}

// Assembling streams too: the binary holds every word, in order.
TEST(RunStreaming, AsmOfALongProgramWritesEveryWord) {
  const std::string d = scratch_dir("stream-asm");
  const std::string prog = write_program(d, 17000);
  const ToolResult r = run_tool("asm " + prog + " -o " + d + "/p.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file_size(d + "/p.bin"), 17000u * 64);
  const ToolResult one =
      run_tool("asm " + write_program(scratch_dir("stream-asm1"), 1) + " -o " + d + "/one.bin");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string all = read_text(d + "/p.bin"), w = read_text(d + "/one.bin");
  ASSERT_EQ(w.size(), 64u);
  EXPECT_EQ(all.substr(0, 64), w);
  EXPECT_EQ(all.substr(16999 * 64, 64), w);
  // check streams too: every word, in file order, and the .arch wherever it is.
  const ToolResult c = run_tool("check " + prog);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("p.tpb:17002: pool[16999] tensor_dequantize: ok"), std::string::npos);
  EXPECT_NE(c.out.find("17000 instruction(s) checked for mariana: 17000 ok, 0 invalid"),
            std::string::npos)
      << c.out.substr(c.out.size() > 300 ? c.out.size() - 300 : 0);
  const std::string late = d + "/late.tpb";
  std::ofstream(late) << ".engine pool\n" << kSmall << "\n.arch sunda\n";
  const ToolResult l = run_tool("check " + late);
  EXPECT_NE(l.out.find("checked for sunda"), std::string::npos) << l.out;
  // A syntax error far down is named with its line.
  const std::string bad = write_program(d, 5000, "tensor_dequantize fmt=nope\n");
  const ToolResult e = run_tool("asm " + bad + " -o " + d + "/bad.bin");
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.err.find("p.tpb:5003:"), std::string::npos) << e.err;
}

// A ring of 8 refilled 2 words at a time gives the same run as the default
// ring when the fetch is fast; a slow fetch shows as fetch stalls.
TEST(RunStreaming, ASmallRingChangesNothingButSlowFetchStalls) {
  const std::string d = scratch_dir("stream-ring");
  const std::string prog = write_program(d, 64);
  std::ofstream(d + "/small.json")
      << R"({"instruction_fetch": {"ring_words": 8, "batch_words": 2, "latency_ns": 0,
             "mbytes_per_s": 1000000}})";
  std::ofstream(d + "/slow.json")
      << R"({"instruction_fetch": {"ring_words": 8, "batch_words": 8, "latency_ns": 5000}})";
  const ToolResult a =
      run_tool("run " + prog + " --retire " + d + "/a.txt --stats " + d + "/a.json");
  const ToolResult b = run_tool("run " + prog + " --timing " + d + "/small.json --retire " + d +
                                "/b.txt --stats " + d + "/b.json");
  const ToolResult c = run_tool("run " + prog + " --timing " + d + "/slow.json --retire " + d +
                                "/c.txt --stats " + d + "/c.json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(read_text(d + "/a.txt"), read_text(d + "/b.txt"));
  const json sc = json::parse(read_text(d + "/c.json"));
  const json sa = json::parse(read_text(d + "/a.json"));
  // 64 words through a ring of 8: 7 refills, each waited for about its 5 us
  // latency (less the instructions already in the ring).
  const std::uint64_t stall = sc["engines"][0]["fetch_stall_cycles"];
  const double per_refill_us = static_cast<double>(stall) / 1200.0 / 7;
  EXPECT_GT(per_refill_us, 5.0 - 8 * 0.16) << stall;
  EXPECT_LT(per_refill_us, 5.0 + 0.1) << stall;
  // The stalls are the whole difference in simulated time (to a cycle each).
  const double extra_ns = sc["simulated_ns"].get<double>() - sa["simulated_ns"].get<double>();
  EXPECT_NEAR(extra_ns, static_cast<double>(stall) / 1.2, 7.0);
  // The same instructions; busy (an instruction in flight) no less: the
  // stalls end the overlap of an instruction's tail with the next (SPEC §8).
  EXPECT_EQ(sc["engines"][0]["instructions"], sa["engines"][0]["instructions"]);
  EXPECT_GE(sc["engines"][0]["busy_cycles"], sa["engines"][0]["busy_cycles"]);
}

// Two engines: POOL's stream, and DVE waiting on POOL's semaphore.
const char* kTwo = R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[128, 1, 1]) update=inc(sem1)
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[128, 1, 1])
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[128, 1, 1])
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[128, 1, 1])
.engine dve
quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 src=t3d(sbuf(0, 0x20000), step=[1, 0, 0], num=[256, 1, 1]) dst=mx1d(data=sbuf(0, 0x30000), scale=sbuf(0, 0x38000), num=64, step=1, scale_pidx=0) wait=ge(sem1, 1)
quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 src=t3d(sbuf(0, 0x20000), step=[1, 0, 0], num=[256, 1, 1]) dst=mx1d(data=sbuf(0, 0x30000), scale=sbuf(0, 0x38000), num=64, step=1, scale_pidx=0)
)";

TEST(RunStreaming, TraceEnginesWindowAndLevelCutWhatIsWritten) {
  const std::string d = scratch_dir("stream-cut");
  std::ofstream(d + "/p.tpb") << kTwo;
  const std::string p = d + "/p.tpb";
  // Whole run, bundle level: both engines, bundles and the pc.
  ToolResult r = run_tool("run " + p + " --trace-level bundle --vcd " + d + "/all.vcd --perfetto " +
                          d + "/all.json --stats " + d + "/all.s.json --retire " + d + "/r.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd all = read_vcd(d + "/all.vcd");
  EXPECT_TRUE(has_var(all, "tpb.pool.pc"));
  EXPECT_TRUE(has_var(all, "tpb.dve.busy"));
  const json pall = json::parse(read_text(d + "/all.json"));
  std::map<std::string, int> tid_of;
  for (const auto& e : pall["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") tid_of[e["args"]["name"]] = e["tid"];
  ASSERT_TRUE(tid_of.count("pool") && tid_of.count("dve"));
  // The stats list each trace with its size on disk.
  const json st = json::parse(read_text(d + "/all.s.json"));
  ASSERT_EQ(st["traces"].size(), 2u);
  EXPECT_EQ(st["traces"][0]["kind"], "vcd");
  EXPECT_EQ(st["traces"][0]["bytes"], file_size(d + "/all.vcd"));
  EXPECT_EQ(st["traces"][1]["kind"], "perfetto");
  EXPECT_EQ(st["traces"][1]["bytes"], file_size(d + "/all.json"));
  std::size_t slices = 0;
  for (const auto& e : pall["traceEvents"]) slices += e["ph"] != "M";
  EXPECT_EQ(st["traces"][1]["events"], slices);

  // --trace-engines pool: no DVE signals, no DVE thread.
  r = run_tool("run " + p + " --trace-engines pool --vcd " + d + "/pool.vcd --perfetto " + d +
               "/pool.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd pv = read_vcd(d + "/pool.vcd");
  EXPECT_TRUE(has_var(pv, "tpb.pool.busy"));
  EXPECT_FALSE(has_var(pv, "tpb.dve.busy"));
  EXPECT_TRUE(has_var(pv, "tpb.sem.sem1"));  // shared state stays
  const json pp = json::parse(read_text(d + "/pool.json"));
  // POOL's track and its lanes (overlapping instructions, SPEC §8).
  std::set<int> pool_tids;
  for (const auto& e : pp["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      const std::string name = e["args"]["name"];
      EXPECT_EQ(name.rfind("dve", 0), std::string::npos) << name;
      if (name.rfind("pool", 0) == 0) pool_tids.insert(e["tid"].get<int>());
    }
  }
  for (const auto& e : pp["traceEvents"])
    if (e["ph"] == "X") {
      EXPECT_TRUE(pool_tids.count(e["tid"].get<int>())) << e.dump();
    }

  // --trace-level instr: one slice per retired instruction, no bundles, no pc.
  r = run_tool("run " + p + " --trace-level instr --vcd " + d + "/i.vcd --perfetto " + d +
               "/i.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json pi = json::parse(read_text(d + "/i.json"));
  std::size_t x = 0;
  for (const auto& e : pi["traceEvents"])
    if (e["ph"] == "X") {
      ++x;
      EXPECT_TRUE(e["name"] == "tensor_dequantize" || e["name"] == "quantize_mx") << e.dump();
    }
  EXPECT_EQ(x, lines(read_text(d + "/r.txt")).size());
  const std::string ivcd = read_text(d + "/i.vcd");
  const Vcd iv = read_vcd(d + "/i.vcd");
  ASSERT_TRUE(has_var(iv, "tpb.pool.pc"));
  EXPECT_LT(ivcd.size(), read_text(d + "/all.vcd").size());

  // --trace-window: the second POOL instruction's span only.
  const auto rt = read_retire_lines(d + "/r.txt");
  std::vector<std::uint64_t> pool_end;
  for (const auto& x2 : rt)
    if (x2.engine == "pool") pool_end.push_back(x2.end_ps);
  ASSERT_GE(pool_end.size(), 3u);
  const std::uint64_t t0 = pool_end[0], t1 = pool_end[1];
  r = run_tool("run " + p + " --trace-window " + std::to_string(t0) + "ps:" + std::to_string(t1) +
               "ps --vcd " + d + "/w.vcd --perfetto " + d + "/w.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd wv = read_vcd(d + "/w.vcd");
  EXPECT_EQ(wv.dumpvars_time, "#" + std::to_string(t0));
  for (std::uint64_t t : wv.times) {
    EXPECT_GE(t, t0);
    EXPECT_LE(t, t1);
  }
  const json pw = json::parse(read_text(d + "/w.json"));
  std::size_t in_window = 0;
  for (const auto& e : pw["traceEvents"]) {
    if (e["ph"] == "M") continue;
    const double ts = e["ts"].get<double>() * 1e6, end = ts + e.value("dur", 0.0) * 1e6;
    EXPECT_GE(ts + 0.5, static_cast<double>(t0)) << e.dump();
    EXPECT_LE(end - 0.5, static_cast<double>(t1)) << e.dump();
    ++in_window;
  }
  EXPECT_GT(in_window, 0u);

  // Bad values are errors naming the option.
  r = run_tool("run " + p + " --trace-engines pool,gpu --vcd " + d + "/x.vcd");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--trace-engines: 'gpu'"), std::string::npos) << r.err;
  r = run_tool("run " + p + " --trace-window 5us:2us --vcd " + d + "/x.vcd");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the start is after the end"), std::string::npos) << r.err;
  r = run_tool("run " + p + " --trace-window 2parsecs: --vcd " + d + "/x.vcd");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--trace-window: '2parsecs'"), std::string::npos) << r.err;
  r = run_tool("run " + p + " --trace-level everything");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--trace-level 'everything'"), std::string::npos) << r.err;
}

// POOL runs a long stream; DVE waits for POOL's first instruction and then
// faults (an opcode its kernel_info table does not have). POOL runs
// decoupled, ahead of the fault: nothing it did after the fault's time may
// show in the retire lines, the traces or the stats.
TEST(RunStreaming, AfterAFaultNothingIsRecordedPastItsTimeOnAnyEngine) {
  const std::string d = scratch_dir("stream-fault");
  std::string prog = ".arch mariana\n.engine pool\n";
  prog += std::string(kSmall) + " update=inc(sem1)\n";
  for (int i = 0; i < 40; ++i) prog += std::string(kSmall) + "\n";
  prog += ".engine dve\n" + std::string(kSmall) + " wait=ge(sem1, 1)\n";
  std::ofstream(d + "/p.tpb") << prog;
  const ToolResult r =
      run_tool("run " + d + "/p.tpb --vcd " + d + "/v.vcd --perfetto " + d + "/p.json --stats " +
               d + "/s.json --retire " + d + "/r.txt --trace-level bundle");
  ASSERT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("dve instruction 0"), std::string::npos) << r.err;
  const json s = json::parse(read_text(d + "/s.json"));
  const std::uint64_t fault_ps = s["simulated_ps"];
  const auto rt = read_retire_lines(d + "/r.txt");
  std::map<std::string, std::uint64_t> retired;
  for (const auto& x : rt) {
    EXPECT_LE(x.end_ps, fault_ps) << x.engine << " " << x.index;
    ++retired[x.engine];
  }
  // POOL's first instruction retired before DVE could start.
  EXPECT_GE(retired["pool"], 1u);
  for (const auto& e : s["engines"]) {
    const std::string name = e["name"];
    EXPECT_EQ(e["instructions"].get<std::uint64_t>(), retired[name]) << name;
    // Busy never exceeds the run (cycles of the fault's time at the engine clock).
    EXPECT_LE(e["busy_cycles"].get<double>(),
              static_cast<double>(fault_ps) * e["clock_mhz"].get<double>() / 1e6 + 1)
        << name;
  }
  // The faulting engine waited for POOL's semaphore, then faulted at the
  // dispatch of its first instruction: nothing of it was in flight.
  EXPECT_GT(s["engines"][1]["stall_cycles"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(s["engines"][1]["busy_cycles"].get<std::uint64_t>(), 0u);
  const Vcd v = read_vcd(d + "/v.vcd");
  ASSERT_FALSE(v.times.empty());
  for (std::uint64_t t : v.times) EXPECT_LE(t, fault_ps);
  EXPECT_EQ(v.times.back(), fault_ps);
  const json p = json::parse(read_text(d + "/p.json"));
  std::size_t pool_top = 0;
  for (const auto& e : p["traceEvents"]) {
    if (e["ph"] == "M") continue;
    const double end_us = e["ts"].get<double>() + e.value("dur", 0.0);
    EXPECT_LE(end_us, static_cast<double>(fault_ps) / 1e6 + 1e-9) << e.dump();
    if (e["ph"] == "X" && e["name"] == "tensor_dequantize" && e["tid"] == 1 &&
        !e["args"].contains("unterminated"))
      ++pool_top;
  }
  EXPECT_EQ(pool_top, retired["pool"]);
}

}  // namespace
}  // namespace tpb::e2e

// Bad input and the watchdogs (docs/BAD_INPUT.md): every class of bad input
// the catalogue lists that no other e2e test covers gets a clear message and
// its exit code here; the watchdogs end a run cleanly with every output
// complete up to the stop time; a deadlock names every engine's pending
// instruction, wait condition and semaphore value.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/sanitizer.h"
#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using json = nlohmann::json;

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}

// The exit code of a shell command line that runs the tool with its own
// redirections (stdout to a full device ...).
int shell_exit(const std::string& args) {
  const int status = std::system((std::string(TPBSIM_BIN) + " " + args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// POOL and DVE, n instructions each; with one_ms_profile every instruction
// costs 1 ms of fixed overhead (1.2e6 cycles at 1200 MHz).
std::string long_program(const std::string& dir, int n) {
  std::string p = ".arch mariana\n.engine pool\n";
  for (int i = 0; i < n; ++i)
    p += "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=4 "
         "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) "
         "dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[128, 1, 1])\n";
  p += ".engine dve\n";
  for (int i = 0; i < n; ++i)
    p += "quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 "
         "src=t3d(sbuf(0, 0x8000), step=[1, 0, 0], num=[64, 1, 1]) "
         "dst=mx1d(data=sbuf(0, 0x9000), scale=sbuf(0, 0xa000), num=16, step=1, scale_pidx=0)\n";
  return write(dir, "long.tpb", p);
}

std::string one_ms_profile(const std::string& dir) {
  return write(dir, "t.json",
               R"({"instruction_overhead_cycles": {"pool": 1200000, "dve": 1200000}})");
}

// ---------------------------------------------------------------- watchdogs

// --max-sim-time T: exit 4, and every output is exactly what the unlimited
// run recorded up to T (the retire lines are its prefix), nothing after T.
TEST(Watchdog, MaxSimTimeStopsEveryEngineAtTheLimit) {
  const std::string d = scratch_dir("wd-sim");
  const std::string prog = long_program(d, 20), prof = one_ms_profile(d);
  const ToolResult full =
      run_tool("run " + prog + " -q --timing " + prof + " --retire " + d + "/full.txt");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const std::uint64_t limit = 10500000000;  // 10.5 ms
  const ToolResult r =
      run_tool("run " + prog + " --timing " + prof + " --max-sim-time 10500us" + " --retire " + d +
               "/r.txt --stats " + d + "/s.json --vcd " + d + "/w.vcd --perfetto " + d + "/p.json");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("watchdog: simulated time limit 10500000000 ps reached"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("tpbsim run: watchdog,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(": ok,"), std::string::npos) << r.out;

  std::vector<RetireLine> want;
  for (const RetireLine& x : read_retire_lines(d + "/full.txt"))
    if (x.end_ps <= limit) want.push_back(x);
  const std::vector<RetireLine> got = read_retire_lines(d + "/r.txt");
  ASSERT_EQ(got.size(), want.size());
  ASSERT_GE(got.size(), 20u);  // about 10 per engine: both ran to the limit
  ASSERT_LT(got.size(), 40u);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].end_ps, want[i].end_ps) << i;
    EXPECT_EQ(got[i].engine, want[i].engine) << i;
  }
  const json s = json::parse(read_text(d + "/s.json"));
  EXPECT_EQ(s.at("status"), "watchdog");
  EXPECT_EQ(s.at("simulated_ps").get<std::uint64_t>(), limit);
  // The VCD has no time past the limit; every Perfetto event is at or before it.
  const std::string vcd = read_text(d + "/w.vcd");
  std::uint64_t last = 0;
  for (std::size_t p = vcd.find("\n#"); p != std::string::npos; p = vcd.find("\n#", p + 1))
    last = std::max<std::uint64_t>(last, std::stoull(vcd.substr(p + 2)));
  EXPECT_GT(last, 0u);
  EXPECT_LE(last, limit);
  const json pf = json::parse(read_text(d + "/p.json"));
  std::size_t events = 0, unterminated = 0;
  for (const json& e : pf.at("traceEvents")) {
    if (!e.contains("ts")) continue;
    ++events;
    EXPECT_LE(e.at("ts").get<double>(), static_cast<double>(limit) / 1e6 + 1e-6) << e.dump();
    if (e.contains("args") && e.at("args").contains("unterminated")) ++unterminated;
  }
  EXPECT_GT(events, 0u);
  EXPECT_EQ(unterminated, 0u);  // open slices were closed at the stop time
}

// Units: 5ms, 5000us, 5000000ns and 5000000000 (ps) are one limit.
TEST(Watchdog, MaxSimTimeUnitsAreEquivalent) {
  const std::string d = scratch_dir("wd-units");
  const std::string prog = long_program(d, 8), prof = one_ms_profile(d);
  std::string first;
  for (const char* t : {"5ms", "5000us", "5000000ns", "5000000000", "5000000000ps"}) {
    const std::string out = d + "/r_" + t + ".txt";
    const ToolResult r = run_tool("run " + prog + " -q --timing " + prof + " --max-sim-time " + t +
                                  " --retire " + out);
    EXPECT_EQ(r.exit_code, 4) << t << ": " << r.err;
    const std::string text = read_text(out);
    EXPECT_FALSE(text.empty()) << t;
    if (first.empty()) first = text;
    EXPECT_EQ(text, first) << t;
  }
}

TEST(Watchdog, BadLimitsAreUsageErrors) {
  const std::string d = scratch_dir("wd-bad");
  const std::string prog = write(d, "p.tpb", ".arch mariana\n");
  const std::pair<std::string, std::string> cases[] = {
      {"--max-sim-time 10xs", "unit 'xs' is not ps, ns, us, ms or s"},
      {"--max-sim-time 0", "must be more than 0"},
      {"--max-sim-time -5ns", "is not a time"},
      {"--max-sim-time 1.5us", "unit '.5us'"},
      {"--max-sim-time 99999999s", "past the longest simulated time, 2^62 ps"},
      {"--max-sim-time 99999999999999999999999ps", "past the longest simulated time"},
      {"--max-wall-time abc", "is not a number of seconds"},
      {"--max-wall-time 0", "is not in (0, 1e9]"},
      {"--max-wall-time -1", "is not a number of seconds"},
      {"--max-wall-time inf", "is not a number of seconds"},
      {"--max-wall-time nan", "is not a number of seconds"},
  };
  for (const auto& [opt, msg] : cases) {
    const ToolResult r = run_tool("run " + prog + " " + opt);
    EXPECT_EQ(r.exit_code, 1) << opt << ": " << r.err;
    EXPECT_NE(r.err.find(msg), std::string::npos) << opt << ": " << r.err;
  }
  EXPECT_EQ(run_tool("run " + prog + " -q --max-sim-time 1s --max-wall-time 0.5").exit_code, 0);
}

// --max-wall-time S: a run longer than S seconds of host time ends cleanly,
// soon after S, exit 4, every output complete and consistent.
TEST(Watchdog, MaxWallTimeEndsALongRunCleanly) {
  const std::string d = scratch_dir("wd-wall");
  // 2000 dequants of 8 KiB over 32 channels with every SBUF byte a
  // contention beat: a minute or more of host time, tens of instructions a
  // second (fewer under the sanitizers).
  std::string p = ".arch mariana\n.engine pool\n";
  for (int i = 0; i < 2000; ++i)
    p += "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 "
         "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[2048, 1, 1]) "
         "dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[4096, 1, 1])\n";
  const std::string prog = write(d, "p.tpb", p);
  const std::string prof =
      write(d, "t.json",
            R"({"sbuf": {"beat_bytes": 1, "beat_cycles": 1, "contention_window_cycles": 1}})");
  const auto t0 = std::chrono::steady_clock::now();
  const ToolResult r =
      run_tool("run " + prog + " --timing " + prof + " --max-wall-time 1 --retire " + d +
               "/r.txt --stats " + d + "/s.json --perfetto " + d + "/p.json");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("watchdog: wall time limit 1 s reached; stopped at"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pending: pool instruction"), std::string::npos) << r.err;
  EXPECT_LT(wall, 20.0);  // ended, not ran to completion
  const std::vector<RetireLine> got =
      read_retire_lines(d + "/r.txt");  // none, under a slow sanitizer
  EXPECT_LT(got.size(), 2000u);
  const json s = json::parse(read_text(d + "/s.json"));
  EXPECT_EQ(s.at("status"), "watchdog");
  // The stop time is the latest time anything was recorded (an instruction's
  // start or bundle at or after the last retire); nothing lies after it.
  const std::uint64_t stop = s.at("simulated_ps").get<std::uint64_t>();
  if (!got.empty()) {
    EXPECT_GE(stop, got.back().end_ps);
  }
  EXPECT_NE(r.err.find("stopped at " + std::to_string(stop) + " ps"), std::string::npos) << r.err;
  const json pf = json::parse(read_text(d + "/p.json"));  // whole JSON
  for (const json& e : pf.at("traceEvents")) {
    if (!e.contains("ts")) continue;
    EXPECT_LE(e.at("ts").get<double>(), static_cast<double>(stop) / 1e6 + 1e-6) << e.dump();
  }
}

// ----------------------------------------------------------------- deadlock

// A deadlock names every blocked engine (POOL, DVE, PE, SFU): its pending
// instruction with opcode and mnemonic, the wait condition and the value of
// the semaphore it waits on.
TEST(Deadlock, ReportNamesEveryEnginesPendingInstructionAndSemaphore) {
  const std::string d = scratch_dir("dl-all");
  const std::string prog = write(d, "p.tpb", R"(.arch mariana
.reg sfu r1 = 0x3ebd70a4
.reg sfu r2 = -7
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) \
    dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[8, 1, 1]) update=inc(sem9)
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) \
    dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[8, 1, 1]) wait=ge(sem9, 2)
.engine dve
quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16, step=1, scale_pidx=0) \
    wait=eq(sem6, 3)
.engine pe
ldweights_mx in_dtype=fp8_e4m3 rows=128 cols=32 row_grp=0xf col_grp=0xf \
    src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=32, step=1) wait=eq(sem7, 1)
BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=24; B.DIM LB1=8; B.DIM LB2=32; B.IOR r1, r2; B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP wait=ge(sem8, 1)
)");
  const ToolResult r = run_tool("run " + prog + " --stats " + d + "/s.json");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  for (const std::string want :
       {"tpbsim run: deadlock: ",
        "pool instruction 1 waits for sem[9] >= 2 (sem[9] = 1): opcode 0x7b tensor_dequantize",
        "dve instruction 0 waits for sem[6] == 3 (sem[6] = 0): opcode 0xe3 quantize_mx",
        "pe instruction 0 waits for sem[7] == 1 (sem[7] = 0): opcode 0x09 ldweights_mx",
        "sfu instruction 0 waits for sem[8] >= 1 (sem[8] = 0): opcode "})
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;
  EXPECT_EQ(json::parse(read_text(d + "/s.json")).at("status"), "deadlock");
}

// Semaphores are u32 (SPEC §2): a decrement at 0 wraps to 2^32 - 1, which a
// wait sees; no fault (docs/BAD_INPUT.md).
TEST(Semaphores, ADecrementAtZeroWrapsAsU32) {
  const std::string d = scratch_dir("sem-wrap");
  const std::string dq =
      "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
      "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
      "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[8, 1, 1])";
  const std::string prog = write(d, "p.tpb",
                                 ".arch mariana\n.engine pool\n" + dq + " update=dec(sem3)\n" + dq +
                                     " wait=eq(sem3, 4294967295)\n");
  const ToolResult r = run_tool("run " + prog + " --retire " + d + "/r.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_retire_lines(d + "/r.txt").size(), 2u);
}

// ----------------------------------------------------------- timing profile

std::string pool_program(const std::string& dir) {
  return write(dir, "pool.tpb", R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=128 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[256, 1, 1]) \
    dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[512, 1, 1])
)");
}

// Every profile value is checked for type and range, the message naming the
// key (and the file).
TEST(TimingProfile, BadValuesNameTheKey) {
  const std::string d = scratch_dir("tp-bad");
  const std::string prog = pool_program(d);
  const std::pair<std::string, std::string> cases[] = {
      {R"({"clocks_mhz": {"pool": -1}})", "key 'clocks_mhz.pool': expected a non-negative integer"},
      {R"({"clocks_mhz": {"pool": 1.5}})",
       "key 'clocks_mhz.pool': expected a non-negative integer"},
      {R"({"clocks_mhz": {"pool": "fast"}})", "key 'clocks_mhz.pool': expected a non-negative"},
      {R"({"clocks_mhz": {"pool": 0}})", "key 'clocks_mhz.pool': must not be 0"},
      {R"({"clocks_mhz": {"pool": 4294967296}})",
       "key 'clocks_mhz.pool': value 4294967296 does not fit in 32 bits"},
      {R"({"clocks_mhz": {"pool": 1e30}})",
       "key 'clocks_mhz.pool': expected a non-negative integer"},
      {R"({"clocks_mhz": {"tpu": 1}})",
       "key 'clocks_mhz.tpu': unknown key (pool, dve, pe, sfu, act)"},
      {R"({"memory_clock_mhz": 0})", "key 'memory_clock_mhz': must not be 0"},
      {R"({"sbuf": {"beat_bytes": 0}})", "key 'sbuf.beat_bytes': must not be 0"},
      {R"({"psum": {"banks": 65}})", "key 'psum.banks': at most 64 banks"},
      {R"({"sbuf_bytes_per_partition": 262145})", "key 'sbuf_bytes_per_partition': at most 262144"},
      {R"({"pe_mx_row_pump": {"oct_row": 0}})", "key 'pe_mx_row_pump.oct_row': must not be 0"},
      {R"({"quantum_ns": 0})", "key 'quantum_ns': must not be 0"},
      {R"({"bundle_issue_cycles": {"pool.nope": 3}})",
       "key 'bundle_issue_cycles.pool.nope': unknown bundle"},
      {R"({"arch": "sunda"})", "key 'arch': profile is for 'sunda' but the run is for 'mariana'"},
      {R"({"speed": 1})", "key 'speed': unknown key"},
      {R"([1, 2])", "key '(top level)': expected an object"},
      {R"({"sbuf": )", "not valid JSON"},
      // Totals that would overflow: one access of a partition past 2^40 ps.
      {R"({"sbuf": {"beat_cycles": 4294967295}})",
       "key 'sbuf.beat_cycles': one access of a whole partition"},
      {R"({"memory_clock_mhz": 1, "psum": {"latency_cycles": 4294967295}})",
       "key 'psum.latency_cycles': one access"},
      {R"({"memory_clock_mhz": 1, "queue": {"beat_cycles": 5000}})", "key 'queue.beat_cycles'"},
  };
  for (const auto& [profile, msg] : cases) {
    const std::string t = write(d, "t.json", profile);
    const ToolResult r = run_tool("run " + prog + " -q --timing " + t);
    EXPECT_EQ(r.exit_code, 1) << profile << ": " << r.err;
    EXPECT_NE(r.err.find(t + ": "), std::string::npos) << profile << ": " << r.err;
    EXPECT_NE(r.err.find(msg), std::string::npos) << profile << ": " << r.err;
  }
}

// JSON nested a million deep overflowed the JSON library's stack (SIGSEGV):
// refused before parsing, naming the file and the byte ({ is level 1, the
// 32nd [ at byte 12 + 31 is level 33).
TEST(TimingProfile, DeeplyNestedJsonIsRefusedNotACrash) {
  const std::string d = scratch_dir("tp-deep");
  const std::string t = write(
      d, "t.json", "{\"sources\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}");
  const ToolResult r = run_tool("run " + pool_program(d) + " -q --timing " + t);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(t + ": not a timing profile: JSON nested deeper than 32 levels at byte 43"),
            std::string::npos)
      << r.err;
  // Brackets inside strings do not count.
  const std::string ok =
      write(d, "ok.json", R"({"sources": {"x": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}})");
  EXPECT_EQ(run_tool("run " + pool_program(d) + " -q --timing " + ok).exit_code, 0);
}

// pool_cores at the top of its range: a 32-bit sum used to wrap to a zero
// divisor (SIGFPE). Any count of cores at or above 128 serves one partition
// per core, so the time equals pool_cores = 128's.
TEST(TimingProfile, HugePoolCoresServeOnePartitionPerCore) {
  const std::string d = scratch_dir("tp-cores");
  const std::string prog = pool_program(d);
  std::string text[2];
  int i = 0;
  for (const char* cores : {"128", "4294967295"}) {
    const std::string t = write(d, std::string("t") + cores + ".json",
                                std::string(R"({"pool_cores": )") + cores + "}");
    const std::string out = d + "/r" + cores + ".txt";
    const ToolResult r = run_tool("run " + prog + " -q --timing " + t + " --retire " + out);
    EXPECT_EQ(r.exit_code, 0) << cores << ": " << r.err;
    text[i++] = read_text(out);
  }
  EXPECT_FALSE(text[0].empty());
  EXPECT_EQ(text[0], text[1]);
}

// ------------------------------------------------------- run-time operands

// Shape registers whose product wraps 2^64 (2^31 x 2^31 x 4 = 0 in 64 bits,
// for src and dst alike, so the element counts agree) are a fault naming the
// registers, not a walk of 2^64 elements into an empty buffer (SIGSEGV).
TEST(RunFaults, ShapeRegistersWhoseProductWrapsFault) {
  const std::string d = scratch_dir("rf-shape");
  const std::string prog = write(d, "p.tpb", R"(.arch mariana
.reg pool r1 = 0x80000000
.reg pool r2 = 0x80000000
.reg pool r3 = 4
.reg pool r5 = 0x80000000
.reg pool r6 = 0x80000000
.reg pool r7 = 4
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 \
    src=t3d(shape_reg(sbuf(0, 0x0)), step=[0, 0, 0], num=[4, 1, 1]) \
    dst=t3d(shape_reg(sbuf(0, 0x104)), step=[1, 0, 0], num=[8, 1, 1])
)");
  const ToolResult r = run_tool("run " + prog);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("pool instruction 0 (opcode 0x7b tensor_dequantize): src operand: shape "
                       "from registers r1..r3 = 2147483648x2147483648x4 exceeds one partition"),
            std::string::npos)
      << r.err;
}

// Every access stays inside its partition's capacity on every generation.
// An engine's access: a register address 16 bytes before the end of
// CAYMAN's 224 KiB with a 64-byte operand is an address error there, and
// fine on MARIANA, whose partitions hold 256 KiB. A load or dump (SUNDA has
// no modelled engine instruction): 48 bytes past SUNDA's 192 KiB, refused.
TEST(RunFaults, AnAccessPastAGenerationsCapacityIsRefused) {
  const std::string d = scratch_dir("rf-cap");
  const std::string prog = write(d, "cayman.tpb", R"(.arch cayman
.reg pool r5 = 0x37ff0
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 \
    src=t3d(reg(r5), step=[1, 0, 0], num=[16, 1, 1]) \
    dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[32, 1, 1])
)");
  const ToolResult r = run_tool("run " + prog);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("pool instruction 0 (opcode 0x7b tensor_dequantize): address error: read "
                       "of 64 bytes at 0x0037ff0 (sbuf partition 0 offset 0x37ff0)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(run_tool("run " + prog + " -q --arch mariana").exit_code, 0);

  const std::string sunda = write(d, "sunda.tpb", ".arch sunda\n");
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 64), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::ofstream(d + "/row.npy", std::ios::binary)
      << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xFF) << char(header.size() >> 8)
      << header << std::string(64, '\1');
  const ToolResult l = run_tool("run " + sunda + " -q --load sbuf:0:0x2fff0=" + d + "/row.npy");
  EXPECT_EQ(l.exit_code, 1) << l.err;
  EXPECT_NE(l.err.find("a row of 64 bytes from offset 0x2fff0 runs 48 bytes past the end of the "
                       "partition (196608 bytes)"),
            std::string::npos)
      << l.err;
  EXPECT_EQ(run_tool("run " + sunda + " -q --arch mariana --load sbuf:0:0x2fff0=" + d + "/row.npy")
                .exit_code,
            0);
}

// --------------------------------------------------------------------- .npy

// A zero dimension makes an array empty whatever the others are: not an
// overflow. (0, 2^64-1) loads nothing; (2^64-1, 2^64-1) is refused at once.
TEST(NpyInput, AZeroDimensionIsEmptyAndAHugeShapeIsRefused) {
  const std::string d = scratch_dir("npy-zero");
  const std::string prog = write(d, "p.tpb", ".arch mariana\n");
  auto npy = [&](const std::string& name, const std::string& shape) {
    std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': " + shape + ", }";
    header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
    std::ofstream out(d + "/" + name, std::ios::binary);
    out << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xFF)
        << char(header.size() >> 8) << header;
    return d + "/" + name;
  };
  const ToolResult z =
      run_tool("run " + prog + " -q --load sbuf:0:0=" + npy("z.npy", "(0, 18446744073709551615)"));
  EXPECT_EQ(z.exit_code, 0) << z.err;
  const ToolResult h = run_tool("run " + prog + " -q --load sbuf:0:0=" +
                                npy("h.npy", "(18446744073709551615, 18446744073709551615)"));
  EXPECT_EQ(h.exit_code, 1) << h.err;
  EXPECT_NE(h.err.find("h.npy: truncated data: shape (18446744073709551615, "
                       "18446744073709551615) of |u1 needs more bytes but the file holds 0"),
            std::string::npos)
      << h.err;
}

// -------------------------------------------------------------- CLI usage

TEST(Usage, UnknownCommandsOptionsAndValuesAreExit1) {
  const std::string d = scratch_dir("usage");
  const std::string prog = write(d, "p.tpb", ".arch mariana\n");
  const std::pair<std::string, std::string> cases[] = {
      {"frob", "tpbsim: unknown command 'frob'"},
      {"run " + prog + " --bogus", "tpbsim run: error: unrecognised option '--bogus'"},
      {"run " + prog + " --mx-emax foo",
       "tpbsim run: error: --mx-emax 'foo' is not ocp or neuron-alt"},
      {"run " + prog + " --arch x86",
       "tpbsim run: error: --arch 'x86' is not one of sunda cayman mariana maverick"},
      {"asm " + prog, "tpbsim asm: error: missing -o OUT.bin"},
      {"run " + prog + " --vcd ''", "tpbsim run: error: --vcd: empty path"},
      {"run " + prog + " --timing ''", "tpbsim run: error: --timing: empty path"},
  };
  for (const auto& [args, msg] : cases) {
    const ToolResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(msg), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out.find(": ok,"), std::string::npos) << args;
  }
  const ToolResult h = run_tool("run --help");
  EXPECT_EQ(h.exit_code, 0);
  for (const char* want : {"--max-sim-time", "--max-wall-time", "4 watchdog", "3 deadlock"})
    EXPECT_NE(h.out.find(want), std::string::npos) << want;
  // The tool's own usage names every exit code a command of it returns.
  const ToolResult top = run_tool("--help");
  EXPECT_EQ(top.exit_code, 0);
  for (const char* want : {"1 usage or file error", "2 fault", "3 deadlock", "4 watchdog",
                           "5 race found", "128+N stopped by signal N"})
    EXPECT_NE(top.out.find(want), std::string::npos) << want << "\n" << top.out;
}

const char* const kGoodLine =
    ".arch mariana\ntensor_dequantize fmt=e2m1_to_e5m2 channels=32 "
    "src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])\n";

// The exit code, stdout and stderr of a bash script with $T the tool.
ToolResult bash(const std::string& script) {
  const std::string d = scratch_dir("bash");
  write(d, "s.sh", script);
  const std::string cmd = "T=" + std::string(TPBSIM_BIN) + " bash " + d + "/s.sh >" + d +
                          "/out 2>" + d + "/err </dev/null";
  const int status = std::system(cmd.c_str());
  ToolResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(d + "/out");
  r.err = read_text(d + "/err");
  return r;
}

// ------------------------------------------------------------ program text

// Every number of program text is range-checked: FILE:LINE:COL, exit 1.
TEST(ProgramText, NumbersOutOfRangeNameLineAndColumn) {
  const std::string d = scratch_dir("text-range");
  const std::string dq =
      "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
      "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
      "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[8, 1, 1])";
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = dq;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::pair<std::string, std::string> cases[] = {
      {with("num=[4", "num=[70000"),
       "p.tpb:3:98: error: value 70000 out of range for t3d num (u16: 0..65535)"},
      {with("step=[1", "step=[-40000"),
       "p.tpb:3:83: error: value -40000 out of range for t3d step (i16: -32768..32767)"},
      {with("sbuf(0, 0x0)", "sbuf(200, 0x0)"),
       "p.tpb:3:68: error: value 200 out of range for sbuf partition (7 bits: 0..127)"},
      {with("sbuf(0, 0x0)", "sbuf(0, 0x40000)"),
       "p.tpb:3:71: error: value 262144 out of range for sbuf offset (18 bits: 0..262143)"},
      {with("group=0", "group=99999999999999999999"),
       "p.tpb:3:42: error: number '99999999999999999999' is too large"},
      {dq + " wait=eq(sem1, 4294967296)",
       "error: value 4294967296 out of range for the wait value (u32: 0..4294967295)"},
      {"BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=70000; B.IOT T1, mask=1111, "
       "<last>, ->T0<1>; BSTOP",
       "p.tpb:3:59: error: LB0 70000 is out of range [0, 65535]"},
  };
  for (const auto& [line, msg] : cases) {
    const std::string p = write(d, "p.tpb", ".arch mariana\n.engine pool\n" + line + "\n");
    for (const char* cmd : {"run ", "check ", "asm "}) {
      const ToolResult r = run_tool(cmd + p + (cmd[0] == 'a' ? " -o " + d + "/p.bin" : ""));
      EXPECT_EQ(r.exit_code, 1) << cmd << line << ": " << r.err;
      EXPECT_NE(r.err.find(msg), std::string::npos) << cmd << line << ": " << r.err;
    }
  }
  EXPECT_FALSE(std::ifstream(d + "/p.bin").good());
}

// A line past 16 MiB (a file that is no program, or a runaway generator) is
// an error at its line, also under a memory limit (it used to say "read
// error": the line's allocation failed inside the stream).
TEST(ProgramText, AnOverlongLineSaysSoEvenUnderAMemoryLimit) {
  const std::string d = scratch_dir("text-long");
  const std::string p = d + "/long.tpb";
  {
    std::ofstream out(p, std::ios::binary);
    out << ".arch mariana\n";
    const std::string chunk(1 << 20, 'a');
    for (int i = 0; i < 20; ++i) out << chunk;
    out << "\n";
  }
  const std::string msg =
      p +
      ":2:1: error: line is longer than 16777216 bytes, the most one line of program text "
      "may hold";
  for (const std::string cmd : {"check PROG", "run PROG", "asm PROG -o /dev/null", "disasm PROG"}) {
    std::string c = cmd;
    c.replace(c.find("PROG"), 4, p);
    const ToolResult r = run_tool(c);
    EXPECT_EQ(r.exit_code, 1) << c;
    EXPECT_NE(r.err.find(msg), std::string::npos) << c << ": " << r.err.substr(0, 300);
    EXPECT_LT(r.err.size(), 400u);
  }
  if (kAddressSanitizer) GTEST_SKIP() << "ulimit -v and AddressSanitizer's shadow memory conflict";
  // The smallest address-space limit (KiB) under which a tiny program checks.
  const std::string tiny = write(d, "t.tpb", ".arch mariana\n");
  long base = 0;
  for (long kib = 16384; kib <= (4l << 20); kib += kib / 4)
    if (bash("ulimit -v " + std::to_string(kib) + "; $T check " + tiny + "\n").exit_code == 0) {
      base = kib;
      break;
    }
  ASSERT_GT(base, 0);
  // With room for the line: the line's length is the error.
  ToolResult r = bash("ulimit -v " + std::to_string(base + 65536) + "; $T check " + p + "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(msg), std::string::npos) << r.err.substr(0, 300);
  // With 4 MiB to spare: memory runs out first, and the message says so.
  r = bash("ulimit -v " + std::to_string(base + 4096) + "; $T check " + p + "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("read error"), std::string::npos) << r.err.substr(0, 300);
  EXPECT_TRUE(r.err.find(p + ":2:1: error: out of memory after reading ") != std::string::npos ||
              r.err.find(msg) != std::string::npos)
      << r.err.substr(0, 300);
}

// A token of a megabyte is cut to a bounded excerpt that names its length;
// the position stays FILE:LINE:COL.
TEST(ProgramText, AHugeTokenIsEchoedAsABoundedExcerpt) {
  const std::string d = scratch_dir("text-token");
  const std::string mb(1 << 20, 'A');
  const std::string digits(1 << 20, '7');
  const std::pair<std::string, std::string> cases[] = {
      {mb + " x=1",
       "p.tpb:2:1: error: unknown mnemonic 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA...(1048576 "
       "bytes)...AAAAAAAA'"},
      {"tensor_dequantize " + mb + "=1",
       "p.tpb:2:19: error: unknown field 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA...(1048576 "
       "bytes)...AAAAAAAA' for tensor_dequantize"},
      {"tensor_dequantize fmt=" + digits,
       "p.tpb:2:23: error: number '77777777777777777777777777777777...(1048576 bytes)...77777777' "
       "is too large"},
      {"BSTART.SFU TQUANT, " + mb + "; BSTOP",
       "p.tpb:2:20: error: unknown BSTART DataType 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA...(1048576 "
       "bytes)...AAAAAAAA'"},
  };
  for (const auto& [line, msg] : cases) {
    const std::string p = write(d, "p.tpb", ".arch mariana\n" + line + "\n");
    for (const char* cmd : {"check ", "asm ", "run "}) {
      const ToolResult r = run_tool(cmd + p + (cmd[0] == 'a' ? " -o /dev/null" : ""));
      EXPECT_EQ(r.exit_code, 1) << cmd;
      EXPECT_NE(r.err.find(msg), std::string::npos) << cmd << ": " << r.err.substr(0, 400);
      EXPECT_LT(r.err.size(), 600u) << cmd;
    }
  }
}

// File names and tokens with newlines, tabs or terminal escape characters
// are printed escaped (\n, \t, \x1b, \xc2\x9b), never raw.
TEST(ProgramText, ControlCharactersInNamesAndTokensAreEscaped) {
  const std::string d = scratch_dir("text-esc");
  const std::string name = "a\nb\tc\x1b[31m.tpb";
  const std::string shown = d + "/a\\nb\\tc\\x1b[31m.tpb";
  write(d, name, ".arch mariana\n.engine npu\n");
  auto clean = [](const std::string& err) {
    for (std::size_t i = 0; i + 1 < err.size(); ++i)  // only the final newline is raw
      if (static_cast<unsigned char>(err[i]) < 0x20) return false;
    return err.find('\x1b') == std::string::npos && err.find("\xc2\x9b") == std::string::npos;
  };
  // quoted for bash: $'...' with the escapes spelled out
  const std::string q = "$'" + d + "/a\\nb\\tc\\x1b[31m.tpb'";
  for (const std::string cmd : {"check", "run", "asm", "disasm"}) {
    const ToolResult r = bash("$T " + cmd + " " + q + (cmd == "asm" ? " -o /dev/null" : "") + "\n");
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find(shown + ":2:9: error: unknown engine 'npu'"), std::string::npos)
        << cmd << ": " << r.err;
    EXPECT_TRUE(clean(r.err)) << cmd << ": " << r.err;
    // a missing file of such a name
    const ToolResult m = bash("$T " + cmd + " $'/nonexistent/x\\x1by\\n.tpb'" +
                              (cmd == "asm" ? " -o /dev/null" : "") + "\n");
    EXPECT_EQ(m.exit_code, 1) << cmd;
    EXPECT_NE(m.err.find("/nonexistent/x\\x1by\\n.tpb: cannot open: no such file"),
              std::string::npos)
        << cmd << ": " << m.err;
    EXPECT_TRUE(clean(m.err)) << cmd << ": " << m.err;
  }
  // a C1 control (U+009B, CSI) in a token: valid UTF-8, escaped byte by byte
  const std::string p = write(d, "c1.tpb",
                              ".arch mariana\n.engine \xc2\x9b"
                              "2J\n");
  const ToolResult r = run_tool("check " + p);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(p + ":2:9: error: unexpected character '\\xc2\\x9b'"), std::string::npos)
      << r.err;
  EXPECT_TRUE(clean(r.err)) << r.err;
  // the report lines of check name the program escaped too
  const std::string ok = write(d, "ok\x1b.tpb", kGoodLine);
  const ToolResult c = run_tool("check " + ok);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find(d + "/ok\\x1b.tpb: 1 instruction(s) checked"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find('\x1b'), std::string::npos);
}

// A symlink loop or an over-long path as the PROGRAM names the real reason.
TEST(Inputs, SymlinkLoopsAndOverlongPathsSayWhy) {
  const std::string d = scratch_dir("in-why");
  ASSERT_EQ(symlink("loop", (d + "/loop").c_str()), 0);
  ASSERT_EQ(symlink("missing.tpb", (d + "/dangling.tpb").c_str()), 0);
  const std::string long_name = d + "/" + std::string(300, 'n') + ".tpb";
  std::string long_path = d;
  while (long_path.size() < 5000) long_path += "/dddddddddddddddddddd";
  long_path += "/p.tpb";
  const std::pair<std::string, std::string> cases[] = {
      {d + "/loop", d + "/loop: cannot open: too many levels of symbolic links (a symlink loop?)"},
      {long_name, ": cannot open: file name too long (" + std::to_string(long_name.size()) +
                      " bytes; a name is at most 255, a path at most 4096)"},
      {long_path, ": cannot open: file name too long (" + std::to_string(long_path.size()) +
                      " bytes; a name is at most 255, a path at most 4096)"},
      {d + "/dangling.tpb",
       d + "/dangling.tpb: cannot open: no such file (a symbolic link to a missing file)"},
  };
  for (const auto& [path, msg] : cases)
    for (const char* cmd : {"check ", "run ", "asm ", "disasm "}) {
      const ToolResult r = run_tool(cmd + path + (cmd[0] == 'a' ? " -o " + d + "/o.bin" : ""));
      EXPECT_EQ(r.exit_code, 1) << cmd << path.substr(0, 80);
      EXPECT_NE(r.err.find(msg), std::string::npos) << cmd << ": " << r.err.substr(0, 300);
    }
}

// ------------------------------------------------------------------- inputs

// An input that never ends (/dev/zero) is refused, never read without end:
// a program past 64 MiB, a timing profile past 16 MiB, a .npy at its magic.
TEST(Inputs, EndlessDevicesAreRefusedNotRead) {
  const std::string d = scratch_dir("in-endless");
  const std::string prog = write(d, "p.tpb", ".arch mariana\n");
  const std::pair<std::string, std::string> cases[] = {
      // run and asm stream a program of any length: files and pipes only.
      {"run /dev/zero", "/dev/zero: is a device, not a program file"},
      {"check /dev/zero", "/dev/zero: is a device, not a program file"},
      {"asm /dev/zero -o " + d + "/z.bin", "/dev/zero: is a device, not a program file"},
      {"run " + prog + " --timing /dev/zero",
       "/dev/zero: is larger than 16777216 bytes, the most a timing profile may hold"},
      {"run " + prog + " --load sbuf:0:0=/dev/zero", "/dev/zero: bad magic: not a NumPy .npy file"},
      {"run " + prog + " --load tile:0=/dev/zero", "/dev/zero: bad magic"},
  };
  for (const auto& [args, msg] : cases) {
    const ToolResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(msg), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(std::ifstream(d + "/z.bin").good());
  // An endless pipe of text is read no further than its first error.
  const ToolResult y = bash("yes | $T run /dev/stdin\n");
  EXPECT_EQ(y.exit_code, 1);
  EXPECT_NE(y.err.find("/dev/stdin:1:1: error: unknown mnemonic 'y'"), std::string::npos) << y.err;
}

// ------------------------------------------------------- --load / --dump

TEST(LoadDumpSpecs, EveryFieldIsCheckedBeforeTheRun) {
  const std::string d = scratch_dir("specs");
  const std::string prog = write(d, "p.tpb", ".arch mariana\n");
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2, 2), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::ofstream(d + "/cube.npy", std::ios::binary)
      << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xFF) << char(header.size() >> 8)
      << header << std::string(8, '\1');
  const std::pair<std::string, std::string> cases[] = {
      {"--load sbuf:128:0=" + d + "/cube.npy", "partition 128 does not exist (0..127)"},
      {"--load sbuf:0:0x40000=" + d + "/cube.npy",
       "offset 262144 is outside every partition (0..262143)"},
      {"--load tile:32=" + d + "/cube.npy", "tile 32 does not exist (T0..T31)"},
      {"--load tile:0:0=" + d + "/cube.npy", "physical Col 0 is not 1..65535"},
      {"--load sbuf:0:0=" + d + "/cube.npy", "/cube.npy is a 3-D array; expected 1-D or 2-D"},
      {"--load sbuf:0=" + d + "/cube.npy", "expected sbuf|psum:PARTITION:OFFSET=FILE.npy"},
      {"--dump sbuf:0:0:abcx4:u8=" + d + "/o.npy", "bad rows 'abc' in 'sbuf:0:0:abcx4:u8="},
      {"--dump sbuf:0:0:0x4:u8=" + d + "/o.npy", "empty shape"},
      {"--dump sbuf:0:-1:1x4:u8=" + d + "/o.npy", "bad offset '-1'"},
      {"--dump sram:0:0:1x4:u8=" + d + "/o.npy", "memory 'sram' is not one of sbuf, psum, hbm"},
  };
  for (const auto& [opt, msg] : cases) {
    const ToolResult r = run_tool("run " + prog + " -q " + opt);
    EXPECT_EQ(r.exit_code, 1) << opt << ": " << r.err;
    EXPECT_NE(r.err.find(msg), std::string::npos) << opt << ": " << r.err;
  }
  EXPECT_FALSE(std::ifstream(d + "/o.npy").good());
}

// ------------------------------------------------------------------ outputs

// A write that fails on a regular file (the file-size limit standing in for
// a full disk: EFBIG with SIGXFSZ ignored) is exit 1 naming the file; the
// file is not left half-written under its name or as a temporary, and the
// outputs that fit are written whole.
TEST(CliOutputs, AWriteErrorOnAStagedFileLeavesNothingHalfWritten) {
  const std::string d = scratch_dir("out-fsize");
  const std::string prog = source_path("traces/workloads/pipeline/program.tpb");
  const std::string limited = "sh -c \"trap '' XFSZ; ulimit -f 8; exec " + std::string(TPBSIM_BIN);
  auto run_limited = [&](const std::string& args, const std::string& tag) {
    const int status = std::system(
        (limited + " " + args + "\" >" + d + "/" + tag + ".out 2>" + d + "/" + tag + ".err")
            .c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  // The VCD of the pipeline is past 4 KiB; its retire lines are not.
  EXPECT_EQ(run_limited("run " + prog + " --vcd " + d + "/w.vcd --retire " + d + "/r.txt", "run"),
            1);
  const std::string err = read_text(d + "/run.err");
  EXPECT_NE(err.find("tpbsim run: error: VCD file '" + d +
                     "/w.vcd': write failed: " + std::strerror(EFBIG)),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("not written: " + d + "/w.vcd"), std::string::npos) << err;
  EXPECT_EQ(err.find("tpbsim-tmp"), std::string::npos) << err;  // the user's name, not ours
  EXPECT_FALSE(std::ifstream(d + "/w.vcd").good());
  EXPECT_FALSE(std::ifstream(d + "/w.vcd.tpbsim-tmp").good());
  EXPECT_EQ(read_text(d + "/r.txt"), [&] {
    const ToolResult ok = run_tool("run " + prog + " -q --retire " + d + "/r_ok.txt");
    EXPECT_EQ(ok.exit_code, 0);
    return read_text(d + "/r_ok.txt");
  }());
  EXPECT_EQ(read_text(d + "/run.out").find(": ok,"), std::string::npos);
  // asm -o of a binary past 4 KiB (100 words).
  std::string big = ".arch mariana\n.engine pool\n";
  for (int i = 0; i < 100; ++i)
    big +=
        "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
        "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
        "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[8, 1, 1])\n";
  const std::string bigp = write(d, "big.tpb", big);
  EXPECT_EQ(run_limited("asm " + bigp + " -o " + d + "/big.bin", "asm"), 1);
  EXPECT_NE(read_text(d + "/asm.err").find("cannot write " + d + "/big.bin"), std::string::npos)
      << read_text(d + "/asm.err");
  EXPECT_FALSE(std::ifstream(d + "/big.bin").good());
  EXPECT_FALSE(std::ifstream(d + "/big.bin.tpbsim-tmp").good());
}

// asm / disasm -o naming the input (by any spelling) is refused; the input
// is left as it was.
TEST(CliOutputs, AsmOutputNamingTheInputIsRefused) {
  const std::string d = scratch_dir("out-asm-in");
  const std::string text = ".arch mariana\n.engine pool\n";
  const std::string prog = write(d, "p.tpb", text);
  for (const std::string& o : {prog, d + "/./p.tpb"}) {
    const ToolResult a = run_tool("asm " + prog + " -o " + o);
    EXPECT_EQ(a.exit_code, 1) << a.err;
    EXPECT_NE(a.err.find("-o " + o + " names the input; nothing written"), std::string::npos)
        << a.err;
    const ToolResult s = run_tool("disasm " + prog + " -o " + o);
    EXPECT_EQ(s.exit_code, 1) << s.err;
    EXPECT_EQ(read_text(prog), text);
  }
}

// An output named through a symbolic link is written to the link's target;
// the link stays a link (a rename onto the link would have replaced it).
TEST(CliOutputs, AnOutputThroughASymlinkKeepsTheLink) {
  const std::string d = scratch_dir("out-link");
  const std::string prog = source_path("traces/workloads/pipeline/program.tpb");
  ASSERT_EQ(symlink((d + "/real_stats.json").c_str(), (d + "/stats.json").c_str()), 0);
  ASSERT_EQ(symlink((d + "/real.bin").c_str(), (d + "/link.bin").c_str()), 0);
  const ToolResult r = run_tool("run " + prog + " -q --stats " + d + "/stats.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ToolResult a = run_tool("asm " + prog + " -o " + d + "/link.bin");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  for (const char* link : {"/stats.json", "/link.bin"}) {
    struct stat st {};
    ASSERT_EQ(lstat((d + link).c_str(), &st), 0) << link;
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << link;
  }
  EXPECT_NE(read_text(d + "/real_stats.json").find("\"status\""), std::string::npos);
  EXPECT_EQ(read_text(d + "/real.bin").size() % 64, 0u);
  EXPECT_FALSE(read_text(d + "/real.bin").empty());
}

// Standard output to a full disk is exit 1 with a message, for every
// command that writes its result there.
TEST(CliOutputs, StdoutToAFullDiskIsAnError) {
  const std::string d = scratch_dir("out-stdout-full");
  EXPECT_EQ(shell_exit("disasm " + source_path("traces/examples/registers.tpb") + " >/dev/full 2>" +
                       d + "/e1"),
            1);
  EXPECT_NE(read_text(d + "/e1").find("tpbsim disasm: error: cannot write to stdout"),
            std::string::npos);
  EXPECT_EQ(shell_exit("convert fp32 bf16 1.5 >/dev/full 2>" + d + "/e2"), 1);
  EXPECT_NE(read_text(d + "/e2").find("tpbsim convert: error: cannot write to stdout"),
            std::string::npos);
  EXPECT_EQ(shell_exit("disasm " + source_path("traces/examples/registers.tpb") + " >" + d +
                       "/ok.tpb 2>/dev/null"),
            0);
}

}  // namespace
}  // namespace tpb::e2e

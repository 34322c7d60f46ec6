// `tpbsim run --racecheck` (SPEC §14) end to end: one deliberate race of
// each kind (RAW, WAR, WAW) between engines, an engine and a DMA queue, and
// two DMA queues, on SBUF, PSUM and HBM, each reported with the right pair
// and gone once a semaphore orders it; exit codes; the outputs; the same
// race under very different clocks (a sweep of two points); every example
// without a false positive.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sc_tests/e2e/tool_runner.h"

// A namespace of its own: the unity build compiles this file with others.
namespace racecheck_e2e {

using json = nlohmann::json;
using tpb::e2e::read_text;
using tpb::e2e::run_tool;
using tpb::e2e::scratch_dir;
using tpb::e2e::source_path;

// Program text pieces. Each names its sem (update / wait) through %U / %W,
// replaced by an update / wait or by nothing.
const char* kHead = ".arch mariana\n";

std::string dma(const std::string& q, const std::string& body, const std::string& ev = "") {
  return ".engine " + q + "\ndma_copy " + body + (ev.empty() ? "" : " " + ev) + "\n";
}
// POOL dequant: reads 80 words of partitions 0-31 at src, writes 128 at dst.
std::string pool_dequant(const std::string& src, const std::string& dst,
                         const std::string& ev = "") {
  return ".engine pool\ntensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=32 src=t3d(" + src +
         ", step=[1, 0, 0], num=[80, 1, 1]) dst=t3d(" + dst + ", step=[1, 0, 0], num=[128, 1, 1])" +
         (ev.empty() ? "" : " " + ev) + "\n";
}
// DVE tensor_copy of 128 FP32 words of partitions 0-31.
std::string dve_copy(const std::string& src, const std::string& dst, const std::string& ev = "") {
  return ".engine dve\ntensor_copy channels=32 in_dtype=fp32 out_dtype=fp32 src=t3d(" + src +
         ", step=[1, 0, 0], num=[128, 1, 1]) dst=t3d(" + dst +
         ", step=[1, 0, 0], num=[128, 1, 1])" + (ev.empty() ? "" : " " + ev) + "\n";
}
// PE: weights from SBUF, a matmul of 128 columns into PSUM partitions 0-31.
std::string pe_matmul(const std::string& ev = "") {
  return ".engine pe\nldweights_mx in_dtype=fp8_e4m3 rows=128 cols=32 row_grp=0xf col_grp=0xf "
         "src=mx1d(data=sbuf(0, 0x10000), scale=sbuf(0, 0x14000), num=32, step=1)\n"
         "matmul_mx in_dtype=fp8_e4m3 out_dtype=fp32 rows=128 acc=0 src=mx1d(data=sbuf(0, "
         "0x18000), "
         "scale=sbuf(0, 0x1c000), num=128, step=1) dst=t3d(psum(0, 0x0), step=[1, 0, 0], "
         "num=[128, 1, 1])" +
         (ev.empty() ? "" : " " + ev) + "\n";
}
const std::string kLoad0 = "rows=32 row_bytes=512 src=hbm(0x0, stride=512) dst=sbuf(0, 0x2000)";
const std::string kStore0 =
    "rows=32 row_bytes=512 src=sbuf(0, 0x2000) dst=hbm(0x40000, stride=512)";

struct Out {
  tpb::e2e::ToolResult r;
  std::vector<json> races;  // the --races file's lines
  json stats;
};

// Runs the program file `prog` with the check, its outputs in `dir`.
Out run_path(const std::string& prog, const std::string& dir, const std::string& extra = "") {
  Out o;
  o.r = run_tool("run " + prog + " --racecheck --races " + dir + "/races.jsonl --stats " + dir +
                 "/stats.json " + extra);
  std::istringstream in(read_text(dir + "/races.jsonl"));
  for (std::string line; std::getline(in, line);) o.races.push_back(json::parse(line));
  const std::string s = read_text(dir + "/stats.json");
  if (!s.empty()) o.stats = json::parse(s);
  return o;
}

Out run_prog(const std::string& name, const std::string& text, const std::string& extra = "") {
  const std::string dir = scratch_dir("race-" + name);
  const std::string prog = dir + "/" + name + ".tpb";
  std::ofstream(prog) << text;
  return run_path(prog, dir, extra);
}

// The first line after line `after` that holds `needle` (1-based; 0: none).
int line_of(const std::string& text, const std::string& needle, int after = 0) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (n > after && line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

// One instruction of a case: its engine, mnemonic and text, "{EV}" standing
// for its EVENTS (an update, a wait, or nothing).
struct Op {
  const char* engine;
  const char* mnemonic;
  std::string text;
};
std::string with_events(const Op& op, const std::string& ev) {
  std::string t = op.text;
  t.replace(t.find("{EV}"), 4, ev);
  return t;
}
const Op kPoolDq = {"pool", "tensor_dequantize",
                    pool_dequant("sbuf(0, 0x0)", "sbuf(0, 0x2000)", "{EV}")};  // reads 0x0
const Op kPoolDqTo4 = {"pool", "tensor_dequantize",
                       pool_dequant("sbuf(0, 0x0)", "sbuf(0, 0x4000)", "{EV}")};
const Op kDveFrom2 = {"dve", "tensor_copy", dve_copy("sbuf(0, 0x2000)", "sbuf(0, 0x4000)", "{EV}")};
const Op kDveTo2 = {"dve", "tensor_copy", dve_copy("sbuf(0, 0x4000)", "sbuf(0, 0x2000)", "{EV}")};
const Op kDveFromPsum = {"dve", "tensor_copy", dve_copy("psum(0, 0x0)", "sbuf(0, 0x4000)", "{EV}")};
const Op kDveToPsum = {"dve", "tensor_copy", dve_copy("sbuf(0, 0x4000)", "psum(0, 0x0)", "{EV}")};
const Op kPe = {"pe", "matmul_mx", pe_matmul("{EV}")};
const Op kDma0Load320 = {
    "dma0", "dma_copy",
    dma("dma0", "rows=32 row_bytes=320 src=hbm(0x0, stride=320) dst=sbuf(0, 0x0)", "{EV}")};
const Op kDma0Load = {"dma0", "dma_copy", dma("dma0", kLoad0, "{EV}")};
const Op kDma1Load = {"dma1", "dma_copy", dma("dma1", kLoad0, "{EV}")};
const Op kDma0Store = {"dma0", "dma_copy", dma("dma0", kStore0, "{EV}")};
const Op kDma1Store = {"dma1", "dma_copy", dma("dma1", kStore0, "{EV}")};
// Twice the bytes of dma0's store per DMA engine: it lands after the store
// (not at the same time, where the order the engines' threads run in would
// name the sides).
const Op kDma1LoadHbm = {
    "dma1", "dma_copy",
    dma("dma1", "rows=32 row_bytes=1024 src=hbm(0x40000, stride=1024) dst=sbuf(64, 0x0)", "{EV}")};
const Op kDma1StoreHbm = {
    "dma1", "dma_copy",
    dma("dma1", "rows=32 row_bytes=1024 src=sbuf(64, 0x0) dst=hbm(0x40000, stride=1024)", "{EV}")};

struct Case {
  const char* name;
  const char* kind;    // "RAW", "WAR", "WAW"
  const char* memory;  // "sbuf", "psum", "hbm"
  const Op* first;     // earlier in the text: updates sem1 when ordered
  const Op* second;    // ... waits for it
  // Unordered, `second` ran first (a DMA's latency, a faster engine): the
  // report names the sides in the order they ran, the kind mirrored.
  bool second_ran_first = false;
  // The program text, ordered (a semaphore between the two) or not.
  std::string text(bool ordered) const {
    return kHead + with_events(*first, ordered ? "update=inc(sem1)" : "") +
           with_events(*second, ordered ? "wait=ge(sem1, 1)" : "");
  }
};

// SBUF: every pairing; PSUM: engines only reach it; HBM: DMA queues only.
const Case kCases[] = {
    {"sbuf_engine_engine_raw", "RAW", "sbuf", &kPoolDq, &kDveFrom2},
    {"sbuf_engine_engine_war", "WAR", "sbuf", &kDveFrom2, &kPoolDq, true},
    {"sbuf_engine_engine_waw", "WAW", "sbuf", &kPoolDq, &kDveTo2},
    {"sbuf_engine_dma_raw", "RAW", "sbuf", &kDma0Load320, &kPoolDq, true},
    {"sbuf_engine_dma_war", "WAR", "sbuf", &kPoolDqTo4, &kDma0Load320},
    {"sbuf_engine_dma_waw", "WAW", "sbuf", &kPoolDq, &kDma0Load},
    {"sbuf_dma_dma_raw", "RAW", "sbuf", &kDma0Load, &kDma1Store},
    {"sbuf_dma_dma_war", "WAR", "sbuf", &kDma1Store, &kDma0Load, true},
    {"sbuf_dma_dma_waw", "WAW", "sbuf", &kDma0Load, &kDma1Load},
    {"psum_engine_engine_raw", "RAW", "psum", &kPe, &kDveFromPsum},
    {"psum_engine_engine_war", "WAR", "psum", &kDveFromPsum, &kPe, true},
    {"psum_engine_engine_waw", "WAW", "psum", &kPe, &kDveToPsum},
    {"hbm_dma_dma_raw", "RAW", "hbm", &kDma0Store, &kDma1LoadHbm},
    {"hbm_dma_dma_war", "WAR", "hbm", &kDma1LoadHbm, &kDma0Store, true},
    {"hbm_dma_dma_waw", "WAW", "hbm", &kDma0Store, &kDma1StoreHbm},
};

class RaceKind : public ::testing::TestWithParam<Case> {};

TEST_P(RaceKind, IsReportedWithBothSidesAndGoesWithASemaphore) {
  const Case& c = GetParam();
  const std::string racy = c.text(false);
  const Out o = run_prog(c.name, racy);
  SCOPED_TRACE(racy + "\nstderr: " + o.r.err);
  ASSERT_EQ(o.r.exit_code, 5);
  EXPECT_NE(o.r.out.find("tpbsim run: race, arch mariana"), std::string::npos) << o.r.out;
  EXPECT_NE(o.r.out.find(", 1 race\n"), std::string::npos) << o.r.out;
  ASSERT_EQ(o.races.size(), 1u);
  const json& r = o.races[0];
  // Named in the order they ran (issue 40): the kind of that order.
  const std::string kind = !c.second_ran_first            ? c.kind
                           : std::string(c.kind) == "RAW" ? "WAR"
                           : std::string(c.kind) == "WAR" ? "RAW"
                                                          : c.kind;
  EXPECT_EQ(r["kinds"], json::array({kind}));
  EXPECT_EQ(r["memory"], c.memory);
  // matmul_mx: the PE's second instruction, after its ldweights_mx.
  const int l1 = line_of(racy, c.first->mnemonic);
  const int l2 = line_of(racy, c.second->mnemonic, l1);
  const Op* ran_first = c.second_ran_first ? c.second : c.first;
  const Op* ran_second = c.second_ran_first ? c.first : c.second;
  EXPECT_EQ(r["first"]["engine"], ran_first->engine);
  EXPECT_EQ(r["first"]["mnemonic"], ran_first->mnemonic);
  EXPECT_EQ(r["first"]["line"], c.second_ran_first ? l2 : l1);
  EXPECT_EQ(r["first"]["index"], ran_first == &kPe ? 1 : 0);
  EXPECT_EQ(r["second"]["engine"], ran_second->engine);
  EXPECT_EQ(r["second"]["mnemonic"], ran_second->mnemonic);
  EXPECT_EQ(r["second"]["line"], c.second_ran_first ? l1 : l2);
  if (std::string(c.memory) != "hbm") {
    EXPECT_EQ(r["partitions"], json::array({0, 31}));
  }
  // stderr says the same, once; the stats hold the same object.
  const std::string msg = r["message"];
  EXPECT_EQ(msg.rfind(std::string("no semaphore orders ") + ran_second->engine + "[", 0), 0u)
      << msg;
  EXPECT_NE(o.r.err.find("tpbsim run: race: " + msg + "\n"), std::string::npos);
  EXPECT_EQ(o.stats["races"]["count"], 1);
  EXPECT_EQ(o.stats["races"]["races"][0], r);
  EXPECT_EQ(o.stats["status"], "ok");  // the run itself completed

  // Ordered by a semaphore: no race, exit 0, nothing more printed.
  const Out fixed = run_prog(std::string(c.name) + "_fixed", c.text(true));
  EXPECT_EQ(fixed.r.exit_code, 0) << fixed.r.err;
  EXPECT_TRUE(fixed.races.empty());
  EXPECT_EQ(fixed.r.err, "");
  EXPECT_EQ(fixed.stats["races"]["count"], 0);
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) { return i.param.name; }
INSTANTIATE_TEST_SUITE_P(All, RaceKind, ::testing::ValuesIn(kCases), case_name);

TEST(RaceCheck, TransfersOfOneQueueOnDifferentDmaEnginesRace) {
  // SPEC §14: a queue's store to HBM from partitions 0-7 and its later load
  // of the same bytes into partitions 64-71 (DMA engines 0 and 8).
  const std::string text =
      std::string(kHead) +
      ".engine dma0\n"
      "dma_copy rows=8 row_bytes=256 src=sbuf(0, 0x0) dst=hbm(0x0, stride=256)\n"
      "dma_copy rows=8 row_bytes=256 src=hbm(0x0, stride=256) dst=sbuf(64, 0x0)\n";
  const Out o = run_prog("same_queue", text);
  ASSERT_EQ(o.r.exit_code, 5) << o.r.err;
  ASSERT_EQ(o.races.size(), 1u);
  const std::string file = o.races[0]["first"]["file"];
  EXPECT_EQ(o.races[0]["message"],
            "dma0[1] dma_copy (" + file + ":4, DMA engine 8) is not ordered after dma0[0] " +
                "dma_copy (" + file +
                ":3, DMA engine 0): a DMA queue orders its transfers per DMA engine only, and no "
                "semaphore orders them: RAW on hbm bytes 0x0-0x7ff");
  // The same load into partitions 0-7 (DMA engine 0 again) is ordered.
  std::string same = text;
  same.replace(same.find("sbuf(64, 0x0)"), 13, "sbuf(0, 0x800)");
  EXPECT_EQ(run_prog("same_engine", same).r.exit_code, 0);
}

TEST(RaceCheck, ExitsTwoThreeAndFourTakePrecedence) {
  // POOL reads what dma0 loads (a race); dma0's completion then starts DVE,
  // whose instruction faults, or waits for a semaphore nothing sets.
  const std::string racy =
      std::string(kHead) +
      dma("dma0", "rows=32 row_bytes=320 src=hbm(0x0, stride=320) dst=sbuf(0, 0x0)",
          "update=inc(sem1)") +
      pool_dequant("sbuf(0, 0x0)", "sbuf(0, 0x2000)");
  const std::string dve =
      ".engine dve\ntensor_copy in_dtype=fp32 out_dtype=fp32 src=t3d(sbuf(0, "
      "0x100), step=[1, 0, 0], num=[1, 1, 1]) dst=t3d(sbuf(0, 0x200), step=[1, "
      "0, 0], num=[1, 1, 1]) ";
  const Out fault = run_prog("fault", racy + dve + "channels=200 wait=ge(sem1, 1)\n");
  EXPECT_EQ(fault.r.exit_code, 2) << fault.r.err;
  EXPECT_EQ(fault.stats["status"], "fault");
  EXPECT_EQ(fault.stats["races"]["count"], 1);  // found before the fault, still listed
  EXPECT_NE(fault.r.err.find("tpbsim run: race: "), std::string::npos) << fault.r.err;
  const Out deadlock = run_prog("deadlock", racy + dve + "channels=1 wait=ge(sem9, 1)\n");
  EXPECT_EQ(deadlock.r.exit_code, 3) << deadlock.r.err;
  EXPECT_EQ(deadlock.stats["races"]["count"], 1);
  EXPECT_EQ(run_prog("watchdog", racy, "--max-sim-time 300ns").r.exit_code, 4);
}

TEST(RaceCheck, TimingOnlyThreadsAndTracesFindTheSameRace) {
  const std::string dir = scratch_dir("race-variants");
  const std::string prog = dir + "/p.tpb";
  std::ofstream(prog) << kHead << dma("dma0", kLoad0) << dma("dma1", kStore0);
  const Out plain = run_path(prog, dir);
  ASSERT_EQ(plain.races.size(), 1u);
  for (const std::string& extra :
       {std::string("--timing-only"), std::string("--threads 1"),
        "--vcd " + dir + "/t.vcd --perfetto " + dir + "/t.json --retire " + dir + "/r.txt"}) {
    const Out o = run_path(prog, dir, extra);
    EXPECT_EQ(o.r.exit_code, 5) << extra << ": " << o.r.err;
    ASSERT_EQ(o.races.size(), 1u) << extra;
    EXPECT_EQ(o.races[0], plain.races[0]) << extra;
  }
}

TEST(RaceCheck, WithoutTheCheckNothingIsSaidAndRacesNeedIt) {
  const std::string dir = scratch_dir("race-off");
  const std::string prog = dir + "/p.tpb";
  std::ofstream(prog) << kHead << dma("dma0", kLoad0) << dma("dma1", kStore0);
  const auto off = run_tool("run " + prog + " --stats " + dir + "/s.json");
  EXPECT_EQ(off.exit_code, 0);
  EXPECT_FALSE(json::parse(read_text(dir + "/s.json")).contains("races"));
  const auto bad = run_tool("run " + prog + " --races " + dir + "/r.jsonl");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--races FILE needs --racecheck"), std::string::npos) << bad.err;
}

TEST(RaceCheck, AnEqWaitOrdersByWhatTheRunObservedAndTheReportSaysSo) {
  // dve waits sem1 == 1, which pool's update set; a third engine's race
  // is reported with the note that sem1's ordering holds for this timing.
  const std::string text =
      std::string(kHead) + pool_dequant("sbuf(0, 0x0)", "sbuf(0, 0x2000)", "update=inc(sem1)") +
      dve_copy("sbuf(0, 0x2000)", "sbuf(0, 0x4000)", "wait=eq(sem1, 1)") + dma("dma2", kLoad0);
  const Out o = run_prog("eq_wait", text);
  EXPECT_EQ(o.r.exit_code, 5) << o.r.err;
  ASSERT_EQ(o.races.size(), 2u);  // dma2 against pool and against dve; not pool / dve
  EXPECT_NE(o.r.err.find("note: sem[1] is waited on with == by dve[0]: the waits on it are "
                         "ordered by what this run observed, so this result holds for this timing "
                         "only"),
            std::string::npos)
      << o.r.err;
  EXPECT_EQ(o.stats["races"]["timing_dependent_semaphores"][0]["semaphore"], 1);
}

TEST(RaceCheck, TwoProducersAndAGe1WaitOrderAfterNeither) {
  // dma0 loads partitions 0-31, dma1 32-63, both incrementing sem3; POOL
  // reads 0-63 after ge(sem3, 1): either load may be the one it waited for.
  auto prog = [](int k) {
    return std::string(kHead) +
           dma("dma0", "rows=32 row_bytes=320 src=hbm(0x0, stride=320) dst=sbuf(0, 0x0)",
               "update=inc(sem3)") +
           dma("dma1", "rows=32 row_bytes=320 src=hbm(0x0, stride=320) dst=sbuf(32, 0x0)",
               "update=inc(sem3)") +
           ".engine pool\ntensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=64 "
           "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[80, 1, 1]) dst=t3d(sbuf(0, 0x2000), "
           "step=[1, 0, 0], num=[128, 1, 1]) wait=ge(sem3, " +
           std::to_string(k) + ")\n";
  };
  const Out one = run_prog("ge1", prog(1));
  EXPECT_EQ(one.r.exit_code, 5);
  ASSERT_EQ(one.races.size(), 2u);
  EXPECT_EQ(one.races[0]["first"]["engine"], "dma0");
  EXPECT_EQ(one.races[1]["first"]["engine"], "dma1");
  EXPECT_EQ(one.races[1]["partitions"], json::array({32, 63}));
  EXPECT_TRUE(one.stats["races"]["timing_dependent_semaphores"].empty());
  EXPECT_EQ(run_prog("ge2", prog(2)).r.exit_code, 0);
}

TEST(RaceCheck, TheSameRaceUnderVeryDifferentClocks) {
  // A sweep of two points: POOL at 10 MHz and at 10 GHz, the DMA queue's
  // HBM bandwidth 100x apart. Both points are marked "race" in results.csv
  // and report the same race.
  const std::string dir = scratch_dir("race-sweep");
  const std::string wl = dir + "/racy";
  ASSERT_EQ(::mkdir(wl.c_str(), 0755), 0);
  std::ofstream(wl + "/program.tpb")
      << kHead << dma("dma0", "rows=32 row_bytes=320 src=hbm(0x0, stride=320) dst=sbuf(0, 0x0)")
      << pool_dequant("sbuf(0, 0x0)", "sbuf(0, 0x2000)");
  std::ofstream(wl + "/cmd.txt") << "program.tpb\n--racecheck\n--races races.jsonl\n";
  std::ofstream(dir + "/sweep.json") << R"({"name": "race", "workloads": ["racy"],
    "parameters": [{"key": "clocks_mhz.pool", "values": [10, 10000]},
                   {"key": "hbm.mbytes_per_s", "values": [1000, 100000]}]})";
  const auto r = run_tool("sweep " + dir + "/sweep.json --out " + dir + "/out --no-plot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream csv(read_text(dir + "/out/results.csv"));
  std::string header, line;
  std::getline(csv, header);
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    EXPECT_NE(line.find(",race,5,"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_NE(r.err.find("4 with races (status race)"), std::string::npos) << r.err;
  const std::string first = read_text(dir + "/out/points/p0000/races.jsonl");
  ASSERT_FALSE(first.empty());
  for (const char* p : {"p0001", "p0002", "p0003"})
    EXPECT_EQ(read_text(dir + "/out/points/" + std::string(p) + "/races.jsonl"), first) << p;
  // ... though the runs' times are far apart.
  const json a = json::parse(read_text(dir + "/out/points/p0000/stats.json"));
  const json b = json::parse(read_text(dir + "/out/points/p0003/stats.json"));
  EXPECT_GT(a["simulated_ps"].get<double>(), 10 * b["simulated_ps"].get<double>());
}

TEST(RaceCheck, NoExampleHasARace) {
  const std::string root = source_path("traces/examples");
  std::vector<std::string> progs;
  if (DIR* d = ::opendir(root.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n.substr(n.size() - 4) == ".tpb" && n != "invalid.tpb")
        progs.push_back(root + "/" + n);
    }
    ::closedir(d);
  }
  ASSERT_GE(progs.size(), 15u);
  progs.push_back(source_path("traces/sweeps/gemm4096_mxfp4_dve_x_hbm/gemm4096_mxfp4/program.tpb"));
  for (const std::string& p : progs) {
    const auto r = run_tool("run " + p + " --racecheck --timing-only -q");
    EXPECT_EQ(r.exit_code, 0) << p << ": " << r.err;
    EXPECT_EQ(r.err, "") << p;
  }
  // The TQUANT example, with its tile loaded.
  const std::string tq = source_path("traces/examples/tquant");
  const auto r =
      run_tool("run " + tq + "/program.tpb --load tile:1:32=" + tq + "/input.npy --racecheck -q");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace racecheck_e2e

// The DMA queues and the HBM of a core through `tpbsim run`, as a kernel
// writer uses them (SPEC §10): a descriptor's time against the formula of
// TIMING.md (1.3 us + bytes / min(queue bandwidth, what the HBM grants)) for
// one queue and for sixteen sharing the core's HBM, measured from the retire
// file; bad descriptors and HBM loads past the capacity; the outputs of a
// run with DMA queues.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using nlohmann::json;

// End times (ps) of the retire lines of engine `name`.
std::vector<std::uint64_t> retire_ends(const std::string& retire, const std::string& name) {
  std::vector<std::uint64_t> out;
  std::istringstream in(retire);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::uint64_t end = 0;
    std::string eng;
    ls >> end >> eng;
    if (eng == name) out.push_back(end);
  }
  return out;
}

// `queues` queues each moving rows x row_bytes from its own HBM block into
// its own SBUF columns, all starting at once.
std::string parallel_program(const char* arch, unsigned queues, unsigned rows, unsigned row_bytes) {
  std::string p = std::string(".arch ") + arch + "\n";
  for (unsigned q = 0; q < queues; ++q) {
    p += ".engine dma" + std::to_string(q) + "\n";
    char line[256];
    std::snprintf(line, sizeof line,
                  "dma_copy rows=%u row_bytes=%u src=hbm(0x%x, stride=%u) dst=sbuf(0, 0x%x)\n",
                  rows, row_bytes, q * 0x100000u, row_bytes, q * row_bytes);
    p += line;
  }
  return p;
}

struct Ends {
  int exit_code;
  std::string err;
  std::vector<std::uint64_t> end_ps;  // per queue
};

Ends run_parallel(const char* arch, unsigned queues, unsigned rows, unsigned row_bytes) {
  const std::string d = scratch_dir("dma-par");
  std::ofstream(d + "/p.tpb") << parallel_program(arch, queues, rows, row_bytes);
  const ToolResult r = run_tool("run " + d + "/p.tpb -q --retire " + d + "/r.txt");
  Ends e{r.exit_code, r.err, {}};
  const std::string retire = read_text(d + "/r.txt");
  for (unsigned q = 0; q < queues; ++q) {
    const auto v = retire_ends(retire, "dma" + std::to_string(q));
    e.end_ps.push_back(v.size() == 1 ? v[0] : 0);
  }
  return e;
}

// ps of `bytes` at `bytes_per_s`.
double ps_of(double bytes, double bytes_per_s) { return bytes / bytes_per_s * 1e12; }

struct Gen {
  const char* arch;
  double engine_bps, hbm_bps;  // TIMING.md [J, K, L]: per DMA engine, per core
};
const Gen kGens[] = {
    {"mariana", 33e9, 4.9e12 / 8}, {"cayman", 23e9, 2.9e12 / 8}, {"sunda", 17e9, 820e9 / 2}};

// One transfer on 128 partitions: end(B) = t0 + 1.3 us + C + (B / 16) /
// min(the engine's bandwidth, the HBM's / 16) + fill (SPEC §10: 16 engines
// of 8 partitions each; C the engine's cost of a queue it turns to,
// docs/CONVENTIONS.md "DMA"), with t0 and the fill (the first fetch, the HBM
// and SBUF latencies) the same for every B: two sizes give the engines' rate
// exactly, and the intercept the latency and C.
TEST(DmaTime, OneTransferIsLatencyPlusAnEnginesShareOverItsBandwidth) {
  for (const Gen& g : kGens) {
    SCOPED_TRACE(g.arch);
    const Ends a = run_parallel(g.arch, 1, 128, 1024), b = run_parallel(g.arch, 1, 128, 8192);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const double rate = std::min(g.engine_bps, g.hbm_bps / 16);
    const double share_a = 8.0 * 1024, share_b = 8.0 * 8192;
    const double slope = static_cast<double>(b.end_ps[0] - a.end_ps[0]) / (share_b - share_a);
    EXPECT_NEAR(slope, 1e12 / rate, 1e-4) << "ps per byte of an engine";
    // Intercept: 1300 ns + C (115 ns) + HBM latency (100 ns) + SBUF fill (60
    // cycles at 1.4 GHz) + the first fetch: between 1515 and 1565 ns.
    const double intercept = static_cast<double>(a.end_ps[0]) - ps_of(share_a, rate);
    EXPECT_GE(intercept, 1515e3);
    EXPECT_LE(intercept, 1565e3);
  }
}

// Sixteen queues at once, each a transfer over the 128 partitions: every
// engine takes the 16 transfers' shares one after the other (round robin),
// each of another queue than the one before (the engine's cost C = 115 ns
// each), so queue q completes (q + 1) shares after the start — on v3, where
// 16 engines of 23 B/ns ask for more than the core's 362.5 GB/s, at the
// HBM's share, elsewhere at the engines' rate.
TEST(DmaTime, SixteenQueuesTakeTurnsOnTheEngines) {
  for (const Gen& g : kGens) {
    SCOPED_TRACE(g.arch);
    const unsigned rows = 128, rb = 4096;
    const double share = 8.0 * rb;
    const Ends one = run_parallel(g.arch, 1, rows, rb);
    const Ends all = run_parallel(g.arch, 16, rows, rb);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ASSERT_EQ(all.exit_code, 0) << all.err;
    const double rate = std::min(g.engine_bps, g.hbm_bps / 16);
    for (unsigned q = 0; q < 16; ++q) {
      const double extra = static_cast<double>(all.end_ps[q]) - static_cast<double>(one.end_ps[0]);
      EXPECT_NEAR(extra, q * (ps_of(share, rate) + 115e3), 2.0 * (q + 1)) << "queue " << q;
    }
  }
}

// Four transfers of 32 partitions each, on four queues, on disjoint engines:
// no engine is shared and 16 x 33 B/ns fit in a v4 core's 612.5 GB/s.
TEST(DmaTime, DisjointPartitionsRunInParallel) {
  const std::string d = scratch_dir("dma-disjoint");
  std::string p = ".arch mariana\n";
  for (unsigned q = 0; q < 4; ++q)
    p += ".engine dma" + std::to_string(q) + "\ndma_copy rows=32 row_bytes=4096 src=hbm(0x" +
         std::to_string(q) + "00000, stride=4096) dst=sbuf(" + std::to_string(32 * q) + ", 0x0)\n";
  std::ofstream(d + "/p.tpb") << p;
  const ToolResult r = run_tool("run " + d + "/p.tpb -q --retire " + d + "/r.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string retire = read_text(d + "/r.txt");
  const std::uint64_t e0 = retire_ends(retire, "dma0").at(0);
  for (unsigned q = 1; q < 4; ++q)
    EXPECT_EQ(retire_ends(retire, "dma" + std::to_string(q)).at(0), e0) << q;
}

// An HBM -> SBUF descriptor whose run-time check fails leaves its
// destination as it was; the message names the predicate (exit 2).
struct BadCase {
  const char* name;
  const char* descriptor;  // under .engine dma3
  const char* timing;      // a --timing override, or ""
  const char* message;     // in stderr
};

const BadCase kBad[] = {
    {"rows_past_partition_127", "rows=2 row_bytes=16 src=hbm(0x0, stride=16) dst=sbuf(127, 0x0)",
     "", "dma_sbuf_rows_in_partitions(dst)"},
    {"row_crosses_partition", "rows=1 row_bytes=0x1000 src=hbm(0x0, stride=0) dst=sbuf(0, 0x3f800)",
     "", "dma_sbuf_row_in_partition(dst)"},
    {"row_crosses_configured_partition",
     "rows=4 row_bytes=0x1000 src=hbm(0x0, stride=4096) dst=sbuf(0, 0x1000)",
     R"({"sbuf_bytes_per_partition": 6144})", "failed dma_sbuf_row_in_partition(dst)"},
    {"hbm_past_default_capacity",
     "rows=2 row_bytes=16 src=hbm(0x47ffffff0, stride=16) dst=sbuf(0, 0x0)", "",
     "dma_hbm_in_capacity(src)"},
    {"hbm_past_configured_capacity",
     "rows=2 row_bytes=4096 src=hbm(0xff000, stride=4096) dst=sbuf(0, 0x0)",
     R"({"hbm": {"bytes": 1048576}})", "failed dma_hbm_in_capacity(src)"},
    {"sbuf_endpoint_in_the_queue_rings",
     "rows=1 row_bytes=64 src=hbm(0x0, stride=0) dst=end(kind=1, addr_lo=0x6100000)", "",
     "dma_sbuf_endpoint_address(dst)"},
    {"psum_is_no_endpoint", "rows=1 row_bytes=64 src=hbm(0x0, stride=0) dst=end(kind=2)", "",
     "dma_valid_endpoint_kind(dst)"},
    {"sbuf_stride", "rows=2 row_bytes=64 src=hbm(0x0, stride=64) dst=end(kind=1, stride=64)", "",
     "dma_sbuf_endpoint_row_stride(dst)"},
    {"zero_rows", "rows=0 row_bytes=64 src=hbm(0x0, stride=64) dst=sbuf(0, 0x0)", "",
     "dma_valid_num_rows"},
    {"zero_row_bytes", "rows=1 row_bytes=0 src=hbm(0x0, stride=64) dst=sbuf(0, 0x0)", "",
     "dma_valid_row_bytes"},
    {"hbm_rows_overlap", "rows=2 row_bytes=64 src=sbuf(0, 0x0) dst=hbm(0x0, stride=32)", "",
     "dma_hbm_dst_rows_disjoint"},
    {"bad_rmw_op", "rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) rmw=2", "",
     "dma_valid_rmw_op"},
    {"bad_rmw_dtype", "rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) rmw=add rmw_dtype=0xff",
     "", "dma_valid_rmw_dtype"},
    {"dtype_without_op", "rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) rmw_dtype=fp32", "",
     "dma_rmw_dtype_only_with_op"},
    {"row_bytes_not_elements",
     "rows=1 row_bytes=6 src=hbm(0x0) dst=sbuf(0, 0x0) rmw=add rmw_dtype=fp32", "",
     "dma_rmw_row_bytes_multiple"},
    {"reserved",
     // bytes 21..31 (byte 20 is update_core, SPEC §15)
     "rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) reserved1=[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
     "0]",
     "", "dma_copy_reserved_zero"},
    {"update_core_without_update",
     "rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) update_core=1", "",
     "dma_valid_update_core"},
    {"queue_past_dma15", "rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) queue=16", "",
     "dma_valid_queue"},
};

class BadDescriptor : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadDescriptor, FaultsByNameAndWritesNothing) {
  const BadCase& c = GetParam();
  const std::string d = scratch_dir("dma-bad");
  // HBM bytes 0..0x3fff hold 0x5a; SBUF partitions 0..3 at 0..0x3fff hold 0xc3.
  {
    std::ofstream py(d + "/mk.py");
    py << "import numpy as np\n"
          "np.save('"
       << d
       << "/h.npy', np.full((1, 0x4000), 0x5a, np.uint8))\n"
          "np.save('"
       << d << "/s.npy', np.full((4, 0x1400), 0xc3, np.uint8))\n";
  }
  ASSERT_EQ(std::system(("/usr/bin/python3 " + d + "/mk.py").c_str()), 0);
  std::ofstream(d + "/p.tpb") << ".arch mariana\n.engine dma3\ndma_copy " << c.descriptor << "\n";
  std::string args = "run " + d + "/p.tpb -q --load hbm:0=" + d + "/h.npy --load sbuf:0:0=" + d +
                     "/s.npy --dump sbuf:0:0:4x5120:u8=" + d +
                     "/o.npy --dump hbm:0:1x16384:u8=" + d + "/oh.npy";
  if (*c.timing) {
    std::ofstream(d + "/t.json") << c.timing;
    args += " --timing " + d + "/t.json";
  }
  const ToolResult r = run_tool(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dma3 instruction 0"), std::string::npos) << r.err;
  // Nothing written: the dumps (made after the fault) hold the preloads.
  const std::string o = read_text(d + "/o.npy"), oh = read_text(d + "/oh.npy");
  ASSERT_GE(o.size(), 4u * 5120);
  ASSERT_GE(oh.size(), 16384u);
  EXPECT_EQ(o.substr(o.size() - 4 * 5120), std::string(4 * 5120, '\xc3'));
  EXPECT_EQ(oh.substr(oh.size() - 16384), std::string(16384, '\x5a'));
}

std::string bad_name(const ::testing::TestParamInfo<BadCase>& i) { return i.param.name; }
INSTANTIATE_TEST_SUITE_P(All, BadDescriptor, ::testing::ValuesIn(kBad), bad_name);

// `tpbsim check` judges the same descriptors by the static contract.
TEST(DmaCheck, EveryStaticPredicateIsNamedByCheck) {
  for (const BadCase& c : kBad) {
    if (*c.timing) continue;  // run-time only: the configured capacity
    SCOPED_TRACE(c.name);
    const std::string d = scratch_dir("dma-check");
    std::ofstream(d + "/p.tpb") << ".arch mariana\n.engine dma0\ndma_copy " << c.descriptor << "\n";
    const ToolResult r = run_tool("check " + d + "/p.tpb");
    EXPECT_NE(r.exit_code, 0);
    std::string pred = c.message;
    EXPECT_NE(r.out.find(pred), std::string::npos) << r.out << r.err;
  }
}

// --load hbm: past the capacity is an input error before the run (exit 1),
// with the capacity in the message; a dump past it too.
TEST(HbmLoad, PastTheCapacityIsExit1BeforeTheRun) {
  const std::string d = scratch_dir("hbm-load");
  std::ofstream(d + "/p.tpb") << ".arch mariana\n.engine dma0\n"
                                 "dma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0)\n";
  ASSERT_EQ(std::system(("/usr/bin/python3 -c \"import numpy as np; np.save('" + d +
                         "/a.npy', np.zeros((4, 1024), np.uint8))\"")
                            .c_str()),
            0);
  std::ofstream(d + "/t.json") << R"({"hbm": {"bytes": 8192}})";
  const ToolResult ok =
      run_tool("run " + d + "/p.tpb -q --timing " + d + "/t.json --load hbm:4096=" + d + "/a.npy");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  const ToolResult past = run_tool("run " + d + "/p.tpb -q --timing " + d + "/t.json --retire " +
                                   d + "/r.txt --load hbm:4097=" + d + "/a.npy");
  EXPECT_EQ(past.exit_code, 1);
  EXPECT_NE(past.err.find("past the HBM capacity of 8192 bytes"), std::string::npos) << past.err;
  EXPECT_FALSE(std::ifstream(d + "/r.txt").good()) << "the run must not start";
  const ToolResult dump = run_tool("run " + d + "/p.tpb -q --timing " + d +
                                   "/t.json --dump hbm:8000:1x200:u8=" + d + "/o.npy");
  EXPECT_EQ(dump.exit_code, 1);
  EXPECT_NE(dump.err.find("past the HBM capacity"), std::string::npos) << dump.err;
}

// A program's DMA queues are engines of every output; the others are in none.
TEST(DmaOutputs, QueuesWithDescriptorsAppearInVcdPerfettoStatsAndRetire) {
  const std::string d = scratch_dir("dma-out");
  std::ofstream(d + "/p.tpb") << ".arch mariana\n"
                                 ".engine dma7\n"
                                 "dma_copy rows=4 row_bytes=256 src=hbm(0x0, stride=256) "
                                 "dst=sbuf(0, 0x0) update=inc(sem0)\n"
                                 ".engine dma12\n"
                                 "dma_copy rows=4 row_bytes=256 src=sbuf(0, 0x0) "
                                 "dst=hbm(0x1000, stride=256) wait=ge(sem0, 1)\n";
  const ToolResult r = run_tool("run " + d + "/p.tpb -q --vcd " + d + "/v.vcd --perfetto " + d +
                                "/t.json --stats " + d + "/s.json --retire " + d + "/r.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto vars = vcd_var_list(read_text(d + "/v.vcd"));
  bool dma7 = false, dma12 = false, other = false, engine0 = false;
  for (const auto& v : vars) {
    dma7 = dma7 || v.path.find("dma7.busy") != std::string::npos;
    dma12 = dma12 || v.path.find("dma12.busy") != std::string::npos;
    engine0 = engine0 || v.path.find("dma_engine0.busy") != std::string::npos;
    other = other ||
            (v.path.find("dma") != std::string::npos && v.path.find("dma7.") == std::string::npos &&
             v.path.find("dma12.") == std::string::npos &&
             v.path.find("dma_engine") == std::string::npos);
  }
  EXPECT_TRUE(dma7);
  EXPECT_TRUE(dma12);
  EXPECT_TRUE(engine0);  // the DMA engines of a run with DMA (SPEC §10)
  EXPECT_FALSE(other);
  const json trace = json::parse(read_text(d + "/t.json"));
  std::map<std::string, int> slices;
  std::map<std::string, std::string> thread_names;
  for (const auto& e : trace.at("traceEvents"))
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
      thread_names[std::to_string(e.value("tid", 0))] = e.at("args").value("name", "");
  for (const auto& e : trace.at("traceEvents"))
    if (e.value("ph", "") == "X" || e.value("ph", "") == "B")
      ++slices[thread_names[std::to_string(e.value("tid", 0))]];
  EXPECT_EQ(slices["dma7"], 1);
  EXPECT_EQ(slices["dma12"], 1);
  // Rows 0..3 are engine 0's partitions: its one track has both shares.
  EXPECT_EQ(slices["dma_engine0"], 2);
  for (const auto& [tid, name] : thread_names)
    EXPECT_TRUE(name.rfind("dma", 0) != 0 || name == "dma7" || name == "dma12" ||
                name.rfind("dma_engine", 0) == 0)
        << name;
  const json stats = json::parse(read_text(d + "/s.json"));
  std::map<std::string, json> engines;
  for (const auto& e : stats.at("engines")) engines[e.at("name").get<std::string>()] = e;
  ASSERT_EQ(engines.size(), 7u);  // pool dve pe sfu dma7 dma12, DMA engine 0
  EXPECT_EQ(engines["dma7"].at("counters").at("dma_bytes"), 1024);
  EXPECT_EQ(engines["dma7"].at("counters").at("hbm_read_bytes"), 1024);
  EXPECT_EQ(engines["dma12"].at("counters").at("hbm_write_bytes"), 1024);
  // The bytes are the DMA engine's: it moved both transfers.
  EXPECT_EQ(engines["dma_engine0"].at("instructions"), 2);
  EXPECT_EQ(engines["dma_engine0"].at("bytes_read"), 2048);
  EXPECT_GT(engines["dma12"].at("busy_cycles").get<std::uint64_t>(), 0u);
  EXPECT_GT(engines["dma12"].at("stall_cycles").get<std::uint64_t>(), 0u);  // waited on sem0
  bool hbm_row = false;
  for (const auto& m : stats.at("memories"))
    if (m.at("name") == "hbm") {
      hbm_row = true;
      EXPECT_EQ(m.at("bytes_read"), 1024);
      EXPECT_EQ(m.at("bytes_written"), 1024);
    }
  EXPECT_TRUE(hbm_row);
  const std::string retire = read_text(d + "/r.txt");
  ASSERT_EQ(retire_ends(retire, "dma7").size(), 1u);
  ASSERT_EQ(retire_ends(retire, "dma12").size(), 1u);
  // dma12 waited for dma7: it ends a whole descriptor (>= 1.3 us) later.
  EXPECT_GE(retire_ends(retire, "dma12")[0], retire_ends(retire, "dma7")[0] + 1300000);
}

// A binary keeps each descriptor's queue (its `queue` byte, set from the
// .engine it was written under): disasm shows the queues, the binary runs as
// the text does. A two-queue program whose queues wait on each other (a
// binary that put both on one queue would deadlock) gives the same retires.
TEST(DmaBinary, ABinaryKeepsEachDescriptorsQueue) {
  const std::string d = scratch_dir("dma-bin");
  std::ofstream(d + "/p.tpb") << ".arch mariana\n.engine dma5\n"
                                 "dma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) "
                                 "wait=ge(sem9, 1) update=inc(sem5)\n"
                                 ".engine dma9\n"
                                 "dma_copy rows=1 row_bytes=64 src=hbm(0x40) dst=sbuf(0, 0x40) "
                                 "update=inc(sem9)\n";
  const ToolResult as = run_tool("asm " + d + "/p.tpb -o " + d + "/p.bin");
  ASSERT_EQ(as.exit_code, 0) << as.err;
  EXPECT_EQ(as.err.find("another queue"), std::string::npos) << as.err;
  const ToolResult dis = run_tool("disasm " + d + "/p.bin");
  ASSERT_EQ(dis.exit_code, 0) << dis.err;
  EXPECT_NE(dis.out.find(".engine dma5\ndma_copy rows=1 row_bytes=64 src=hbm(0x0) "
                         "dst=sbuf(0, 0x0) wait=ge(sem9, 1) update=inc(sem5)\n.engine dma9\n"
                         "dma_copy rows=1 row_bytes=64 src=hbm(0x40) dst=sbuf(0, 0x40) "
                         "update=inc(sem9)\n"),
            std::string::npos)
      << dis.out;
  const ToolResult text = run_tool("run " + d + "/p.tpb -q --retire " + d + "/rt.txt");
  const ToolResult bin = run_tool("run " + d + "/p.bin -q --retire " + d + "/rb.txt");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(bin.exit_code, 0) << bin.err;
  EXPECT_EQ(read_text(d + "/rb.txt"), read_text(d + "/rt.txt"));
  EXPECT_EQ(retire_ends(read_text(d + "/rb.txt"), "dma5").size(), 1u);
  EXPECT_EQ(retire_ends(read_text(d + "/rb.txt"), "dma9").size(), 1u);
}

// The queue byte can be written (`queue=N`, or `.raw`): a descriptor naming
// another queue than the one it is under is invalid for check and run alike,
// and asm says the binary would move it.
TEST(DmaBinary, ADescriptorNamingAnotherQueueIsInvalidForCheckAndRun) {
  const std::string d = scratch_dir("dma-queue");
  std::ofstream(d + "/p.tpb") << ".arch mariana\n.engine dma3\n"
                                 "dma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) "
                                 "queue=5\n";
  expect_tool("check " + d + "/p.tpb", 2, "dma3[0] dma_copy: INVALID dma_copy_on_its_queue");
  expect_tool("run " + d + "/p.tpb -q", 2, "failed dma_copy_on_its_queue");
  expect_tool("asm " + d + "/p.tpb -o " + d + "/p.bin", 0, "1 word(s) would run on another queue");
  // disasm of the text keeps the mismatch (round trip).
  expect_tool("disasm " + d + "/p.tpb", 0,
              ".engine dma3\ndma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) queue=5\n");
}

// check says what run does: an instruction on a queue that does not execute it.
TEST(DmaCheck, AnInstructionOnAQueueThatDoesNotExecuteItIsInvalidForCheckAndRun) {
  const std::string d = scratch_dir("dma-where");
  const std::string copy =
      "tensor_copy channels=1 out_dtype=bf16 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], "
      "num=[4, 1, 1]) dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[4, 1, 1])\n";
  const struct {
    const char* name;
    std::string text;
    const char* where;
    const char* run_msg;
  } cases[] = {
      {"dma_copy on pool",
       ".arch mariana\n.engine pool\ndma_copy rows=1 row_bytes=64 src=hbm(0x0) "
       "dst=sbuf(0, 0x0)\n",
       "pool[0] dma_copy: INVALID queue_executes_opcode", "no record in the pool kernel_info"},
      {"tensor_copy on dma3", ".arch mariana\n.engine dma3\n" + copy,
       "dma3[0] tensor_copy: INVALID queue_executes_opcode",
       "a DMA queue executes DMA descriptors only"},
      {"quantize_mx on pe",
       ".arch mariana\n.engine pe\nquantize_mx channels=32 out_dtype=fp8_e4m3 "
       "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) "
       "dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16)\n",
       "pe[0] quantize_mx: INVALID queue_executes_opcode", "no record in the pe kernel_info"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::ofstream(d + "/p.tpb") << c.text;
    expect_tool("check " + d + "/p.tpb", 2, c.where);
    expect_tool("run " + d + "/p.tpb -q", 2, c.run_msg);
  }
  // In place, both are fine.
  std::ofstream(d + "/ok.tpb") << ".arch mariana\n.engine dve\n" << copy;
  EXPECT_EQ(run_tool("check " + d + "/ok.tpb").exit_code, 0);
}

}  // namespace
}  // namespace tpb::e2e

// `tpbsim run` with SFU TQUANT blocks (seed 002, SPEC §6, §9): the traces
// example against its independently computed outputs, --load / --dump
// tile:N, faults exiting 2 with the class and rule named and --dump still
// written, the PE_MASK no-op, flags in the stats and the VCD, asm / disasm of
// the seed's example line.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sc_tests/e2e/tool_runner.h"

using namespace tpb::e2e;
using json = nlohmann::json;

namespace {

const std::string kEx = "traces/examples/tquant/";

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}

TEST(RunSfuTquant, ExampleMatchesTheIndependentOutputs) {
  const std::string d = scratch_dir("tq-ex");
  const ToolResult r =
      run_tool("run " + source_path(kEx + "program.tpb") +
               " --load tile:1:32=" + source_path(kEx + "input.npy") + " --dump tile:0=" + d +
               "/t0.npy --dump tile:2=" + d + "/t2.npy --stats " + d + "/s.json --vcd " + d +
               "/v.vcd --retire " + d + "/r.txt --perfetto " + d + "/p.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_text(d + "/t0.npy"), read_text(source_path(kEx + "expected_t0.npy")));
  EXPECT_EQ(read_text(d + "/t2.npy"), read_text(source_path(kEx + "expected_t2.npy")));
  const json s = json::parse(read_text(d + "/s.json"));
  EXPECT_EQ(s.at("sfu").at("flags").at("inexact"), true);
  EXPECT_EQ(s.at("sfu").at("flags").at("saturated"), true);
  EXPECT_EQ(s.at("sfu").at("flags").at("wrapped"), true);
  EXPECT_EQ(s.at("sfu").at("tiles"), 3);
  const std::string vcd = read_text(d + "/v.vcd");
  for (const char* sig : {"flag_inexact", "flag_saturated", "flag_wrapped", "fault"})
    EXPECT_NE(vcd.find(sig), std::string::npos) << sig;
  const std::string retire = read_text(d + "/r.txt");
  EXPECT_NE(retire.find("sfu       0 0x6a tquant"), std::string::npos) << retire;
  EXPECT_NE(retire.find("sfu       1 0x6a tquant"), std::string::npos) << retire;
  const std::string perfetto = read_text(d + "/p.json");
  EXPECT_NE(perfetto.find("sfu.tquant.loop"), std::string::npos);
  EXPECT_NE(perfetto.find("sfu flags"), std::string::npos);
}

const char* kBlock =
    "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=24; B.DIM LB1=8; B.DIM LB2=32; "
    "B.IOR r1, r2; B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP\n";

ToolResult run_block(const std::string& d, const std::string& prog, const std::string& extra = "") {
  const std::string p = write(d, "p.tpb", prog);
  return run_tool("run " + p + " --load tile:1:32=" + source_path(kEx + "input.npy") +
                  " --dump tile:0=" + d + "/t0.npy --dump tile:1=" + d + "/t1.npy --stats " + d +
                  "/s.json --vcd " + d + "/v.vcd " + extra);
}

TEST(RunSfuTquant, LegalityFaultExits2NamingClassAndRuleAndStillDumps) {
  const std::string d = scratch_dir("tq-f1");
  const ToolResult r =
      run_block(d, std::string(".reg sfu r1 = 0\n.reg sfu r2 = 0\n") + kBlock);  // multiplier 0
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Fault_TileLegality: multiplier"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sfu instruction 0"), std::string::npos) << r.err;
  // The state at the fault: the source as loaded, no destination (0 x 0).
  EXPECT_NE(read_text(d + "/t1.npy").find("'shape': (8, 24)"), std::string::npos);
  EXPECT_NE(read_text(d + "/t0.npy").find("'shape': (0, 0)"), std::string::npos);
  const json s = json::parse(read_text(d + "/s.json"));
  EXPECT_EQ(s.at("status"), "fault");
  EXPECT_EQ(s.at("sfu").at("flags").at("inexact"), false);
  EXPECT_NE(read_text(d + "/v.vcd").find("fault"), std::string::npos);
}

TEST(RunSfuTquant, AllocationFaultExits2) {
  const std::string d = scratch_dir("tq-f2");
  std::string prog = std::string(".reg sfu r1 = 0x3f800000\n") + kBlock;
  prog.replace(prog.find("->T0<1>"), 7, "->T1<1>");
  const ToolResult r = run_block(d, prog);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Fault_TileAllocation: unavailable renamed destination"), std::string::npos)
      << r.err;
}

TEST(RunSfuTquant, MaskZeroRetiresWithoutEffects) {
  const std::string d = scratch_dir("tq-m0");
  std::string prog = kBlock;  // r1 = 0 would be an illegal multiplier
  prog.replace(prog.find("mask=1111"), 9, "mask=0000");
  const ToolResult r = run_block(d, prog, "--retire " + d + "/r.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_text(d + "/r.txt").find("tquant"), std::string::npos);
  EXPECT_NE(read_text(d + "/t0.npy").find("'shape': (0, 0)"), std::string::npos);
}

TEST(RunSfuTquant, SeedExampleLineAssemblesDisassemblesAndRuns) {
  const std::string d = scratch_dir("tq-asm");
  const std::string line =
      "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=16; B.IOT T1, mask=1111, "
      "<last>, ->T0<1>; BSTOP";
  const std::string p = write(d, "ex.tpb", line + "\n");
  ASSERT_EQ(run_tool("asm " + p + " -o " + d + "/ex.bin").exit_code, 0);
  const ToolResult dis = run_tool("disasm " + d + "/ex.bin");
  ASSERT_EQ(dis.exit_code, 0);
  EXPECT_NE(dis.out.find(line), std::string::npos) << dis.out;
  // A 1 x 16 source: the first row of the example input has 24 columns, so
  // load a 16-column tile written by this test.
  std::string npy("\x93NUMPY\x01\x00", 8);
  std::string hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 16), }";
  hdr += std::string(128 - 10 - hdr.size() - 1, ' ') + "\n";  // data at byte 128
  npy += std::string(1, static_cast<char>(hdr.size())) + std::string(1, '\0') + hdr;
  for (int i = 0; i < 16; ++i) {
    const float f = static_cast<float>(i) - 8.5f;  // ties: RNE to even
    npy.append(reinterpret_cast<const char*>(&f), 4);
  }
  write(d, "x.npy", npy);
  const ToolResult r =
      run_tool("run " + d + "/ex.bin --load tile:1=" + d + "/x.npy --dump tile:0=" + d + "/y.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string y = read_text(d + "/y.npy");
  ASSERT_GE(y.size(), 16u);
  const std::size_t at = y.size() - 16;  // the data follows the header
  const int want[16] = {-8, -8, -6, -6, -4, -4, -2, -2, 0, 0, 2, 2, 4, 4, 6, 6};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<signed char>(y[at + i]), want[i]) << i;
}

TEST(RunSfuTquant, TileSpecErrorsExit1) {
  const std::string d = scratch_dir("tq-spec");
  const std::string p = write(d, "p.tpb", kBlock);
  EXPECT_EQ(run_tool("run " + p + " --load tile:32=" + source_path(kEx + "input.npy")).exit_code,
            1);
  EXPECT_EQ(run_tool("run " + p + " --load tile:1:8=" + source_path(kEx + "input.npy")).exit_code,
            1);  // Col below the array's 24 columns
  EXPECT_EQ(
      run_tool("run " + p + " --load tile:1=" + source_path(kEx + "expected_t0.npy")).exit_code,
      1);  // not float32
}

// An SFU block in a semaphore-ordered pipeline: it waits for POOL's update
// (BSTOP wait=...), so it issues only after POOL retires.
TEST(RunSfuTquant, BlockWaitsOnASemaphoreSetByPool) {
  const std::string d = scratch_dir("tq-sem");
  const std::string prog = R"(.arch mariana
.reg sfu r1 = 0x3ebd70a4
.reg sfu r2 = -7
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[1024, 1, 1]) \
    dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[2048, 1, 1]) update=inc(sem5)
BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=24; B.DIM LB1=8; B.DIM LB2=32; B.IOR r1, r2; B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP wait=ge(sem5, 1)
)";
  const ToolResult r = run_tool(
      "run " + write(d, "p.tpb", prog) + " --load tile:1:32=" + source_path(kEx + "input.npy") +
      " --dump tile:0=" + d + "/t0.npy --retire " + d + "/r.txt --stats " + d + "/s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Same result as the example's first block, computed independently.
  EXPECT_EQ(read_text(d + "/t0.npy"), read_text(source_path(kEx + "expected_t0.npy")));
  std::istringstream retire(read_text(d + "/r.txt"));
  std::uint64_t t_pool = 0, t_sfu = 0;
  std::string line;
  while (std::getline(retire, line)) {
    std::istringstream f(line);
    std::uint64_t ps;
    std::string eng;
    f >> ps >> eng;
    (eng == "pool" ? t_pool : t_sfu) = ps;
  }
  ASSERT_GT(t_pool, 0u);
  EXPECT_GT(t_sfu, t_pool);
  const json s = json::parse(read_text(d + "/s.json"));
  for (const auto& e : s.at("engines"))
    if (e.at("name") == "sfu") {
      EXPECT_GT(e.at("stall_cycles").get<std::uint64_t>(), 0u);
    }
}

}  // namespace

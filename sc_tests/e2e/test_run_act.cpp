// The ACT engine (SPEC §18) through `tpbsim run`: its stats row, VCD scope
// and Perfetto track only when its queue has instructions; its clock per
// generation (TIMING.md [A, B, C]); `--trace-engines act`; the race check
// naming it; a timing-only run's retires equal to the full run's; on
// MAVERICK its queue's instructions run on the DVE (seed 003) in line order;
// an instruction that several engines run goes to the engine its `.engine`
// names (the header's selector) in a binary too; the interlock (SPEC §8) of
// dependent activations.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using nlohmann::json;

// An activation on the ACT, then a DVE tensor_tensor reading its output
// (ordered by sem1 unless `unordered`).
std::string act_then_dve(const std::string& arch, bool unordered = false) {
  return ".arch " + arch +
         "\n.engine act\n"
         "activation func=exp channels=4 out_dtype=fp32 src=t3d(sbuf(0, 0x0), num=[64, 1, 1]) "
         "dst=t3d(sbuf(0, 0x1000), num=[64, 1, 1]) update=inc(sem1)\n"
         ".engine dve\n"
         "tensor_tensor op=add channels=4 out_dtype=fp32 src=t3d(sbuf(0, 0x1000), num=[64, 1, 1]) "
         "src1=t3d(sbuf(0, 0x0)) dst=t3d(sbuf(0, 0x2000), num=[64, 1, 1])" +
         (unordered ? "" : " wait=ge(sem1, 1)") + "\n";
}

struct ActRun {
  ToolResult tool;
  json stats;
  std::string retire, vcd, perfetto;
};

ActRun run_act(const std::string& prog, const std::string& extra = "") {
  const std::string d = scratch_dir("act");
  std::ofstream(d + "/p.tpb") << prog;
  ActRun r;
  r.tool = run_tool("run " + d + "/p.tpb -q --stats " + d + "/s.json --retire " + d +
                    "/r.txt --vcd " + d + "/v.vcd --perfetto " + d + "/p.json " + extra);
  r.stats = json::parse(read_text(d + "/s.json"));
  r.retire = read_text(d + "/r.txt");
  r.vcd = read_text(d + "/v.vcd");
  r.perfetto = read_text(d + "/p.json");
  return r;
}

const json* engine_row(const json& stats, const std::string& name) {
  for (const json& e : stats["engines"])
    if (e["name"] == name) return &e;
  return nullptr;
}

TEST(ActEngine, ListedOnlyWhenItsQueueHasInstructions) {
  const ActRun with = run_act(act_then_dve("mariana"));
  ASSERT_EQ(with.tool.exit_code, 0) << with.tool.err;
  const json* act = engine_row(with.stats, "act");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ((*act)["instructions"], 1);
  EXPECT_GT((*act)["busy_cycles"].get<std::uint64_t>(), 64u);
  EXPECT_NE(with.vcd.find("$scope module act $end"), std::string::npos);
  EXPECT_NE(with.perfetto.find("\"act.activation.compute\""), std::string::npos);
  EXPECT_NE(with.retire.find(" act       0 0x20 activation"), std::string::npos) << with.retire;

  const ActRun without = run_act(
      ".arch mariana\n.engine dve\nmemset channels=4 out_dtype=fp32 "
      "dst=t3d(sbuf(0, 0x0), num=[64, 1, 1])\n");
  ASSERT_EQ(without.tool.exit_code, 0) << without.tool.err;
  EXPECT_EQ(engine_row(without.stats, "act"), nullptr);
  EXPECT_EQ(without.vcd.find("module act"), std::string::npos);
  EXPECT_EQ(without.perfetto.find("\"act"), std::string::npos);
}

TEST(ActEngine, ClockPerGeneration) {
  // TIMING.md: ScalarE 1.4 GHz on v2 [A], 1.2 GHz on v3 [B] and v4 [C].
  const struct {
    const char* arch;
    double mhz;
  } gens[] = {{"sunda", 1400}, {"cayman", 1200}, {"mariana", 1200}};
  for (const auto& g : gens) {
    const ActRun r = run_act(act_then_dve(g.arch));
    ASSERT_EQ(r.tool.exit_code, 0) << g.arch << r.tool.err;
    const json* act = engine_row(r.stats, "act");
    ASSERT_NE(act, nullptr) << g.arch;
    EXPECT_EQ((*act)["clock_mhz"].get<double>(), g.mhz) << g.arch;
  }
}

TEST(ActEngine, TraceEnginesAct) {
  const ActRun r = run_act(act_then_dve("mariana"), "--trace-engines act");
  ASSERT_EQ(r.tool.exit_code, 0) << r.tool.err;
  EXPECT_NE(r.vcd.find("$scope module act $end"), std::string::npos);
  EXPECT_EQ(r.vcd.find("$scope module dve $end"), std::string::npos);
}

TEST(ActEngine, TheRaceCheckNamesIt) {
  const ActRun r = run_act(act_then_dve("mariana", true), "--racecheck");
  EXPECT_EQ(r.tool.exit_code, 5) << r.tool.err;
  EXPECT_NE(r.tool.err.find("after act[0] activation"), std::string::npos) << r.tool.err;
  EXPECT_EQ(run_act(act_then_dve("mariana"), "--racecheck").tool.exit_code, 0);
}

TEST(ActEngine, TimingOnlyRetiresAreTheFullRuns) {
  const ActRun full = run_act(act_then_dve("cayman"));
  const ActRun timing = run_act(act_then_dve("cayman"), "--timing-only");
  ASSERT_EQ(timing.tool.exit_code, 0) << timing.tool.err;
  EXPECT_EQ(timing.retire, full.retire);
  EXPECT_EQ(timing.stats["engines"], full.stats["engines"]);
}

TEST(ActEngine, MaverickRunsItsQueueOnTheDve) {
  const ActRun r = run_act(act_then_dve("maverick"));
  ASSERT_EQ(r.tool.exit_code, 0) << r.tool.err;
  EXPECT_EQ(engine_row(r.stats, "act"), nullptr);
  EXPECT_EQ((*engine_row(r.stats, "dve"))["instructions"], 2);
  // Line order: the activation first, as DVE instruction 0.
  EXPECT_NE(r.retire.find(" dve       0 0x20 activation"), std::string::npos) << r.retire;
  EXPECT_NE(r.retire.find(" dve       1 0x21 tensor_tensor"), std::string::npos) << r.retire;
}

TEST(ActEngine, ABinaryKeepsTheEngineOfEachWord) {
  // tensor_copy on the ACT (selector 5) and on the DVE (its home: 0).
  const std::string d = scratch_dir("act-bin");
  std::ofstream(d + "/p.tpb") << ".arch mariana\n"
                                 ".engine act\n"
                                 "tensor_copy channels=2 out_dtype=bf16 src=t3d(sbuf(0, 0x0), "
                                 "num=[8, 1, 1]) dst=t3d(sbuf(0, 0x100), num=[8, 1, 1])\n"
                                 ".engine dve\n"
                                 "tensor_copy channels=2 out_dtype=bf16 src=t3d(sbuf(0, 0x0), "
                                 "num=[8, 1, 1]) dst=t3d(sbuf(0, 0x200), num=[8, 1, 1])\n";
  ASSERT_EQ(run_tool("asm " + d + "/p.tpb -o " + d + "/p.bin").exit_code, 0);
  const std::string bin = read_text(d + "/p.bin");
  ASSERT_EQ(bin.size(), 128u);
  // Queue order: dve (index 1) before act (20); byte 2 bits 7:4 the selector.
  EXPECT_EQ(static_cast<unsigned char>(bin[2]) >> 4, 0u);
  EXPECT_EQ(static_cast<unsigned char>(bin[64 + 2]) >> 4, 5u);
  const ToolResult r = run_tool("run " + d + "/p.bin --arch mariana -q --retire " + d + "/r.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string retire = read_text(d + "/r.txt");
  EXPECT_NE(retire.find(" act       0 0x23 tensor_copy"), std::string::npos) << retire;
  EXPECT_NE(retire.find(" dve       0 0x23 tensor_copy"), std::string::npos) << retire;
  // tpbsim check: the disassembly names the engine.
  const ToolResult dis = run_tool("disasm " + d + "/p.bin");
  EXPECT_NE(dis.out.find(".engine act"), std::string::npos) << dis.out;
}

// The wait-only nop (SPEC §18) on the ACT: its queue byte is 20; on
// MAVERICK the act queue's nop runs on the DVE, naming it after the fold.
TEST(ActEngine, ANopOnTheActOrdersTheDve) {
  const std::string prog =
      ".engine act\nnop update=inc(sem1)\n"
      ".engine dve\nmemset channels=1 out_dtype=fp32 dst=t3d(sbuf(0, 0x0)) wait=ge(sem1, 1)\n";
  for (const char* arch : {"sunda", "mariana", "maverick"}) {
    const ActRun r = run_act(std::string(".arch ") + arch + "\n" + prog);
    ASSERT_EQ(r.tool.exit_code, 0) << arch << ": " << r.tool.err;
    const bool fold = std::string(arch) == "maverick";
    EXPECT_EQ(r.retire.find(" act       0 0xf0 nop") != std::string::npos, !fold) << r.retire;
    EXPECT_EQ(r.retire.find(" dve       0 0xf0 nop") != std::string::npos, fold) << r.retire;
  }
  const std::string d = scratch_dir("act-nop");
  std::ofstream(d + "/p.tpb") << prog;
  ASSERT_EQ(run_tool("asm " + d + "/p.tpb -o " + d + "/p.bin").exit_code, 0);
  const std::string bin = read_text(d + "/p.bin");
  ASSERT_EQ(bin.size(), 128u);
  EXPECT_EQ(static_cast<unsigned char>(bin[64]), 0xf0);  // queue order: dve, then act
  EXPECT_EQ(static_cast<unsigned char>(bin[64 + 12]), 20u);
  EXPECT_EQ(run_tool("run " + d + "/p.bin --arch mariana -q").exit_code, 0);
  // A binary keeps no line order: on MAVERICK the act queue's words follow
  // the DVE's (docs/CONVENTIONS.md), so the DVE waits for a nop behind it.
  EXPECT_EQ(run_tool("run " + d + "/p.bin --arch maverick -q").exit_code, 3);
}

TEST(ActEngine, DependentActivationsWaitForTheResult) {
  // SPEC §8: an activation reading the previous one's output starts when
  // that result is in SBUF (its latency: N + about 263, TIMING.md [D]);
  // independent ones are their II (N = 512) apart. 1-element ones are 264
  // ACT cycles apart either way ([D]; a stream shorter than 128 cycles holds
  // the issue for its latency, TIMING.md [A]).
  const auto prog = [](bool dependent, unsigned n) {
    std::string p = ".arch sunda\n.engine act\n";
    for (int i = 0; i < 8; ++i) {
      const unsigned src = dependent ? (i % 2 ? 0x1000 : 0x0) : 0x0;
      const unsigned dst = dependent ? (i % 2 ? 0x0 : 0x1000) : 0x1000 + 0x1000 * (i % 4);
      char line[256];
      std::snprintf(line, sizeof line,
                    "activation func=exp channels=128 out_dtype=fp32 src=t3d(sbuf(0, 0x%x), "
                    "num=[%u, 1, 1]) dst=t3d(sbuf(0, 0x%x), num=[%u, 1, 1])\n",
                    src, n, dst, n);
      p += line;
    }
    return p;
  };
  const auto interval = [](const ActRun& r) {  // ACT cycles at 1.4 GHz, after the first two
    std::vector<std::uint64_t> ends;
    std::istringstream in(r.retire);
    for (std::string line; std::getline(in, line);) ends.push_back(std::stoull(line));
    return static_cast<double>(ends.back() - ends[2]) / static_cast<double>(ends.size() - 3) *
           1400.0 / 1e6;
  };
  const ActRun dep = run_act(prog(true, 512)), indep = run_act(prog(false, 512));
  ASSERT_EQ(dep.tool.exit_code, 0) << dep.tool.err;
  EXPECT_NEAR(interval(indep), 512.0, 8.0);
  // Its latency: the 1-element one (264) with 511 more elements streamed.
  EXPECT_NEAR(interval(dep), 264.0 + 511.0, 8.0);
  EXPECT_GT((*engine_row(dep.stats, "act"))["interlock_stall_cycles"].get<std::uint64_t>(), 0u);
  EXPECT_EQ((*engine_row(indep.stats, "act"))["interlock_stall_cycles"], 0);
  EXPECT_NEAR(interval(run_act(prog(true, 1))), 264.0, 264.0 * 0.1);
}

}  // namespace
}  // namespace tpb::e2e

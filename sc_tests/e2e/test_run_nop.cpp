// The wait-only instruction `nop` (SPEC §18, docs/ASM.md): it orders an
// instruction after two queues (on a compute engine and on a DMA queue), the
// race check sees that ordering, a binary keeps each nop on its queue, and a
// timing-only run has the full run's times.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

// Two loads on dma0 and dma1; the DVE copies what both loaded (a nop takes
// the first wait); dma2 stores the copy after a nop waits for the DVE.
// `dve_nop` / `dma_nop`: whether each nop carries its wait (without it, the
// instruction after it is not ordered after that queue).
std::string two_queue_program(bool dve_nop, bool dma_nop) {
  std::string p =
      ".arch mariana\n"
      ".engine dma0\n"
      "dma_copy rows=4 row_bytes=64 src=hbm(0x0, stride=64) dst=sbuf(0, 0x0) update=inc(sem4)\n"
      ".engine dma1\n"
      "dma_copy rows=4 row_bytes=64 src=hbm(0x1000, stride=64) dst=sbuf(0, 0x40) "
      "update=inc(sem5)\n"
      ".engine dve\n";
  p += dve_nop ? "nop wait=ge(sem4, 1)\n" : "nop\n";
  p += "tensor_copy channels=4 out_dtype=fp32 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], "
       "num=[32, 1, 1]) dst=t3d(sbuf(0, 0x200), step=[1, 0, 0], num=[32, 1, 1]) "
       "wait=ge(sem5, 1) update=inc(sem1)\n"
       ".engine dma2\n";
  p += dma_nop ? "nop wait=ge(sem1, 1)\n" : "nop\n";
  p += "dma_copy rows=4 row_bytes=128 src=sbuf(0, 0x200) dst=hbm(0x2000, stride=128)\n";
  return p;
}

// Retire lines of engine `name`: (end ps, mnemonic).
std::vector<std::pair<std::uint64_t, std::string>> retires(const std::string& text,
                                                           const std::string& name) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::uint64_t end = 0, index = 0;
    std::string eng, opcode, mnemonic;
    ls >> end >> eng >> index >> opcode >> mnemonic;
    if (eng == name) out.emplace_back(end, mnemonic);
  }
  return out;
}

TEST(Nop, OrdersAnInstructionAfterTwoQueuesAndTheRaceCheckSeesIt) {
  const std::string d = scratch_dir("nop-order");
  std::ofstream(d + "/p.tpb") << two_queue_program(true, true);
  const ToolResult r = run_tool("run " + d + "/p.tpb -q --racecheck --retire " + d + "/r.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string retire = read_text(d + "/r.txt");
  const auto dma0 = retires(retire, "dma0"), dma1 = retires(retire, "dma1");
  const auto dve = retires(retire, "dve"), dma2 = retires(retire, "dma2");
  ASSERT_EQ(dve.size(), 2u);
  ASSERT_EQ(dma2.size(), 2u);
  EXPECT_EQ(dve[0].second, "nop");
  // The DVE nop retires after the dma0 load, one DVE cycle (833 ps at 1.2 GHz)
  // after the wait is satisfied; the copy after both loads.
  EXPECT_GT(dve[0].first, dma0[0].first);
  EXPECT_LE(dve[0].first - dma0[0].first, 834u);
  EXPECT_GT(dve[1].first, dma1[0].first);
  // The DMA queue's nop completes when the copy has; the store after it.
  EXPECT_EQ(dma2[0].second, "nop");
  EXPECT_GE(dma2[0].first, dve[1].first);
  EXPECT_GT(dma2[1].first, dma2[0].first);
}

TEST(Nop, WithoutItsWaitTheRaceCheckFindsTheMissingOrder) {
  const std::string d = scratch_dir("nop-race");
  std::ofstream(d + "/a.tpb") << two_queue_program(false, true);
  expect_tool("run " + d + "/a.tpb -q --racecheck", 5,
              "no semaphore orders dve[1] tensor_copy (" + d + "/a.tpb:8) after dma0[0] dma_copy");
  // Without the DMA queue's wait the store and the copy race on SBUF 0x200;
  // the race names its sides in the order they ran. Loads and store share DMA
  // engine 0: each queue's per-transfer cost overlaps the others'
  // (CONVENTIONS.md "DMA"), so the store reads before the copy writes.
  std::ofstream(d + "/b.tpb") << two_queue_program(true, false);
  const std::string b = d + "/b.tpb";
  const std::string want = "no semaphore orders dve[1] tensor_copy (" + b +
                           ":8) after dma2[1] dma_copy (" + b + ":11, DMA engine 0): WAR";
  const ToolResult r = expect_tool("run " + b + " -q --racecheck", 5, want);
  EXPECT_NE(r.err.find("bytes 0x200-0x27f"), std::string::npos) << r.err;
}

TEST(Nop, ABinaryKeepsEachNopOnItsQueueAndCheckJudgesWhereItIs) {
  const std::string d = scratch_dir("nop-bin");
  std::ofstream(d + "/p.tpb") << two_queue_program(true, true);
  const ToolResult as = run_tool("asm " + d + "/p.tpb -o " + d + "/p.bin");
  ASSERT_EQ(as.exit_code, 0) << as.err;
  EXPECT_EQ(as.err.find("another queue"), std::string::npos) << as.err;
  const ToolResult dis = run_tool("disasm " + d + "/p.bin");
  ASSERT_EQ(dis.exit_code, 0) << dis.err;
  EXPECT_NE(dis.out.find(".engine dve\nnop wait=ge(sem4, 1)\n"), std::string::npos) << dis.out;
  EXPECT_NE(dis.out.find(".engine dma2\nnop wait=ge(sem1, 1)\n"), std::string::npos) << dis.out;
  const ToolResult text = run_tool("run " + d + "/p.tpb -q --retire " + d + "/rt.txt");
  const ToolResult bin = run_tool("run " + d + "/p.bin -q --retire " + d + "/rb.txt");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(bin.exit_code, 0) << bin.err;
  EXPECT_EQ(read_text(d + "/rb.txt"), read_text(d + "/rt.txt"));
  // A nop naming another queue than the one it is on.
  std::ofstream(d + "/q.tpb") << ".arch mariana\n.engine pe\nnop queue=1\n";
  expect_tool("check " + d + "/q.tpb", 2, "pe[0] nop: INVALID nop_on_its_queue");
  expect_tool("run " + d + "/q.tpb -q", 2, "failed nop_on_its_queue");
  // Every queue executes it, on every generation.
  std::string all = ".arch sunda\n";
  for (const char* e : {"pool", "dve", "pe", "sfu", "dma0", "dma15"})
    all += std::string(".engine ") + e + "\nnop\n";
  std::ofstream(d + "/all.tpb") << all;
  EXPECT_EQ(run_tool("check " + d + "/all.tpb").exit_code, 0);
  const ToolResult ran = run_tool("run " + d + "/all.tpb -q --stats " + d + "/s.json");
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
}

TEST(Nop, TimingOnlyHasTheFullRunsTimes) {
  const std::string d = scratch_dir("nop-timing-only");
  std::ofstream(d + "/p.tpb") << two_queue_program(true, true);
  const ToolResult full = run_tool("run " + d + "/p.tpb -q --retire " + d + "/f.txt");
  const ToolResult fast = run_tool("run " + d + "/p.tpb -q --timing-only --retire " + d + "/t.txt");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_EQ(read_text(d + "/f.txt"), read_text(d + "/t.txt"));
}

}  // namespace
}  // namespace tpb::e2e

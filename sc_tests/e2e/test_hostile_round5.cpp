// Hostile inputs, round five (docs/BAD_INPUT.md): SPEC §18's reductions of a
// source that re-reads its elements past a partition (a broadcast of millions
// of elements) are refused at once, naming the predicate, where they took
// tens of gigabytes and ran on past the wall-clock watchdog.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "sc_tests/e2e/hostile.h"

namespace tpb::e2e {
namespace {

struct Case {
  const char* name;
  const char* text;
};

TEST(HostileRound5, AReductionOfASourcePastAPartitionIsRefusedAtOnce) {
  const std::string d = scratch_dir("h5reduce");
  // 65535 x 100 elements of one broadcast element a partition: 2.6e7 x 128.
  const Case cases[] = {
      {"reduce",
       "tensor_reduce op=add axes=2 channels=128 out_dtype=fp32 "
       "src=t3d(sbuf(0, 0x0), step=[0, 0, 0], num=[65535, 100, 1]) "
       "dst=t3d(sbuf(0, 0x1000))"},
      {"aggr",
       "bn_aggr channels=128 out_dtype=fp32 "
       "src=t3d(sbuf(0, 0x0), step=[0, 0, 0], num=[65535, 100, 3]) "
       "dst=t3d(sbuf(0, 0x1000), num=[2, 1, 1])"},
  };
  for (const Case& c : cases) {
    const std::string p =
        put(d, std::string(c.name) + ".tpb", std::string(".arch mariana\n.engine dve\n") + c.text);
    for (const char* mode : {"", " --timing-only"}) {
      const auto t0 = std::chrono::steady_clock::now();
      const ToolResult r = run_tool("run " + p + " --max-wall-time 5" + mode);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      EXPECT_EQ(r.exit_code, 2) << c.name << mode << ": " << r.err;
      EXPECT_NE(r.err.find("dve instruction 0"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("reduce_src_fits_partition"), std::string::npos) << r.err;
      EXPECT_LT(s, 3.0) << c.name << mode;
    }
    const ToolResult chk = run_tool("check " + p);
    EXPECT_EQ(chk.exit_code, 2) << chk.out << chk.err;
    EXPECT_NE(chk.out.find("reduce_src_fits_partition"), std::string::npos) << chk.out;
  }
  // The largest source a partition holds still runs: 32 KiB of FP32 a partition.
  const std::string ok = put(d, "ok.tpb",
                             ".arch mariana\n.engine dve\ntensor_reduce op=add axes=2 channels=128 "
                             "out_dtype=fp32 src=t3d(sbuf(0, 0x0), step=[0, 0, 0], "
                             "num=[8192, 4, 1]) dst=t3d(sbuf(0, 0x1000))\n");
  const ToolResult r = run_tool("run " + ok);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace tpb::e2e

// The GTKWave save file writer (models/trace/gtkw_writer.h) on a hand-made
// signal list: names as GTKWave names VCD vars, groups and their flags, the
// zoom that fits the run. GTKWave itself loads a real run's save file in
// sc_tests/e2e/test_trace_consumers.cpp.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/trace/gtkw_writer.h"
#include "sc_tests/unit/test_trace_util.h"

namespace tpb::trace {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

TEST(TraceGtkw, PathBesideTheVcd) {
  EXPECT_EQ(gtkw_path_for("out/run.vcd"), "out/run.gtkw");
  EXPECT_EQ(gtkw_path_for("/a.b/run"), "/a.b/run.gtkw");
  EXPECT_EQ(gtkw_path_for("run.VCD"), "run.VCD.gtkw");
}

TEST(TraceGtkw, GroupsFlagsAndNames) {
  const std::vector<Signal> sigs = {
      {"tpb.dve", "opcode", 8, 0},          {"tpb.dve", "busy", 1, 0}, {"tpb.sem", "sem3", 32, 0},
      {"tpb.sbuf.q1", "bytes_read", 64, 0}, {"misc", "clk en", 1, 0},
  };
  const std::string dir = testutil::scratch("gtkw");
  write_gtkw(sigs, dir + "/r.vcd", dir + "/r.gtkw", 537022);
  const std::vector<std::string> got = lines_of(testutil::slurp(dir + "/r.gtkw"));
  // Everything after the header: flags in hex (GTKWave's TR_* bits).
  std::vector<std::string> body;
  bool in_body = false;
  for (const auto& l : got) {
    if (l == "[sst_vpaned_height] 240") {
      in_body = true;
      continue;
    }
    if (l.rfind("[pattern_trace]", 0) == 0) break;
    if (in_body) body.push_back(l);
  }
  const std::vector<std::string> want = {
      // 0x800000 group begin | 0x200 blank; busy first; 0x28 binary, 0x22 hex, 0x24 decimal.
      "@800200", "-dve", "@28", "tpb.dve.busy", "@22", "tpb.dve.opcode[7:0]", "@1000200", "-dve",
      "@800200", "-memories", "@24", "tpb.sbuf.q1.bytes_read[63:0]", "@1000200", "-memories",
      // 0x400000: the semaphores' group closed.
      "@c00200", "-semaphores", "@24", "tpb.sem.sem3[31:0]", "@1400200", "-semaphores",
      // A scope without the top gets it, as write_vcd nests it; blanks -> '_'.
      "@800200", "-other", "@28", "tpb.misc.clk_en", "@1000200", "-other"};
  EXPECT_EQ(body, want);
  EXPECT_EQ(got[3], "[dumpfile] \"" + dir + "/r.vcd\"");
  // 537022 ps in at most 1000 pixels: 2^10 = 1024 ps per pixel -> zoom -10.
  bool zoom_seen = false;
  for (const auto& l : got)
    if (l.rfind("*", 0) == 0) {
      EXPECT_EQ(l.substr(0, 5), "*-10 ") << l;
      zoom_seen = true;
    }
  EXPECT_TRUE(zoom_seen);
}

TEST(TraceGtkw, UnwritablePathThrowsNamingIt) {
  const std::string path = "/nonexistent-tpbsim-dir/r.gtkw";
  try {
    write_gtkw({}, "/tmp/r.vcd", path, 0);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpb::trace

// --load / --dump never cross a partition end and never wrap: a shape or a
// .npy header past what one partition (or partition 127) holds is exit 1
// naming the spec, before or instead of touching memory. Inputs that are not
// files are named as such.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

// A .npy of `rows` x `cols` uint8 whose header may claim more than it holds.
void write_u8_npy(const std::string& path, const std::string& shape, std::size_t bytes) {
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': " + shape + ", }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  out << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xFF) << char(header.size() >> 8)
      << header << std::string(bytes, '\x5a');
}

std::string empty_program(const std::string& dir) {
  const std::string p = dir + "/empty.tpb";
  std::ofstream(p) << ".arch mariana\n";
  return p;
}

TEST(RunMemSpecs, ADumpWhoseRowsWrapIsRefused) {
  const std::string d = scratch_dir("spec-dump-wrap");
  const ToolResult r = run_tool("run " + empty_program(d) +
                                " -q --dump sbuf:1:0:18446744073709551615x4:u8=" + d + "/o.npy");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("run past partition 127"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(d + "/o.npy").good());
}

TEST(RunMemSpecs, ADumpRowPastThePartitionEndIsRefused) {
  const std::string d = scratch_dir("spec-dump-cols");
  const ToolResult r =
      run_tool("run " + empty_program(d) + " -q --dump sbuf:0:0x3ff00:1x512:u8=" + d + "/o.npy");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(
      r.err.find("512 columns of 1 bytes from offset 0x3ff00 run past the end of the partition"),
      std::string::npos)
      << r.err;
  // Columns whose byte count wraps 2^64 are refused the same way.
  const ToolResult w = run_tool("run " + empty_program(d) +
                                " -q --dump sbuf:0:0:1x4611686018427387905:u32=" + d + "/w.npy");
  EXPECT_EQ(w.exit_code, 1) << w.err;
  EXPECT_NE(w.err.find("run past the end"), std::string::npos) << w.err;
}

TEST(RunMemSpecs, ALoadPastThePartitionEndIsRefusedNotSpilled) {
  const std::string d = scratch_dir("spec-load-spill");
  write_u8_npy(d + "/row.npy", "(1, 1024)", 1024);
  // Partition 0 into 1, 127 into the PSUM: the slot's end is the limit.
  for (const char* at : {"sbuf:0:0x3ff00", "sbuf:127:0x3ff00"}) {
    const ToolResult r = run_tool("run " + empty_program(d) + " -q --load " + at + "=" + d +
                                  "/row.npy --dump sbuf:1:0:1x16:u8=" + d + "/next.npy");
    EXPECT_EQ(r.exit_code, 1) << at << ": " << r.err;
    EXPECT_NE(r.err.find(at), std::string::npos) << r.err;  // names the spec
    EXPECT_NE(r.err.find("runs 768 bytes past the end of the partition"), std::string::npos)
        << r.err;
  }
  // The PSUM's 16 KiB partitions: the capacity is the limit, inside the slot.
  const ToolResult p =
      run_tool("run " + empty_program(d) + " -q --load psum:5:0x3f00=" + d + "/row.npy");
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_NE(p.err.find("runs 768 bytes past the end of the partition (16384 bytes)"),
            std::string::npos)
      << p.err;
}

TEST(RunMemSpecs, ANpyHeaderWithHugeRowsFailsAtOnce) {
  const std::string d = scratch_dir("spec-npy-rows");
  write_u8_npy(d + "/huge.npy", "(18446744073709551615, 0)", 0);
  const ToolResult r =
      run_tool("run " + empty_program(d) + " -q --load sbuf:1:0=" + d + "/huge.npy");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(r.err.empty());
}

// A directory where a file is expected is named as such (not a stream
// error), for every input of run, asm and check; exit 1.
TEST(RunInputs, ADirectoryGivenAsAFileIsNamed) {
  const std::string d = scratch_dir("input-dir");
  const std::string prog = empty_program(d);
  for (const std::string& args :
       {"run " + d, "run " + prog + " --timing " + d, "run " + prog + " --load sbuf:0:0=" + d,
        "asm " + d + " -o " + d + "/x.bin", "check " + d}) {
    const ToolResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(d + ": is a directory, not a file"), std::string::npos)
        << args << ": " << r.err;
  }
  const ToolResult missing = run_tool("run " + d + "/nope.tpb");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.tpb: cannot open: no such file"), std::string::npos)
      << missing.err;
}

// Outputs never clobber inputs or each other, and are refused before the run
// (nothing written) when one cannot be created.
TEST(RunOutputs, AnOutputNamingAnInputOrAnotherOutputIsRefused) {
  const std::string d = scratch_dir("out-clash");
  write_u8_npy(d + "/in.npy", "(1, 16)", 16);
  const std::string before = read_text(d + "/in.npy");
  const std::string prog = empty_program(d);
  const ToolResult r = run_tool("run " + prog + " --load sbuf:0:0=" + d + "/in.npy --retire " + d +
                                "/in.npy --stats " + d + "/s.json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--retire " + d + "/in.npy names the input of --load"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_text(d + "/in.npy"), before);        // not truncated
  EXPECT_FALSE(std::ifstream(d + "/s.json").good());  // nothing written
  EXPECT_EQ(r.out.find("ok"), std::string::npos) << r.out;
  // The program itself, and two outputs on one path (spelled differently).
  EXPECT_EQ(run_tool("run " + prog + " --vcd " + prog).exit_code, 1);
  const ToolResult two =
      run_tool("run " + prog + " --stats " + d + "/x.json --vcd " + d + "/./x.json");
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_NE(two.err.find("names the output of --vcd too"), std::string::npos) << two.err;
}

TEST(RunOutputs, AnOutputThatCannotBeCreatedStopsAllBeforeTheRun) {
  const std::string d = scratch_dir("out-uncreatable");
  const ToolResult r = run_tool("run " + empty_program(d) + " --stats " + d + "/s.json --vcd " + d +
                                "/no/such/dir/run.vcd");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--vcd " + d + "/no/such/dir/run.vcd: cannot create"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("nothing written"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(d + "/s.json").good());
  EXPECT_FALSE(std::ifstream(d + "/s.json.tpbsim-tmp").good());
}

TEST(RunOutputs, OutputsAppearWholeUnderTheirNames) {
  const std::string d = scratch_dir("out-whole");
  const ToolResult r = run_tool("run " + source_path("traces/workloads/pipeline/program.tpb") +
                                " -q --stats " + d + "/s.json --retire " + d + "/r.txt --vcd " + d +
                                "/v.vcd --dump-timing " + d + "/t.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"/s.json", "/r.txt", "/v.vcd", "/t.json"}) {
    EXPECT_TRUE(std::ifstream(d + f).good()) << f;
    EXPECT_FALSE(std::ifstream(d + f + std::string(".tpbsim-tmp")).good()) << f;
  }
  const std::string retire = read_text(d + "/r.txt");
  EXPECT_EQ(std::count(retire.begin(), retire.end(), '\n'), 5);  // the pipeline's 5 instructions
}

// A full disk (/dev/full) is exit 1 naming the file, the other outputs are
// still written whole, and stdout does not say ok.
TEST(RunOutputs, AFullDiskIsAnErrorNamingTheFile) {
  const std::string d = scratch_dir("out-full");
  const std::string prog = source_path("traces/workloads/pipeline/program.tpb");
  const ToolResult r = run_tool("run " + prog + " --retire /dev/full --stats " + d + "/s.json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("not written: /dev/full"), std::string::npos) << r.err;
  EXPECT_TRUE(std::ifstream(d + "/s.json").good());
  EXPECT_EQ(r.out.find(": ok,"), std::string::npos) << r.out;
  const ToolResult a = run_tool("asm " + prog + " -o /dev/full");
  EXPECT_EQ(a.exit_code, 1) << a.err;
  EXPECT_NE(a.err.find("cannot write /dev/full"), std::string::npos) << a.err;
}

}  // namespace
}  // namespace tpb::e2e

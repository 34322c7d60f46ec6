// A trace file on its way out (models/trace/trace_output.h): a longer file
// it replaces is cut, a long stream arrives whole (past the chunks whose
// write-back it starts), a device takes it, and a file that cannot be
// created is named.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/trace/trace_output.h"
#include "sc_tests/unit/test_trace_util.h"

namespace tpb::trace {
namespace {

TEST(TraceOutputFile, ReplacesALongerFileWhole) {
  const std::string path = testutil::scratch("trace_output") + "/t.txt";
  std::ofstream(path) << std::string(5000, 'x');
  TraceOutput out(path, "test file");
  out.buf() += "short\n";
  out.close();
  EXPECT_EQ(out.error(), "");
  EXPECT_EQ(testutil::slurp(path), "short\n");
  EXPECT_EQ(out.bytes(), 6u);
}

TEST(TraceOutputFile, ALongStreamArrivesWhole) {
  const std::string path = testutil::scratch("trace_output_long") + "/t.txt";
  std::string expected;
  std::mt19937_64 rng(7);
  {
    TraceOutput out(path, "test file");
    // 40 MiB in pieces of every size up to 300 bytes: many 1 MiB blocks and
    // several write-back chunks.
    while (expected.size() < (std::size_t{40} << 20)) {
      std::string piece(1 + rng() % 300, static_cast<char>('a' + rng() % 26));
      piece.back() = '\n';
      out.buf() += piece;
      expected += piece;
      out.maybe_flush();
    }
    out.close();
    EXPECT_EQ(out.error(), "");
    EXPECT_EQ(out.bytes(), expected.size());
  }
  EXPECT_TRUE(testutil::slurp(path) == expected);
}

TEST(TraceOutputFile, ADeviceTakesTheText) {
  TraceOutput out("/dev/null", "test file");
  out.buf() += std::string(3 << 20, 'y');
  out.maybe_flush();
  out.close();
  EXPECT_EQ(out.error(), "");
  EXPECT_EQ(out.bytes(), std::uint64_t{3} << 20);
}

TEST(TraceOutputFile, AFileThatCannotBeCreatedIsNamed) {
  const std::string path = testutil::scratch("trace_output_bad") + "/no/such/dir/t.vcd";
  try {
    TraceOutput out(path, "VCD file");
    FAIL() << "opened " << path;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "VCD file '" + path + "': cannot open for writing: No such file or directory");
  }
}

}  // namespace
}  // namespace tpb::trace

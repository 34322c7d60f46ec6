// A trace file's text on its way out (models/trace/trace_output.h): the
// decimal digits every time stamp is written with, and the file itself —
// a longer file it replaces is cut, a long stream arrives whole (past the
// chunks whose write-back it starts), a device takes it, and a file that
// cannot be created is named.
#include <gtest/gtest.h>

#include <charconv>
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

std::string decimal(std::uint64_t v) {
  char buf[24];
  return std::string(buf, write_decimal(buf, v));
}

std::string reference(std::uint64_t v) {
  char buf[24];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

TEST(TraceDecimal, EveryDigitCountAndItsEdgesAreStdToChars) {
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 0; v <= 1000; ++v) values.push_back(v);
  // Each power of ten and its neighbours (where the digit count changes),
  // each power of two and its neighbours (where the first guess of the
  // count, from the top bit, changes).
  for (std::uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10)
    for (std::uint64_t v : {p - 1, p, p + 1, 10 * p - 1, 10 * p, 10 * p + 1}) values.push_back(v);
  for (unsigned k = 0; k < 64; ++k) {
    const std::uint64_t p = std::uint64_t{1} << k;
    for (std::uint64_t v : {p - 1, p, p + 1}) values.push_back(v);
  }
  values.push_back(UINT64_MAX);
  values.push_back(UINT64_MAX - 1);
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 200000; ++i) values.push_back(rng() >> (rng() % 64));  // every magnitude
  for (std::uint64_t v : values) ASSERT_EQ(decimal(v), reference(v)) << v;
  EXPECT_EQ(decimal(UINT64_MAX), "18446744073709551615");
  EXPECT_EQ(decimal(10000000000000000000ull), "10000000000000000000");
}

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

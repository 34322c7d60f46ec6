// The SystemVerilog testbenches of platform/cosim/tb, which call the model
// through libtpbsim_dpi (docs/COSIM.md, "Your testbench calls the model"),
// checked from outside: each run's log of streams, source words and the
// RTL's output words is replayed here against the independent TensorDequantize
// reference of sc_tests/sc/test_platform_ref.h (literal code tables and a
// nearest-code search; no call into the model), so a testbench that passed
// because the model and the RTL agreed on a wrong word would fail here. The
// mutant runs must stop at exactly the first word the mutant gets wrong,
// found here from the same reference.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sc_tests/cosim/cosim_test_util.h"
#include "sc_tests/sc/test_platform_ref.h"
#include "sc_tests/scratch_dir.h"

namespace tpb {
namespace {

struct TbRun {
  int exit_code = -1;
  std::string out;
};

using cosimtest::read_text;

std::string scratch() { return testutil::make_scratch_dir("dpi-tb"); }

TbRun run(const std::string& cmd) {
  const std::string out = scratch() + "/out.txt";
  const int status = std::system((cmd + " >" + out + " 2>&1 </dev/null").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(out)};
}

// One stream of the log, per lane its source words and the words it gave.
struct Stream {
  unsigned no = 0, fmt = 0, group = 0, lo = 0, n = 0, steps = 0;
  std::map<unsigned, std::vector<std::uint32_t>> src, out;
};
struct Log {
  std::vector<Stream> streams;
  // The mismatch the testbench reported (E line), if any.
  bool has_error = false;
  unsigned e_stream = 0, e_lane = 0, e_index = 0;
  std::uint32_t e_want = 0, e_got = 0;
  // The last output word of the log: (stream, lane, index).
  unsigned last_stream = 0, last_lane = 0, last_index = 0;
};

Log parse(const std::string& path) {
  Log log;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    char kind = 0;
    ss >> kind;
    if (kind == 'S') {
      Stream s;
      ss >> s.no >> s.fmt >> s.group >> s.lo >> s.n >> s.steps;
      log.streams.push_back(s);
    } else if (kind == 'I' || kind == 'O') {
      unsigned lane = 0, idx = 0;
      std::uint32_t w = 0;
      ss >> lane;
      if (kind == 'O') ss >> idx;
      ss >> std::hex >> w;
      Stream& s = log.streams.back();
      auto& v = kind == 'I' ? s.src[lane] : s.out[lane];
      if (kind == 'O') {
        EXPECT_EQ(idx, v.size()) << line;
        log.last_stream = s.no, log.last_lane = lane, log.last_index = idx;
      }
      v.push_back(w);
    } else if (kind == 'E') {
      log.has_error = true;
      ss >> log.e_stream >> log.e_lane >> log.e_index >> std::hex >> log.e_want >> log.e_got;
    }
  }
  return log;
}

std::string tb_dequant(unsigned seed, unsigned streams, const std::string& log,
                       const std::string& extra = "") {
  return std::string(TPBSIM_TB_DEQUANT) + " +seed=" + std::to_string(seed) +
         " +streams=" + std::to_string(streams) + " +lanes_log=" + log + " " + extra;
}

class DequantTestbench : public ::testing::TestWithParam<unsigned> {};

TEST_P(DequantTestbench, PassesAndEveryWordTheRtlGaveIsTheIndependentReference) {
  const std::string log_path = scratch() + "/lanes.log";
  const TbRun r = run(tb_dequant(GetParam(), 200, log_path));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tb_dequant: PASS: 200 streams"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 0 mismatches"), std::string::npos) << r.out;
  const Log log = parse(log_path);
  ASSERT_EQ(log.streams.size(), 200u);
  EXPECT_FALSE(log.has_error);
  std::set<std::pair<unsigned, unsigned>> kinds;
  bool partial = false, full = false, offset = false;
  std::uint64_t words = 0;
  for (const Stream& s : log.streams) {
    kinds.insert({s.fmt, s.group});
    partial |= s.n < 8;
    full |= s.n == 8;
    offset |= s.lo > 0;
    for (unsigned l = 0; l < 8; ++l) {
      const bool active = l >= s.lo && l < s.lo + s.n;
      if (!active) {
        EXPECT_EQ(s.src.count(l) + s.out.count(l), 0u) << "stream " << s.no << " lane " << l;
        continue;
      }
      const auto& src = s.src.at(l);
      const std::vector<std::uint32_t> want = platref::dequant_ref(s.fmt, s.group, src);
      const auto it = s.out.find(l);
      ASSERT_NE(it, s.out.end()) << "stream " << s.no << " lane " << l;
      ASSERT_EQ(it->second.size(), want.size()) << "stream " << s.no << " lane " << l;
      const bool e4m3 = s.fmt == 3 || s.fmt == 4;
      for (std::size_t k = 0; k < want.size(); ++k)
        ASSERT_TRUE(platref::fp8_word_equal(e4m3, it->second[k], want[k]))
            << "stream " << s.no << " lane " << l << " word " << k << std::hex << ": 0x"
            << it->second[k] << ", reference 0x" << want[k];
      words += want.size();
    }
  }
  // The whole space: every format x group, partial and full lane ranges,
  // ranges that do not start at lane 0.
  EXPECT_EQ(kinds.size(), 7u);
  EXPECT_TRUE(partial && full && offset);
  EXPECT_NE(r.out.find(std::to_string(words) + " output words compared"), std::string::npos)
      << r.out << " (log: " << words << " words)";
}

INSTANTIATE_TEST_SUITE_P(Seeds, DequantTestbench, ::testing::Values(1u, 2u, 3u));

// The first output word of the log that differs from the reference (time
// order: the log writes each clock's words lane by lane).
struct FirstWrong {
  bool found = false;
  unsigned stream = 0, lane = 0, index = 0;
  std::uint32_t want = 0, got = 0;
};
FirstWrong first_wrong(const std::string& log_path) {
  // Replay the O lines in file order.
  FirstWrong f;
  std::ifstream in(log_path);
  const Log log = parse(log_path);
  std::map<unsigned, const Stream*> by_no;
  for (const Stream& s : log.streams) by_no[s.no] = &s;
  std::map<std::pair<unsigned, unsigned>, std::vector<std::uint32_t>> refs;
  unsigned stream = 0;
  for (std::string line; std::getline(in, line) && !f.found;) {
    std::istringstream ss(line);
    char kind = 0;
    ss >> kind;
    if (kind == 'S') ss >> stream;
    if (kind != 'O') continue;
    unsigned lane = 0, idx = 0;
    std::uint32_t w = 0;
    ss >> lane >> idx >> std::hex >> w;
    const Stream& s = *by_no.at(stream);
    auto& want = refs[{stream, lane}];
    if (want.empty()) want = platref::dequant_ref(s.fmt, s.group, s.src.at(lane));
    if (!platref::fp8_word_equal(s.fmt == 3 || s.fmt == 4, w, want.at(idx)))
      f = {true, stream, lane, idx, want[idx], w};
  }
  return f;
}

class DequantMutant : public ::testing::TestWithParam<const char*> {};

TEST_P(DequantMutant, IsCaughtAtItsFirstWrongWord) {
  const std::string log_path = scratch() + "/lanes.log";
  const TbRun r = run(tb_dequant(7, 400, log_path, std::string("+mutant=") + GetParam()));
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const FirstWrong f = first_wrong(log_path);
  ASSERT_TRUE(f.found) << "the log has no wrong word";
  const Log log = parse(log_path);
  ASSERT_TRUE(log.has_error) << r.out;
  EXPECT_EQ(log.e_stream, f.stream);
  EXPECT_EQ(log.e_lane, f.lane);
  EXPECT_EQ(log.e_index, f.index);
  EXPECT_EQ(log.e_want, f.want);
  EXPECT_EQ(log.e_got, f.got);
  // It stopped there: no output word after it.
  EXPECT_EQ(log.last_stream, f.stream);
  EXPECT_EQ(log.last_lane, f.lane);
  EXPECT_EQ(log.last_index, f.index);
  char want[160];
  std::snprintf(want, sizeof want, "lane %u, word %u: expected 0x%08x, got 0x%08x", f.lane, f.index,
                f.want, f.got);
  EXPECT_NE(r.out.find(std::string("tb_dequant: MISMATCH at ")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(want), std::string::npos) << r.out << "\nwant: " << want;
}

INSTANTIATE_TEST_SUITE_P(Mutants, DequantMutant, ::testing::Values("rne", "nf4"));

TEST(DequantTestbenchArgs, ABadPlusargIsExit3) {
  const TbRun r = run(std::string(TPBSIM_TB_DEQUANT) + " +mutant=bogus");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("+mutant=bogus is not rne or nf4"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------
// tb_check: tpb_dpi_check against `tpbsim check` on random words.

TEST(CheckTestbench, EveryVerdictOnRandomWordsIsTheClis) {
  const std::string dir = scratch();
  const TbRun r = run(std::string(TPBSIM_TB_CHECK) + " +tpbsim=" + TPBSIM_BIN + " +dir=" + dir +
                      " +seed=5 +words=1500");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tb_check: PASS: 1500 words x 4 generations, 6000 verdicts"),
            std::string::npos)
      << r.out;
  // Valid words and invalid ones, and many predicates named.
  const std::string mariana = read_text(dir + "/tb_check_mariana.out");
  EXPECT_NE(mariana.find(": ok\n"), std::string::npos);
  std::set<std::string> verdicts;
  std::istringstream ss(mariana);
  for (std::string line; std::getline(ss, line);)
    if (line.find("INVALID ") != std::string::npos)
      verdicts.insert(line.substr(line.find("INVALID ")));
  EXPECT_GT(verdicts.size(), 50u);
}

TEST(CheckTestbench, AVerdictThatDiffersIsCaughtAndNamed) {
  // A `tpbsim` whose check gives word 5 of each program (its 6th output line) a made-up verdict.
  const std::string dir = scratch();
  const std::string fake = dir + "/fake_tpbsim";
  std::ofstream(fake) << "#!/bin/sh\n'" << TPBSIM_BIN
                      << "' \"$@\" | sed -E '6s/: (ok|INVALID .*)$/: INVALID made_up/'\n";
  ASSERT_EQ(std::system(("chmod +x " + fake).c_str()), 0);
  const TbRun r =
      run(std::string(TPBSIM_TB_CHECK) + " +tpbsim=" + fake + " +dir=" + dir + " +words=50");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("tb_check: MISMATCH on sunda, word 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tpbsim check says \"INVALID made_up\""), std::string::npos) << r.out;
}

TEST(CheckTestbench, WithoutTheCliItIsExit3) {
  const TbRun r = run(TPBSIM_TB_CHECK);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("+tpbsim=PATH is required"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tpb

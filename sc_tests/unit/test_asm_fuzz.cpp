// Malformed program text never crashes the assembler: every mutation of the
// shipped example programs either parses or is rejected with an AsmError that
// names a line and column inside the text (run under ASan/UBSan by make asan).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/isa/checker.h"
#include "models/isa/program.h"

namespace {

std::vector<std::string> example_texts() {
  std::vector<std::string> out;
  for (const char* dir : {"traces/examples", "traces/workloads/demo"}) {
    const std::filesystem::path p = std::filesystem::path(TPB_SOURCE_DIR) / dir;
    for (const auto& e : std::filesystem::directory_iterator(p))
      if (e.path().extension() == ".tpb") {
        std::ifstream in(e.path());
        std::stringstream ss;
        ss << in.rdbuf();
        out.push_back(ss.str());
      }
  }
  std::sort(out.begin(), out.end());
  return out;
}

int count_lines(const std::string& s) {
  return 1 + static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

TEST(AsmFuzz, MutatedExamplesParseOrFailWithALocation) {
  const std::vector<std::string> texts = example_texts();
  ASSERT_GE(texts.size(), 10u);
  const std::string alphabet = "0123456789abcdefx_=(),[]{}.#\\ \n\t-+rsemgpulbt\"'\x01\xff";
  std::mt19937 rng(2026);
  unsigned parsed = 0, rejected = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string t = texts[rng() % texts.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      const std::size_t at = rng() % t.size();
      switch (rng() % 4) {
        case 0:  // replace
          t[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:  // insert
          t.insert(t.begin() + static_cast<std::ptrdiff_t>(at), alphabet[rng() % alphabet.size()]);
          break;
        case 2:  // delete a run
          t.erase(at, 1 + rng() % 8);
          break;
        default: {  // duplicate a run (repeated fields, long numbers)
          const std::size_t len = std::min<std::size_t>(1 + rng() % 16, t.size() - at);
          t.insert(at, t.substr(at, len));
        }
      }
    }
    try {
      const tpb::isa::Program p = tpb::isa::parse_program(t, "fuzz.tpb");
      ++parsed;
      // Whatever parsed gets a verdict on every generation.
      for (const auto& q : p.queues)
        for (const auto& inst : q)
          for (auto a : {tpb::isa::Arch::Sunda, tpb::isa::Arch::Mariana})
            (void)tpb::isa::check_instruction(inst.raw, a);
    } catch (const tpb::isa::AsmError& e) {
      ++rejected;
      ASSERT_EQ(e.loc().file, "fuzz.tpb");
      ASSERT_GE(e.loc().line, 1);
      ASSERT_LE(e.loc().line, count_lines(t));
      ASSERT_GE(e.loc().col, 1);
      ASSERT_FALSE(e.message().empty());
    }
  }
  // Both outcomes occur: the mutations are neither all harmless nor all fatal.
  EXPECT_GT(parsed, 100u);
  EXPECT_GT(rejected, 1000u);
}

}  // namespace

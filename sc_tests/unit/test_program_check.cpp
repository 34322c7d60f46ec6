// isa::check_program_text / words / file (models/isa/program_check.h): a
// whole program's verdicts as data, the same as `tpbsim check` prints.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/isa/asm.h"
#include "models/isa/program.h"
#include "models/isa/program_check.h"

namespace {

using namespace tpb::isa;

const std::string kSource = TPB_SOURCE_DIR;

TEST(ProgramCheck, InvalidExampleFailuresAreTheContractsOwn) {
  const ProgramCheck c = check_program_file(kSource + "/traces/examples/invalid.tpb", Arch::Cayman);
  ASSERT_FALSE(c.failures.empty());
  EXPECT_EQ(c.arch, Arch::Cayman);
  const InstructionCheck& f = c.failures[0];
  EXPECT_EQ(f.loc.line, 9);
  EXPECT_EQ(f.engine, Engine::Pool);
  EXPECT_EQ(f.index, 0u);
  EXPECT_EQ(f.opcode, 0x7B);
  EXPECT_EQ(std::vector<std::string>(f.result.failed.begin(), f.result.failed.end()),
            (std::vector<std::string>{"has_valid_group_size",
                                      "s3d3_tens_dequant_element_count_check_t3d"}));
  // Every failure is what the checker says of its word alone.
  const Program p = load_program(kSource + "/traces/examples/invalid.tpb");
  std::size_t words = 0;
  for (const auto& q : p.queues) words += q.size();
  EXPECT_EQ(c.checked, words);  // every instruction, each once
  for (const InstructionCheck& x : c.failures) {
    const auto& q = p.queues[static_cast<unsigned>(x.engine)];
    ASSERT_LT(x.index, q.size());
    EXPECT_EQ(check_instruction(q[x.index].raw, Arch::Cayman).failed, x.result.failed);
  }
}

TEST(ProgramCheck, TextWordsAndArchChoice) {
  const std::string text = ".arch cayman\n.engine pool\n.raw " + std::string(128, '0') + "\n";
  const ProgramCheck t = check_program_text(text, "t.tpb", std::nullopt);
  EXPECT_EQ(t.arch, Arch::Cayman);  // the program's .arch
  ASSERT_EQ(t.failures.size(), 1u);
  EXPECT_EQ(t.failures[0].loc.line, 3);
  EXPECT_EQ(t.failures[0].word, 0u);
  EXPECT_EQ(check_program_text(text, "t.tpb", Arch::Maverick).arch, Arch::Maverick);
  const std::vector<std::uint8_t> words(128, 0);
  const ProgramCheck w = check_program_words(words.data(), words.size(), "w.bin", Arch::Mariana);
  ASSERT_EQ(w.failures.size(), 2u);
  EXPECT_EQ(w.failures[1].loc.line, 0);
  EXPECT_EQ(w.failures[1].word, 1u);
  EXPECT_EQ(w.failures[1].index, 1u);
  EXPECT_THROW(check_program_words(words.data(), 65, "w.bin", Arch::Mariana),
               std::invalid_argument);
  // A DMA descriptor (0xd0) in a binary goes to dma0, as a binary file sends it,
  // and is judged there (an all-zero descriptor has no rows).
  std::vector<std::uint8_t> dma(128, 0);
  dma[64] = 0xd0;
  const ProgramCheck d = check_program_words(dma.data(), dma.size(), "d.bin", Arch::Mariana);
  ASSERT_EQ(d.failures.size(), 2u);
  EXPECT_EQ(d.failures[1].engine, Engine::Dma0);
  EXPECT_EQ(d.failures[1].word, 1u);
  EXPECT_EQ(d.failures[1].index, 0u);
  EXPECT_THROW(check_program_text("nonsense\n", "x.tpb", std::nullopt), AsmError);
  EXPECT_EQ(mnemonic_or_opcode(0x7B), "tensor_dequantize");
  EXPECT_EQ(mnemonic_or_opcode(0x00), "opcode 0x00");
}

}  // namespace

// isa::check_program_text / words / file (models/isa/program_check.h): a
// whole program's verdicts as data, the same as `tpbsim check` prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
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
  EXPECT_EQ(f.engine, Queue::Pool);
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
  // A DMA descriptor (0xd0) goes to dma0 as a binary file's does, and is judged.
  std::vector<std::uint8_t> dma(128, 0);
  dma[64] = 0xd0;
  const ProgramCheck d = check_program_words(dma.data(), dma.size(), "d.bin", Arch::Mariana);
  ASSERT_EQ(d.failures.size(), 2u);
  EXPECT_EQ(d.failures[1].engine, Queue::Dma0);
  EXPECT_EQ(d.failures[1].index, 0u);
  const auto& f = d.failures[1].result.failed;
  EXPECT_NE(std::find(f.begin(), f.end(), std::string_view("dma_valid_num_rows")), f.end());
  EXPECT_THROW(check_program_text("nonsense\n", "x.tpb", std::nullopt), AsmError);
  EXPECT_EQ(mnemonic_or_opcode(0x7B), "tensor_dequantize");
  EXPECT_EQ(mnemonic_or_opcode(0x00), "opcode 0x00");
}

// Where an instruction is: a DMA queue executes dma_copy only, a compute
// engine its own opcodes; a descriptor's queue byte names the queue it is on
// (check says what the run faults on).
std::vector<std::string> failed(const ProgramCheck& c, std::size_t i = 0) {
  if (c.failures.size() <= i) return {};
  const auto& f = c.failures[i].result.failed;
  return std::vector<std::string>(f.begin(), f.end());
}

TEST(ProgramCheck, AnInstructionOnAQueueThatDoesNotExecuteItIsInvalid) {
  const std::string dma = "dma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0)";
  const std::string copy =
      "tensor_copy channels=1 out_dtype=bf16 src=t3d(sbuf(0, 0x0), num=[4, 1, 1]) "
      "dst=t3d(sbuf(0, 0x100), num=[4, 1, 1])";
  using V = std::vector<std::string>;
  auto check = [](const std::string& text) {
    return check_program_text(".arch mariana\n" + text + "\n", "p.tpb", std::nullopt);
  };
  EXPECT_EQ(failed(check(".engine pool\n" + dma)), V{"queue_executes_opcode"});
  EXPECT_EQ(failed(check(".engine sfu\n" + dma)), V{"queue_executes_opcode"});
  EXPECT_EQ(failed(check(".engine dma3\n" + copy)), V{"queue_executes_opcode"});
  EXPECT_EQ(failed(check(".engine pe\n" + copy)), V{"queue_executes_opcode"});
  EXPECT_TRUE(check(".engine dve\n" + copy).failures.empty());
  EXPECT_TRUE(check(".engine dma15\n" + dma).failures.empty());
  EXPECT_EQ(failed(check(".engine dma3\n" + dma + " queue=5")), V{"dma_copy_on_its_queue"});
  EXPECT_TRUE(check(".engine dma3\n" + dma + " queue=3").failures.empty());
  EXPECT_EQ(failed(check(".engine dma3\n" + dma + " queue=16")), V{"dma_valid_queue"});
  EXPECT_TRUE(queue_executes_opcode(Queue::Pool, RawInst{}));  // unknown: has_known_opcode's
}

// A binary keeps each descriptor's queue: the `queue` byte is the .engine it
// was written under, and a binary sends the word there (disasm shows it).
TEST(ProgramCheck, ABinaryKeepsEachDescriptorsQueue) {
  const Program p = parse_program(
      ".engine dma7\ndma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0)\n"
      ".engine dma12\ndma_copy rows=1 row_bytes=64 src=hbm(0x40) dst=sbuf(1, 0x0)\n"
      ".engine dma2\ndma_copy rows=1 row_bytes=64 src=hbm(0x80) dst=sbuf(2, 0x0) queue=9\n",
      "p.tpb");
  const std::vector<std::uint8_t> bin = to_binary(p);
  ASSERT_EQ(bin.size(), 3u * kInstBytes);
  EXPECT_EQ(bin[15], 9u);  // dma2's word (engine order) names queue 9
  EXPECT_EQ(bin[64 + 15], 7u);
  EXPECT_EQ(bin[128 + 15], 12u);
  const Program b = parse_binary(bin, "p.bin");
  EXPECT_EQ(b.queues[static_cast<unsigned>(Queue::Dma7)].size(), 1u);
  EXPECT_EQ(b.queues[static_cast<unsigned>(Queue::Dma12)].size(), 1u);
  EXPECT_EQ(b.queues[static_cast<unsigned>(Queue::Dma9)].size(), 1u);
  EXPECT_EQ(b.queues[static_cast<unsigned>(Queue::Dma2)].size(), 0u);
  const std::string text = disassemble(b);
  EXPECT_NE(text.find(".engine dma7\ndma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("queue="), std::string::npos) << text;
  EXPECT_EQ(to_binary(parse_program(text, "q.tpb")), to_binary(b));
  // A word under another queue than its byte names round-trips as text.
  const std::string mixed = disassemble(p);
  EXPECT_NE(mixed.find(".engine dma2\ndma_copy rows=1 row_bytes=64 src=hbm(0x80) "
                       "dst=sbuf(2, 0x0) queue=9\n"),
            std::string::npos)
      << mixed;
  EXPECT_EQ(to_binary(parse_program(mixed, "m.tpb")), bin);
}

// An HBM offset is a u64 (docs/ASM.md): 2^63 .. 2^64 - 1 assemble (and fail
// the capacity predicate, not the syntax); past 2^64 is too large.
TEST(ProgramCheck, HbmOffsetsAreU64) {
  const Program p = parse_program(
      ".engine dma0\ndma_copy rows=1 row_bytes=64 src=hbm(0x8000000000000000) dst=sbuf(0, 0x0)\n"
      "dma_copy rows=1 row_bytes=64 src=hbm(18446744073709551615) dst=sbuf(0, 0x0)\n",
      "p.tpb");
  const auto& q = p.queues[static_cast<unsigned>(Queue::Dma0)];
  ASSERT_EQ(q.size(), 2u);
  std::uint64_t a = 0, b = 0;
  std::memcpy(&a, q[0].raw.data() + 32, 8);
  std::memcpy(&b, q[1].raw.data() + 32, 8);
  EXPECT_EQ(a, std::uint64_t{1} << 63);
  EXPECT_EQ(b, UINT64_MAX);
  EXPECT_NE(disassemble(p).find("hbm(0x8000000000000000)"), std::string::npos) << disassemble(p);
  EXPECT_EQ(to_binary(parse_program(disassemble(p), "d.tpb")), to_binary(p));
  const ProgramCheck c = check_program_text(disassemble(p), "d.tpb", Arch::Mariana);
  ASSERT_EQ(c.failures.size(), 2u);
  EXPECT_EQ(failed(c), std::vector<std::string>{"dma_hbm_in_capacity(src)"});
  for (const char* bad : {"hbm(0x10000000000000000)", "hbm(-1)", "hbm(18446744073709551616)"}) {
    try {
      parse_program(std::string(".engine dma0\ndma_copy rows=1 row_bytes=64 src=") + bad +
                        " dst=sbuf(0, 0x0)\n",
                    "p.tpb");
      ADD_FAILURE() << bad;
    } catch (const AsmError& e) {
      EXPECT_TRUE(e.message().find("too large") != std::string::npos ||
                  e.message().find("out of range") != std::string::npos)
          << e.message();
    }
  }
  // Anywhere else a number past 2^63 - 1 is still too large.
  EXPECT_THROW(parse_program(".engine pool\ntensor_dequantize fmt=e2m1_to_e5m2 channels="
                             "9223372036854775808 src=t3d(sbuf(0, 0x0)) dst=t3d(sbuf(0, 0x100))\n",
                             "p.tpb"),
               AsmError);
}

}  // namespace

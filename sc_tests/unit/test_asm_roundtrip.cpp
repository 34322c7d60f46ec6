// Disassembler: parse_program(disassemble(p)) reproduces every word exactly,
// for hand-written programs and for random words of every opcode byte value
// (100k per known opcode: structured so every pattern form, marker and event
// form is exercised, plus fully random bytes).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "models/isa/asm.h"
#include "models/isa/encodings.h"
#include "models/isa/opcode_table.h"
#include "models/isa/program.h"
#include "models/isa/sanitizer.h"

namespace tpb::isa {
namespace {

// Offsets of the 16-byte pattern operands of an opcode: its mnemonic form's
// pattern fields (opcode table), so an opcode given a mnemonic form later is
// covered without an edit here. Cross-checked against the structs of
// encodings.h for the opcodes it has today (PatternOffsetsFollowTheStructs).
std::vector<std::size_t> pattern_offsets(std::uint8_t op) {
  std::vector<std::size_t> out;
  const OpcodeInfo* row = opcode_info(op);
  if (row && row->asm_fields)
    for (const AsmField& f : *row->asm_fields)
      if (f.kind == AsmFieldKind::Mem3D || f.kind == AsmFieldKind::Mem1D) out.push_back(f.off);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AsmRoundTrip, PatternOffsetsFollowTheStructs) {
  using V = std::vector<std::size_t>;
  EXPECT_EQ(pattern_offsets(0x7b), (V{offsetof(S3D3TensDequant, src_mem_pattern),
                                      offsetof(S3D3TensDequant, dst_mem_pattern)}));
  EXPECT_EQ(pattern_offsets(0xe3),
            (V{offsetof(S3DMX1Quant, src_mem_pattern), offsetof(S3DMX1Quant, dst_mem_pattern)}));
  EXPECT_EQ(pattern_offsets(0x09), (V{offsetof(SMX1Lw, src_mem_pattern)}));
  EXPECT_EQ(pattern_offsets(0x0a),
            (V{offsetof(SMX1D3Mm, src_mem_pattern), offsetof(SMX1D3Mm, dst_mem_pattern)}));
  EXPECT_EQ(pattern_offsets(0x01), (V{offsetof(S3Lw, src_mem_pattern)}));
  EXPECT_EQ(pattern_offsets(0x02),
            (V{offsetof(S3D3Mm, src_mem_pattern), offsetof(S3D3Mm, dst_mem_pattern)}));
}

// A random word biased toward the interesting encodings: pattern markers
// (IMM, ADDR_REG with small register numbers, SHAPE_REG, ADDR_SHAPE_REG,
// MXTENSOR_V2, INDIRECT, random), event modes 0..3, default header, zero
// reserved bytes; one word in four is fully random.
RawInst random_word(std::mt19937_64& rng, std::uint8_t op) {
  RawInst r;
  for (auto& b : r) b = static_cast<std::uint8_t>(rng());
  r[0] = op;
  if (rng() % 4 == 0) return r;
  if (rng() % 2) r[1] = kInstWordLen;
  if (rng() % 2) r[2] = r[3] = 0;
  r[4] = static_cast<std::uint8_t>(rng() % 4);
  r[6] = static_cast<std::uint8_t>(rng() % 4);
  if (rng() % 2) r[5] &= 63;
  if (rng() % 2) r[7] &= 63;
  static const std::uint8_t kTop[] = {0x00, 0x80, 0x40, 0xC0, 0x08, 0x10};
  for (std::size_t off : pattern_offsets(op)) {
    const unsigned pick = static_cast<unsigned>(rng() % 7);
    if (pick < 6) {
      r[off + 3] = static_cast<std::uint8_t>(kTop[pick] | (r[off + 3] & 0x07));
      if ((pick == 1 || pick == 3) && rng() % 2) {  // a register number
        r[off + 0] &= 31;
        r[off + 1] = r[off + 2] = 0;
        r[off + 3] = kTop[pick];
      }
    }
  }
  // Zero everything that is not header/events/pattern/1-byte field half the time
  // by clearing a random run (exercises default printing of reserved bytes).
  if (rng() % 2) {
    const std::size_t a = 12 + rng() % 52;
    const std::size_t n = rng() % 16;
    for (std::size_t i = a; i < std::min<std::size_t>(64, a + n); ++i) {
      bool in_pattern = false;
      for (std::size_t off : pattern_offsets(op)) in_pattern |= i >= off && i < off + 16;
      if (!in_pattern) r[i] = 0;
    }
  }
  return r;
}

void check_batch(const std::vector<RawInst>& words) {
  std::string text;
  for (const auto& w : words) text += disassemble_inst(w) + "\n";
  Program p;
  try {
    p = parse_program(text, "rt.tpb");
  } catch (const AsmError& e) {
    const int line = e.loc().line;
    FAIL() << format_diagnostic(e) << "\n  line: "
           << (line > 0 ? disassemble_inst(words[static_cast<std::size_t>(line - 1)]) : "");
  }
  ASSERT_EQ(p.queues[0].size(), words.size());
  for (std::size_t i = 0; i < words.size(); ++i)
    if (p.queues[0][i].raw != words[i]) {
      FAIL() << "word " << i << " differs after round trip:\n  " << disassemble_inst(words[i])
             << "\n  " << disassemble_inst(p.queues[0][i].raw);
    }
}

// 600,000 random words in all, shared by the rows (so the test's cost stays
// put as rows are added: about the 100,000 of each of the nine rows it had,
// the later rows' words being longer text); under ASan / UBSan (make asan) a
// tenth, at a cost the sanitizer stage of CI can carry.
constexpr int kRoundTripWords = kAddressSanitizer ? 60000 : 600000;
constexpr int kBatchWords = 5000;

TEST(AsmRoundTrip, KnownOpcodes600kWords) {
  std::mt19937_64 rng(0x7b7b);
  // Every opcode of the table (a row added later is covered too), but the
  // TQUANT block word: its text form has its own round-trip tests
  // (test_sfu_tquant_block.cpp), and random counts of up to 255 bindings
  // make each word's text thousands of statements long.
  const int rows = static_cast<int>(opcode_table().size()) - 1;
  const int batches = std::max(1, kRoundTripWords / (rows * kBatchWords));
  for (const OpcodeInfo& row : opcode_table()) {
    if (row.opcode == Opcode::Tquant) continue;
    const std::uint8_t op = row.code();
    for (int batch = 0; batch < batches; ++batch) {
      std::vector<RawInst> words;
      for (int i = 0; i < kBatchWords; ++i) words.push_back(random_word(rng, op));
      check_batch(words);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(AsmRoundTrip, EveryOpcodeByteValue) {
  std::mt19937_64 rng(42);
  for (unsigned op = 0; op < 256; ++op) {
    std::vector<RawInst> words;
    for (int i = 0; i < 400; ++i) words.push_back(random_word(rng, static_cast<std::uint8_t>(op)));
    check_batch(words);
    if (HasFatalFailure()) return;
  }
}

TEST(AsmRoundTrip, UnknownOpcodesAreRaw) {
  RawInst r{};
  r[0] = 0xbe;
  r[63] = 0x5a;
  const std::string s = disassemble_inst(r);
  EXPECT_EQ(s.rfind(".raw be 00", 0), 0u) << s;
  EXPECT_EQ(s.substr(s.size() - 3), " 5a");
}

TEST(AsmRoundTrip, CanonicalTextOfAValidDequant) {
  // The disassembly prints only non-default fields, in a fixed order.
  const std::string text =
      "tensor_dequantize fmt=e2m1_to_e5m2 channels=32 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], "
      "num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[32, 1, 1]) "
      "wait=ge(sem3, 1) update=inc(sem4)";
  const Program p = parse_program(text, "c.tpb");
  EXPECT_EQ(disassemble_inst(p.queues[0][0].raw), text);
}

TEST(AsmRoundTrip, WholeProgramKeepsEnginesRegsArch) {
  const std::string text =
      ".arch cayman\n"
      ".reg dve r4 = 0x10\n"
      ".engine dve\n"
      "quantize_mx channels=32 out_dtype=fp8_e4m3 src=t3d(0) dst=mx1d(data=0, scale=0x100)\n"
      ".engine pool\n"
      "tensor_dequantize fmt=4 channels=2 src=t3d(0) dst=t3d(0x40) debug_cmd=1 debug_hint=7\n";
  const Program p = parse_program(text, "w.tpb");
  const std::string d = disassemble(p);
  const Program q = parse_program(d, "w2.tpb");
  ASSERT_TRUE(q.arch.has_value());
  EXPECT_EQ(*q.arch, Arch::Cayman);
  ASSERT_EQ(q.regs.size(), 1u);
  EXPECT_EQ(q.regs[0].engine, Queue::Dve);
  EXPECT_EQ(q.regs[0].reg, 4u);
  EXPECT_EQ(q.regs[0].value, 0x10u);
  for (unsigned e = 0; e < kNumQueues; ++e) {
    ASSERT_EQ(p.queues[e].size(), q.queues[e].size());
    for (std::size_t i = 0; i < p.queues[e].size(); ++i)
      EXPECT_EQ(p.queues[e][i].raw, q.queues[e][i].raw);
  }
}

}  // namespace
}  // namespace tpb::isa

// The TQUANT block syntax and its 64-byte word (seed 002, docs/ASM.md): the
// seed's example line assembles to the documented bytes and disassembles
// back to itself; the multi-line form gives the same word; blocks go to the
// SFU queue; every encodable binding round-trips.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "models/isa/asm.h"
#include "models/isa/encodings.h"
#include "models/isa/program.h"
#include "models/isa/tquant_block.h"

using namespace tpb::isa;

namespace {

const char* kExample =
    "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=16; B.IOT T1, mask=1111, <last>, "
    "->T0<1>; BSTOP";

TEST(TquantBlock, SeedExampleBytes) {
  const RawInst w = assemble_statement(kExample, SourceLoc{"t", 1, 1});
  RawInst want{};
  want[0] = 0x6a;   // opcode
  want[1] = 16;     // inst_word_len
  want[12] = 0x6a;  // selector 0x06A, little-endian
  want[13] = 0x00;
  want[14] = 3;    // Mode
  want[15] = 10;   // Function
  want[16] = 1;    // BSTART DataType FP32
  want[17] = 1;    // one B.DATR
  want[18] = 4;    // S8
  want[19] = 0;    // RNE
  want[20] = 1;    // Sat
  want[25] = 0x1;  // LB0 written
  want[28] = 16;   // LB0
  want[38] = 1;    // one B.IOT
  want[40] = 1;    // one source
  want[41] = 1;    // T1
  want[43] = 1;    // one destination
  want[44] = 0;    // T0
  want[46] = 1;    // TSize 1
  want[48] = 0xF;  // mask 1111
  want[50] = 1;    // <last>
  EXPECT_EQ(w, want);
  EXPECT_EQ(disassemble_inst(w), kExample);
}

TEST(TquantBlock, MultiLineFormAndSfuQueue) {
  const std::string text =
      ".engine pool\n"
      "BSTART.SFU TQUANT, FP32\n"
      "  B.DATR S8, RNE, Sat=1   # comment\n"
      "  B.DIM LB0=16;\n"
      "  B.IOT T1, mask=1111, <last>, \\\n"
      "        ->T0<1>\n"
      "BSTOP\n"
      "BSTART.SFU TQUANT, FP32; B.DATR U8, RMM, Sat=0; B.DIM LB0=4; B.DIM LB1=2; B.DIM LB2=8; "
      "B.IOR r3, r4; B.IOT T2, mask=1, <last>, ->T5<2>; BSTOP\n";
  const Program p = parse_program(text, "m.tpb");
  ASSERT_EQ(p.queues[static_cast<unsigned>(Queue::Sfu)].size(), 2u);
  EXPECT_TRUE(p.queues[static_cast<unsigned>(Queue::Pool)].empty());
  EXPECT_EQ(p.queues[3][0].raw, assemble_statement(kExample, SourceLoc{"t", 1, 1}));
  EXPECT_EQ(p.queues[3][0].loc.line, 2);
  const std::string second = disassemble_inst(p.queues[3][1].raw);
  EXPECT_EQ(second,
            "BSTART.SFU TQUANT, FP32; B.DATR U8, RMM, Sat=0; B.DIM LB0=4; B.DIM LB1=2; B.DIM "
            "LB2=8; B.IOR r3, r4; B.IOT T2, mask=0001, <last>, ->T5<2>; BSTOP");
  // The whole program round-trips through disassemble.
  const Program back = parse_program(disassemble(p), "d.tpb");
  EXPECT_EQ(back.queues[3][0].raw, p.queues[3][0].raw);
  EXPECT_EQ(back.queues[3][1].raw, p.queues[3][1].raw);
}

// Illegal bindings are encoded (and round-trip) so that the kernel can fault them.
TEST(TquantBlock, IllegalBindingsAssembleAndRoundTrip) {
  for (const char* t : {
           "BSTART.SFU TQUANT, FP16; B.DATR U16, RMode=7, Sat=3, Canonicalize=1, Layout=2, "
           "CMode=4, PadValue=5; B.DIM LB0=0; B.DIM LB3=9; B.DIM LB0=2; B.IOR r1, r2, r3, r4; "
           "B.IOS T4; B.IOT T1, T2, mask=0, ->T0<0>, ->T7<3>; B.IOT T9; BSTOP",
           "BSTART.SFU TQUANT, 0; B.DATR S8; B.DATR S8; B.IOR r0, r0; B.IOR r5, r6; BSTOP",
           "BSTART.SFU TQUANT, FP32; BSTOP",
       }) {
    SCOPED_TRACE(t);
    const RawInst w = assemble_statement(t, SourceLoc{"t", 1, 1});
    const std::string text = disassemble_inst(w);
    ASSERT_EQ(text.rfind("BSTART.SFU TQUANT", 0), 0u) << text;
    EXPECT_EQ(assemble_statement(text, SourceLoc{"t", 1, 1}), w) << text;
  }
}

// Any word of opcode 0x6a: block text when it can be written so, else .raw;
// either way the text assembles back to the same bytes.
TEST(TquantBlock, RandomWordsRoundTrip) {
  std::mt19937 rng(0x6a6au);
  unsigned as_block = 0;
  const RawInst base = assemble_statement(kExample, SourceLoc{"t", 1, 1});
  for (int i = 0; i < 20000; ++i) {
    RawInst w = base;
    for (int k = 0, n = static_cast<int>(rng() % 4); k < n; ++k)
      w[12 + rng() % 52] = static_cast<std::uint8_t>(rng() % 3 == 0 ? rng() : rng() % 4);
    const std::string text = disassemble_inst(w);
    as_block += text.rfind("BSTART", 0) == 0;
    const Program p = parse_program(text + "\n", "r.tpb");
    RawInst back{};
    for (const auto& q : p.queues)
      if (!q.empty()) back = q[0].raw;
    ASSERT_EQ(back, w) << text;
  }
  EXPECT_GT(as_block, 1000u);
}

}  // namespace

// EVENTS on a block (convention, docs/ASM.md): after BSTOP, in the mnemonic
// syntax's spelling; bytes 4..11 as SPEC §2 lays them out.
TEST(TquantBlock, BstopCarriesTheWordsEvents) {
  const std::string base =
      "BSTART.SFU TQUANT, FP32; B.DATR U8, RTZ, Sat=0; B.DIM LB0=8; "
      "B.IOT T3, mask=1, <last>, ->T4<1>; BSTOP";
  const RawInst w =
      assemble_statement(base + " wait=ge(sem7, 3) update=set(sem9, 3)", SourceLoc{"t", 1, 1});
  // wait_mode 2 (>=), wait_idx 7, update_mode 3 (=), update_idx 9, sem_value 3.
  EXPECT_EQ(w[4], 2);
  EXPECT_EQ(w[5], 7);
  EXPECT_EQ(w[6], 3);
  EXPECT_EQ(w[7], 9);
  EXPECT_EQ(w[8], 3);
  EXPECT_EQ(w[9] | w[10] | w[11], 0);
  const std::string back = disassemble_mnemonic(w);
  EXPECT_NE(back.find("BSTOP wait=ge(sem7, 3) update=set(sem9, 3)"), std::string::npos) << back;
  EXPECT_EQ(assemble_statement(back, SourceLoc{"t", 1, 1}), w);
  // Without events the word is the seed's (EVENTS zero).
  const RawInst plain = assemble_statement(base, SourceLoc{"t", 1, 1});
  for (int b = 4; b < 12; ++b) EXPECT_EQ(plain[b], 0) << b;
  const RawInst inc = assemble_statement(base + " update=inc(sem2)", SourceLoc{"t", 1, 1});
  EXPECT_EQ(inc[6], 1);
  EXPECT_EQ(inc[7], 2);
}

TEST(TquantBlock, BstopEventErrorsNameWhatIsWrong) {
  const std::string base =
      "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=8; "
      "B.IOT T1, mask=1, <last>, ->T0<1>; BSTOP";
  const struct {
    const char* tail;
    const char* says;
  } cases[] = {
      {" wait=lt(sem1, 1)", "expected eq(semN, VALUE) or ge(semN, VALUE)"},
      {" update=set(sem1)", "expected ','"},
      {" wait=eq(s1, 1)", "expected a semaphore semN"},
      {" wait=eq(sem300, 1)", "past 255"},
      {" wait=eq(sem1, 1) update=set(sem2, 2)", "share one sem_value"},
      {" when=eq(sem1, 1)", "expected wait=... or update=..."},
  };
  for (const auto& c : cases) {
    try {
      assemble_statement(base + c.tail, SourceLoc{"t", 1, 1});
      ADD_FAILURE() << c.tail << ": no error";
    } catch (const AsmError& e) {
      EXPECT_NE(e.message().find(c.says), std::string::npos) << c.tail << ": " << e.message();
    }
  }
}

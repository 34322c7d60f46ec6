// The ISA's name tables (names.h) and the one lexer (lexer.h).
//
// Names: every spelling that either DTYPE parser accepted before the tables
// were merged (the syntax's and the seeds', listed here from the old code and
// docs/ASM.md) is accepted by both parsers, in any case, with the same
// ordinal; the printed spellings are the documented ones. The same for the
// other enums. Lexer: the token kinds and values of both dialects, and exact
// positions of errors in TQUANT statements continued over lines.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "models/isa/asm.h"
#include "models/isa/encodings.h"
#include "models/isa/lexer.h"
#include "models/isa/names.h"
#include "models/isa/program.h"
#include "models/numerics/tquant.h"

namespace tpb::isa {
namespace {

struct Spelling {
  const char* name;
  std::uint8_t ordinal;
};

// What asm_parse_dtype accepted (docs/ASM.md "Names of values").
constexpr Spelling kSyntaxSpellings[] = {
    {"invalid", 0x0},   {"int8", 0x1},     {"uint8", 0x2},    {"int16", 0x3},     {"uint16", 0x4},
    {"bf16", 0x5},      {"fp16", 0x6},     {"int32", 0x7},    {"fp32", 0x8},      {"uint32", 0x9},
    {"fp32r", 0xA},     {"fp8_e2m5", 0xC}, {"fp8_e3m4", 0xD}, {"fp8_e4m3", 0xE},  {"fp8_e5m2", 0xF},
    {"fp4_e2m1", 0x10}, {"int4", 0x12},    {"e8m0", 0x13},    {"s8", 0x1},        {"u8", 0x2},
    {"s16", 0x3},       {"u16", 0x4},      {"s32", 0x7},      {"u32", 0x9},       {"e2m5", 0xC},
    {"e3m4", 0xD},      {"e4m3", 0xE},     {"e5m2", 0xF},     {"e2m1", 0x10},     {"fp8_exp2", 0xC},
    {"fp8_exp3", 0xD},  {"fp8_exp4", 0xE}, {"fp8_exp5", 0xF}, {"fp4_exp2", 0x10}, {"sfp8_e8", 0x13},
    {"fp8_e8m0", 0x13},
};
// What parse_dtype accepted (the seeds' names and the SPEC §9 format names).
constexpr Spelling kSeedSpellings[] = {
    {"invalid", 0x00},  {"int8", 0x01},     {"uint8", 0x02},    {"int16", 0x03},
    {"uint16", 0x04},   {"bf16", 0x05},     {"fp16", 0x06},     {"int32", 0x07},
    {"fp32", 0x08},     {"uint32", 0x09},   {"fp32r", 0x0A},    {"fp8_exp2", 0x0C},
    {"fp8_exp3", 0x0D}, {"fp8_exp4", 0x0E}, {"fp8_exp5", 0x0F}, {"fp4_exp2", 0x10},
    {"int4", 0x12},     {"sfp8_e8", 0x13},  {"i8", 0x01},       {"u8", 0x02},
    {"s8", 0x01},       {"i16", 0x03},      {"u16", 0x04},      {"f16", 0x06},
    {"i32", 0x07},      {"f32", 0x08},      {"u32", 0x09},      {"e2m5", 0x0C},
    {"e3m4", 0x0D},     {"e4m3", 0x0E},     {"e5m2", 0x0F},     {"fp4_e2m1", 0x10},
    {"e2m1", 0x10},     {"e8m0", 0x13},
};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TEST(IsaNames, EveryDtypeSpellingEitherParserTookIsTakenByBoth) {
  std::vector<Spelling> all(std::begin(kSyntaxSpellings), std::end(kSyntaxSpellings));
  all.insert(all.end(), std::begin(kSeedSpellings), std::end(kSeedSpellings));
  for (const Spelling& s : all)
    for (const std::string& n : {std::string(s.name), upper(s.name)}) {
      const auto a = asm_parse_dtype(n);
      ASSERT_TRUE(a.has_value()) << n;
      EXPECT_EQ(*a, s.ordinal) << n;
      std::uint8_t b = 0xFF;
      ASSERT_TRUE(parse_dtype(n, b)) << n;
      EXPECT_EQ(b, s.ordinal) << n;
    }
  std::uint8_t out = 0;
  for (const char* bad : {"fp64", "", "fp8", "e4m4", "int8x"}) {
    EXPECT_FALSE(asm_parse_dtype(bad).has_value()) << bad;
    EXPECT_FALSE(parse_dtype(bad, out)) << bad;
  }
}

TEST(IsaNames, DtypePrintedSpellingsAreTheDocumentedOnes) {
  // The syntax's (disassembly) and the seeds' (dtype_name) per ordinal.
  const struct {
    std::uint8_t ord;
    const char* syntax;
    const char* seed;
  } rows[] = {{0x0, "invalid", "invalid"},
              {0x1, "int8", "int8"},
              {0x2, "uint8", "uint8"},
              {0x3, "int16", "int16"},
              {0x4, "uint16", "uint16"},
              {0x5, "bf16", "bf16"},
              {0x6, "fp16", "fp16"},
              {0x7, "int32", "int32"},
              {0x8, "fp32", "fp32"},
              {0x9, "uint32", "uint32"},
              {0xA, "fp32r", "fp32r"},
              {0xC, "fp8_e2m5", "fp8_exp2"},
              {0xB, "fp8_e4m3_legacy", "fp8_exp4_legacy"},  // SPEC §18 (convention)
              {0xD, "fp8_e3m4", "fp8_exp3"},
              {0xE, "fp8_e4m3", "fp8_exp4"},
              {0xF, "fp8_e5m2", "fp8_exp5"},
              {0x10, "fp4_e2m1", "fp4_exp2"},
              {0x12, "int4", "int4"},
              {0x13, "e8m0", "sfp8_e8"}};
  std::set<unsigned> named;
  for (const auto& r : rows) {
    EXPECT_EQ(asm_dtype_name(r.ord), r.syntax);
    EXPECT_EQ(dtype_name(r.ord), r.seed);
    named.insert(r.ord);
  }
  for (unsigned v = 0; v < 256; ++v)
    if (!named.count(v)) {
      EXPECT_EQ(asm_dtype_name(static_cast<std::uint8_t>(v)), "") << v;
      EXPECT_EQ(dtype_name(static_cast<std::uint8_t>(v)), "") << v;
    }
  EXPECT_EQ(dtype_table().list(),
            "invalid, int8, uint8, int16, uint16, bf16, fp16, int32, fp32, uint32, fp32r, "
            "fp8_e4m3_legacy, fp8_e2m5, fp8_e3m4, fp8_e4m3, fp8_e5m2, fp4_e2m1, int4, e8m0");
}

TEST(IsaNames, EveryOtherEnumHasOneTableThatPrintsAndParses) {
  // DEQUANT_FMT: syntax and seed names.
  const char* syntax[] = {"invalid", "e2m1_to_e5m2", "int4_to_e5m2", "nf4_to_e4m3", "e2m3_to_e4m3"};
  const char* seed[] = {"Invalid", "E2M1ToE5M2", "INT4ToE5M2", "NF4ToE4M3", "E2M3ToE4M3"};
  for (std::uint8_t v = 0; v < 5; ++v) {
    EXPECT_EQ(dequant_fmt_names().name(v), syntax[v]);
    EXPECT_EQ(dequant_fmt_names().parse(upper(syntax[v])), v);
    EXPECT_STREQ(dequant_fmt_name(static_cast<DequantFmt>(v)), seed[v]);
  }
  EXPECT_STREQ(dequant_fmt_name(static_cast<DequantFmt>(9)), "Invalid");
  // MX perf modes (seed 003 §3.3).
  const char* perf[] = {"none",    "quad_row",           "quad_row_interleave", "quad_row_tiled",
                        "oct_row", "oct_row_interleave", "oct_row_tiled"};
  for (std::uint8_t v = 0; v < kNumMxPerfModes; ++v) {
    EXPECT_EQ(mx_perf_mode_names().name(v), perf[v]);
    EXPECT_EQ(mx_perf_mode_names().parse(perf[v]), v);
  }
  EXPECT_EQ(mx_perf_mode_names().name(7), "");
  // Generations and their aliases.
  const char* archs[] = {"sunda", "cayman", "mariana", "maverick"};
  for (int k = 0; k < 4; ++k) {
    const Arch a = static_cast<Arch>(k + 2);
    EXPECT_EQ(arch_name(a), archs[k]);
    for (const std::string& n : {std::string(archs[k]), upper(archs[k]),
                                 "v" + std::to_string(k + 2), "V" + std::to_string(k + 2)}) {
      Arch got = Arch::Sunda;
      ASSERT_TRUE(parse_arch(n, got)) << n;
      EXPECT_EQ(got, a) << n;
    }
  }
  Arch got{};
  EXPECT_FALSE(parse_arch("v6", got));
  EXPECT_EQ(arch_list(), "sunda, cayman, mariana, maverick");  // aliases are not listed
  EXPECT_EQ(arch_list("|"), "sunda|cayman|mariana|maverick");
  // Engines.
  const char* engines[] = {"pool", "dve", "pe", "sfu", "act"};
  for (unsigned e = 0; e < kNumEngines; ++e) {
    EXPECT_STREQ(engine_name(kEngines[e]), engines[e]);
    EXPECT_EQ(parse_engine(upper(engines[e]).c_str()), kEngines[e]);
  }
  // SPEC §18 operators, activation functions and the header's engine selector.
  EXPECT_EQ(alu_op_names().name(5), "maximum");
  EXPECT_EQ(alu_op_names().parse("max"), 5);
  EXPECT_EQ(alu_op_names().name(19), "reciprocal");
  EXPECT_EQ(act_func_names().name(10), "gelu_apprx_tanh");
  EXPECT_EQ(act_func_names().parse("identity"), 0);
  EXPECT_EQ(reduce_cmd_names().list(), "idle, reset, reduce, reset_reduce");
  EXPECT_EQ(engine_selector_names().list(), "home, pool, dve, pe, sfu, act");
  EXPECT_EQ(matmul_perf_names().parse("double_row"), 1);
  EXPECT_FALSE(parse_engine("npu").has_value());
  EXPECT_FALSE(parse_engine(nullptr).has_value());
  // EVENTS modes.
  EXPECT_EQ(wait_mode_names().list(), "eq, ge");
  EXPECT_EQ(update_mode_names().list(), "inc, dec, set");
  EXPECT_EQ(wait_mode_names().parse_exact("eq"), kWaitEq);
  EXPECT_FALSE(wait_mode_names().parse_exact("EQ").has_value());
  EXPECT_EQ(update_mode_names().parse_exact("set"), kUpdateSet);
  // TQUANT DataType and RMode; num::rmode_name reads the same table.
  const char* tiles[] = {"FP64", "FP32", "FP16", "BF16", "S8", "U8", "S16", "U16", "S32", "U32"};
  const unsigned sizes[] = {8, 4, 2, 2, 1, 1, 2, 2, 4, 4};
  for (std::uint8_t t = 0; t < kNumTileDataTypes; ++t) {
    EXPECT_EQ(tile_dtype_name(t), tiles[t]);
    EXPECT_EQ(tile_dtype_size(t), sizes[t]);
    EXPECT_EQ(tile_dtype_names().parse(std::string(tiles[t]) == "FP64" ? "fp64" : tiles[t]), t);
  }
  EXPECT_EQ(tile_dtype_name(10), "");
  EXPECT_EQ(tile_dtype_size(10), 0u);
  const char* rmodes[] = {"RNE", "RTZ", "RDN", "RUP", "RMM"};
  for (std::uint8_t m = 0; m < num::kNumRModes; ++m) {
    EXPECT_STREQ(num::rmode_name(static_cast<num::RMode>(m)), rmodes[m]);
    EXPECT_EQ(rmode_names().parse(rmodes[m]), m);
  }
  EXPECT_STREQ(num::rmode_name(static_cast<num::RMode>(5)), "?");
}

// ----------------------------------------------------------------- lexer

const std::string kFile = "t";

std::vector<Tok> tokens(const std::string& text, Dialect d) {
  const AsmLine line = AsmLine::of(text, SourceLoc{"t", 1, 1});
  Lexer lx(line, 0, kFile, d);
  std::vector<Tok> out;
  for (Tok t = lx.next(); t.kind != Tok::End; t = lx.next()) out.push_back(t);
  return out;
}

TEST(IsaLexer, MnemonicTokensAreValued) {
  const auto t = tokens("t3d(sbuf(0, 0x1F), step=[-1, +2]) a.b_c", Dialect::Mnemonic);
  const std::vector<std::string> text = {"t3d",  "(", "sbuf", "(",    "0", ",",
                                         "0x1F", ")", ",",    "step", "=", "[",
                                         "-1",   ",", "+2",   "]",    ")", "a.b_c"};
  ASSERT_EQ(t.size(), text.size());
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].text, text[i]) << i;
  EXPECT_EQ(t[6].kind, Tok::Num);
  EXPECT_EQ(t[6].num, 0x1F);
  EXPECT_EQ(t[12].num, -1);
  EXPECT_EQ(t[14].num, 2);
  EXPECT_EQ(t[17].kind, Tok::Ident);
  EXPECT_EQ(t[0].at, 0u);
  EXPECT_EQ(t[17].at, 34u);
}

TEST(IsaLexer, BlockTokensKeepNumbersAsText) {
  const auto t = tokens("B.IOT T1, mask=1111, <last>, ->T0<-2>", Dialect::Block);
  const std::vector<std::string> text = {"B.IOT", "T1", ",", "mask", "=",  "1111", ",",  "<",
                                         "last",  ">",  ",", "->",   "T0", "<",    "-2", ">"};
  ASSERT_EQ(t.size(), text.size());
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].text, text[i]) << i;
  EXPECT_EQ(t[5].kind, Tok::Num);
  EXPECT_EQ(t[5].num, 0);  // the base is the statement's (binary for mask)
  EXPECT_EQ(t[11].kind, Tok::Punct);
}

TEST(IsaLexer, DialectsDifferInWhatIsAStrayCharacter) {
  // '<' is punctuation in a block, stray in a mnemonic statement; a block
  // statement's characters are checked when its lexer is made.
  try {
    tokens("a < b", Dialect::Mnemonic);
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.message(), "unexpected character '<'");
    EXPECT_EQ(e.loc().col, 3);
  }
  try {
    const AsmLine line = AsmLine::of("B.XYZ [", SourceLoc{"t", 4, 10});
    Lexer lx(line, 0, kFile, Dialect::Block);
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.message(), "unexpected character '[' in a TQUANT block");
    EXPECT_EQ(e.loc().line, 4);
    EXPECT_EQ(e.loc().col, 16);
  }
}

// A TQUANT statement continued with `\`: the error is on the physical line
// and column where the bad token is (positions come from the logical line).
TEST(IsaLexer, TquantErrorsAcrossContinuationsNameThePhysicalLine) {
  const char* text =
      ".arch mariana\n"
      "BSTART.SFU TQUANT, FP32; B.DATR S8, \\\n"
      "    XYZ, Sat=1; BSTOP\n";
  try {
    parse_program(text, "c.tpb");
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.loc().line, 3) << format_diagnostic(e);
    EXPECT_EQ(e.loc().col, 5) << format_diagnostic(e);
    EXPECT_NE(e.message().find("unknown RMode 'XYZ'"), std::string::npos) << e.message();
  }
  // Statement by statement over lines, with a stray character on the third.
  try {
    parse_program("BSTART.SFU TQUANT, FP32\nB.DATR S8\nB.DIM LB0=16 $\nBSTOP\n", "c.tpb");
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.loc().line, 3);
    EXPECT_EQ(e.loc().col, 14);
    EXPECT_EQ(e.message(), "unexpected character '$' in a TQUANT block");
  }
}

TEST(IsaLexer, HexBytesStopAtTheEndOfTheStatement) {
  const AsmLine line = AsmLine::of("7b 10 0; rest", SourceLoc{"t", 1, 1});
  Lexer lx(line, 0, kFile, Dialect::Block, 7);
  try {
    lx.hex_bytes(0);
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.message(), "odd number of hex digits (a byte is two digits)");
    EXPECT_EQ(e.loc().col, 7);
  }
  Lexer ok(line, 0, kFile, Dialect::Block, 5);
  EXPECT_EQ(ok.hex_bytes(0), (std::vector<std::uint8_t>{0x7b, 0x10}));
}

}  // namespace
}  // namespace tpb::isa

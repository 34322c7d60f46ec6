// Assembler errors: every kind, with its exact file:line:col and a message
// naming what is wrong.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "models/isa/asm.h"
#include "models/isa/program.h"

namespace tpb::isa {
namespace {

struct ErrorCase {
  const char* text;
  int line;
  int col;
  const char* message;  // expected substring
};

constexpr const char* kDq = "tensor_dequantize fmt=1 channels=1 src=t3d(0) dst=t3d(0)";

class AsmErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(AsmErrors, ReportsLineColAndMessage) {
  const ErrorCase& c = GetParam();
  try {
    parse_program(c.text, "e.tpb");
    FAIL() << "no error for: " << c.text;
  } catch (const AsmError& e) {
    EXPECT_EQ(e.loc().file, "e.tpb");
    EXPECT_EQ(e.loc().line, c.line) << format_diagnostic(e);
    EXPECT_EQ(e.loc().col, c.col) << format_diagnostic(e);
    EXPECT_NE(e.message().find(c.message), std::string::npos) << format_diagnostic(e);
    const std::string diag = format_diagnostic(e);
    EXPECT_EQ(diag.rfind(
                  "e.tpb:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error: ", 0),
              0u)
        << diag;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, AsmErrors,
    ::testing::Values(
        // unknown mnemonic
        ErrorCase{"\n  tensor_dequant fmt=1", 2, 3, "unknown mnemonic 'tensor_dequant'"},
        // unknown field
        ErrorCase{"tensor_dequantize fmt=1 chanels=3", 1, 25, "unknown field 'chanels'"},
        // duplicate field
        ErrorCase{"tensor_dequantize fmt=1 fmt=2", 1, 25, "duplicate field 'fmt'"},
        // value out of range for the field's width
        ErrorCase{"tensor_dequantize fmt=1 channels=256", 1, 34,
                  "out of range for field 'channels' (u8"},
        ErrorCase{"tensor_dequantize fmt=1 channels=-1", 1, 34, "out of range"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(0, step=[1, 32768, 0]) dst=t3d(0)", 1,
                  56, "out of range for t3d step (i16"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(0, num=[65536, 1, 1]) dst=t3d(0)", 1,
                  52, "out of range for t3d num (u16"},
        ErrorCase{"tensor_dequantize fmt=256 channels=1", 1, 23, "out of range for field 'fmt'"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(sbuf(128, 0)) dst=t3d(0)", 1, 49,
                  "sbuf partition"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(sbuf(0, 0x40000)) dst=t3d(0)", 1, 52,
                  "sbuf offset"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(0x8000000) dst=t3d(0)", 1, 44,
                  "does not fit 27 bits"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 debug_hint=0x100", 1, 47, "u8"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 sem_value=0x100000000", 1, 46, "u32"},
        ErrorCase{"ldweights in_dtype=bf16 rows=1 cols=1 src=mx(data=0, scale=0, p=16) ", 1, 65,
                  "mx p"},
        // missing required field
        ErrorCase{"x: \n\n   tensor_dequantize fmt=1 src=t3d(0) dst=t3d(0)", 1, 1,
                  "unknown mnemonic 'x'"},
        ErrorCase{"\n\n   tensor_dequantize fmt=1 src=t3d(0) dst=t3d(0)", 3, 4,
                  "missing required field 'channels'"},
        ErrorCase{"quantize_mx channels=32 src=t3d(0) dst=mx1d(data=0, scale=0)", 1, 1,
                  "missing required field 'out_dtype'"},
        ErrorCase{"quantize_mx channels=32 out_dtype=e4m3 src=t3d(0) dst=mx1d(data=0)", 1, 55,
                  "missing argument 'scale' of mx1d"},
        // wrong pattern form
        ErrorCase{"quantize_mx channels=32 out_dtype=e4m3 src=t3d(0) dst=t3d(0)", 1, 55,
                  "MXMEM_PATTERN1D"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=i(00 11) dst=t3d(0)", 1, 40,
                  "i(...) needs 16 bytes, got 2"},
        // unknown names
        ErrorCase{"quantize_mx channels=32 out_dtype=fp9 src=t3d(0)", 1, 35, "unknown dtype 'fp9'"},
        ErrorCase{"ldweights in_dtype=bf16 rows=1 cols=1 perf=fast src=t3d(0)", 1, 44,
                  "unknown perf mode 'fast'"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(reg(r32)) dst=t3d(0)", 1, 48,
                  "unknown register 'r32'"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(0) dst=t3d(0) wait=ge(s3, 1)", 1, 66,
                  "expected semN"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(0) dst=t3d(0) update=add(sem1)", 1,
                  65, "expected none, inc(semN)"},
        // conflicting fields
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(0) dst=t3d(0) wait=ge(sem1, 2) "
                  "wait_mode=1",
                  1, 85, "conflicts with field 'wait'"},
        // syntax
        ErrorCase{"tensor_dequantize fmt 1", 1, 23, "expected '='"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 src=t3d(0 dst=t3d(0)", 1, 46,
                  "expected ',' between arguments of t3d"},
        ErrorCase{"tensor_dequantize fmt=1 channels=0x1g", 1, 34, "bad number"},
        ErrorCase{"tensor_dequantize fmt=1 channels=1 ; src=t3d(0)", 1, 36,
                  "unexpected character ';'"},
        // .raw
        ErrorCase{".raw 00 11 2x", 1, 13, "bad hex digit 'x'"},
        ErrorCase{".raw 00 11 2", 1, 12, "odd number of hex digits"},
        ErrorCase{".raw 00 11 22", 1, 5, ".raw needs 64 bytes (128 hex digits), got 3"},
        // directives
        ErrorCase{".engine gpsimd", 1, 9, "unknown engine 'gpsimd'"},
        ErrorCase{".arch trainium", 1, 7, "unknown arch 'trainium'"},
        ErrorCase{".arch cayman\n.arch mariana", 2, 7, "conflicting .arch"},
        ErrorCase{".reg pool r32 = 1", 1, 11, "unknown register 'r32'"},
        ErrorCase{".reg pool x5 = 1", 1, 11, "expected rN"},
        ErrorCase{".reg tpu r1 = 1", 1, 6, "unknown engine 'tpu'"},
        ErrorCase{".reg pool r1 = 0x100000000", 1, 16, "out of range for a 32-bit register"},
        ErrorCase{".reg pool r1 1", 1, 14, "expected '='"},
        ErrorCase{".engine pe extra", 1, 12, "unexpected 'extra'"},
        ErrorCase{".data 1 2 3", 1, 1, "unknown directive '.data'"},
        // continuation lines keep their own columns
        ErrorCase{"tensor_dequantize fmt=1 \\\n    channels=1000", 2, 14, "out of range"},
        // SFU TQUANT blocks (seed 002): syntax errors at their column; illegal
        // bindings assemble and fault at run time (test_sfu_tquant.cpp)
        ErrorCase{"# tile quantize\n  BSTART.SFU TQUANT, FP32; B.DATR S8, RNX, Sat=1; BSTOP", 2, 39,
                  "unknown RMode"},
        ErrorCase{"BSTART.SFU TQUANT, FP32\nB.DIM LB0=16\n.engine sfu", 3, 1,
                  "directive inside a TQUANT block"},
        ErrorCase{"BSTART.SFU TQUANT, FP32; B.DIM LB0=16", 1, 1, "TQUANT block without BSTOP"},
        ErrorCase{"BSTART.PE TQUANT, FP32; BSTOP", 1, 1, "BSTART.SFU"},
        ErrorCase{"BSTART.SFU TQUANT, FP32; B.IOT T1, mask=12, ->T0<1>; BSTOP", 1, 41,
                  "bad binary number"},
        ErrorCase{"BSTART.SFU TQUANT, FP32; B.IOT T1, mask=1, ->T0<1>; BSTOP; B.DIM LB0=1", 1, 60,
                  "statement after BSTOP"}));

TEST(AsmErrorsMisc, AsmErrorWhatHasLocation) {
  try {
    parse_program(std::string(kDq) + "\nbogus", "f.tpb");
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("f.tpb:2:1: unknown mnemonic 'bogus'", 0), 0u)
        << e.what();
  }
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(AsmErrorsMisc, LoadProgramTellsTextFromBinary) {
  // UTF-8 text -> parsed as program text, with the path in locations.
  const std::string t =
      temp_file("asm_text.tpb", "# caf\xc3\xa9\n.engine dve\n.raw " + std::string(128, 'f') + "\n");
  const Program p = load_program(t);
  ASSERT_EQ(p.queues[1].size(), 1u);
  EXPECT_EQ(p.queues[1][0].loc.file, t);
  EXPECT_EQ(p.queues[1][0].loc.line, 3);
  // Not UTF-8 (0xff bytes) and 64 bytes -> a binary, sent to the home engine.
  std::string word(64, '\xff');
  word[0] = '\xe3';
  const Program b = load_program(temp_file("asm_word.dat", word));
  ASSERT_EQ(b.queues[1].size(), 1u);
  EXPECT_EQ(b.queues[1][0].loc.line, 0);
  // .bin is a binary even when it looks like text: 5 bytes is a size error.
  try {
    load_program(temp_file("asm_short.bin", "hello"));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("size 5 bytes is not a multiple of 64"), std::string::npos)
        << e.what();
  }
  // Neither text nor a whole number of words.
  try {
    load_program(temp_file("asm_junk.tpb", std::string("\xff\xfe\x00", 3)));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("neither UTF-8 program text nor a binary"),
              std::string::npos)
        << e.what();
  }
}

TEST(AsmErrorsMisc, LoadProgramMissingFile) {
  EXPECT_THROW(load_program("/nonexistent/dir/prog.tpb"), std::runtime_error);
}

}  // namespace
}  // namespace tpb::isa

// `tpbsim convert` line format (SPEC §9): "VALUE -> 0xHEX DECIMAL".
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "models/numerics/formats.h"

namespace {

using tpb::num::Format;
using tpb::num::Overflow;

std::string line(const char* from, const char* to, const char* value,
                 Overflow ov = Overflow::Saturate) {
  const auto f = tpb::num::parse_format(from), t = tpb::num::parse_format(to);
  if (!f || !t) return "bad format";
  std::string err;
  const auto r = tpb::num::convert_line(*f, *t, value, err, ov);
  return r ? *r : "error: " + err;
}

std::string error_of(const char* from, const char* to, const char* value) {
  std::string err;
  const auto r = tpb::num::convert_line(*tpb::num::parse_format(from), *tpb::num::parse_format(to),
                                        value, err);
  return r ? "no error: " + *r : err;
}

TEST(NumericsConvert, SpecExamples) {
  EXPECT_EQ(line("fp32", "fp32", "0.3"), "0.3 -> 0x3E99999A 0.30000001192092896");
  EXPECT_EQ(line("fp32", "e4m3", "464"), "464 -> 0x7E 448");
  EXPECT_EQ(line("fp4_e2m1", "e5m2", "0x7"), "0x7 -> 0x46 6");
  // 0.3 = 1.2 x 2^-2; 1.2 x 8 = 9.6 -> 10: 1.25 x 2^-2, exponent field 5, mantissa 2.
  EXPECT_EQ(line("fp32", "e4m3", "0.3"), "0.3 -> 0x2A 0.3125");
}

TEST(NumericsConvert, HexWidthFollowsTheTargetFormat) {
  EXPECT_EQ(line("fp32", "int4", "-8"), "-8 -> 0x8 -8");
  EXPECT_EQ(line("fp32", "fp6_e2m3", "7.5"), "7.5 -> 0x1F 7.5");
  EXPECT_EQ(line("fp32", "fp6_e3m2", "-28"), "-28 -> 0x3F -28");
  EXPECT_EQ(line("fp32", "bf16", "1"), "1 -> 0x3F80 1");
  EXPECT_EQ(line("fp32", "fp16", "0"), "0 -> 0x0000 0");
  EXPECT_EQ(line("fp32", "fp32", "-0"), "-0 -> 0x80000000 -0");
  EXPECT_EQ(line("fp32", "s8", "-5"), "-5 -> 0xFB -5");
  EXPECT_EQ(line("fp32", "u8", "-5"), "-5 -> 0x00 0");
  EXPECT_EQ(line("nf4", "fp32", "0x0"), "0x0 -> 0xBF800000 -1");
  EXPECT_EQ(line("fp32", "e8m0", "3"), "3 -> 0x81 4");
  EXPECT_EQ(line("fp16", "fp32", "0x0001"), "0x0001 -> 0x33800000 5.960464477539063e-08");
  EXPECT_EQ(line("e4m3", "fp32", "0X7e"), "0X7e -> 0x43E00000 448");
}

TEST(NumericsConvert, SpecialValues) {
  EXPECT_EQ(line("e5m2", "fp32", "0x7C"), "0x7C -> 0x7F800000 inf");
  EXPECT_EQ(line("e5m2", "fp32", "0xFC"), "0xFC -> 0xFF800000 -inf");
  EXPECT_EQ(line("e4m3", "fp32", "0x7F"), "0x7F -> 0x7FC00000 nan");
  EXPECT_EQ(line("fp32", "e5m2", "nan"), "nan -> 0x7E nan");
  EXPECT_EQ(line("fp32", "e4m3", "-nan"), "-nan -> 0x7F nan");
  EXPECT_EQ(line("fp32", "fp4_e2m1", "nan"), "nan -> 0x0 0");  // no NaN in FP4
  EXPECT_EQ(line("fp32", "e5m2", "-inf"), "-inf -> 0xFC -inf");
  EXPECT_EQ(line("fp32", "e4m3", "inf"), "inf -> 0x7E 448");
  EXPECT_EQ(line("e8m0", "fp32", "0xFF"), "0xFF -> 0x7FC00000 nan");
}

TEST(NumericsConvert, DecimalIsRoundedIntoFromFirst) {
  // 0.3 in E4M3 is 0.3125, exactly representable in FP32.
  EXPECT_EQ(line("e4m3", "fp32", "0.3"), "0.3 -> 0x3EA00000 0.3125");
  // 1e39 saturates in FP32 first, then in E4M3.
  EXPECT_EQ(line("fp32", "e4m3", "1e39"), "1e39 -> 0x7E 448");
  EXPECT_EQ(line("fp4_e2m1", "fp32", "5"), "5 -> 0x40800000 4");  // tie 4|6 -> 4
}

TEST(NumericsConvert, NonSaturating) {
  EXPECT_EQ(line("fp32", "e5m2", "61440", Overflow::NonSaturate), "61440 -> 0x7C inf");
  EXPECT_EQ(line("fp32", "e5m2", "61440"), "61440 -> 0x7B 57344");
  EXPECT_EQ(line("fp32", "e4m3", "480", Overflow::NonSaturate), "480 -> 0x7F nan");
  EXPECT_EQ(line("fp32", "s8", "200", Overflow::NonSaturate), "200 -> 0xC8 -56");
  EXPECT_EQ(line("fp32", "s8", "200"), "200 -> 0x7F 127");
}

TEST(NumericsConvert, BadValuesNameTheProblem) {
  EXPECT_NE(error_of("fp4_e2m1", "e5m2", "0x10").find("does not fit in fp4_e2m1"),
            std::string::npos);
  EXPECT_NE(error_of("fp6_e2m3", "e4m3", "0x40").find("does not fit in fp6_e2m3 (6 bits)"),
            std::string::npos);
  EXPECT_NE(error_of("fp32", "e4m3", "0x1FFFFFFFF").find("does not fit"), std::string::npos);
  EXPECT_NE(error_of("fp32", "e4m3", "0x00000000000000000000001").find("no error"),
            std::string::npos);  // leading zeros are fine
  for (const char* bad : {"abc", "", "0x", "0xG1", "1.5.3", "0x1p3", "-0x3", " 1", "1 ", "12abc"}) {
    const std::string e = error_of("fp32", "e4m3", bad);
    EXPECT_EQ(e.find("no error"), std::string::npos) << bad;
    EXPECT_NE(e.find(std::string("'") + bad + "'"), std::string::npos) << e;
  }
}

}  // namespace

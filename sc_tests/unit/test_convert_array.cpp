// num::convert_codes / convert_values / decode_codes (models/numerics/
// convert_array.h): the rule of `tpbsim convert` over arrays. Each element
// must equal the CLI's line for the same VALUE (convert_line), the table path
// (long arrays) must equal the element path, and a bad code must be refused
// before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "models/numerics/convert_array.h"
#include "models/numerics/formats.h"

namespace {

using namespace tpb::num;

// The code printed by convert_line ("VALUE -> 0xHEX DECIMAL"; VALUE may be hex too).
std::uint32_t line_code(Format from, Format to, const std::string& value, Overflow ov) {
  std::string err;
  const auto line = convert_line(from, to, value, err, ov);
  EXPECT_TRUE(line) << err;
  return line ? static_cast<std::uint32_t>(
                    std::stoul(line->substr(line->find(" -> 0x") + 6), nullptr, 16))
              : 0;
}

TEST(ConvertArray, EveryCodeOfEverySmallFormatMatchesTheCliLine) {
  for (int f = 0; f < kNumFormats; ++f)
    for (int t = 0; t < kNumFormats; ++t) {
      const auto from = static_cast<Format>(f), to = static_cast<Format>(t);
      if (info(from).bits > 8) continue;
      std::vector<std::int64_t> in(std::size_t{1} << info(from).bits);
      for (std::size_t c = 0; c < in.size(); ++c) in[c] = static_cast<std::int64_t>(c);
      for (Overflow ov : {Overflow::Saturate, Overflow::NonSaturate}) {
        std::vector<std::uint32_t> out(in.size());
        convert_codes(from, to, in.data(), out.data(), in.size(), ov);
        for (std::size_t c = 0; c < in.size(); ++c) {
          char hex[24];
          std::snprintf(hex, sizeof hex, "0x%zx", c);
          ASSERT_EQ(out[c], line_code(from, to, hex, ov))
              << info(from).name << " -> " << info(to).name << " " << hex;
        }
      }
    }
}

TEST(ConvertArray, ValuesMatchTheCliLine) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> e(-30, 30);
  for (Format to : {Format::E4M3, Format::E5M2, Format::Bf16, Format::Fp16, Format::Fp4E2M1,
                    Format::Int4, Format::Nf4, Format::E8M0, Format::S8, Format::U8}) {
    std::vector<double> v;
    for (int i = 0; i < 500; ++i) v.push_back((rng() & 1 ? -1 : 1) * std::exp2(e(rng)));
    std::vector<std::uint32_t> out(v.size());
    convert_values(Format::Fp32, to, v.data(), out.data(), v.size(), Overflow::Saturate);
    for (std::size_t i = 0; i < v.size(); ++i) {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", v[i]);
      ASSERT_EQ(out[i], line_code(Format::Fp32, to, text, Overflow::Saturate))
          << info(to).name << " " << text;
    }
  }
}

TEST(ConvertArray, TablePathEqualsElementPath) {
  // 2^16 + 5 BF16 codes take the table; their first 2^16 converted alone do not.
  std::vector<std::int64_t> in((1 << 16) + 5);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::int64_t>(i % 65536);
  std::vector<std::uint8_t> long_out(in.size()), short_out(100);
  convert_codes(Format::Bf16, Format::E4M3, in.data(), long_out.data(), in.size(),
                Overflow::Saturate);
  for (std::size_t start = 0; start < 65536; start += 100) {
    const std::size_t n = std::min<std::size_t>(100, 65536 - start);
    convert_codes(Format::Bf16, Format::E4M3, in.data() + start, short_out.data(), n,
                  Overflow::Saturate);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(short_out[i], long_out[start + i]);
  }
  std::vector<float> d(in.size());
  decode_codes(Format::Bf16, in.data(), d.data(), in.size());
  for (std::size_t i = 0; i < 65536; i += 97) {
    const float want = static_cast<float>(decode(Format::Bf16, static_cast<std::uint32_t>(i)));
    if (want == want)
      EXPECT_EQ(d[i], want) << i;
    else
      EXPECT_NE(d[i], d[i]) << i;
  }
}

TEST(ConvertArray, BadCodesAreRefusedBeforeAnythingIsWritten) {
  const std::vector<std::int64_t> in = {1, 2, 16, 3};
  std::vector<std::uint8_t> out(4, 0xAA);
  try {
    convert_codes(Format::Fp4E2M1, Format::E4M3, in.data(), out.data(), in.size(),
                  Overflow::Saturate);
    FAIL() << "no error";
  } catch (const CodeError& e) {
    EXPECT_EQ(e.index(), 2u);
    EXPECT_STREQ(e.what(), "element 2: code 0x10 does not fit in fp4_e2m1 (4 bits)");
  }
  EXPECT_EQ(out, std::vector<std::uint8_t>(4, 0xAA));
  const std::vector<std::int64_t> neg = {-1};
  EXPECT_THROW(
      convert_codes(Format::S8, Format::E4M3, neg.data(), out.data(), 1, Overflow::Saturate),
      CodeError);
  // An output element too narrow for the destination's codes.
  std::vector<std::uint8_t> narrow(1);
  const std::vector<std::int64_t> one = {1};
  EXPECT_THROW(
      convert_codes(Format::E4M3, Format::Bf16, one.data(), narrow.data(), 1, Overflow::Saturate),
      std::invalid_argument);
  EXPECT_EQ(code_container_bits(Format::Fp32), 32u);
  EXPECT_EQ(code_container_bits(Format::Fp16), 16u);
  EXPECT_EQ(code_container_bits(Format::Fp6E2M3), 8u);
}

}  // namespace

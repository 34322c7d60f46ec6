// The element operations of tensor_copy and of the DMA add on write
// (models/numerics/element_ops) against the independent reference of
// test_element_ops_ref.h: every pair of the nine convertible DTYPEs with
// every code of the 8- and 16-bit sources and tens of thousands of FP32
// patterns (random, exact ties of every narrower format, specials); the
// same-DTYPE copies of every DTYPE bit for bit; the add of every float
// DTYPE and the modulo add of every integer DTYPE.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "models/isa/predicates.h"
#include "models/numerics/element_ops.h"
#include "sc_tests/unit/test_element_ops_ref.h"

using namespace tpb;
using elemref::Def;
using elemref::kDefs;

namespace {

void put(std::vector<std::uint8_t>& v, std::size_t i, std::uint32_t code, unsigned bytes) {
  std::memcpy(v.data() + i * bytes, &code, bytes);
}

// Source codes of `d` to convert: every code of a 1- or 2-byte format; for
// FP32 random patterns, the exact ties (and their neighbours) of every
// narrower float format around its whole exponent range, and the specials.
std::vector<std::uint32_t> source_codes(const Def& d) {
  std::vector<std::uint32_t> v;
  if (d.bytes <= 2) {
    for (std::uint32_t c = 0; c < (1u << (8 * d.bytes)); ++c) v.push_back(c);
    return v;
  }
  std::mt19937 rng(20240611);
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<std::uint32_t>(rng()));
  for (const Def& n : kDefs) {
    if (n.kind != elemref::Kind::Ieee && n.kind != elemref::Kind::Fn) continue;
    if (n.M == 23) continue;
    const std::uint32_t half = 1u << (22 - n.M);  // half an ulp of n
    for (int e = 127 - n.bias - n.M - 2; e <= 127 + (1 << n.E) - n.bias + 1; ++e) {
      if (e < 1 || e > 254) continue;
      for (int k = 0; k < 8; ++k) {
        const std::uint32_t mant =
            (static_cast<std::uint32_t>(rng()) & 0x7FFFFFu & ~(2 * half - 1)) | half;
        const std::uint32_t sign = (k & 1) ? 0x80000000u : 0u;
        const std::uint32_t bits = sign | (static_cast<std::uint32_t>(e) << 23) | mant;
        v.push_back(bits);      // an exact tie of n
        v.push_back(bits + 1);  // just above
        v.push_back(bits - 1);  // just below
      }
    }
  }
  for (std::uint32_t s :
       {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F7FFFFFu,
        0xFF7FFFFFu, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00800000u, 0x43E00000u /* 448 */,
        0x43E80000u /* 464: the E4M3 tie above 448 */, 0x47600000u /* 57344 */,
        0x477FE000u /* 65504 */, 0x477FF000u /* 65520 */, 0x3F800000u, 0xBF800000u})
    v.push_back(s);
  return v;
}

}  // namespace

TEST(ElementOps, ConvertEveryDtypePairAgainstTheReference) {
  for (const Def& in : kDefs) {
    const std::vector<std::uint32_t> codes = source_codes(in);
    std::vector<std::uint8_t> src(codes.size() * in.bytes);
    for (std::size_t i = 0; i < codes.size(); ++i) put(src, i, codes[i], in.bytes);
    for (const Def& out : kDefs) {
      SCOPED_TRACE(std::string(in.name) + " -> " + out.name);
      std::vector<std::uint8_t> dst(codes.size() * out.bytes, 0xA5);
      ASSERT_TRUE(num::convert_elements(in.dtype, out.dtype, src.data(), dst.data(), codes.size()));
      std::size_t bad = 0;
      for (std::size_t i = 0; i < codes.size(); ++i) {
        const std::uint32_t got = elemref::load(dst.data() + i * out.bytes, out.bytes);
        if (in.dtype == out.dtype) {
          // The same DTYPE: bit for bit, NaN payloads included.
          if (got != codes[i] && bad++ < 5) ADD_FAILURE() << "code 0x" << std::hex << codes[i];
          continue;
        }
        const std::uint32_t want = elemref::nearest(out, elemref::value(in, codes[i]));
        if (!elemref::same(out, got, want) && bad++ < 5)
          ADD_FAILURE() << "code 0x" << std::hex << codes[i] << " (" << elemref::value(in, codes[i])
                        << "): got 0x" << got << " want 0x" << want;
      }
      EXPECT_EQ(bad, 0u);
    }
  }
}

TEST(ElementOps, SameDtypeCopiesEveryDtypeBitForBit) {
  std::mt19937 rng(7);
  // Every tensor DTYPE with a size, also those without a conversion.
  for (std::uint8_t d :
       {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0C, 0x0D, 0x0E, 0x0F}) {
    std::vector<std::uint8_t> src(4096), dst(4096, 0);
    for (auto& b : src) b = static_cast<std::uint8_t>(rng());
    const unsigned es = d == 0x03 || d == 0x04 || d == 0x05 || d == 0x06 ? 2
                        : d == 0x07 || d == 0x08 || d == 0x09            ? 4
                                                                         : 1;
    ASSERT_TRUE(num::convert_elements(d, d, src.data(), dst.data(), 4096 / es)) << int(d);
    EXPECT_EQ(src, dst) << int(d);
  }
}

TEST(ElementOps, PairsWithoutAConversionWriteNothing) {
  std::vector<std::uint8_t> src(64, 1), dst(64, 0xA5);
  // The 16- and 32-bit integers convert through FP32 since SPEC §18; FP32R,
  // FP4, E8M0 and ordinals that are no DTYPE have no conversion.
  for (auto [in, out] : {std::pair<int, int>{0x0A, 0x08},
                         {0x08, 0x0A},
                         {0x08, 0x10},
                         {0x13, 0x08},
                         {0x07, 0x12},
                         {0x00, 0x00},
                         {0x11, 0x11}}) {
    EXPECT_FALSE(num::convert_elements(static_cast<std::uint8_t>(in),
                                       static_cast<std::uint8_t>(out), src.data(), dst.data(), 16))
        << in << " -> " << out;
    EXPECT_EQ(dst, std::vector<std::uint8_t>(64, 0xA5));
  }
}

// One fact in two places, kept equal: the checker's DTYPE sets and the
// numerics' (the ISA layer cannot call the numerics).
TEST(ElementOps, DtypeSetsAgreeWithThePredicates) {
  for (unsigned d = 0; d < 256; ++d) {
    const auto b = static_cast<std::uint8_t>(d);
    EXPECT_EQ(isa::pred::valid_vector_dtype(b), num::is_numeric_dtype(b)) << d;
    EXPECT_EQ(isa::pred::dma_rmw_add_dtype(b), num::is_add_dtype(b)) << d;
  }
  for (const Def& d : kDefs) EXPECT_TRUE(num::element_format(d.dtype).has_value()) << d.name;
}

TEST(ElementOps, AddEveryFloatDtypeAgainstTheReference) {
  std::mt19937 rng(99);
  for (const Def& d : kDefs) {
    if (d.kind == elemref::Kind::Int || d.kind == elemref::Kind::Uint) continue;
    SCOPED_TRACE(d.name);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    if (d.bytes == 1) {
      for (std::uint32_t a = 0; a < 256; ++a)
        for (std::uint32_t b = 0; b < 256; ++b) pairs.push_back({a, b});
    } else {
      const std::uint32_t mask = d.bytes == 2 ? 0xFFFFu : 0xFFFFFFFFu;
      for (int i = 0; i < 100000; ++i) {
        const std::uint32_t a = static_cast<std::uint32_t>(rng()) & mask;
        // Half the pairs close in magnitude (so that they round), half anything.
        std::uint32_t b = static_cast<std::uint32_t>(rng()) & mask;
        if (i & 1) b = (a & ~(mask >> 6)) ^ (b & (mask >> 6));
        pairs.push_back({a, b});
      }
    }
    std::vector<std::uint8_t> acc(pairs.size() * d.bytes), src(pairs.size() * d.bytes);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      put(acc, i, pairs[i].first, d.bytes);
      put(src, i, pairs[i].second, d.bytes);
    }
    ASSERT_TRUE(num::add_elements(d.dtype, src.data(), acc.data(), pairs.size()));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const double sum = elemref::value(d, pairs[i].first) + elemref::value(d, pairs[i].second);
      std::uint32_t want;
      if (d.M == 23) {
        // FP32: IEEE single addition (the double sum of two floats rounds to
        // float as the float sum does), Inf on overflow.
        const float f = static_cast<float>(sum);
        std::memcpy(&want, &f, 4);
      } else {
        want = elemref::nearest(d, sum);
      }
      const std::uint32_t got = elemref::load(acc.data() + i * d.bytes, d.bytes);
      if (!elemref::same(d, got, want) && bad++ < 5)
        ADD_FAILURE() << std::hex << "0x" << pairs[i].first << " + 0x" << pairs[i].second
                      << ": got 0x" << got << " want 0x" << want;
    }
    EXPECT_EQ(bad, 0u);
  }
}

TEST(ElementOps, AddIntegersModuloTheirWidth) {
  std::mt19937 rng(5);
  const struct {
    std::uint8_t dtype;
    unsigned bytes;
  } ints[] = {{0x01, 1}, {0x02, 1}, {0x03, 2}, {0x04, 2}, {0x07, 4}, {0x09, 4}};
  for (const auto& t : ints) {
    const std::size_t n = 5000;
    std::vector<std::uint8_t> acc(n * t.bytes), src(n * t.bytes);
    for (auto& b : acc) b = static_cast<std::uint8_t>(rng());
    for (auto& b : src) b = static_cast<std::uint8_t>(rng());
    const std::vector<std::uint8_t> before = acc;
    ASSERT_TRUE(num::add_elements(t.dtype, src.data(), acc.data(), n));
    const std::uint64_t modulus = std::uint64_t{1} << (8 * t.bytes);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t a = elemref::load(before.data() + i * t.bytes, t.bytes);
      const std::uint64_t b = elemref::load(src.data() + i * t.bytes, t.bytes);
      ASSERT_EQ(elemref::load(acc.data() + i * t.bytes, t.bytes), (a + b) % modulus)
          << int(t.dtype) << " element " << i;
    }
  }
  std::vector<std::uint8_t> x(8, 0);
  EXPECT_FALSE(num::add_elements(0x13, x.data(), x.data(), 8));  // E8M0: not added
  EXPECT_FALSE(num::add_elements(0x10, x.data(), x.data(), 8));  // FP4
}

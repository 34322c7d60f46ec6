// The SFU TQUANT kernel (seed 002, SPEC §6) behind a test-double
// KernelContext: every item of the seed's exceptions, legality and defaults
// lists broken alone, with the fault class and rule checked and the tile
// file, flags and rename map bit-identical after the fault (snapshot); the
// PE_MASK 0 no-op before anything else; results, padding, renaming and
// sticky flags of legal blocks.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "firmware_stubs/builtin_kernels.h"
#include "firmware_stubs/sfu/tquant.h"
#include "models/isa/opcode_table.h"
#include "models/isa/tquant_block.h"
#include "models/kernel/kernel.h"
#include "models/state/sfu_tile_file.h"

using namespace tpb;
using sfu::TileFile;

namespace {

std::uint32_t fbits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

class SfuContext : public fw::KernelContext {
 public:
  const isa::RawInst& inst() const override { return inst_; }
  isa::Arch arch() const override { return isa::Arch::Mariana; }
  isa::Queue engine() const override { return isa::Queue::Sfu; }
  std::uint32_t reg(unsigned r) const override {
    ++reg_reads;
    return regs.at(r);
  }
  const timing::TimingConfig& timing() const override { return timing_; }
  fw::EngineState& engine_state() override { return state_; }
  void read(std::uint64_t, void*, std::size_t) override { throw fw::KernelFault("no memory"); }
  void write(std::uint64_t, const void*, std::size_t) override {
    throw fw::KernelFault("no memory");
  }
  void begin_bundle(const fw::Bundle& b, std::uint64_t trips, std::uint32_t) override {
    bundles.push_back(b.name + ":" + std::to_string(trips));
  }
  void end_bundle(const fw::Bundle&) override {}

  TileFile& tiles() { return state_.get<TileFile>(); }
  // Runs one word; "" when it retires, else the fault message.
  std::string run(const isa::RawInst& w) {
    inst_ = w;
    new_instruction();
    bundles.clear();
    const fw::KernelRegistry& k = fw::builtin_kernels();
    try {
      k.execute(fw::kTquantTrampolineVa, *this, k.resolve_costs(timing_));
    } catch (const fw::KernelFault& e) {
      return e.what();
    }
    return "";
  }

  std::array<std::uint32_t, 32> regs{};
  mutable unsigned reg_reads = 0;
  std::vector<std::string> bundles;

 private:
  isa::RawInst inst_{};
  timing::TimingConfig timing_ = timing::default_timing(isa::Arch::Mariana);
  fw::EngineState state_;
};

isa::RawInst word(const std::string& text) {
  return isa::assemble_tquant_block(text, isa::SourceLoc{"t", 1, 1});
}

// A legal block over T1 (4 x 16 FP32) into T0, multiplier in r1, zero point in r2.
const std::string kPre = "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; ";
const std::string kDims = "B.DIM LB0=16; B.DIM LB1=4; ";
const std::string kIor = "B.IOR r1, r2; ";
const std::string kIot = "B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP";
const std::string kBase = kPre + kDims + kIor + kIot;

std::vector<float> ramp(std::size_t n, float step, float start) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

class Tquant : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto v = ramp(64, 0.75f, -20.0f);
    ctx.tiles().load_fp32(1, 4, 16, 16, v.data());
    ctx.regs[1] = fbits(2.0f);
    ctx.regs[2] = 3;
  }
  // The rule's class and name, and nothing changed (snapshot).
  void expect_fault(const isa::RawInst& w, const std::string& cls, const std::string& rule) {
    const TileFile before = ctx.tiles();
    const std::string msg = ctx.run(w);
    EXPECT_EQ(msg.rfind(cls + ": " + rule, 0), 0u) << "got: " << msg;
    EXPECT_TRUE(ctx.tiles() == before) << "tile file changed by a fault: " << msg;
  }
  void expect_legality(const std::string& text, const std::string& rule) {
    SCOPED_TRACE(text);
    expect_fault(word(text), fw::kFaultTileLegality, rule);
  }
  void expect_allocation(const std::string& text, const std::string& rule) {
    SCOPED_TRACE(text);
    expect_fault(word(text), fw::kFaultTileAllocation, rule);
  }
  SfuContext ctx;
};

TEST_F(Tquant, SeedExampleAndBaseRun) {
  ASSERT_EQ(ctx.run(word(kBase)), "");
  const auto& t0 = ctx.tiles().tile(0);
  ASSERT_TRUE(t0.allocated);
  EXPECT_EQ(t0.dtype, static_cast<std::uint8_t>(isa::TileDataType::S8));
  EXPECT_EQ(t0.valid_row, 4);
  EXPECT_EQ(t0.valid_col, 16);
  // x = -20 + 0.75 i; y = RNE(2x + 3) clamped: written out for a few i.
  const auto y = ctx.tiles().valid_bytes(0);
  ASSERT_EQ(y.size(), 64u);
  EXPECT_EQ(static_cast<std::int8_t>(y[0]), -37);  // 2 * -20 + 3
  EXPECT_EQ(static_cast<std::int8_t>(y[1]), -36);  // -38.5 + 3 = -35.5 -> RNE -36
  EXPECT_EQ(static_cast<std::int8_t>(y[63]), 58);  // 2 * 27.25 + 3 = 57.5 -> RNE 58
  EXPECT_TRUE(ctx.tiles().flags().inexact);
  EXPECT_FALSE(ctx.tiles().flags().saturated);
  // The seed's example line, on a 1 x 16 source.
  const auto v = ramp(16, 1.0f, -8.0f);
  ctx.tiles().load_fp32(1, 1, 16, 16, v.data());
  ASSERT_EQ(ctx.run(word("BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=16; B.IOT "
                         "T1, mask=1111, <last>, ->T0<1>; BSTOP")),
            "");
  const auto e = ctx.tiles().valid_bytes(0);
  ASSERT_EQ(e.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<std::int8_t>(e[i]), i - 8);
}

// ---- PE_MASK 0: a strict no-op before anything else ------------------------------
TEST_F(Tquant, MaskZeroIsAStrictNoOpEvenWhenEverythingElseIsIllegal) {
  ctx.regs[5] = 0;  // a zero multiplier, never read
  const std::string broken =
      "BSTART.SFU TQUANT, FP16; B.DATR U16, RMode=9, Sat=4, Canonicalize=1; B.DATR S8; "
      "B.DIM LB3=0; B.IOR r5, r6, r7; B.IOS T2; B.IOT T31, T30, mask=0000, ->T31<900>, ->T2<1>; "
      "B.IOT T1; BSTOP";
  isa::RawInst w = word(broken);
  w[14] = 7;     // not Mode 3
  w[60] = 0xFF;  // reserved
  const TileFile before = ctx.tiles();
  EXPECT_EQ(ctx.run(w), "");
  EXPECT_EQ(ctx.reg_reads, 0u);
  EXPECT_TRUE(ctx.tiles() == before);
  // The worker issued, but none of its effect bundles did.
  for (const auto& b : ctx.bundles)
    if (b.rfind("sfu.tquant.", 0) == 0 && b != "sfu.tquant.mask:1" && b != "sfu.tquant.return:1") {
      EXPECT_EQ(b.substr(b.find(':')), ":0") << b;
    }
}

// ---- seed 002 "exceptions" / "legality": Fault_TileLegality -------------------------
TEST_F(Tquant, EncodingCarrierMode3Function10) {
  isa::RawInst w = word(kBase);
  w[14] = 2;
  expect_fault(w, fw::kFaultTileLegality, "encoding carrier");
  w = word(kBase);
  w[15] = 11;
  expect_fault(w, fw::kFaultTileLegality, "encoding carrier");
  w = word(kBase);
  w[12] = 0x6B;
  expect_fault(w, fw::kFaultTileLegality, "encoding carrier");
}

TEST_F(Tquant, MissingBindings) {
  expect_legality(kPre + "B.DIM LB1=4; " + kIor + kIot, "missing binding");  // no LB0
  expect_legality(kPre + kDims + kIor + "BSTOP", "missing binding");         // no B.IOT
  expect_legality(kPre + kDims + kIor + "B.IOT T1, mask=1111, ->T0<1>; BSTOP",
                  "missing binding");  // not terminating
  expect_legality(kPre + kDims + kIor + "B.IOT mask=1111, <last>, ->T0<1>; BSTOP",
                  "missing binding");  // no source
  expect_legality(kPre + kDims + kIor + "B.IOT T1, mask=1111, <last>; BSTOP",
                  "missing binding");  // no destination
}

TEST_F(Tquant, SurplusBindings) {
  expect_legality(kPre + kDims + "B.DIM LB3=2; " + kIor + kIot, "surplus binding");
  expect_legality(kPre + kDims + "B.DIM LB0=16; " + kIor + kIot, "surplus binding");
  expect_legality(kPre + "B.DATR S8, RNE, Sat=1; " + kDims + kIor + kIot, "surplus binding");
  expect_legality(kPre + kDims + kIor + kIor + kIot, "surplus binding");
}

TEST_F(Tquant, BIosSecondBIotSecondSourceSecondDestination) {
  expect_legality(kPre + kDims + kIor + "B.IOS T2; " + kIot, "B.IOS");
  expect_legality(kPre + kDims + kIor + "B.IOT T1, mask=1111, <last>, ->T0<1>; " + kIot,
                  "a second B.IOT");
  expect_legality(kPre + kDims + kIor + "B.IOT T1, T2, mask=1111, <last>, ->T0<1>; BSTOP",
                  "a second source");
  expect_legality(kPre + kDims + kIor + "B.IOT T1, mask=1111, <last>, ->T0<1>, ->T3<1>; BSTOP",
                  "a second destination");
}

TEST_F(Tquant, AbsentOrInvalidBDatr) {
  const std::string start = "BSTART.SFU TQUANT, FP32; ";
  expect_legality(start + kDims + kIor + kIot, "absent B.DATR");
  expect_legality(start + "B.DATR S8, RMode=5, Sat=1; " + kDims + kIor + kIot, "invalid B.DATR");
  expect_legality(start + "B.DATR S8, RNE, Sat=2; " + kDims + kIor + kIot, "invalid B.DATR");
}

TEST_F(Tquant, NonZeroInapplicableFields) {
  const std::string start = "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1, ";
  expect_legality(start + "Canonicalize=1; " + kDims + kIor + kIot, "non-zero inapplicable field");
  expect_legality(start + "CMode=1; " + kDims + kIor + kIot, "non-zero inapplicable field");
  expect_legality(start + "PadValue=3; " + kDims + kIor + kIot, "non-zero inapplicable field");
  expect_legality(kPre + kDims + "B.IOR r1, r2, r3; " + kIot, "non-zero inapplicable field");
  expect_legality(kPre + kDims + "B.IOR r1, r2, r0, r4; " + kIot, "non-zero inapplicable field");
  for (unsigned b = 52; b < 64; ++b) {
    isa::RawInst w = word(kBase);
    w[b] = 1;
    expect_fault(w, fw::kFaultTileLegality, "non-zero inapplicable field");
  }
}

TEST_F(Tquant, NonRowMajorLayout) {
  expect_legality(
      "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1, Layout=1; " + kDims + kIor + kIot,
      "non-row-major layout");
}

TEST_F(Tquant, UnsupportedTypes) {
  const std::string rest = "B.DATR S8, RNE, Sat=1; " + kDims + kIor + kIot;
  expect_legality("BSTART.SFU TQUANT, FP16; " + rest, "unsupported type");
  expect_legality("BSTART.SFU TQUANT, FP64; " + rest, "unsupported type");  // DataType zero
  expect_legality("BSTART.SFU TQUANT, S8; " + rest, "unsupported type");
  for (const char* d : {"U16", "S32", "FP32", "FP64"})
    expect_legality("BSTART.SFU TQUANT, FP32; B.DATR " + std::string(d) + ", RNE, Sat=1; " + kDims +
                        kIor + kIot,
                    "unsupported type");
  // A source tile that is not FP32: T0 holds an S8 tile after a first run.
  ASSERT_EQ(ctx.run(word(kBase)), "");
  expect_legality(kPre + kDims + kIor + "B.IOT T0, mask=1, <last>, ->T5<1>; BSTOP",
                  "unsupported type");
}

TEST_F(Tquant, MalformedDimensions) {
  expect_legality(kPre + "B.DIM LB0=0; B.DIM LB1=4; " + kIor + kIot, "malformed dimensions");
  expect_legality(kPre + "B.DIM LB0=16; B.DIM LB1=0; " + kIor + kIot, "malformed dimensions");
  expect_legality(kPre + kDims + "B.DIM LB2=8; " + kIor + kIot, "malformed dimensions");
  // The source valid region and physical Col must match LB1, LB0, LB2.
  expect_legality(kPre + "B.DIM LB0=16; B.DIM LB1=3; " + kIor + kIot, "malformed dimensions");
  expect_legality(kPre + "B.DIM LB0=8; B.DIM LB1=4; B.DIM LB2=16; " + kIor + kIot,
                  "malformed dimensions");
  expect_legality(kPre + kDims + "B.DIM LB2=20; " + kIor + kIot, "malformed dimensions");
}

TEST_F(Tquant, UndefinedOrInvalidSourceElements) {
  // A tile never written, and the Null padding of a tile with Col > ValidCol.
  expect_legality(kPre + kDims + kIor + "B.IOT T7, mask=1, <last>, ->T0<1>; BSTOP",
                  "undefined source");
  const auto v = ramp(32, 1.0f, 0.0f);
  ctx.tiles().load_fp32(8, 2, 16, 20, v.data());
  expect_legality(kPre + "B.DIM LB0=20; B.DIM LB1=2; B.DIM LB2=20; " + kIor +
                      "B.IOT T8, mask=1, <last>, ->T0<1>; BSTOP",
                  "undefined source element");
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    auto w = ramp(64, 0.5f, 0.0f);
    w[37] = bad;
    ctx.tiles().load_fp32(1, 4, 16, 16, w.data());
    expect_legality(kBase, "invalid source element");
  }
}

TEST_F(Tquant, MultiplierZeroNegativeOrNotFinite) {
  for (std::uint32_t m : {0x00000000u, 0x80000000u, fbits(-1.0f), fbits(-1e-45f), 0x7F800000u,
                          0xFF800000u, 0x7FC00000u, 0x7F800001u}) {
    ctx.regs[1] = m;
    expect_legality(kBase, "multiplier");
  }
  // A present all-zero B.IOR selects multiplier zero; r0 is a real read.
  ctx.regs[0] = 0;
  expect_legality(kPre + kDims + "B.IOR r0, r0; " + kIot, "multiplier");
}

TEST_F(Tquant, ZeroPointOutOfRangeOrNotCanonical) {
  for (std::uint32_t zp : {128u, 0x80u, 0xFFu, 0x0000FF80u, 0xFFFFFF7Fu, 0x80000000u}) {
    ctx.regs[2] = zp;
    expect_legality(kBase, "zero point");
  }
  const std::string u8 = "BSTART.SFU TQUANT, FP32; B.DATR U8, RNE, Sat=1; " + kDims + kIor + kIot;
  for (std::uint32_t zp : {256u, 0xFFFFFFFFu, 0xFFFFFF80u}) {
    ctx.regs[2] = zp;
    expect_legality(u8, "zero point");
  }
  // The canonical ends are legal.
  for (std::uint32_t zp : {0xFFFFFF80u, 127u}) {
    ctx.regs[2] = zp;
    EXPECT_EQ(ctx.run(word(kBase)), "");
  }
  ctx.regs[2] = 255;
  EXPECT_EQ(ctx.run(word(u8)), "");
}

// ---- Fault_TileAllocation -------------------------------------------------------------
TEST_F(Tquant, UnrepresentableDestinationShape) {
  expect_allocation(kPre + kDims + kIor + "B.IOT T1, mask=1, <last>, ->T0<257>; BSTOP",
                    "unrepresentable destination shape");
}

TEST_F(Tquant, UnavailableRenamedDestination) {
  expect_allocation(kPre + kDims + kIor + "B.IOT T1, mask=1, <last>, ->T1<1>; BSTOP",
                    "unavailable renamed destination");
  expect_allocation(kPre + kDims + kIor + "B.IOT T1, mask=1, <last>, ->T32<1>; BSTOP",
                    "unavailable renamed destination");
}

TEST_F(Tquant, InsufficientTSize) {
  expect_allocation(kPre + kDims + kIor + "B.IOT T1, mask=1, <last>, ->T0<0>; BSTOP",
                    "insufficient TSize");
  // 4 x 300 S8 elements need 2 units.
  const auto v = ramp(1200, 0.01f, 0.0f);
  ctx.tiles().load_fp32(1, 4, 300, 300, v.data());
  expect_allocation(kPre + "B.DIM LB0=300; B.DIM LB1=4; " + kIor + kIot, "insufficient TSize");
  EXPECT_EQ(ctx.run(word(kPre + "B.DIM LB0=300; B.DIM LB1=4; " + kIor +
                         "B.IOT T1, mask=1, <last>, ->T0<2>; BSTOP")),
            "");
}

TEST_F(Tquant, ExhaustedCapacity) {
  // T1 takes 1 unit; T9 (64 x 1012 FP32) 253: 2 of 256 units free.
  const auto v = ramp(64 * 1012, 0.0f, 1.0f);
  ctx.tiles().load_fp32(9, 64, 1012, 1012, v.data());
  ASSERT_EQ(ctx.tiles().free_units(), 2u);
  expect_allocation(kPre + kDims + kIor + "B.IOT T1, mask=1, <last>, ->T0<3>; BSTOP",
                    "exhausted capacity");
  // The old tile of the destination name is freed only at the publish.
  ASSERT_EQ(ctx.run(word(kPre + kDims + kIor + "B.IOT T1, mask=1, <last>, ->T0<2>; BSTOP")), "");
  EXPECT_EQ(ctx.tiles().free_units(), 0u);
  expect_allocation(kPre + kDims + kIor + "B.IOT T1, mask=1, <last>, ->T0<1>; BSTOP",
                    "exhausted capacity");
}

// Legality before allocation: a block that breaks one rule of each class is a
// legality fault.
TEST_F(Tquant, LegalityBeforeAllocation) {
  expect_legality(kPre + kDims + kIor + "B.IOS; B.IOT T1, mask=1, <last>, ->T1<0>; BSTOP", "B.IOS");
}

// ---- seed 002 "defaults" ----------------------------------------------------------------
TEST_F(Tquant, OmittedLb1IsOneAndOmittedLb2IsValidCol) {
  const auto v = ramp(16, 1.0f, 0.0f);
  ctx.tiles().load_fp32(1, 1, 16, 16, v.data());
  const std::string no_dims = kPre + "B.DIM LB0=16; " + kIor + kIot;
  EXPECT_EQ(ctx.run(word(no_dims)), "");
  EXPECT_EQ(ctx.tiles().tile(0).valid_row, 1);
  EXPECT_EQ(ctx.tiles().tile(0).col, 16);
  // A 4-row source does not match the omitted LB1.
  const auto w = ramp(64, 1.0f, 0.0f);
  ctx.tiles().load_fp32(1, 4, 16, 16, w.data());
  expect_legality(no_dims, "malformed dimensions");
  // Col 20 > ValidCol 16: the omitted LB2 (16) does not match; LB2=20 does, and
  // the destination's padding columns are undefined (Null).
  ctx.tiles().load_fp32(1, 4, 16, 20, w.data());
  expect_legality(kPre + kDims + kIor + kIot, "malformed dimensions");
  ASSERT_EQ(ctx.run(word(kPre + kDims + "B.DIM LB2=20; " + kIor + kIot)), "");
  const auto& t0 = ctx.tiles().tile(0);
  EXPECT_EQ(t0.col, 20);
  for (unsigned r = 0; r < 4; ++r)
    for (unsigned c = 0; c < 20; ++c) EXPECT_EQ(t0.defined[r * 20 + c], c < 16) << r << "," << c;
  for (std::size_t b = 80; b < t0.defined.size(); ++b) ASSERT_EQ(t0.defined[b], 0) << b;
}

TEST_F(Tquant, OmittedBIorIsMultiplierOneZeroPointZeroWithoutGprReads) {
  ctx.regs[1] = fbits(1.0f);
  ctx.regs[2] = 0;
  ASSERT_EQ(ctx.run(word(kBase)), "");
  const auto with_ior = ctx.tiles().valid_bytes(0);
  ctx.reg_reads = 0;
  ASSERT_EQ(ctx.run(word(kPre + kDims + kIot)), "");
  EXPECT_EQ(ctx.reg_reads, 0u);
  EXPECT_EQ(ctx.tiles().valid_bytes(0), with_ior);
  // A present B.IOR naming r0 reads r0.
  ctx.regs[0] = fbits(4.0f);
  ASSERT_EQ(ctx.run(word(kPre + kDims + "B.IOR r0, r2; " + kIot)), "");
  const auto y = ctx.tiles().valid_bytes(0);
  EXPECT_EQ(static_cast<std::int8_t>(y[0]), -80);  // 4 * -20
}

TEST_F(Tquant, RModeZeroIsRneAndSatZeroIsModulo) {
  const float x[16] = {0.5f,   1.5f, 2.5f, -0.5f, -1.5f, 200.0f, -200.0f, 1e30f,
                       127.5f, 0,    0,    0,     0,     0,      0,       0};
  ctx.tiles().load_fp32(1, 1, 16, 16, x);
  isa::RawInst w = word("BSTART.SFU TQUANT, FP32; B.DATR S8, RTZ, Sat=1; B.DIM LB0=16; " + kIot);
  w[19] = 0;  // RMode 0
  w[20] = 0;  // Sat 0
  ASSERT_EQ(ctx.run(w), "");
  const auto y = ctx.tiles().valid_bytes(0);
  const int want[9] = {0, 2, 2, 0, -2, -56, 56, 0, -128};  // RNE, then modulo 256
  for (int i = 0; i < 9; ++i) EXPECT_EQ(static_cast<std::int8_t>(y[i]), want[i]) << i;
  EXPECT_TRUE(ctx.tiles().flags().wrapped);
  EXPECT_FALSE(ctx.tiles().flags().saturated);
}

// ---- effects of legal blocks -------------------------------------------------------------
TEST_F(Tquant, RenamePublishAndStickyFlags) {
  ASSERT_EQ(ctx.run(word(kBase)), "");
  const std::uint32_t first = ctx.tiles().rename_map()[0];
  const unsigned used = ctx.tiles().used_units();
  EXPECT_TRUE(ctx.tiles().flags().inexact);
  // An exact block (multiplier 1, integers) keeps the sticky inexact flag and
  // renames T0 to a fresh allocation, freeing the old one.
  const auto ints = ramp(64, 1.0f, -32.0f);
  ctx.tiles().load_fp32(1, 4, 16, 16, ints.data());
  ctx.regs[1] = fbits(1.0f);
  ASSERT_EQ(ctx.run(word(kBase)), "");
  EXPECT_GT(ctx.tiles().rename_map()[0], first);
  EXPECT_EQ(ctx.tiles().used_units(), used);
  EXPECT_TRUE(ctx.tiles().flags().inexact);
  EXPECT_FALSE(ctx.tiles().flags().saturated);
  // The source persists.
  EXPECT_TRUE(ctx.tiles().tile(1).allocated);
  // Saturation raises `saturated`, U8 negative with Sat 1 clamps to 0.
  ctx.regs[1] = fbits(100.0f);
  ctx.regs[2] = 0;
  ASSERT_EQ(ctx.run(word("BSTART.SFU TQUANT, FP32; B.DATR U8, RNE, Sat=1; " + kDims + kIor + kIot)),
            "");
  EXPECT_TRUE(ctx.tiles().flags().saturated);
  EXPECT_EQ(ctx.tiles().valid_bytes(0)[0], 0);
  EXPECT_EQ(ctx.tiles().valid_bytes(0)[63], 255);
}

}  // namespace

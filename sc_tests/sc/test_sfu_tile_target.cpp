// The SFU tile file as a TLM target in region 2 (SPEC §2, §6): payload,
// descriptors and flags through the router's debug transport and an engine's
// b_transport path, TLM errors for unbacked bytes; a TQUANT block run through
// the platform publishes into it.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/tquant_block.h"
#include "platform/core/tpb_core.h"

using namespace tpb;

namespace {

constexpr std::uint32_t kBase = isa::region_base(isa::Region::SfuTile);

std::uint32_t get32(const std::vector<std::uint8_t>& v, std::size_t at) {
  std::uint32_t x;
  std::memcpy(&x, v.data() + at, 4);
  return x;
}

TEST(SfuTileTarget, Region2PayloadDescriptorsFlagsAndErrors) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  const float x[8] = {0.5f, 1.5f, -2.5f, 3.0f, 100.0f, -100.0f, 7.25f, 0.0f};
  core->tile_file().load_fp32(3, 2, 4, 6, x);  // 2 x 4, Col 6
  // The router maps region 2 to the tile file.
  const sc::RouteEntry* e = core->router().decode(kBase + 3 * sfu::kTilePayloadStride);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "sfu.tiles");
  // Payload of T3: row 1 starts at Col 6 x 4 bytes.
  const auto row1 = core->dump_memory(kBase + 3 * sfu::kTilePayloadStride + 24, 16);
  float got[4];
  std::memcpy(got, row1.data(), 16);
  EXPECT_EQ(got[0], 100.0f);
  EXPECT_EQ(got[3], 0.0f);
  // Descriptor of T3.
  const auto d = core->dump_memory(kBase + sfu::kDescriptorBase + 3 * 16, 16);
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[1], static_cast<std::uint8_t>(isa::TileDataType::Fp32));
  EXPECT_EQ(get32(d, 4), 2u | (4u << 16));  // ValidRow 2, ValidCol 4
  EXPECT_EQ(get32(d, 8), 6u | (1u << 16));  // Col 6, TSize 1
  // Unallocated tile, metadata write, beyond the map: errors.
  EXPECT_THROW(core->dump_memory(kBase + 0 * sfu::kTilePayloadStride, 4), std::runtime_error);
  std::uint8_t one = 1;
  EXPECT_THROW(core->load_memory(kBase + sfu::kFlagsOffset, &one, 1), std::runtime_error);
  EXPECT_THROW(core->dump_memory(kBase + sfu::kFlagsOffset + 8, 4), std::runtime_error);
  // A payload write through the target marks bytes defined.
  const float nine = 9.0f;
  core->load_memory(kBase + 3 * sfu::kTilePayloadStride + 4, &nine, 4);
  EXPECT_EQ(core->tile_file().valid_bytes(3)[4], reinterpret_cast<const std::uint8_t*>(&nine)[0]);

  // A block on the SFU queue publishes T0 and raises flags, visible in region 2.
  core->set_reg(isa::Queue::Sfu, 1, 0x3f800000u);
  core->load_queue(isa::Queue::Sfu,
                   {isa::assemble_tquant_block(
                       "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=4; B.DIM "
                       "LB1=2; B.DIM LB2=6; B.IOR r1, r2; B.IOT T3, mask=1, <last>, ->T0<1>; "
                       "BSTOP",
                       isa::SourceLoc{"t", 1, 1})});
  const platform::CoreRunResult r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  const auto y = core->dump_memory(kBase, 6);
  EXPECT_EQ(static_cast<std::int8_t>(y[0]), 0);   // 0.5 -> RNE 0
  EXPECT_EQ(static_cast<std::int8_t>(y[1]), 9);   // written above
  EXPECT_EQ(static_cast<std::int8_t>(y[2]), -2);  // -2.5 -> RNE -2
  const auto flags = core->dump_memory(kBase + sfu::kFlagsOffset, 8);
  EXPECT_EQ(get32(flags, 0), 1u);  // inexact only
  EXPECT_EQ(get32(flags, 4), 2u);  // two 1-unit tiles
  const trace::RunStats s = core->stats();
  EXPECT_TRUE(s.sfu.inexact);
  EXPECT_EQ(s.sfu.tiles, 2u);
}

}  // namespace

// The run API's Session (platform/run/session.h) reopened in one process:
// the second Session resets the core the first one ran (a binding makes and
// drops many), and the memory helpers of platform/run/arrays.h.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "platform/run/arrays.h"
#include "platform/run/session.h"

namespace {

using namespace tpb;

const char* kDequant =
    ".engine pool\n"
    "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
    "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
    "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[8, 1, 1])\n";

std::vector<std::uint8_t> run_once(run::Session& s) {
  const std::vector<std::uint8_t> in = {0x21, 0x43, 0x65, 0x87, 0xA9, 0xCB, 0xED, 0x0F,
                                        0x21, 0x43, 0x65, 0x87, 0xA9, 0xCB, 0xED, 0x0F};
  run::write_place(s, run::HostPlace::rows(isa::Region::Sbuf, 0, 0), in.data(), 1, in.size());
  auto p = run::program_from_text(kDequant, "<test>");
  s.load(*p);
  const run::SessionReport r = s.run(run::SessionRequest{});
  EXPECT_EQ(r.result.status, platform::RunStatus::Ok) << r.result.message;
  std::vector<std::uint8_t> out(32);
  run::read_place(s, run::HostPlace::rows(isa::Region::Sbuf, 0, 0x100), out.data(), 1, out.size());
  return out;
}

TEST(RunApiSessions, ASessionAfterARunGetsAFreshCore) {
  std::vector<std::uint8_t> first;
  {
    run::Session s{run::CoreSpec{}};
    first = run_once(s);
    EXPECT_TRUE(run::Session::is_open());
  }
  EXPECT_FALSE(run::Session::is_open());
  for (int i = 0; i < 3; ++i) {
    run::CoreSpec spec;
    spec.arch = i % 2 ? isa::Arch::Cayman : isa::Arch::Mariana;
    run::Session s{spec};  // resets the core that ran (DMI granted, no host bound)
    EXPECT_EQ(s.core().now_ps(), 0u);
    std::vector<std::uint8_t> zero(32, 1);
    run::read_place(s, run::HostPlace::rows(isa::Region::Sbuf, 0, 0x100), zero.data(), 1,
                    zero.size());
    EXPECT_EQ(zero, std::vector<std::uint8_t>(32, 0));
    EXPECT_EQ(run_once(s), first);
  }
}

TEST(RunApiSessions, RowsAndTilesAreCheckedBeforeAnythingChanges) {
  run::Session s{run::CoreSpec{}};
  std::vector<std::uint8_t> row(16, 0xAB);
  EXPECT_THROW(run::write_place(s, run::HostPlace::rows(isa::Region::Sbuf, 128, 0), row.data(), 1,
                                row.size()),
               run::RangeError);
  EXPECT_THROW(
      run::write_place(s, run::HostPlace::rows(isa::Region::Sbuf, 120, 0), row.data(), 9, 1),
      run::RangeError);
  const std::uint32_t cap = s.partition_bytes(isa::Region::Psum);
  EXPECT_THROW(run::write_place(s, run::HostPlace::rows(isa::Region::Psum, 0, cap - 8), row.data(),
                                1, row.size()),
               run::RangeError);
  EXPECT_EQ(run::memory_region("psum"), isa::Region::Psum);
  EXPECT_THROW(run::memory_region("hbm"), run::InputError);
  EXPECT_THROW(run::read_tile(s, 32), run::RangeError);
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  EXPECT_THROW(run::write_tile(s, 2, v.data(), 2, 3, 2, "tile 2"), run::InputError);
  EXPECT_FALSE(run::read_tile(s, 2).allocated);
  run::write_tile(s, 2, v.data(), 2, 3, 4, "tile 2");
  const run::TileData t = run::read_tile(s, 2);
  ASSERT_TRUE(t.allocated);
  EXPECT_EQ(t.rows, 2u);
  EXPECT_EQ(t.cols, 3u);
  std::vector<float> back(6);
  std::memcpy(back.data(), t.bytes.data(), 24);
  EXPECT_EQ(back, v);
}

}  // namespace

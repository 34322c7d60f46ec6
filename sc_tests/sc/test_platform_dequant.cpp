// TensorDequantize end to end through the platform API: every format x
// group on 1, 32 and 128 channels, other start partitions, strided and 3-D
// patterns, dst patterns unlike src. Expected values come from the
// independent reference in test_platform_ref.h.
#include <gtest/gtest.h>

#include "sc_tests/sc/test_platform_harness.h"

using namespace tpb;
using namespace tpb::platref;

TEST(PlatformDequant, AllFormatsOneChannelPartition5) {
  run_dequant_cases(all_format_cases(), 1, 5, 5);
}

TEST(PlatformDequant, AllFormats32ChannelsAcrossQuadrants) {
  // Partitions 17..48 straddle quadrants 0/1; dst starts elsewhere (70..101).
  run_dequant_cases(all_format_cases(), 32, 17, 70);
}

TEST(PlatformDequant, AllFormats128Channels) { run_dequant_cases(all_format_cases(), 128, 0, 0); }

TEST(PlatformDequant, AllFormatsOnCayman) {
  run_dequant_cases(all_format_cases(), 8, 96, 3, isa::Arch::Cayman);
}

TEST(PlatformDequant, StridedAnd3DPatterns) {
  std::vector<DequantCase> v;
  // src: every other word, 3-D (5 x 3 x 2 = 30 words); dst reversed rows.
  const isa::Tensor3D src = t3d(64, 2, 5, 12, 3, 40, 2);
  v.push_back({1, 0, src, t3d(0, 1, 20, 24, 3)});                // 60 words, gaps between rows
  v.push_back({2, 8, src, t3d(4 * 47, -1, 48)});                 // 48 words written backwards
  v.push_back({4, 0, src, t3d(0, 3, 10, 1, 2, 40, 2)});          // 40 words interleaved 3-D
  v.push_back({3, 0, t3d(0, 1, 6, 6, 5), t3d(0, 2, 30, 1, 2)});  // dst: two interleaved halves
  v.push_back({3, 8, t3d(400, -1, 10, 20, 3), t3d(0, 1, 48)});   // src walks backwards
  run_dequant_cases(v, 4, 30, 99);
}

// The predicate functions called directly: pattern footprints (signed steps,
// element sizes, capacities per generation), ratios, quadrant helpers. The
// expected values are worked out by hand from SPEC §2 / seed 000 §4.1.
#include <gtest/gtest.h>

#include "models/isa/predicates.h"
#include "sc_tests/unit/test_tensor3d.h"

namespace tpb::isa {
namespace {

using namespace pred;

using testref::t3d;
constexpr auto R = WriteTensor::False;
constexpr auto W = WriteTensor::True;
constexpr auto NoPsum = AllowedInPSUM::False;
constexpr auto Psum = AllowedInPSUM::True;
constexpr auto Sbuf = AllowedInSBUF::True;
constexpr auto NoSbuf = AllowedInSBUF::False;

TEST(IsaGeometry, FootprintEdgesPerGeneration) {
  // 256 FP32 elements from offset 0: bytes [0, 1024).
  const std::uint32_t cap3 = 224 * 1024, cap4 = 256 * 1024, cap2 = 192 * 1024;
  EXPECT_TRUE(tensor3d_valid(t3d(sbuf_addr(7, cap3 - 1024), 1, 0, 0, 256, 1, 1), 0x08, R, NoPsum,
                             Sbuf, Arch::Cayman));
  EXPECT_FALSE(tensor3d_valid(t3d(sbuf_addr(7, cap3 - 1020), 1, 0, 0, 256, 1, 1), 0x08, R, NoPsum,
                              Sbuf, Arch::Cayman));
  EXPECT_TRUE(tensor3d_valid(t3d(sbuf_addr(7, cap3 - 1020), 1, 0, 0, 256, 1, 1), 0x08, R, NoPsum,
                             Sbuf, Arch::Mariana));
  EXPECT_FALSE(tensor3d_valid(t3d(sbuf_addr(0, cap2), 1, 0, 0, 1, 1, 1), 0x02, R, NoPsum, Sbuf,
                              Arch::Sunda));
  EXPECT_TRUE(tensor3d_valid(t3d(sbuf_addr(127, cap4 - 1), 1, 0, 0, 1, 1, 1), 0x02, R, NoPsum, Sbuf,
                             Arch::Maverick));
  // The same element count as BF16 halves the footprint.
  EXPECT_TRUE(tensor3d_valid(t3d(sbuf_addr(7, cap3 - 512), 1, 0, 0, 256, 1, 1), 0x05, R, NoPsum,
                             Sbuf, Arch::Cayman));
}

TEST(IsaGeometry, NegativeStepsReachBelowStart) {
  // start 0x100, step0 = -1 over 257 elements of 1 B: lowest byte 0x100-256 = 0.
  EXPECT_TRUE(tensor3d_valid(t3d(sbuf_addr(0, 0x100), -1, 0, 0, 257, 1, 1), 0x01, R, NoPsum, Sbuf,
                             Arch::Cayman));
  EXPECT_FALSE(tensor3d_valid(t3d(sbuf_addr(0, 0x100), -1, 0, 0, 258, 1, 1), 0x01, R, NoPsum, Sbuf,
                              Arch::Cayman));
  // Mixed signs: dim1 +100 x 3 (= +200), dim2 -50 x 5 (= -200), 4-byte elements:
  // bytes [off - 800, off + 800 + 4).
  const auto t = [](std::uint32_t off) { return t3d(sbuf_addr(3, off), 1, 100, -50, 1, 3, 5); };
  EXPECT_TRUE(tensor3d_valid(t(800), 0x09, R, NoPsum, Sbuf, Arch::Cayman));
  EXPECT_FALSE(tensor3d_valid(t(796), 0x09, R, NoPsum, Sbuf, Arch::Cayman));
  EXPECT_TRUE(tensor3d_valid(t(224 * 1024 - 804), 0x09, R, NoPsum, Sbuf, Arch::Cayman));
  EXPECT_FALSE(tensor3d_valid(t(224 * 1024 - 803), 0x09, R, NoPsum, Sbuf, Arch::Cayman));
}

TEST(IsaGeometry, RegionsWritesAndMarkers) {
  const Tensor3D p = t3d(psum_addr(0, 0), 1, 0, 0, 16, 1, 1);
  EXPECT_FALSE(tensor3d_valid(p, 0x08, W, NoPsum, Sbuf, Arch::Mariana));
  EXPECT_TRUE(tensor3d_valid(p, 0x08, W, Psum, NoSbuf, Arch::Mariana));
  // PSUM is 16 KiB per partition.
  EXPECT_FALSE(tensor3d_valid(t3d(psum_addr(0, 16 * 1024 - 60), 1, 0, 0, 16, 1, 1), 0x08, W, Psum,
                              NoSbuf, Arch::Mariana));
  EXPECT_FALSE(tensor3d_valid(t3d(0x06000000, 1, 0, 0, 1, 1, 1), 0x08, R, Psum, Sbuf,
                              Arch::Mariana));  // control region
  // A zero step with more than one element: fine to read, not to write.
  const Tensor3D bcast = t3d(sbuf_addr(0, 0), 1, 0, 0, 4, 8, 1);
  EXPECT_TRUE(tensor3d_valid(bcast, 0x09, R, NoPsum, Sbuf, Arch::Cayman));
  EXPECT_FALSE(tensor3d_valid(bcast, 0x09, W, NoPsum, Sbuf, Arch::Cayman));
  // ADDR_REG: only the span is checkable; 70000 x 4 B > 224 KiB.
  EXPECT_TRUE(
      tensor3d_valid(t3d(0x80000001, 1, 0, 0, 1000, 1, 1), 0x09, R, NoPsum, Sbuf, Arch::Cayman));
  EXPECT_FALSE(
      tensor3d_valid(t3d(0x80000001, 1, 0, 0, 60000, 1, 1), 0x09, R, NoPsum, Sbuf, Arch::Cayman));
  // SHAPE_REG: zero counts allowed, the region is still checked.
  EXPECT_TRUE(tensor3d_valid(t3d(0x40000000 | sbuf_addr(0, 0), 0, 0, 0, 0, 0, 0), 0x09, W, NoPsum,
                             Sbuf, Arch::Cayman));
  EXPECT_FALSE(tensor3d_valid(t3d(0x40000000 | psum_addr(0, 0), 0, 0, 0, 0, 0, 0), 0x09, W, NoPsum,
                              Sbuf, Arch::Cayman));
  // Only the four plain markers are TENSOR3D markers.
  for (std::uint32_t marker = 0; marker < 32; ++marker) {
    const bool plain = marker == 0 || marker == 0x08 || marker == 0x10 || marker == 0x18;
    EXPECT_EQ(tensor3d_valid(t3d((marker << 27) | sbuf_addr(0, 0), 1, 1, 1, 1, 1, 1), 0x09, R,
                             NoPsum, Sbuf, Arch::Cayman),
              plain)
        << marker;
  }
  EXPECT_TRUE(shape_from_register(Addr4{0x40000000}));
  EXPECT_TRUE(shape_from_register(Addr4{0xC0000000}));
  EXPECT_FALSE(shape_from_register(Addr4{0x80000000}));
  EXPECT_FALSE(shape_from_register(Addr4{0x48000000}));  // marker 0b01001 is not SHAPE_REG
}

TEST(IsaGeometry, RatiosAndMultiples) {
  const Tensor3D s = t3d(0, 1, 1, 1, 5, 3, 2);       // 30 elements
  const Tensor3D d = t3d(0, 1, 1, 1, 8, 3, 2);       // 48 elements
  EXPECT_TRUE(ratio_element_count_t3d(s, d, 8, 5));  // 30*8 == 48*5
  EXPECT_FALSE(ratio_element_count_t3d(s, d, 2, 1));
  EXPECT_TRUE(is_num_elem_mult_n_t3d(s, 5));
  EXPECT_TRUE(is_num_elem_mult_n_t3d(s, 3));
  EXPECT_FALSE(is_num_elem_mult_n_t3d(s, 4));
  EXPECT_FALSE(is_num_elem_mult_n_t3d(s, 0));
  // 65535^3 does not overflow the count.
  const Tensor3D big = t3d(0, 1, 1, 1, 65535, 65535, 65535);
  EXPECT_TRUE(ratio_element_count_t3d(big, big, 3, 3));
  EXPECT_FALSE(ratio_element_count_t3d(big, t3d(0, 1, 1, 1, 65535, 65535, 65534), 1, 1));
}

TEST(IsaGeometry, FieldGates) {
  EXPECT_FALSE(check_active_channels(0));
  EXPECT_TRUE(check_active_channels(1));
  EXPECT_TRUE(check_active_channels(128));
  EXPECT_FALSE(check_active_channels(129));
  for (int f = 0; f < 256; ++f) EXPECT_EQ(has_valid_dequant_fmt(f), f >= 1 && f <= 4);
  for (int g = 0; g < 256; ++g) EXPECT_EQ(has_valid_group_size(g), g == 0 || g == 8);
  EXPECT_TRUE(has_valid_dequant_fmt_group_size(4, 0));
  EXPECT_FALSE(has_valid_dequant_fmt_group_size(4, 8));
  EXPECT_TRUE(has_valid_dequant_fmt_group_size(3, 8));
  EXPECT_FALSE(has_valid_nc_tens_dequant(Arch::Sunda));
  EXPECT_TRUE(has_valid_nc_tens_dequant(Arch::Cayman));
  EXPECT_FALSE(s3dmx1_quant_valid_nc(Arch::Cayman));
  EXPECT_TRUE(s3dmx1_quant_valid_nc(Arch::Mariana));
  EXPECT_TRUE(s3dmx1_quant_valid_nc(Arch::Maverick));
  EXPECT_TRUE(start_addr_active_channels(Addr4{sbuf_addr(96, 0)}, 32));
  EXPECT_FALSE(start_addr_active_channels(Addr4{sbuf_addr(97, 0)}, 32));
  EXPECT_TRUE(start_addr_active_channels(Addr4{0x80000000 | 127}, 128));  // register address
  // MX dtypes (seed 003 §3.3) and x4 word sizes (SPEC §5: FP8 x4 = u32, FP4 x4 = u16).
  int mx = 0;
  for (int d = 0; d < 256; ++d) mx += is_valid_mx_dtype(d);
  EXPECT_EQ(mx, 6);
  EXPECT_EQ(mx_x4_bytes(0x0E), 4u);
  EXPECT_EQ(mx_x4_bytes(0x10), 2u);
  EXPECT_EQ(mx_x4_bytes(0x12), 2u);
  EXPECT_EQ(mx_x4_bytes(0x05), 8u);
  EXPECT_TRUE(is_valid_dtype(0x0A, AllowFP32R::True));
  EXPECT_FALSE(is_valid_dtype(0x0A, AllowFP32R::False));
  EXPECT_TRUE(is_valid_dtype_inc_fp4(0x10, AllowFP4::True));
  EXPECT_FALSE(is_valid_dtype_inc_fp4(0x10, AllowFP4::False));
  EXPECT_FALSE(is_valid_dtype(0x13, AllowFP32R::True));  // E8M0 is a scale type
  EXPECT_TRUE(valid_row_grp_active_rows(0x1, 32));
  EXPECT_FALSE(valid_row_grp_active_rows(0x1, 16));
  EXPECT_TRUE(valid_mx_perf_mode(6));
  EXPECT_FALSE(valid_mx_perf_mode(7));
}

TEST(IsaGeometry, QuadrantHelpers) {
  EXPECT_TRUE(addr_in_sbuf_partition(32, Addr4{sbuf_addr(32, 0x123)}));
  EXPECT_FALSE(addr_in_sbuf_partition(32, Addr4{sbuf_addr(33, 0)}));
  EXPECT_FALSE(addr_in_sbuf_partition(0, Addr4{psum_addr(0, 0)}));
  for (unsigned p = 0; p < 128; ++p) {
    const bool aligned = p % 32 == 0;
    EXPECT_EQ(valid_s3dmx1_quant_sbuf_quadrant(Addr4{sbuf_addr(p, 0)}, Addr4{sbuf_addr(p, 64)}),
              aligned)
        << p;
  }
  EXPECT_FALSE(valid_s3dmx1_quant_sbuf_quadrant(Addr4{sbuf_addr(0, 0)}, Addr4{sbuf_addr(32, 0)}));
  EXPECT_TRUE(mxtensorv2_pattern(Addr4{0x08000000}));
  EXPECT_TRUE(not_mxtensorv2_pattern(Addr4{0x00000000}));
  EXPECT_FALSE(not_mxtensorv2_pattern(Addr4{0x0FFFFFFF}));
}

TEST(IsaGeometry, MxTensorV2Extents) {
  MxTensorV2 m{};
  m.data_addr.raw = 0x08000000 | sbuf_addr(0, 256 * 1024 - 512);
  m.scale_addr.raw = sbuf_addr(0, 0);
  m.num_elem[0] = 32;
  m.num_elem[1] = 4;
  m.step_elem_data_1 = 32;  // 128 x4 words of FP8 = 512 bytes
  m.step_elem_scale_1 = 32;
  m.scale_dtype = 0x13;
  EXPECT_TRUE(mxtensorv2_valid(m, 4, R, Arch::Maverick));
  m.step_elem_data_1 = 33;  // last word at (31 + 99) * 4 = 520
  EXPECT_FALSE(mxtensorv2_valid(m, 4, R, Arch::Maverick));
  m.step_elem_data_1 = -32;  // reaches 384 bytes below the start: fine
  EXPECT_TRUE(mxtensorv2_valid(m, 4, R, Arch::Maverick));
  m.data_addr.raw = 0x08000000 | sbuf_addr(0, 100);  // 100 - 384 < 0
  EXPECT_FALSE(mxtensorv2_valid(m, 4, R, Arch::Maverick));
}

}  // namespace
}  // namespace tpb::isa

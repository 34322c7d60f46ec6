// Whole-kernel timing rules of TIMING.md that are small functions: the
// access-pattern cost of a stream (wide innermost strides, [A]), the PE's
// MultiplyMoving interval ([O]), the union of the DMA engines' busy spans
// ("DMA active", [N]) and the profile's defaults for them. Expected values
// are worked out from the rules' text here, not from the code.
#include <gtest/gtest.h>

#include <cstdint>

#include "firmware_stubs/pe/matmul.h"
#include "models/isa/address_map.h"
#include "models/sc/engine/busy_union.h"
#include "models/timing/access_pattern.h"
#include "models/timing/timing_profile.h"

namespace tpb {
namespace {

std::uint64_t sbuf(unsigned partition, std::uint32_t offset) {
  return isa::sbuf_addr(partition, offset);
}

// A walk of `n` elements of `elem` bytes stepping `stride` bytes in
// `partition`, one access per element (what fw::for_each_run makes of a
// pattern whose innermost step is not 1), or one access when contiguous.
void walk(timing::AccessPattern& p, unsigned partition, std::uint32_t base, unsigned n,
          unsigned elem, unsigned stride, bool write) {
  if (stride == elem) {
    p.access(sbuf(partition, base), std::size_t{n} * elem, write);
    return;
  }
  for (unsigned i = 0; i < n; ++i) p.access(sbuf(partition, base + i * stride), elem, write);
}

timing::AccessPattern pattern() {
  timing::AccessPattern p;
  p.configure(16, 100);  // TIMING.md [A]: over 16 bytes, half the bandwidth
  p.reset();
  return p;
}

TEST(AccessPattern, ContiguousAndShortStridesCostNothing) {
  timing::AccessPattern p = pattern();
  for (unsigned part = 0; part < 128; ++part) {
    walk(p, part, 0, 512, 4, 4, false);        // FP32, contiguous
    walk(p, part, 0x4000, 512, 4, 16, false);  // FP32, 16-byte stride: peak [A]
    walk(p, part, 0x8000, 512, 2, 4, true);    // BF16, step 2
    walk(p, part, 0xc000, 512, 1, 16, true);   // FP8, step 16
  }
  EXPECT_EQ(p.interface_cycles(512), 0u);
}

TEST(AccessPattern, A32ByteStrideDoublesTheStream) {
  // tensor_copy FP32 N = 512 whose source steps 8 elements (32 bytes): the
  // read interface at half its bandwidth for 510 of its 512 elements (the
  // first two make the stride), 512 + 510 cycles.
  timing::AccessPattern p = pattern();
  for (unsigned part = 0; part < 128; ++part) {
    walk(p, part, 0, 512, 4, 32, false);
    walk(p, part, 0x10000, 512, 4, 4, true);
  }
  EXPECT_EQ(p.interface_cycles(512), 1022u);
  // Whatever the number of partitions: each is a lane of its own.
  timing::AccessPattern one = pattern();
  walk(one, 0, 0, 512, 4, 32, false);
  EXPECT_EQ(one.interface_cycles(512), 1022u);
}

TEST(AccessPattern, AShareOfWideAccessesCostsThatShare) {
  // Half a lane's bytes at a wide stride: 1.5 x the compute.
  timing::AccessPattern p = pattern();
  walk(p, 3, 0x100, 256, 4, 64, false);  // 254 wide accesses after the first two
  walk(p, 3, 0x8000, 256, 4, 4, false);  // one contiguous run: 1024 bytes
  // 254 x 4 wide bytes of 2048 in the lane.
  EXPECT_EQ(p.interface_cycles(2048), 2048u + 2048u * 254 * 4 / 2048);
  // A negative stride is as wide.
  timing::AccessPattern back = pattern();
  for (int i = 511; i >= 0; --i) back.access(sbuf(0, 0x100 + 32 * unsigned(i)), 4, true);
  EXPECT_EQ(back.interface_cycles(100), 100u + 100u * 510 / 512);
}

TEST(AccessPattern, JumpsAreNoWalk) {
  // Short runs 16 bytes apart, then a jump to the next row of the pattern
  // (TENSOR3D [1, 4, 16] x [2, 3, 2] of FP32): the innermost stride is 4 bytes.
  timing::AccessPattern p = pattern();
  for (std::uint32_t row : {0u, 64u})
    for (std::uint32_t run : {0u, 16u, 32u}) p.access(sbuf(0, row + run), 8, false);
  EXPECT_EQ(p.interface_cycles(24), 0u);
  // An operand, then another on the same lane (QuantizeMX's x4 words, then
  // its scale bytes); or two operands read element by element in turn.
  timing::AccessPattern two = pattern();
  two.access(sbuf(0, 0x2000), 64, true);
  two.access(sbuf(0, 0x3000), 16, true);
  for (unsigned i = 0; i < 64; ++i) {
    two.access(sbuf(1, 4 * i), 4, false);
    two.access(sbuf(1, 0x4000 + 4 * i), 4, false);
  }
  EXPECT_EQ(two.interface_cycles(64), 0u);
}

TEST(AccessPattern, LanesAreMemoryPartitionAndDirection) {
  // Interleaved reads of two partitions, or of SBUF and PSUM, or a read and
  // a write of one partition, are each contiguous in their lane.
  timing::AccessPattern p = pattern();
  for (unsigned i = 0; i < 64; ++i) {
    p.access(sbuf(0, 4 * i), 4, false);
    p.access(sbuf(1, 4 * i), 4, false);
    p.access(isa::psum_addr(0, 4 * i), 4, false);
    p.access(sbuf(0, 0x8000 + 4 * i), 4, true);
  }
  EXPECT_EQ(p.interface_cycles(64), 0u);
  // A new stream forgets the last one's addresses.
  p.reset();
  p.access(sbuf(0, 0x9000), 4, false);
  EXPECT_EQ(p.interface_cycles(64), 0u);
}

TEST(AccessPattern, OffWhenTheEngineHasNoCostAndOutsideSbufPsum) {
  timing::AccessPattern p;
  p.configure(16, 0);  // the PE: the docs are silent
  p.reset();
  walk(p, 0, 0, 512, 4, 32, false);
  EXPECT_EQ(p.interface_cycles(512), 0u);
  timing::AccessPattern tile = pattern();  // the SFU tile file is no SBUF/PSUM lane
  for (unsigned i = 0; i < 64; ++i)
    tile.access(isa::region_base(isa::Region::SfuTile) + 64 * i, 4, false);
  EXPECT_EQ(tile.interface_cycles(64), 0u);
}

TEST(PeMovingInterval, TheRuleOfO) {
  // TIMING.md [O]: max(min(64, N_stationary), N_moving); 4x for FP32.
  EXPECT_EQ(fw::pe_moving_interval(32, 16), 32u);  // the example
  EXPECT_EQ(fw::pe_moving_interval(16, 16), 16u);
  EXPECT_EQ(fw::pe_moving_interval(128, 16), 64u);   // MM_INIT_LATENCY
  EXPECT_EQ(fw::pe_moving_interval(128, 64), 64u);   // [D]: short moving, a MM every 64
  EXPECT_EQ(fw::pe_moving_interval(32, 128), 128u);  // [D]: short stationary, every 128
  EXPECT_EQ(fw::pe_moving_interval(128, 512), 512u);
  EXPECT_EQ(fw::pe_moving_interval(1, 1), 1u);
  EXPECT_EQ(fw::pe_moving_interval(128, 512, 4), 2048u);  // FP32 moving
  EXPECT_EQ(fw::pe_moving_interval(128, 16, 4), 256u);
  EXPECT_EQ(fw::pe_moving_interval(32, 16, 4), 128u);
}

TEST(BusyUnion, OverlappingSpansCountOnce) {
  sc::BusyUnion u;
  u.begin(100);
  u.begin(150);
  u.end(200);
  u.end(300);  // [100, 300)
  // A stop cuts the spans past it (a stop comes no earlier than the time
  // the last span ended at: spans before that are kept whole).
  EXPECT_EQ(u.busy_ps(250, 300), 150u);
  u.begin(400);
  u.end(450);  // [400, 450)
  EXPECT_EQ(u.busy_ps(UINT64_MAX, 1000), 250u);
  EXPECT_EQ(u.busy_ps(420, 1000), 200u + 20u);
  u.begin(500);
  EXPECT_EQ(u.busy_ps(UINT64_MAX, 700), 450u);
  EXPECT_EQ(u.busy_ps(600, 700), 350u);
  u.reset();
  EXPECT_EQ(u.busy_ps(UINT64_MAX, 700), 0u);
  u.end(10);  // an end without a begin (a run reset while it moved): nothing
  EXPECT_EQ(u.busy_ps(UINT64_MAX, 700), 0u);
}

TEST(TimingProfiles, AccessPatternAndDmaCostDefaults) {
  for (isa::Arch a :
       {isa::Arch::Sunda, isa::Arch::Cayman, isa::Arch::Mariana, isa::Arch::Maverick}) {
    const timing::TimingConfig t = timing::default_timing(a);
    EXPECT_EQ(t.wide_stride_bytes, 16u);  // [A]
    for (isa::Queue e : {isa::Queue::Pool, isa::Queue::Dve, isa::Queue::Sfu}) {
      EXPECT_EQ(t.min_ii_dynamic(e), 600u);    // [O] MIN_II_DYNAMIC
      EXPECT_EQ(t.wide_stride_cost(e), 100u);  // [A] half the bandwidth
    }
    EXPECT_EQ(t.min_ii_dynamic(isa::Queue::Pe), 0u);
    EXPECT_EQ(t.wide_stride_cost(isa::Queue::Pe), 0u);
    EXPECT_EQ(t.min_ii_dynamic(isa::Queue::Dma0), 0u);
  }
}

}  // namespace
}  // namespace tpb

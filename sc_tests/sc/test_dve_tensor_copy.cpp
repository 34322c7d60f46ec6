// DVE tensor_copy (SPEC §11) through the core's C++ API: every pair of the
// nine convertible DTYPEs (81 instructions on one DVE stream, PSUM and SBUF
// sources, SBUF and PSUM destinations, start partitions all over the SBUF)
// against the independent reference of test_element_ops_ref.h, each
// destination window's untouched bytes checked too; and its cost, the DVE
// one-input rule plus the memory access, flat in the partitions.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "platform/core/tpb_core.h"
#include "sc_tests/unit/test_element_ops_ref.h"

using namespace tpb;

namespace {

constexpr unsigned kElems = 64;        // per partition
constexpr unsigned kChannels = 16;     // per instruction
constexpr std::uint32_t kWin = 0x400;  // bytes of each window

isa::Tensor3D t3(std::uint32_t addr, std::uint16_t n) {
  isa::Tensor3D t{};
  t.start_addr.raw = addr;
  t.step_elem[0] = 1;
  t.num_elem[0] = n;
  t.num_elem[1] = t.num_elem[2] = 1;
  return t;
}

isa::RawInst tcopy(std::uint8_t in, std::uint8_t out, unsigned channels, std::uint32_t src,
                   std::uint32_t dst, std::uint16_t n) {
  isa::S3D3TensorCopy i{};
  i.header = {0x23, isa::kInstWordLen, 0, 0};
  i.src_mem_pattern.t = t3(src, n);
  i.dst_mem_pattern.t = t3(dst, n);
  i.in_dtype = in;
  i.out_dtype = out;
  i.num_active_channels = static_cast<std::uint8_t>(channels);
  return isa::encode(i);
}

struct PairCase {
  const elemref::Def *in, *out;
  std::uint32_t src, dst;                         // start addresses (partition 0 of the case)
  std::vector<std::vector<std::uint32_t>> codes;  // [channel][element]
};

void run_every_pair(isa::Arch arch) {
  platform::CoreConfig cfg = platform::default_core_config(arch);
  auto* core = new platform::TpbCore("tpb", cfg);
  std::vector<PairCase> cases;
  std::vector<isa::RawInst> prog;
  std::uint32_t x = 12345;
  unsigned k = 0;
  for (const elemref::Def& in : elemref::kDefs)
    for (const elemref::Def& out : elemref::kDefs) {
      PairCase c{&in, &out, 0, 0, {}};
      const unsigned part = (k * 16) % 128;
      // FP32 sources from PSUM (as a matmul leaves them), half the FP32
      // destinations into PSUM; every other window in SBUF.
      c.src =
          in.dtype == 0x08 ? isa::psum_addr(part, k % 9 * kWin) : isa::sbuf_addr(part, k * kWin);
      c.dst = out.dtype == 0x08 && k % 2 ? isa::psum_addr(part, 0x2400 + k % 9 * kWin)
                                         : isa::sbuf_addr(part, 0x18000 + k * kWin);
      for (unsigned ch = 0; ch < kChannels; ++ch) {
        std::vector<std::uint8_t> bytes(kWin);
        std::vector<std::uint32_t> codes;
        for (unsigned e = 0; e < kElems; ++e) {
          x = x * 1664525u + 1013904223u;
          std::uint32_t code = in.bytes == 1 ? (ch * kElems + e) % 256 : x >> (32 - 8 * in.bytes);
          // FP32: values around every narrower range, some specials.
          if (in.bytes == 4) code = e % 16 == 0 ? 0x7FC00000u ^ (e << 20) : 0x30000000u + (x >> 3);
          codes.push_back(code);
          std::memcpy(bytes.data() + e * in.bytes, &code, in.bytes);
        }
        c.codes.push_back(codes);
        core->load_memory(c.src + (ch << isa::kPartitionShift), bytes.data(), kWin);
        const std::vector<std::uint8_t> guard(kWin, 0xA5);
        core->load_memory(c.dst + (ch << isa::kPartitionShift), guard.data(), kWin);
      }
      prog.push_back(tcopy(in.dtype, out.dtype, kChannels, c.src, c.dst, kElems));
      cases.push_back(std::move(c));
      ++k;
    }
  core->load_queue(isa::Queue::Dve, prog);
  const platform::CoreRunResult r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  EXPECT_EQ(r.instructions, 81u);
  for (const PairCase& c : cases) {
    SCOPED_TRACE(std::string(c.in->name) + " -> " + c.out->name);
    for (unsigned ch = 0; ch < kChannels; ++ch) {
      const std::vector<std::uint8_t> got =
          core->dump_memory(c.dst + (ch << isa::kPartitionShift), kWin);
      for (unsigned e = 0; e < kElems; ++e) {
        const std::uint32_t g = elemref::load(got.data() + e * c.out->bytes, c.out->bytes);
        const std::uint32_t src = c.codes[ch][e];
        const std::uint32_t want =
            c.in == c.out ? src : elemref::nearest(*c.out, elemref::value(*c.in, src));
        ASSERT_TRUE(c.in == c.out ? g == want : elemref::same(*c.out, g, want))
            << "channel " << ch << " element " << e << " code 0x" << std::hex << src << ": got 0x"
            << g << " want 0x" << want;
      }
      for (std::size_t b = kElems * c.out->bytes; b < kWin; ++b)
        ASSERT_EQ(got[b], 0xA5) << "channel " << ch << " byte " << b << " written";
    }
  }
}

// The DVE cycles from issue to retire of each tensor_copy of n FP32 -> BF16
// elements on each partition count of `parts`, run in that order.
std::vector<std::uint64_t> cycles_of(std::uint16_t n, const std::vector<unsigned>& parts) {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  auto* core = new platform::TpbCore("tpb", cfg);
  std::vector<isa::RawInst> prog;
  for (unsigned p : parts)
    prog.push_back(tcopy(0x08, 0x05, p, isa::psum_addr(0, 0), isa::sbuf_addr(0, 0x1000), n));
  core->load_queue(isa::Queue::Dve, prog);
  std::vector<std::uint64_t> cycles;
  core->set_retire_sink([&](const sc::RetireRecord& r) {
    // ps -> DVE cycles at 1.2 GHz (1200 MHz on MARIANA).
    cycles.push_back(((r.end_ps - r.start_ps) * 1200 + 500000) / 1000000);
  });
  const platform::CoreRunResult r = core->run();
  EXPECT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  return cycles;
}

}  // namespace

TEST(DveTensorCopy, EveryDtypePairMariana) { run_every_pair(isa::Arch::Mariana); }
TEST(DveTensorCopy, EveryDtypePairSunda) { run_every_pair(isa::Arch::Sunda); }

// TIMING.md [A, E, M]: max(64, N) DVE cycles + the memory access, whatever
// the partitions. 2048 FP32 elements = 8 KiB of PSUM per partition.
TEST(DveTensorCopy, CostIsTheOneInputRuleFlatInPartitions) {
  const std::vector<std::uint64_t> c = cycles_of(2048, {1, 32, 128});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_GE(c[0], 2048u);
  EXPECT_LE(c[0], 2048u * 115 / 100);  // the fixed overhead and the fill on top
  EXPECT_EQ(c[1], c[0]);
  EXPECT_EQ(c[2], c[0]);
}

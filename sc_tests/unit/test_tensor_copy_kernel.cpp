// The DVE tensor_copy stub (firmware_stubs/dve/tensor_copy) behind a
// test-double KernelContext (no simulator): its dispatch chain and trips,
// strided, negative-step and PSUM patterns against element-by-element
// expectations, the snapshot of the source before any write, register
// operands, and the run-time checks, each faulting with its predicate's
// name before anything is written.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "firmware_stubs/builtin_kernels.h"
#include "firmware_stubs/dve/tensor_copy.h"
#include "models/kernel/kernel.h"
#include "sc_tests/unit/test_element_ops_ref.h"
#include "sc_tests/unit/test_tensor3d.h"

using namespace tpb;

namespace {

constexpr std::uint8_t kFp32 = 0x08, kBf16 = 0x05, kFp16 = 0x06, kE4M3 = 0x0E, kInt32 = 0x07;

// SBUF and PSUM, a lazily allocated 256 KiB slot per partition (filled with
// 0xA5), accesses checked against the generation's capacities; untimed.
class MemContext : public fw::KernelContext {
 public:
  explicit MemContext(const isa::RawInst& inst) : inst_(inst) {}
  const isa::RawInst& inst() const override { return inst_; }
  isa::Arch arch() const override { return isa::Arch::Mariana; }
  isa::Queue engine() const override { return isa::Queue::Dve; }
  std::uint32_t reg(unsigned r) const override { return regs[r]; }
  const timing::TimingConfig& timing() const override { return timing_; }
  fw::EngineState& engine_state() override { return state_; }
  void read(std::uint64_t addr, void* dst, std::size_t len) override {
    std::memcpy(dst, at(addr, len), len);
    ++reads;
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) override {
    std::memcpy(at(addr, len), src, len);
    ++writes;
  }
  void begin_bundle(const fw::Bundle& b, std::uint64_t trips, std::uint32_t) override {
    trace.push_back({b.va, trips});
  }
  void end_bundle(const fw::Bundle&) override {}

  std::uint8_t* at(std::uint64_t addr, std::size_t len) {
    const auto a = static_cast<std::uint32_t>(addr);
    const isa::Region r = isa::region_of(a);
    const std::uint32_t cap = r == isa::Region::Sbuf   ? timing_.sbuf_bytes_per_partition
                              : r == isa::Region::Psum ? timing_.psum_bytes_per_partition
                                                       : 0;
    if (isa::offset_of(a) + len > cap)
      throw fw::KernelFault("fake context: access past the partition's capacity");
    auto& slot = mem_[a & ~(isa::kPartitionSlot - 1)];
    if (slot.empty()) slot.assign(isa::kPartitionSlot, 0xA5);
    return slot.data() + isa::offset_of(a);
  }
  void run() {
    const fw::KernelRegistry& k = fw::builtin_kernels();
    k.execute(fw::kTensorCopyTrampolineVa, *this, k.resolve_costs(timing_));
  }

  std::uint32_t regs[32] = {};
  std::vector<std::pair<std::uint32_t, std::uint64_t>> trace;
  unsigned reads = 0, writes = 0;

 private:
  isa::RawInst inst_;
  timing::TimingConfig timing_ = timing::default_timing(isa::Arch::Mariana);
  fw::EngineState state_;
  std::map<std::uint32_t, std::vector<std::uint8_t>> mem_;
};

using testref::t3;

isa::RawInst tcopy(std::uint8_t in, std::uint8_t out, unsigned channels, isa::Tensor3D src,
                   isa::Tensor3D dst) {
  isa::S3D3TensorCopy i{};
  i.header = {0x23, isa::kInstWordLen, 0, 0};
  i.src_mem_pattern.t = src;
  i.dst_mem_pattern.t = dst;
  i.in_dtype = in;
  i.out_dtype = out;
  i.num_active_channels = static_cast<std::uint8_t>(channels);
  return isa::encode(i);
}

// Element offsets of a pattern, in pattern order (dim 0 innermost).
std::vector<std::int64_t> offsets(const isa::Tensor3D& t) {
  std::vector<std::int64_t> v;
  for (int i2 = 0; i2 < t.num_elem[2]; ++i2)
    for (int i1 = 0; i1 < t.num_elem[1]; ++i1)
      for (int i0 = 0; i0 < t.num_elem[0]; ++i0)
        v.push_back(std::int64_t{i0} * t.step_elem[0] + std::int64_t{i1} * t.step_elem[1] +
                    std::int64_t{i2} * t.step_elem[2]);
  return v;
}

const elemref::Def& def(std::uint8_t d) {
  // INT32 is only ever copied to itself here: its size is what matters.
  static const elemref::Def kInt32Def{kInt32, "int32", 4, elemref::Kind::Int, 0, 0, 0};
  if (d == kInt32) return kInt32Def;
  for (const elemref::Def& x : elemref::kDefs)
    if (x.dtype == d) return x;
  throw std::logic_error("no def");
}

// Fills the source, runs, and checks every destination element (and that
// nothing else of the destination windows changed).
void run_and_check(std::uint8_t in, std::uint8_t out, unsigned channels, isa::Tensor3D src,
                   isa::Tensor3D dst, unsigned seed) {
  MemContext ctx(tcopy(in, out, channels, src, dst));
  const elemref::Def &di = def(in), &dout = def(out);
  const auto so = offsets(src), dof = offsets(dst);
  ASSERT_EQ(so.size(), dof.size());
  std::vector<std::vector<std::uint32_t>> codes(channels);
  std::uint32_t x = seed;
  for (unsigned c = 0; c < channels; ++c) {
    const std::uint32_t base = src.start_addr.raw + (c << isa::kPartitionShift);
    for (std::int64_t o : so) {
      x = x * 1664525u + 1013904223u;
      // Values within a few binades of 1 (narrow formats round, not saturate).
      std::uint32_t code = x >> (32 - 8 * di.bytes);
      if (di.dtype == kFp32) code = 0x3C000000u + (x >> 5);
      codes[c].push_back(code);
      std::memcpy(ctx.at(base + o * di.bytes, di.bytes), &code, di.bytes);
    }
  }
  ctx.run();
  for (unsigned c = 0; c < channels; ++c) {
    const std::uint32_t base = dst.start_addr.raw + (c << isa::kPartitionShift);
    for (std::size_t k = 0; k < dof.size(); ++k) {
      std::uint32_t got = 0;
      std::memcpy(&got, ctx.at(base + dof[k] * dout.bytes, dout.bytes), dout.bytes);
      const std::uint32_t want =
          in == out ? codes[c][k] : elemref::nearest(dout, elemref::value(di, codes[c][k]));
      ASSERT_TRUE(elemref::same(dout, got, want))
          << "channel " << c << " element " << k << ": got 0x" << std::hex << got << " want 0x"
          << want;
    }
  }
}

// Runs an instruction that must fault, naming `what`, without a write.
void expect_fault(MemContext& ctx, const std::string& what) {
  try {
    ctx.run();
    FAIL() << "no fault, wanted " << what;
  } catch (const fw::KernelFault& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
  EXPECT_EQ(ctx.writes, 0u);
}

}  // namespace

TEST(TensorCopyKernel, DispatchChainAndTrips) {
  MemContext ctx(tcopy(kFp32, kBf16, 32, t3(isa::psum_addr(0, 0), 1, 200),
                       t3(isa::sbuf_addr(0, 0x100), 1, 200)));
  ctx.run();
  // Trampoline call8 -> body (fields, load, convert x N, store, return) -> exit.
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> want = {
      {0x3200, 1}, {0x3240, 1}, {0x3250, 1}, {0x3260, 200}, {0x3270, 1}, {0x3280, 1}, {0x3203, 1}};
  EXPECT_EQ(ctx.trace, want);
  // One read and one write per partition for contiguous patterns.
  EXPECT_EQ(ctx.reads, 32u);
  EXPECT_EQ(ctx.writes, 32u);
}

TEST(TensorCopyKernel, PsumToSbufContiguous) {
  run_and_check(kFp32, kBf16, 128, t3(isa::psum_addr(0, 0), 1, 512),
                t3(isa::sbuf_addr(0, 0x2000), 1, 512), 1);
  run_and_check(kFp32, kE4M3, 64, t3(isa::psum_addr(64, 0x800), 1, 300),
                t3(isa::sbuf_addr(3, 0x40), 1, 300), 2);
}

TEST(TensorCopyKernel, StridedAndNegativeStepPatterns) {
  // src 3-D with gaps in PSUM; dst walks backwards in SBUF.
  run_and_check(kFp32, kFp16, 16, t3(isa::psum_addr(8, 0x100), 2, 10, 25, 4, 120, 3),
                t3(isa::sbuf_addr(40, 0x1000), -1, 120), 3);
  // SBUF -> PSUM, BF16 -> FP32 through a 2-D dst.
  run_and_check(kBf16, kFp32, 7, t3(isa::sbuf_addr(100, 0x10), 3, 40),
                t3(isa::psum_addr(0, 0x40), 1, 8, 16, 5), 4);
  // The same DTYPE: bit-exact, strided both sides (INT32 has no conversion).
  run_and_check(kInt32, kInt32, 5, t3(isa::sbuf_addr(0, 0x400), 4, 33),
                t3(isa::sbuf_addr(10, 0x800), 2, 33), 5);
}

TEST(TensorCopyKernel, SourceIsReadWholeBeforeAnyWrite) {
  // dst partition p + 1 = src partition of the next channel: every channel
  // sees the source as it was before the instruction.
  run_and_check(kFp32, kFp32, 8, t3(isa::sbuf_addr(0, 0x0), 1, 64),
                t3(isa::sbuf_addr(1, 0x0), 1, 64), 6);
}

TEST(TensorCopyKernel, RegisterOperands) {
  // src ADDR_REG r2 (6 elements); dst ADDR_SHAPE_REG r4: address r4, shape r5..r7.
  MemContext ctx2(tcopy(kFp32, kBf16, 4, t3(0x80000000u | 2, 1, 6), t3(0xC0000004u, 1, 0)));
  ctx2.regs[2] = isa::psum_addr(4, 0x20);
  ctx2.regs[4] = isa::sbuf_addr(20, 0x30);
  ctx2.regs[5] = 6;
  ctx2.regs[6] = 1;
  ctx2.regs[7] = 1;
  const float vals[6] = {1.0f, -2.5f, 3.0078125f, 1e-3f, 65504.0f, -0.0f};
  for (unsigned c = 0; c < 4; ++c) std::memcpy(ctx2.at(isa::psum_addr(4 + c, 0x20), 24), vals, 24);
  ctx2.run();
  const std::uint16_t want[6] = {0x3F80, 0xC020, 0x4040, 0x3A83, 0x4780, 0x8000};
  for (unsigned c = 0; c < 4; ++c) {
    std::uint16_t got[6];
    std::memcpy(got, ctx2.at(isa::sbuf_addr(20 + c, 0x30), 12), 12);
    for (int k = 0; k < 6; ++k) EXPECT_EQ(got[k], want[k]) << c << " " << k;
  }
}

TEST(TensorCopyKernel, RunTimeChecksFaultBeforeAnyWrite) {
  const auto reg_case = [](std::uint32_t src_reg_value, std::uint16_t dst_n0, unsigned channels,
                           std::uint8_t in = kFp32, std::uint8_t out = kBf16) {
    auto ctx = std::make_unique<MemContext>(
        tcopy(in, out, channels, t3(0x80000000u | 1, 1, 64), t3(isa::sbuf_addr(0, 0), 1, dst_n0)));
    ctx->regs[1] = src_reg_value;
    return ctx;
  };
  // The source address from a register in the control region.
  expect_fault(*reg_case(0x06000000, 64, 4), "mem3d_valid(src) failed at run time");
  // Start partition 100 + 64 channels.
  expect_fault(*reg_case(isa::psum_addr(100, 0), 64, 64),
               "check_m3d_active_channels(src) failed at run time");
  // Past the PSUM's 16 KiB: 64 FP32 from offset 16 KiB - 128.
  expect_fault(*reg_case(isa::psum_addr(0, 16 * 1024 - 128), 64, 4), "address error");
  // Counts differ (the static check would have said so for an immediate).
  expect_fault(*reg_case(isa::psum_addr(0, 0), 63, 4), "tensor_copy_element_count_check");
  // No conversion from FP32R (a DTYPE without a numeric format); no channels.
  expect_fault(*reg_case(isa::psum_addr(0, 0), 64, 4, 0x0A, kBf16), "valid_vector_dtype");
  expect_fault(*reg_case(isa::psum_addr(0, 0), 64, 0), "check_active_channels");
  // A broadcast write from shape registers: dst ADDR_SHAPE_REG with step 0.
  MemContext b(tcopy(kFp32, kFp32, 1, t3(isa::psum_addr(0, 0), 1, 8), t3(0xC0000000u | 8, 0, 0)));
  b.regs[8] = isa::sbuf_addr(0, 0);
  b.regs[9] = 8;
  b.regs[10] = 1;
  b.regs[11] = 1;
  expect_fault(b, "mem3d_valid(dst) failed at run time: step 0 on dimension 0");
}

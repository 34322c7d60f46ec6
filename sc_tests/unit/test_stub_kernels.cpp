// Firmware stubs without a simulator: the kernels run behind a test-double
// KernelContext (pure C++, no SystemC). The DVE QuantizeMX dispatch chain
// visits the seed's VAs, the emax option reaches the kernel through the
// engine state, engine state outlives one instruction, and bundle costs are
// resolved once with misspelt names refused.
#include <gtest/gtest.h>

#include <cstring>
#include <unordered_map>

#include "firmware_stubs/builtin_kernels.h"
#include "firmware_stubs/dve/quantize_mx.h"
#include "models/kernel/kernel.h"
#include "sc_tests/sc/test_dve_quantize_mx_ref.h"

using namespace tpb;
using namespace tpb::dveref;
using isa::Dtype;

// ---- the kernel behind a test-double KernelContext ---------------------------

namespace {

// SBUF only, one lazily allocated slot per partition, untimed.
class FakeContext : public fw::KernelContext {
 public:
  explicit FakeContext(const isa::RawInst& inst) : inst_(inst) {}
  const isa::RawInst& inst() const override { return inst_; }
  isa::Arch arch() const override { return isa::Arch::Mariana; }
  isa::Queue engine() const override { return isa::Queue::Dve; }
  std::uint32_t reg(unsigned r) const override { return regs_[r]; }
  const timing::TimingConfig& timing() const override { return timing_; }
  fw::EngineState& engine_state() override { return state_; }
  void read(std::uint64_t addr, void* dst, std::size_t len) override {
    std::memcpy(dst, at(addr, len), len);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) override {
    std::memcpy(at(addr, len), src, len);
  }
  void begin_bundle(const fw::Bundle& b, std::uint64_t trips, std::uint32_t cycles) override {
    trace.push_back({b.va, trips});
    names.push_back(b.name);
    costs.push_back(cycles);
  }
  void end_bundle(const fw::Bundle&) override {}

  std::uint8_t* at(std::uint64_t addr, std::size_t len) {
    const auto a = static_cast<std::uint32_t>(addr);
    if (isa::region_of(a) != isa::Region::Sbuf || isa::offset_of(a) + len > isa::kPartitionSlot)
      throw fw::KernelFault("fake context: access outside one SBUF partition");
    auto& slot = mem_[isa::partition_of(a)];
    if (slot.empty()) slot.assign(isa::kPartitionSlot, 0xA5);
    return slot.data() + isa::offset_of(a);
  }

  std::vector<std::pair<std::uint32_t, std::uint64_t>> trace;
  std::vector<std::string> names;
  std::vector<std::uint32_t> costs;
  std::uint32_t regs_[32] = {};

 private:
  isa::RawInst inst_;
  timing::TimingConfig timing_ = timing::default_timing(isa::Arch::Mariana);
  fw::EngineState state_;
  std::unordered_map<unsigned, std::vector<std::uint8_t>> mem_;
};

// The DVE's engine state carries the emax option, as the core sets it.
class FakeContextWithEmax : public FakeContext {
 public:
  FakeContextWithEmax(const isa::RawInst& inst, num::MxEmax e) : FakeContext(inst) {
    engine_state().get<fw::QuantizeMxOptions>().emax = e;
  }
};

// Loads generated FP32 elements for 32 channels x 4*cols, runs the kernel
// from the DVE kernel_info record's trampoline and checks every word and
// scale against the reference.
void run_direct(FakeContext& ctx, bool e4m3, bool neuron_alt, std::uint16_t cols) {
  std::vector<std::vector<std::uint32_t>> raw(32);
  for (unsigned c = 0; c < 32; ++c) {
    for (unsigned k = 0; k < 4u * cols; ++k)
      raw[c].push_back(gen_elem(Dtype::Fp32, 77, c, k, true));
    ctx.write(isa::sbuf_addr(c, 0), raw[c].data(), raw[c].size() * 4);
  }
  const fw::KernelRegistry& k = fw::builtin_kernels();
  k.execute(fw::kQuantizeMxTrampolineVa, ctx, k.resolve_costs(ctx.timing()));
  const QmxResult q = quantize_ref(Dtype::Fp32, e4m3, neuron_alt, raw);
  for (unsigned c = 0; c < 32; ++c) {
    std::vector<std::uint32_t> got(cols);
    ctx.read(isa::sbuf_addr(c, 0x1000), got.data(), cols * 4u);
    EXPECT_EQ(got, q.words[c]) << "partition " << c;
  }
  for (unsigned row = 0; row < 4; ++row) {
    std::vector<std::uint8_t> got(cols);
    ctx.read(isa::sbuf_addr(row, 0x2000), got.data(), cols);
    EXPECT_EQ(got, q.scales[row]) << "row " << row;
  }
}

isa::RawInst direct_inst(bool e4m3, std::uint16_t cols) {
  return qmx_inst(Dtype::Fp32, e4m3, 32, t3(isa::sbuf_addr(0, 0), 1, std::uint16_t(4 * cols)),
                  isa::sbuf_addr(0, 0x1000), isa::sbuf_addr(0, 0x2000), cols);
}

}  // namespace

TEST(DveQuantizeMxKernel, DispatchChainVisitsTheSeedVAs) {
  FakeContext ctx(direct_inst(true, 10));
  run_direct(ctx, true, false, 10);
  // trampoline call8 -> L2 stub (fields, call8) -> helper 0x9920 (entry,
  // l32i, callx8) -> body -> back in the trampoline: j 0x31ee, exit.
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> want = {
      {0x317a, 1},  {0x2298, 1}, {0x229b, 1}, {0x9920, 1}, {0x9923, 1},
      {0x9926, 1},  {0x79ec, 1}, {0x22b5, 1}, {0x66a6, 1}, {0x6c4b, 1},
      {0x216d, 10}, {0x217d, 1}, {0x218d, 1}, {0x317d, 1}, {0x31ee, 1}};
  EXPECT_EQ(ctx.trace, want);
  EXPECT_EQ(ctx.names[0], "dve.trampoline.call8");
  EXPECT_EQ(ctx.names[10], "dve.qmx.pack");
}

TEST(DveQuantizeMxKernel, OcpEmaxIsTheDefault) {
  for (bool e4m3 : {true, false}) {
    FakeContext ctx(direct_inst(e4m3, 12));
    run_direct(ctx, e4m3, false, 12);
    FakeContextWithEmax ocp(direct_inst(e4m3, 12), num::MxEmax::Ocp);
    run_direct(ocp, e4m3, false, 12);
  }
}

TEST(DveQuantizeMxKernel, NeuronAltEmaxReachesTheKernelThroughEngineState) {
  for (bool e4m3 : {true, false}) {
    FakeContextWithEmax ctx(direct_inst(e4m3, 12), num::MxEmax::NeuronAlt);
    run_direct(ctx, e4m3, true, 12);
  }
  // The two settings differ: the same block gets scale s (ocp) vs s + 1.
  std::uint32_t bits[8][4];
  std::uint8_t q[8][4];
  for (auto& r : bits)
    for (auto& v : r) v = 0x41200000u;  // 10.0, biased exponent 130
  EXPECT_EQ(quantize_block(bits, true, false, q), 122);
  EXPECT_EQ(quantize_block(bits, true, true, q), 123);
}

// ---- engine state ------------------------------------------------------------

namespace {
struct Weights {
  std::vector<int> w;
};
struct Options {
  int mode = 7;
};
}  // namespace

TEST(EngineState, OneValueInitialisedObjectPerTypeThatPersists) {
  fw::EngineState st;
  EXPECT_EQ(st.find<Weights>(), nullptr);
  st.get<Weights>().w = {1, 2, 3};
  EXPECT_EQ(st.get<Options>().mode, 7);  // value-initialised on first use
  st.get<Options>().mode = 9;
  // Each type its own object; both survive later lookups.
  ASSERT_NE(st.find<Weights>(), nullptr);
  EXPECT_EQ(st.find<Weights>()->w, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(st.get<Options>().mode, 9);
  EXPECT_EQ(&st.get<Weights>(), st.find<Weights>());
  st.clear();
  EXPECT_EQ(st.find<Weights>(), nullptr);
}

TEST(EngineState, OutlivesOneInstructionOnTheSameEngine) {
  // Two QuantizeMX instructions on one context: the emax option set once is
  // seen by both (state belongs to the engine, scratch to the instruction).
  FakeContextWithEmax ctx(direct_inst(true, 8), num::MxEmax::NeuronAlt);
  run_direct(ctx, true, true, 8);
  run_direct(ctx, true, true, 8);
  EXPECT_EQ(ctx.engine_state().get<fw::QuantizeMxOptions>().emax, num::MxEmax::NeuronAlt);
}

// ---- bundle costs --------------------------------------------------------------

TEST(BundleCosts, ResolvedOnceFromTheStubsAndTheOverrides) {
  const fw::KernelRegistry& k = fw::builtin_kernels();
  timing::TimingConfig t = timing::default_timing(isa::Arch::Mariana);
  const fw::BundleCosts stub = k.resolve_costs(t);
  ASSERT_EQ(stub.size(), k.num_bundles());
  // Every bundle's id indexes its own stub cycles.
  for (const auto& [va, kernel] : k.kernels())
    for (const fw::Bundle& b : kernel.bundles) {
      ASSERT_EQ(k.bundle(b.id), &b);
      EXPECT_EQ(stub[b.id], b.issue_cycles) << b.name;
    }
  // pool.mx8.loop is 1 cycle per trip in the stub (TIMING.md: a 32-bit word
  // per partition per cycle); an override changes that bundle alone.
  t.bundle_issue_cycles["pool.mx8.loop"] = 9;
  const fw::BundleCosts over = k.resolve_costs(t);
  std::size_t changed = 0;
  for (std::size_t id = 0; id < stub.size(); ++id)
    if (over[id] != stub[id]) {
      ++changed;
      EXPECT_EQ(k.bundle(static_cast<std::uint32_t>(id))->name, "pool.mx8.loop");
      EXPECT_EQ(stub[id], 1u);
      EXPECT_EQ(over[id], 9u);
    }
  EXPECT_EQ(changed, 1u);
}

TEST(BundleCosts, AMisspeltBundleNameIsAnErrorNamingIt) {
  timing::TimingConfig t = timing::default_timing(isa::Arch::Mariana);
  t.bundle_issue_cycles["pool.mx8.lop"] = 9;
  try {
    fw::builtin_kernels().resolve_costs(t);
    FAIL() << "no error for an unknown bundle";
  } catch (const timing::TimingError& e) {
    EXPECT_NE(std::string(e.what()).find("'bundle_issue_cycles.pool.mx8.lop'"), std::string::npos)
        << e.what();
  }
}

TEST(BundleCosts, ExecuteChargesTheResolvedCost) {
  FakeContext ctx(direct_inst(true, 10));
  timing::TimingConfig t = timing::default_timing(isa::Arch::Mariana);
  t.bundle_issue_cycles["dve.qmx.pack"] = 13;
  const fw::KernelRegistry& k = fw::builtin_kernels();
  k.execute(fw::kQuantizeMxTrampolineVa, ctx, k.resolve_costs(t));
  ASSERT_EQ(ctx.names.size(), ctx.costs.size());
  ASSERT_GT(ctx.names.size(), 10u);
  EXPECT_EQ(ctx.names[10], "dve.qmx.pack");
  EXPECT_EQ(ctx.costs[10], 13u);
  EXPECT_EQ(ctx.costs[0], 1u);  // dve.trampoline.call8: the stub's cycles
}

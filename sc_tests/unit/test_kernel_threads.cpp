// The kernels' arithmetic split over host threads (SPEC §13 --threads,
// firmware_stubs/common/host_threads.h): PE LdweightsMX / MatmulMX / v5
// plain MATMUL, POOL TensorDequantize (DMI runs, gathered strided patterns,
// aliasing layouts, a fault) and DVE QuantizeMX, each on random shapes with
// 1, 2 and 3 threads behind a recording KernelContext. Every run must leave
// the same memory bytes, issue the same bundles with the same trips and
// counters, and make the same timed accesses in the same order on every
// partition lane (the PE and the DVE: in the same global order); a split
// must really have happened with 2 and 3 threads. The values are checked
// against the independent references too. Pure C++: runs under
// ThreadSanitizer (make tsan).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "firmware_stubs/builtin_kernels.h"
#include "firmware_stubs/common/host_threads.h"
#include "firmware_stubs/dve/quantize_mx.h"
#include "firmware_stubs/pe/matmul.h"
#include "firmware_stubs/pool/tensor_dequantize.h"
#include "models/kernel/kernel.h"
#include "models/numerics/dequant_stream.h"
#include "sc_tests/sc/test_dve_quantize_mx_ref.h"
#include "sc_tests/sc/test_platform_ref.h"
#include "sc_tests/unit/test_mx_matmul_ref.h"

using namespace tpb;
using tpb::num::Format;

namespace {

// ---- a KernelContext that records everything ---------------------------------

struct Access {
  char kind;  // 'R' read, 'W' write, 'D' direct
  bool write;
  std::uint64_t addr;
  std::size_t len;
  bool operator==(const Access& o) const {
    return std::tie(kind, write, addr, len) == std::tie(o.kind, o.write, o.addr, o.len);
  }
};

// SBUF and PSUM (256 KiB slots, lazily filled with a byte of their
// address), untimed; DMI granted when `dmi`.
class RecordingContext : public fw::KernelContext {
 public:
  RecordingContext(isa::Arch arch, isa::Queue engine, bool dmi)
      : arch_(arch), engine_(engine), dmi_(dmi), timing_(timing::default_timing(arch)) {}
  void set_inst(const isa::RawInst& r) {
    inst_ = r;
    new_instruction();
  }
  const isa::RawInst& inst() const override { return inst_; }
  isa::Arch arch() const override { return arch_; }
  isa::Queue engine() const override { return engine_; }
  std::uint32_t reg(unsigned) const override { return 0; }
  const timing::TimingConfig& timing() const override { return timing_; }
  fw::EngineState& engine_state() override { return state_; }
  void read(std::uint64_t addr, void* dst, std::size_t len) override {
    std::memcpy(dst, at(addr, len), len);
    log.push_back({'R', false, addr, len});
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) override {
    std::memcpy(at(addr, len), src, len);
    log.push_back({'W', true, addr, len});
  }
  std::uint8_t* direct(std::uint64_t addr, std::size_t len, bool for_write) override {
    if (!dmi_) return nullptr;
    std::uint8_t* p = at(addr, len);
    log.push_back({'D', for_write, addr, len});
    return p;
  }
  void count(const char* name, std::uint64_t n) override {
    events.push_back(std::string("count ") + name + " " + std::to_string(n));
  }
  void begin_bundle(const fw::Bundle& b, std::uint64_t trips, std::uint32_t cycles) override {
    events.push_back(b.name + " " + std::to_string(trips) + " " + std::to_string(cycles));
  }
  void end_bundle(const fw::Bundle&) override {}

  // Setup writes, not logged.
  void poke(std::uint64_t addr, const void* src, std::size_t len) {
    std::memcpy(at(addr, len), src, len);
  }
  void peek(std::uint64_t addr, void* dst, std::size_t len) {
    std::memcpy(dst, at(addr, len), len);
  }

  std::map<std::uint32_t, std::vector<std::uint8_t>> mem;  // by region | partition
  std::vector<Access> log;
  std::vector<std::string> events;

 private:
  std::uint8_t* at(std::uint64_t addr, std::size_t len) {
    const auto a = static_cast<std::uint32_t>(addr);
    const isa::Region r = isa::region_of(a);
    if ((r != isa::Region::Sbuf && r != isa::Region::Psum) ||
        isa::offset_of(a) + len > isa::kPartitionSlot)
      throw fw::KernelFault("recording context: access outside one SBUF / PSUM partition");
    const std::uint32_t key = a & ~(isa::kPartitionSlot - 1);
    auto& slot = mem[key];
    if (slot.empty()) slot.assign(isa::kPartitionSlot, std::uint8_t((key >> 18) * 31 + 7));
    return slot.data() + isa::offset_of(a);
  }
  isa::RawInst inst_{};
  isa::Arch arch_;
  isa::Queue engine_;
  bool dmi_;
  timing::TimingConfig timing_;
  fw::EngineState state_;
};

// One instruction of a program: the worker VA the kernel_info table gives
// its opcode, and its words.
struct Step {
  std::uint32_t va;
  isa::RawInst raw;
};

struct Outcome {
  std::map<std::uint32_t, std::vector<std::uint8_t>> mem;
  std::vector<Access> log;
  std::vector<std::string> events;
  std::string fault;
  std::uint64_t splits = 0;
};

// Runs `prog` from the memory `setup` leaves, with `threads` host threads.
Outcome run(unsigned threads, isa::Arch arch, isa::Queue engine, bool dmi,
            const std::function<void(RecordingContext&)>& setup, const std::vector<Step>& prog) {
  fw::set_host_threads(threads);
  RecordingContext ctx(arch, engine, dmi);
  setup(ctx);
  const fw::KernelRegistry& k = fw::builtin_kernels();
  const fw::BundleCosts costs = k.resolve_costs(ctx.timing());
  const std::uint64_t s0 = fw::split_jobs();
  Outcome o;
  try {
    for (const Step& s : prog) {
      ctx.set_inst(s.raw);
      k.execute(s.va, ctx, costs);
    }
  } catch (const fw::KernelFault& e) {
    o.fault = e.what();
  }
  o.splits = fw::split_jobs() - s0;
  fw::set_host_threads(0);
  o.mem = std::move(ctx.mem);
  o.log = std::move(ctx.log);
  o.events = std::move(ctx.events);
  return o;
}

// The accesses of each lane (region and partition, direction), in order.
std::map<std::pair<std::uint32_t, bool>, std::vector<Access>> lanes(const std::vector<Access>& l) {
  std::map<std::pair<std::uint32_t, bool>, std::vector<Access>> out;
  for (const Access& a : l)
    out[{static_cast<std::uint32_t>(a.addr) & ~(isa::kPartitionSlot - 1), a.write}].push_back(a);
  return out;
}

// Runs with 1, 2 and 3 threads and checks that nothing differs; returns the
// one-thread outcome. `split`: whether 2 and 3 threads must have split.
Outcome same_for_1_2_3(const std::string& what, isa::Arch arch, isa::Queue engine, bool dmi,
                       const std::function<void(RecordingContext&)>& setup,
                       const std::vector<Step>& prog, bool split, bool global_order) {
  const Outcome one = run(1, arch, engine, dmi, setup, prog);
  EXPECT_EQ(one.splits, 0u) << what;
  for (unsigned n : {2u, 3u}) {
    const Outcome o = run(n, arch, engine, dmi, setup, prog);
    EXPECT_EQ(o.fault, one.fault) << what << ", " << n << " threads";
    EXPECT_EQ(o.events, one.events) << what << ", " << n << " threads";
    EXPECT_TRUE(lanes(o.log) == lanes(one.log)) << what << ", " << n << " threads";
    if (global_order) {
      EXPECT_TRUE(o.log == one.log) << what << ", " << n << " threads";
    }
    EXPECT_TRUE(o.mem == one.mem) << what << ", " << n << " threads: memory differs";
    if (split) {
      EXPECT_GT(o.splits, 0u) << what << ", " << n << " threads: the work was not split";
    }
  }
  return one;
}

// ---- PE ------------------------------------------------------------------------

isa::MxMemPattern1D mx1d(std::uint32_t data, std::uint32_t scale, unsigned num, int step) {
  isa::MxTensor1D t{};
  t.start_addr.raw = data;
  t.scale_addr.raw = scale;
  t.num_elem[0] = std::uint16_t(num);
  t.step_elem[0] = std::int8_t(step);
  isa::MxMemPattern1D p;
  std::memcpy(&p, &t, sizeof t);
  return p;
}
isa::MemPattern3D m3d(std::uint32_t addr, unsigned num) {
  isa::Tensor3D t{};
  t.start_addr.raw = addr;
  t.step_elem[0] = 1;
  t.num_elem[0] = std::uint16_t(num);
  t.num_elem[1] = t.num_elem[2] = 1;
  isa::MemPattern3D p;
  std::memcpy(&p, &t, sizeof t);
  return p;
}
std::uint8_t grp(unsigned rows) { return std::uint8_t((1u << ((rows + 31) / 32)) - 1); }

Format mx_fmt(isa::Dtype d) {
  return d == isa::Dtype::Fp8Exp4   ? Format::E4M3
         : d == isa::Dtype::Fp8Exp5 ? Format::E5M2
                                    : Format::Fp4E2M1;
}

}  // namespace

// v4 LdweightsMX + MatmulMX (overwrite, then accumulate) on random shapes:
// K 32..128 partitions, M 64..128, N 256..512 (enough work to split),
// strided moving columns, mixed MX
// dtypes with NaN scales; the PSUM checked against the reference on a sample.
TEST(KernelThreads, PeMatmulMxIsTheSameFor1To3Threads) {
  std::mt19937_64 rng(31);
  const isa::Dtype dts[] = {isa::Dtype::Fp8Exp4, isa::Dtype::Fp8Exp5, isa::Dtype::Fp4Exp2};
  for (int trial = 0; trial < 5; ++trial) {
    const unsigned rows = 32 * unsigned(1 + rng() % 4);
    const unsigned M = trial == 0 ? 128 : 64 + unsigned(rng() % 65);
    const unsigned N = trial == 0 ? 512 : 256 + unsigned(rng() % 257);
    const int step = trial % 3 == 2 ? 2 : 1;
    const isa::Dtype dw = dts[rng() % 3], dx = dts[rng() % 3];
    const unsigned uw = dw == isa::Dtype::Fp4Exp2 ? 2 : 4, ux = dx == isa::Dtype::Fp4Exp2 ? 2 : 4;
    std::vector<std::uint8_t> wbytes(std::size_t{rows} * M * uw),
        xbytes(std::size_t{rows} * N * ux);
    for (auto& b : wbytes) b = std::uint8_t(rng());
    for (auto& b : xbytes) b = std::uint8_t(rng());
    std::vector<std::uint8_t> ws(std::size_t{rows / 8} * M), xs(std::size_t{rows / 8} * N);
    for (auto& s : ws) s = std::uint8_t(118 + rng() % 18);
    for (auto& s : xs) s = rng() % 64 == 0 ? 0xFF : std::uint8_t(118 + rng() % 18);
    const auto setup = [&](RecordingContext& ctx) {
      for (unsigned p = 0; p < rows; ++p) {
        ctx.poke(isa::sbuf_addr(p, 0x0), wbytes.data() + std::size_t{p} * M * uw, M * uw);
        for (unsigned j = 0; j < N; ++j)
          ctx.poke(isa::sbuf_addr(p, 0x4000 + j * step * ux),
                   xbytes.data() + (std::size_t{p} * N + j) * ux, ux);
      }
      for (unsigned b = 0; b < rows / 8; ++b) {
        const unsigned sp = 32 * (b / 4) + b % 4;
        ctx.poke(isa::sbuf_addr(sp, 0x10000), ws.data() + std::size_t{b} * M, M);
        ctx.poke(isa::sbuf_addr(sp, 0x11000), xs.data() + std::size_t{b} * N, N);
      }
    };
    isa::SMX1Lw lw{};
    lw.header = {0x09, 16, 0, 0};
    lw.src_mem_pattern = mx1d(isa::sbuf_addr(0, 0x0), isa::sbuf_addr(0, 0x10000), M, 1);
    lw.in_dtype = static_cast<std::uint8_t>(dw);
    lw.num_active_rows = std::uint8_t(rows);
    lw.num_active_cols = std::uint8_t(M);
    lw.row_grp = grp(rows);
    lw.col_grp = 0xF;
    std::vector<Step> prog = {{fw::kPeLdweightsHandlerVa, isa::encode(lw)}};
    for (bool acc : {false, true}) {
      isa::SMX1D3Mm mm{};
      mm.header = {0x0A, 16, 0, 0};
      mm.src_mem_pattern = mx1d(isa::sbuf_addr(0, 0x4000), isa::sbuf_addr(0, 0x11000), N, step);
      mm.in_dtype = static_cast<std::uint8_t>(dx);
      mm.num_active_rows = std::uint8_t(rows);
      mm.out_dtype = static_cast<std::uint8_t>(isa::Dtype::Fp32);
      mm.psum_accumulate_flags = acc;
      mm.dst_mem_pattern = m3d(isa::psum_addr(0, 0x100), N);
      prog.push_back({fw::kPeMatmulHandlerVa, isa::encode(mm)});
    }
    const std::string what = "PE trial " + std::to_string(trial);
    const Outcome one =
        same_for_1_2_3(what, isa::Arch::Mariana, isa::Queue::Pe, true, setup, prog, true, true);
    ASSERT_TRUE(one.fault.empty()) << one.fault;
    // PSUM = 2 x (W^T X) accumulated: the second matmul adds every product
    // again onto the first's result. Sampled outputs against the reference.
    const auto value = [&](const std::vector<std::uint8_t>& bytes,
                           const std::vector<std::uint8_t>& sc, Format f, unsigned cols, unsigned k,
                           unsigned j) {
      const unsigned p = k / 4, l = k % 4, u = f == Format::Fp4E2M1 ? 2 : 4;
      std::uint32_t w = 0;
      std::memcpy(&w, bytes.data() + (std::size_t{p} * cols + j) * u, u);
      const std::uint32_t c = u == 2 ? (w >> (4 * l)) & 0xF : (w >> (8 * l)) & 0xFF;
      return mxref::ref_value(f, c, sc[std::size_t{p / 8} * cols + j]);
    };
    for (int s = 0; s < 40; ++s) {
      const unsigned m = unsigned(rng() % M), n = unsigned(rng() % N);
      float a = mxref::ref_mul(value(wbytes, ws, mx_fmt(dw), M, 0, m),
                               value(xbytes, xs, mx_fmt(dx), N, 0, n));
      for (unsigned k = 1; k < 4 * rows; ++k)
        a = mxref::ref_add(a, mxref::ref_mul(value(wbytes, ws, mx_fmt(dw), M, k, m),
                                             value(xbytes, xs, mx_fmt(dx), N, k, n)));
      for (unsigned k = 0; k < 4 * rows; ++k)
        a = mxref::ref_add(a, mxref::ref_mul(value(wbytes, ws, mx_fmt(dw), M, k, m),
                                             value(xbytes, xs, mx_fmt(dx), N, k, n)));
      float got;
      std::memcpy(&got, one.mem.at(isa::psum_addr(m, 0)).data() + 0x100 + 4 * n, 4);
      ASSERT_TRUE(mxref::same(got, a))
          << what << " PSUM[" << m << "][" << n << "]: " << got << " want " << a;
    }
  }
}

// v5 plain MATMUL (BF16 and FP32) after LDWEIGHTS, on MAVERICK.
TEST(KernelThreads, PePlainMatmulIsTheSameFor1To3Threads) {
  std::mt19937_64 rng(37);
  for (isa::Dtype d : {isa::Dtype::Bf16, isa::Dtype::Fp32}) {
    const unsigned eb = d == isa::Dtype::Fp32 ? 4 : 2, rows = 128, M = 96, N = 500;
    std::vector<std::uint8_t> w(std::size_t{rows} * M * eb), x(std::size_t{rows} * N * eb);
    for (auto& b : w) b = std::uint8_t(rng());
    for (auto& b : x) b = std::uint8_t(rng());
    const auto setup = [&](RecordingContext& ctx) {
      for (unsigned p = 0; p < rows; ++p) {
        ctx.poke(isa::sbuf_addr(p, 0x0), w.data() + std::size_t{p} * M * eb, M * eb);
        ctx.poke(isa::sbuf_addr(p, 0x1000), x.data() + std::size_t{p} * N * eb, N * eb);
      }
    };
    isa::S3Lw lw{};
    lw.header = {0x01, 16, 0, 0};
    lw.src_mem_pattern = m3d(isa::sbuf_addr(0, 0x0), M);
    lw.in_dtype = static_cast<std::uint8_t>(d);
    lw.num_active_rows = std::uint8_t(rows);
    lw.num_active_cols = std::uint8_t(M);
    lw.row_grp = grp(rows);
    lw.col_grp = 0xF;
    isa::S3D3Mm mm{};
    mm.header = {0x02, 16, 0, 0};
    mm.src_mem_pattern = m3d(isa::sbuf_addr(0, 0x1000), N);
    mm.in_dtype = static_cast<std::uint8_t>(d);
    mm.out_dtype = static_cast<std::uint8_t>(isa::Dtype::Fp32);
    mm.num_active_rows = std::uint8_t(rows);
    mm.dst_mem_pattern = m3d(isa::psum_addr(0, 0), N);
    const Outcome one = same_for_1_2_3(
        std::string("plain ") + (eb == 4 ? "fp32" : "bf16"), isa::Arch::Maverick, isa::Queue::Pe,
        true, setup,
        {{fw::kPeLdweightsHandlerVa, isa::encode(lw)}, {fw::kPeMatmulHandlerVa, isa::encode(mm)}},
        true, true);
    ASSERT_TRUE(one.fault.empty()) << one.fault;
  }
}

// ---- POOL TensorDequantize -------------------------------------------------------

namespace {

struct DequantCase {
  unsigned fmt, group, channels, src_words;
  int src_step;       // 1: a single run; 2: strided (gathered)
  unsigned dst_part;  // 0: disjoint from the source's partitions at 0x20000; else aliasing
  bool dmi;
};

}  // namespace

TEST(KernelThreads, DequantIsTheSameFor1To3Threads) {
  const DequantCase cases[] = {
      {1, 0, 128, 1024, 1, 0, true},  // DMI runs, split
      {2, 8, 64, 2050, 1, 0, true},   // MX, split
      {3, 0, 100, 700, 1, 0, true},   // NF4, odd channel count
      {4, 0, 96, 1536, 1, 0, true},   // FP6 (3 -> 4 words)
      {1, 8, 128, 1025, 2, 0, true},  // strided source: gathered, split
      {2, 0, 77, 1200, 1, 0, false},  // no DMI: gathered, split
      {1, 0, 64, 2048, 1, 1, true},   // dst = the next partition's src: sequential
      {1, 0, 1, 4096, 1, 0, true},    // one partition: never split
  };
  int i = 0;
  for (const DequantCase& c : cases) {
    const std::string what = "dequant case " + std::to_string(i++);
    const num::DequantRatio r = num::dequant_ratio(isa::DequantFmt(c.fmt), c.group);
    const unsigned dst_words = c.src_words / r.src_words * r.dst_words;
    std::vector<std::vector<std::uint32_t>> src(c.channels);
    for (unsigned ch = 0; ch < c.channels; ++ch)
      src[ch] = platref::make_words(c.src_words, 1000 + ch, c.group);
    const std::uint32_t dst_off = c.dst_part ? 0x0 : 0x20000;
    const auto setup = [&](RecordingContext& ctx) {
      for (unsigned ch = 0; ch < c.channels; ++ch)
        for (unsigned w = 0; w < c.src_words; ++w)
          ctx.poke(isa::sbuf_addr(ch, 4 * w * unsigned(c.src_step)), &src[ch][w], 4);
    };
    const isa::RawInst inst = platref::dequant_inst(
        c.fmt, c.group, c.channels,
        platref::t3d(isa::sbuf_addr(0, 0), std::int16_t(c.src_step), std::uint16_t(c.src_words)),
        platref::t3d(isa::sbuf_addr(c.dst_part, dst_off), 1, std::uint16_t(dst_words)));
    const bool split = c.channels > 1 && c.dst_part == 0;
    const Outcome one = same_for_1_2_3(what, isa::Arch::Mariana, isa::Queue::Pool, c.dmi, setup,
                                       {{fw::kTensorDequantizeTrampolineVa, inst}}, split, false);
    ASSERT_TRUE(one.fault.empty()) << what << ": " << one.fault;
    if (c.dst_part != 0) continue;  // aliasing: the output feeds later channels
    const bool e4m3 = c.fmt == 3 || c.fmt == 4;
    for (unsigned ch : {0u, c.channels / 2, c.channels - 1}) {
      // The first 60 source words (whole MX chunks and FP6 triples) against the reference.
      const std::vector<std::uint32_t> head(src[ch].begin(), src[ch].begin() + 60);
      const std::vector<std::uint32_t> want = platref::dequant_ref(c.fmt, c.group, head);
      std::vector<std::uint32_t> got(want.size());
      std::memcpy(got.data(), one.mem.at(isa::sbuf_addr(ch, 0)).data() + dst_off, 4 * got.size());
      for (std::size_t w = 0; w < want.size(); ++w)
        ASSERT_TRUE(platref::fp8_word_equal(e4m3, got[w], want[w]))
            << what << " channel " << ch << " word " << w;
    }
  }
}

// A dst pattern that leaves the partition faults the same way, with the same
// memory and accesses, whatever the thread count.
TEST(KernelThreads, DequantFaultIsTheSameFor1To3Threads) {
  const auto setup = [](RecordingContext&) {};
  const isa::RawInst inst = platref::dequant_inst(
      1, 0, 64, platref::t3d(isa::sbuf_addr(0, 0), 2, 1024),
      platref::t3d(isa::sbuf_addr(64, 0x3F000), 1, 2048));  // 8 KiB from 0x3F000: past 256 KiB
  const Outcome one =
      same_for_1_2_3("dequant fault", isa::Arch::Mariana, isa::Queue::Pool, true, setup,
                     {{fw::kTensorDequantizeTrampolineVa, inst}}, false, false);
  EXPECT_NE(one.fault.find("outside the partition"), std::string::npos) << one.fault;
}

// ---- DVE QuantizeMX ----------------------------------------------------------------

TEST(KernelThreads, QuantizeMxIsTheSameFor1To3Threads) {
  std::mt19937_64 rng(41);
  const isa::Dtype ins[] = {isa::Dtype::Fp32, isa::Dtype::Bf16, isa::Dtype::Fp16};
  for (int trial = 0; trial < 4; ++trial) {
    const unsigned channels = trial == 0 ? 128 : 32 * unsigned(2 + rng() % 3);  // 64..128
    const std::uint16_t cols = std::uint16_t(trial == 0 ? 512 : 256 + rng() % 257);
    const isa::Dtype in = ins[trial % 3];
    const bool e4m3 = trial % 2 == 0;
    const unsigned es = dveref::elem_size(in);
    std::vector<std::vector<std::uint32_t>> raw(channels);
    for (unsigned c = 0; c < channels; ++c)
      for (unsigned k = 0; k < 4u * cols; ++k)
        raw[c].push_back(dveref::gen_elem(in, 50 + trial, c, k, true));
    const auto setup = [&](RecordingContext& ctx) {
      for (unsigned c = 0; c < channels; ++c)
        for (unsigned k = 0; k < 4u * cols; ++k)
          ctx.poke(isa::sbuf_addr(c, k * es), &raw[c][k], es);
    };
    const isa::RawInst inst = dveref::qmx_inst(
        in, e4m3, channels, dveref::t3(isa::sbuf_addr(0, 0), 1, std::uint16_t(4 * cols)),
        isa::sbuf_addr(0, 0x10000), isa::sbuf_addr(0, 0x20000), cols);
    const std::string what = "QuantizeMX trial " + std::to_string(trial);
    const Outcome one = same_for_1_2_3(what, isa::Arch::Mariana, isa::Queue::Dve, true, setup,
                                       {{fw::kQuantizeMxTrampolineVa, inst}}, true, true);
    ASSERT_TRUE(one.fault.empty()) << one.fault;
    // The first and the last block row against the reference.
    for (unsigned b : {0u, channels / 8 - 1}) {
      const std::vector<std::vector<std::uint32_t>> rows(raw.begin() + 8 * b,
                                                         raw.begin() + 8 * b + 8);
      const dveref::QmxResult q = dveref::quantize_ref(in, e4m3, false, rows);
      for (unsigned r = 0; r < 8; ++r) {
        std::vector<std::uint32_t> got(cols);
        std::memcpy(got.data(), one.mem.at(isa::sbuf_addr(8 * b + r, 0)).data() + 0x10000,
                    4u * cols);
        ASSERT_EQ(got, q.words[r]) << what << " partition " << 8 * b + r;
      }
      const unsigned sp = fw::mx_scale_partition(0, 0, b);
      std::vector<std::uint8_t> got(cols);
      std::memcpy(got.data(), one.mem.at(isa::sbuf_addr(sp, 0)).data() + 0x20000, cols);
      ASSERT_EQ(got, q.scales[0]) << what << " block row " << b;
    }
  }
}

// PE matmul through the platform (SPEC §5): v4 LdweightsMX / MatmulMX and v5
// LDWEIGHTS / MATMUL (MX and plain) on random tensors against the independent
// reference of sc_tests/unit/test_mx_matmul_ref.h; PE state across
// instructions; every run-time fault by name; timing per TIMING.md; stats;
// every output the same for 1, 2 and 3 host threads (with the POOL and DVE
// kernels running alongside).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "firmware_stubs/common/host_threads.h"
#include "firmware_stubs/pe/matmul.h"
#include "models/isa/checker.h"
#include "models/isa/program.h"
#include "models/trace/perfetto_writer.h"
#include "models/trace/stats_writer.h"
#include "models/trace/vcd_writer.h"
#include "platform/core/tpb_core.h"
#include "sc_tests/scratch_dir.h"
#include "sc_tests/unit/test_mx_matmul_ref.h"

using namespace tpb;
using namespace tpb::mxref;
using isa::Dtype;

namespace {

// ---- operands -----------------------------------------------------------------

struct Tensor {  // rows partitions x cols columns, MX x4 words or plain elements
  Format f = Format::E4M3;
  std::uint8_t dtype = 0;
  bool mx = true;
  unsigned rows = 0, cols = 0;
  std::vector<std::uint32_t> code;   // [row][col]
  std::vector<std::uint8_t> scales;  // [row / 8][col]
  unsigned kdim() const { return mx ? 4 * rows : rows; }
  unsigned unit() const {
    if (mx) return (f == Format::Fp4E2M1 || f == Format::Int4) ? 2 : 4;
    return f == Format::Fp32 ? 4 : (f == Format::Bf16 || f == Format::Fp16) ? 2 : 1;
  }
  // Value at contraction index k, column j.
  float value(unsigned k, unsigned j) const {
    if (!mx) return ref_plain(f, code[std::size_t{k} * cols + j]);
    const unsigned p = k / 4, l = k % 4;
    const std::uint32_t w = code[std::size_t{p} * cols + j];
    const std::uint32_t c = unit() == 2 ? (w >> (4 * l)) & 0xF : (w >> (8 * l)) & 0xFF;
    return ref_value(f, c, scales[std::size_t{p / 8} * cols + j]);
  }
};

Format fmt_of(Dtype d) {
  switch (d) {
    case Dtype::Fp8Exp4:
      return Format::E4M3;
    case Dtype::Fp8Exp5:
      return Format::E5M2;
    case Dtype::Fp8Exp3:
      return Format::E3M4;
    case Dtype::Fp8Exp2:
      return Format::E2M5;
    case Dtype::Fp4Exp2:
      return Format::Fp4E2M1;
    case Dtype::Int4:
      return Format::Int4;
    case Dtype::Bf16:
      return Format::Bf16;
    case Dtype::Fp16:
      return Format::Fp16;
    default:
      return Format::Fp32;
  }
}

// Random codes: mostly finite (the top codes rarely), scales around 2^0.
Tensor random_tensor(std::mt19937_64& rng, Dtype d, bool mx, unsigned rows, unsigned cols) {
  Tensor t;
  t.f = fmt_of(d);
  t.dtype = static_cast<std::uint8_t>(d);
  t.mx = mx;
  t.rows = rows;
  t.cols = cols;
  t.code.resize(std::size_t{rows} * cols);
  for (auto& c : t.code) {
    if (mx) {
      c = static_cast<std::uint32_t>(rng());
      if (t.unit() == 2) c &= 0xFFFF;
      if (rng() % 32 != 0) c &= t.unit() == 2 ? 0xFFFFu : 0xEFEFEFEFu;
    } else if (t.f == Format::Fp32) {
      float v = std::ldexp(float(int(rng() % 2001) - 1000), int(rng() % 20) - 10);
      std::memcpy(&c, &v, 4);
    } else if (t.f == Format::Bf16 || t.f == Format::Fp16) {
      c = static_cast<std::uint32_t>(rng()) & (t.f == Format::Bf16 ? 0x3FFFu : 0x7BFFu);
      if (rng() % 2) c |= 0x8000;
    } else {
      c = static_cast<std::uint32_t>(rng()) & 0xEF;
    }
  }
  t.scales.resize(std::size_t{rows / 8} * cols);
  for (auto& s : t.scales) s = std::uint8_t(120 + rng() % 15);
  if (!t.scales.empty() && rng() % 4 == 0) t.scales[rng() % t.scales.size()] = 0xFF;
  return t;
}

// Where an operand sits: v4 MXTENSOR1D (step in x4 words, scale_pidx), v5
// MXTENSOR_V2 (num[2], steps) or a plain TENSOR3D with step 1.
struct Place {
  unsigned part = 0;
  std::uint32_t data_off = 0, scale_off = 0;
  int step = 1;
  unsigned pidx = 0;
  // v5 MXTENSOR_V2 shape: cols = n0 x n1, row stride sd (x4 words), ss (bytes)
  unsigned n0 = 0, n1 = 1;
  int sd = 0, ss = 0;
};

std::int64_t col_data_off(const Place& pl, unsigned j, unsigned unit) {
  if (pl.n0) return (std::int64_t(j % pl.n0) + std::int64_t(j / pl.n0) * pl.sd) * unit;
  return std::int64_t(j) * pl.step * unit;
}
std::int64_t col_scale_off(const Place& pl, unsigned j) {
  if (pl.n0) return std::int64_t(j % pl.n0) + std::int64_t(j / pl.n0) * pl.ss;
  return j;
}

void place(platform::TpbCore& core, const Tensor& t, const Place& pl) {
  for (unsigned p = 0; p < t.rows; ++p)
    for (unsigned j = 0; j < t.cols; ++j) {
      const std::uint32_t c = t.code[std::size_t{p} * t.cols + j];
      core.load_memory(
          isa::sbuf_addr(pl.part + p, std::uint32_t(pl.data_off + col_data_off(pl, j, t.unit()))),
          &c, t.unit());
    }
  if (!t.mx) return;
  for (unsigned b = 0; b < t.rows / 8; ++b) {
    const unsigned sp = pl.part + 32 * (b / 4) + pl.pidx + b % 4;
    for (unsigned j = 0; j < t.cols; ++j)
      core.load_memory(isa::sbuf_addr(sp, std::uint32_t(pl.scale_off + col_scale_off(pl, j))),
                       &t.scales[std::size_t{b} * t.cols + j], 1);
  }
}

// ---- instructions ---------------------------------------------------------------

isa::MxMemPattern1D mx1d(const Place& pl, unsigned num) {
  isa::MxTensor1D t{};
  t.start_addr.raw = isa::sbuf_addr(pl.part, pl.data_off);
  t.scale_addr.raw = isa::sbuf_addr(pl.part, pl.scale_off);
  t.num_elem[0] = std::uint16_t(num);
  t.step_elem[0] = std::int8_t(pl.step);
  t.scale_pidx = std::uint8_t(pl.pidx);
  isa::MxMemPattern1D p;
  std::memcpy(&p, &t, sizeof t);
  return p;
}
isa::MemPattern3D m3d_mx(const Place& pl) {
  isa::MxTensorV2 m{};
  m.data_addr.raw =
      (std::uint32_t{isa::addr4::kMarkerMxTensorV2} << 27) | isa::sbuf_addr(pl.part, pl.data_off);
  m.scale_addr.raw = isa::sbuf_addr(pl.part, pl.scale_off);
  m.num_elem[0] = std::uint8_t(pl.n0);
  m.num_elem[1] = std::uint8_t(pl.n1);
  m.step_elem_data_1 = std::int16_t(pl.sd);
  m.step_elem_scale_1 = std::int16_t(pl.ss);
  m.scale_dtype = static_cast<std::uint8_t>(Dtype::Sfp8E8);
  isa::MemPattern3D p;
  std::memcpy(&p, &m, sizeof m);
  return p;
}
isa::MemPattern3D m3d_t(std::uint32_t addr, unsigned num, int step = 1) {
  isa::Tensor3D t{};
  t.start_addr.raw = addr;
  t.step_elem[0] = std::int16_t(step);
  t.num_elem[0] = std::uint16_t(num);
  t.num_elem[1] = t.num_elem[2] = 1;
  isa::MemPattern3D p;
  std::memcpy(&p, &t, sizeof t);
  return p;
}
std::uint8_t grp(unsigned rows) { return std::uint8_t((1u << ((rows + 31) / 32)) - 1); }

isa::RawInst lw_v4(const Tensor& t, const Place& pl) {
  isa::SMX1Lw i{};
  i.header = {0x09, 16, 0, 0};
  i.src_mem_pattern = mx1d(pl, t.cols);
  i.in_dtype = t.dtype;
  i.num_active_rows = std::uint8_t(t.rows);
  i.num_active_cols = std::uint8_t(t.cols);
  i.row_grp = grp(t.rows);
  i.col_grp = 0xF;
  return isa::encode(i);
}
isa::RawInst mm_v4(const Tensor& x, const Place& pl, std::uint32_t dst, bool acc) {
  isa::SMX1D3Mm i{};
  i.header = {0x0A, 16, 0, 0};
  i.src_mem_pattern = mx1d(pl, x.cols);
  i.in_dtype = x.dtype;
  i.num_active_rows = std::uint8_t(x.rows);
  i.out_dtype = static_cast<std::uint8_t>(Dtype::Fp32);
  i.psum_accumulate_flags = acc ? 1 : 0;
  i.dst_mem_pattern = m3d_t(dst, x.cols);
  return isa::encode(i);
}
isa::RawInst lw_v5(const Tensor& t, const Place& pl, std::uint8_t perf = 0) {
  isa::S3Lw i{};
  i.header = {0x01, 16, 0, 0};
  i.src_mem_pattern = t.mx ? m3d_mx(pl) : m3d_t(isa::sbuf_addr(pl.part, pl.data_off), t.cols);
  i.in_dtype = t.dtype;
  i.num_active_rows = std::uint8_t(t.rows);
  i.num_active_cols = std::uint8_t(t.cols);
  i.row_grp = grp(t.rows);
  i.col_grp = 0xF;
  i.mx_perf_mode = perf;
  return isa::encode(i);
}
isa::RawInst mm_v5(const Tensor& x, const Place& pl, std::uint32_t dst, bool acc,
                   std::uint8_t perf = 0) {
  isa::S3D3Mm i{};
  i.header = {0x02, 16, 0, 0};
  i.src_mem_pattern = x.mx ? m3d_mx(pl) : m3d_t(isa::sbuf_addr(pl.part, pl.data_off), x.cols);
  i.in_dtype = x.dtype;
  i.out_dtype = static_cast<std::uint8_t>(Dtype::Fp32);
  i.num_active_rows = std::uint8_t(x.rows);
  i.psum_accumulate_flags = acc ? 1 : 0;
  i.mx_perf_mode = perf;
  i.dst_mem_pattern = m3d_t(dst, x.cols);
  return isa::encode(i);
}

// ---- expected PSUM ----------------------------------------------------------------

struct Out {
  std::uint32_t dst;  // PSUM address of element 0 of partition 0 of the result
  unsigned M, N;
  std::vector<float> want;  // [m][n]
};

// PSUM[m][n] = (acc ? old : first product) + products in k order.
Out expect(const Tensor& w, const Tensor& x, std::uint32_t dst, bool acc,
           const std::vector<float>& old) {
  Out o{dst, w.cols, x.cols, {}};
  o.want.resize(std::size_t{o.M} * o.N);
  for (unsigned m = 0; m < o.M; ++m)
    for (unsigned n = 0; n < o.N; ++n) {
      float a = acc ? old[std::size_t{m} * o.N + n] : ref_mul(w.value(0, m), x.value(0, n));
      for (unsigned k = acc ? 0 : 1; k < w.kdim(); ++k)
        a = ref_add(a, ref_mul(w.value(k, m), x.value(k, n)));
      o.want[std::size_t{m} * o.N + n] = a;
    }
  return o;
}

std::vector<float> preload_psum(platform::TpbCore& core, std::mt19937_64& rng, std::uint32_t dst,
                                unsigned M, unsigned N) {
  std::vector<float> v(std::size_t{M} * N);
  for (auto& f : v) f = std::ldexp(float(int(rng() % 201) - 100), int(rng() % 8) - 4);
  for (unsigned m = 0; m < M; ++m)
    core.load_memory(dst + (m << isa::kPartitionShift), v.data() + std::size_t{m} * N, 4 * N);
  return v;
}

void check(platform::TpbCore& core, const Out& o, const std::string& what) {
  for (unsigned m = 0; m < o.M; ++m) {
    std::vector<float> got(o.N);
    core.dump_memory(o.dst + (m << isa::kPartitionShift), got.data(), 4 * o.N);
    for (unsigned n = 0; n < o.N; ++n)
      if (!same(got[n], o.want[std::size_t{m} * o.N + n])) {
        ADD_FAILURE() << what << ": PSUM row " << m << " column " << n << ": got " << got[n]
                      << " want " << o.want[std::size_t{m} * o.N + n];
        return;
      }
  }
}

platform::TpbCore* make_core(isa::Arch arch) {
  return new platform::TpbCore("tpb", platform::default_core_config(arch));
}

platform::CoreRunResult run_ok(platform::TpbCore& core, const std::vector<isa::RawInst>& prog) {
  core.load_queue(isa::Queue::Pe, prog);
  const platform::CoreRunResult r = core.run();
  EXPECT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  EXPECT_EQ(r.instructions, prog.size());
  return r;
}

std::string run_fault(platform::TpbCore& core, const std::vector<isa::RawInst>& prog) {
  core.load_queue(isa::Queue::Pe, prog);
  const platform::CoreRunResult r = core.run();
  EXPECT_EQ(r.status, platform::RunStatus::Fault);
  return r.message;
}

const Dtype kMx3[] = {Dtype::Fp8Exp4, Dtype::Fp8Exp5, Dtype::Fp4Exp2};

}  // namespace

// Every pair of MXFP8 E4M3 / E5M2 / MXFP4 E2M1 (and the other MX dtypes), one
// load + matmul each, K = 32 rows (128 contraction values), M = 24, N = 40.
TEST(PeMatmulMx, EveryDtypePairV4) {
  std::mt19937_64 rng(1);
  auto& core = *make_core(isa::Arch::Mariana);
  std::vector<isa::RawInst> prog;
  std::vector<Out> outs;
  std::vector<std::pair<Dtype, Dtype>> pairs;
  for (Dtype a : kMx3)
    for (Dtype b : kMx3) pairs.push_back({a, b});
  pairs.push_back({Dtype::Fp8Exp3, Dtype::Fp8Exp2});
  pairs.push_back({Dtype::Int4, Dtype::Fp8Exp4});
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Tensor w = random_tensor(rng, pairs[i].first, true, 32, 24);
    const Tensor x = random_tensor(rng, pairs[i].second, true, 32, 40);
    const Place pw{0, std::uint32_t(0x1000 * i), std::uint32_t(0x20000 + 0x400 * i)};
    const Place px{0, std::uint32_t(0x10000 + 0x1000 * i), std::uint32_t(0x28000 + 0x400 * i)};
    place(core, w, pw);
    place(core, x, px);
    const std::uint32_t dst = isa::psum_addr(0, std::uint32_t(0x100 * 4 * i % 0x3000));
    prog.push_back(lw_v4(w, pw));
    prog.push_back(mm_v4(x, px, dst, false));
    outs.push_back(expect(w, x, dst, false, {}));
    // one run per pair would need one process each: check after the run, but
    // the PSUM windows of later pairs must not overlap earlier ones.
  }
  // Windows: pair i writes 40 floats (160 B) at 0x400 * i: distinct.
  run_ok(core, prog);
  for (std::size_t i = 0; i < outs.size(); ++i) check(core, outs[i], "pair " + std::to_string(i));
}

// Random shapes over the space of SPEC §5: K 32..128 partitions, M up to 128,
// N up to 512, accumulate on and off, start quadrants other than 0, scale_pidx,
// strided moving columns, PSUM start partitions other than 0.
TEST(PeMatmulMx, RandomShapesV4) {
  std::mt19937_64 rng(7);
  auto& core = *make_core(isa::Arch::Mariana);
  std::vector<isa::RawInst> prog;
  std::vector<Out> outs;
  for (int i = 0; i < 8; ++i) {
    const unsigned rows = 32 * (1 + rng() % 4);
    const unsigned q = 32 * unsigned(rng() % (5 - rows / 32));  // start quadrant that fits
    const unsigned M = i == 0 ? 128 : 1 + unsigned(rng() % 128);
    const unsigned N = i == 1 ? 512 : 1 + unsigned(rng() % 512);
    const bool acc = i % 2 == 1;
    const Tensor w = random_tensor(rng, kMx3[rng() % 3], true, rows, M);
    const Tensor x = random_tensor(rng, kMx3[rng() % 3], true, rows, N);
    const unsigned pidx = i == 2 ? 28 : unsigned(rng() % 29);
    const Place pw{q, std::uint32_t(0x4000 * i), std::uint32_t(0x30000 + 0x800 * i), 1, pidx};
    const int step = (i % 3 == 2) ? 2 : 1;
    const Place px{q, std::uint32_t(0x4000 * i + 0x800), std::uint32_t(0x34000 + 0x800 * i), step,
                   unsigned(rng() % 29)};
    place(core, w, pw);
    place(core, x, px);
    const unsigned dp = unsigned(rng() % (128 - M + 1));
    const std::uint32_t dst = isa::psum_addr(dp, 0x800 * unsigned(i));
    std::vector<float> old;
    if (acc) old = preload_psum(core, rng, dst, M, N);
    prog.push_back(lw_v4(w, pw));
    prog.push_back(mm_v4(x, px, dst, acc));
    outs.push_back(expect(w, x, dst, acc, old));
  }
  run_ok(core, prog);
  for (std::size_t i = 0; i < outs.size(); ++i) check(core, outs[i], "case " + std::to_string(i));
}

// PE state lasts from one load to the next: two matmuls with one load, then
// a reload and a third; the third accumulates onto the second's output.
TEST(PeMatmulMx, StateAcrossInstructions) {
  std::mt19937_64 rng(3);
  auto& core = *make_core(isa::Arch::Mariana);
  const Tensor a = random_tensor(rng, Dtype::Fp8Exp4, true, 64, 32);
  const Tensor b = random_tensor(rng, Dtype::Fp4Exp2, true, 64, 16);
  const Tensor x1 = random_tensor(rng, Dtype::Fp8Exp5, true, 64, 48);
  const Tensor x2 = random_tensor(rng, Dtype::Fp8Exp4, true, 64, 48);
  const Place pa{32, 0x0000, 0x8000, 1, 3}, pb{32, 0x1000, 0x8100, 1, 7};
  const Place p1{32, 0x2000, 0x8200, 1, 0}, p2{32, 0x3000, 0x8300, 1, 12};
  for (auto [t, p] : {std::pair{&a, &pa}, {&b, &pb}, {&x1, &p1}, {&x2, &p2}}) place(core, *t, *p);
  const std::uint32_t d1 = isa::psum_addr(0, 0x0), d2 = isa::psum_addr(0, 0x800),
                      d3 = isa::psum_addr(0, 0x800);
  const Out o1 = expect(a, x1, d1, false, {});
  const Out o2 = expect(a, x2, d2, false, {});
  const Out o3 = expect(b, x1, d3, true, o2.want);  // accumulates onto rows 0..15 of o2
  run_ok(core, {lw_v4(a, pa), mm_v4(x1, p1, d1, false), mm_v4(x2, p2, d2, false), lw_v4(b, pb),
                mm_v4(x1, p1, d3, true)});
  check(core, o1, "matmul 1");
  check(core, o3, "matmul 3 (after the reload, accumulating)");
  Out o2_tail = o2;  // rows 16..31 of matmul 2 stay as written
  o2_tail.want.erase(o2_tail.want.begin(), o2_tail.want.begin() + 16 * 48);
  o2_tail.M = 16;
  o2_tail.dst = d2 + (16u << isa::kPartitionShift);
  check(core, o2_tail, "matmul 2 rows 16..31");
}

// v5: MX mode by the MXTENSOR_V2 marker (2-D num, strides), every perf mode
// gives the same values; plain BF16 / FP16 / FP32 / FP8 matmuls.
TEST(PeMatmulV5, MxModeWithPerfModesAndPlainModes) {
  std::mt19937_64 rng(5);
  auto& core = *make_core(isa::Arch::Maverick);
  std::vector<isa::RawInst> prog;
  std::vector<Out> outs;
  const Tensor w = random_tensor(rng, Dtype::Fp8Exp4, true, 128, 40);  // 8 x 5
  const Tensor x = random_tensor(rng, Dtype::Fp4Exp2, true, 128, 96);  // 12 x 8
  Place pw{0, 0x0000, 0x6000};
  pw.n0 = 8, pw.n1 = 5, pw.sd = 10, pw.ss = 9;
  Place px{0, 0x1000, 0x6200};
  px.n0 = 12, px.n1 = 8, px.sd = 12, px.ss = 16;
  place(core, w, pw);
  place(core, x, px);
  for (std::uint8_t perf = 0; perf <= 6; ++perf) {
    const std::uint32_t dst = isa::psum_addr(0, 0x200 * perf);
    prog.push_back(lw_v5(w, pw, perf));
    prog.push_back(mm_v5(x, px, dst, perf % 2 == 1, perf));
    outs.push_back(expect(w, x, dst, false, {}));
  }
  // Accumulating perf modes add onto zero-filled PSUM: the old value is +0.
  const std::vector<float> zeros(40 * 96, 0.0f);
  for (std::uint8_t perf = 1; perf <= 6; perf += 2) {
    outs[perf] = expect(w, x, outs[perf].dst, true, zeros);
    for (unsigned m = 0; m < 40; ++m)
      core.load_memory(outs[perf].dst + (m << isa::kPartitionShift), zeros.data(), 4 * 96);
  }
  // Plain mode: K = 64 partitions, one contraction value each.
  std::uint32_t off = 0x8000;
  for (Dtype d : {Dtype::Bf16, Dtype::Fp16, Dtype::Fp32, Dtype::Fp8Exp4, Dtype::Fp8Exp5}) {
    const Tensor pw2 = random_tensor(rng, d, false, 64, 20);
    const Tensor px2 = random_tensor(rng, d, false, 64, 70);
    const Place a{16, off, 0}, b{16, off + 0x200, 0};
    place(core, pw2, a);
    place(core, px2, b);
    const std::uint32_t dst = isa::psum_addr(100, 0x1000 + (off - 0x8000));
    prog.push_back(lw_v5(pw2, a));
    prog.push_back(mm_v5(px2, b, dst, false));
    outs.push_back(expect(pw2, px2, dst, false, {}));
    off += 0x400;
  }
  run_ok(core, prog);
  for (std::size_t i = 0; i < outs.size(); ++i) check(core, outs[i], "case " + std::to_string(i));
}

// ---- faults, each by its message ------------------------------------------------

namespace {
struct FaultFixture {
  std::mt19937_64 rng{9};
  Tensor w, x;
  Place pw{0, 0x0000, 0x4000}, px{0, 0x1000, 0x4100};
  platform::TpbCore* core;
  explicit FaultFixture(isa::Arch arch = isa::Arch::Mariana) : core(make_core(arch)) {
    w = random_tensor(rng, Dtype::Fp8Exp4, true, 32, 16);
    x = random_tensor(rng, Dtype::Fp8Exp4, true, 32, 16);
    place(*core, w, pw);
    place(*core, x, px);
  }
};
}  // namespace

TEST(PeMatmulFaults, MatmulWithoutWeights) {
  FaultFixture f;
  const std::string m = run_fault(*f.core, {mm_v4(f.x, f.px, isa::psum_addr(0, 0), false)});
  EXPECT_NE(m.find("matmul_mx: no stationary weights loaded (run ldweights_mx first)"),
            std::string::npos)
      << m;
}

TEST(PeMatmulFaults, RowsDifferFromTheLoad) {
  FaultFixture f;
  Tensor x64 = random_tensor(f.rng, Dtype::Fp8Exp4, true, 64, 16);
  place(*f.core, x64, f.px);
  const std::string m =
      run_fault(*f.core, {lw_v4(f.w, f.pw), mm_v4(x64, f.px, isa::psum_addr(0, 0), false)});
  EXPECT_NE(m.find("num_active_rows 64 differs from the stationary tensor's 32 rows"),
            std::string::npos)
      << m;
}

TEST(PeMatmulFaults, DstCountDiffersFromN) {
  FaultFixture f;
  isa::RawInst mm = mm_v4(f.x, f.px, isa::psum_addr(0, 0), false);
  auto i = isa::decode_as<isa::SMX1D3Mm>(mm);
  isa::Tensor3D t;
  std::memcpy(&t, &i.dst_mem_pattern, sizeof t);
  t.num_elem[0] = 15;
  std::memcpy(&i.dst_mem_pattern, &t, sizeof t);
  const std::string m = run_fault(*f.core, {lw_v4(f.w, f.pw), isa::encode(i)});
  EXPECT_NE(m.find("dst pattern holds 15 FP32 elements per partition, the moving tensor has 16"),
            std::string::npos)
      << m;
}

TEST(PeMatmulFaults, MovingTensorPastOnePsumBank) {
  FaultFixture f;
  Tensor x = random_tensor(f.rng, Dtype::Fp8Exp4, true, 32, 600);
  const Place px{0, 0x10000, 0x20000};
  place(*f.core, x, px);
  const std::string m =
      run_fault(*f.core, {lw_v4(f.w, f.pw), mm_v4(x, px, isa::psum_addr(0, 0), false)});
  EXPECT_NE(m.find("the moving tensor has 600 columns; 1..512 fit"), std::string::npos) << m;
}

TEST(PeMatmulFaults, MovingDtypeIsNotMx) {
  FaultFixture f;
  Tensor x = f.x;
  x.dtype = static_cast<std::uint8_t>(Dtype::Bf16);  // passes is_valid_dtype_inc_fp4
  const std::string m =
      run_fault(*f.core, {lw_v4(f.w, f.pw), mm_v4(x, f.px, isa::psum_addr(0, 0), false)});
  EXPECT_NE(m.find("matmul_mx: src in_dtype 0x5 is not an MX element type"), std::string::npos)
      << m;
}

TEST(PeMatmulFaults, LoadColumnsDifferFromNumActiveCols) {
  FaultFixture f;
  isa::RawInst lw = lw_v4(f.w, f.pw);
  auto i = isa::decode_as<isa::SMX1Lw>(lw);
  i.num_active_cols = 20;
  const std::string m = run_fault(*f.core, {isa::encode(i)});
  EXPECT_NE(m.find("ldweights_mx: the src operand holds 16 columns per partition, "
                   "num_active_cols is 20"),
            std::string::npos)
      << m;
}

TEST(PeMatmulFaults, DstPartitionsPast127) {
  FaultFixture f;
  const std::string m =
      run_fault(*f.core, {lw_v4(f.w, f.pw), mm_v4(f.x, f.px, isa::psum_addr(120, 0), false)});
  EXPECT_NE(m.find("dst start partition 120 + 16 stationary columns exceeds 128"),
            std::string::npos)
      << m;
}

TEST(PeMatmulFaults, RegisterDataAddressOutsideTheScaleQuadrant) {
  FaultFixture f;
  isa::RawInst lw = lw_v4(f.w, f.pw);
  auto i = isa::decode_as<isa::SMX1Lw>(lw);
  isa::MxTensor1D t;
  std::memcpy(&t, &i.src_mem_pattern, sizeof t);
  t.start_addr.raw = 0x80000004;  // ADDR_REG r4
  std::memcpy(&i.src_mem_pattern, &t, sizeof t);
  f.core->set_reg(isa::Queue::Pe, 4, isa::sbuf_addr(32, 0));
  const std::string m = run_fault(*f.core, {isa::encode(i)});
  EXPECT_NE(m.find("valid_mx_sbuf_quadrant failed at run time"), std::string::npos) << m;
}

TEST(PeMatmulFaults, RegisterDstNotInPsum) {
  FaultFixture f;
  isa::RawInst mm = mm_v4(f.x, f.px, isa::psum_addr(0, 0), false);
  auto i = isa::decode_as<isa::SMX1D3Mm>(mm);
  isa::Tensor3D t;
  std::memcpy(&t, &i.dst_mem_pattern, sizeof t);
  t.start_addr.raw = 0x80000002;  // ADDR_REG r2 -> SBUF
  std::memcpy(&i.dst_mem_pattern, &t, sizeof t);
  f.core->set_reg(isa::Queue::Pe, 2, isa::sbuf_addr(0, 0x8000));
  const std::string m = run_fault(*f.core, {lw_v4(f.w, f.pw), isa::encode(i)});
  EXPECT_NE(m.find("matmul_mx: dst address 0x0008000 is not in PSUM"), std::string::npos) << m;
}

TEST(PeMatmulFaults, V5ModeMismatch) {
  FaultFixture f(isa::Arch::Maverick);
  Place px = f.px;
  px.n0 = 16;
  const Tensor plain = random_tensor(f.rng, Dtype::Bf16, false, 32, 16);
  const Place pp{0, 0x2000, 0};
  place(*f.core, plain, pp);
  const std::string m =
      run_fault(*f.core, {lw_v5(plain, pp), mm_v5(f.x, px, isa::psum_addr(0, 0), false)});
  EXPECT_NE(m.find("matmul: the moving tensor is in MX mode but the stationary weights were "
                   "loaded in plain mode"),
            std::string::npos)
      << m;
}

TEST(PeMatmulFaults, V5MatmulWithoutWeights) {
  FaultFixture f(isa::Arch::Maverick);
  Place px = f.px;
  px.n0 = 16;
  const std::string m = run_fault(*f.core, {mm_v5(f.x, px, isa::psum_addr(0, 0), false)});
  EXPECT_NE(m.find("matmul: no stationary weights loaded (run ldweights first)"), std::string::npos)
      << m;
}

// MX_PERF_MODE outside MX mode is rejected by the existing predicate.
TEST(PeMatmulFaults, PerfModeInPlainModeIsInvalid) {
  FaultFixture f(isa::Arch::Maverick);
  const Tensor plain = random_tensor(f.rng, Dtype::Bf16, false, 32, 16);
  const Place pp{0, 0x2000, 0};
  const std::string m = run_fault(*f.core, {lw_v5(plain, pp, 4)});
  EXPECT_NE(m.find("mx_perf_mode_only_in_mx_mode"), std::string::npos) << m;
}

// ---- timing and stats --------------------------------------------------------------

namespace {
struct Timed {
  std::vector<std::uint64_t> ps;          // per retired PE instruction: end - start
  std::vector<std::uint64_t> start, end;  // its issue and completion
  std::vector<std::uint64_t> loop_trips;  // its streaming loop bundle's trips
  trace::RunStats stats;
};
Timed run_timed(isa::Arch arch, const std::vector<std::pair<Tensor, Place>>& ops,
                const std::vector<isa::RawInst>& prog) {
  auto& core = *make_core(arch);
  for (const auto& [t, p] : ops) place(core, t, p);
  Timed out;
  core.set_retire_sink([&](const sc::RetireRecord& r) {
    if (r.engine == isa::Queue::Pe) {
      out.ps.push_back(r.end_ps - r.start_ps);
      out.start.push_back(r.start_ps);
      out.end.push_back(r.end_ps);
      std::uint64_t loop = 0;
      for (std::size_t b = 0; b < r.num_bundles; ++b)
        if (r.bundles[b].bundle->stream) loop = r.bundles[b].trips;
      out.loop_trips.push_back(loop);
    }
  });
  run_ok(core, prog);
  out.stats = core.stats();
  return out;
}
double pe_cycles(std::uint64_t ps) { return double(ps) * 2400.0 / 1e6; }  // 2.4 GHz PE
}  // namespace

// MultiplyMoving: a latency of about max(64, N) + 2 x 128 + 64 PE cycles
// whatever K (TIMING.md's cost model, band x0.7..1.5); a LdweightsMX after a
// matmul loads in the background of it (SPEC §8): it starts before that
// matmul completes, and the next matmul an initiation interval after it.
void matmul_cost_follows_n(unsigned rows) {
  std::mt19937_64 rng(11);
  {
    const Tensor w = random_tensor(rng, Dtype::Fp8Exp4, true, rows, 128);
    const Tensor x = random_tensor(rng, Dtype::Fp8Exp4, true, rows, 512);
    const Tensor xs = random_tensor(rng, Dtype::Fp8Exp4, true, rows, 16);
    const Place pw{0, 0x0, 0x20000}, px{0, 0x1000, 0x21000}, ps{0, 0x3000, 0x22000};
    const Timed t = run_timed(isa::Arch::Mariana, {{w, pw}, {x, px}, {xs, ps}},
                              {lw_v4(w, pw), mm_v4(x, px, isa::psum_addr(0, 0), false),
                               lw_v4(w, pw), mm_v4(xs, ps, isa::psum_addr(0, 0x1000), false)});
    ASSERT_EQ(t.ps.size(), 4u);
    // The PE's own part: max(N, 64) MAC-loop trips, M/4 load trips.
    EXPECT_EQ(t.loop_trips, (std::vector<std::uint64_t>{32, 512, 32, 64})) << rows;
    const double mm512 = pe_cycles(t.ps[1]), mm16 = pe_cycles(t.ps[3]);
    EXPECT_GE(mm512, 0.7 * (512 + 2 * 128 + 64)) << rows;
    EXPECT_LE(mm512, 1.5 * (512 + 2 * 128 + 64)) << rows;
    // N = 16: max(64, 16) + 320 plus the memory model's stream fill (one
    // PSUM access latency, the timing profile's); at most 2x here.
    EXPECT_GE(mm16, 0.7 * (64 + 2 * 128 + 64)) << rows;
    EXPECT_LE(mm16, 2.0 * (64 + 2 * 128 + 64)) << rows;
    // The reload runs in the background of the 512-column matmul, and the
    // second matmul starts about one initiation interval (max(N, 64) = 512)
    // after the first.
    EXPECT_LT(t.start[2], t.end[1]) << rows;
    EXPECT_NEAR(pe_cycles(t.start[3] - t.start[1]), 512.0, 512 * 0.15) << rows;
    // MACs: M x N x 4K per matmul.
    const auto& pe = t.stats.engines[static_cast<unsigned>(isa::Queue::Pe)];
    EXPECT_EQ(pe.counters.at("macs"), 128ull * (512 + 16) * 4 * rows);
  }
}
TEST(PeMatmulTiming, MatmulCostFollowsNNotK32Rows) { matmul_cost_follows_n(32); }
TEST(PeMatmulTiming, MatmulCostFollowsNNotK128Rows) { matmul_cost_follows_n(128); }

// OCT_ROW pumping halves the streaming part; values do not change (above).
TEST(PeMatmulTiming, OctRowPumpingIsFaster) {
  std::mt19937_64 rng(13);
  const Tensor w = random_tensor(rng, Dtype::Fp8Exp4, true, 128, 64);
  const Tensor x = random_tensor(rng, Dtype::Fp8Exp4, true, 128, 512);
  Place pw{0, 0x0, 0x20000}, px{0, 0x1000, 0x21000};
  pw.n0 = 64, px.n0 = 128, px.n1 = 4, px.sd = 128, px.ss = 128;
  const Timed t = run_timed(isa::Arch::Maverick, {{w, pw}, {x, px}},
                            {lw_v5(w, pw), mm_v5(x, px, isa::psum_addr(0, 0), false, 0),
                             mm_v5(x, px, isa::psum_addr(0, 0), false, 4)});
  ASSERT_EQ(t.ps.size(), 3u);
  EXPECT_LT(pe_cycles(t.ps[2]), 0.75 * pe_cycles(t.ps[1]));
}

// Seed 000 §2: a TensorDequantize with an MXTENSOR_V2 operand is valid on
// MARIANA, and its execution faults "not modelled" naming the member.
TEST(DequantUnionRun, MxTensorV2OperandFaultsNotModelled) {
  auto& core = *make_core(isa::Arch::Mariana);
  isa::S3D3TensDequant i{};
  i.header = {0x7b, 16, 0, 0};
  i.in_dtype = i.out_dtype = 0x09;
  i.num_active_channels = 32;
  i.dequant_fmt = 1;
  Place pl{0, 0x100, 0x2000};
  pl.n0 = 4;
  i.src_mem_pattern = m3d_mx(pl);
  i.dst_mem_pattern = m3d_t(isa::sbuf_addr(0, 0x4000), 8);
  ASSERT_TRUE(isa::check_instruction(isa::encode(i), isa::Arch::Mariana).valid());
  core.load_queue(isa::Queue::Pool, {isa::encode(i)});
  const platform::CoreRunResult r = core.run();
  EXPECT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("MXTENSOR_V2) is not modelled"), std::string::npos) << r.message;
}

// ---- host threads (SPEC §13 --threads) ----------------------------------------------

namespace {

// Three engines at once on enough data to split (firmware_stubs/common/
// host_threads.h): POOL dequants (DMI runs; a strided, gathered MX source),
// a DVE QuantizeMX of 128 channels, PE LdweightsMX + two MatmulMX (the second
// accumulating), v4.
constexpr const char* kThreadsProgram = R"(.arch mariana
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=128 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[2048, 1, 1]) \
    dst=t3d(sbuf(0, 0x8000), step=[1, 0, 0], num=[4096, 1, 1])
tensor_dequantize fmt=int4_to_e5m2 group=8 channels=96 \
    src=t3d(sbuf(0, 0x10000), step=[2, 0, 0], num=[1025, 1, 1]) \
    dst=t3d(sbuf(0, 0x14000), step=[1, 0, 0], num=[1640, 1, 1])
.engine dve
quantize_mx channels=128 in_dtype=fp32 out_dtype=fp8_e5m2 \
    src=t3d(sbuf(0, 0x18000), step=[1, 0, 0], num=[2048, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x1A000), scale=sbuf(0, 0x1A800), num=512)
.engine pe
ldweights_mx in_dtype=fp8_e4m3 rows=128 cols=128 \
    src=mx1d(data=sbuf(0, 0x1C000), scale=sbuf(0, 0x1C800), num=128)
matmul_mx in_dtype=fp8_e5m2 rows=128 \
    src=mx1d(data=sbuf(0, 0x1D000), scale=sbuf(0, 0x1D800), num=512) \
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[512, 1, 1])
matmul_mx in_dtype=fp8_e5m2 rows=128 acc=1 \
    src=mx1d(data=sbuf(0, 0x1D000), scale=sbuf(0, 0x1D800), num=512) \
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[512, 1, 1])
)";

struct ThreadsRun {
  int status = -1;  // RunStatus, -1: the child failed
  std::uint64_t splits = 0, instructions = 0, simulated_ps = 0;
};

std::string slurp(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "<missing " + path + ">";
  std::string s;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  std::fclose(f);
  return s;
}

// The whole run with `threads` host threads in a forked child (one
// elaboration per process), its outputs written under `dir`: the VCD, the
// Perfetto trace, the stats JSON (wall time zeroed), the retire lines, and the
// SBUF and PSUM bytes.
ThreadsRun run_with_threads(unsigned threads, const std::string& dir) {
  int fd[2];
  if (::pipe(fd) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fd[0]);
    ThreadsRun out;
    try {
      fw::set_host_threads(threads);
      platform::TpbCore core("tpb", platform::default_core_config(isa::Arch::Mariana));
      core.load_program(isa::parse_program(kThreadsProgram, "threads.tpb"));
      std::mt19937_64 rng(77);
      std::vector<std::uint8_t> bytes(0x20000);
      for (unsigned p = 0; p < isa::kNumPartitions; ++p) {
        for (auto& b : bytes) b = std::uint8_t(rng());
        core.load_memory(isa::sbuf_addr(p, 0), bytes.data(), bytes.size());
      }
      std::string retire;
      platform::CoreRunSetup setup;
      setup.trace.signals = setup.trace.slices = true;
      setup.retire_sink = [&](const sc::RetireRecord& r) {
        retire += platform::TpbCore::format_retire(r) + "\n";
      };
      const std::uint64_t s0 = fw::split_jobs();
      const platform::CoreRunResult r = core.run(setup);
      out.splits = fw::split_jobs() - s0;
      out.status = static_cast<int>(r.status);
      out.instructions = r.instructions;
      out.simulated_ps = r.simulated_ps;
      trace::write_vcd(core.recorder(), dir + "/run.vcd");
      trace::write_perfetto(core.recorder(), dir + "/run.json");
      trace::RunStats st = core.stats();
      st.wall_seconds = 0;  // host time: the one thing allowed to differ
      trace::write_stats(st, dir + "/stats.json");
      std::FILE* f = std::fopen((dir + "/retire.txt").c_str(), "wb");
      std::fwrite(retire.data(), 1, retire.size(), f);
      std::fclose(f);
      f = std::fopen((dir + "/memory.bin").c_str(), "wb");
      for (unsigned p = 0; p < isa::kNumPartitions; ++p) {
        const std::vector<std::uint8_t> s = core.dump_memory(isa::sbuf_addr(p, 0), 0x20000);
        const std::vector<std::uint8_t> q = core.dump_memory(isa::psum_addr(p, 0), 0x800);
        std::fwrite(s.data(), 1, s.size(), f);
        std::fwrite(q.data(), 1, q.size(), f);
      }
      std::fclose(f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "threads child: %s\n", e.what());
      out.status = -1;
    }
    const ssize_t n = ::write(fd[1], &out, sizeof out);
    ::_exit(n == sizeof out ? 0 : 1);
  }
  ::close(fd[1]);
  ThreadsRun out;
  if (pid < 0 || ::read(fd[0], &out, sizeof out) != static_cast<ssize_t>(sizeof out)) out = {};
  ::close(fd[0]);
  int ws = 0;
  if (pid > 0) ::waitpid(pid, &ws, 0);
  return out;
}

}  // namespace

// Every output file, retire record, stat and trace byte for byte the same
// with 1, 2 and 3 host threads, and the work really split with 2 and 3.
TEST(PeMatmulThreads, EveryOutputIsTheSameFor1To3Threads) {
  const std::string root = testutil::make_scratch_dir("threads");
  const char* files[] = {"run.vcd", "run.json", "stats.json", "retire.txt", "memory.bin"};
  std::vector<std::string> first;
  for (unsigned n : {1u, 2u, 3u}) {
    const std::string dir = root + "/t" + std::to_string(n);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    const ThreadsRun r = run_with_threads(n, dir);
    ASSERT_EQ(r.status, static_cast<int>(platform::RunStatus::Ok)) << n << " threads";
    EXPECT_EQ(r.instructions, 6u);
    if (n == 1)
      EXPECT_EQ(r.splits, 0u);
    else
      EXPECT_GE(r.splits, 4u) << n << " threads: dequant, QuantizeMX and matmul should split";
    for (std::size_t i = 0; i < std::size(files); ++i) {
      const std::string text = slurp(dir + "/" + files[i]);
      ASSERT_GT(text.size(), 100u) << files[i];
      if (n == 1)
        first.push_back(text);
      else
        EXPECT_TRUE(text == first[i]) << files[i] << " differs with " << n << " threads";
    }
  }
  for (unsigned n : {1u, 2u, 3u}) {
    const std::string dir = root + "/t" + std::to_string(n);
    for (const char* f : files) std::remove((dir + "/" + f).c_str());
    ::rmdir(dir.c_str());
  }
  ::rmdir(root.c_str());
}

#include "firmware_stubs/pe/matmul.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "firmware_stubs/common/host_threads.h"
#include "firmware_stubs/common/resolve_pattern.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/numerics/mx_matmul.h"

namespace tpb::fw {

namespace {

using isa::Addr4;

// One operand, resolved: where every column's data (and MX scale) lives.
struct Operand {
  bool mx = false;
  num::Format fmt = num::Format::E4M3;
  std::uint8_t dtype = 0;
  unsigned elem_bytes = 0;  // x4 word (MX) or plain element
  std::uint32_t data = 0;   // 27-bit address of column 0 in the start partition
  std::uint32_t scale = 0;  // MX: scale byte 0 in the scale base partition
  unsigned scale_pidx = 0;
  unsigned rows = 0;                    // active partitions
  unsigned pair = 1;                    // plain FP8 double row: 2 column blocks per partition
  std::vector<std::int64_t> data_off;   // per element: bytes past data's offset
  std::vector<std::int64_t> scale_off;  // per column: bytes past scale's offset (MX)
  std::size_t cols() const { return data_off.size() / pair; }
  unsigned kdim() const { return mx ? 4 * rows : rows * pair; }
};

// Per-instruction state (KernelContext::scratch()).
struct PeInst {
  const char* name = "";  // mnemonic, for messages
  bool v5 = false;
  Operand src;
  bool accumulate = false;
  ResolvedPattern dst;
  std::uint64_t trips = 0;  // load / MAC loop trips
  bool transpose = false;   // plain matmul: is_transpose
  std::uint8_t out_dtype = 0;
};

PeInst& inst_state(KernelContext& ctx) {
  auto* st = ctx.scratch<PeInst>();
  if (!st) throw KernelFault("PE body entered without its decoded fields");
  return *st;
}

// The byte address of offset `off` past `addr`'s offset, in `partition` of
// `addr`'s region.
std::uint64_t at(std::uint32_t addr, unsigned partition, std::int64_t off) {
  const std::uint32_t region = addr & ~(isa::kRegionSize - 1);
  return std::uint64_t{region | (partition << isa::kPartitionShift)} +
         static_cast<std::uint64_t>(std::int64_t{isa::offset_of(addr)} + off);
}

num::Format mx_format(std::uint8_t dtype, const char* name, const char* which) {
  const auto f = num::mx_element_format(dtype);
  if (!f)
    throw KernelFault(fmt::format(
        "{}: {} in_dtype 0x{:x} is not an MX element type (fp8_e4m3, fp8_e5m2, fp8_e3m4, "
        "fp8_e2m5, fp4_e2m1, int4)",
        name, which, dtype));
  return *f;
}

// An MX operand of `dtype`: the element format and x4 word size.
Operand mx_operand(std::uint8_t dtype, const char* name) {
  Operand op;
  op.mx = true;
  op.dtype = dtype;
  op.fmt = mx_format(dtype, name, "src");
  op.elem_bytes = num::mx_word_bytes(op.fmt);
  return op;
}

// v4 MXTENSOR1D (seed 003 §3.2): column j at j x step x4 words, its scale
// byte at j; registers as the DVE's QuantizeMX destination (resolve_mx1d).
Operand resolve_mx1d_operand(const isa::MxTensor1D& t, std::uint8_t dtype, const KernelContext& ctx,
                             const char* name) {
  Operand op = mx_operand(dtype, name);
  const ResolvedMx1d r = resolve_mx1d(t, ctx, std::string(name) + ": src");
  if (r.num > 0xFFFF)  // only a shape register can hold more than num_elem's u16
    throw KernelFault(fmt::format("{}: src shape r{} = {} columns is too large", name,
                                  t.start_addr.reg_index() + 1, r.num));
  op.data = r.data;
  op.scale = r.scale;
  op.scale_pidx = r.scale_pidx;
  for (std::uint32_t j = 0; j < r.num; ++j) {
    op.data_off.push_back(std::int64_t{j} * r.step * op.elem_bytes);
    op.scale_off.push_back(j);
  }
  return op;
}

// v5 MXTENSOR_V2 (convention): element (i0, i1) is column i0 + i1 x num[0],
// at (i0 + i1 x step_elem_data_1) x4 words, its scale byte at
// i0 + i1 x step_elem_scale_1; the scale rows as SPEC §4 with scale_pidx 0.
Operand resolve_mxv2(const isa::MxTensorV2& m, std::uint8_t dtype, const KernelContext& ctx,
                     const char* name) {
  Operand op = mx_operand(dtype, name);
  if (m.scale_dtype != static_cast<std::uint8_t>(isa::Dtype::Sfp8E8))
    throw KernelFault(
        fmt::format("{}: MXTENSOR_V2 scale_dtype 0x{:x} is not e8m0", name, m.scale_dtype));
  op.data = m.data_addr.address();
  op.scale = resolve_scale_addr4(m.scale_addr, ctx, std::string(name) + ": src MXTENSOR_V2");
  for (unsigned i1 = 0; i1 < m.num_elem[1]; ++i1)
    for (unsigned i0 = 0; i0 < m.num_elem[0]; ++i0) {
      op.data_off.push_back((std::int64_t{i0} + std::int64_t{i1} * m.step_elem_data_1) *
                            op.elem_bytes);
      op.scale_off.push_back(std::int64_t{i0} + std::int64_t{i1} * m.step_elem_scale_1);
    }
  return op;
}

// v5 plain TENSOR3D: column j = element j in pattern order.
Operand resolve_plain(const isa::Tensor3D& t, std::uint8_t dtype, const KernelContext& ctx,
                      const char* name) {
  Operand op;
  const auto f = num::plain_element_format(dtype);
  if (!f)
    throw KernelFault(fmt::format(
        "{}: valid_plain_mm_dtype: in_dtype 0x{:x} is not bf16, fp16, fp32 or fp8", name, dtype));
  op.fmt = *f;
  op.dtype = dtype;
  op.elem_bytes = num::plain_elem_bytes(op.fmt);
  const ResolvedPattern p = resolve_pattern(t, ctx, "src");
  op.data = p.start;
  if (p.count() > 0xFFFF)
    throw KernelFault(fmt::format("{}: src pattern of {} elements is too large", name, p.count()));
  for (std::uint32_t i2 = 0; i2 < p.num[2]; ++i2)
    for (std::uint32_t i1 = 0; i1 < p.num[1]; ++i1)
      for (std::uint32_t i0 = 0; i0 < p.num[0]; ++i0)
        op.data_off.push_back((std::int64_t{i0} * p.step[0] + std::int64_t{i1} * p.step[1] +
                               std::int64_t{i2} * p.step[2]) *
                              op.elem_bytes);
  return op;
}

// What the static contract could not see (register addresses and shapes),
// again at run time.
void check_operand(const Operand& op, const char* name) {
  if (isa::region_of(op.data) != isa::Region::Sbuf)
    throw KernelFault(fmt::format("{}: src data address 0x{:07x} is not in SBUF", name, op.data));
  const unsigned p = isa::partition_of(op.data);
  if (p + op.rows > isa::kNumPartitions)
    throw KernelFault(fmt::format("{}: src start partition {} + {} active rows exceeds {}", name, p,
                                  op.rows, isa::kNumPartitions));
  const auto inside = [](std::uint32_t addr, std::int64_t off, unsigned bytes) {
    const std::int64_t o = std::int64_t{isa::offset_of(addr)} + off;
    return o >= 0 && o + bytes <= std::int64_t{isa::kPartitionSlot};
  };
  for (std::size_t j = 0; j < op.cols(); ++j)
    if (!inside(op.data, op.data_off[j], op.elem_bytes))
      throw KernelFault(fmt::format(
          "address error: {} src column {} at byte offset {} past 0x{:07x} lies outside the "
          "partition",
          name, j, op.data_off[j], op.data));
  if (!op.mx) return;
  if (isa::region_of(op.scale) != isa::Region::Sbuf)
    throw KernelFault(fmt::format("{}: src scale address 0x{:07x} is not in SBUF", name, op.scale));
  if (p % isa::kPartitionsPerQuadrant != 0 || isa::partition_of(op.scale) != p)
    throw KernelFault(fmt::format(
        "{}: valid_mx_sbuf_quadrant failed at run time: data address 0x{:07x} (partition {}) and "
        "scale address 0x{:07x} (partition {}) must both be partition 0, 32, 64 or 96",
        name, op.data, p, op.scale, isa::partition_of(op.scale)));
  if (op.scale_pidx > isa::kPartitionsPerQuadrant - 4)
    throw KernelFault(fmt::format("{}: scale_pidx {} is past 28", name, op.scale_pidx));
  for (std::size_t j = 0; j < op.cols(); ++j)
    if (!inside(op.scale, op.scale_off[j], 1))
      throw KernelFault(fmt::format(
          "address error: {} scale byte of column {} at offset {} past 0x{:07x} lies outside the "
          "partition",
          name, j, op.scale_off[j], op.scale));
}

// Reads the columns of one partition (`unit` bytes each) into dst, one access
// per run of adjacent columns.
void read_columns(KernelContext& ctx, std::uint32_t addr, unsigned partition,
                  const std::vector<std::int64_t>& offs, unsigned unit, std::uint8_t* dst) {
  const std::size_t n = offs.size();
  for (std::size_t j = 0; j < n;) {
    std::size_t e = j + 1;
    while (e < n && offs[e] == offs[e - 1] + unit) ++e;
    ctx.read(at(addr, partition, offs[j]), dst + j * unit, (e - j) * unit);
    j = e;
  }
}

// An operand's bytes as memory holds them: data [rows][cols x elem_bytes],
// MX scales [block row][cols].
struct RawOperand {
  std::vector<std::uint8_t> data, scales;
};

// Every timed read of an operand, in the order the kernel issues them (on the
// engine's thread): the MX scales, block row b (partitions 8b..8b+7 from the
// start) of column j at partition scale base + 32(b/4) + scale_pidx + b%4,
// byte scale_off[j] (SPEC §4); then the data, partition by partition.
void read_raw(KernelContext& ctx, const Operand& op, RawOperand& raw) {
  const std::size_t C = op.cols();
  const unsigned p0 = isa::partition_of(op.data);
  const std::size_t E = op.data_off.size();  // elements per partition (C x pair)
  raw.data.resize(std::size_t{op.rows} * E * op.elem_bytes);
  raw.scales.clear();
  if (op.mx) {
    const unsigned block_rows = op.rows / 8;
    raw.scales.resize(std::size_t{block_rows} * C);
    const unsigned base = isa::partition_of(op.scale);
    for (unsigned b = 0; b < block_rows; ++b) {
      const unsigned sp = base + 32 * (b / 4) + op.scale_pidx + b % 4;
      if (sp >= isa::kNumPartitions)
        throw KernelFault(fmt::format(
            "address error: scales of block row {} go to partition {}, past partition 127", b, sp));
      read_columns(ctx, op.scale, sp, op.scale_off, 1, raw.scales.data() + std::size_t{b} * C);
    }
  }
  for (unsigned p = 0; p < op.rows; ++p)
    read_columns(ctx, op.data, p0 + p, op.data_off, op.elem_bytes,
                 raw.data.data() + std::size_t{p} * E * op.elem_bytes);
}

// Pure arithmetic from here on (it may run on host threads, host_threads.h):
// below these sizes a split costs more than it saves (docs/PERFORMANCE.md).
constexpr std::size_t kMinDecodePerChunk = 16384;  // values decoded
constexpr std::size_t kMinMacsPerChunk = 1u << 20;

// The operand as FP32 values in the packed layout L ([kdim][cols], k = 4p +
// lane (MX) or p (plain)), partitions split over the host threads.
void decode_packed(const Operand& op, const RawOperand& raw, const num::PackedLayout& L,
                   num::PackedFloats& out) {
  const std::size_t C = op.cols();
  out.resize(L.size());
  if (const std::size_t used = C % L.panel) {  // the last panel's padding columns are 0
    float* last = out.data() + C / L.panel * L.panel * L.kdim;
    for (std::size_t k = 0; k < L.kdim; ++k)
      std::fill(last + k * L.panel + used, last + (k + 1) * L.panel, 0.0f);
  }
  const std::size_t per_row = C * (op.mx ? 4 : 1);
  const std::size_t min_rows =
      (kMinDecodePerChunk + per_row - 1) / std::max<std::size_t>(1, per_row);
  parallel_for(op.rows, min_rows, [&](std::size_t b, std::size_t e) {
    for (std::size_t p = b; p < e; ++p) {
      const std::uint8_t* d = raw.data.data() + p * C * op.pair * op.elem_bytes;
      if (op.mx)
        num::decode_mx_partition(op.fmt, d, raw.scales.data() + p / 8 * C, unsigned(p), L,
                                 out.data());
      else  // double row: column block j of partition p is contraction row 2p + j
        for (unsigned j = 0; j < op.pair; ++j)
          num::decode_plain_partition(op.fmt, d + j * C * op.elem_bytes, unsigned(p * op.pair + j),
                                      L, out.data());
    }
  });
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// nc_matmul's perf_mode (SPEC §18): double row takes two column blocks per
// partition (1 otherwise); FP8 plain operands only (valid_matmul_perf_mode).
unsigned double_row(std::uint8_t perf, const Operand& op, const char* name) {
  if (perf == 0) return 1;
  const bool fp8 = op.fmt == num::Format::E4M3 || op.fmt == num::Format::E5M2 ||
                   op.fmt == num::Format::E4M3Legacy;
  if (perf != static_cast<std::uint8_t>(isa::MatmulPerf::DoubleRow) || op.mx || !fp8)
    throw KernelFault(fmt::format(
        "{}: valid_matmul_perf_mode failed at run time: perf_mode {} with a {} {} operand", name,
        perf, op.mx ? "MX" : "plain", num::info(op.fmt).name));
  return 2;
}

// nc_matmul's DTYPE rules for two plain operands (SPEC §18, nki.isa): FP32
// only with FP32; the legacy and the OCP FP8 E4M3 not together.
void check_plain_pair(std::uint8_t moving, std::uint8_t stationary, const char* name) {
  const auto fp32 = [](std::uint8_t d) { return d == static_cast<std::uint8_t>(isa::Dtype::Fp32); };
  const auto legacy = [](std::uint8_t d) {
    return d == static_cast<std::uint8_t>(isa::Dtype::Fp8Exp4Legacy);
  };
  const auto ocp = [](std::uint8_t d) {
    return d == static_cast<std::uint8_t>(isa::Dtype::Fp8Exp4);
  };
  if (fp32(moving) != fp32(stationary) || (legacy(moving) && ocp(stationary)) ||
      (ocp(moving) && legacy(stationary)))
    throw KernelFault(fmt::format(
        "{}: valid_plain_mm_dtype_pair failed at run time: moving {} with stationary {} (FP32 "
        "only with FP32; the legacy and the OCP fp8_e4m3 not together)",
        name, isa::dtype_name(moving), isa::dtype_name(stationary)));
}

// ---- LdweightsMX (0x09) / LDWEIGHTS (0x01) ------------------------------------

std::uint32_t lw_fields(KernelContext& ctx) {
  const isa::RawInst& raw = ctx.inst();
  PeInst st;
  unsigned cols = 0;
  if (raw[0] == static_cast<std::uint8_t>(isa::Opcode::LdweightsMX)) {
    const auto i = isa::decode_as<isa::SMX1Lw>(raw);
    st.name = "ldweights_mx";
    isa::MxTensor1D t;
    std::memcpy(&t, &i.src_mem_pattern, sizeof t);
    st.src = resolve_mx1d_operand(t, i.in_dtype, ctx, st.name);
    st.src.rows = i.num_active_rows;
    cols = i.num_active_cols;
  } else {
    const auto i = isa::decode_as<isa::S3Lw>(raw);
    st.name = "ldweights";
    st.v5 = true;
    const Addr4 a = i.src_mem_pattern.t.start_addr;
    if (a.is_mxtensor_v2())
      st.src = resolve_mxv2(i.src_mem_pattern.mx, i.in_dtype, ctx, st.name);
    else
      st.src = resolve_plain(i.src_mem_pattern.t, i.in_dtype, ctx, st.name);
    st.src.rows = i.num_active_rows;
    st.src.pair = double_row(i.perf, st.src, st.name);
    cols = i.num_active_cols;
  }
  check_operand(st.src, st.name);
  if (st.src.data_off.size() != std::size_t{cols} * st.src.pair)
    throw KernelFault(
        fmt::format("{}: the src operand holds {} columns per partition, num_active_cols is {}",
                    st.name, st.src.cols(), cols));
  // LoadStationary: M/4 cycles (TIMING.md [A, D]: up to 4x faster than a
  // MultiplyMoving of the same free size); it runs in the background of
  // the running matmul on the PE's stationary unit (the sequencer's issue
  // pipeline), not by shortening it here.
  st.trips = ceil_div(cols, 4);
  ctx.set_scratch(std::move(st));
  return 0;
}

std::uint32_t lw_load(KernelContext& ctx) {
  PeInst& st = inst_state(ctx);
  RawOperand raw;
  read_raw(ctx, st.src, raw);
  num::PackedFloats w;
  const num::PackedLayout L = num::packed_w_layout(st.src.kdim(), st.src.cols());
  if (ctx.timing_only())
    w.assign(L.size(), 0.0f);  // the shape, not the values
  else
    decode_packed(st.src, raw, L, w);
  PeState& pe = ctx.engine_state().get<PeState>();
  pe.loaded = true;
  pe.mx = st.src.mx;
  pe.rows = st.src.rows;
  pe.cols = static_cast<unsigned>(st.src.cols());
  pe.kdim = st.src.kdim();
  pe.dtype = st.src.dtype;
  pe.pair = st.src.pair;
  pe.w = std::move(w);
  // The bytes too, for a transpose-mode matmul's bit-exact result (plain).
  if (st.src.mx || ctx.timing_only())
    pe.raw.clear();
  else
    pe.raw = std::move(raw.data);
  return 0;
}

// ---- MatmulMX (0x0A) / MATMUL (0x02) ------------------------------------------

// A plain matmul's moving tensor against the loaded stationary: the DTYPE
// pair, the double row of both, transpose mode's DTYPE and overwrite.
void check_plain_moving(const PeInst& st, const PeState& pe) {
  check_plain_pair(st.src.dtype, pe.dtype, st.name);
  if (st.src.pair != pe.pair)
    throw KernelFault(fmt::format(
        "{}: perf_mode double_row on {} of the two operands (the load's and the matmul's must "
        "agree)",
        st.name, "one"));
  if (st.transpose && (st.out_dtype != pe.dtype || st.accumulate))
    throw KernelFault(fmt::format(
        "{}: transpose mode writes the stationary's {} elements, overwriting: out_dtype {} and "
        "acc {} do not fit",
        st.name, isa::dtype_name(pe.dtype), isa::dtype_name(st.out_dtype), int{st.accumulate}));
}

// The matmul word's fields: the moving operand (resolved), K, dst and the
// MX row pump (4, the MX default: 4 contraction values per PE per cycle).
void decode_mm(KernelContext& ctx, PeInst& st, unsigned& rows, isa::Tensor3D& dst, unsigned& pump) {
  const isa::RawInst& raw = ctx.inst();
  pump = 4;
  if (raw[0] == static_cast<std::uint8_t>(isa::Opcode::MatmulMX)) {
    const auto i = isa::decode_as<isa::SMX1D3Mm>(raw);
    st.name = "matmul_mx";
    isa::MxTensor1D t;
    std::memcpy(&t, &i.src_mem_pattern, sizeof t);
    st.src = resolve_mx1d_operand(t, i.in_dtype, ctx, st.name);
    rows = i.num_active_rows;
    st.accumulate = i.psum_accumulate_flags & 1u;
    std::memcpy(&dst, &i.dst_mem_pattern, sizeof dst);
  } else {
    const auto i = isa::decode_as<isa::S3D3Mm>(raw);
    st.name = "matmul";
    st.v5 = true;
    if (i.src_mem_pattern.t.start_addr.is_mxtensor_v2())
      st.src = resolve_mxv2(i.src_mem_pattern.mx, i.in_dtype, ctx, st.name);
    else
      st.src = resolve_plain(i.src_mem_pattern.t, i.in_dtype, ctx, st.name);
    rows = i.num_active_rows;
    st.accumulate = i.psum_accumulate_flags & 1u;
    st.transpose = i.transpose == 1;
    st.out_dtype = i.out_dtype;
    st.src.pair = double_row(i.perf, st.src, st.name);
    std::memcpy(&dst, &i.dst_mem_pattern, sizeof dst);
    if (i.mx_perf_mode > 6)
      throw KernelFault(fmt::format("{}: valid_mx_perf_mode: mx_perf_mode {} is not 0..6", st.name,
                                    i.mx_perf_mode));
    pump = ctx.timing().pe_mx_row_pump[i.mx_perf_mode];
  }
}

std::uint32_t mm_fields(KernelContext& ctx) {
  PeInst st;
  unsigned rows = 0, pump = 4;
  isa::Tensor3D dst;
  decode_mm(ctx, st, rows, dst, pump);
  st.src.rows = rows;
  const PeState& pe = ctx.engine_state().get<PeState>();
  const char* load_name = st.v5 ? "ldweights" : "ldweights_mx";
  if (!pe.loaded)
    throw KernelFault(
        fmt::format("{}: no stationary weights loaded (run {} first)", st.name, load_name));
  if (pe.mx != st.src.mx)
    throw KernelFault(fmt::format(
        "{}: the moving tensor is in {} mode but the stationary weights were loaded in {} mode",
        st.name, st.src.mx ? "MX" : "plain", pe.mx ? "MX" : "plain"));
  if (rows != pe.rows)
    throw KernelFault(fmt::format(
        "{}: num_active_rows {} differs from the stationary tensor's {} rows (K of the last {})",
        st.name, rows, pe.rows, load_name));
  if (!st.src.mx) check_plain_moving(st, pe);
  check_operand(st.src, st.name);
  const std::size_t n = st.src.cols();
  if (n == 0 || n > kPeMaxMovingColumns)
    throw KernelFault(
        fmt::format("{}: the moving tensor has {} columns; 1..{} fit (one PSUM bank of FP32)",
                    st.name, n, kPeMaxMovingColumns));
  if (st.transpose && n != pe.rows)
    throw KernelFault(fmt::format(
        "{}: transpose mode multiplies by a {} x {} identity: the moving tensor has {} columns",
        st.name, pe.rows, pe.rows, n));
  st.dst = resolve_pattern(dst, ctx, "dst");
  if (isa::region_of(st.dst.start) != isa::Region::Psum)
    throw KernelFault(
        fmt::format("{}: dst address 0x{:07x} is not in PSUM", st.name, st.dst.start));
  if (st.dst.count() != n)
    throw KernelFault(fmt::format(
        "{}: the dst pattern holds {} FP32 elements per partition, the moving tensor has {} "
        "columns",
        st.name, st.dst.count(), n));
  const unsigned dp = isa::partition_of(st.dst.start);
  if (dp + pe.cols > isa::kNumPartitions)
    throw KernelFault(fmt::format("{}: dst start partition {} + {} stationary columns exceeds {}",
                                  st.name, dp, pe.cols, isa::kNumPartitions));
  // MultiplyMoving back to back (SPEC §8, TIMING.md [O]; pe_moving_interval):
  // max(min(64, N_stationary), N_moving) PE cycles whatever K; MX row
  // pumping divides the moving part; plain FP32 is 4x (the whole interval).
  if (pump == 0) pump = 4;
  const std::uint64_t moving = st.src.mx ? ceil_div(std::uint64_t{4} * n, pump) : n;
  st.trips =
      pe_moving_interval(pe.cols, moving, !st.src.mx && st.src.fmt == num::Format::Fp32 ? 4 : 1);
  ctx.set_scratch(std::move(st));
  return 0;
}

void transpose_out(KernelContext& ctx, const PeInst& st, const PeState& pe);

// The matmul's buffers, kept with the engine so that a stream of matmuls
// allocates (and page-faults) nothing after the first.
struct MatmulBuffers {
  RawOperand raw;
  num::PackedFloats x;
  std::vector<float> acc;
};

std::uint32_t mm_mac(KernelContext& ctx) {
  PeInst& st = inst_state(ctx);
  const PeState& pe = ctx.engine_state().get<PeState>();
  MatmulBuffers& buf = ctx.engine_state().get<MatmulBuffers>();
  RawOperand& raw = buf.raw;
  num::PackedFloats& x = buf.x;
  std::vector<float>& acc = buf.acc;
  // The timed accesses, in order, on this thread: the moving tensor, then the
  // old PSUM values when accumulating.
  read_raw(ctx, st.src, raw);
  const std::size_t M = pe.cols, N = st.src.cols();
  const unsigned dp = isa::partition_of(st.dst.start);
  if (st.transpose) {
    transpose_out(ctx, st, pe);
    return 0;
  }
  acc.assign(M * N, 0.0f);
  if (st.accumulate)
    for (std::size_t m = 0; m < M; ++m)
      for_each_run(st.dst, 4, dp + unsigned(m), "PSUM dst",
                   [&](std::uint64_t addr, std::uint64_t k, std::uint32_t r) {
                     ctx.read(addr, acc.data() + m * N + k, std::size_t{r} * 4);
                   });
  // The arithmetic: decode, then the output tiles, split over host threads.
  if (!ctx.timing_only()) {
    decode_packed(st.src, raw, num::packed_x_layout(pe.kdim, N), x);
    const std::size_t tile_macs = num::kPanelRows * num::kPanelCols * std::max(1u, pe.kdim);
    parallel_for(num::matmul_tiles(M, N), (kMinMacsPerChunk + tile_macs - 1) / tile_macs,
                 [&](std::size_t b, std::size_t e) {
                   num::matmul_packed(pe.w.data(), x.data(), pe.kdim, M, N, acc.data(),
                                      st.accumulate, b, e);
                 });
  }
  for (std::size_t m = 0; m < M; ++m)
    for_each_run(st.dst, 4, dp + unsigned(m), "PSUM dst",
                 [&](std::uint64_t addr, std::uint64_t k, std::uint32_t r) {
                   ctx.write(addr, acc.data() + m * N + k, std::size_t{r} * 4);
                 });
  ctx.count("macs", std::uint64_t{M} * N * pe.kdim);
  return 0;
}

// Transpose mode (nc_matmul is_transpose, SPEC §18): PSUM[m][n] = the
// stationary's element (n, m), bit for bit in its DTYPE (the moving tensor,
// the identity, was read for its time); K = N.
void transpose_out(KernelContext& ctx, const PeInst& st, const PeState& pe) {
  const unsigned es = isa::dtype_size(pe.dtype);
  const std::size_t M = pe.cols, N = st.src.cols();
  std::vector<std::uint8_t> out(M * N * es, 0);
  if (!ctx.timing_only())
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t n = 0; n < N; ++n)
        std::memcpy(out.data() + (m * N + n) * es, pe.raw.data() + (n * M + m) * es, es);
  const unsigned dp = isa::partition_of(st.dst.start);
  for (std::size_t m = 0; m < M; ++m)
    for_each_run(st.dst, es, dp + unsigned(m), "PSUM dst",
                 [&](std::uint64_t addr, std::uint64_t k, std::uint32_t r) {
                   ctx.write(addr, out.data() + (m * N + k) * es, std::size_t{r} * es);
                 });
}

Bundle stream_bundle(std::string name, std::uint32_t va, Bundle::TripsFn trips,
                     Bundle::StepFn step) {
  Bundle b{std::move(name), va, 1, trips, step};
  b.stream = true;
  return b;
}

}  // namespace

void add_pe_matmul_kernels(KernelRegistry& r) {
  const auto trips = [](KernelContext& ctx) { return inst_state(ctx).trips; };

  // Handlers of the dispatch ladder (seed 003 §3.1): { call8 body ; j exit }.
  r.add(Kernel{"pe_ldweights_handler",
               kPeLdweightsHandlerVa,
               {
                   {"pe.lw.call8", kPeLdweightsHandlerVa, 1, nullptr,
                    [](KernelContext&) { return kPeLoadBodyVa; }},
                   {"pe.lw.exit", kPeLdweightsExitVa, 1, nullptr, nullptr},
               }});
  r.add(Kernel{"pe_matmul_handler",
               kPeMatmulHandlerVa,
               {
                   {"pe.mm.call8", kPeMatmulHandlerVa, 1, nullptr,
                    [](KernelContext&) { return kPeMatmulBodyVa; }},
                   {"pe.mm.exit", kPeMatmulExitVa, 1, nullptr, nullptr},
               }});

  // LoadStationary body: decode, the streaming load (M/4 trips, or what the
  // previous matmul did not hide), a fill of 4 cycles, return.
  r.add(Kernel{"pe_load_stationary",
               kPeLoadBodyVa,
               {
                   {"pe.lw.fields", kPeLoadBodyVa, 4, nullptr, lw_fields},
                   stream_bundle("pe.lw.load", 0x5f67, trips, lw_load),
                   {"pe.lw.fill", 0x5f77, 4, nullptr, nullptr},
                   {"pe.lw.return", 0x5f87, 1, nullptr, nullptr},
               }});

  // MultiplyMoving body: decode, the scale-MAC loop (seed 003 §3.4 @0x5fa7;
  // max(N, 64) trips: the initiation interval), the array's drain (the
  // last moving column's partial sums through 128 rows and out: a tail of
  // the latency, convention, TIMING.md: fill/drain about 2 x 128), return.
  r.add(Kernel{"pe_multiply_moving",
               kPeMatmulBodyVa,
               {
                   {"pe.mm.fields", kPeMatmulBodyVa, 4, nullptr, mm_fields},
                   stream_bundle("pe.mm.mac", kPeScaleMacVa, trips, mm_mac),
                   {"pe.mm.drain", 0x5fb3, 256, nullptr, nullptr},
                   {"pe.mm.return", 0x5fb7, 1, nullptr, nullptr},
               }});
}

}  // namespace tpb::fw

#include "firmware_stubs/sfu/tquant.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "models/numerics/tquant.h"

namespace tpb::fw {

namespace {

using isa::TileDataType;
using sfu::Tile;
using sfu::TileFile;

// Per-instruction state (KernelContext::scratch()).
struct TquantState {
  bool noop = false;  // PE_MASK 0: nothing at all happens
  isa::TquantBlock w{};
  unsigned src = 0, dst = 0;
  std::uint16_t rows = 0, vcol = 0, col = 0;
  std::uint32_t multiplier = 0x3f800000u;  // seed 002 default
  std::int32_t zero_point = 0;
  num::QuantType type = num::QuantType::S8;
  num::RMode rmode = num::RMode::Rne;
  bool sat = false;
  Tile out;  // the new destination, published by the last bundle
  sfu::SfuFlags raised;
};

TquantState& tquant_state(KernelContext& ctx) {
  auto* st = ctx.scratch<TquantState>();
  if (!st) throw KernelFault("TQUANT worker entered without its decode bundle");
  return *st;
}

[[noreturn]] void legality(const std::string& rule, const std::string& detail) {
  throw KernelFault(fmt::format("{}: {}: {}", kFaultTileLegality, rule, detail));
}
[[noreturn]] void allocation(const std::string& rule, const std::string& detail) {
  throw KernelFault(fmt::format("{}: {}: {}", kFaultTileAllocation, rule, detail));
}

std::string dtype_str(std::uint8_t t) {
  const auto n = isa::tile_dtype_name(t);
  return n.empty() ? fmt::format("{}", t) : std::string(n);
}

// Bundle 1: decode and the PE_MASK test, before anything else (seed 002:
// "PE_MASK zero is a strict no-op before schema, GPR, descriptor,
// allocation, numeric-status, padding, or payload effects").
std::uint32_t decode_mask(KernelContext& ctx) {
  TquantState st;
  st.w = isa::decode_as<isa::TquantBlock>(ctx.inst());
  // A block with no B.IOT has no PE_MASK: it is a missing binding, not a no-op.
  st.noop = st.w.iot_count != 0 && st.w.mask == 0;
  ctx.set_scratch(std::move(st));
  return 0;
}

// The legality rules of seed 002 (check_legality, below), group by group,
// in the order of its "ordering" list; each throws (legality) at the first
// rule broken.

// Schema: the encoding carrier and the bindings.
void check_schema(const isa::TquantBlock& w) {
  if (w.selector != isa::kTquantSelector || w.mode != isa::kTquantMode ||
      w.function != isa::kTquantFunction)
    legality("encoding carrier",
             fmt::format("TQUANT is selector 0x06A Mode 3 Function 10, the word has selector "
                         "0x{:03X} Mode {} Function {}",
                         w.selector, w.mode, w.function));
  if (w.ios_count != 0) legality("B.IOS", "TQUANT takes no B.IOS binding");
  if (w.iot_count == 0) legality("missing binding", "no B.IOT");
  if (w.iot_count > 1) legality("a second B.IOT", fmt::format("{} B.IOT bindings", w.iot_count));
  if (w.last != 1) legality("missing binding", "the B.IOT is not terminating (no <last>)");
  if (w.src_count == 0) legality("missing binding", "B.IOT names no source tile");
  if (w.src_count > 1) legality("a second source", fmt::format("{} source tiles", w.src_count));
  if (w.dst_count == 0) legality("missing binding", "B.IOT names no destination tile");
  if (w.dst_count > 1)
    legality("a second destination", fmt::format("{} destination tiles", w.dst_count));
  if (w.datr_count == 0) legality("absent B.DATR", "B.DATR is mandatory");
  if (w.datr_count > 1) legality("surplus binding", fmt::format("{} B.DATR", w.datr_count));
  if (!(w.dim_mask & 1u)) legality("missing binding", "B.DIM LB0 (ValidCol) is required");
  for (unsigned d = 3; d < 8; ++d)
    if (w.dim_mask >> d & 1u) legality("surplus binding", fmt::format("B.DIM LB{}", d));
  if (w.dim_repeats) legality("surplus binding", "a B.DIM binding written twice");
  if (w.ior_count > 1) legality("surplus binding", fmt::format("{} B.IOR", w.ior_count));
}

// Fields: must-be-zero and inapplicable fields.
void check_fields(const isa::TquantBlock& w) {
  for (unsigned i = 0; i < sizeof w.reserved; ++i)
    if (w.reserved[i])
      legality("non-zero inapplicable field", fmt::format("reserved byte {}", 52 + i));
  if (w.src2_tile) legality("non-zero inapplicable field", "second source tile field");
  if (w.dst2_tile || w.dst2_tsize)
    legality("non-zero inapplicable field", "second destination fields");
  if (!(w.dim_mask >> 1 & 1u) && w.lb1) legality("non-zero inapplicable field", "LB1 omitted");
  if (!(w.dim_mask >> 2 & 1u) && w.lb2) legality("non-zero inapplicable field", "LB2 omitted");
  if (w.ior_count == 0 && (w.reg_src0 || w.reg_src1 || w.reg_src2 || w.reg_dst))
    legality("non-zero inapplicable field", "B.IOR registers without a B.IOR");
  if (w.rmode >= num::kNumRModes)
    legality("invalid B.DATR", fmt::format("RMode {} (0 RNE .. 4 RMM)", w.rmode));
  if (w.sat > 1) legality("invalid B.DATR", fmt::format("Sat {} (0 or 1)", w.sat));
  if (w.canonicalize) legality("non-zero inapplicable field", "B.DATR Canonicalize");
  if (w.cmode) legality("non-zero inapplicable field", "B.DATR CMode");
  if (w.pad_value) legality("non-zero inapplicable field", "B.DATR PadValueOrByteId");
  if (w.layout) legality("non-row-major layout", fmt::format("B.DATR Layout {}", w.layout));
  if (w.reg_src2 || w.reg_dst)
    legality("non-zero inapplicable field", "B.IOR RegSrc2 and RegDst must be zero");
}

// Types.
void check_types(const isa::TquantBlock& w) {
  if (w.src_dtype != static_cast<std::uint8_t>(TileDataType::Fp32))
    legality("unsupported type",
             fmt::format("BSTART DataType {} (the source must be FP32)", dtype_str(w.src_dtype)));
  if (w.dst_dtype != static_cast<std::uint8_t>(TileDataType::S8) &&
      w.dst_dtype != static_cast<std::uint8_t>(TileDataType::U8))
    legality("unsupported type",
             fmt::format("B.DATR DataType {} (must be S8 or U8)", dtype_str(w.dst_dtype)));
}

// Dimensions (defaults: LB1 = 1, LB2 = ValidCol).
void check_dimensions(const isa::TquantBlock& w, TquantState& st) {
  st.vcol = w.lb0;
  st.rows = (w.dim_mask >> 1 & 1u) ? w.lb1 : 1;
  st.col = (w.dim_mask >> 2 & 1u) ? w.lb2 : w.lb0;
  if (st.vcol == 0) legality("malformed dimensions", "LB0 (ValidCol) is zero");
  if (st.rows == 0) legality("malformed dimensions", "LB1 (ValidRow) is zero");
  if (st.col < st.vcol)
    legality("malformed dimensions",
             fmt::format("LB2 (Col) {} is below LB0 (ValidCol) {}", st.col, st.vcol));
}

// The source tile: name, type, layout, shape, capacity.
void check_source(KernelContext& ctx, const isa::TquantBlock& w, TquantState& st) {
  st.src = w.src_tile;
  if (st.src >= sfu::kNumTiles)
    legality("invalid source", fmt::format("T{} is not a Local tile (T0..T31)", st.src));
  const TileFile& tf = ctx.engine_state().get<TileFile>();
  const Tile& s = tf.tile(st.src);
  if (!s.allocated) legality("undefined source", fmt::format("T{} holds no tile", st.src));
  if (s.dtype != static_cast<std::uint8_t>(TileDataType::Fp32))
    legality("unsupported type",
             fmt::format("source T{} is {} (must be FP32)", st.src, dtype_str(s.dtype)));
  if (s.layout != 0) legality("non-row-major layout", fmt::format("source T{}", st.src));
  if (s.valid_row == st.rows && s.col == st.col && st.vcol > s.valid_col)
    legality("undefined source element",
             fmt::format("LB0 {} reaches into the Null padding of T{} (ValidCol {}, Col {})",
                         st.vcol, st.src, s.valid_col, s.col));
  if (s.valid_row != st.rows || s.valid_col != st.vcol || s.col != st.col)
    legality("malformed dimensions",
             fmt::format("source T{} is {} x {} (Col {}), the block binds LB1 {} x LB0 {} "
                         "(LB2 {})",
                         st.src, s.valid_row, s.valid_col, s.col, st.rows, st.vcol, st.col));
  if (std::size_t{s.tsize} * sfu::kUnitBytes < s.shape_bytes())
    legality("source capacity",
             fmt::format("source T{} TSize {} is below its shape", st.src, s.tsize));
  // Every valid source element defined, and a valid (finite) FP32 encoding.
  for (std::size_t r = 0; r < st.rows; ++r)
    for (std::size_t c = 0; c < st.vcol; ++c) {
      const std::size_t at = (r * st.col + c) * 4;
      if (!(s.defined[at] && s.defined[at + 1] && s.defined[at + 2] && s.defined[at + 3]))
        legality("undefined source element",
                 fmt::format("T{} element ({}, {}) is undefined", st.src, r, c));
      std::uint32_t bits;
      std::memcpy(&bits, s.data.data() + at, 4);
      if (((bits >> 23) & 0xFFu) == 0xFFu)
        legality("invalid source element",
                 fmt::format("T{} element ({}, {}) is {} (0x{:08x})", st.src, r, c,
                             (bits & 0x7FFFFFu) ? "NaN" : "Inf", bits));
    }
}

// B.IOR: multiplier and zero point from the GPRs (an r0 is a real read).
void check_ior(KernelContext& ctx, const isa::TquantBlock& w, TquantState& st) {
  st.type = w.dst_dtype == static_cast<std::uint8_t>(TileDataType::S8) ? num::QuantType::S8
                                                                       : num::QuantType::U8;
  if (w.ior_count == 1) {
    if (w.reg_src0 >= isa::kNumEngineRegs || w.reg_src1 >= isa::kNumEngineRegs)
      legality("invalid B.IOR",
               fmt::format("r{} / r{}: the SFU has r0..r31", w.reg_src0, w.reg_src1));
    st.multiplier = ctx.reg(w.reg_src0);
    const std::uint32_t zp = ctx.reg(w.reg_src1);
    const std::uint32_t m = st.multiplier;
    if (((m >> 23) & 0xFFu) == 0xFFu)
      legality("multiplier", fmt::format("r{} = 0x{:08x} is not finite", w.reg_src0, m));
    if ((m & 0x7FFFFFFFu) == 0)
      legality("multiplier", fmt::format("r{} = 0x{:08x} is zero", w.reg_src0, m));
    if (m >> 31) legality("multiplier", fmt::format("r{} = 0x{:08x} is negative", w.reg_src0, m));
    const auto szp = static_cast<std::int32_t>(zp);
    if (st.type == num::QuantType::S8 ? (szp < -128 || szp > 127) : zp > 255)
      legality("zero point",
               fmt::format("r{} = 0x{:08x} is not a canonical {} value ({})", w.reg_src1, zp,
                           st.type == num::QuantType::S8 ? "S8" : "U8",
                           st.type == num::QuantType::S8 ? "sign-extended -128..127" : "0..255"));
    st.zero_point = szp;
  }
}

// Bundle 2: every legality rule of seed 002, in the order of its "ordering"
// list: schema, fields, types, shape, capacity, source definedness and
// encoding, multiplier, zero point. Reads the GPRs of a present B.IOR.
std::uint32_t check_legality(KernelContext& ctx) {
  TquantState& st = tquant_state(ctx);
  if (st.noop) return 0;
  const isa::TquantBlock& w = st.w;
  check_schema(w);
  check_fields(w);
  check_types(w);
  check_dimensions(w, st);
  check_source(ctx, w, st);
  check_ior(ctx, w, st);
  st.rmode = static_cast<num::RMode>(w.rmode);
  st.sat = w.sat == 1;
  return 0;
}

// Bundle 3: the allocation preflight (Fault_TileAllocation), before any
// allocation.
std::uint32_t check_allocation(KernelContext& ctx) {
  TquantState& st = tquant_state(ctx);
  if (st.noop) return 0;
  const isa::TquantBlock& w = st.w;
  const TileFile& tf = ctx.engine_state().get<TileFile>();
  const std::size_t bytes = std::size_t{st.rows} * st.col;  // one byte per S8 / U8 element
  if (w.tsize > sfu::kCapacityUnits || bytes > sfu::kMaxTileBytes)
    allocation("unrepresentable destination shape",
               fmt::format("->T{}<{}> for {} x {} bytes: a tile holds at most {} units", w.dst_tile,
                           w.tsize, st.rows, st.col, sfu::kCapacityUnits));
  st.dst = w.dst_tile;
  if (st.dst >= sfu::kNumTiles)
    allocation("unavailable renamed destination",
               fmt::format("T{} is not a Local tile (T0..T31)", st.dst));
  if (st.dst == st.src)
    allocation("unavailable renamed destination",
               fmt::format("the destination T{} names the source", st.dst));
  if (std::size_t{w.tsize} * sfu::kUnitBytes < bytes)
    allocation("insufficient TSize", fmt::format("->T{}<{}>: {} x {} bytes need {} units", st.dst,
                                                 w.tsize, st.rows, st.col, sfu::units_for(bytes)));
  // The old tile of the destination name stays allocated until the publish.
  if (tf.free_units() < w.tsize)
    allocation("exhausted capacity", fmt::format("->T{}<{}>: {} of {} units free", st.dst, w.tsize,
                                                 tf.free_units(), sfu::kCapacityUnits));
  return 0;
}

// Tile n's payload in region 2 (docs/CONVENTIONS.md): where the race check
// records TQUANT's reads and writes of it.
std::uint64_t tile_payload(unsigned n) {
  return isa::region_base(isa::Region::SfuTile) + std::uint64_t{n} * sfu::kTilePayloadStride;
}

// Bundle 4, the streaming loop: a snapshot of the source's valid region is
// quantized into the new destination; padding stays undefined (Null).
std::uint32_t quantize(KernelContext& ctx) {
  TquantState& st = tquant_state(ctx);
  if (st.noop) return 0;
  const TileFile& tf = ctx.engine_state().get<TileFile>();
  const Tile& s = tf.tile(st.src);
  ctx.touch(tile_payload(st.src), std::size_t{st.rows} * st.col * 4, false);
  st.out = tf.allocate(st.w.dst_dtype, st.rows, st.vcol, st.col, st.w.tsize);
  for (std::size_t r = 0; r < st.rows; ++r)
    for (std::size_t c = 0; c < st.vcol; ++c) {
      std::uint32_t x;
      std::memcpy(&x, s.data.data() + (r * st.col + c) * 4, 4);
      const num::QuantResult q =
          num::tquant_element(x, st.multiplier, st.zero_point, st.type, st.rmode, st.sat);
      const std::size_t at = r * st.col + c;
      st.out.data[at] = q.code;
      st.out.defined[at] = 1;
      st.raised.inexact |= q.inexact;
      st.raised.saturated |= q.saturated;
      st.raised.wrapped |= q.wrapped;
    }
  return 0;
}

// Bundle 5: the atomic publish of payload, flags and renamed destination.
std::uint32_t publish(KernelContext& ctx) {
  TquantState& st = tquant_state(ctx);
  if (st.noop) return 0;
  ctx.touch(tile_payload(st.dst), std::size_t{st.rows} * st.col, true);
  ctx.engine_state().get<TileFile>().publish(st.dst, std::move(st.out), st.raised);
  return 0;
}

std::uint64_t once_unless_noop(KernelContext& ctx) { return tquant_state(ctx).noop ? 0 : 1; }

}  // namespace

void add_tquant_kernels(KernelRegistry& r) {
  r.add(Kernel{"tquant_trampoline",
               kTquantTrampolineVa,
               {
                   {"sfu.trampoline.call8", kTquantTrampolineVa, 1, nullptr,
                    [](KernelContext&) { return kTquantWorkerVa; }},
                   {"sfu.trampoline.exit", kTquantTrampolineVa + 3, 1, nullptr, nullptr},
               }});
  Bundle loop{"sfu.tquant.loop", kTquantWorkerVa + 12, 1,
              [](KernelContext& ctx) -> std::uint64_t {
                const TquantState& st = tquant_state(ctx);
                if (st.noop) return 0;
                return std::uint64_t{(st.rows + kSfuLanes - 1u) / kSfuLanes} * st.vcol;
              },
              quantize};
  loop.stream = true;
  r.add(
      Kernel{"tquant",
             kTquantWorkerVa,
             {
                 {"sfu.tquant.mask", kTquantWorkerVa, 1, nullptr, decode_mask},
                 {"sfu.tquant.legality", kTquantWorkerVa + 3, 4, once_unless_noop, check_legality},
                 {"sfu.tquant.alloc", kTquantWorkerVa + 6, 2, once_unless_noop, check_allocation},
                 {"sfu.tquant.snapshot", kTquantWorkerVa + 9, 1, once_unless_noop, nullptr},
                 loop,
                 {"sfu.tquant.publish", kTquantWorkerVa + 15, 1, once_unless_noop, publish},
                 {"sfu.tquant.return", kTquantWorkerVa + 18, 1, nullptr, nullptr},
             }});
}

}  // namespace tpb::fw

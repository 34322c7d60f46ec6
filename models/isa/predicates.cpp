// Validity predicates (seed 000 §2.1, §4.1, §5; seed 003 §2.5, §3, §5, §6.1;
// SPEC §1, §2, §4, §5). Each reads raw bytes only: no enum is built from an
// unchecked byte, every product is done in 64 bits.
#include "models/isa/predicates.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "models/isa/opcode_table.h"

namespace tpb::isa {
namespace {

constexpr std::uint8_t kDtypeUint32 = 0x09;
constexpr std::uint8_t kSfp8E8 = 0x13;

bool all_zero(const std::uint8_t* p, std::size_t n) {
  // Every byte or-ed (no early exit: the compiler vectorizes it).
  std::uint8_t any = 0;
  for (std::size_t i = 0; i < n; ++i) any |= p[i];
  return any == 0;
}

bool is_plain_marker(std::uint8_t m) {
  return m == addr4::kMarkerImm || m == addr4::kMarkerAddrReg || m == addr4::kMarkerShapeReg ||
         m == addr4::kMarkerAddrShapeReg;
}
bool is_addr_reg(Addr4 a) {
  return a.marker() == addr4::kMarkerAddrReg || a.marker() == addr4::kMarkerAddrShapeReg;
}

bool region_allowed(Region r, AllowedInPSUM psum, AllowedInSBUF sbuf) {
  return (r == Region::Sbuf && sbuf == AllowedInSBUF::True) ||
         (r == Region::Psum && psum == AllowedInPSUM::True);
}

// Byte offsets [lo, hi) touched by a strided pattern relative to its start.
struct Extent {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};
Extent extent_of(const std::uint32_t* n, const std::int64_t* step, int dims, unsigned elem_bytes) {
  Extent e;
  for (int d = 0; d < dims; ++d) {
    const std::int64_t far = (static_cast<std::int64_t>(n[d]) - 1) * step[d];
    e.lo += std::min<std::int64_t>(0, far) * elem_bytes;
    e.hi += std::max<std::int64_t>(0, far) * elem_bytes;
  }
  e.hi += elem_bytes;
  return e;
}
bool fits(std::uint32_t offset, Extent e, std::uint32_t capacity) {
  return static_cast<std::int64_t>(offset) + e.lo >= 0 &&
         static_cast<std::int64_t>(offset) + e.hi <= static_cast<std::int64_t>(capacity);
}

std::uint64_t count_t3d(const Tensor3D& t) {
  return static_cast<std::uint64_t>(t.num_elem[0]) * t.num_elem[1] * t.num_elem[2];
}

// An immediate address inside `region`'s capacity (start byte only).
bool imm_in_region(Addr4 a, Region region, Arch arch) {
  return region_of(a.address()) == region &&
         offset_of(a.address()) < partition_capacity(region, arch);
}

// Start partition of a MEM_PATTERN3D member, when static.
std::optional<unsigned> start_partition(const MemPattern3D& p) {
  const Addr4 a = pattern_addr(p);
  if (member_of(p) == MemMember::Tensor3D && is_addr_reg(a)) return std::nullopt;
  return partition_of(a.address());
}

bool same_quadrant_partition(Addr4 a0, Addr4 a1) {
  for (unsigned q = 0; q < kNumPartitions; q += kPartitionsPerQuadrant) {
    if (pred::addr_in_sbuf_partition(q, a0) && pred::addr_in_sbuf_partition(q, a1)) return true;
  }
  return false;
}

bool element_count_t3d(std::uint8_t fmt, std::uint8_t grp, const Tensor3D& src,
                       const Tensor3D& dst) {
  using namespace pred;
  const bool four_bit = fmt == 1 || fmt == 2 || fmt == 3;
  return shape_from_register(src.start_addr) || shape_from_register(dst.start_addr) ||
         (four_bit && grp == 0 && ratio_element_count_t3d(src, dst, 2, 1) &&
          is_num_elem_mult_n_t3d(src, 1)) ||
         (fmt == 4 && grp == 0 && ratio_element_count_t3d(src, dst, 4, 3) &&
          is_num_elem_mult_n_t3d(src, 3)) ||
         (four_bit && grp == 8 && ratio_element_count_t3d(src, dst, 8, 5) &&
          is_num_elem_mult_n_t3d(src, 5));
}

}  // namespace

Tensor3D pattern_t(const MemPattern3D& p) {
  Tensor3D t;
  std::memcpy(&t, &p, sizeof t);
  return t;
}
MxTensorV2 pattern_mx(const MemPattern3D& p) {
  MxTensorV2 m;
  std::memcpy(&m, &p, sizeof m);
  return m;
}
MxTensor1D pattern_t(const MxMemPattern1D& p) {
  MxTensor1D t;
  std::memcpy(&t, &p, sizeof t);
  return t;
}
Addr4 pattern_addr(const MemPattern3D& p) {
  Addr4 a;
  std::memcpy(&a, &p, sizeof a);
  return a;
}
IndirectView pattern_i(const MemPattern3D& p) {
  IndirectView v;
  std::memcpy(&v.data_addr, reinterpret_cast<const std::uint8_t*>(&p), 4);
  std::memcpy(&v.index_addr, reinterpret_cast<const std::uint8_t*>(&p) + 4, 4);
  return v;
}
MemMember member_of(const MemPattern3D& p) {
  const std::uint8_t m = pattern_addr(p).marker();
  if (m == addr4::kMarkerIndirect) return MemMember::Indirect;
  if (m == addr4::kMarkerMxTensorV2) return MemMember::MxTensorV2;
  return MemMember::Tensor3D;
}

unsigned mx_x4_bytes(std::uint8_t dtype) {
  if (dtype == static_cast<std::uint8_t>(Dtype::Fp4Exp2) ||
      dtype == static_cast<std::uint8_t>(Dtype::Int4))
    return 2;
  return 4 * std::max(1u, dtype_size(dtype));
}

namespace {
// The capacities of the check running on this thread (CapacityScope).
thread_local const MemoryCapacity* t_capacity = nullptr;
}  // namespace

CapacityScope::CapacityScope(const MemoryCapacity& cap) : previous_(t_capacity) {
  t_capacity = &cap;
}
CapacityScope::~CapacityScope() { t_capacity = previous_; }

MemoryCapacity check_capacity(Arch arch) {
  return t_capacity ? *t_capacity : default_capacity(arch);
}

std::uint32_t partition_capacity(Region r, Arch arch) {
  const MemoryCapacity c = check_capacity(arch);
  switch (r) {
    case Region::Sbuf:
      return c.sbuf_bytes_per_partition;
    case Region::Psum:
      return c.psum_bytes_per_partition;
    default:
      return 0;
  }
}

namespace pred {

// ---- HEADER / EVENTS ---------------------------------------------------------
bool has_valid_neuron_header(const Header& h) {
  // debug_cmd bits 3:0 (0 none, 1 trace marker); bits 7:4 the engine
  // selector (SPEC §18): 0 home, 1 + engine_index.
  return h.inst_word_len == kInstWordLen && (h.debug_cmd & kDebugCmdMask) <= 1 &&
         (h.debug_cmd >> kEngineSelectorShift) <= kNumEngines;
}
bool has_valid_neuron_events(const Events& e) {
  return e.wait_mode <= 2 && e.update_mode <= 3 && e.wait_idx < kNumSemaphores &&
         e.update_idx < kNumSemaphores;
}

// ---- opcodes (the opcode table's constants) -------------------------------------
bool has_tensor_dequantize_opcode(const Header& h) {
  return h.opcode == opcode_row(Opcode::TensorDequantize).code();
}
bool has_quantize_mx_opcode(const Header& h) {
  return h.opcode == opcode_row(Opcode::QuantizeMX).code();
}
bool has_ldweights_mx_opcode(const Header& h) {
  return h.opcode == opcode_row(Opcode::LdweightsMX).code();
}
bool has_matmul_mx_opcode(const Header& h) {
  return h.opcode == opcode_row(Opcode::MatmulMX).code();
}
bool has_ldweights_opcode(const Header& h) {
  return h.opcode == opcode_row(Opcode::Ldweights).code();
}
bool has_matmul_opcode(const Header& h) { return h.opcode == opcode_row(Opcode::Matmul).code(); }
bool has_tquant_opcode(const Header& h) { return h.opcode == opcode_row(Opcode::Tquant).code(); }
bool has_tensor_copy_opcode(const Header& h) {
  return h.opcode == opcode_row(Opcode::TensorCopy).code();
}
bool has_dma_copy_opcode(const Header& h) { return h.opcode == opcode_row(Opcode::DmaCopy).code(); }
bool has_nop_opcode(const Header& h) { return h.opcode == opcode_row(Opcode::Nop).code(); }

// ---- generations (the generations of the opcode's table row) ----------------------
bool has_valid_nc_tens_dequant(Arch nc) {
  return opcode_row(Opcode::TensorDequantize).exists_on(nc);
}
bool s3dmx1_quant_valid_nc(Arch nc) { return opcode_row(Opcode::QuantizeMX).exists_on(nc); }
bool smx1_lw_valid_nc(Arch nc) { return opcode_row(Opcode::LdweightsMX).exists_on(nc); }
bool smx1d3_mm_valid_nc(Arch nc) { return opcode_row(Opcode::MatmulMX).exists_on(nc); }
bool s3_lw_valid_nc(Arch nc, const MemPattern3D& src) {
  return mxtensorv2_pattern(pattern_addr(src)) ? nc == Arch::Maverick
                                               : opcode_row(Opcode::Ldweights).exists_on(nc);
}
bool tquant_valid_nc(Arch nc) { return opcode_row(Opcode::Tquant).exists_on(nc); }
bool s3d3_mm_valid_nc(Arch nc, const MemPattern3D& src) {
  return mxtensorv2_pattern(pattern_addr(src)) ? nc == Arch::Maverick
                                               : opcode_row(Opcode::Matmul).exists_on(nc);
}

// ---- TensorDequantize --------------------------------------------------------------
bool check_active_channels(std::uint8_t n) { return n != 0 && n <= kNumPartitions; }
bool has_valid_dequant_fmt(std::uint8_t fmt) { return fmt >= 1 && fmt <= 4; }
bool has_valid_group_size(std::uint8_t grp) { return grp == 0 || grp == 8; }
bool has_valid_dequant_fmt_group_size(std::uint8_t fmt, std::uint8_t grp) {
  return grp != 8 || fmt == 1 || fmt == 2 || fmt == 3;
}
bool s3d3_tens_dequant_reserved_zero(const S3D3TensDequantV3& i) {
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2);
}
bool s3d3_tens_dequant_reserved_zero(const S3D3TensDequant& i) {
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2);
}
bool has_valid_tens_dequant_in_dtype(std::uint8_t dtype) { return dtype == kDtypeUint32; }
bool has_valid_tens_dequant_out_dtype(std::uint8_t dtype) { return dtype == kDtypeUint32; }

bool start_addr_active_channels(Addr4 start_addr, std::uint8_t n) {
  if (is_addr_reg(start_addr)) return true;  // re-checked by the sequencer
  return partition_of(start_addr.address()) + n <= kNumPartitions;
}

bool tensor3d_valid(const Tensor3D& t, std::uint8_t dtype, WriteTensor write, AllowedInPSUM psum,
                    AllowedInSBUF sbuf, Arch arch) {
  const Addr4 a = t.start_addr;
  if (!is_plain_marker(a.marker())) return false;
  const bool shape_reg = shape_from_register(a);
  const unsigned es = std::max(1u, dtype_size(dtype));
  const std::uint32_t n[3] = {t.num_elem[0], t.num_elem[1], t.num_elem[2]};
  const std::int64_t s[3] = {t.step_elem[0], t.step_elem[1], t.step_elem[2]};
  if (!shape_reg) {
    for (int d = 0; d < 3; ++d) {
      if (n[d] == 0) return false;
      if (write == WriteTensor::True && n[d] > 1 && s[d] == 0) return false;
    }
  }
  if (!is_addr_reg(a)) {
    const Region r = region_of(a.address());
    if (!region_allowed(r, psum, sbuf)) return false;
    const std::uint32_t cap = partition_capacity(r, arch);
    const std::uint32_t off = offset_of(a.address());
    if (off >= cap) return false;
    return shape_reg || fits(off, extent_of(n, s, 3, es), cap);
  }
  if (shape_reg) return true;  // nothing static left
  // Address unknown: the pattern must at least fit in one partition.
  std::uint32_t cap = 0;
  if (sbuf == AllowedInSBUF::True) cap = partition_capacity(Region::Sbuf, arch);
  if (psum == AllowedInPSUM::True) cap = std::max(cap, partition_capacity(Region::Psum, arch));
  const Extent e = extent_of(n, s, 3, es);
  return e.hi - e.lo <= static_cast<std::int64_t>(cap);
}

bool shape_from_register(Addr4 a) {
  return a.marker() == addr4::kMarkerShapeReg || a.marker() == addr4::kMarkerAddrShapeReg;
}
bool ratio_element_count_t3d(const Tensor3D& src, const Tensor3D& dst, unsigned src_units,
                             unsigned dst_units) {
  return count_t3d(src) * src_units == count_t3d(dst) * dst_units;
}
bool is_num_elem_mult_n_t3d(const Tensor3D& t, unsigned n) {
  return n != 0 && count_t3d(t) % n == 0;
}
bool s3d3_tens_dequant_element_count_check_t3d(const S3D3TensDequantV3& i) {
  return element_count_t3d(i.dequant_fmt, i.group_size, i.src_mem_pattern, i.dst_mem_pattern);
}
bool s3d3_tens_dequant_element_count_check_t3d(const S3D3TensDequant& i) {
  // Indirect and MXTENSOR_V2 operands have no TENSOR3D element count.
  if (member_of(i.src_mem_pattern) != MemMember::Tensor3D ||
      member_of(i.dst_mem_pattern) != MemMember::Tensor3D)
    return true;
  return element_count_t3d(i.dequant_fmt, i.group_size, pattern_t(i.src_mem_pattern),
                           pattern_t(i.dst_mem_pattern));
}

// ---- MEM_PATTERN3D -------------------------------------------------------------------
bool mem3d_valid(const MemPattern3D& p, std::uint8_t dtype, WriteTensor write, AllowedInPSUM psum,
                 AllowedInSBUF sbuf, Arch arch, AllowIndirect indirect, AllowMxTensorV2 mx) {
  switch (member_of(p)) {
    case MemMember::Tensor3D:
      return tensor3d_valid(pattern_t(p), dtype, write, psum, sbuf, arch);
    case MemMember::Indirect: {
      if (indirect == AllowIndirect::False) return false;
      const IndirectView v = pattern_i(p);
      const Region r = region_of(v.data_addr.address());
      if (!region_allowed(r, psum, sbuf)) return false;
      if (offset_of(v.data_addr.address()) >= partition_capacity(r, arch)) return false;
      return v.index_addr.marker() == addr4::kMarkerImm &&
             imm_in_region(v.index_addr, Region::Sbuf, arch);
    }
    case MemMember::MxTensorV2:
      if (mx == AllowMxTensorV2::False || sbuf == AllowedInSBUF::False) return false;
      return mxtensorv2_valid(pattern_mx(p), mx_x4_bytes(dtype), write, arch);
  }
  return false;
}

bool check_m3d_active_channels(const MemPattern3D& p, std::uint8_t n) {
  const auto part = start_partition(p);
  return !part || *part + n <= kNumPartitions;
}

bool indirect_quadrant_check_src3d(const MemPattern3D& src) {
  if (member_of(src) != MemMember::Indirect) return true;
  const IndirectView v = pattern_i(src);
  return partition_of(v.data_addr.address()) / kPartitionsPerQuadrant ==
         partition_of(v.index_addr.address()) / kPartitionsPerQuadrant;
}

bool indirect_quadrant_check_src3d_dst3d(const MemPattern3D& src, const MemPattern3D& dst) {
  if (member_of(src) != MemMember::Indirect && member_of(dst) != MemMember::Indirect) return true;
  const auto ps = start_partition(src);
  const auto pd = start_partition(dst);
  if (!ps || !pd) return true;  // a register address: re-checked at run time
  return *ps / kPartitionsPerQuadrant == *pd / kPartitionsPerQuadrant;
}

// ---- QuantizeMX ----------------------------------------------------------------------
bool s3dmx1_quant_reserved_zero(const S3DMX1Quant& i) {
  const MxTensor1D dst = pattern_t(i.dst_mem_pattern);
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2) && all_zero(dst.reserved, sizeof dst.reserved);
}
bool s3dmx1_quant_valid_active_channels(std::uint8_t n) {
  return n == 32 || n == 64 || n == 96 || n == 128;
}
bool is_valid_dtype(std::uint8_t d, AllowFP32R allow_fp32r) {
  if (d >= 0x01 && d <= 0x09) return true;
  if (d >= 0x0C && d <= 0x0F) return true;
  return d == 0x0A && allow_fp32r == AllowFP32R::True;
}
bool is_valid_dtype_inc_fp4(std::uint8_t d, AllowFP4 allow_fp4) {
  if (is_valid_dtype(d, AllowFP32R::False)) return true;
  return allow_fp4 == AllowFP4::True && (d == 0x10 || d == 0x12);
}
bool s3dmx1_quant_valid_in_dtype(std::uint8_t d) {
  return !is_valid_dtype(d, AllowFP32R::False) || d == 0x08 || d == 0x05 || d == 0x06;
}
bool s3dmx1_quant_valid_out_dtype(std::uint8_t d) {
  return !is_valid_dtype_inc_fp4(d, AllowFP4::False) || d == 0x0F || d == 0x0E;
}

bool mxmem1d_valid(const MxMemPattern1D& p, unsigned x4_bytes, WriteTensor write, Arch arch) {
  const MxTensor1D t = pattern_t(p);
  const Addr4 a = t.start_addr;
  if (!is_plain_marker(a.marker())) return false;  // MXIndirect16B: not modelled
  const std::uint8_t sm = t.scale_addr.marker();
  if (sm != addr4::kMarkerImm && sm != addr4::kMarkerAddrReg) return false;
  if (t.scale_pidx > kPartitionsPerQuadrant - 4) return false;
  const bool shape_reg = shape_from_register(a);
  const std::uint32_t n = t.num_elem[0];
  if (!shape_reg) {
    if (n == 0) return false;
    if (write == WriteTensor::True && n > 1 && t.step_elem[0] == 0) return false;
  }
  const std::uint32_t cap = partition_capacity(Region::Sbuf, arch);
  if (!is_addr_reg(a)) {
    if (!imm_in_region(a, Region::Sbuf, arch)) return false;
    const std::uint32_t nn[1] = {n};
    const std::int64_t ss[1] = {t.step_elem[0]};
    if (!shape_reg && !fits(offset_of(a.address()), extent_of(nn, ss, 1, x4_bytes), cap))
      return false;
  }
  if (sm == addr4::kMarkerImm) {
    if (!imm_in_region(t.scale_addr, Region::Sbuf, arch)) return false;
    if (!shape_reg && offset_of(t.scale_addr.address()) + n > cap) return false;
  }
  return true;
}

bool check_mx1d_active_channels(const MxMemPattern1D& p, std::uint8_t n) {
  const Addr4 a = pattern_t(p).start_addr;
  return is_addr_reg(a) || partition_of(a.address()) + n <= kNumPartitions;
}

bool addr_in_sbuf_partition(unsigned partition, Addr4 addr) {
  if (is_addr_reg(addr)) return true;  // re-checked by the sequencer
  return region_of(addr.address()) == Region::Sbuf && partition_of(addr.address()) == partition;
}
bool valid_s3dmx1_quant_sbuf_quadrant(Addr4 addr0, Addr4 addr1) {
  return same_quadrant_partition(addr0, addr1);
}

bool s3dmx1_quant_element_count_check(const S3DMX1Quant& i) {
  if (member_of(i.src_mem_pattern) != MemMember::Tensor3D) return true;
  const Tensor3D src = pattern_t(i.src_mem_pattern);
  const MxTensor1D dst = pattern_t(i.dst_mem_pattern);
  if (shape_from_register(src.start_addr) || shape_from_register(dst.start_addr)) return true;
  return count_t3d(src) == 4ull * dst.num_elem[0];
}

// ---- PE MX matmul ----------------------------------------------------------------------
bool is_valid_mx_dtype(std::uint8_t d) {
  return (d >= 0x0C && d <= 0x0F) || d == 0x10 || d == 0x12;
}
bool valid_row_grp_active_rows(std::uint8_t row_grp, std::uint8_t rows) {
  return (row_grp == 0xf && rows == 128) || (row_grp == 0x7 && rows == 96) ||
         (row_grp == 0x3 && rows == 64) || (row_grp == 0x1 && rows == 32);
}
bool valid_col_grp_active_cols(std::uint8_t col_grp, std::uint8_t cols) {
  return col_grp == 0xf && cols >= 1 && cols <= kNumPartitions;
}
bool valid_mx_sbuf_quadrant(Addr4 data_addr, Addr4 scale_addr) {
  return same_quadrant_partition(data_addr, scale_addr);
}
bool valid_mm_active_rows(std::uint8_t rows) {
  return rows == 32 || rows == 64 || rows == 96 || rows == 128;
}
bool valid_mm_out_dtype(std::uint8_t d) { return d == 0x08; }
bool valid_psum_accumulate_flags(std::uint8_t flags) { return (flags & 0xFEu) == 0; }

bool smx1_lw_reserved_zero(const SMX1Lw& i) {
  const MxTensor1D src = pattern_t(i.src_mem_pattern);
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2) && all_zero(i.reserved3, sizeof i.reserved3) &&
         all_zero(src.reserved, sizeof src.reserved);
}
bool smx1d3_mm_reserved_zero(const SMX1D3Mm& i) {
  const MxTensor1D src = pattern_t(i.src_mem_pattern);
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2) && all_zero(i.reserved3, sizeof i.reserved3) &&
         all_zero(i.reserved4, sizeof i.reserved4) && all_zero(src.reserved, sizeof src.reserved);
}
bool s3_lw_reserved_zero(const S3Lw& i) {
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2);
}
bool s3d3_mm_reserved_zero(const S3D3Mm& i) {
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2) && all_zero(i.reserved3, sizeof i.reserved3);
}

bool mxtensorv2_pattern(Addr4 a) { return a.marker() == addr4::kMarkerMxTensorV2; }
bool not_mxtensorv2_pattern(Addr4 a) { return !mxtensorv2_pattern(a); }

namespace {
bool mode_checks(const MemPattern3D& src) {
  const Addr4 a = pattern_addr(src);
  const bool mx_mode = pattern_mx(src).scale_dtype == kSfp8E8;
  const bool normal_mode = true;  // a plain operand: judged by mem3d_valid
  return (mxtensorv2_pattern(a) && mx_mode) || (not_mxtensorv2_pattern(a) && normal_mode);
}
}  // namespace
bool s3_lw_mode_checks(const MemPattern3D& src) { return mode_checks(src); }
bool s3d3_mm_mode_checks(const MemPattern3D& src) { return mode_checks(src); }

bool valid_plain_mm_dtype(std::uint8_t d, Arch nc) {
  if (d == 0x05 || d == 0x06 || d == 0x08 || d == 0x0B || d == 0x0F) return true;
  if (d == 0x0E) return nc_version(nc) >= nc_version(Arch::Mariana);
  return nc == Arch::Maverick && (d == 0x0C || d == 0x0D);
}
bool valid_plain_row_grp_active_rows(std::uint8_t row_grp, std::uint8_t rows) {
  return valid_plain_mm_active_rows(rows) && row_grp == (1u << ((rows + 31u) / 32u)) - 1u;
}
bool valid_plain_mm_active_rows(std::uint8_t rows) { return rows != 0 && rows <= kNumPartitions; }
bool valid_matmul_perf_mode(std::uint8_t perf, std::uint8_t in_dtype, Arch nc) {
  if (perf == static_cast<std::uint8_t>(MatmulPerf::None)) return true;
  return perf == static_cast<std::uint8_t>(MatmulPerf::DoubleRow) &&
         nc_version(nc) >= nc_version(Arch::Cayman) &&
         (in_dtype == 0x0B || in_dtype == 0x0E || in_dtype == 0x0F);
}
bool valid_matmul_transpose(std::uint8_t transpose) { return transpose <= 1; }
bool plain_fields_only_in_plain_mode(std::uint8_t perf, std::uint8_t transpose,
                                     const MemPattern3D& src) {
  return (perf == 0 && transpose == 0) || !mxtensorv2_pattern(pattern_addr(src));
}
bool matmul_transpose_out_dtype(std::uint8_t out_dtype, std::uint8_t in_dtype) {
  return out_dtype == in_dtype;
}
bool valid_mx_perf_mode(std::uint8_t mode) { return mode <= 6; }
bool mx_perf_mode_only_in_mx_mode(std::uint8_t mode, const MemPattern3D& src) {
  return mode == 0 || mxtensorv2_pattern(pattern_addr(src));
}

bool mxtensorv2_valid(const MxTensorV2& m, unsigned x4_bytes, WriteTensor write, Arch arch) {
  const std::uint32_t n[2] = {m.num_elem[0], m.num_elem[1]};
  if (n[0] == 0 || n[1] == 0) return false;
  if (write == WriteTensor::True && n[1] > 1 && m.step_elem_data_1 == 0) return false;
  const std::uint32_t cap = partition_capacity(Region::Sbuf, arch);
  // data_addr's marker is the MXTENSOR_V2 selector, so its address is immediate.
  if (!imm_in_region(m.data_addr, Region::Sbuf, arch)) return false;
  const std::int64_t sd[2] = {1, m.step_elem_data_1};
  if (!fits(offset_of(m.data_addr.address()), extent_of(n, sd, 2, x4_bytes), cap)) return false;
  const std::uint8_t sm = m.scale_addr.marker();
  if (sm == addr4::kMarkerAddrReg) return true;
  if (sm != addr4::kMarkerImm || !imm_in_region(m.scale_addr, Region::Sbuf, arch)) return false;
  const std::int64_t ss[2] = {1, m.step_elem_scale_1};
  return fits(offset_of(m.scale_addr.address()), extent_of(n, ss, 2, 1), cap);
}

// ---- DVE tensor_copy ------------------------------------------------------------------
bool tensor_copy_reserved_zero(const S3D3TensorCopy& i) { return unary_reserved_zero(i); }
bool tensor_copy_element_count_check(const S3D3TensorCopy& i) {
  if (member_of(i.src_mem_pattern) != MemMember::Tensor3D ||
      member_of(i.dst_mem_pattern) != MemMember::Tensor3D)
    return true;  // mem3d_valid's failure
  const Tensor3D src = pattern_t(i.src_mem_pattern);
  const Tensor3D dst = pattern_t(i.dst_mem_pattern);
  if (shape_from_register(src.start_addr) || shape_from_register(dst.start_addr)) return true;
  return count_t3d(src) == count_t3d(dst);
}

// ---- SPEC §18 vector instructions ---------------------------------------------------------
Queue word_engine(const RawInst& raw, Arch arch, Opcode op) {
  const unsigned sel = engine_selector(raw);
  const Queue q = sel >= 1 && sel <= kNumEngines ? kEngines[sel - 1] : opcode_row(op).home;
  return executing_engine(q, arch);
}
Queue word_engine(const RawInst& raw, Arch arch) { return executing_engine(word_queue(raw), arch); }
AllowedInPSUM psum_for(Queue engine) {
  return engine == Queue::Pool ? AllowedInPSUM::False : AllowedInPSUM::True;
}
bool valid_engine_for_opcode(const RawInst& raw, Arch arch) {
  const OpcodeInfo* row = opcode_info(raw[0]);
  if (!row || !row->exists_on(arch)) return true;
  const Queue q = word_queue(raw);
  // A DMA queue's words (dma_copy, a nop): queue_executes_opcode's rule.
  return !is_compute_engine(q) || row->runs_on(q, arch);
}
bool valid_vector_dtype(std::uint8_t d) {
  return (d >= 0x01 && d <= 0x09) || (d >= 0x0B && d <= 0x0F);
}
bool vector_operand_valid(Addr4 a, std::uint8_t dtype, std::uint8_t channels, AllowedInPSUM psum,
                          Arch arch) {
  if (a.marker() == addr4::kMarkerAddrReg) return true;  // re-checked at run time
  if (a.marker() != addr4::kMarkerImm) return false;
  const Region r = region_of(a.address());
  if (!region_allowed(r, psum, AllowedInSBUF::True)) return false;
  return partition_of(a.address()) + std::uint32_t{channels} <= kNumPartitions &&
         std::uint64_t{offset_of(a.address())} + std::max(1u, dtype_size(dtype)) <=
             partition_capacity(r, arch);
}
bool same_element_count(const MemPattern3D& a, const MemPattern3D& b) {
  if (member_of(a) != MemMember::Tensor3D || member_of(b) != MemMember::Tensor3D) return true;
  const Tensor3D ta = pattern_t(a), tb = pattern_t(b);
  if (shape_from_register(ta.start_addr) || shape_from_register(tb.start_addr)) return true;
  return count_t3d(ta) == count_t3d(tb);
}
bool inputs_not_both_psum(Addr4 a, Addr4 b) {
  if (is_addr_reg(a) || is_addr_reg(b)) return true;  // re-checked at run time
  return !(region_of(a.address()) == Region::Psum && region_of(b.address()) == Region::Psum);
}

bool activation_reserved_zero(const S3D3Act& i) { return (i.flags & 0xFEu) == 0; }
bool activation_valid_func(std::uint8_t func) { return func < kNumActFuncs; }
bool activation_valid_reduce(std::uint8_t reduce) {
  return (reduce & 0x0Fu) <= 2 && (reduce >> 4) <= 3;
}
bool activation_reduce_op_on_nc(std::uint8_t reduce, Arch nc) {
  return (reduce & 0x0Fu) != static_cast<std::uint8_t>(ReduceOp::Max) ||
         nc_version(nc) >= nc_version(Arch::Cayman);
}

namespace {
bool binary_op(std::uint8_t op) {
  return op >= static_cast<std::uint8_t>(AluOp::Add) &&
         op <= static_cast<std::uint8_t>(AluOp::AbsMin);
}
bool is_op(std::uint8_t v, AluOp op) { return (v & kAluOpMask) == static_cast<std::uint8_t>(op); }
}  // namespace

bool tensor_tensor_reserved_zero(const S3D3Tt& i) {
  return (i.op & ~kAluOpMask) == 0 && all_zero(i.reserved0, sizeof i.reserved0) &&
         all_zero(i.reserved1, sizeof i.reserved1);
}
bool tensor_tensor_valid_op(std::uint8_t op, Queue engine) {
  const std::uint8_t o = op & kAluOpMask;
  if (!binary_op(o)) return false;
  if (engine != Queue::Pool) return o != static_cast<std::uint8_t>(AluOp::Power);
  return o <= static_cast<std::uint8_t>(AluOp::Min) || o == static_cast<std::uint8_t>(AluOp::Power);
}

bool tensor_scalar_reserved_zero(const S3D3Ts& i) {
  return (i.op0 & 0x20u) == 0 && (i.op1 & 0x20u) == 0 &&
         all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1);
}
bool tensor_scalar_valid_ops(std::uint8_t op0, std::uint8_t op1, Queue engine) {
  const std::uint8_t a = op0 & kAluOpMask, b = op1 & kAluOpMask;
  if (a == 0 || a >= kNumAluOps || b >= kNumAluOps) return false;
  if (engine == Queue::Act)
    return (is_op(a, AluOp::Multiply) && (is_op(b, AluOp::Add) || b == 0)) ||
           (is_op(a, AluOp::Add) && b == 0);
  if (engine == Queue::Pool) return is_op(a, AluOp::Rsqrt) && b == 0;
  return true;
}

bool tensor_reduce_reserved_zero(const S3D3Reduce& i) {
  return (i.op & 0x60u) == 0 && all_zero(i.reserved0, sizeof i.reserved0) &&
         all_zero(i.reserved1, sizeof i.reserved1);
}
bool tensor_reduce_valid_op(std::uint8_t op) {
  return is_op(op, AluOp::Add) || is_op(op, AluOp::Multiply) || is_op(op, AluOp::Max) ||
         is_op(op, AluOp::Min);
}
bool tensor_reduce_valid_axes(std::uint8_t axes) { return axes >= 1 && axes <= 3; }
bool tensor_reduce_valid_keepdims(std::uint8_t keepdims) { return keepdims <= 1; }
bool tensor_reduce_element_count_check(const S3D3Reduce& i) {
  if (member_of(i.src_mem_pattern) != MemMember::Tensor3D ||
      member_of(i.dst_mem_pattern) != MemMember::Tensor3D || !tensor_reduce_valid_axes(i.axes))
    return true;  // mem3d_valid's / tensor_reduce_valid_axes' failure
  const Tensor3D src = pattern_t(i.src_mem_pattern), dst = pattern_t(i.dst_mem_pattern);
  if (shape_from_register(src.start_addr) || shape_from_register(dst.start_addr)) return true;
  std::uint64_t kept = 1;
  for (unsigned d = i.axes; d < 3; ++d) kept *= src.num_elem[d];
  return count_t3d(dst) == kept;
}

bool reduce_src_fits_partition(const MemPattern3D& src, std::uint8_t dtype, Arch arch) {
  if (member_of(src) != MemMember::Tensor3D) return true;  // mem3d_valid's failure
  const Tensor3D s = pattern_t(src);
  if (shape_from_register(s.start_addr)) return true;  // at run time
  return count_t3d(s) * std::max(1u, dtype_size(dtype)) <= partition_capacity(Region::Sbuf, arch);
}

bool tensor_tensor_scan_reserved_zero(const S3D3Scan& i) {
  return (i.op0 & 0x20u) == 0 && (i.op1 & 0x60u) == 0;
}
bool tensor_tensor_scan_valid_ops(std::uint8_t op0, std::uint8_t op1) {
  return binary_op(op0 & kAluOpMask) && binary_op(op1 & kAluOpMask);
}

bool memset_reserved_zero(const S3D3Memset& i) {
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2) && all_zero(i.reserved3, sizeof i.reserved3);
}
bool iota_reserved_zero(const S3D3Iota& i) {
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1);
}
bool iota_valid_pattern(const S3D3Iota& i) {
  return i.num[0] != 0 && i.num[1] != 0 && i.num[2] != 0;
}
bool iota_element_count_check(const S3D3Iota& i) {
  if (member_of(i.dst_mem_pattern) != MemMember::Tensor3D || !iota_valid_pattern(i)) return true;
  const Tensor3D dst = pattern_t(i.dst_mem_pattern);
  if (shape_from_register(dst.start_addr)) return true;
  return std::uint64_t{i.num[0]} * i.num[1] * i.num[2] == count_t3d(dst);
}

bool unary_reserved_zero(const S3D3Unary& i) {
  return all_zero(i.reserved0, sizeof i.reserved0) && all_zero(i.reserved1, sizeof i.reserved1) &&
         all_zero(i.reserved2, sizeof i.reserved2);
}
namespace {
// The element counts of a unary word's src and dst; false with a register
// shape or a member that is not TENSOR3D (checked elsewhere).
bool unary_counts(const S3D3Unary& i, std::uint64_t& src, std::uint64_t& dst) {
  if (member_of(i.src_mem_pattern) != MemMember::Tensor3D ||
      member_of(i.dst_mem_pattern) != MemMember::Tensor3D)
    return false;
  const Tensor3D s = pattern_t(i.src_mem_pattern), d = pattern_t(i.dst_mem_pattern);
  if (shape_from_register(s.start_addr) || shape_from_register(d.start_addr)) return false;
  src = count_t3d(s);
  dst = count_t3d(d);
  return true;
}
}  // namespace
bool bn_stats_element_count_check(const S3D3Unary& i) {
  std::uint64_t src = 0, dst = 0;
  return !unary_counts(i, src, dst) || (src >= 1 && src <= 512 && dst == 6);
}
bool bn_aggr_element_count_check(const S3D3Unary& i) {
  std::uint64_t src = 0, dst = 0;
  return !unary_counts(i, src, dst) || (src >= 3 && src % 3 == 0 && dst == 2);
}
bool nc_transpose_valid_shape(const S3D3Unary& i) {
  std::uint64_t src = 0, dst = 0;
  return i.num_active_channels <= 32 && (!unary_counts(i, src, dst) || src <= 32);
}
bool nc_transpose_same_dtype(std::uint8_t in_dtype, std::uint8_t out_dtype) {
  return in_dtype == out_dtype;
}
bool nc_transpose_element_count_check(const S3D3Unary& i) {
  std::uint64_t src = 0, dst = 0;
  return !unary_counts(i, src, dst) || dst == i.num_active_channels;
}
bool nc_transpose_dst_partitions(const S3D3Unary& i) {
  std::uint64_t src = 0, dst = 0;
  const std::optional<unsigned> p = start_partition(i.dst_mem_pattern);
  return !p || !unary_counts(i, src, dst) || *p + src <= kNumPartitions;
}

// ---- DMA descriptor ---------------------------------------------------------------------
namespace {
constexpr std::uint8_t kHbm = static_cast<std::uint8_t>(DmaEndpointKind::Hbm);
constexpr std::uint8_t kSbuf = static_cast<std::uint8_t>(DmaEndpointKind::Sbuf);
constexpr std::uint8_t kAdd = static_cast<std::uint8_t>(DmaRmwOp::Add);
constexpr std::uint8_t kNone = static_cast<std::uint8_t>(DmaRmwOp::None);
// A valid immediate SBUF address of an SBUF endpoint (the ones the geometric
// predicates judge).
bool sbuf_start(const DmaEndpoint& e, std::uint32_t& addr) {
  if (e.kind != kSbuf || e.addr > addr4::kAddressMask) return false;
  addr = static_cast<std::uint32_t>(e.addr);
  return region_of(addr) == Region::Sbuf;
}
}  // namespace

bool nop_reserved_zero(const NopWord& i) { return all_zero(i.reserved, sizeof i.reserved); }
bool nop_valid_queue(std::uint8_t queue) { return queue < kNumQueues; }

bool dma_copy_reserved_zero(const DmaDescriptor& d) {
  return all_zero(d.reserved1, sizeof d.reserved1) &&
         all_zero(d.src.reserved, sizeof d.src.reserved) &&
         all_zero(d.dst.reserved, sizeof d.dst.reserved);
}
bool dma_valid_queue(std::uint8_t queue) { return queue < kNumDmaQueues; }
bool dma_valid_update_core(const DmaDescriptor& d) {
  return d.update_core == 0 ||
         (d.update_core <= kMaxDeviceCores &&
          d.events.update_mode != static_cast<std::uint8_t>(UpdateMode::None));
}
bool dma_valid_num_rows(std::uint8_t n) { return n >= 1 && n <= kDmaMaxRows; }
bool dma_valid_row_bytes(std::uint32_t row_bytes) { return row_bytes != 0; }
bool dma_valid_endpoint_kind(const DmaEndpoint& e) { return e.kind == kHbm || e.kind == kSbuf; }
bool dma_sbuf_endpoint_address(const DmaEndpoint& e) {
  std::uint32_t a = 0;
  return e.kind != kSbuf || sbuf_start(e, a);
}
bool dma_sbuf_endpoint_row_stride(const DmaEndpoint& e) {
  return e.kind != kSbuf || e.row_stride == 0;
}
bool dma_sbuf_rows_in_partitions(const DmaEndpoint& e, std::uint8_t num_rows) {
  std::uint32_t a = 0;
  if (!sbuf_start(e, a)) return true;  // another predicate's failure
  return partition_of(a) + num_rows <= kNumPartitions;
}
bool dma_sbuf_row_in_partition(const DmaEndpoint& e, std::uint32_t row_bytes, Arch arch) {
  std::uint32_t a = 0;
  if (!sbuf_start(e, a)) return true;
  return std::uint64_t{offset_of(a)} + row_bytes <= partition_capacity(Region::Sbuf, arch);
}
bool dma_hbm_in_capacity(const DmaEndpoint& e, std::uint8_t num_rows, std::uint32_t row_bytes,
                         Arch arch) {
  if (e.kind != kHbm) return true;
  const std::uint64_t cap = check_capacity(arch).hbm_bytes;
  const std::uint64_t rows = num_rows == 0 ? 1 : num_rows;
  // Every term below 2^64 / 2: no 64-bit sum wraps once addr < cap <= 2^40.
  if (e.addr >= cap) return false;
  const std::uint64_t last = e.addr + (rows - 1) * e.row_stride + row_bytes;
  return last <= cap;
}
bool dma_hbm_dst_rows_disjoint(const DmaEndpoint& dst, std::uint8_t num_rows,
                               std::uint32_t row_bytes) {
  return dst.kind != kHbm || num_rows <= 1 || dst.row_stride >= row_bytes;
}
bool dma_valid_rmw_op(std::uint8_t op) { return op == kNone || op == kAdd; }
bool dma_rmw_add_dtype(std::uint8_t d) {
  return (d >= 0x01 && d <= 0x09) || (d >= 0x0B && d <= 0x0F);
}
bool dma_valid_rmw_dtype(std::uint8_t op, std::uint8_t dtype) {
  return op != kAdd || dma_rmw_add_dtype(dtype);
}
bool dma_rmw_dtype_only_with_op(std::uint8_t op, std::uint8_t dtype) {
  return op != kNone || dtype == 0;
}
bool dma_rmw_row_bytes_multiple(std::uint8_t op, std::uint8_t dtype, std::uint32_t row_bytes) {
  if (op != kAdd || !dma_rmw_add_dtype(dtype)) return true;
  return row_bytes % dtype_size(dtype) == 0;
}

}  // namespace pred
}  // namespace tpb::isa

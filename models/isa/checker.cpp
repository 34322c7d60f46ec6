// The validity contracts per opcode and generation (seed 000 §2.1, seed 003
// §2.5, §3, §5, §6.1; SPEC §1, §4, §5). Every predicate of a contract runs,
// and each failure is reported by its name; a predicate applied to two
// operands is reported as "name(src)" / "name(dst)".
#include "models/isa/checker.h"

#include <algorithm>

#include "models/isa/opcode_table.h"
#include "models/isa/predicates.h"

namespace tpb::isa {
namespace {

using namespace pred;
using Sink = PredicateSink;

// The field predicates both forms share, in contract order (seed 000 §2.1).
template <typename Inst>
void dequant_fields(const Inst& i, Arch nc, Sink& f) {
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_tensor_dequantize_opcode(i.header), "has_tensor_dequantize_opcode");
  f(has_valid_nc_tens_dequant(nc), "has_valid_nc_tens_dequant");
  f(check_active_channels(i.num_active_channels), "check_active_channels");
  f(has_valid_dequant_fmt(i.dequant_fmt), "has_valid_dequant_fmt");
  f(has_valid_group_size(i.group_size), "has_valid_group_size");
  f(has_valid_dequant_fmt_group_size(i.dequant_fmt, i.group_size),
    "has_valid_dequant_fmt_group_size");
  f(s3d3_tens_dequant_reserved_zero(i), "s3d3_tens_dequant_reserved_zero");
  f(has_valid_tens_dequant_in_dtype(i.in_dtype), "has_valid_tens_dequant_in_dtype");
  f(has_valid_tens_dequant_out_dtype(i.out_dtype), "has_valid_tens_dequant_out_dtype");
}

// The in_dtype / MX-operand part shared by v5 LDWEIGHTS and MATMUL (SPEC §5).
// A predicate that applies to one operand form only passes on the other, so
// that every contract names each of its predicates on every word.
void v5_src_dtype(const MemPattern3D& src, std::uint8_t in_dtype, Sink& f) {
  const bool mx = mxtensorv2_pattern(pattern_addr(src));
  f(!mx || is_valid_mx_dtype(in_dtype), "is_valid_mx_dtype");
  f(mx || valid_plain_mm_dtype(in_dtype), "valid_plain_mm_dtype");
}
void v5_src_pattern(const MemPattern3D& src, std::uint8_t in_dtype, std::uint8_t rows, Arch nc,
                    Sink& f) {
  f(mem3d_valid(src, in_dtype, WriteTensor::False, AllowedInPSUM::False, AllowedInSBUF::True, nc,
                AllowIndirect::False, AllowMxTensorV2::True),
    "mem3d_valid(src)");
  f(check_m3d_active_channels(src, rows), "check_m3d_active_channels(src)");
  const bool mx = mxtensorv2_pattern(pattern_addr(src));
  f(!mx || valid_mx_sbuf_quadrant(pattern_mx(src).data_addr, pattern_mx(src).scale_addr),
    "valid_mx_sbuf_quadrant");
}

}  // namespace

namespace contract {

// seed 000 §2.1 (CAYMAN, plain TENSOR3D operands).
void tensor_dequantize_t3d(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3TensDequantV3>(raw);
  dequant_fields(i, nc, f);
  f(start_addr_active_channels(i.src_mem_pattern.start_addr, i.num_active_channels),
    "start_addr_active_channels(src)");
  f(start_addr_active_channels(i.dst_mem_pattern.start_addr, i.num_active_channels),
    "start_addr_active_channels(dst)");
  f(tensor3d_valid(i.src_mem_pattern, i.in_dtype, WriteTensor::False, AllowedInPSUM::False,
                   AllowedInSBUF::True, nc),
    "tensor3d_valid(src)");
  f(tensor3d_valid(i.dst_mem_pattern, i.out_dtype, WriteTensor::True, AllowedInPSUM::False,
                   AllowedInSBUF::True, nc),
    "tensor3d_valid(dst)");
  f(s3d3_tens_dequant_element_count_check_t3d(i), "s3d3_tens_dequant_element_count_check_t3d");
}

// seed 000 §2 CORRECTION (MARIANA / MAVERICK, MEM_PATTERN3D union operands).
void tensor_dequantize_m3d(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3TensDequant>(raw);
  dequant_fields(i, nc, f);
  f(check_m3d_active_channels(i.src_mem_pattern, i.num_active_channels),
    "check_m3d_active_channels(src)");
  f(check_m3d_active_channels(i.dst_mem_pattern, i.num_active_channels),
    "check_m3d_active_channels(dst)");
  // Seed 000 §2 CORRECTION: both operands are the MEM_PATTERN3D union
  // {TENSOR3D | INDIRECT16B | MXTENSOR_V2}.
  f(mem3d_valid(i.src_mem_pattern, i.in_dtype, WriteTensor::False, AllowedInPSUM::False,
                AllowedInSBUF::True, nc, AllowIndirect::True, AllowMxTensorV2::True),
    "mem3d_valid(src)");
  f(mem3d_valid(i.dst_mem_pattern, i.out_dtype, WriteTensor::True, AllowedInPSUM::False,
                AllowedInSBUF::True, nc, AllowIndirect::True, AllowMxTensorV2::True),
    "mem3d_valid(dst)");
  f(indirect_quadrant_check_src3d(i.src_mem_pattern), "indirect_quadrant_check_src3d");
  f(indirect_quadrant_check_src3d_dst3d(i.src_mem_pattern, i.dst_mem_pattern),
    "indirect_quadrant_check_src3d_dst3d");
  f(s3d3_tens_dequant_element_count_check_t3d(i), "s3d3_tens_dequant_element_count_check_t3d");
}

// seed 003 §2.5, §5, §6.1; SPEC §4.
void s3dmx1_quant(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3DMX1Quant>(raw);
  const MxTensor1D dst = pattern_t(i.dst_mem_pattern);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_quantize_mx_opcode(i.header), "has_quantize_mx_opcode");
  f(s3dmx1_quant_valid_nc(nc), "s3dmx1_quant_valid_nc");
  f(s3dmx1_quant_reserved_zero(i), "s3dmx1_quant_reserved_zero");
  f(s3dmx1_quant_valid_active_channels(i.num_active_channels),
    "s3dmx1_quant_valid_active_channels");
  f(is_valid_dtype(i.in_dtype, AllowFP32R::False), "is_valid_dtype");
  f(s3dmx1_quant_valid_in_dtype(i.in_dtype), "s3dmx1_quant_valid_in_dtype");
  f(is_valid_dtype_inc_fp4(i.out_dtype, AllowFP4::False), "is_valid_dtype_inc_fp4");
  f(s3dmx1_quant_valid_out_dtype(i.out_dtype), "s3dmx1_quant_valid_out_dtype");
  // SPEC §4: the src pattern counts elements of in_dtype (the seed's
  // "UINT32 view" is replaced by the element size of in_dtype).
  f(mem3d_valid(i.src_mem_pattern, i.in_dtype, WriteTensor::False, AllowedInPSUM::False,
                AllowedInSBUF::True, nc, AllowIndirect::False),
    "mem3d_valid(src)");
  f(check_m3d_active_channels(i.src_mem_pattern, i.num_active_channels),
    "check_m3d_active_channels(src)");
  f(mxmem1d_valid(i.dst_mem_pattern, 4, WriteTensor::True, nc), "mxmem1d_valid(dst)");
  f(check_mx1d_active_channels(i.dst_mem_pattern, i.num_active_channels),
    "check_mx1d_active_channels(dst)");
  f(valid_s3dmx1_quant_sbuf_quadrant(dst.start_addr, dst.scale_addr),
    "valid_s3dmx1_quant_sbuf_quadrant");
  f(s3dmx1_quant_element_count_check(i), "s3dmx1_quant_element_count_check");
}

// seed 003 §3.2 LdweightsMX (v4).
void smx1_lw(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<SMX1Lw>(raw);
  const MxTensor1D src = pattern_t(i.src_mem_pattern);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_ldweights_mx_opcode(i.header), "has_ldweights_mx_opcode");
  f(smx1_lw_valid_nc(nc), "smx1_lw_valid_nc");
  f(smx1_lw_reserved_zero(i), "smx1_lw_reserved_zero");
  f(is_valid_mx_dtype(i.in_dtype), "is_valid_mx_dtype");
  f(valid_row_grp_active_rows(i.row_grp, i.num_active_rows), "valid_row_grp_active_rows");
  f(valid_col_grp_active_cols(i.col_grp, i.num_active_cols), "valid_col_grp_active_cols");
  f(mxmem1d_valid(i.src_mem_pattern, mx_x4_bytes(i.in_dtype), WriteTensor::False, nc),
    "mxmem1d_valid(src)");
  f(check_mx1d_active_channels(i.src_mem_pattern, i.num_active_rows),
    "check_mx1d_active_channels(src)");
  f(valid_mx_sbuf_quadrant(src.start_addr, src.scale_addr), "valid_mx_sbuf_quadrant");
}

// seed 003 §3.2 MatmulMX (v4).
void smx1d3_mm(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<SMX1D3Mm>(raw);
  const MxTensor1D src = pattern_t(i.src_mem_pattern);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_matmul_mx_opcode(i.header), "has_matmul_mx_opcode");
  f(smx1d3_mm_valid_nc(nc), "smx1d3_mm_valid_nc");
  f(smx1d3_mm_reserved_zero(i), "smx1d3_mm_reserved_zero");
  f(is_valid_dtype_inc_fp4(i.in_dtype, AllowFP4::True), "is_valid_dtype_inc_fp4");
  f(valid_mm_out_dtype(i.out_dtype), "valid_mm_out_dtype");
  f(valid_mm_active_rows(i.num_active_rows), "valid_mm_active_rows");
  f(valid_psum_accumulate_flags(i.psum_accumulate_flags), "valid_psum_accumulate_flags");
  f(mxmem1d_valid(i.src_mem_pattern, mx_x4_bytes(i.in_dtype), WriteTensor::False, nc),
    "mxmem1d_valid(src)");
  f(check_mx1d_active_channels(i.src_mem_pattern, i.num_active_rows),
    "check_mx1d_active_channels(src)");
  f(valid_mx_sbuf_quadrant(src.start_addr, src.scale_addr), "valid_mx_sbuf_quadrant");
  f(mem3d_valid(i.dst_mem_pattern, i.out_dtype, WriteTensor::True, AllowedInPSUM::True,
                AllowedInSBUF::False, nc, AllowIndirect::False),
    "mem3d_valid(dst)");
}

// seed 003 §3.3 LDWEIGHTS (v5).
void s3_lw(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3Lw>(raw);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_ldweights_opcode(i.header), "has_ldweights_opcode");
  f(s3_lw_valid_nc(nc), "s3_lw_valid_nc");
  f(s3_lw_reserved_zero(i), "s3_lw_reserved_zero");
  f(s3_lw_mode_checks(i.src_mem_pattern), "s3_lw_mode_checks");
  v5_src_dtype(i.src_mem_pattern, i.in_dtype, f);
  f(valid_mx_perf_mode(i.mx_perf_mode), "valid_mx_perf_mode");
  f(mx_perf_mode_only_in_mx_mode(i.mx_perf_mode, i.src_mem_pattern),
    "mx_perf_mode_only_in_mx_mode");
  f(valid_row_grp_active_rows(i.row_grp, i.num_active_rows), "valid_row_grp_active_rows");
  f(valid_col_grp_active_cols(i.col_grp, i.num_active_cols), "valid_col_grp_active_cols");
  v5_src_pattern(i.src_mem_pattern, i.in_dtype, i.num_active_rows, nc, f);
}

// seed 003 §3.3 MATMUL (v5).
void s3d3_mm(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Mm>(raw);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_matmul_opcode(i.header), "has_matmul_opcode");
  f(s3d3_mm_valid_nc(nc), "s3d3_mm_valid_nc");
  f(s3d3_mm_reserved_zero(i), "s3d3_mm_reserved_zero");
  f(s3d3_mm_mode_checks(i.src_mem_pattern), "s3d3_mm_mode_checks");
  v5_src_dtype(i.src_mem_pattern, i.in_dtype, f);
  f(valid_mm_out_dtype(i.out_dtype), "valid_mm_out_dtype");
  f(valid_mm_active_rows(i.num_active_rows), "valid_mm_active_rows");
  f(valid_psum_accumulate_flags(i.psum_accumulate_flags), "valid_psum_accumulate_flags");
  f(valid_mx_perf_mode(i.mx_perf_mode), "valid_mx_perf_mode");
  f(mx_perf_mode_only_in_mx_mode(i.mx_perf_mode, i.src_mem_pattern),
    "mx_perf_mode_only_in_mx_mode");
  v5_src_pattern(i.src_mem_pattern, i.in_dtype, i.num_active_rows, nc, f);
  f(mem3d_valid(i.dst_mem_pattern, i.out_dtype, WriteTensor::True, AllowedInPSUM::True,
                AllowedInSBUF::False, nc, AllowIndirect::False),
    "mem3d_valid(dst)");
}

// seed 002 (SPEC §6): the instruction-level part only (see checker.h).
void tquant_block(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<TquantBlock>(raw);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_tquant_opcode(i.header), "has_tquant_opcode");
  f(tquant_valid_nc(nc), "tquant_valid_nc");
}

// SPEC §11 DVE tensor_copy (predicate names: conventions). It exists on
// every generation (TIMING.md [M]), so it has no generation predicate.
void tensor_copy(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3TensorCopy>(raw);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_tensor_copy_opcode(i.header), "has_tensor_copy_opcode");
  f(tensor_copy_reserved_zero(i), "tensor_copy_reserved_zero");
  f(check_active_channels(i.num_active_channels), "check_active_channels");
  f(is_valid_dtype(i.in_dtype, AllowFP32R::False), "is_valid_dtype(src)");
  f(is_valid_dtype(i.out_dtype, AllowFP32R::False), "is_valid_dtype(dst)");
  f(tensor_copy_valid_dtype_pair(i.in_dtype, i.out_dtype), "tensor_copy_valid_dtype_pair");
  // PSUM or SBUF on either side (SPEC §11); TENSOR3D operands only.
  f(mem3d_valid(i.src_mem_pattern, i.in_dtype, WriteTensor::False, AllowedInPSUM::True,
                AllowedInSBUF::True, nc, AllowIndirect::False),
    "mem3d_valid(src)");
  f(mem3d_valid(i.dst_mem_pattern, i.out_dtype, WriteTensor::True, AllowedInPSUM::True,
                AllowedInSBUF::True, nc, AllowIndirect::False),
    "mem3d_valid(dst)");
  f(check_m3d_active_channels(i.src_mem_pattern, i.num_active_channels),
    "check_m3d_active_channels(src)");
  f(check_m3d_active_channels(i.dst_mem_pattern, i.num_active_channels),
    "check_m3d_active_channels(dst)");
  f(tensor_copy_element_count_check(i), "tensor_copy_element_count_check");
}

// SPEC §10 DMA descriptor (predicate names: conventions). DMA exists on
// every generation (TIMING.md [J]): no generation predicate.
void dma_copy(const RawInst& raw, Arch nc, Sink& f) {
  const auto d = decode_as<DmaDescriptor>(raw);
  f(has_valid_neuron_header(d.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(d.events), "has_valid_neuron_events");
  f(has_dma_copy_opcode(d.header), "has_dma_copy_opcode");
  f(dma_copy_reserved_zero(d), "dma_copy_reserved_zero");
  f(dma_valid_queue(d.queue), "dma_valid_queue");
  f(dma_valid_update_core(d), "dma_valid_update_core");
  f(dma_valid_num_rows(d.num_rows), "dma_valid_num_rows");
  f(dma_valid_row_bytes(d.row_bytes), "dma_valid_row_bytes");
  f(dma_valid_endpoint_kind(d.src), "dma_valid_endpoint_kind(src)");
  f(dma_valid_endpoint_kind(d.dst), "dma_valid_endpoint_kind(dst)");
  f(dma_sbuf_endpoint_address(d.src), "dma_sbuf_endpoint_address(src)");
  f(dma_sbuf_endpoint_address(d.dst), "dma_sbuf_endpoint_address(dst)");
  f(dma_sbuf_endpoint_row_stride(d.src), "dma_sbuf_endpoint_row_stride(src)");
  f(dma_sbuf_endpoint_row_stride(d.dst), "dma_sbuf_endpoint_row_stride(dst)");
  f(dma_sbuf_rows_in_partitions(d.src, d.num_rows), "dma_sbuf_rows_in_partitions(src)");
  f(dma_sbuf_rows_in_partitions(d.dst, d.num_rows), "dma_sbuf_rows_in_partitions(dst)");
  f(dma_sbuf_row_in_partition(d.src, d.row_bytes, nc), "dma_sbuf_row_in_partition(src)");
  f(dma_sbuf_row_in_partition(d.dst, d.row_bytes, nc), "dma_sbuf_row_in_partition(dst)");
  f(dma_hbm_in_capacity(d.src, d.num_rows, d.row_bytes, nc), "dma_hbm_in_capacity(src)");
  f(dma_hbm_in_capacity(d.dst, d.num_rows, d.row_bytes, nc), "dma_hbm_in_capacity(dst)");
  f(dma_hbm_dst_rows_disjoint(d.dst, d.num_rows, d.row_bytes), "dma_hbm_dst_rows_disjoint");
  f(dma_valid_rmw_op(d.dst_rmw_op), "dma_valid_rmw_op");
  f(dma_valid_rmw_dtype(d.dst_rmw_op, d.rmw_dtype), "dma_valid_rmw_dtype");
  f(dma_rmw_dtype_only_with_op(d.dst_rmw_op, d.rmw_dtype), "dma_rmw_dtype_only_with_op");
  f(dma_rmw_row_bytes_multiple(d.dst_rmw_op, d.rmw_dtype, d.row_bytes),
    "dma_rmw_row_bytes_multiple");
}

// SPEC §18 the wait-only instruction (predicate names: conventions). It
// exists on every generation: no generation predicate.
void nop(const RawInst& raw, Arch, Sink& f) {
  const auto i = decode_as<NopWord>(raw);
  f(has_valid_neuron_header(i.header), "has_valid_neuron_header");
  f(has_valid_neuron_events(i.events), "has_valid_neuron_events");
  f(has_nop_opcode(i.header), "has_nop_opcode");
  f(nop_reserved_zero(i), "nop_reserved_zero");
  f(nop_valid_queue(i.queue), "nop_valid_queue");
}
}  // namespace contract

namespace {

CheckResult run(const RawInst& raw, Arch arch, std::string_view contract, ContractFn fn) {
  CheckResult r;
  r.contract = contract;
  PredicateSink sink(r.failed);
  fn(raw, arch, sink);
  return r;
}

}  // namespace

std::string_view contract_for_opcode(std::uint8_t opcode) {
  const OpcodeInfo* row = opcode_info(opcode);
  return row ? row->contract : std::string_view();
}

CheckResult check_instruction(const RawInst& raw, Arch arch) {
  const OpcodeInfo* row = opcode_info(raw[0]);
  const ContractFn fn = row ? row->contract_fn(arch) : nullptr;
  if (fn == nullptr) {
    CheckResult r;
    r.failed.push_back("has_known_opcode");
    return r;
  }
  return run(raw, arch, row->contract, fn);
}

CheckResult check_instruction(const RawInst& raw, Arch arch, const MemoryCapacity& cap) {
  const CapacityScope scope(cap);
  return check_instruction(raw, arch);
}

std::optional<CheckResult> check_as(const RawInst& raw, Arch arch, std::string_view contract) {
  for (const OpcodeInfo& row : opcode_table()) {
    if (row.contract.empty() || row.contract != contract) continue;
    const ContractFn fn = row.contract_fn(arch);
    if (fn == nullptr) return std::nullopt;
    return run(raw, arch, row.contract, fn);
  }
  return std::nullopt;
}

const std::vector<std::string_view>& all_contract_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const OpcodeInfo& row : opcode_table())
      if (!row.contract.empty()) v.push_back(row.contract);
    return v;
  }();
  return names;
}

// Every name the contracts offer their sink, failed or not, in table order:
// each name is written once, at its predicate's call.
const std::vector<std::string_view>& all_predicate_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> offered;
    PredicateSink every(offered, PredicateSink::Keep::Every);
    const RawInst word{};
    for (const OpcodeInfo& row : opcode_table())
      for (Arch a : {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick})
        if (const ContractFn fn = row.contract_fn(a)) fn(word, a, every);
    std::vector<std::string_view> v = {"has_known_opcode"};
    for (std::string_view n : offered)
      if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
    return v;
  }();
  return names;
}

}  // namespace tpb::isa

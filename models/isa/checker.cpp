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
  TPB_PRED(has_valid_neuron_header, i.header);
  TPB_PRED(has_valid_neuron_events, i.events);
  TPB_PRED(has_tensor_dequantize_opcode, i.header);
  TPB_PRED(has_valid_nc_tens_dequant, nc);
  TPB_PRED(check_active_channels, i.num_active_channels);
  TPB_PRED(has_valid_dequant_fmt, i.dequant_fmt);
  TPB_PRED(has_valid_group_size, i.group_size);
  TPB_PRED(has_valid_dequant_fmt_group_size, i.dequant_fmt, i.group_size);
  TPB_PRED(s3d3_tens_dequant_reserved_zero, i);
  TPB_PRED(has_valid_tens_dequant_in_dtype, i.in_dtype);
  TPB_PRED(has_valid_tens_dequant_out_dtype, i.out_dtype);
}

// The in_dtype / MX-operand part shared by v5 LDWEIGHTS and MATMUL (SPEC §5).
// A predicate that applies to one operand form only passes on the other, so
// that every contract names each of its predicates on every word.
void v5_src_dtype(const MemPattern3D& src, std::uint8_t in_dtype, Arch nc, Sink& f) {
  const bool mx = mxtensorv2_pattern(pattern_addr(src));
  TPB_PRED_IF(mx, is_valid_mx_dtype, in_dtype);
  TPB_PRED_IF(!mx, valid_plain_mm_dtype, in_dtype, nc);
}
// The rows of a load or a matmul: MX mode's groups of 32 (seed 003), plain
// mode's 1..128 (SPEC §18).
void pe_rows(const MemPattern3D& src, std::uint8_t row_grp, std::uint8_t rows, bool load, Sink& f) {
  const bool mx = mxtensorv2_pattern(pattern_addr(src));
  TPB_PRED_IF(mx && load, valid_row_grp_active_rows, row_grp, rows);
  TPB_PRED_IF(!mx && load, valid_plain_row_grp_active_rows, row_grp, rows);
  TPB_PRED_IF(mx && !load, valid_mm_active_rows, rows);
  TPB_PRED_IF(!mx && !load, valid_plain_mm_active_rows, rows);
}
void v5_src_pattern(const MemPattern3D& src, std::uint8_t in_dtype, std::uint8_t rows, Arch nc,
                    Sink& f) {
  TPB_PRED_ON(src, mem3d_valid, src, in_dtype, WriteTensor::False, AllowedInPSUM::False,
              AllowedInSBUF::True, nc, AllowIndirect::False, AllowMxTensorV2::True);
  TPB_PRED_ON(src, check_m3d_active_channels, src, rows);
  const bool mx = mxtensorv2_pattern(pattern_addr(src));
  TPB_PRED_IF(mx, valid_mx_sbuf_quadrant, pattern_mx(src).data_addr, pattern_mx(src).scale_addr);
}

constexpr std::uint8_t kFp32Dtype = static_cast<std::uint8_t>(Dtype::Fp32);

// An operand of the vector instructions (SPEC §18): a TENSOR3D pattern in
// SBUF, or in PSUM on every engine but GpSimd, of a vector DTYPE.
void vector_src(const MemPattern3D& src, std::uint8_t dtype, std::uint8_t ch, Queue eng, Arch nc,
                Sink& f) {
  TPB_PRED_ON(src, valid_vector_dtype, dtype);
  TPB_PRED_ON(src, mem3d_valid, src, dtype, WriteTensor::False, psum_for(eng), AllowedInSBUF::True,
              nc, AllowIndirect::False);
  TPB_PRED_ON(src, check_m3d_active_channels, src, ch);
}
void vector_dst(const MemPattern3D& dst, std::uint8_t dtype, std::uint8_t ch, Queue eng, Arch nc,
                Sink& f) {
  TPB_PRED_ON(dst, valid_vector_dtype, dtype);
  TPB_PRED_ON(dst, mem3d_valid, dst, dtype, WriteTensor::True, psum_for(eng), AllowedInSBUF::True,
              nc, AllowIndirect::False);
  TPB_PRED_ON(dst, check_m3d_active_channels, dst, ch);
}
// The second source (Steps3D: the first's shape).
void vector_src1(const MemPattern3D& src, const Steps3D& s1, std::uint8_t dtype, std::uint8_t ch,
                 Queue eng, Arch nc, Sink& f) {
  const Tensor3D t = steps3d_pattern(s1, pattern_t(src));
  TPB_PRED_ON(src1, valid_vector_dtype, dtype);
  TPB_PRED_ON(src1, tensor3d_valid, t, dtype, WriteTensor::False, psum_for(eng),
              AllowedInSBUF::True, nc);
  TPB_PRED_ON(src1, start_addr_active_channels, t.start_addr, ch);
}
// The head of every SPEC §18 word: its header, events, opcode and reserved
// bytes.
#define TPB_VECTOR_HEAD(i, opcode_pred, reserved_pred) \
  TPB_PRED(has_valid_neuron_header, (i).header);       \
  TPB_PRED(has_valid_neuron_events, (i).events);       \
  TPB_PRED(opcode_pred, (i).header);                   \
  TPB_PRED(reserved_pred, i)

// The one-input layout's channels and operands.
void unary_operands(const S3D3Unary& i, Queue eng, Arch nc, Sink& f) {
  TPB_PRED(check_active_channels, i.num_active_channels);
  vector_src(i.src_mem_pattern, i.in_dtype, i.num_active_channels, eng, nc, f);
  vector_dst(i.dst_mem_pattern, i.out_dtype, i.num_active_channels, eng, nc, f);
}

}  // namespace

namespace contract {

// seed 000 §2.1 (CAYMAN, plain TENSOR3D operands).
void tensor_dequantize_t3d(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3TensDequantV3>(raw);
  dequant_fields(i, nc, f);
  TPB_PRED_ON(src, start_addr_active_channels, i.src_mem_pattern.start_addr, i.num_active_channels);
  TPB_PRED_ON(dst, start_addr_active_channels, i.dst_mem_pattern.start_addr, i.num_active_channels);
  TPB_PRED_ON(src, tensor3d_valid, i.src_mem_pattern, i.in_dtype, WriteTensor::False,
              AllowedInPSUM::False, AllowedInSBUF::True, nc);
  TPB_PRED_ON(dst, tensor3d_valid, i.dst_mem_pattern, i.out_dtype, WriteTensor::True,
              AllowedInPSUM::False, AllowedInSBUF::True, nc);
  TPB_PRED(s3d3_tens_dequant_element_count_check_t3d, i);
}

// seed 000 §2 CORRECTION (MARIANA / MAVERICK, MEM_PATTERN3D union operands).
void tensor_dequantize_m3d(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3TensDequant>(raw);
  dequant_fields(i, nc, f);
  TPB_PRED_ON(src, check_m3d_active_channels, i.src_mem_pattern, i.num_active_channels);
  TPB_PRED_ON(dst, check_m3d_active_channels, i.dst_mem_pattern, i.num_active_channels);
  // Seed 000 §2 CORRECTION: both operands are the MEM_PATTERN3D union
  // {TENSOR3D | INDIRECT16B | MXTENSOR_V2}.
  TPB_PRED_ON(src, mem3d_valid, i.src_mem_pattern, i.in_dtype, WriteTensor::False,
              AllowedInPSUM::False, AllowedInSBUF::True, nc, AllowIndirect::True,
              AllowMxTensorV2::True);
  TPB_PRED_ON(dst, mem3d_valid, i.dst_mem_pattern, i.out_dtype, WriteTensor::True,
              AllowedInPSUM::False, AllowedInSBUF::True, nc, AllowIndirect::True,
              AllowMxTensorV2::True);
  TPB_PRED(indirect_quadrant_check_src3d, i.src_mem_pattern);
  TPB_PRED(indirect_quadrant_check_src3d_dst3d, i.src_mem_pattern, i.dst_mem_pattern);
  TPB_PRED(s3d3_tens_dequant_element_count_check_t3d, i);
}

// seed 003 §2.5, §5, §6.1; SPEC §4.
void s3dmx1_quant(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3DMX1Quant>(raw);
  const MxTensor1D dst = pattern_t(i.dst_mem_pattern);
  TPB_PRED(has_valid_neuron_header, i.header);
  TPB_PRED(has_valid_neuron_events, i.events);
  TPB_PRED(has_quantize_mx_opcode, i.header);
  TPB_PRED(s3dmx1_quant_valid_nc, nc);
  TPB_PRED(s3dmx1_quant_reserved_zero, i);
  TPB_PRED(s3dmx1_quant_valid_active_channels, i.num_active_channels);
  TPB_PRED(is_valid_dtype, i.in_dtype, AllowFP32R::False);
  TPB_PRED(s3dmx1_quant_valid_in_dtype, i.in_dtype);
  TPB_PRED(is_valid_dtype_inc_fp4, i.out_dtype, AllowFP4::False);
  TPB_PRED(s3dmx1_quant_valid_out_dtype, i.out_dtype);
  // SPEC §4: the src pattern counts elements of in_dtype (the seed's
  // "UINT32 view" is replaced by the element size of in_dtype).
  TPB_PRED_ON(src, mem3d_valid, i.src_mem_pattern, i.in_dtype, WriteTensor::False,
              AllowedInPSUM::False, AllowedInSBUF::True, nc, AllowIndirect::False);
  TPB_PRED_ON(src, check_m3d_active_channels, i.src_mem_pattern, i.num_active_channels);
  TPB_PRED_ON(dst, mxmem1d_valid, i.dst_mem_pattern, 4, WriteTensor::True, nc);
  TPB_PRED_ON(dst, check_mx1d_active_channels, i.dst_mem_pattern, i.num_active_channels);
  TPB_PRED(valid_s3dmx1_quant_sbuf_quadrant, dst.start_addr, dst.scale_addr);
  TPB_PRED(s3dmx1_quant_element_count_check, i);
}

// seed 003 §3.2 LdweightsMX (v4).
void smx1_lw(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<SMX1Lw>(raw);
  const MxTensor1D src = pattern_t(i.src_mem_pattern);
  TPB_PRED(has_valid_neuron_header, i.header);
  TPB_PRED(has_valid_neuron_events, i.events);
  TPB_PRED(has_ldweights_mx_opcode, i.header);
  TPB_PRED(smx1_lw_valid_nc, nc);
  TPB_PRED(smx1_lw_reserved_zero, i);
  TPB_PRED(is_valid_mx_dtype, i.in_dtype);
  TPB_PRED(valid_row_grp_active_rows, i.row_grp, i.num_active_rows);
  TPB_PRED(valid_col_grp_active_cols, i.col_grp, i.num_active_cols);
  TPB_PRED_ON(src, mxmem1d_valid, i.src_mem_pattern, mx_x4_bytes(i.in_dtype), WriteTensor::False,
              nc);
  TPB_PRED_ON(src, check_mx1d_active_channels, i.src_mem_pattern, i.num_active_rows);
  TPB_PRED(valid_mx_sbuf_quadrant, src.start_addr, src.scale_addr);
}

// seed 003 §3.2 MatmulMX (v4).
void smx1d3_mm(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<SMX1D3Mm>(raw);
  const MxTensor1D src = pattern_t(i.src_mem_pattern);
  TPB_PRED(has_valid_neuron_header, i.header);
  TPB_PRED(has_valid_neuron_events, i.events);
  TPB_PRED(has_matmul_mx_opcode, i.header);
  TPB_PRED(smx1d3_mm_valid_nc, nc);
  TPB_PRED(smx1d3_mm_reserved_zero, i);
  TPB_PRED(is_valid_dtype_inc_fp4, i.in_dtype, AllowFP4::True);
  TPB_PRED(valid_mm_out_dtype, i.out_dtype);
  TPB_PRED(valid_mm_active_rows, i.num_active_rows);
  TPB_PRED(valid_psum_accumulate_flags, i.psum_accumulate_flags);
  TPB_PRED_ON(src, mxmem1d_valid, i.src_mem_pattern, mx_x4_bytes(i.in_dtype), WriteTensor::False,
              nc);
  TPB_PRED_ON(src, check_mx1d_active_channels, i.src_mem_pattern, i.num_active_rows);
  TPB_PRED(valid_mx_sbuf_quadrant, src.start_addr, src.scale_addr);
  TPB_PRED_ON(dst, mem3d_valid, i.dst_mem_pattern, i.out_dtype, WriteTensor::True,
              AllowedInPSUM::True, AllowedInSBUF::False, nc, AllowIndirect::False);
}

// seed 003 §3.3 LDWEIGHTS (v5 MX mode; plain mode on every generation).
void s3_lw(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3Lw>(raw);
  TPB_PRED(has_valid_neuron_header, i.header);
  TPB_PRED(has_valid_neuron_events, i.events);
  TPB_PRED(has_ldweights_opcode, i.header);
  TPB_PRED(s3_lw_valid_nc, nc, i.src_mem_pattern);
  TPB_PRED(s3_lw_reserved_zero, i);
  TPB_PRED(s3_lw_mode_checks, i.src_mem_pattern);
  v5_src_dtype(i.src_mem_pattern, i.in_dtype, nc, f);
  TPB_PRED(valid_mx_perf_mode, i.mx_perf_mode);
  TPB_PRED(mx_perf_mode_only_in_mx_mode, i.mx_perf_mode, i.src_mem_pattern);
  TPB_PRED(valid_matmul_perf_mode, i.perf, i.in_dtype, nc);
  TPB_PRED(plain_fields_only_in_plain_mode, i.perf, 0, i.src_mem_pattern);
  pe_rows(i.src_mem_pattern, i.row_grp, i.num_active_rows, true, f);
  TPB_PRED(valid_col_grp_active_cols, i.col_grp, i.num_active_cols);
  v5_src_pattern(i.src_mem_pattern, i.in_dtype, i.num_active_rows, nc, f);
}

// seed 003 §3.3 MATMUL (v5 MX mode; plain mode on every generation).
void s3d3_mm(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Mm>(raw);
  TPB_PRED(has_valid_neuron_header, i.header);
  TPB_PRED(has_valid_neuron_events, i.events);
  TPB_PRED(has_matmul_opcode, i.header);
  TPB_PRED(s3d3_mm_valid_nc, nc, i.src_mem_pattern);
  TPB_PRED(s3d3_mm_reserved_zero, i);
  TPB_PRED(s3d3_mm_mode_checks, i.src_mem_pattern);
  v5_src_dtype(i.src_mem_pattern, i.in_dtype, nc, f);
  TPB_PRED_IF(i.transpose != 1, valid_mm_out_dtype, i.out_dtype);
  TPB_PRED_IF(i.transpose == 1, matmul_transpose_out_dtype, i.out_dtype, i.in_dtype);
  pe_rows(i.src_mem_pattern, 0, i.num_active_rows, false, f);
  TPB_PRED(valid_psum_accumulate_flags, i.psum_accumulate_flags);
  TPB_PRED(valid_mx_perf_mode, i.mx_perf_mode);
  TPB_PRED(mx_perf_mode_only_in_mx_mode, i.mx_perf_mode, i.src_mem_pattern);
  TPB_PRED(valid_matmul_perf_mode, i.perf, i.in_dtype, nc);
  TPB_PRED(valid_matmul_transpose, i.transpose);
  TPB_PRED(plain_fields_only_in_plain_mode, i.perf, i.transpose, i.src_mem_pattern);
  v5_src_pattern(i.src_mem_pattern, i.in_dtype, i.num_active_rows, nc, f);
  TPB_PRED_ON(dst, mem3d_valid, i.dst_mem_pattern, i.out_dtype, WriteTensor::True,
              AllowedInPSUM::True, AllowedInSBUF::False, nc, AllowIndirect::False);
}

// seed 002 (SPEC §6): the instruction-level part only (see checker.h).
void tquant_block(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<TquantBlock>(raw);
  TPB_PRED(has_valid_neuron_header, i.header);
  TPB_PRED(has_valid_neuron_events, i.events);
  TPB_PRED(has_tquant_opcode, i.header);
  TPB_PRED(tquant_valid_nc, nc);
}

// SPEC §11, §18 tensor_copy (predicate names: conventions). It exists on
// every generation (TIMING.md [M]), so it has no generation predicate.
void tensor_copy(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3TensorCopy>(raw);
  TPB_VECTOR_HEAD(i, has_tensor_copy_opcode, tensor_copy_reserved_zero);
  unary_operands(i, word_engine(raw, nc, Opcode::TensorCopy), nc, f);
  TPB_PRED(tensor_copy_element_count_check, i);
}

// SPEC §18 activation: dst = f(src x scale + bias), the optional reduce.
void activation(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Act>(raw);
  const Queue eng = word_engine(raw, nc, Opcode::Activation);
  const std::uint8_t ch = i.num_active_channels;
  TPB_VECTOR_HEAD(i, has_activation_opcode, activation_reserved_zero);
  TPB_PRED(check_active_channels, ch);
  TPB_PRED(activation_valid_func, i.func);
  vector_src(i.src_mem_pattern, i.in_dtype, ch, eng, nc, f);
  vector_dst(i.dst_mem_pattern, i.out_dtype, ch, eng, nc, f);
  TPB_PRED_ON(dst, same_element_count, i.src_mem_pattern, i.dst_mem_pattern);
  TPB_PRED_ON_IF(i.flags & 1u, scale, vector_operand_valid, Addr4{i.scale}, kFp32Dtype, ch,
                 psum_for(eng), nc);
  TPB_PRED_ON_IF(i.bias_dtype != 0, bias, valid_vector_dtype, i.bias_dtype);
  TPB_PRED_ON_IF(i.bias_dtype != 0, bias, vector_operand_valid, i.bias_addr, i.bias_dtype, ch,
                 psum_for(eng), nc);
  TPB_PRED(activation_valid_reduce, i.reduce);
  TPB_PRED(activation_reduce_op_on_nc, i.reduce, nc);
  TPB_PRED_ON_IF(i.reduce_dtype != 0, reduce_res, valid_vector_dtype, i.reduce_dtype);
  TPB_PRED_ON_IF(i.reduce_dtype != 0, reduce_res, vector_operand_valid, i.reduce_addr,
                 i.reduce_dtype, ch, psum_for(eng), nc);
}

// SPEC §18 tensor_tensor: dst = src <op> src1.
void tensor_tensor(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Tt>(raw);
  const Queue eng = word_engine(raw, nc, Opcode::TensorTensor);
  const std::uint8_t ch = i.num_active_channels;
  TPB_VECTOR_HEAD(i, has_tensor_tensor_opcode, tensor_tensor_reserved_zero);
  TPB_PRED(check_active_channels, ch);
  TPB_PRED(tensor_tensor_valid_op, i.op, eng);
  vector_src(i.src_mem_pattern, i.in_dtype, ch, eng, nc, f);
  vector_src1(i.src_mem_pattern, i.src1, i.in1_dtype, ch, eng, nc, f);
  vector_dst(i.dst_mem_pattern, i.out_dtype, ch, eng, nc, f);
  TPB_PRED(inputs_not_both_psum, pattern_addr(i.src_mem_pattern),
           steps3d_pattern(i.src1, pattern_t(i.src_mem_pattern)).start_addr);
  TPB_PRED_ON(dst, same_element_count, i.src_mem_pattern, i.dst_mem_pattern);
}

// SPEC §18 tensor_scalar: dst = (src <op0> operand0) <op1> operand1.
void tensor_scalar(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Ts>(raw);
  const Queue eng = word_engine(raw, nc, Opcode::TensorScalar);
  const std::uint8_t ch = i.num_active_channels;
  TPB_VECTOR_HEAD(i, has_tensor_scalar_opcode, tensor_scalar_reserved_zero);
  TPB_PRED(check_active_channels, ch);
  TPB_PRED(tensor_scalar_valid_ops, i.op0, i.op1, eng);
  vector_src(i.src_mem_pattern, i.in_dtype, ch, eng, nc, f);
  vector_dst(i.dst_mem_pattern, i.out_dtype, ch, eng, nc, f);
  TPB_PRED_ON(dst, same_element_count, i.src_mem_pattern, i.dst_mem_pattern);
  TPB_PRED_ON_IF(i.op0 & kAluVectorBit, operand0, vector_operand_valid, Addr4{i.operand0},
                 kFp32Dtype, ch, psum_for(eng), nc);
  TPB_PRED_ON_IF(i.op1 & kAluVectorBit, operand1, vector_operand_valid, Addr4{i.operand1},
                 kFp32Dtype, ch, psum_for(eng), nc);
}

// SPEC §18 tensor_reduce: the innermost `axes` dimensions reduced.
void tensor_reduce(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Reduce>(raw);
  const Queue eng = word_engine(raw, nc, Opcode::TensorReduce);
  const std::uint8_t ch = i.num_active_channels;
  TPB_VECTOR_HEAD(i, has_tensor_reduce_opcode, tensor_reduce_reserved_zero);
  TPB_PRED(check_active_channels, ch);
  TPB_PRED(tensor_reduce_valid_op, i.op);
  TPB_PRED(tensor_reduce_valid_axes, i.axes);
  TPB_PRED(tensor_reduce_valid_keepdims, i.keepdims);
  vector_src(i.src_mem_pattern, i.in_dtype, ch, eng, nc, f);
  vector_dst(i.dst_mem_pattern, i.out_dtype, ch, eng, nc, f);
  TPB_PRED(tensor_reduce_element_count_check, i);
  TPB_PRED(reduce_src_fits_partition, i.src_mem_pattern, i.in_dtype, nc);
}

// SPEC §18 tensor_tensor_scan: acc = op1(op0(src[k], acc), src1[k]).
void tensor_tensor_scan(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Scan>(raw);
  const Queue eng = word_engine(raw, nc, Opcode::TensorTensorScan);
  const std::uint8_t ch = i.num_active_channels;
  TPB_VECTOR_HEAD(i, has_tensor_tensor_scan_opcode, tensor_tensor_scan_reserved_zero);
  TPB_PRED(check_active_channels, ch);
  TPB_PRED(tensor_tensor_scan_valid_ops, i.op0, i.op1);
  vector_src(i.src_mem_pattern, i.in_dtype, ch, eng, nc, f);
  vector_src1(i.src_mem_pattern, i.src1, i.in1_dtype, ch, eng, nc, f);
  vector_dst(i.dst_mem_pattern, i.out_dtype, ch, eng, nc, f);
  TPB_PRED(inputs_not_both_psum, pattern_addr(i.src_mem_pattern),
           steps3d_pattern(i.src1, pattern_t(i.src_mem_pattern)).start_addr);
  TPB_PRED_ON(dst, same_element_count, i.src_mem_pattern, i.dst_mem_pattern);
  TPB_PRED_ON_IF(i.op0 & kAluVectorBit, initial, vector_operand_valid, Addr4{i.initial}, kFp32Dtype,
                 ch, psum_for(eng), nc);
}

// SPEC §18 memset.
void memset(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Memset>(raw);
  TPB_VECTOR_HEAD(i, has_memset_opcode, memset_reserved_zero);
  TPB_PRED(check_active_channels, i.num_active_channels);
  vector_dst(i.dst_mem_pattern, i.out_dtype, i.num_active_channels,
             word_engine(raw, nc, Opcode::Memset), nc, f);
}

// SPEC §18 iota: the destination is in SBUF (nki.isa).
void iota(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Iota>(raw);
  TPB_VECTOR_HEAD(i, has_iota_opcode, iota_reserved_zero);
  TPB_PRED(check_active_channels, i.num_active_channels);
  TPB_PRED(iota_valid_pattern, i);
  vector_dst(i.dst_mem_pattern, i.out_dtype, i.num_active_channels, Queue::Pool, nc, f);
  TPB_PRED(iota_element_count_check, i);
}

// SPEC §18 reciprocal, bn_stats, bn_aggr, nc_transpose (the DVE's).
void reciprocal(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Unary>(raw);
  TPB_VECTOR_HEAD(i, has_reciprocal_opcode, unary_reserved_zero);
  unary_operands(i, word_engine(raw, nc, Opcode::Reciprocal), nc, f);
  TPB_PRED_ON(dst, same_element_count, i.src_mem_pattern, i.dst_mem_pattern);
}
void bn_stats(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Unary>(raw);
  TPB_VECTOR_HEAD(i, has_bn_stats_opcode, unary_reserved_zero);
  unary_operands(i, word_engine(raw, nc, Opcode::BnStats), nc, f);
  TPB_PRED(bn_stats_element_count_check, i);
}
void bn_aggr(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Unary>(raw);
  TPB_VECTOR_HEAD(i, has_bn_aggr_opcode, unary_reserved_zero);
  unary_operands(i, word_engine(raw, nc, Opcode::BnAggr), nc, f);
  TPB_PRED(bn_aggr_element_count_check, i);
  TPB_PRED(reduce_src_fits_partition, i.src_mem_pattern, i.in_dtype, nc);
}
void nc_transpose(const RawInst& raw, Arch nc, Sink& f) {
  const auto i = decode_as<S3D3Unary>(raw);
  const Queue eng = word_engine(raw, nc, Opcode::NcTranspose);
  TPB_VECTOR_HEAD(i, has_nc_transpose_opcode, unary_reserved_zero);
  TPB_PRED(check_active_channels, i.num_active_channels);
  TPB_PRED(nc_transpose_valid_shape, i);
  TPB_PRED(nc_transpose_same_dtype, i.in_dtype, i.out_dtype);
  vector_src(i.src_mem_pattern, i.in_dtype, i.num_active_channels, eng, nc, f);
  vector_dst(i.dst_mem_pattern, i.out_dtype, 1, eng, nc, f);
  TPB_PRED(nc_transpose_element_count_check, i);
  TPB_PRED(nc_transpose_dst_partitions, i);
}

// SPEC §10 DMA descriptor (predicate names: conventions). DMA exists on
// every generation (TIMING.md [J]): no generation predicate.
void dma_copy(const RawInst& raw, Arch nc, Sink& f) {
  const auto d = decode_as<DmaDescriptor>(raw);
  TPB_PRED(has_valid_neuron_header, d.header);
  TPB_PRED(has_valid_neuron_events, d.events);
  TPB_PRED(has_dma_copy_opcode, d.header);
  TPB_PRED(dma_copy_reserved_zero, d);
  TPB_PRED(dma_valid_queue, d.queue);
  TPB_PRED(dma_valid_update_core, d);
  TPB_PRED(dma_valid_num_rows, d.num_rows);
  TPB_PRED(dma_valid_row_bytes, d.row_bytes);
  TPB_PRED_ON(src, dma_valid_endpoint_kind, d.src);
  TPB_PRED_ON(dst, dma_valid_endpoint_kind, d.dst);
  TPB_PRED_ON(src, dma_sbuf_endpoint_address, d.src);
  TPB_PRED_ON(dst, dma_sbuf_endpoint_address, d.dst);
  TPB_PRED_ON(src, dma_sbuf_endpoint_row_stride, d.src);
  TPB_PRED_ON(dst, dma_sbuf_endpoint_row_stride, d.dst);
  TPB_PRED_ON(src, dma_sbuf_rows_in_partitions, d.src, d.num_rows);
  TPB_PRED_ON(dst, dma_sbuf_rows_in_partitions, d.dst, d.num_rows);
  TPB_PRED_ON(src, dma_sbuf_row_in_partition, d.src, d.row_bytes, nc);
  TPB_PRED_ON(dst, dma_sbuf_row_in_partition, d.dst, d.row_bytes, nc);
  TPB_PRED_ON(src, dma_hbm_in_capacity, d.src, d.num_rows, d.row_bytes, nc);
  TPB_PRED_ON(dst, dma_hbm_in_capacity, d.dst, d.num_rows, d.row_bytes, nc);
  TPB_PRED(dma_hbm_dst_rows_disjoint, d.dst, d.num_rows, d.row_bytes);
  TPB_PRED(dma_valid_rmw_op, d.dst_rmw_op);
  TPB_PRED(dma_valid_rmw_dtype, d.dst_rmw_op, d.rmw_dtype);
  TPB_PRED(dma_rmw_dtype_only_with_op, d.dst_rmw_op, d.rmw_dtype);
  TPB_PRED(dma_rmw_row_bytes_multiple, d.dst_rmw_op, d.rmw_dtype, d.row_bytes);
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
  CheckResult r = run(raw, arch, row->contract, fn);
  // Where it runs (SPEC §18): the engine its header names runs the opcode.
  PredicateSink f(r.failed);
  TPB_PRED(valid_engine_for_opcode, raw, arch);
  return r;
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
    std::vector<std::string_view> v = {"has_known_opcode", "valid_engine_for_opcode"};
    for (std::string_view n : offered)
      if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
    return v;
  }();
  return names;
}

}  // namespace tpb::isa

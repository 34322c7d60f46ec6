// Validity predicates of the seeds, one C++ function per predicate with the
// seed's name (SPEC §1). Pure C++. The contracts that combine them live in
// checker.cpp; docs/PREDICATES.md lists every predicate and its source.
//
// Predicates take decoded fields (never raw enum casts: every field is the raw
// byte) plus the generation where a capacity or a gate depends on it. Names
// not in the seeds are invented in the seeds' style and marked "convention".
#pragma once

#include <cstdint>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"

namespace tpb::isa {

// Access-mode flags of the seeds' pattern predicates (seed 000 §2.1).
enum class WriteTensor : bool { False = false, True = true };
enum class AllowedInPSUM : bool { False = false, True = true };
enum class AllowedInSBUF : bool { False = false, True = true };
enum class AllowFP32R : bool { False = false, True = true };
enum class AllowFP4 : bool { False = false, True = true };
// Which MEM_PATTERN3D union members an operand may use (convention).
enum class AllowIndirect : bool { False = false, True = true };
enum class AllowMxTensorV2 : bool { False = false, True = true };

// Union members read as their own struct without type punning.
Tensor3D pattern_t(const MemPattern3D& p);
MxTensorV2 pattern_mx(const MemPattern3D& p);
MxTensor1D pattern_t(const MxMemPattern1D& p);
// The first ADDR4 of a MEM_PATTERN3D: t.start_addr, i.data_addr, mx.data_addr
// (all at byte 0). Its marker selects the union member.
Addr4 pattern_addr(const MemPattern3D& p);

// INDIRECT16B as interpreted by this model (convention; the seeds give no
// layout): bytes 0..3 ADDR4 data_addr (marker 0b00010 selects the member),
// bytes 4..7 ADDR4 index_addr (SBUF address of the index list), bytes 8..15
// opaque. Only the quadrant checks and mem3d_valid read it; the engines fault
// "indirect addressing not modelled" at run time.
struct IndirectView {
  Addr4 data_addr;
  Addr4 index_addr;
};
IndirectView pattern_i(const MemPattern3D& p);

// Union member selected by the first ADDR4's marker (convention for INDIRECT).
enum class MemMember : std::uint8_t { Tensor3D, Indirect, MxTensorV2 };
MemMember member_of(const MemPattern3D& p);

// Bytes of one x4 MX element (4 contraction values, SPEC §5): FP4/INT4 -> 2
// (u16), else 4 x the element size (FP8 -> u32). Convention.
unsigned mx_x4_bytes(std::uint8_t dtype);

// Capacity in bytes of one partition of `r` on `arch` (0 for the SFU tile
// file and the control region, which no pattern may address): the
// generation's default, or inside a CapacityScope the core's configured one.
std::uint32_t partition_capacity(Region r, Arch arch);
// The capacities the predicates judge against (SBUF and PSUM per partition,
// HBM): the generation's, or those of the CapacityScope open on this thread.
MemoryCapacity check_capacity(Arch arch);
// For its lifetime, the predicates on this thread judge against `cap` (a
// core's configured capacities, from its timing profile) instead of the
// generation's defaults: check_instruction(raw, arch, cap) opens one, so a
// profile that enlarges HBM or SBUF is judged as the run's memories are.
class CapacityScope {
 public:
  explicit CapacityScope(const MemoryCapacity& cap);
  ~CapacityScope();
  CapacityScope(const CapacityScope&) = delete;
  CapacityScope& operator=(const CapacityScope&) = delete;

 private:
  const MemoryCapacity* previous_;
};

namespace pred {

// ---- HEADER / EVENTS (SPEC §2) -------------------------------------------
// inst_word_len == 16, debug_cmd's bits 3:0 in {0 none, 1 trace marker}
// and its engine selector (bits 7:4, SPEC §18) 0..5.
bool has_valid_neuron_header(const Header& h);
// wait_mode <= 2, update_mode <= 3, wait_idx and update_idx < 64.
bool has_valid_neuron_events(const Events& e);

// ---- opcode gates (compare against the opcode table row's opcode) -----------
bool has_tensor_dequantize_opcode(const Header& h);  // seed 000 §2.1: 0x7b
bool has_quantize_mx_opcode(const Header& h);        // seed 003 §2.5: 0xe3
bool has_ldweights_mx_opcode(const Header& h);       // seed 003 §3.1: 0x09 (convention name)
bool has_matmul_mx_opcode(const Header& h);          // seed 003 §3.1: 0x0A (convention name)
bool has_ldweights_opcode(const Header& h);          // seed 003 §3.3: 0x01 (convention name)
bool has_matmul_opcode(const Header& h);             // seed 003 §3.3: 0x02 (convention name)
bool has_tquant_opcode(const Header& h);  // seed 002: the SFU TQUANT block word, 0x6a (convention)
bool has_tensor_copy_opcode(const Header& h);  // SPEC §11: 0x23 (convention)
bool has_dma_copy_opcode(const Header& h);     // SPEC §10: 0xd0 (convention)
bool has_nop_opcode(const Header& h);          // SPEC §18: 0xf0 (convention)

// ---- generation gates (the generations of the opcode table row) --------------
bool has_valid_nc_tens_dequant(Arch nc);  // seed 000 §2.1: nc >= V3
bool s3dmx1_quant_valid_nc(Arch nc);      // seed 003 §6.1: MARIANA V4 / MAVERICK V5
bool smx1_lw_valid_nc(Arch nc);           // convention: nc == V4 (SPEC §1)
bool smx1d3_mm_valid_nc(Arch nc);         // convention: nc == V4 (SPEC §1)
// convention (SPEC §1, §18): MX mode (an MXTENSOR_V2 src) nc == V5; plain
// mode on every generation.
bool s3_lw_valid_nc(Arch nc, const MemPattern3D& src);
bool s3d3_mm_valid_nc(Arch nc, const MemPattern3D& src);  // as s3_lw_valid_nc
bool tquant_valid_nc(Arch nc);  // convention: nc >= V3 (SPEC §1: none on SUNDA)

// ---- TensorDequantize fields (seed 000 §2.1, §4.1, §5) ---------------------
bool check_active_channels(std::uint8_t num_active_channels);  // != 0 && <= 128
bool has_valid_dequant_fmt(std::uint8_t fmt);                  // 1..4
bool has_valid_group_size(std::uint8_t grp);                   // 0 || 8
// seed 000 §5: group 8 only for fmt 1/2/3. Judges the pair only when grp == 8
// (a group that is neither 0 nor 8 is has_valid_group_size's failure).
bool has_valid_dequant_fmt_group_size(std::uint8_t fmt, std::uint8_t grp);
bool s3d3_tens_dequant_reserved_zero(const S3D3TensDequantV3& i);  // all 15 bytes
bool s3d3_tens_dequant_reserved_zero(const S3D3TensDequant& i);
bool has_valid_tens_dequant_in_dtype(std::uint8_t dtype);   // == UINT32
bool has_valid_tens_dequant_out_dtype(std::uint8_t dtype);  // == UINT32
// SPEC §2: start partition + num_active_channels <= 128 (unknown with ADDR_REG: true).
bool start_addr_active_channels(Addr4 start_addr, std::uint8_t num_active_channels);
// Pattern geometry (seed 000 §2.1; rules in docs/PREDICATES.md): marker one of
// IMM/ADDR_REG/SHAPE_REG/ADDR_SHAPE_REG; every num_elem != 0; a written pattern
// has no zero step on a dimension of more than one element; region allowed by
// the flags; footprint [min, max] byte offset inside [0, capacity).
bool tensor3d_valid(const Tensor3D& t, std::uint8_t dtype, WriteTensor write, AllowedInPSUM psum,
                    AllowedInSBUF sbuf, Arch arch);
bool shape_from_register(Addr4 a);  // SHAPE_REG or ADDR_SHAPE_REG marker
// count(src) * src_units == count(dst) * dst_units (seed 000 §4.1).
bool ratio_element_count_t3d(const Tensor3D& src, const Tensor3D& dst, unsigned src_units,
                             unsigned dst_units);
bool is_num_elem_mult_n_t3d(const Tensor3D& t, unsigned n);  // count(t) % n == 0
bool s3d3_tens_dequant_element_count_check_t3d(const S3D3TensDequantV3& i);
// MARIANA/MAVERICK form: reaches through .t; skipped (true) when an operand is
// INDIRECT16B or MXTENSOR_V2, whose element count is not a TENSOR3D count
// (convention).
bool s3d3_tens_dequant_element_count_check_t3d(const S3D3TensDequant& i);

// ---- MEM_PATTERN3D (seed 000 §2 CORRECTION) ---------------------------------
// TENSOR3D member: tensor3d_valid. INDIRECT16B member (when allowed): data
// region allowed by the flags and offset inside capacity, index list in SBUF
// inside capacity, both immediate. MXTENSOR_V2 member (when allowed: the v5
// PE operands, and TensorDequantize on MARIANA / MAVERICK per seed 000 §2):
// mxtensorv2_valid with x4 elements of `dtype`.
bool mem3d_valid(const MemPattern3D& p, std::uint8_t dtype, WriteTensor write, AllowedInPSUM psum,
                 AllowedInSBUF sbuf, Arch arch, AllowIndirect indirect = AllowIndirect::True,
                 AllowMxTensorV2 mx = AllowMxTensorV2::False);
// start partition (of the member's data address) + channels <= 128.
bool check_m3d_active_channels(const MemPattern3D& p, std::uint8_t num_active_channels);
// An INDIRECT16B src: its data and its index list lie in the same SBUF quadrant.
bool indirect_quadrant_check_src3d(const MemPattern3D& src);
// When src or dst is INDIRECT16B: both start partitions in the same quadrant.
bool indirect_quadrant_check_src3d_dst3d(const MemPattern3D& src, const MemPattern3D& dst);

// ---- QuantizeMX (seed 003 §2.5, §5; SPEC §4) --------------------------------
bool s3dmx1_quant_reserved_zero(const S3DMX1Quant& i);    // incl. dst MXTENSOR1D.reserved
bool s3dmx1_quant_valid_active_channels(std::uint8_t n);  // seed 003 §5: 32/64/96/128
// The DTYPE ordinals usable as a tensor element (FP32R only when allowed);
// excludes INVALID, the sub-byte FP4/INT4 and SFP8_E8 (a scale, not data).
bool is_valid_dtype(std::uint8_t dtype, AllowFP32R allow_fp32r);
// is_valid_dtype(.., False) plus FP4_EXP2 and INT4 when allowed.
bool is_valid_dtype_inc_fp4(std::uint8_t dtype, AllowFP4 allow_fp4);
// SPEC §4: FP32, BF16 or FP16. Judges only a dtype is_valid_dtype accepts.
bool s3dmx1_quant_valid_in_dtype(std::uint8_t dtype);
// seed 003 §2.5: FP8_EXP5 or FP8_EXP4. Judges only a dtype
// is_valid_dtype_inc_fp4(.., False) accepts.
bool s3dmx1_quant_valid_out_dtype(std::uint8_t dtype);
// MXTENSOR1D (seed 003 §3.2): markers IMM or ADDR_REG on start_addr and
// scale_addr (SHAPE_REG allowed on start_addr), num_elem != 0, data and scale
// in SBUF, data footprint (x4 elements, signed step) and scale bytes
// [0, num_elem) inside capacity, scale_pidx <= 28. The MXIndirect16B member is
// not modelled (fails).
bool mxmem1d_valid(const MxMemPattern1D& p, unsigned x4_bytes, WriteTensor write, Arch arch);
// data start partition + channels <= 128 (convention).
bool check_mx1d_active_channels(const MxMemPattern1D& p, std::uint8_t num_active_channels);
// addr is an SBUF address of partition `partition` (unknown with ADDR_REG: true).
bool addr_in_sbuf_partition(unsigned partition, Addr4 addr);
bool valid_s3dmx1_quant_sbuf_quadrant(Addr4 addr0, Addr4 addr1);  // seed 003 §5
// SPEC §4: src elements (count of the TENSOR3D) == 4 x dst num_elem[0];
// skipped with a register shape or an INDIRECT16B src (convention).
bool s3dmx1_quant_element_count_check(const S3DMX1Quant& i);

// ---- PE MX matmul (seed 003 §3.2, §3.3; SPEC §5) -----------------------------
bool is_valid_mx_dtype(std::uint8_t dtype);  // FP8_EXP2/3/4/5, FP4_EXP2, INT4
// row_grp is a mask of 32-row groups from row 0 (convention: the pairs
// {0x1,32} {0x3,64} {0x7,96} {0xf,128} only).
bool valid_row_grp_active_rows(std::uint8_t row_grp, std::uint8_t num_active_rows);
bool valid_col_grp_active_cols(std::uint8_t col_grp, std::uint8_t num_active_cols);  // 0xf, 1..128
// The scale of an MX operand starts in the data's quadrant partition
// {0,32,64,96} (SPEC §5 "same quadrant placement as §4"; convention name).
bool valid_mx_sbuf_quadrant(Addr4 data_addr, Addr4 scale_addr);
bool valid_mm_active_rows(std::uint8_t num_active_rows);  // 32/64/96/128 (convention)
bool valid_mm_out_dtype(std::uint8_t dtype);              // FP32 (convention)
bool valid_psum_accumulate_flags(std::uint8_t flags);     // bits 7:1 zero (convention)
bool smx1_lw_reserved_zero(const SMX1Lw& i);              // incl. src MXTENSOR1D.reserved
bool smx1d3_mm_reserved_zero(const SMX1D3Mm& i);          // incl. src MXTENSOR1D.reserved
bool s3_lw_reserved_zero(const S3Lw& i);
bool s3d3_mm_reserved_zero(const S3D3Mm& i);

// v5 MX mode (seed 003 §3.3).
bool mxtensorv2_pattern(Addr4 a);      // marker_a4 == MXTENSOR_V2
bool not_mxtensorv2_pattern(Addr4 a);  // !mxtensorv2_pattern
// (mxtensorv2_pattern && mx_mode) || (not_mxtensorv2_pattern && normal_mode):
// mx_mode = the descriptor carries E8M0 scales (scale_dtype == SFP8_E8);
// normal_mode = the operand is a plain pattern (convention).
bool s3_lw_mode_checks(const MemPattern3D& src);
bool s3d3_mm_mode_checks(const MemPattern3D& src);
// Plain-mode PE dtypes (SPEC §5, §18; convention name), nki.isa.nc_matmul's
// per generation: BF16, FP16, FP32, the legacy FP8 E4M3 (0x0B) and E5M2 on
// every generation; the OCP E4M3 (0x0E) from V4; on V5 also E2M5 / E3M4
// (SPEC §5's set).
bool valid_plain_mm_dtype(std::uint8_t dtype, Arch nc);
// Plain mode's rows (SPEC §18): 1..128, row_grp one bit per started group
// of 32 (the assembler's default); MX mode keeps valid_row_grp_active_rows.
bool valid_plain_row_grp_active_rows(std::uint8_t row_grp, std::uint8_t num_active_rows);
bool valid_plain_mm_active_rows(std::uint8_t num_active_rows);  // 1..128
// nc_matmul's perf_mode (SPEC §18): 0 none, or 1 double_row from V3 with
// an FP8 in_dtype (0x0B, 0x0E, 0x0F).
bool valid_matmul_perf_mode(std::uint8_t perf, std::uint8_t in_dtype, Arch nc);
// transpose is 0 or 1.
bool valid_matmul_transpose(std::uint8_t transpose);
// perf_mode and transpose are plain mode's: both 0 with an MXTENSOR_V2 src.
bool plain_fields_only_in_plain_mode(std::uint8_t perf, std::uint8_t transpose,
                                     const MemPattern3D& src);
// transpose mode (is_transpose, SPEC §18): the result is the stationary's
// elements, so out_dtype == in_dtype (valid_mm_out_dtype otherwise).
bool matmul_transpose_out_dtype(std::uint8_t out_dtype, std::uint8_t in_dtype);
bool valid_mx_perf_mode(std::uint8_t mode);  // 0..6 (seed 003 §3.3)
// A nonzero MX_PERF_MODE only with an MXTENSOR_V2 src (SPEC §5).
bool mx_perf_mode_only_in_mx_mode(std::uint8_t mode, const MemPattern3D& src);
// MXTENSOR_V2 geometry (convention, docs/PREDICATES.md): data element
// (i0 < num_elem[0], i1 < num_elem[1]) at (i0 + i1*step_elem_data_1) x4
// elements from data_addr; its scale byte at i0 + i1*step_elem_scale_1 from
// scale_addr. Both in SBUF, immediate, inside capacity; num_elem != 0.
bool mxtensorv2_valid(const MxTensorV2& m, unsigned x4_bytes, WriteTensor write, Arch arch);

// ---- DVE tensor_copy (SPEC §11; names are conventions) --------------------------
bool tensor_copy_reserved_zero(const S3D3TensorCopy& i);  // reserved0..2
// count(src) == count(dst) per partition; skipped with a register shape.
bool tensor_copy_element_count_check(const S3D3TensorCopy& i);

// ---- SPEC §18 vector instructions (names are conventions) ---------------------------
#define TPB_OPCODE_GATE(name, op) \
  inline bool name(const Header& h) { return h.opcode == static_cast<std::uint8_t>(Opcode::op); }
TPB_OPCODE_GATE(has_activation_opcode, Activation)
TPB_OPCODE_GATE(has_tensor_tensor_opcode, TensorTensor)
TPB_OPCODE_GATE(has_tensor_scalar_opcode, TensorScalar)
TPB_OPCODE_GATE(has_tensor_reduce_opcode, TensorReduce)
TPB_OPCODE_GATE(has_tensor_tensor_scan_opcode, TensorTensorScan)
TPB_OPCODE_GATE(has_memset_opcode, Memset)
TPB_OPCODE_GATE(has_iota_opcode, Iota)
TPB_OPCODE_GATE(has_reciprocal_opcode, Reciprocal)
TPB_OPCODE_GATE(has_bn_stats_opcode, BnStats)
TPB_OPCODE_GATE(has_bn_aggr_opcode, BnAggr)
TPB_OPCODE_GATE(has_nc_transpose_opcode, NcTranspose)
#undef TPB_OPCODE_GATE

// The engine of a word (its header's selector, its opcode's home) that runs
// it on `arch` (the ACT queue's on the DVE on MAVERICK).
Queue word_engine(const RawInst& raw, Arch arch);
// The same for a word of opcode `op` whatever its opcode byte (a contract
// run by check_as): selector 0 is op's home.
Queue word_engine(const RawInst& raw, Arch arch, Opcode op);
// Whether an engine reaches PSUM: every compute engine but GpSimd (POOL),
// nki.isa / TIMING.md [M].
AllowedInPSUM psum_for(Queue engine);

// The word's engine runs its opcode on this generation (a row's kernel_info
// records); passes for an opcode the generation lacks (its nc predicate
// fails) and for DMA descriptors. check_instruction adds it to every
// contract's verdict.
bool valid_engine_for_opcode(const RawInst& raw, Arch arch);

// The DTYPEs of the vector instructions (nki.isa's, SPEC §18): INT8,
// UINT8, INT16, UINT16, INT32, UINT32, BF16, FP16, FP32, FP8 E4M3 (OCP 0x0E
// and legacy 0x0B), E5M2, E3M4, E2M5.
bool valid_vector_dtype(std::uint8_t dtype);
// A per-partition vector operand (scale, bias, an operand, initial,
// reduce_res): immediate or ADDR_REG (re-checked at run time); immediate:
// SBUF (or PSUM when allowed), start partition + channels <= 128, one
// element of dtype inside the partition's capacity.
bool vector_operand_valid(Addr4 a, std::uint8_t dtype, std::uint8_t channels, AllowedInPSUM psum,
                          Arch arch);
// count(a) == count(b) per partition; passes with a register shape or a
// member that is not TENSOR3D (mem3d_valid's failure).
bool same_element_count(const MemPattern3D& a, const MemPattern3D& b);
// Two inputs are not both in PSUM (nki.isa: tensor_tensor, tensor_tensor_scan).
bool inputs_not_both_psum(Addr4 a, Addr4 b);

bool activation_reserved_zero(const S3D3Act& i);  // flags bits 7:1
bool activation_valid_func(std::uint8_t func);    // an isa::ActFunc
// reduce: operator 0 none, 1 add, 2 max; command 0..3.
bool activation_valid_reduce(std::uint8_t reduce);
// The max reduce from V3 (nki.isa.activation_reduce: add only on V2).
bool activation_reduce_op_on_nc(std::uint8_t reduce, Arch nc);

bool tensor_tensor_reserved_zero(const S3D3Tt& i);  // op bits 7:5, reserved0..1
// A binary operator (add .. abs_min); power on GpSimd only; GpSimd runs add,
// subtract, multiply, maximum, minimum and power (nki.isa).
bool tensor_tensor_valid_op(std::uint8_t op, Queue engine);

bool tensor_scalar_reserved_zero(const S3D3Ts& i);  // op bit 5, reserved0..1
// op0 an operator (not bypass), op1 bypass or an operator; the Scalar engine
// runs (multiply, add), (multiply, -), (add, -); GpSimd rsqrt alone
// (nki.isa.tensor_scalar).
bool tensor_scalar_valid_ops(std::uint8_t op0, std::uint8_t op1, Queue engine);

bool tensor_reduce_reserved_zero(const S3D3Reduce& i);     // op bits 6:5, reserved0..1
bool tensor_reduce_valid_op(std::uint8_t op);              // add, multiply, maximum, minimum
bool tensor_reduce_valid_axes(std::uint8_t axes);          // 1..3
bool tensor_reduce_valid_keepdims(std::uint8_t keepdims);  // 0 or 1
// count(dst) = count(src) / (the product of src's innermost `axes` num_elem).
bool tensor_reduce_element_count_check(const S3D3Reduce& i);
// tensor_reduce / bn_aggr: count(src) x the element's bytes within an SBUF
// partition of `arch` (a source re-reading its elements past that, a broadcast
// of millions, is a limit of the model: docs/CONVENTIONS.md).
bool reduce_src_fits_partition(const MemPattern3D& src, std::uint8_t dtype, Arch arch);

bool tensor_tensor_scan_reserved_zero(const S3D3Scan& i);  // op0 bit 5, op1 bits 6:5
// op0 and op1 binary arithmetic operators (add .. abs_min).
bool tensor_tensor_scan_valid_ops(std::uint8_t op0, std::uint8_t op1);

bool memset_reserved_zero(const S3D3Memset& i);
bool iota_reserved_zero(const S3D3Iota& i);
bool iota_valid_pattern(const S3D3Iota& i);        // every num != 0
bool iota_element_count_check(const S3D3Iota& i);  // num product == count(dst)

bool unary_reserved_zero(const S3D3Unary& i);  // reserved0..2
// bn_stats: 1..512 source elements per partition (nki.isa), 6 results.
bool bn_stats_element_count_check(const S3D3Unary& i);
// bn_aggr: a whole, nonzero number of triples; 2 results.
bool bn_aggr_element_count_check(const S3D3Unary& i);
// nc_transpose on the DVE: at most 32 x 32 (channels and source elements).
bool nc_transpose_valid_shape(const S3D3Unary& i);
bool nc_transpose_same_dtype(std::uint8_t in_dtype, std::uint8_t out_dtype);
// count(dst) == channels; dst start partition + count(src) <= 128.
bool nc_transpose_element_count_check(const S3D3Unary& i);
bool nc_transpose_dst_partitions(const S3D3Unary& i);
// ---- the wait-only instruction (SPEC §18; names are conventions) -------------------
bool nop_reserved_zero(const NopWord& i);  // bytes 13..63
bool nop_valid_queue(std::uint8_t queue);  // byte 12: a queue 0..20 (isa::Queue; act 20)

// ---- DMA descriptor (SPEC §10; names are conventions) ----------------------------
bool dma_copy_reserved_zero(const DmaDescriptor& d);  // reserved1, endpoints'
bool dma_valid_queue(std::uint8_t queue);             // byte 15: a queue 0..15
// byte 20 (SPEC §15): 0, or 1 + a core K < kMaxDeviceCores, and only with an
// update (a remote semaphore is what the update changes).
bool dma_valid_update_core(const DmaDescriptor& d);
bool dma_valid_num_rows(std::uint8_t num_rows);      // 1..128
bool dma_valid_row_bytes(std::uint32_t row_bytes);   // != 0
bool dma_valid_endpoint_kind(const DmaEndpoint& e);  // HBM or SBUF (PSUM is not one)
// An SBUF endpoint's addr is an immediate SBUF ISA address: below 2^27,
// region SBUF (not PSUM, the tile file or the control region). Other kinds: true.
bool dma_sbuf_endpoint_address(const DmaEndpoint& e);
bool dma_sbuf_endpoint_row_stride(const DmaEndpoint& e);  // SBUF: row_stride == 0
// SBUF: start partition + num_rows <= 128 (the rows stay inside the SBUF).
bool dma_sbuf_rows_in_partitions(const DmaEndpoint& e, std::uint8_t num_rows);
// SBUF: offset + row_bytes <= the generation's partition capacity (no row
// crosses into the next partition).
bool dma_sbuf_row_in_partition(const DmaEndpoint& e, std::uint32_t row_bytes, Arch arch);
// HBM: addr + (num_rows - 1) x row_stride + row_bytes <= the HBM capacity
// per core, the generation's or the core's (check_capacity; computed without
// overflow).
bool dma_hbm_in_capacity(const DmaEndpoint& e, std::uint8_t num_rows, std::uint32_t row_bytes,
                         Arch arch);
// An HBM destination of more than one row: row_stride >= row_bytes (written
// rows do not overlap).
bool dma_hbm_dst_rows_disjoint(const DmaEndpoint& dst, std::uint8_t num_rows,
                               std::uint32_t row_bytes);
bool dma_valid_rmw_op(std::uint8_t op);  // 0 none, 1 add
// The DTYPEs of an add on write: FP32, BF16, FP16, FP8_EXP2..5 and the
// legacy E4M3 0x0B (through FP32, RNE) and INT8, UINT8, INT16, UINT16, INT32, UINT32 (modulo
// 2^bits).
bool dma_rmw_add_dtype(std::uint8_t dtype);
// dst_rmw_op add: rmw_dtype is an add DTYPE (other ops: true).
bool dma_valid_rmw_dtype(std::uint8_t op, std::uint8_t dtype);
// dst_rmw_op none: rmw_dtype == 0 (other ops: true).
bool dma_rmw_dtype_only_with_op(std::uint8_t op, std::uint8_t dtype);
// dst_rmw_op add with an add DTYPE: row_bytes is a whole number of elements.
bool dma_rmw_row_bytes_multiple(std::uint8_t op, std::uint8_t dtype, std::uint32_t row_bytes);

}  // namespace pred
}  // namespace tpb::isa

// The opcode table: one row per opcode (seed 000 §1, §2; seed 003 §1-§3,
// §6). Each row: opcode, mnemonic, home engine, generations, contract name and
// function per generation, assembler fields, kernel_info record.
#include "models/isa/opcode_table.h"

#include <algorithm>

namespace tpb::isa {
namespace {

using K = AsmFieldKind;

constexpr std::uint32_t kUint32 = static_cast<std::uint32_t>(Dtype::Uint32);
constexpr std::uint32_t kFp32 = static_cast<std::uint32_t>(Dtype::Fp32);
constexpr std::uint32_t kOne = 0x3f800000;  // FP32 1.0
// v2..v4: the generations with an ACT engine of their own (MAVERICK folds
// it into the DVE, seed 003).
constexpr ArchSet kActArchs = archs_until(Arch::Mariana);

constexpr std::array<ContractFn, kNumArchs> kNoContract{};
// The wait-only instruction's record: POOL idx13 (its table stays seed 000's 17
// records; idx0..13 are not recovered by the seed), DVE / PE / SFU idx31.
constexpr std::uint8_t kNopPoolRecord = 13;
constexpr std::uint8_t kNopRecord = 31;
// The same contract function on every generation: the contract's own
// generation predicate (e.g. smx1_lw_valid_nc) reports the ones it is not on.
constexpr std::array<ContractFn, kNumArchs> every_arch(ContractFn fn) { return {fn, fn, fn, fn}; }

}  // namespace

// An assembler field of instruction struct S: its byte offset and width are
// the struct's own (encodings.h static_asserts the layout), so a field's
// place is written once. TPB_ASM_GRP: a group mask whose default derives from
// the count field `count`.
#define TPB_ASM(S, member, name, kind, required, def) \
  AsmField { name, K::kind, offsetof(S, member), sizeof(S::member), required, def }
#define TPB_ASM_GRP(S, member, name, count) \
  AsmField { name, K::Grp, offsetof(S, member), sizeof(S::member), false, 0, offsetof(S, count) }
// A bit field: `bits` bits from bit `shift` of the byte `member`.
#define TPB_ASM_BITS(S, member, name, shift, bits, def) \
  AsmField { name, K::U8, offsetof(S, member), 1, false, def, -1, shift, bits }
// A named value (a table of names.h) in bits [shift, shift + bits) of the
// byte `member` (bits 0: the whole byte).
#define TPB_ASM_NAMED(S, member, name, table, shift, bits, required, def) \
  AsmField { name, K::Named, offsetof(S, member), 1, required, def, -1, shift, bits, table }
// An FP32 operand that may instead be a per-partition vector's address,
// which sets bit `bit` of the byte `flag`.
#define TPB_ASM_SCALAR(S, member, name, flag, bit, def) \
  AsmField { name, K::Scalar, offsetof(S, member), 4, false, def, offsetof(S, flag), bit }

namespace {
// The fields of the one-input layout (S3D3Unary: tensor_copy and the unary
// instructions of SPEC §18).
std::vector<AsmField> unary_fields() {
  using S = S3D3Unary;
  return {TPB_ASM(S, num_active_channels, "channels", U8, true, 0),
          TPB_ASM(S, in_dtype, "in_dtype", Dtype, false, kFp32),
          TPB_ASM(S, out_dtype, "out_dtype", Dtype, true, 0),
          TPB_ASM(S, src_mem_pattern, "src", Mem3D, true, 0),
          TPB_ASM(S, dst_mem_pattern, "dst", Mem3D, true, 0),
          TPB_ASM(S, reserved0, "reserved0", Bytes, false, 0),
          TPB_ASM(S, reserved1, "reserved1", Bytes, false, 0),
          TPB_ASM(S, reserved2, "reserved2", Bytes, false, 0)};
}
}  // namespace

// Rows in opcode order. Assembler fields: the members of the instruction's
// struct (encodings.h; seed 000 §2 and seed 003 §2.5, §3.2, §3.3), printed in
// the order listed. contract_fns are indexed
// SUNDA, CAYMAN, MARIANA, MAVERICK. The POOL and DVE kernel_info tables are
// the same on every generation; the PE table changes at MAVERICK. The DVE
// table: idx0 QuantizeMX (seed 003 §1), idx1 tensor_copy (convention).
const std::vector<OpcodeInfo>& opcode_table() {
  static const std::vector<OpcodeInfo> rows = {
      // seed 003 §3.3 LDWEIGHTS: MX mode on v5, plain mode on every
      // generation (SPEC §18). Its kernel_info record reuses the v4 handler
      // VA (convention: no v5 bytes in the seeds); so does MATMUL's. A
      // LoadStationary: it issues on the PE's stationary unit.
      {Opcode::Ldweights,
       "ldweights",
       Queue::Pe,
       kEveryArch,
       "is_valid_s3_lw",
       every_arch(contract::s3_lw),
       std::vector<AsmField>{
           TPB_ASM(S3Lw, in_dtype, "in_dtype", Dtype, true, 0),
           TPB_ASM(S3Lw, num_active_rows, "rows", U8, true, 0),
           TPB_ASM(S3Lw, num_active_cols, "cols", U8, true, 0),
           TPB_ASM_GRP(S3Lw, row_grp, "row_grp", num_active_rows),
           TPB_ASM(S3Lw, col_grp, "col_grp", Grp, false, 0xF),
           TPB_ASM(S3Lw, mx_perf_mode, "perf", Perf, false, 0),
           TPB_ASM_NAMED(S3Lw, perf, "perf_mode", matmul_perf_names, 0, 0, false, 0),
           TPB_ASM(S3Lw, src_mem_pattern, "src", Mem3D, true, 0),
           TPB_ASM(S3Lw, reserved0, "reserved0", Bytes, false, 0),
           TPB_ASM(S3Lw, reserved1, "reserved1", Bytes, false, 0),
           TPB_ASM(S3Lw, reserved2, "reserved2", Bytes, false, 0)},
       {{Queue::Pe, arch_bit(Arch::Maverick), 0, 0, kva::kPeLdweightsMx},
        {Queue::Pe, archs_until(Arch::Cayman), 0, 0, kva::kPeLdweightsMx},
        {Queue::Pe, arch_bit(Arch::Mariana), 2, 0, kva::kPeLdweightsMx}},
       IssueUnit::Stationary},
      // seed 003 §3.3 MATMUL: MX mode on v5, plain on every generation
      {Opcode::Matmul,
       "matmul",
       Queue::Pe,
       kEveryArch,
       "is_valid_s3d3_mm",
       every_arch(contract::s3d3_mm),
       std::vector<AsmField>{
           TPB_ASM(S3D3Mm, in_dtype, "in_dtype", Dtype, true, 0),
           TPB_ASM(S3D3Mm, out_dtype, "out_dtype", Dtype, false, kFp32),
           TPB_ASM(S3D3Mm, num_active_rows, "rows", U8, true, 0),
           TPB_ASM(S3D3Mm, psum_accumulate_flags, "acc", U8, false, 0),
           TPB_ASM(S3D3Mm, mx_perf_mode, "perf", Perf, false, 0),
           TPB_ASM(S3D3Mm, transpose, "transpose", U8, false, 0),
           TPB_ASM_NAMED(S3D3Mm, perf, "perf_mode", matmul_perf_names, 0, 0, false, 0),
           TPB_ASM(S3D3Mm, src_mem_pattern, "src", Mem3D, true, 0),
           TPB_ASM(S3D3Mm, dst_mem_pattern, "dst", Mem3D, true, 0),
           TPB_ASM(S3D3Mm, reserved0, "reserved0", Bytes, false, 0),
           TPB_ASM(S3D3Mm, reserved1, "reserved1", Bytes, false, 0),
           TPB_ASM(S3D3Mm, reserved2, "reserved2", Bytes, false, 0),
           TPB_ASM(S3D3Mm, reserved3, "reserved3", Bytes, false, 0)},
       {{Queue::Pe, arch_bit(Arch::Maverick), 1, 0, kva::kPeMatmulMx},
        {Queue::Pe, archs_until(Arch::Cayman), 1, 0, kva::kPeMatmulMx},
        {Queue::Pe, arch_bit(Arch::Mariana), 3, 0, kva::kPeMatmulMx}}},
      // seed 003 §3.1, §3.2 LdweightsMX (v4): a LoadStationary.
      {Opcode::LdweightsMX,
       "ldweights_mx",
       Queue::Pe,
       arch_bit(Arch::Mariana),
       "is_valid_smx1_lw",
       every_arch(contract::smx1_lw),
       std::vector<AsmField>{TPB_ASM(SMX1Lw, in_dtype, "in_dtype", Dtype, true, 0),
                             TPB_ASM(SMX1Lw, num_active_rows, "rows", U8, true, 0),
                             TPB_ASM(SMX1Lw, num_active_cols, "cols", U8, true, 0),
                             TPB_ASM_GRP(SMX1Lw, row_grp, "row_grp", num_active_rows),
                             TPB_ASM(SMX1Lw, col_grp, "col_grp", Grp, false, 0xF),
                             TPB_ASM(SMX1Lw, src_mem_pattern, "src", Mem1D, true, 0),
                             TPB_ASM(SMX1Lw, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(SMX1Lw, reserved1, "reserved1", Bytes, false, 0),
                             TPB_ASM(SMX1Lw, reserved2, "reserved2", Bytes, false, 0),
                             TPB_ASM(SMX1Lw, reserved3, "reserved3", Bytes, false, 0)},
       {{Queue::Pe, arch_bit(Arch::Mariana), 0, 0, kva::kPeLdweightsMx}},
       IssueUnit::Stationary},
      // seed 003 §3.1, §3.2 MatmulMX (v4)
      {Opcode::MatmulMX,
       "matmul_mx",
       Queue::Pe,
       arch_bit(Arch::Mariana),
       "is_valid_smx1d3_mm",
       every_arch(contract::smx1d3_mm),
       std::vector<AsmField>{TPB_ASM(SMX1D3Mm, in_dtype, "in_dtype", Dtype, true, 0),
                             TPB_ASM(SMX1D3Mm, out_dtype, "out_dtype", Dtype, false, kFp32),
                             TPB_ASM(SMX1D3Mm, num_active_rows, "rows", U8, true, 0),
                             TPB_ASM(SMX1D3Mm, psum_accumulate_flags, "acc", U8, false, 0),
                             TPB_ASM(SMX1D3Mm, src_mem_pattern, "src", Mem1D, true, 0),
                             TPB_ASM(SMX1D3Mm, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM(SMX1D3Mm, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(SMX1D3Mm, reserved1, "reserved1", Bytes, false, 0),
                             TPB_ASM(SMX1D3Mm, reserved2, "reserved2", Bytes, false, 0),
                             TPB_ASM(SMX1D3Mm, reserved3, "reserved3", Bytes, false, 0),
                             TPB_ASM(SMX1D3Mm, reserved4, "reserved4", Bytes, false, 0)},
       {{Queue::Pe, arch_bit(Arch::Mariana), 1, 0, kva::kPeMatmulMx}}},
      // SPEC §18 activation (ACT; on MAVERICK the DVE runs it: seed 003
      // folds ACT into the DVE).
      {Opcode::Activation,
       "activation",
       Queue::Act,
       kEveryArch,
       "is_valid_activation",
       every_arch(contract::activation),
       std::vector<AsmField>{
           TPB_ASM_NAMED(S3D3Act, func, "func", act_func_names, 0, 0, true, 0),
           TPB_ASM(S3D3Act, num_active_channels, "channels", U8, true, 0),
           TPB_ASM(S3D3Act, in_dtype, "in_dtype", Dtype, false, kFp32),
           TPB_ASM(S3D3Act, out_dtype, "out_dtype", Dtype, true, 0),
           TPB_ASM(S3D3Act, src_mem_pattern, "src", Mem3D, true, 0),
           TPB_ASM(S3D3Act, dst_mem_pattern, "dst", Mem3D, true, 0),
           TPB_ASM_SCALAR(S3D3Act, scale, "scale", flags, 0, kOne),
           TPB_ASM(S3D3Act, bias_addr, "bias", Addr, false, 0),
           TPB_ASM(S3D3Act, bias_dtype, "bias_dtype", Dtype, false, 0),
           TPB_ASM_NAMED(S3D3Act, reduce, "reduce_op", reduce_op_names, 0, 4, false, 0),
           TPB_ASM_NAMED(S3D3Act, reduce, "reduce_cmd", reduce_cmd_names, 4, 4, false, 0),
           TPB_ASM(S3D3Act, reduce_dtype, "reduce_dtype", Dtype, false, 0),
           TPB_ASM(S3D3Act, reduce_addr, "reduce_res", Addr, false, 0),
           TPB_ASM_BITS(S3D3Act, flags, "reserved0", 1, 7, 0)},
       {{Queue::Act, kActArchs, 0, 0, kva::kActActivation},
        {Queue::Dve, arch_bit(Arch::Maverick), 11, 0, kva::kDveActivation}}},
      // SPEC §18 tensor_tensor (DVE, POOL)
      {Opcode::TensorTensor,
       "tensor_tensor",
       Queue::Dve,
       kEveryArch,
       "is_valid_tensor_tensor",
       every_arch(contract::tensor_tensor),
       std::vector<AsmField>{TPB_ASM_NAMED(S3D3Tt, op, "op", alu_op_names, 0, 5, true, 0),
                             TPB_ASM(S3D3Tt, num_active_channels, "channels", U8, true, 0),
                             TPB_ASM(S3D3Tt, in_dtype, "in_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3Tt, in1_dtype, "in1_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3Tt, out_dtype, "out_dtype", Dtype, true, 0),
                             TPB_ASM(S3D3Tt, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3D3Tt, src1, "src1", Steps3D, true, 0),
                             TPB_ASM(S3D3Tt, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM_BITS(S3D3Tt, op, "reserved_op", 5, 3, 0),
                             TPB_ASM(S3D3Tt, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3D3Tt, reserved1, "reserved1", Bytes, false, 0)},
       {{Queue::Dve, kEveryArch, 2, 0, kva::kDveTensorTensor},
        {Queue::Pool, kEveryArch, 18, 0, kva::kPoolTensorTensor}}},
      // SPEC §18 tensor_scalar (DVE, ACT, POOL)
      {Opcode::TensorScalar,
       "tensor_scalar",
       Queue::Dve,
       kEveryArch,
       "is_valid_tensor_scalar",
       every_arch(contract::tensor_scalar),
       std::vector<AsmField>{TPB_ASM_NAMED(S3D3Ts, op0, "op0", alu_op_names, 0, 5, true, 0),
                             TPB_ASM_SCALAR(S3D3Ts, operand0, "operand0", op0, 6, 0),
                             TPB_ASM_BITS(S3D3Ts, op0, "reverse0", 7, 1, 0),
                             TPB_ASM_NAMED(S3D3Ts, op1, "op1", alu_op_names, 0, 5, false, 0),
                             TPB_ASM_SCALAR(S3D3Ts, operand1, "operand1", op1, 6, 0),
                             TPB_ASM_BITS(S3D3Ts, op1, "reverse1", 7, 1, 0),
                             TPB_ASM(S3D3Ts, num_active_channels, "channels", U8, true, 0),
                             TPB_ASM(S3D3Ts, in_dtype, "in_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3Ts, out_dtype, "out_dtype", Dtype, true, 0),
                             TPB_ASM(S3D3Ts, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3D3Ts, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM_BITS(S3D3Ts, op0, "reserved_op0", 5, 1, 0),
                             TPB_ASM_BITS(S3D3Ts, op1, "reserved_op1", 5, 1, 0),
                             TPB_ASM(S3D3Ts, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3D3Ts, reserved1, "reserved1", Bytes, false, 0)},
       {{Queue::Dve, kEveryArch, 3, 0, kva::kDveTensorScalar},
        {Queue::Act, kActArchs, 2, 0, kva::kActTensorScalar},
        {Queue::Pool, kEveryArch, 19, 0, kva::kPoolTensorScalar}}},
      // SPEC §11, §18 tensor_copy (encoding, opcode and records: conventions):
      // DVE and POOL on every generation (TIMING.md [M]: tensor_copy on v2
      // on), ACT from v3 (nki.isa: not on the v2 Scalar engine).
      {Opcode::TensorCopy,
       "tensor_copy",
       Queue::Dve,
       kEveryArch,
       "is_valid_tensor_copy",
       every_arch(contract::tensor_copy),
       std::vector<AsmField>{TPB_ASM(S3D3TensorCopy, num_active_channels, "channels", U8, true, 0),
                             TPB_ASM(S3D3TensorCopy, in_dtype, "in_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3TensorCopy, out_dtype, "out_dtype", Dtype, true, 0),
                             TPB_ASM(S3D3TensorCopy, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3D3TensorCopy, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM(S3D3TensorCopy, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3D3TensorCopy, reserved1, "reserved1", Bytes, false, 0),
                             TPB_ASM(S3D3TensorCopy, reserved2, "reserved2", Bytes, false, 0)},
       {{Queue::Dve, kEveryArch, 1, 0, kva::kDveTensorCopy},
        {Queue::Act, kActArchs & archs_from(Arch::Cayman), 1, 0, kva::kActTensorCopy},
        {Queue::Pool, kEveryArch, 17, 0, kva::kPoolTensorCopy}}},
      // SPEC §18 tensor_reduce (DVE)
      {Opcode::TensorReduce,
       "tensor_reduce",
       Queue::Dve,
       kEveryArch,
       "is_valid_tensor_reduce",
       every_arch(contract::tensor_reduce),
       std::vector<AsmField>{TPB_ASM_NAMED(S3D3Reduce, op, "op", alu_op_names, 0, 5, true, 0),
                             TPB_ASM_BITS(S3D3Reduce, op, "negate", 7, 1, 0),
                             TPB_ASM(S3D3Reduce, axes, "axes", U8, false, 1),
                             TPB_ASM(S3D3Reduce, keepdims, "keepdims", U8, false, 0),
                             TPB_ASM(S3D3Reduce, num_active_channels, "channels", U8, true, 0),
                             TPB_ASM(S3D3Reduce, in_dtype, "in_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3Reduce, out_dtype, "out_dtype", Dtype, true, 0),
                             TPB_ASM(S3D3Reduce, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3D3Reduce, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM_BITS(S3D3Reduce, op, "reserved_op", 5, 2, 0),
                             TPB_ASM(S3D3Reduce, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3D3Reduce, reserved1, "reserved1", Bytes, false, 0)},
       {{Queue::Dve, kEveryArch, 4, 0, kva::kDveTensorReduce}}},
      // SPEC §18 tensor_tensor_scan (DVE)
      {Opcode::TensorTensorScan,
       "tensor_tensor_scan",
       Queue::Dve,
       kEveryArch,
       "is_valid_tensor_tensor_scan",
       every_arch(contract::tensor_tensor_scan),
       std::vector<AsmField>{TPB_ASM_NAMED(S3D3Scan, op0, "op0", alu_op_names, 0, 5, true, 0),
                             TPB_ASM_NAMED(S3D3Scan, op1, "op1", alu_op_names, 0, 5, true, 0),
                             TPB_ASM_BITS(S3D3Scan, op0, "reverse0", 7, 1, 0),
                             TPB_ASM_BITS(S3D3Scan, op1, "reverse1", 7, 1, 0),
                             TPB_ASM_SCALAR(S3D3Scan, initial, "initial", op0, 6, 0),
                             TPB_ASM(S3D3Scan, num_active_channels, "channels", U8, true, 0),
                             TPB_ASM(S3D3Scan, in_dtype, "in_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3Scan, in1_dtype, "in1_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3Scan, out_dtype, "out_dtype", Dtype, true, 0),
                             TPB_ASM(S3D3Scan, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3D3Scan, src1, "src1", Steps3D, true, 0),
                             TPB_ASM(S3D3Scan, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM_BITS(S3D3Scan, op0, "reserved_op0", 5, 1, 0),
                             TPB_ASM_BITS(S3D3Scan, op1, "reserved_op1", 5, 2, 0)},
       {{Queue::Dve, kEveryArch, 5, 0, kva::kDveTensorTensorScan}}},
      // SPEC §18 memset (DVE, POOL)
      {Opcode::Memset,
       "memset",
       Queue::Dve,
       kEveryArch,
       "is_valid_memset",
       every_arch(contract::memset),
       std::vector<AsmField>{TPB_ASM(S3D3Memset, value, "value", U32, false, 0),
                             TPB_ASM(S3D3Memset, num_active_channels, "channels", U8, true, 0),
                             TPB_ASM(S3D3Memset, out_dtype, "out_dtype", Dtype, true, 0),
                             TPB_ASM(S3D3Memset, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM(S3D3Memset, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3D3Memset, reserved1, "reserved1", Bytes, false, 0),
                             TPB_ASM(S3D3Memset, reserved2, "reserved2", Bytes, false, 0),
                             TPB_ASM(S3D3Memset, reserved3, "reserved3", Bytes, false, 0)},
       {{Queue::Dve, kEveryArch, 6, 0, kva::kDveMemset},
        {Queue::Pool, kEveryArch, 20, 0, kva::kPoolMemset}}},
      // SPEC §18 iota (POOL)
      {Opcode::Iota,
       "iota",
       Queue::Pool,
       kEveryArch,
       "is_valid_iota",
       every_arch(contract::iota),
       std::vector<AsmField>{
           TPB_ASM(S3D3Iota, offset, "offset", I32, false, 0),
           TPB_ASM(S3D3Iota, channel_multiplier, "channel_multiplier", I32, false, 0),
           TPB_ASM(S3D3Iota, step, "step", I32x3, true, 0),
           TPB_ASM(S3D3Iota, num, "num", U16x3, true, 0),
           TPB_ASM(S3D3Iota, num_active_channels, "channels", U8, true, 0),
           TPB_ASM(S3D3Iota, out_dtype, "out_dtype", Dtype, true, 0),
           TPB_ASM(S3D3Iota, dst_mem_pattern, "dst", Mem3D, true, 0),
           TPB_ASM(S3D3Iota, reserved0, "reserved0", Bytes, false, 0),
           TPB_ASM(S3D3Iota, reserved1, "reserved1", Bytes, false, 0)},
       {{Queue::Pool, kEveryArch, 21, 0, kva::kPoolIota}}},
      // SPEC §18 reciprocal (DVE)
      {Opcode::Reciprocal,
       "reciprocal",
       Queue::Dve,
       kEveryArch,
       "is_valid_reciprocal",
       every_arch(contract::reciprocal),
       unary_fields(),
       {{Queue::Dve, kEveryArch, 7, 0, kva::kDveReciprocal}}},
      // SPEC §18 bn_stats (DVE)
      {Opcode::BnStats,
       "bn_stats",
       Queue::Dve,
       kEveryArch,
       "is_valid_bn_stats",
       every_arch(contract::bn_stats),
       unary_fields(),
       {{Queue::Dve, kEveryArch, 8, 0, kva::kDveBnStats}}},
      // SPEC §18 bn_aggr (DVE)
      {Opcode::BnAggr,
       "bn_aggr",
       Queue::Dve,
       kEveryArch,
       "is_valid_bn_aggr",
       every_arch(contract::bn_aggr),
       unary_fields(),
       {{Queue::Dve, kEveryArch, 9, 0, kva::kDveBnAggr}}},
      // SPEC §18 nc_transpose on the DVE (at most 32 x 32; the PE transposes in a matmul mode)
      {Opcode::NcTranspose,
       "nc_transpose",
       Queue::Dve,
       kEveryArch,
       "is_valid_nc_transpose",
       every_arch(contract::nc_transpose),
       unary_fields(),
       {{Queue::Dve, kEveryArch, 10, 0, kva::kDveNcTranspose}}},
      // seed 002: the SFU TQUANT block word (selector 0x06A, Mode 3, Function
      // 10). No mnemonic form: it is written in the block syntax
      // (models/isa/tquant_block.h). Generations: CAYMAN on (SPEC §1: SUNDA
      // has none of the ops); the SFU table is the same on every generation.
      {Opcode::Tquant,
       "tquant",
       Queue::Sfu,
       archs_from(Arch::Cayman),
       "is_valid_tquant_block",
       every_arch(contract::tquant_block),
       std::nullopt,
       {{Queue::Sfu, kEveryArch, 0, 0, kva::kSfuTquant}}},
      // seed 000 §1, §2; TENSOR3D operands on SUNDA / CAYMAN, MEM_PATTERN3D
      // from MARIANA (the two structs have the same layout).
      {Opcode::TensorDequantize,
       "tensor_dequantize",
       Queue::Pool,
       archs_from(Arch::Cayman),
       "is_valid_tensor_dequantize",
       {contract::tensor_dequantize_t3d, contract::tensor_dequantize_t3d,
        contract::tensor_dequantize_m3d, contract::tensor_dequantize_m3d},
       std::vector<AsmField>{
           TPB_ASM(S3D3TensDequant, dequant_fmt, "fmt", DqFmt, true, 0),
           TPB_ASM(S3D3TensDequant, group_size, "group", U8, false, 0),
           TPB_ASM(S3D3TensDequant, num_active_channels, "channels", U8, true, 0),
           TPB_ASM(S3D3TensDequant, in_dtype, "in_dtype", Dtype, false, kUint32),
           TPB_ASM(S3D3TensDequant, out_dtype, "out_dtype", Dtype, false, kUint32),
           TPB_ASM(S3D3TensDequant, src_mem_pattern, "src", Mem3D, true, 0),
           TPB_ASM(S3D3TensDequant, dst_mem_pattern, "dst", Mem3D, true, 0),
           TPB_ASM(S3D3TensDequant, reserved0, "reserved0", Bytes, false, 0),
           TPB_ASM(S3D3TensDequant, reserved1, "reserved1", Bytes, false, 0),
           TPB_ASM(S3D3TensDequant, reserved2, "reserved2", Bytes, false, 0)},
       {{Queue::Pool, kEveryArch, 16, 0, kva::kPoolTensorDequantize}}},
      // seed 000 §1: POOL kernel_info idx14 (not modelled)
      {Opcode::GetSequenceBounds,
       "get_sequence_bounds",
       Queue::Pool,
       kEveryArch,
       "",
       kNoContract,
       std::nullopt,
       {{Queue::Pool, kEveryArch, 14, 0, kva::kPoolGetSequenceBounds}}},
      // SPEC §10 DMA descriptor: home is a DMA queue (any of dma0..dma15: the
      // `.engine` it is written under, in a binary its `queue` byte), no
      // kernel_info record (the queue executes the descriptor directly).
      // Generations: every one (TIMING.md [J]).
      {Opcode::DmaCopy,
       "dma_copy",
       Queue::Dma0,
       kEveryArch,
       "is_valid_dma_copy",
       every_arch(contract::dma_copy),
       std::vector<AsmField>{TPB_ASM(DmaDescriptor, num_rows, "rows", U8, true, 0),
                             TPB_ASM(DmaDescriptor, row_bytes, "row_bytes", U32, true, 0),
                             TPB_ASM(DmaDescriptor, src, "src", DmaEnd, true, 0),
                             TPB_ASM(DmaDescriptor, dst, "dst", DmaEnd, true, 0),
                             TPB_ASM(DmaDescriptor, dst_rmw_op, "rmw", DmaOp, false, 0),
                             TPB_ASM(DmaDescriptor, rmw_dtype, "rmw_dtype", Dtype, false, 0),
                             TPB_ASM(DmaDescriptor, queue, "queue", U8, false, 0),
                             TPB_ASM(DmaDescriptor, update_core, "update_core", U8, false, 0),
                             TPB_ASM(DmaDescriptor, reserved1, "reserved1", Bytes, false, 0)},
       {}},
      // seed 003 §1, §2.5, §6.1
      {Opcode::QuantizeMX,
       "quantize_mx",
       Queue::Dve,
       archs_from(Arch::Mariana),
       "is_valid_s3dmx1_quant",
       every_arch(contract::s3dmx1_quant),
       std::vector<AsmField>{TPB_ASM(S3DMX1Quant, num_active_channels, "channels", U8, true, 0),
                             TPB_ASM(S3DMX1Quant, in_dtype, "in_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3DMX1Quant, out_dtype, "out_dtype", Dtype, true, 0),
                             TPB_ASM(S3DMX1Quant, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3DMX1Quant, dst_mem_pattern, "dst", Mem1D, true, 0),
                             TPB_ASM(S3DMX1Quant, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3DMX1Quant, reserved1, "reserved1", Bytes, false, 0),
                             TPB_ASM(S3DMX1Quant, reserved2, "reserved2", Bytes, false, 0)},
       {{Queue::Dve, kEveryArch, 0, 0, kva::kDveQuantizeMx}}},
      // SPEC §18: the wait-only instruction (opcode, encoding and records:
      // conventions). Every compute engine (the ACT too) and DMA queue executes it; its
      // `queue` byte says which (a binary's routing), its home is POOL for a
      // word that names none. Each compute engine's table holds it: POOL at
      // idx13, the others at idx31, clear of the records others take.
      {Opcode::Nop,
       "nop",
       Queue::Pool,
       kEveryArch,
       "is_valid_nop",
       every_arch(contract::nop),
       std::vector<AsmField>{TPB_ASM(NopWord, queue, "queue", U8, false, 0),
                             TPB_ASM(NopWord, reserved, "reserved", Bytes, false, 0)},
       {{Queue::Pool, kEveryArch, kNopPoolRecord, 0, kva::kPoolNop},
        {Queue::Dve, kEveryArch, kNopRecord, 0, kva::kDveNop},
        {Queue::Pe, kEveryArch, kNopRecord, 0, kva::kPeNop},
        {Queue::Sfu, kEveryArch, kNopRecord, 0, kva::kSfuNop},
        {Queue::Act, kActArchs, kNopRecord, 0, kva::kActNop}}},
      // seed 000 §1: POOL kernel_info idx15 (not modelled)
      {Opcode::NonzeroWithCount,
       "nonzero_with_count",
       Queue::Pool,
       kEveryArch,
       "",
       kNoContract,
       std::nullopt,
       {{Queue::Pool, kEveryArch, 15, 0, kva::kPoolNonzeroWithCount}}},
  };
  return rows;
}

#undef TPB_ASM
#undef TPB_ASM_GRP
#undef TPB_ASM_BITS
#undef TPB_ASM_NAMED
#undef TPB_ASM_SCALAR

const OpcodeInfo* opcode_info(std::uint8_t opcode) {
  static const std::array<const OpcodeInfo*, 256> by_code = [] {
    std::array<const OpcodeInfo*, 256> a{};
    for (const OpcodeInfo& row : opcode_table()) a[row.code()] = &row;
    return a;
  }();
  return by_code[opcode];
}

const KernelInfoSlot* OpcodeInfo::kernel_info_on(Queue engine, Arch a) const {
  if (arch_index(a) >= kNumArchs) return nullptr;
  for (const KernelInfoSlot& s : kernel_info)
    if (s.engine == engine && (s.archs & arch_bit(a))) return &s;
  return nullptr;
}

bool OpcodeInfo::has_engine(Queue engine) const {
  if (is_dma_queue(home)) return is_dma_queue(engine);
  return std::any_of(kernel_info.begin(), kernel_info.end(),
                     [engine](const KernelInfoSlot& s) { return s.engine == engine; });
}

bool OpcodeInfo::runs_on(Queue e, Arch a) const {
  if (is_dma_queue(home)) return is_dma_queue(e) && exists_on(a);
  return kernel_info_on(executing_engine(e, a), a) != nullptr;
}

unsigned selector_for(const OpcodeInfo& row, Queue queue) {
  // A word that names its queue in a byte of its own (dma_copy, nop) has no
  // selector.
  if (row.opcode == Opcode::DmaCopy || row.opcode == Opcode::Nop) return 0;
  if (!is_compute_engine(queue) || queue == row.home || !row.has_engine(queue)) return 0;
  return engine_index(queue) + 1;
}

Queue word_queue(const RawInst& raw) {
  if (raw[0] == static_cast<std::uint8_t>(Opcode::DmaCopy)) {
    const std::uint8_t q = raw[offsetof(DmaDescriptor, queue)];
    return dma_queue(q < kNumDmaQueues ? q : 0);
  }
  if (raw[0] == static_cast<std::uint8_t>(Opcode::Nop)) {  // its queue byte, else its home
    const std::uint8_t q = raw[offsetof(NopWord, queue)];
    return q < kNumQueues ? static_cast<Queue>(q) : Queue::Pool;
  }
  const unsigned sel = engine_selector(raw);
  if (sel >= 1 && sel <= kNumEngines) return kEngines[sel - 1];
  const OpcodeInfo* row = opcode_info(raw[0]);
  return row ? row->home : Queue::Pool;  // convention: unknown opcodes go to POOL
}

void append_kernel_info_record(std::vector<std::uint8_t>& out, std::uint8_t spec,
                               std::uint8_t opcode, std::uint32_t func_va) {
  const std::uint8_t rec[kKernelInfoRecordBytes] = {0,
                                                    0,
                                                    spec,
                                                    opcode,
                                                    static_cast<std::uint8_t>(func_va),
                                                    static_cast<std::uint8_t>(func_va >> 8),
                                                    static_cast<std::uint8_t>(func_va >> 16),
                                                    static_cast<std::uint8_t>(func_va >> 24)};
  out.insert(out.end(), rec, rec + kKernelInfoRecordBytes);
}

std::vector<std::uint8_t> default_kernel_info_bytes(Queue engine, Arch arch) {
  struct Placed {
    const OpcodeInfo* row;
    const KernelInfoSlot* slot;
  };
  std::vector<Placed> placed;
  std::size_t records = 0;
  for (const OpcodeInfo& row : opcode_table()) {
    if (const KernelInfoSlot* s = row.kernel_info_on(engine, arch)) {
      placed.push_back({&row, s});
      records = std::max<std::size_t>(records, s->index + 1u);
    }
  }
  std::vector<std::uint8_t> out;
  out.reserve(records * kKernelInfoRecordBytes);
  for (std::size_t i = 0; i < records; ++i) {
    const auto it = std::find_if(placed.begin(), placed.end(),
                                 [i](const Placed& p) { return p.slot->index == i; });
    if (it == placed.end())
      append_kernel_info_record(out, 0, 0, 0);  // not recovered by the seeds: empty
    else
      append_kernel_info_record(out, it->slot->spec, it->row->code(), it->slot->func_va);
  }
  return out;
}

}  // namespace tpb::isa

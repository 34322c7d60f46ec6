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

constexpr std::array<ContractFn, kNumArchs> kNoContract{};
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

// Rows in opcode order. Assembler fields: the members of the instruction's
// struct (encodings.h; seed 000 §2 and seed 003 §2.5, §3.2, §3.3), printed in
// the order listed. contract_fns are indexed
// SUNDA, CAYMAN, MARIANA, MAVERICK. The POOL and DVE kernel_info tables are
// the same on every generation; the PE table changes at MAVERICK. The DVE
// table: idx0 QuantizeMX (seed 003 §1), idx1 tensor_copy (convention).
const std::vector<OpcodeInfo>& opcode_table() {
  static const std::vector<OpcodeInfo> rows = {
      // seed 003 §3.3 LDWEIGHTS (v5). Its kernel_info record reuses the v4
      // handler VA (convention: no v5 bytes in the seeds); so does MATMUL's.
      // A LoadStationary: it issues on the PE's stationary unit.
      {Opcode::Ldweights,
       "ldweights",
       Queue::Pe,
       arch_bit(Arch::Maverick),
       "is_valid_s3_lw",
       every_arch(contract::s3_lw),
       std::vector<AsmField>{TPB_ASM(S3Lw, in_dtype, "in_dtype", Dtype, true, 0),
                             TPB_ASM(S3Lw, num_active_rows, "rows", U8, true, 0),
                             TPB_ASM(S3Lw, num_active_cols, "cols", U8, true, 0),
                             TPB_ASM_GRP(S3Lw, row_grp, "row_grp", num_active_rows),
                             TPB_ASM(S3Lw, col_grp, "col_grp", Grp, false, 0xF),
                             TPB_ASM(S3Lw, mx_perf_mode, "perf", Perf, false, 0),
                             TPB_ASM(S3Lw, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3Lw, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3Lw, reserved1, "reserved1", Bytes, false, 0),
                             TPB_ASM(S3Lw, reserved2, "reserved2", Bytes, false, 0)},
       {{arch_bit(Arch::Maverick), 0, 0, kva::kPeLdweightsMx}},
       IssueUnit::Stationary},
      // seed 003 §3.3 MATMUL (v5)
      {Opcode::Matmul,
       "matmul",
       Queue::Pe,
       arch_bit(Arch::Maverick),
       "is_valid_s3d3_mm",
       every_arch(contract::s3d3_mm),
       std::vector<AsmField>{TPB_ASM(S3D3Mm, in_dtype, "in_dtype", Dtype, true, 0),
                             TPB_ASM(S3D3Mm, out_dtype, "out_dtype", Dtype, false, kFp32),
                             TPB_ASM(S3D3Mm, num_active_rows, "rows", U8, true, 0),
                             TPB_ASM(S3D3Mm, psum_accumulate_flags, "acc", U8, false, 0),
                             TPB_ASM(S3D3Mm, mx_perf_mode, "perf", Perf, false, 0),
                             TPB_ASM(S3D3Mm, src_mem_pattern, "src", Mem3D, true, 0),
                             TPB_ASM(S3D3Mm, dst_mem_pattern, "dst", Mem3D, true, 0),
                             TPB_ASM(S3D3Mm, reserved0, "reserved0", Bytes, false, 0),
                             TPB_ASM(S3D3Mm, reserved1, "reserved1", Bytes, false, 0),
                             TPB_ASM(S3D3Mm, reserved2, "reserved2", Bytes, false, 0),
                             TPB_ASM(S3D3Mm, reserved3, "reserved3", Bytes, false, 0)},
       {{arch_bit(Arch::Maverick), 1, 0, kva::kPeMatmulMx}}},
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
       {{archs_until(Arch::Mariana), 0, 0, kva::kPeLdweightsMx}},
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
       {{archs_until(Arch::Mariana), 1, 0, kva::kPeMatmulMx}}},
      // SPEC §11 DVE tensor_copy (encoding, opcode and record: conventions).
      // Generations: every one (TIMING.md [M]: tensor_copy on v2 on).
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
       {{kEveryArch, 1, 0, kva::kDveTensorCopy}}},
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
       {{kEveryArch, 0, 0, kva::kSfuTquant}}},
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
       {{kEveryArch, 16, 0, kva::kPoolTensorDequantize}}},
      // seed 000 §1: POOL kernel_info idx14 (not modelled)
      {Opcode::GetSequenceBounds,
       "get_sequence_bounds",
       Queue::Pool,
       kEveryArch,
       "",
       kNoContract,
       std::nullopt,
       {{kEveryArch, 14, 0, kva::kPoolGetSequenceBounds}}},
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
       {{kEveryArch, 0, 0, kva::kDveQuantizeMx}}},
      // seed 000 §1: POOL kernel_info idx15 (not modelled)
      {Opcode::NonzeroWithCount,
       "nonzero_with_count",
       Queue::Pool,
       kEveryArch,
       "",
       kNoContract,
       std::nullopt,
       {{kEveryArch, 15, 0, kva::kPoolNonzeroWithCount}}},
  };
  return rows;
}

#undef TPB_ASM
#undef TPB_ASM_GRP

const OpcodeInfo* opcode_info(std::uint8_t opcode) {
  static const std::array<const OpcodeInfo*, 256> by_code = [] {
    std::array<const OpcodeInfo*, 256> a{};
    for (const OpcodeInfo& row : opcode_table()) a[row.code()] = &row;
    return a;
  }();
  return by_code[opcode];
}

const KernelInfoSlot* OpcodeInfo::kernel_info_on(Arch a) const {
  if (arch_index(a) >= kNumArchs) return nullptr;
  for (const KernelInfoSlot& s : kernel_info)
    if (s.archs & arch_bit(a)) return &s;
  return nullptr;
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
    if (row.home != engine) continue;
    if (const KernelInfoSlot* s = row.kernel_info_on(arch)) {
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

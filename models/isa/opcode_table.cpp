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
// The wait-only instruction's record: POOL idx13 (its table stays seed 000's 17
// records; idx0..13 are not recovered by the seed), DVE / PE / SFU idx31.
constexpr std::uint8_t kNopPoolRecord = 13;
constexpr std::uint8_t kNopRecord = 31;
// The same contract function on every generation: the contract's own
// generation predicate (e.g. smx1_lw_valid_nc) reports the ones it is not on.
constexpr std::array<ContractFn, kNumArchs> every_arch(ContractFn fn) { return {fn, fn, fn, fn}; }

}  // namespace

// Rows in opcode order. Assembler field offsets: encodings.h (static_asserted
// there), seed 000 §2 and seed 003 §2.5, §3.2, §3.3. contract_fns are indexed
// SUNDA, CAYMAN, MARIANA, MAVERICK. The POOL and DVE kernel_info tables are
// the same on every generation; the PE table changes at MAVERICK. The DVE
// table: idx0 QuantizeMX (seed 003 §1), idx1 tensor_copy (convention).
const std::vector<OpcodeInfo>& opcode_table() {
  static const std::vector<OpcodeInfo> rows = {
      // seed 003 §3.3 LDWEIGHTS (v5). Its kernel_info record reuses the v4
      // handler VA (convention: no v5 bytes in the seeds); so does MATMUL's.
      {Opcode::Ldweights,
       "ldweights",
       Queue::Pe,
       arch_bit(Arch::Maverick),
       "is_valid_s3_lw",
       every_arch(contract::s3_lw),
       std::vector<AsmField>{{"in_dtype", K::Dtype, 32, 1, true, 0},
                             {"rows", K::U8, 33, 1, true, 0},
                             {"cols", K::U8, 34, 1, true, 0},
                             {"row_grp", K::Grp, 35, 1, false, 0, 33},
                             {"col_grp", K::Grp, 36, 1, false, 0xF},
                             {"perf", K::Perf, 39, 1, false, 0},
                             {"src", K::Mem3D, 12, 16, true, 0},
                             {"reserved0", K::Bytes, 28, 4, false, 0},
                             {"reserved1", K::Bytes, 37, 2, false, 0},
                             {"reserved2", K::Bytes, 40, 24, false, 0}},
       {{arch_bit(Arch::Maverick), 0, 0, kva::kPeLdweightsMx}}},
      // seed 003 §3.3 MATMUL (v5)
      {Opcode::Matmul,
       "matmul",
       Queue::Pe,
       arch_bit(Arch::Maverick),
       "is_valid_s3d3_mm",
       every_arch(contract::s3d3_mm),
       std::vector<AsmField>{{"in_dtype", K::Dtype, 32, 1, true, 0},
                             {"out_dtype", K::Dtype, 33, 1, false, kFp32},
                             {"rows", K::U8, 34, 1, true, 0},
                             {"acc", K::U8, 35, 1, false, 0},
                             {"perf", K::Perf, 40, 1, false, 0},
                             {"src", K::Mem3D, 12, 16, true, 0},
                             {"dst", K::Mem3D, 44, 16, true, 0},
                             {"reserved0", K::Bytes, 28, 4, false, 0},
                             {"reserved1", K::Bytes, 36, 4, false, 0},
                             {"reserved2", K::Bytes, 41, 3, false, 0},
                             {"reserved3", K::Bytes, 60, 4, false, 0}},
       {{arch_bit(Arch::Maverick), 1, 0, kva::kPeMatmulMx}}},
      // seed 003 §3.1, §3.2 LdweightsMX (v4)
      {Opcode::LdweightsMX,
       "ldweights_mx",
       Queue::Pe,
       arch_bit(Arch::Mariana),
       "is_valid_smx1_lw",
       every_arch(contract::smx1_lw),
       std::vector<AsmField>{{"in_dtype", K::Dtype, 32, 1, true, 0},
                             {"rows", K::U8, 38, 1, true, 0},
                             {"cols", K::U8, 39, 1, true, 0},
                             {"row_grp", K::Grp, 44, 1, false, 0, 38},
                             {"col_grp", K::Grp, 45, 1, false, 0xF},
                             {"src", K::Mem1D, 16, 16, true, 0},
                             {"reserved0", K::Bytes, 12, 4, false, 0},
                             {"reserved1", K::Bytes, 33, 5, false, 0},
                             {"reserved2", K::Bytes, 40, 4, false, 0},
                             {"reserved3", K::Bytes, 46, 18, false, 0}},
       {{archs_until(Arch::Mariana), 0, 0, kva::kPeLdweightsMx}}},
      // seed 003 §3.1, §3.2 MatmulMX (v4)
      {Opcode::MatmulMX,
       "matmul_mx",
       Queue::Pe,
       arch_bit(Arch::Mariana),
       "is_valid_smx1d3_mm",
       every_arch(contract::smx1d3_mm),
       std::vector<AsmField>{{"in_dtype", K::Dtype, 32, 1, true, 0},
                             {"out_dtype", K::Dtype, 40, 1, false, kFp32},
                             {"rows", K::U8, 38, 1, true, 0},
                             {"acc", K::U8, 43, 1, false, 0},
                             {"src", K::Mem1D, 16, 16, true, 0},
                             {"dst", K::Mem3D, 48, 16, true, 0},
                             {"reserved0", K::Bytes, 12, 4, false, 0},
                             {"reserved1", K::Bytes, 33, 5, false, 0},
                             {"reserved2", K::Bytes, 39, 1, false, 0},
                             {"reserved3", K::Bytes, 41, 2, false, 0},
                             {"reserved4", K::Bytes, 44, 4, false, 0}},
       {{archs_until(Arch::Mariana), 1, 0, kva::kPeMatmulMx}}},
      // SPEC §11 DVE tensor_copy (encoding, opcode and record: conventions).
      // Generations: every one (TIMING.md [M]: tensor_copy on v2 on).
      {Opcode::TensorCopy,
       "tensor_copy",
       Queue::Dve,
       kEveryArch,
       "is_valid_tensor_copy",
       every_arch(contract::tensor_copy),
       std::vector<AsmField>{{"channels", K::U8, 34, 1, true, 0},
                             {"in_dtype", K::Dtype, 32, 1, false, kFp32},
                             {"out_dtype", K::Dtype, 33, 1, true, 0},
                             {"src", K::Mem3D, 12, 16, true, 0},
                             {"dst", K::Mem3D, 44, 16, true, 0},
                             {"reserved0", K::Bytes, 28, 4, false, 0},
                             {"reserved1", K::Bytes, 35, 9, false, 0},
                             {"reserved2", K::Bytes, 60, 4, false, 0}},
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
      // seed 000 §1, §2; TENSOR3D operands on SUNDA / CAYMAN, MEM_PATTERN3D from MARIANA
      {Opcode::TensorDequantize,
       "tensor_dequantize",
       Queue::Pool,
       archs_from(Arch::Cayman),
       "is_valid_tensor_dequantize",
       {contract::tensor_dequantize_t3d, contract::tensor_dequantize_t3d,
        contract::tensor_dequantize_m3d, contract::tensor_dequantize_m3d},
       std::vector<AsmField>{{"fmt", K::DqFmt, 35, 1, true, 0},
                             {"group", K::U8, 36, 1, false, 0},
                             {"channels", K::U8, 34, 1, true, 0},
                             {"in_dtype", K::Dtype, 32, 1, false, kUint32},
                             {"out_dtype", K::Dtype, 33, 1, false, kUint32},
                             {"src", K::Mem3D, 12, 16, true, 0},
                             {"dst", K::Mem3D, 44, 16, true, 0},
                             {"reserved0", K::Bytes, 28, 4, false, 0},
                             {"reserved1", K::Bytes, 37, 7, false, 0},
                             {"reserved2", K::Bytes, 60, 4, false, 0}},
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
       std::vector<AsmField>{{"rows", K::U8, 12, 1, true, 0},
                             {"row_bytes", K::U32, 16, 4, true, 0},
                             {"src", K::DmaEnd, 32, 16, true, 0},
                             {"dst", K::DmaEnd, 48, 16, true, 0},
                             {"rmw", K::DmaOp, 13, 1, false, 0},
                             {"rmw_dtype", K::Dtype, 14, 1, false, 0},
                             {"queue", K::U8, 15, 1, false, 0},
                             {"update_core", K::U8, 20, 1, false, 0},
                             {"reserved1", K::Bytes, 21, 11, false, 0}},
       {}},
      // seed 003 §1, §2.5, §6.1
      {Opcode::QuantizeMX,
       "quantize_mx",
       Queue::Dve,
       archs_from(Arch::Mariana),
       "is_valid_s3dmx1_quant",
       every_arch(contract::s3dmx1_quant),
       std::vector<AsmField>{{"channels", K::U8, 33, 1, true, 0},
                             {"in_dtype", K::Dtype, 34, 1, false, kFp32},
                             {"out_dtype", K::Dtype, 35, 1, true, 0},
                             {"src", K::Mem3D, 16, 16, true, 0},
                             {"dst", K::Mem1D, 48, 16, true, 0},
                             {"reserved0", K::Bytes, 12, 4, false, 0},
                             {"reserved1", K::Bytes, 32, 1, false, 0},
                             {"reserved2", K::Bytes, 36, 12, false, 0}},
       {{kEveryArch, 0, 0, kva::kDveQuantizeMx}}},
      // SPEC §18: the wait-only instruction (opcode, encoding and records:
      // conventions). Every compute engine and DMA queue executes it; its
      // `queue` byte says which (a binary's routing), its home is POOL for a
      // word that names none. Each compute engine's table holds it: POOL at
      // idx13, the others at idx31, clear of the records others take.
      {Opcode::Nop,
       "nop",
       Queue::Pool,
       kEveryArch,
       "is_valid_nop",
       every_arch(contract::nop),
       std::vector<AsmField>{{"queue", K::U8, 12, 1, false, 0},
                             {"reserved", K::Bytes, 13, 51, false, 0}},
       {{kEveryArch, kNopPoolRecord, 0, kva::kPoolNop, Queue::Pool},
        {kEveryArch, kNopRecord, 0, kva::kDveNop, Queue::Dve},
        {kEveryArch, kNopRecord, 0, kva::kPeNop, Queue::Pe},
        {kEveryArch, kNopRecord, 0, kva::kSfuNop, Queue::Sfu}}},
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

const OpcodeInfo* opcode_info(std::uint8_t opcode) {
  static const std::array<const OpcodeInfo*, 256> by_code = [] {
    std::array<const OpcodeInfo*, 256> a{};
    for (const OpcodeInfo& row : opcode_table()) a[row.code()] = &row;
    return a;
  }();
  return by_code[opcode];
}

const KernelInfoSlot* OpcodeInfo::kernel_info_on(Arch a, Queue e) const {
  if (arch_index(a) >= kNumArchs) return nullptr;
  for (const KernelInfoSlot& s : kernel_info)
    if ((s.archs & arch_bit(a)) && s.engine.value_or(home) == e) return &s;
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
    if (const KernelInfoSlot* s = row.kernel_info_on(arch, engine)) {
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

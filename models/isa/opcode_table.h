// The opcode table (pure C++): one row per opcode holding everything the
// model knows about it — mnemonic, home engine, the generations it exists
// on, its validity contract per generation, its assembler field spec and its
// kernel_info record. Every consumer (opcode_mnemonic, home_engine, the
// checker, the assembler / disassembler, the default kernel_info tables, the
// firmware stubs' trampoline VAs) reads this table.
//
// Adding an opcode: its struct and Opcode value (encodings.h), its predicates
// (predicates.h) and contract function (checker.h / checker.cpp), one row in
// opcode_table.cpp, and its kernel (firmware_stubs/<engine>/).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/checker.h"
#include "models/isa/encodings.h"

namespace tpb::isa {

// ---------------------------------------------------------------------------
// Sets of generations (SPEC §1)
using ArchSet = std::uint8_t;
inline constexpr unsigned kNumArchs = 4;  // SUNDA .. MAVERICK
constexpr unsigned arch_index(Arch a) { return nc_version(a) - nc_version(Arch::Sunda); }
constexpr ArchSet arch_bit(Arch a) { return static_cast<ArchSet>(1u << arch_index(a)); }
// `a` and every later generation.
constexpr ArchSet archs_from(Arch a) {
  return static_cast<ArchSet>(((1u << kNumArchs) - 1u) & ~(arch_bit(a) - 1u));
}
// `a` and every earlier generation.
constexpr ArchSet archs_until(Arch a) { return static_cast<ArchSet>((arch_bit(a) << 1) - 1u); }
inline constexpr ArchSet kEveryArch = archs_from(Arch::Sunda);

// ---------------------------------------------------------------------------
// Trampoline VAs (the funcVA of a kernel_info record), written once here: the
// default kernel_info tables and the firmware stubs read them. The POOL idx16
// record is byte-exact from seed 000 §1; idx14 / idx15 and the DVE's idx1
// (tensor_copy) are model conventions (docs/CONVENTIONS.md). The DMA queues
// have no kernel_info table: they execute a descriptor directly.
namespace kva {
inline constexpr std::uint32_t kPoolGetSequenceBounds = 0x010049a0;  // idx14, convention
inline constexpr std::uint32_t kPoolNonzeroWithCount = 0x01004b40;   // idx15, convention
inline constexpr std::uint32_t kPoolTensorDequantize = 0x01004dc4;   // seed 000 §1, idx16
inline constexpr std::uint32_t kDveQuantizeMx = 0x0000317a;          // seed 003 §1
inline constexpr std::uint32_t kDveTensorCopy = 0x00003200;          // DVE idx1, convention
inline constexpr std::uint32_t kPeLdweightsMx = 0x00002baf;          // seed 003 §3.1
inline constexpr std::uint32_t kPeMatmulMx = 0x00002bb7;             // seed 003 §3.1
inline constexpr std::uint32_t kSfuTquant = 0x00004a00;              // SFU idx0, convention
// The wait-only instruction's trampoline on each compute engine (conventions).
inline constexpr std::uint32_t kPoolNop = 0x01004f00;
inline constexpr std::uint32_t kDveNop = 0x00003300;
inline constexpr std::uint32_t kPeNop = 0x00002c00;
inline constexpr std::uint32_t kSfuNop = 0x00004b00;
}  // namespace kva

// ---------------------------------------------------------------------------
// Assembler field spec (docs/ASM.md): one entry per field of the mnemonic
// form; the same entries drive assembly and disassembly (models/isa/asm.cpp).
enum class AsmFieldKind : std::uint8_t {
  U8,
  U16,
  U32,
  Dtype,
  DqFmt,
  Perf,
  Grp,     // a 32-row/column group mask, printed in hex; row_grp's default derives
           // from num_active_rows (one bit per started group of 32), col_grp's is 0xf
  Bytes,   // reserved bytes, a list of byte values
  Mem3D,   // MEM_PATTERN3D union: t3d(...) / mx(...) / i(...)
  Mem1D,   // MXMEM_PATTERN1D union: mx1d(...) / i(...)
  DmaEnd,  // DMA descriptor endpoint (16 bytes, u64 HBM offsets): hbm(...) / sbuf(...) / end(...)
  DmaOp,   // DMA dst_rmw_op: none / add
  Wait,
  Update,
  Hidden  // settable, printed by a dedicated printer (header, events)
};

struct AsmField {
  const char* name;
  AsmFieldKind kind;
  std::uint8_t off;
  std::uint8_t len;  // bytes
  bool required;
  std::uint32_t def;
  int from = -1;  // Grp: offset of the count field the default mask derives from
};

// ---------------------------------------------------------------------------
// kernel_info records (seed 000 §1, SPEC §7): 8 bytes {u8 0, u8 0, u8 spec,
// u8 opcode, u32_le funcVA}, in the home engine's table.
inline constexpr std::size_t kKernelInfoRecordBytes = 8;

// An opcode's record in its home engine's default table on some generations.
struct KernelInfoSlot {
  ArchSet archs;          // generations whose default table holds this record
  std::uint8_t index;     // record index in the engine's table
  std::uint8_t spec;      // spec byte
  std::uint32_t func_va;  // trampoline VA (a kva:: constant)
  // The engine whose table holds it: the row's home when not given (an
  // opcode every engine executes, the wait-only `nop`, has one per engine).
  std::optional<Queue> engine{};
};

// ---------------------------------------------------------------------------
// One row of the table.
struct OpcodeInfo {
  Opcode opcode;
  std::string_view mnemonic;
  Queue home;     // the engine that executes it (and whose kernel_info holds it)
  ArchSet archs;  // generations on which it exists
  // Validity contract: its name ("" when none) and its function per
  // generation, indexed by arch_index() (null: no contract on that one).
  std::string_view contract;
  std::array<ContractFn, kNumArchs> contract_fns;
  // The mnemonic form's fields (printed in this order); none: the opcode has
  // no mnemonic form and is written as `.raw`.
  std::optional<std::vector<AsmField>> asm_fields;
  std::vector<KernelInfoSlot> kernel_info;

  std::uint8_t code() const { return static_cast<std::uint8_t>(opcode); }
  bool exists_on(Arch a) const { return arch_index(a) < kNumArchs && (archs & arch_bit(a)) != 0; }
  ContractFn contract_fn(Arch a) const {
    return arch_index(a) < kNumArchs ? contract_fns[arch_index(a)] : nullptr;
  }
  // The kernel_info record of this opcode on `a` (in engine `e`'s table;
  // without `e`, its home's), or null.
  const KernelInfoSlot* kernel_info_on(Arch a) const { return kernel_info_on(a, home); }
  const KernelInfoSlot* kernel_info_on(Arch a, Queue e) const;
};

// Every row, in opcode order.
const std::vector<OpcodeInfo>& opcode_table();
// The row of an opcode byte, or null when the opcode is unknown.
const OpcodeInfo* opcode_info(std::uint8_t opcode);
// The row of a known opcode.
inline const OpcodeInfo& opcode_row(Opcode op) {
  return *opcode_info(static_cast<std::uint8_t>(op));
}

// Appends one 8-byte kernel_info record.
void append_kernel_info_record(std::vector<std::uint8_t>& out, std::uint8_t spec,
                               std::uint8_t opcode, std::uint32_t func_va);
// The default kernel_info table of `engine` on `arch`, built from the rows:
// as many records as the highest index used + 1, unused indices all zero
// (POOL: 17 records, idx0..12 empty, idx13 the wait-only nop).
std::vector<std::uint8_t> default_kernel_info_bytes(Queue engine, Arch arch);

}  // namespace tpb::isa

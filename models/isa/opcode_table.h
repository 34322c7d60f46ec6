// The opcode table (pure C++): one row per opcode holding everything the
// model knows about it — mnemonic, home engine, the generations it exists
// on, its validity contract per generation, its assembler field spec and its
// kernel_info record. Every consumer (opcode_mnemonic, home_engine, the
// checker, the assembler / disassembler, the default kernel_info tables, the
// firmware stubs' trampoline VAs) reads this table.
//
// Adding an opcode: docs/ARCHITECTURE.md "Adding an opcode" (the ctest
// OpcodeChecklist.* walks every place for every row).
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
#include "models/isa/names.h"

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
// SPEC §18 (every VA a convention): each engine's kernels of an opcode
// several engines run are the engine's own firmware, at its own VA.
inline constexpr std::uint32_t kActActivation = 0x00005000;        // ACT idx0
inline constexpr std::uint32_t kActTensorCopy = 0x00005100;        // ACT idx1
inline constexpr std::uint32_t kActTensorScalar = 0x00005200;      // ACT idx2
inline constexpr std::uint32_t kDveTensorTensor = 0x00003d00;      // DVE idx2 (0x3300: nop)
inline constexpr std::uint32_t kDveTensorScalar = 0x00003400;      // DVE idx3
inline constexpr std::uint32_t kDveTensorReduce = 0x00003500;      // DVE idx4
inline constexpr std::uint32_t kDveTensorTensorScan = 0x00003600;  // DVE idx5
inline constexpr std::uint32_t kDveMemset = 0x00003700;            // DVE idx6
inline constexpr std::uint32_t kDveReciprocal = 0x00003800;        // DVE idx7
inline constexpr std::uint32_t kDveBnStats = 0x00003900;           // DVE idx8
inline constexpr std::uint32_t kDveBnAggr = 0x00003a00;            // DVE idx9
inline constexpr std::uint32_t kDveNcTranspose = 0x00003b00;       // DVE idx10
inline constexpr std::uint32_t kDveActivation = 0x00003c00;        // DVE idx11 (MAVERICK)
inline constexpr std::uint32_t kPoolTensorCopy = 0x01006000;       // POOL idx17
inline constexpr std::uint32_t kPoolTensorTensor = 0x01006100;     // POOL idx18
inline constexpr std::uint32_t kPoolTensorScalar = 0x01006200;     // POOL idx19
inline constexpr std::uint32_t kPoolMemset = 0x01006300;           // POOL idx20
inline constexpr std::uint32_t kPoolIota = 0x01006400;             // POOL idx21
// The wait-only instruction's trampoline on each compute engine (conventions).
inline constexpr std::uint32_t kPoolNop = 0x01004f00;
inline constexpr std::uint32_t kDveNop = 0x00003300;
inline constexpr std::uint32_t kPeNop = 0x00002c00;
inline constexpr std::uint32_t kSfuNop = 0x00004b00;
inline constexpr std::uint32_t kActNop = 0x00005f00;
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
  Hidden,   // settable, printed by a dedicated printer (header, events)
  Named,    // a value of a name table (`names`), or a number
  I32,      // a signed 32-bit number
  I32x3,    // three i32 (a list)
  U16x3,    // three u16 (a list)
  Steps3D,  // a second source's start and steps: t3d(ADDR, step=[..]) (Steps3D)
  Addr,     // an ADDR4 (sbuf(..), psum(..), reg(rN), ..., or a number)
  Scalar,   // an FP32 operand: a number (its value; 0x... its bits), or an
            // address (sbuf(..), psum(..), reg(..)): a per-partition vector,
            // which sets the flag bit `shift` of byte `from`
};

struct AsmField {
  const char* name;
  AsmFieldKind kind;
  std::uint8_t off;
  std::uint8_t len;  // bytes
  bool required;
  std::uint32_t def;
  int from = -1;           // Grp: offset of the count field the default mask derives from;
                           // Scalar: the byte of its vector flag bit
  std::uint8_t shift = 0;  // a bit field's lowest bit (Scalar: its flag bit)
  std::uint8_t bits = 0;   // a bit field's width in bits; 0: the whole bytes
  const NameTable& (*names)() = nullptr;  // Named: the names of its values
  // The bits of byte `off` this field writes (a bit field), 0xFF else.
  std::uint8_t mask() const {
    return bits == 0 ? 0xFF : static_cast<std::uint8_t>(((1u << bits) - 1u) << shift);
  }
};

// ---------------------------------------------------------------------------
// kernel_info records (seed 000 §1, SPEC §7): 8 bytes {u8 0, u8 0, u8 spec,
// u8 opcode, u32_le funcVA}, in the home engine's table.
inline constexpr std::size_t kKernelInfoRecordBytes = 8;

// An opcode's record in an engine's default table on some generations (an
// opcode several engines run has a record in each one's table).
struct KernelInfoSlot {
  Queue engine;           // the compute engine whose table holds it
  ArchSet archs;          // generations whose default table holds this record
  std::uint8_t index;     // record index in the engine's table
  std::uint8_t spec;      // spec byte
  std::uint32_t func_va;  // trampoline VA (a kva:: constant)
};

// The issue unit of its engine an instruction holds for its initiation
// interval (SPEC §8, timing::IssuePipeline): the moving unit, or the PE's
// stationary unit, on which a LoadStationary loads the next weights in the
// background of the running matmul (TIMING.md [A]).
enum class IssueUnit : std::uint8_t { Moving, Stationary };

// ---------------------------------------------------------------------------
// One row of the table.
struct OpcodeInfo {
  Opcode opcode;
  std::string_view mnemonic;
  // The engine a word goes to when its header names none (engine selector
  // 0): the first of the engines that run it (each a kernel_info record).
  Queue home;
  ArchSet archs;  // generations on which it exists
  // Validity contract: its name ("" when none) and its function per
  // generation, indexed by arch_index() (null: no contract on that one).
  std::string_view contract;
  std::array<ContractFn, kNumArchs> contract_fns;
  // The mnemonic form's fields (printed in this order); none: the opcode has
  // no mnemonic form and is written as `.raw`.
  std::optional<std::vector<AsmField>> asm_fields;
  std::vector<KernelInfoSlot> kernel_info;
  IssueUnit issue_unit = IssueUnit::Moving;

  std::uint8_t code() const { return static_cast<std::uint8_t>(opcode); }
  bool exists_on(Arch a) const { return arch_index(a) < kNumArchs && (archs & arch_bit(a)) != 0; }
  ContractFn contract_fn(Arch a) const {
    return arch_index(a) < kNumArchs ? contract_fns[arch_index(a)] : nullptr;
  }
  // The kernel_info record of this opcode in `engine`'s table on `a`, or null.
  const KernelInfoSlot* kernel_info_on(Queue engine, Arch a) const;
  // Whether `engine` runs it on some generation (a DMA queue: dma_copy).
  bool has_engine(Queue engine) const;
  // Whether the instructions of queue `e` run it on `a` (on MAVERICK the
  // ACT queue's on the DVE: executing_engine).
  bool runs_on(Queue e, Arch a) const;
};

// Every row, in opcode order.
const std::vector<OpcodeInfo>& opcode_table();
// The row of an opcode byte, or null when the opcode is unknown.
const OpcodeInfo* opcode_info(std::uint8_t opcode);
// The row of a known opcode.
inline const OpcodeInfo& opcode_row(Opcode op) {
  return *opcode_info(static_cast<std::uint8_t>(op));
}

// The engine selector of HEADER byte 2 (SPEC §18): 0 (the opcode's home), or
// 1 + engine_index of the engine a word was written for.
inline unsigned engine_selector(const RawInst& raw) { return raw[2] >> kEngineSelectorShift; }
// The selector the assembler writes for `row` under `.engine queue`: 0 for
// its home engine or an engine that does not run it (a misplaced word keeps
// its home, as before several engines ran an opcode), else 1 + engine_index.
unsigned selector_for(const OpcodeInfo& row, Queue queue);
// The queue a word is for: a DMA descriptor's `queue` byte (dma0 when it
// names none), the engine its selector names, else its opcode's home engine
// (POOL for an unknown opcode).
Queue word_queue(const RawInst& raw);

// Appends one 8-byte kernel_info record.
void append_kernel_info_record(std::vector<std::uint8_t>& out, std::uint8_t spec,
                               std::uint8_t opcode, std::uint32_t func_va);
// The default kernel_info table of `engine` on `arch`, built from the rows:
// as many records as the highest index used + 1, unused indices all zero
// (POOL: 17 records, idx0..12 empty, idx13 the wait-only nop).
std::vector<std::uint8_t> default_kernel_info_bytes(Queue engine, Arch arch);

}  // namespace tpb::isa

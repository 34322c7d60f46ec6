// The per-engine kernel_info dispatch table (seed 000 §1, SPEC §7): 8-byte
// records {u8 0, u8 0, u8 spec, u8 opcode, u32_le funcVA}; the sequencer looks
// an instruction's opcode up here and enters the trampoline at funcVA.
// Built from bytes so a user can drop in a real carved table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/opcode_table.h"

namespace tpb::sc {

struct KernelInfoRecord {
  unsigned index = 0;  // record index in the table
  std::uint8_t spec = 0;
  std::uint8_t opcode = 0;
  std::uint32_t func_va = 0;  // trampoline VA
};

class KernelInfoTable {
 public:
  static constexpr std::size_t kRecordBytes = isa::kKernelInfoRecordBytes;

  KernelInfoTable() = default;
  // Throws std::invalid_argument when the size is not a multiple of 8.
  explicit KernelInfoTable(const std::vector<std::uint8_t>& bytes);

  // The record of `opcode`, if any. An all-zero record (funcVA 0) is an
  // unrecovered slot and never matches (convention).
  std::optional<KernelInfoRecord> lookup(std::uint8_t opcode) const;
  const std::vector<KernelInfoRecord>& records() const { return records_; }
  std::vector<std::uint8_t> bytes() const;

 private:
  std::vector<KernelInfoRecord> records_;
  static constexpr std::uint32_t kNone = UINT32_MAX;
  std::array<std::uint32_t, 256> first_ = make_none();  // by opcode: records_ index
  static std::array<std::uint32_t, 256> make_none() {
    std::array<std::uint32_t, 256> a{};
    a.fill(kNone);
    return a;
  }
};

// Trampoline VAs: defined once, in the opcode table (models/isa/opcode_table.h).
namespace kva = isa::kva;

// The default tables are built from the opcode table's kernel_info records
// (isa::default_kernel_info_bytes).
// The 17-record POOL table (seed 000 §1): idx14 0xbe, idx15 0xf2, idx16 0x7b;
// idx0..13 are not recovered by the seed: idx13 holds the wait-only nop (a
// convention), the others are empty. The same on every generation.
std::vector<std::uint8_t> pool_kernel_info_bytes(isa::Arch arch = isa::Arch::Mariana);
// The DVE table: QuantizeMX 0xE3 (seed 003 §1). The same on every generation.
std::vector<std::uint8_t> dve_kernel_info_bytes(isa::Arch arch = isa::Arch::Mariana);
// The PE table: 0x09 / 0x0A (v4, seed 003 §3.1); on v5 LDWEIGHTS 0x01 and
// MATMUL 0x02 reuse those handler VAs (convention: no v5 bytes in the seeds).
std::vector<std::uint8_t> pe_kernel_info_bytes(isa::Arch arch);
// The default table of an engine (SFU: empty, TQUANT is a PTO tile op).
KernelInfoTable default_kernel_info(isa::Queue e, isa::Arch arch);

}  // namespace tpb::sc

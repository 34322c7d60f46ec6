// What the encoder (asm_encode.cpp: statement -> word), the formatter
// (asm_format.cpp: word -> text) and the program reader (program_reader.cpp)
// share: the field tables of the mnemonic forms and little-endian byte
// access. Internal to models/isa; the public API is asm.h and program.h.
//
// Each instruction kind is a table of fields (name, kind, byte offset, width,
// default) in its opcode-table row (opcode_table.cpp). The same table drives
// assembly (field=value -> bytes, with range, duplicate and overlap checks)
// and disassembly (bytes -> field=value, printing a field only when it
// differs from its default), so every byte of a known opcode is reachable
// from text and parse(disassemble(w)) == w. Adding a mnemonic is adding its
// row with `asm_fields`; the field kinds (AsmFieldKind) cover scalars, dtypes,
// named enums, reserved byte runs and the 16-byte pattern unions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/isa/encodings.h"
#include "models/isa/lexer.h"
#include "models/isa/opcode_table.h"

namespace tpb::isa::asm_detail {

using FK = AsmFieldKind;
using FieldSpec = AsmField;
// An instruction kind of the syntax: an opcode-table row with asm_fields.
using InstSpec = OpcodeInfo;

// HEADER and EVENTS fields, common to every instruction (SPEC §2).
const std::vector<FieldSpec>& common_fields();
// The row of an opcode / mnemonic with a mnemonic form, or null.
const InstSpec* spec_by_opcode(std::uint8_t op);
const InstSpec* spec_by_mnemonic(std::string_view m);
inline const std::vector<FieldSpec>& fields_of(const InstSpec& s) { return *s.asm_fields; }

// Default of a 32-row group mask: one bit per started group of 32.
inline std::uint8_t grp_mask_for(unsigned count) {
  const unsigned groups = (count + 31) / 32;
  return static_cast<std::uint8_t>((1u << groups) - 1u);
}

inline std::uint32_t get_le(const RawInst& r, unsigned off, unsigned len) {
  std::uint32_t v = 0;
  for (unsigned i = 0; i < len; ++i) v |= static_cast<std::uint32_t>(r[off + i]) << (8 * i);
  return v;
}
inline std::int16_t get_i16(const RawInst& r, unsigned off) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(get_le(r, off, 2)));
}

// Encoder entry points for the program reader.
// One instruction statement from the lexer's position to the end of the line.
// `queue`: the `.engine` of the statement (a dma_copy's `queue` field
// defaults to it when that is a DMA queue).
RawInst assemble(Lexer& lx, Queue queue = Queue::Pool);
// The register `t` (rN, N <= 31) of `what` (".reg"), or an AsmError.
unsigned want_register(Lexer& lx, const Tok& t, const std::string& what);

}  // namespace tpb::isa::asm_detail

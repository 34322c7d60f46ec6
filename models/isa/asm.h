// Assembler / disassembler of the mnemonic program syntax (docs/ASM.md).
// Pure C++. parse_program() and disassemble() of program.h are built on the
// statement-level functions declared here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/isa/encodings.h"
#include "models/isa/program.h"

namespace tpb::isa {

// Mnemonic of an opcode with a mnemonic form in the syntax, or "" (those
// words are written as `.raw`).
std::string_view asm_mnemonic(std::uint8_t opcode);
// Every mnemonic of the syntax, in opcode order.
const std::vector<std::string_view>& asm_mnemonics();

// Names of the syntax for DTYPE ordinals ("uint32", "fp8_e4m3", ...): "" when
// the ordinal is not a DTYPE (it is then written as a number).
std::string_view asm_dtype_name(std::uint8_t dtype);
// Accepts the syntax names and their aliases ("e4m3", "fp8_exp4", ...).
std::optional<std::uint8_t> asm_parse_dtype(std::string_view name);

// An ADDR4 in the syntax: sbuf(P, OFF), psum(P, OFF), reg(rN), shape_reg(..),
// addr_shape_reg(rN), mxv2(..), indirect(..), a 27-bit number or addr4(0xRAW).
std::string format_addr4(std::uint32_t raw);

// Mnemonic form of one word ("tensor_dequantize fmt=... src=..."), or "" when
// its opcode has no mnemonic form.
std::string disassemble_mnemonic(const RawInst& raw);
// The same for a word under `queue` (a dma_copy's `queue` field is shown only
// when it names another DMA queue than the one it is under).
std::string disassemble_mnemonic(const RawInst& raw, Queue queue);

// Assembles one instruction statement ("MNEMONIC field=value ...") written
// on one logical line. Throws AsmError (at `loc` plus the column) on error.
RawInst assemble_statement(std::string_view text, const SourceLoc& loc);

// "FILE:LINE:COL: error: MESSAGE", the form the CLI prints an AsmError in.
std::string format_diagnostic(const AsmError& e);

}  // namespace tpb::isa

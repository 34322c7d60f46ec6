// Programs: their diagnostics, the home engine of each opcode (its
// opcode-table row) and the binary of a program. Reading is in
// program_reader.cpp, disassembly in asm_format.cpp.
#include "models/isa/program.h"

#include "models/isa/asm.h"
#include "models/isa/opcode_table.h"

namespace tpb::isa {

namespace {

std::string where(const SourceLoc& loc) {
  std::string s = loc.file;
  if (loc.line > 0) s += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  return s;
}

}  // namespace

std::size_t Program::size() const {
  std::size_t n = 0;
  for (const auto& q : queues) n += q.size();
  return n;
}

AsmError::AsmError(SourceLoc loc, const std::string& message)
    : std::runtime_error(where(loc) + ": " + message), loc_(std::move(loc)), message_(message) {}

std::string format_diagnostic(const AsmError& e) {
  return where(e.loc()) + ": error: " + e.message();
}

Engine home_engine(std::uint8_t opcode) {
  const OpcodeInfo* row = opcode_info(opcode);
  return row ? row->home : Engine::Pool;  // convention: unknown opcodes go to POOL
}

std::vector<std::uint8_t> to_binary(const Program& p) {
  std::vector<std::uint8_t> out;
  out.reserve(p.size() * kInstBytes);
  for (const auto& q : p.queues)
    for (const auto& inst : q) out.insert(out.end(), inst.raw.begin(), inst.raw.end());
  return out;
}

}  // namespace tpb::isa

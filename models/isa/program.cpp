// Programs: their diagnostics, the home engine of each opcode (its
// opcode-table row) and the binary of a program. Reading is in
// program_reader.cpp, disassembly in asm_format.cpp.
#include "models/isa/program.h"

#include <algorithm>

#include "models/isa/asm.h"
#include "models/isa/input_file.h"
#include "models/isa/opcode_table.h"

namespace tpb::isa {

namespace {

std::string where(const SourceLoc& loc) {
  std::string s = printable(loc.file);
  if (loc.line > 0) s += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  return s;
}

// A message safe and short to print: control characters escaped
// (printable()), and every run of more than 80 non-blank bytes (a token
// echoed from the text) cut to an excerpt that names the token's length
// (the quotes and punctuation around it kept).
std::string bounded(const std::string& m) {
  std::string out;
  std::size_t i = 0;
  while (i < m.size()) {
    std::size_t j = m.find(' ', i);
    if (j == std::string::npos) j = m.size();
    std::string_view run(m.data() + i, j - i);
    if (run.size() <= 80) {
      out += printable(run);
    } else {
      const std::size_t a = std::min(run.find_first_not_of("'\"(["), run.size());
      const std::size_t b = std::max(run.find_last_not_of("'\")],;:") + 1, a);
      out += printable(run.substr(0, a)) + excerpt(run.substr(a, b - a), 64) +
             printable(run.substr(b));
    }
    if (j < m.size()) out += ' ';
    i = j + 1;
  }
  return out;
}

}  // namespace

std::size_t Program::size() const {
  std::size_t n = 0;
  for (const auto& q : queues) n += q.size();
  return n;
}

AsmError::AsmError(SourceLoc loc, const std::string& message)
    : std::runtime_error(where(loc) + ": " + bounded(message)),
      loc_{printable(loc.file), loc.line, loc.col},
      message_(bounded(message)) {}

std::string format_diagnostic(const AsmError& e) {
  return where(e.loc()) + ": error: " + e.message();
}

Queue home_engine(std::uint8_t opcode) {
  const OpcodeInfo* row = opcode_info(opcode);
  return row ? row->home : Queue::Pool;  // convention: unknown opcodes go to POOL
}

bool queue_executes_opcode(Queue queue, const RawInst& raw) {
  if (raw[0] == static_cast<std::uint8_t>(Opcode::Nop)) return true;  // every queue (SPEC §18)
  const bool dma = raw[0] == static_cast<std::uint8_t>(Opcode::DmaCopy);
  if (is_dma_queue(queue)) return dma;
  const OpcodeInfo* row = opcode_info(raw[0]);
  // Unknown: has_known_opcode's failure. Else the queue its header names (its
  // home with selector 0): a word several engines run goes where it says.
  return !dma && (!row || word_queue(raw) == queue);
}

bool dma_copy_on_its_queue(Queue queue, const RawInst& raw) {
  if (!is_dma_queue(queue) || raw[0] != static_cast<std::uint8_t>(Opcode::DmaCopy)) return true;
  const std::uint8_t q = raw[offsetof(DmaDescriptor, queue)];
  return q >= kNumDmaQueues || q == dma_queue_index(queue);  // past dma15: dma_valid_queue's
}

bool nop_on_its_queue(Queue queue, const RawInst& raw) {
  if (raw[0] != static_cast<std::uint8_t>(Opcode::Nop)) return true;
  const std::uint8_t q = raw[offsetof(NopWord, queue)];
  return q >= kNumQueues || q == static_cast<std::uint8_t>(queue);  // past: nop_valid_queue's
}

void fold_word_into_dve(RawInst& raw) {
  if (raw[0] == static_cast<std::uint8_t>(Opcode::Nop))
    raw[offsetof(NopWord, queue)] = static_cast<std::uint8_t>(Queue::Dve);
}

std::vector<std::uint8_t> to_binary(const Program& p) {
  std::vector<std::uint8_t> out;
  out.reserve(p.size() * kInstBytes);
  for (const auto& q : p.queues)
    for (const auto& inst : q) out.insert(out.end(), inst.raw.begin(), inst.raw.end());
  return out;
}

}  // namespace tpb::isa

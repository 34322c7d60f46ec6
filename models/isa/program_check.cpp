#include "models/isa/program_check.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "models/isa/asm.h"

namespace tpb::isa {

std::string mnemonic_or_opcode(std::uint8_t opcode) {
  std::string_view m = asm_mnemonic(opcode);
  if (m.empty()) m = opcode_mnemonic(opcode);
  if (!m.empty()) return std::string(m);
  return fmt::format("opcode 0x{:02x}", opcode);
}

void CheckingSink::inst(Queue e, const RawInst& raw, const SourceLoc& loc) {
  const auto eu = static_cast<unsigned>(e);
  InstructionCheck c{loc, words_, e, index_[eu], raw[0], check_instruction(raw, arch_)};
  // Where it is: the run faults an instruction on a queue that does not
  // execute it (a dispatch fault) or a descriptor naming another queue.
  if (!queue_executes_opcode(e, raw)) c.result.failed.push_back("queue_executes_opcode");
  if (!dma_copy_on_its_queue(e, raw)) c.result.failed.push_back("dma_copy_on_its_queue");
  if (!nop_on_its_queue(e, raw)) c.result.failed.push_back("nop_on_its_queue");
  if (!c.result.valid()) ++invalid_;
  ++index_[eu];
  ++words_;
  on_check_(c);
}

namespace {

ProgramCheck collect(Arch arch, const std::function<void(ProgramSink&)>& stream) {
  ProgramCheck out;
  out.arch = arch;
  CheckingSink sink(arch, [&](const InstructionCheck& c) {
    if (!c.result.valid()) out.failures.push_back(c);
  });
  stream(sink);
  out.checked = sink.checked();
  return out;
}

}  // namespace

ProgramCheck check_program_text(std::string_view text, const std::string& name,
                                std::optional<Arch> arch) {
  const std::string copy(text);
  if (!arch) {
    ArchSink a;
    std::istringstream in(copy);
    parse_program_stream(in, name, a);
    arch = a.found().value_or(Arch::Mariana);
  }
  return collect(*arch, [&](ProgramSink& sink) {
    std::istringstream in(copy);
    parse_program_stream(in, name, sink);
  });
}

ProgramCheck check_program_file(const std::string& path, std::optional<Arch> arch) {
  if (!arch) {
    ArchSink a;
    stream_program(path, a);
    arch = a.found().value_or(Arch::Mariana);
  }
  return collect(*arch, [&](ProgramSink& sink) { stream_program(path, sink); });
}

ProgramCheck check_program_words(const std::uint8_t* data, std::size_t len, const std::string& name,
                                 Arch arch) {
  if (len % kInstBytes != 0)
    throw std::invalid_argument(
        fmt::format("{}: {} bytes is not a whole number of 64-byte instruction words", name, len));
  return collect(arch, [&](ProgramSink& sink) {
    const SourceLoc loc{name, 0, 0};
    for (std::size_t off = 0; off < len; off += kInstBytes) {
      RawInst raw;
      std::memcpy(raw.data(), data + off, kInstBytes);
      sink.inst(binary_queue(raw, name, off / kInstBytes), raw, loc);
    }
  });
}

}  // namespace tpb::isa

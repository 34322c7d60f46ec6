// Fuzz target: the program text parser / assembler, TQUANT blocks included
// (docs/FUZZING.md, docs/ASM.md).
//
// Input: any bytes, taken as program text. Properties:
//   - parse_program either returns a program or throws AsmError naming the
//     file, a line inside the text and a column >= 1, with a message;
//   - whatever parses gets a checker verdict on every generation;
//   - the disassembly of what parsed assembles back to the same .arch,
//     register settings and words per engine (program.h's round trip).
#include <algorithm>
#include <string>
#include <string_view>

#include "models/isa/checker.h"
#include "models/isa/program.h"
#include "sc_tests/fuzz/fuzz_check.h"

namespace {

using namespace tpb::isa;

constexpr std::size_t kMaxBytes = 16 * 1024;  // longer texts only repeat lines

int count_lines(std::string_view s) {
  return 1 + static_cast<int>(std::count(s.begin(), s.end(), '\n')) +
         static_cast<int>(std::count(s.begin(), s.end(), '\r'));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxBytes) return -1;  // not added to the corpus
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Program p;
  try {
    p = parse_program(text, "fuzz.tpb");
  } catch (const AsmError& e) {
    FUZZ_CHECK(e.loc().file == "fuzz.tpb", "error names file '%s'", e.loc().file.c_str());
    FUZZ_CHECK(e.loc().line >= 1 && e.loc().line <= count_lines(text),
               "error at line %d of a %d-line text: %s", e.loc().line, count_lines(text), e.what());
    FUZZ_CHECK(e.loc().col >= 1, "error at column %d: %s", e.loc().col, e.what());
    FUZZ_CHECK(!e.message().empty(), "error without a message at %d:%d", e.loc().line, e.loc().col);
    return 0;
  }
  for (const auto& q : p.queues)
    for (const ProgramInst& inst : q)
      for (Arch a : {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick})
        (void)check_instruction(inst.raw, a);

  const std::string again = disassemble(p);
  Program back;
  try {
    back = parse_program(again, "again.tpb");
  } catch (const AsmError& e) {
    FUZZ_CHECK(false, "the disassembly does not assemble: %s\n%s", e.what(), again.c_str());
  }
  FUZZ_CHECK(back.arch == p.arch, ".arch changed in the round trip");
  FUZZ_CHECK(back.regs.size() == p.regs.size(), ".reg count changed in the round trip");
  for (std::size_t i = 0; i < p.regs.size(); ++i)
    FUZZ_CHECK(back.regs[i].engine == p.regs[i].engine && back.regs[i].reg == p.regs[i].reg &&
                   back.regs[i].value == p.regs[i].value,
               ".reg %zu changed in the round trip", i);
  for (unsigned e = 0; e < kNumQueues; ++e) {
    FUZZ_CHECK(back.queues[e].size() == p.queues[e].size(),
               "queue %u: %zu words, %zu after the round trip", e, p.queues[e].size(),
               back.queues[e].size());
    for (std::size_t i = 0; i < p.queues[e].size(); ++i)
      FUZZ_CHECK(back.queues[e][i].raw == p.queues[e][i].raw,
                 "queue %u word %zu (line %d) changed in the round trip: %s", e, i,
                 p.queues[e][i].loc.line, disassemble_inst(p.queues[e][i].raw).c_str());
  }
  return 0;
}

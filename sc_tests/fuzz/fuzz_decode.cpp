// Fuzz target: the instruction decoder and checker (docs/FUZZING.md).
//
// Input: any bytes, read as 64-byte instruction words (the last one padded
// with zeros; at most kMaxWords words, the rest ignored): "any 64 bytes" is
// one word. Every word is checked on every generation and run through every
// contract, and the whole program is disassembled and assembled back.
// Properties (each a crash when broken):
//   - the checker gives a verdict without throwing, naming only known
//     predicates, and runs the contract of the opcode's table row;
//   - check_as() knows every contract name;
//   - parse_program(disassemble(p)) gives back the same words per engine
//     (program.h); a TQUANT word is disassembled in the block syntax when
//     its text assembles back to it, as .raw otherwise.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/isa/checker.h"
#include "models/isa/program.h"
#include "sc_tests/fuzz/fuzz_check.h"

namespace {

using namespace tpb::isa;

constexpr std::size_t kMaxWords = 8;
constexpr Arch kArchs[] = {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick};

bool known_predicate(std::string_view name) {
  const auto& all = all_predicate_names();
  return std::find(all.begin(), all.end(), name) != all.end();
}

void check_word(const RawInst& raw) {
  for (Arch a : kArchs) {
    const CheckResult r = check_instruction(raw, a);
    for (std::string_view f : r.failed)
      FUZZ_CHECK(known_predicate(f), "unknown predicate name '%.*s'", static_cast<int>(f.size()),
                 f.data());
    const std::string_view want = contract_for_opcode(raw[0]);
    if (!want.empty())
      FUZZ_CHECK(r.contract == want || !r.valid(), "opcode 0x%02x ran contract '%.*s', not '%.*s'",
                 raw[0], static_cast<int>(r.contract.size()), r.contract.data(),
                 static_cast<int>(want.size()), want.data());
    else
      FUZZ_CHECK(!r.valid(), "opcode 0x%02x has no contract but the word is valid", raw[0]);
    for (std::string_view c : all_contract_names()) {
      const auto as = check_as(raw, a, c);
      FUZZ_CHECK(as.has_value(), "check_as does not know contract '%.*s'",
                 static_cast<int>(c.size()), c.data());
      for (std::string_view f : as->failed)
        FUZZ_CHECK(known_predicate(f), "unknown predicate name '%.*s'", static_cast<int>(f.size()),
                   f.data());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::size_t words = std::min(kMaxWords, (size + kInstBytes - 1) / kInstBytes);
  std::vector<std::uint8_t> bytes(words * kInstBytes, 0);
  if (size > 0) std::memcpy(bytes.data(), data, std::min(size, bytes.size()));
  Program p;
  // A whole number of words always parses (a DMA descriptor goes to dma0).
  p = parse_binary(bytes, "fuzz.bin");
  for (const auto& q : p.queues)
    for (const ProgramInst& inst : q) check_word(inst.raw);

  const std::string text = disassemble(p);
  Program back;
  try {
    back = parse_program(text, "fuzz.tpb");
  } catch (const AsmError& e) {
    FUZZ_CHECK(false, "the disassembly does not assemble: %s\n%s", e.what(), text.c_str());
  }
  for (unsigned e = 0; e < kNumQueues; ++e) {
    FUZZ_CHECK(back.queues[e].size() == p.queues[e].size(),
               "queue %u: %zu words disassembled, %zu assembled back\n%s", e, p.queues[e].size(),
               back.queues[e].size(), text.c_str());
    for (std::size_t i = 0; i < p.queues[e].size(); ++i)
      FUZZ_CHECK(back.queues[e][i].raw == p.queues[e][i].raw,
                 "queue %u word %zu does not assemble back to its bytes:\n%s", e, i,
                 disassemble_inst(p.queues[e][i].raw).c_str());
  }
  return 0;
}

// A program checked instruction by instruction against a generation's
// validity contracts (SPEC §9 `tpbsim check`): the one implementation under
// the CLI (which prints each verdict as it streams) and the bindings (which
// return the failures as data). Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/isa/checker.h"
#include "models/isa/program.h"

namespace tpb::isa {

// One instruction's verdict.
struct InstructionCheck {
  SourceLoc loc;        // text: the instruction's line; a binary: line 0
  std::uint64_t word;   // its place in the program, in file order, from 0
  Queue engine;         // the queue it goes to
  std::uint64_t index;  // its place in that engine's stream, from 0
  std::uint8_t opcode;
  CheckResult result;
};

// The mnemonic of the syntax, else the opcode table's name, else "opcode 0xNN".
std::string mnemonic_or_opcode(std::uint8_t opcode);

// Checks each instruction as the program streams in and hands its verdict
// to `on_check`: memory of one instruction, a program of any length.
class CheckingSink : public ProgramSink {
 public:
  using OnCheck = std::function<void(const InstructionCheck&)>;
  CheckingSink(Arch arch, OnCheck on_check) : arch_(arch), on_check_(std::move(on_check)) {}
  void inst(Queue e, const RawInst& raw, const SourceLoc& loc) override;
  std::uint64_t checked() const { return words_; }
  std::uint64_t invalid() const { return invalid_; }

 private:
  Arch arch_;
  OnCheck on_check_;
  std::uint64_t index_[kNumQueues] = {};
  std::uint64_t words_ = 0, invalid_ = 0;
};

// Only a program's `.arch` (the first pass when no generation is given).
class ArchSink : public ProgramSink {
 public:
  void arch(Arch a, const SourceLoc&) override { arch_ = a; }
  void inst(Queue, const RawInst&, const SourceLoc&) override {}
  const std::optional<Arch>& found() const { return arch_; }

 private:
  std::optional<Arch> arch_;
};

// A program in memory, checked whole. Besides its contract, each instruction is
// judged by where it is: queue_executes_opcode (a DMA queue executes dma_copy
// only, a compute engine its own opcodes) and dma_copy_on_its_queue (a
// descriptor's queue byte names the queue it is on); the run faults on both.
struct ProgramCheck {
  Arch arch = Arch::Mariana;               // the generation checked against
  std::uint64_t checked = 0;               // instructions
  std::vector<InstructionCheck> failures;  // the invalid ones, in file order
};
// Program text (SPEC §9): against `arch`, else its `.arch`, else mariana.
// Throws AsmError (file = `name`) at the first syntax error.
ProgramCheck check_program_text(std::string_view text, const std::string& name,
                                std::optional<Arch> arch);
// A program file, text or binary as stream_program decides; against
// `arch`, else its `.arch`, else mariana. Throws as stream_program does.
ProgramCheck check_program_file(const std::string& path, std::optional<Arch> arch);
// Raw 64-byte words, each to its opcode's home engine (a DMA descriptor to
// dma0). Throws std::invalid_argument when `len` is not a multiple of 64.
ProgramCheck check_program_words(const std::uint8_t* data, std::size_t len, const std::string& name,
                                 Arch arch);

}  // namespace tpb::isa

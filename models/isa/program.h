// A program: per-engine instruction streams, engine register settings and an
// optional generation, as read from program text (SPEC §9, docs/ASM.md) or
// from a raw binary of 64-byte words. Pure C++.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"

namespace tpb::isa {

struct SourceLoc {
  std::string file;
  int line = 0;  // 1-based; 0 = not from text (binary input)
  int col = 0;   // 1-based
};

struct ProgramInst {
  RawInst raw{};
  SourceLoc loc;
};

struct RegInit {
  Queue engine;
  unsigned reg;  // 0..31
  std::uint32_t value;
  SourceLoc loc;
};

struct Program {
  std::string path;
  std::optional<Arch> arch;  // from `.arch`
  std::array<std::vector<ProgramInst>, kNumQueues> queues;
  std::vector<RegInit> regs;
  std::size_t size() const;  // instructions over all engines
};

// Malformed text: "file:line:col: message". The file name and the message
// are printable() (control characters escaped) and a token echoed in the
// message is cut to a bounded excerpt (input_file.h excerpt()).
class AsmError : public std::runtime_error {
 public:
  AsmError(SourceLoc loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

// Receives a program item by item as it is read (streaming: a program of any
// length is read in memory proportional to one line).
class ProgramSink {
 public:
  virtual ~ProgramSink() = default;
  virtual void arch(Arch /*a*/, const SourceLoc& /*loc*/) {}
  virtual void reg(const RegInit& /*r*/) {}
  virtual void inst(Queue e, const RawInst& raw, const SourceLoc& loc) = 0;
};

// A sink that builds a whole Program in memory.
class ProgramBuilder : public ProgramSink {
 public:
  explicit ProgramBuilder(std::string path) { p_.path = std::move(path); }
  void arch(Arch a, const SourceLoc&) override { p_.arch = a; }
  void reg(const RegInit& r) override { p_.regs.push_back(r); }
  void inst(Queue e, const RawInst& raw, const SourceLoc& loc) override {
    p_.queues[static_cast<unsigned>(e)].push_back(ProgramInst{raw, loc});
  }
  Program take() { return std::move(p_); }

 private:
  Program p_;
};

// Parses program text; throws AsmError at the first error.
Program parse_program(std::string_view text, const std::string& path);
// Parses program text from a stream, line by line, into `sink` (AsmError at
// the first error; std::runtime_error on a read error).
void parse_program_stream(std::istream& in, const std::string& path, ProgramSink& sink);
// Streams a program file (text or binary, decided as load_program does) into
// `sink`, reading it once in bounded memory.
void stream_program(const std::string& path, ProgramSink& sink);
// A raw binary: a whole number of 64-byte words, each sent to the queue it
// is for (binary_queue()). Throws std::runtime_error on a size error.
Program parse_binary(const std::vector<std::uint8_t>& bytes, const std::string& path);
// The queue binary word `word` of `path` goes to (word_queue): the engine
// its header's selector names, else its opcode's home engine; a DMA
// descriptor's is the DMA queue of its `queue` byte (15), dma0 when that
// names none (dma_valid_queue fails then); a wait-only `nop`'s is the queue
// of its `queue` byte (12), its home (POOL) when that names none. Every word
// has one, so it does not
// throw today; `path` and `word` name the word if that changes.
Queue binary_queue(const RawInst& raw, const std::string& path, std::uint64_t word);
// Reads a file: binary when it is not valid UTF-8 text or ends in .bin, else text.
// Throws std::runtime_error (I/O, a file past kMaxProgramFileBytes) or
// AsmError (syntax).
Program load_program(const std::string& path);
// The largest program file read whole (64 MiB; load_program: tpbsim disasm).
// tpbsim run, asm and check stream a program of any length (stream_program,
// SpooledProgram).
inline constexpr std::size_t kMaxProgramFileBytes = std::size_t{64} << 20;
// The longest line of program text (16 MiB; a statement is a few hundred
// bytes): a longer one is an error at its line, whatever memory is left.
inline constexpr std::size_t kMaxProgramLineBytes = std::size_t{16} << 20;

// Queue that executes an opcode (POOL for unknown opcodes; convention).
Queue home_engine(std::uint8_t opcode);
// Where an instruction is (tpbsim check, and the run): a DMA queue executes
// dma_copy and nop only, a compute engine nop and the words for it: an
// opcode whose home it is (selector 0), or one whose header's engine
// selector names it (SPEC §18; word_queue in opcode_table.h).
bool queue_executes_opcode(Queue queue, const RawInst& raw);
// A dma_copy on a DMA queue names that queue in its `queue` byte (true for
// any other word, and for a byte past dma15: dma_valid_queue's failure): a
// binary sends it where the text ran it.
bool dma_copy_on_its_queue(Queue queue, const RawInst& raw);
// The same for a wait-only `nop` on any queue: its `queue` byte names the
// queue it is on (true for any other word, and for a byte past dma15:
// nop_valid_queue's failure).
bool nop_on_its_queue(Queue queue, const RawInst& raw);
// An ACT word as MAVERICK's DVE runs it (seed 003 folds the ACT into the
// DVE): a wait-only `nop` then names the DVE in its `queue` byte.
void fold_word_into_dve(RawInst& raw);

// Program text for a program: mnemonic form for every well-formed known
// instruction, `.raw` for the rest; parse_program(disassemble(p)) gives back
// the same words.
std::string disassemble(const Program& p);
// One instruction word in mnemonic form (or a `.raw` line). Under a DMA queue
// (`queue`), a dma_copy's `queue` field is shown only when it names another.
std::string disassemble_inst(const RawInst& raw);
std::string disassemble_inst(const RawInst& raw, Queue queue);
// The raw words of a program in engine order (pool, dve, pe, sfu).
std::vector<std::uint8_t> to_binary(const Program& p);

}  // namespace tpb::isa

// Programs of any length (SPEC §9): a program is read once, in bounded
// memory, into one spool per engine (an anonymous temporary file of 64-byte
// words); each engine's instruction fetch then reads its spool sequentially
// through an InstructionSource. Pure C++.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/isa/program.h"

namespace tpb::isa {

// What the race check (SPEC §14) keeps of each instruction when a
// SpooledProgram is asked to (keep_notes): where it is in the program and
// its opcode and EVENTS, for the report's source lines and mnemonics and
// the semaphore plan made before the run. 16 bytes an instruction.
struct InstructionNote {
  // Text: the 1-based line of the instruction (of its first line); a
  // binary: its word index in the file.
  std::uint32_t line = 0;
  Events events{};
  std::uint8_t opcode = 0;
  // A DMA descriptor's update_core (SPEC §15): 1 + the core whose semaphore
  // its update changes; 0 its own core's.
  std::uint8_t update_core = 0;
};
// The update_core of a word (0 unless it is a DMA descriptor naming another core).
inline std::uint8_t update_core_of(const RawInst& w) {
  return w[0] == static_cast<std::uint8_t>(Opcode::DmaCopy)
             ? w[offsetof(DmaDescriptor, update_core)]
             : 0;
}
// The notes of words held in memory (line: the word's index).
std::vector<InstructionNote> notes_of(const std::vector<RawInst>& words);

// A sequential source of one engine's instruction words.
class InstructionSource {
 public:
  virtual ~InstructionSource() = default;
  // Words in all (read or not).
  virtual std::uint64_t size() const = 0;
  // Copies up to n of the next words into out; returns how many (0 at the end).
  virtual std::size_t read(RawInst* out, std::size_t n) = 0;
};

// Words held in memory (tests, small programs built in code).
class VectorSource : public InstructionSource {
 public:
  explicit VectorSource(std::vector<RawInst> words) : words_(std::move(words)) {}
  std::uint64_t size() const override { return words_.size(); }
  std::size_t read(RawInst* out, std::size_t n) override;

 private:
  std::vector<RawInst> words_;
  std::size_t next_ = 0;
};

// One engine's words: in memory up to kMemoryWords (1 MiB: a short program
// never touches the disk), beyond that in an anonymous temporary file
// (removed when closed). std::runtime_error when the file cannot be made or
// written, naming it.
class Spool {
 public:
  static constexpr std::size_t kMemoryWords = 16384;
  Spool();
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  void append(const RawInst& w);
  std::uint64_t size() const { return count_; }
  // Flushes the writes; the spool is then read from its start.
  std::unique_ptr<InstructionSource> reader();
  // Copies the words to `out` (a binary); false on a write error.
  bool copy_to(std::FILE* out);

 private:
  class Reader;
  void flush();
  std::FILE* f_ = nullptr;    // null while every word is in buf_
  std::vector<RawInst> buf_;  // the words (no file) or the pending writes
  std::uint64_t count_ = 0;
};

// A whole program read into per-engine spools: .arch and .reg in memory,
// the words on disk. Memory stays bounded whatever the program's length.
class SpooledProgram : public ProgramSink {
 public:
  explicit SpooledProgram(std::string path);
  // Keep a note (InstructionNote) of every instruction read from now on:
  // memory grows by 16 bytes an instruction, so it is off unless a run
  // checks races. Set before reading.
  void keep_notes(bool on) { keep_notes_ = on; }
  bool keeps_notes() const { return keep_notes_; }
  // Queue e's notes, by instruction index (empty unless keep_notes).
  const std::vector<InstructionNote>& notes(Queue e) const {
    return notes_[static_cast<unsigned>(e)];
  }
  // Whether the words came from a binary (a note's line is then a word index).
  bool binary() const { return binary_; }
  // Streams a program file (stream_program) into spools; throws as
  // load_program does (AsmError with file:line:col for text).
  static std::unique_ptr<SpooledProgram> load(const std::string& path, bool keep_notes = false);

  void arch(Arch a, const SourceLoc&) override { arch_ = a; }
  void reg(const RegInit& r) override { regs_.push_back(r); }
  void inst(Queue e, const RawInst& raw, const SourceLoc&) override;

  const std::string& path() const { return path_; }
  const std::optional<Arch>& arch() const { return arch_; }
  const std::vector<RegInit>& regs() const { return regs_; }
  std::uint64_t count(Queue e) const { return spools_[static_cast<unsigned>(e)]->size(); }
  std::uint64_t size() const;
  // Words a binary of this program would send to another queue than the one
  // they are on (binary_queue: a word under a queue that does not execute it,
  // a dma_copy whose `queue` byte names another queue).
  std::uint64_t misplaced() const { return misplaced_; }
  // A reader of engine e's words from the first (one reader at a time).
  std::unique_ptr<InstructionSource> source(Queue e);
  // Writes the words in queue order (pool, dve, pe, sfu, dma0..15, act), as
  // to_binary does.
  bool write_binary(std::FILE* out);
  // MAVERICK folds ACT into the DVE (seed 003, SPEC §18): the ACT queue's
  // words join the DVE's in the order they were read (text: line order; a
  // binary: file order), their notes too, and the ACT queue is left empty.
  // The core that loads the program on MAVERICK calls it.
  void fold_act_into_dve();

 private:
  std::string path_;
  std::optional<Arch> arch_;
  std::vector<RegInit> regs_;
  std::array<std::unique_ptr<Spool>, kNumQueues> spools_;
  std::uint64_t misplaced_ = 0;
  bool keep_notes_ = false;
  bool binary_ = false;
  std::uint64_t words_ = 0;  // read so far, every engine
  std::array<std::vector<InstructionNote>, kNumQueues> notes_;
  // The order in which DVE and ACT words were read: runs of (ACT?, count).
  std::vector<std::pair<bool, std::uint64_t>> dve_act_order_;
};

}  // namespace tpb::isa

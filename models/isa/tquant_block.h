// The TQUANT block syntax of seed 002 (docs/ASM.md): text <-> one 64-byte SFU
// word (TquantBlock, encodings.h). Pure C++.
//
//   BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=16;
//   B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP
//
// on one line or several (statements end at ';' or at the end of a line).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "models/isa/encodings.h"
#include "models/isa/lexer.h"
#include "models/isa/program.h"

namespace tpb::isa {

// Whether a statement starts a TQUANT block (its first word begins with
// "BSTART", any case).
bool starts_tquant_block(std::string_view statement);

// Builds one block word from its statements, fed in order. Every binding is
// encoded, illegal ones included (a second B.IOT, B.IOS, a missing B.DATR,
// ...): the SFU kernel faults them at run time. Syntax errors throw AsmError
// at `loc` (the statement's first character) plus the column of the problem.
class TquantBlockBuilder {
 public:
  TquantBlockBuilder();
  // Adds one statement (no ';'); returns true after BSTOP.
  bool add(std::string_view statement, const SourceLoc& loc);
  // The statement line.text[begin, end) of a logical line of `file` (the
  // program reader's form: positions exact across `\` continuations).
  bool add(const AsmLine& line, std::size_t begin, std::size_t end, const std::string& file);
  bool done() const { return done_; }
  const RawInst& word() const { return raw_; }

 private:
  TquantBlock w_{};
  RawInst raw_{};
  bool started_ = false, done_ = false;
};

// Assembles a whole block written on one line ("BSTART...; ...; BSTOP").
RawInst assemble_tquant_block(std::string_view text, const SourceLoc& loc);

// The block text of a TQUANT word on one line, or "" when the word cannot be
// written in the block syntax (it is then written as `.raw`): a word whose
// text assembles back to different bytes.
std::string disassemble_tquant_block(const RawInst& raw);

}  // namespace tpb::isa

// The one tokenizer of program text (docs/ASM.md), pure C++. It serves both
// syntaxes of a program: the mnemonic statements and directives, and the
// statements of a TQUANT block (seed 002). Positions are exact: a logical
// line keeps the physical line and column of every character, so an error in
// a statement continued with `\` names the physical line it is on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/isa/program.h"

namespace tpb::isa {

// A logical line: program text with comments removed and `\` continuations
// joined (one space each), with the source position of every character.
struct Segment {
  std::size_t at;  // index in the logical line where this physical piece starts
  int line;
  int col;  // column of text[at]
};
struct AsmLine {
  std::string text;
  std::vector<Segment> segs;  // ascending `at`; the first one has at == 0
  // (line, column) of text[at].
  std::pair<int, int> pos(std::size_t at) const {
    std::size_t i = segs.size() - 1;
    while (i > 0 && segs[i].at > at) --i;
    return {segs[i].line, segs[i].col + static_cast<int>(at - segs[i].at)};
  }
  // A one-piece line: `text` starting at `loc`'s line and column.
  static AsmLine of(std::string_view text, const SourceLoc& loc) {
    return AsmLine{std::string(text), {Segment{0, loc.line, loc.col}}};
  }
};

struct Tok {
  enum Kind { End, Ident, Num, Punct } kind = End;
  std::string text;
  std::int64_t num = 0;  // Num, Mnemonic dialect: the value (INT64_MAX when wide)
  // Num: a value past INT64_MAX (up to 2^64 - 1), kept in `unum`; only a u64
  // field takes one (every other use says the number is too large).
  bool wide = false;
  std::uint64_t unum = 0;
  // Num: a float literal (a fraction or an exponent: 1.5, -2e-3), its value
  // in fnum (an FP32 operand takes it; an integer field refuses it).
  bool is_float = false;
  double fnum = 0;
  std::size_t at = 0;   // index of the first character
  std::size_t end = 0;  // index past the last character
};

// The two token sets of the syntax.
//   Mnemonic: identifiers (a letter or '_', then letters, digits, '_', '.'),
//     numbers (decimal or 0x hex, optionally signed, valued and range-checked
//     to 64 bits as they are read: -2^63 .. 2^64 - 1), punctuation ( ) [ ] , =.
//   Block (TQUANT statements): the same identifiers; numbers kept as text
//     (a digit or '-' and a digit, then letters and digits: their base is the
//     statement's, e.g. binary for mask=), punctuation , = < > ( ) and ->.
//     Every character of a statement is checked when the lexer is made, so
//     the first stray character is the error, wherever the parse stops.
enum class Dialect : std::uint8_t { Mnemonic, Block };

class Lexer {
 public:
  // Tokens of line.text[begin, end) (end: npos = the end of the line).
  // `file` is kept by reference: it must outlive the lexer.
  Lexer(const AsmLine& line, std::size_t begin, const std::string& file,
        Dialect dialect = Dialect::Mnemonic, std::size_t end = std::string::npos);
  Lexer(const AsmLine&, std::size_t, std::string&&, Dialect = Dialect::Mnemonic,
        std::size_t = std::string::npos) = delete;

  [[noreturn]] void fail(std::size_t at, const std::string& msg) const;
  SourceLoc loc(std::size_t at) const;

  Tok peek() const { return lex_at(pos_); }
  Tok peek2() const { return lex_at(lex_at(pos_).end); }
  Tok next() {
    Tok t = lex_at(pos_);
    pos_ = t.end;
    return t;
  }
  // Consumes the punctuation `p` when it is next.
  bool accept(std::string_view p);
  bool accept(char c) { return accept(std::string_view(&c, 1)); }
  // Consumes `p` or fails: "expected 'P' WHAT, found ...".
  void expect(std::string_view p, const std::string& what);
  void expect(char c, const std::string& what) { expect(std::string_view(&c, 1), what); }
  // "end of line" (Mnemonic) / "end of statement" (Block), or the token quoted.
  std::string describe(const Tok& t) const;

  // Hex bytes up to the character `stop` (or the end when stop == 0);
  // whitespace is ignored. Used by `.raw` and the i(...) pattern form.
  std::vector<std::uint8_t> hex_bytes(char stop);
  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t p) { pos_ = p; }
  std::size_t end_pos() const { return end_; }

 private:
  Tok lex_at(std::size_t p) const;
  Tok lex_uncached(std::size_t p) const;
  // The rest of token t (t.at set) of the block dialect: ->, a number, punctuation.
  Tok lex_block(Tok t) const;
  // The rest of number token t (t.at set) of the mnemonic dialect: decimal or
  // 0x hex, signed, a u64 above the int64 range (`wide`).
  Tok lex_number(Tok t) const;

  // The parser peeks the same tokens again and again: the last two are kept.
  struct Memo {
    std::size_t at = 0;
    bool valid = false;
    Tok tok;
  };
  mutable Memo memo_[2];
  mutable unsigned memo_next_ = 0;

  const AsmLine& line_;
  std::size_t pos_;
  std::size_t end_;
  const std::string& file_;
  Dialect dialect_;
};

}  // namespace tpb::isa

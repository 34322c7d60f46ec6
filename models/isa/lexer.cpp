#include "models/isa/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tpb::isa {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_ident(char c) { return is_alnum(c) || c == '_'; }

// The character at s[p]: a whole UTF-8 sequence (the lead byte and its
// continuation bytes), so a message shows 'é', not half of it.
std::string character_at(const std::string& s, std::size_t p, std::size_t end) {
  std::size_t q = p + 1;
  if (static_cast<unsigned char>(s[p]) >= 0xC0)
    while (q < end && q < p + 4 && (static_cast<unsigned char>(s[q]) & 0xC0) == 0x80) ++q;
  return s.substr(p, q - p);
}

}  // namespace

Lexer::Lexer(const AsmLine& line, std::size_t begin, const std::string& file, Dialect dialect,
             std::size_t end)
    : line_(line),
      pos_(begin),
      end_(std::min(end, line.text.size())),
      file_(file),
      dialect_(dialect) {
  if (dialect_ == Dialect::Block)
    for (std::size_t p = begin;;) {
      const Tok t = lex_uncached(p);
      if (t.kind == Tok::End) break;
      p = t.end;
    }
}

void Lexer::fail(std::size_t at, const std::string& msg) const { throw AsmError(loc(at), msg); }

SourceLoc Lexer::loc(std::size_t at) const {
  at = std::min(at, line_.text.size());
  const auto [l, c] = line_.pos(at);
  return SourceLoc{file_, l, c};
}

bool Lexer::accept(std::string_view p) {
  const Tok t = peek();
  if (t.kind == Tok::Punct && t.text == p) {
    pos_ = t.end;
    return true;
  }
  return false;
}

void Lexer::expect(std::string_view p, const std::string& what) {
  const Tok t = peek();
  if (!accept(p))
    fail(t.at, "expected '" + std::string(p) + "' " + what + ", found " + describe(t));
}

std::string Lexer::describe(const Tok& t) const {
  if (t.kind == Tok::End) return dialect_ == Dialect::Block ? "end of statement" : "end of line";
  return "'" + t.text + "'";
}

std::vector<std::uint8_t> Lexer::hex_bytes(char stop) {
  const std::string& s = line_.text;
  std::vector<std::uint8_t> out;
  int nibbles = 0;
  std::size_t first_digit = pos_;
  unsigned cur = 0;
  while (pos_ < end_ && s[pos_] != stop) {
    const char c = s[pos_];
    if (is_space(c)) {
      ++pos_;
      continue;
    }
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      fail(pos_, std::string("bad hex digit '") + c + "'");
    if (nibbles % 2 == 0) first_digit = pos_;
    cur = cur * 16 + static_cast<unsigned>(is_digit(c) ? c - '0' : std::tolower(c) - 'a' + 10);
    if (++nibbles % 2 == 0) {
      out.push_back(static_cast<std::uint8_t>(cur));
      cur = 0;
    }
    ++pos_;
  }
  if (nibbles % 2) fail(first_digit, "odd number of hex digits (a byte is two digits)");
  return out;
}

Tok Lexer::lex_at(std::size_t p) const {
  for (const Memo& m : memo_)
    if (m.valid && m.at == p) return m.tok;
  Memo& m = memo_[memo_next_];
  memo_next_ ^= 1;
  m.tok = lex_uncached(p);
  m.at = p;
  m.valid = true;
  return m.tok;
}

namespace {
// Token t (t.at set) as the punctuation `text`.
Tok punct(Tok t, std::string text) {
  t.kind = Tok::Punct;
  t.end = t.at + text.size();
  t.text = std::move(text);
  return t;
}
}  // namespace

Tok Lexer::lex_uncached(std::size_t p) const {
  const std::string& s = line_.text;
  const std::size_t n = end_;
  const bool block = dialect_ == Dialect::Block;
  while (p < n && is_space(s[p])) ++p;
  Tok t;
  t.at = p;
  if (p >= n) {
    t.end = p;
    return t;
  }
  const char c = s[p];
  if (is_alpha(c) || c == '_') {
    std::size_t q = p;
    // A name may hold a ':' before a letter: a remote semaphore `core1:sem7`
    // (SPEC §15); ':' is no token of its own.
    while (q < n && (is_ident(s[q]) || s[q] == '.' ||
                     (!block && s[q] == ':' && q + 1 < n && is_alpha(s[q + 1]))))
      ++q;
    t.kind = Tok::Ident;
    t.text = s.substr(p, q - p);
    t.end = q;
    return t;
  }
  if (block) return lex_block(t);
  if (is_digit(c) || ((c == '-' || c == '+') && p + 1 < n && is_digit(s[p + 1])))
    return lex_number(t);
  if (std::strchr("()[],=", c)) return punct(t, std::string(1, c));
  fail(p, "unexpected character '" + character_at(s, p, n) + "'");
}

Tok Lexer::lex_block(Tok t) const {
  const std::string& s = line_.text;
  const std::size_t p = t.at, n = end_;
  const char c = s[p];
  if (c == '-' && p + 1 < n && s[p + 1] == '>') return punct(t, "->");
  if (is_digit(c) || (c == '-' && p + 1 < n && is_digit(s[p + 1]))) {
    std::size_t q = p + 1;
    while (q < n && is_alnum(s[q])) ++q;
    t.kind = Tok::Num;
    t.text = s.substr(p, q - p);
    t.end = q;
    return t;
  }
  if (std::strchr(",=<>()", c)) return punct(t, std::string(1, c));
  fail(p, "unexpected character '" + character_at(s, p, n) + "' in a TQUANT block");
}

Tok Lexer::lex_number(Tok t) const {
  const std::string& s = line_.text;
  const std::size_t p = t.at, n = end_;
  std::size_t q = p;
  bool neg = false;
  if (s[q] == '-' || s[q] == '+') neg = s[q++] == '-';
  unsigned base = 10;
  if (s[q] == '0' && q + 1 < n && (s[q + 1] == 'x' || s[q + 1] == 'X')) {
    base = 16;
    q += 2;
  }
  const std::size_t digits = q;
  // A decimal with a fraction or an exponent is a float literal (an FP32
  // operand's value, SPEC §18): digits [. digits] [e[+-]digits].
  if (base == 10) {
    std::size_t r = q;
    while (r < n && is_digit(s[r])) ++r;
    bool flt = false;
    if (r < n && s[r] == '.') {
      flt = true;
      for (++r; r < n && is_digit(s[r]);) ++r;
    }
    if (r < n && (s[r] == 'e' || s[r] == 'E')) {
      std::size_t e = r + 1;
      if (e < n && (s[e] == '+' || s[e] == '-')) ++e;
      if (e < n && is_digit(s[e])) {
        flt = true;
        for (r = e; r < n && is_digit(s[r]);) ++r;
      }
    }
    if (flt && (r == n || !is_ident(s[r]))) {
      t.kind = Tok::Num;
      t.is_float = true;
      t.text = s.substr(p, r - p);
      t.fnum = std::strtod(t.text.c_str(), nullptr);
      t.end = r;
      return t;
    }
  }
  std::uint64_t v = 0;
  bool overflow = false;
  while (q < n && is_ident(s[q])) {
    const char d = static_cast<char>(std::tolower(static_cast<unsigned char>(s[q])));
    unsigned dv;
    if (d >= '0' && d <= '9')
      dv = static_cast<unsigned>(d - '0');
    else if (base == 16 && d >= 'a' && d <= 'f')
      dv = static_cast<unsigned>(d - 'a' + 10);
    else
      fail(p, "bad number '" + s.substr(p, q - p + 1) + "'");
    if (v > (std::numeric_limits<std::uint64_t>::max() - dv) / base) overflow = true;
    v = v * base + dv;
    ++q;
  }
  if (q == digits) fail(p, "bad number '" + s.substr(p, q - p) + "'");
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (overflow || (neg && v > kMax + 1))
    fail(p, "number '" + s.substr(p, q - p) + "' is too large");
  t.kind = Tok::Num;
  if (!neg && v > kMax) {  // a u64 (hbm offsets): only want_u64 takes it
    t.wide = true;
    t.unum = v;
    t.num = std::numeric_limits<std::int64_t>::max();
  } else {
    t.num = neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  }
  t.text = s.substr(p, q - p);
  t.end = q;
  return t;
}

}  // namespace tpb::isa

// Assembler / disassembler of the mnemonic program syntax (docs/ASM.md).
//
// Every instruction kind is a table of fields (name, kind, byte offset, width,
// default). The same table drives assembly (field=value -> bytes, with range,
// duplicate and overlap checks) and disassembly (bytes -> field=value, printing
// a field only when it differs from its default), so that every byte of a
// known opcode is reachable from text and parse(disassemble(w)) == w.
#include "models/isa/asm.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <istream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "models/isa/address_map.h"
#include "models/isa/opcode_table.h"
#include "models/isa/tquant_block.h"

namespace tpb::isa {
namespace {

// ---------------------------------------------------------------------------
// Name tables

struct NamedValue {
  const char* name;
  std::uint8_t value;
};

// First entry per value is the canonical (printed) name; the rest are aliases.
constexpr NamedValue kDtypeNames[] = {
    {"invalid", 0x0},
    {"int8", 0x1},
    {"uint8", 0x2},
    {"int16", 0x3},
    {"uint16", 0x4},
    {"bf16", 0x5},
    {"fp16", 0x6},
    {"int32", 0x7},
    {"fp32", 0x8},
    {"uint32", 0x9},
    {"fp32r", 0xA},
    {"fp8_e2m5", 0xC},
    {"fp8_e3m4", 0xD},
    {"fp8_e4m3", 0xE},
    {"fp8_e5m2", 0xF},
    {"fp4_e2m1", 0x10},
    {"int4", 0x12},
    {"e8m0", 0x13},
    // aliases
    {"s8", 0x1},
    {"u8", 0x2},
    {"s16", 0x3},
    {"u16", 0x4},
    {"s32", 0x7},
    {"u32", 0x9},
    {"e2m5", 0xC},
    {"e3m4", 0xD},
    {"e4m3", 0xE},
    {"e5m2", 0xF},
    {"e2m1", 0x10},
    {"fp8_exp2", 0xC},
    {"fp8_exp3", 0xD},
    {"fp8_exp4", 0xE},
    {"fp8_exp5", 0xF},
    {"fp4_exp2", 0x10},
    {"sfp8_e8", 0x13},
    {"fp8_e8m0", 0x13},
};

constexpr NamedValue kDequantFmtNames[] = {
    {"invalid", 0},     {"e2m1_to_e5m2", 1}, {"int4_to_e5m2", 2},
    {"nf4_to_e4m3", 3}, {"e2m3_to_e4m3", 4},
};

constexpr NamedValue kPerfModeNames[] = {
    {"none", 0},    {"quad_row", 1},           {"quad_row_interleave", 2}, {"quad_row_tiled", 3},
    {"oct_row", 4}, {"oct_row_interleave", 5}, {"oct_row_tiled", 6},
};

template <std::size_t N>
std::string_view name_of(const NamedValue (&table)[N], std::uint8_t v) {
  for (const auto& e : table)
    if (e.value == v) return e.name;
  return {};
}
template <std::size_t N>
std::optional<std::uint8_t> value_of(const NamedValue (&table)[N], std::string_view s) {
  for (const auto& e : table) {
    const std::string_view n = e.name;
    if (n.size() == s.size() && std::equal(n.begin(), n.end(), s.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      return e.value;
  }
  return std::nullopt;
}
template <std::size_t N>
std::string names_list(const NamedValue (&table)[N]) {
  std::string out;
  std::vector<std::uint8_t> seen;
  for (const auto& e : table) {
    if (std::find(seen.begin(), seen.end(), e.value) != seen.end()) continue;
    seen.push_back(e.value);
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}
std::string hex2(std::uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02x", v);
  return buf;
}

// ---------------------------------------------------------------------------
// Logical lines: text plus the source position of every character (a line
// continued with a trailing backslash spans several physical lines).

struct Segment {
  std::size_t at;  // index in the logical line where this physical piece starts
  int line;
  int col;  // column of text[at]
};
struct AsmLine {
  std::string text;
  std::vector<Segment> segs;  // ascending `at`; the first one has at == 0
  std::pair<int, int> pos(std::size_t at) const {
    std::size_t i = segs.size() - 1;
    while (i > 0 && segs[i].at > at) --i;
    return {segs[i].line, segs[i].col + static_cast<int>(at - segs[i].at)};
  }
};

// ---------------------------------------------------------------------------
// Lexer

struct Tok {
  enum Kind { End, Ident, Num, Punct } kind = End;
  std::string text;
  std::int64_t num = 0;
  std::size_t at = 0;   // index of the first character
  std::size_t end = 0;  // index past the last character
};

class Lexer {
 public:
  Lexer(const AsmLine& line, std::size_t begin, const std::string& file)
      : line_(line), pos_(begin), file_(file) {}

  [[noreturn]] void fail(std::size_t at, const std::string& msg) const {
    throw AsmError(loc(at), msg);
  }
  SourceLoc loc(std::size_t at) const {
    at = std::min(at, line_.text.size());
    const auto [l, c] = line_.pos(at);
    return SourceLoc{file_, l, c};
  }

  Tok peek() const { return lex_at(pos_); }
  Tok peek2() const { return lex_at(lex_at(pos_).end); }
  Tok next() {
    Tok t = lex_at(pos_);
    pos_ = t.end;
    return t;
  }
  bool accept(char c) {
    Tok t = peek();
    if (t.kind == Tok::Punct && t.text[0] == c) {
      pos_ = t.end;
      return true;
    }
    return false;
  }
  Tok expect(char c, const char* what) {
    Tok t = next();
    if (t.kind != Tok::Punct || t.text[0] != c)
      fail(t.at, std::string("expected '") + c + "' " + what + ", found " + describe(t));
    return t;
  }
  static std::string describe(const Tok& t) {
    if (t.kind == Tok::End) return "end of line";
    return "'" + t.text + "'";
  }

  // Hex bytes up to `stop` (or end of line when stop == 0); whitespace is
  // ignored. Used by `.raw` and the i(...) pattern form.
  std::vector<std::uint8_t> hex_bytes(char stop, std::size_t& stop_at) {
    const std::string& s = line_.text;
    std::vector<std::uint8_t> out;
    int nibbles = 0;
    std::size_t first_digit = pos_;
    unsigned cur = 0;
    while (pos_ < s.size() && s[pos_] != stop) {
      const char c = s[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
        continue;
      }
      if (!std::isxdigit(static_cast<unsigned char>(c)))
        fail(pos_, std::string("bad hex digit '") + c + "'");
      if (nibbles % 2 == 0) first_digit = pos_;
      cur = cur * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c))
                                                 ? c - '0'
                                                 : std::tolower(c) - 'a' + 10);
      if (++nibbles % 2 == 0) {
        out.push_back(static_cast<std::uint8_t>(cur));
        cur = 0;
      }
      ++pos_;
    }
    if (nibbles % 2) fail(first_digit, "odd number of hex digits (a byte is two digits)");
    stop_at = pos_;
    return out;
  }
  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t p) { pos_ = p; }

 private:
  // The parser peeks the same tokens again and again: the last two are kept.
  Tok lex_at(std::size_t p) const {
    for (const Memo& m : memo_)
      if (m.valid && m.at == p) return m.tok;
    Memo& m = memo_[memo_next_];
    memo_next_ ^= 1;
    m.tok = lex_uncached(p);
    m.at = p;
    m.valid = true;
    return m.tok;
  }
  struct Memo {
    std::size_t at = 0;
    bool valid = false;
    Tok tok;
  };
  mutable Memo memo_[2];
  mutable unsigned memo_next_ = 0;

  Tok lex_uncached(std::size_t p) const {
    const std::string& s = line_.text;
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
    Tok t;
    t.at = p;
    if (p >= s.size()) {
      t.end = p;
      return t;
    }
    const char c = s[p];
    auto is_ident = [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    };
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t q = p;
      while (q < s.size() && (is_ident(s[q]) || s[q] == '.')) ++q;
      t.kind = Tok::Ident;
      t.text = s.substr(p, q - p);
      t.end = q;
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        ((c == '-' || c == '+') && p + 1 < s.size() &&
         std::isdigit(static_cast<unsigned char>(s[p + 1])))) {
      std::size_t q = p;
      bool neg = false;
      if (s[q] == '-' || s[q] == '+') neg = s[q++] == '-';
      unsigned base = 10;
      if (s[q] == '0' && q + 1 < s.size() && (s[q + 1] == 'x' || s[q + 1] == 'X')) {
        base = 16;
        q += 2;
      }
      const std::size_t digits = q;
      std::uint64_t v = 0;
      bool overflow = false;
      while (q < s.size() && is_ident(s[q])) {
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
      if (overflow || v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(p, "number '" + s.substr(p, q - p) + "' is too large");
      t.kind = Tok::Num;
      t.num = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
      t.text = s.substr(p, q - p);
      t.end = q;
      return t;
    }
    if (std::strchr("()[],=", c)) {
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
      t.end = p + 1;
      return t;
    }
    fail(p, std::string("unexpected character '") + c + "'");
  }

  const AsmLine& line_;
  std::size_t pos_;
  const std::string& file_;
};

// ---------------------------------------------------------------------------
// Value trees: number | name | name(args) | [list] | i(hex bytes)

struct Val;
struct NamedArg;
struct Val {
  enum Kind { Num, Ident, Call, List, Hex } kind = Num;
  std::size_t at = 0;
  std::int64_t num = 0;
  std::string name;
  std::vector<Val> args;        // positional call arguments or list items
  std::vector<NamedArg> named;  // named call arguments
  std::vector<std::uint8_t> bytes;
};
struct NamedArg {
  std::string key;
  std::size_t at;
  Val value;
};

Val parse_value(Lexer& lx);

Val parse_call_args(Lexer& lx, Val v) {
  if (lx.accept(')')) return v;
  for (;;) {
    const Tok a = lx.peek();
    const Tok b = lx.peek2();
    if (a.kind == Tok::Ident && b.kind == Tok::Punct && b.text == "=") {
      lx.next();
      lx.next();
      for (const auto& n : v.named)
        if (n.key == a.text) lx.fail(a.at, "duplicate argument '" + a.text + "' in " + v.name);
      v.named.push_back(NamedArg{a.text, a.at, parse_value(lx)});
    } else {
      if (!v.named.empty()) lx.fail(a.at, "positional argument after named ones in " + v.name);
      v.args.push_back(parse_value(lx));
    }
    if (lx.accept(')')) return v;
    lx.expect(',', ("between arguments of " + v.name).c_str());
  }
}

Val parse_value(Lexer& lx) {
  Tok t = lx.next();
  Val v;
  v.at = t.at;
  if (t.kind == Tok::Num) {
    v.kind = Val::Num;
    v.num = t.num;
    return v;
  }
  if (t.kind == Tok::Punct && t.text == "[") {
    v.kind = Val::List;
    if (lx.accept(']')) return v;
    for (;;) {
      v.args.push_back(parse_value(lx));
      if (lx.accept(']')) return v;
      lx.expect(',', "between list items");
    }
  }
  if (t.kind == Tok::Ident) {
    v.name = t.text;
    if (!lx.accept('(')) {
      v.kind = Val::Ident;
      return v;
    }
    if (t.text == "i") {  // i(HEX): the 16 opaque bytes of an INDIRECT16B
      v.kind = Val::Hex;
      std::size_t stop = 0;
      v.bytes = lx.hex_bytes(')', stop);
      lx.expect(')', "after the bytes of i(...)");
      return v;
    }
    v.kind = Val::Call;
    return parse_call_args(lx, std::move(v));
  }
  lx.fail(t.at, "expected a value, found " + Lexer::describe(t));
}

const char* kind_name(const Val& v) {
  switch (v.kind) {
    case Val::Num:
      return "a number";
    case Val::Ident:
      return "a name";
    case Val::Call:
      return "a call";
    case Val::List:
      return "a list";
    case Val::Hex:
      return "hex bytes";
  }
  return "a value";
}

// ---------------------------------------------------------------------------
// Field tables

// The fields of each opcode's mnemonic form are in its opcode-table row
// (models/isa/opcode_table.cpp); the HEADER / EVENTS fields are common.
using FK = AsmFieldKind;
using FieldSpec = AsmField;
// An instruction kind of the syntax: an opcode-table row with asm_fields.
using InstSpec = OpcodeInfo;

// HEADER and EVENTS fields, common to every instruction (SPEC §2).
const std::vector<FieldSpec>& common_fields() {
  static const std::vector<FieldSpec> f = {
      {"opcode", FK::Hidden, 0, 1, false, 0},
      {"inst_word_len", FK::Hidden, 1, 1, false, kInstWordLen},
      {"debug_cmd", FK::Hidden, 2, 1, false, 0},
      {"debug_hint", FK::Hidden, 3, 1, false, 0},
      {"wait", FK::Wait, 4, 2, false, 0},
      {"update", FK::Update, 6, 2, false, 0},
      {"wait_mode", FK::Hidden, 4, 1, false, 0},
      {"wait_idx", FK::Hidden, 5, 1, false, 0},
      {"update_mode", FK::Hidden, 6, 1, false, 0},
      {"update_idx", FK::Hidden, 7, 1, false, 0},
      {"sem_value", FK::Hidden, 8, 4, false, 0},
  };
  return f;
}

const InstSpec* spec_by_opcode(std::uint8_t op) {
  const OpcodeInfo* row = opcode_info(op);
  return row && row->asm_fields ? row : nullptr;
}
const InstSpec* spec_by_mnemonic(std::string_view m) {
  for (const auto& row : opcode_table())
    if (row.asm_fields && m == row.mnemonic) return &row;
  return nullptr;
}
const std::vector<FieldSpec>& fields_of(const InstSpec& s) { return *s.asm_fields; }

// Default of a 32-row group mask: one bit per started group of 32.
std::uint8_t grp_mask_for(unsigned count) {
  const unsigned groups = (count + 31) / 32;
  return static_cast<std::uint8_t>((1u << groups) - 1u);
}

// ---------------------------------------------------------------------------
// Little-endian byte access

std::uint32_t get_le(const RawInst& r, unsigned off, unsigned len) {
  std::uint32_t v = 0;
  for (unsigned i = 0; i < len; ++i) v |= static_cast<std::uint32_t>(r[off + i]) << (8 * i);
  return v;
}
std::int16_t get_i16(const RawInst& r, unsigned off) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(get_le(r, off, 2)));
}

// ---------------------------------------------------------------------------
// Assembly of one statement

class Builder {
 public:
  explicit Builder(Lexer& lx) : lx_(lx) {
    owner_.fill(-1);
    raw_.fill(0);
  }

  // Writes `len` little-endian bytes of `v` for field `key`, checking that no
  // other field has written different bytes there.
  void put(unsigned off, unsigned len, std::uint64_t v, int key, std::size_t at) {
    for (unsigned i = 0; i < len; ++i)
      put_byte(off + i, static_cast<std::uint8_t>(v >> (8 * i)), key, at);
  }
  void put_byte(unsigned off, std::uint8_t b, int key, std::size_t at) {
    if (owner_[off] >= 0 && owner_[off] != key && raw_[off] != b)
      lx_.fail(at, "field '" + keys_[static_cast<std::size_t>(key)] + "' conflicts with field '" +
                       keys_[static_cast<std::size_t>(owner_[off])] + "' (byte " +
                       std::to_string(off) + ")");
    owner_[off] = key;
    raw_[off] = b;
  }
  int add_key(const std::string& k) {
    keys_.push_back(k);
    return static_cast<int>(keys_.size() - 1);
  }
  bool written(unsigned off) const { return owner_[off] >= 0; }
  RawInst& raw() { return raw_; }
  Lexer& lx() { return lx_; }

 private:
  Lexer& lx_;
  RawInst raw_;
  std::array<int, kInstBytes> owner_;
  std::vector<std::string> keys_;
};

std::int64_t want_num(Lexer& lx, const Val& v, const std::string& what) {
  if (v.kind != Val::Num)
    lx.fail(v.at, "expected a number for " + what + ", found " + kind_name(v));
  return v.num;
}
std::int64_t want_range(Lexer& lx, const Val& v, const std::string& what, std::int64_t lo,
                        std::int64_t hi, const char* width) {
  const std::int64_t n = want_num(lx, v, what);
  if (n < lo || n > hi)
    lx.fail(v.at, "value " + std::to_string(n) + " out of range for " + what + " (" + width + ": " +
                      std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return n;
}
std::uint32_t want_u(Lexer& lx, const Val& v, const std::string& what, unsigned bytes) {
  switch (bytes) {
    case 1:
      return static_cast<std::uint32_t>(want_range(lx, v, what, 0, 0xFF, "u8"));
    case 2:
      return static_cast<std::uint32_t>(want_range(lx, v, what, 0, 0xFFFF, "u16"));
    default:
      return static_cast<std::uint32_t>(want_range(lx, v, what, 0, 0xFFFFFFFFll, "u32"));
  }
}
std::int16_t want_i16(Lexer& lx, const Val& v, const std::string& what) {
  return static_cast<std::int16_t>(want_range(lx, v, what, -32768, 32767, "i16"));
}

// Enumerated byte: a name of `table` or a number 0..255.
template <std::size_t N>
std::uint8_t want_enum(Lexer& lx, const Val& v, const std::string& what,
                       const NamedValue (&table)[N], const char* kind) {
  if (v.kind == Val::Ident) {
    if (auto e = value_of(table, v.name)) return *e;
    lx.fail(v.at, std::string("unknown ") + kind + " '" + v.name + "' for " + what + " (" +
                      names_list(table) + ", or a number)");
  }
  return static_cast<std::uint8_t>(want_u(lx, v, what, 1));
}

std::uint8_t want_dtype(Lexer& lx, const Val& v, const std::string& what) {
  return want_enum(lx, v, what, kDtypeNames, "dtype");
}

unsigned want_index(Lexer& lx, const Val& v, const char* prefix, unsigned max,
                    const std::string& what) {
  const std::string p = prefix;
  if (v.kind == Val::Ident && v.name.size() > p.size() && v.name.compare(0, p.size(), p) == 0 &&
      std::all_of(v.name.begin() + static_cast<long>(p.size()), v.name.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
      v.name.size() - p.size() <= 4) {
    const unsigned n = static_cast<unsigned>(std::stoul(v.name.substr(p.size())));
    if (n <= max) return n;
    lx.fail(v.at, "unknown " + (p == "r" ? std::string("register") : std::string("semaphore")) +
                      " '" + v.name + "' for " + what + " (" + p + "0.." + p + std::to_string(max) +
                      ")");
  }
  lx.fail(v.at, "expected " + p + "N for " + what + ", found " +
                    (v.kind == Val::Ident ? "'" + v.name + "'" : std::string(kind_name(v))));
}

const Val* find_named(const Val& call, const char* key) {
  for (const auto& n : call.named)
    if (n.key == key) return &n.value;
  return nullptr;
}
void check_args(Lexer& lx, const Val& call, std::size_t positional,
                std::initializer_list<const char*> keys) {
  if (call.args.size() > positional)
    lx.fail(call.args[positional].at,
            call.name + " takes " + std::to_string(positional) + " positional argument(s)");
  for (const auto& n : call.named) {
    bool ok = false;
    std::string list;
    for (const char* k : keys) {
      ok = ok || n.key == k;
      list += list.empty() ? k : std::string(", ") + k;
    }
    if (!ok) lx.fail(n.at, "unknown argument '" + n.key + "' of " + call.name + " (" + list + ")");
  }
}
const Val& required_named(Lexer& lx, const Val& call, const char* key) {
  if (const Val* v = find_named(call, key)) return *v;
  lx.fail(call.at, "missing argument '" + std::string(key) + "' of " + call.name);
}

// ADDR4 (SPEC §2). Plain addresses (number, sbuf, psum) carry the IMM marker.
std::uint32_t want_plain_addr(Lexer& lx, const Val& v, const std::string& what);

std::uint32_t want_addr4(Lexer& lx, const Val& v, const std::string& what) {
  if (v.kind == Val::Call) {
    const std::string& n = v.name;
    auto one_arg = [&]() -> const Val& {
      check_args(lx, v, 1, {});
      if (v.args.size() != 1) lx.fail(v.at, n + "(...) takes one argument");
      return v.args[0];
    };
    if (n == "reg") return 0x80000000u | want_index(lx, one_arg(), "r", kNumEngineRegs - 1, what);
    if (n == "addr_shape_reg")
      return 0xC0000000u | want_index(lx, one_arg(), "r", kNumEngineRegs - 1, what);
    if (n == "shape_reg") return 0x40000000u | want_plain_addr(lx, one_arg(), what);
    if (n == "mxv2")
      return (std::uint32_t{addr4::kMarkerMxTensorV2} << 27) | want_plain_addr(lx, one_arg(), what);
    if (n == "indirect")
      return (std::uint32_t{addr4::kMarkerIndirect} << 27) | want_plain_addr(lx, one_arg(), what);
    if (n == "addr4") return want_u(lx, one_arg(), what, 4);
  }
  return want_plain_addr(lx, v, what);
}

std::uint32_t want_plain_addr(Lexer& lx, const Val& v, const std::string& what) {
  if (v.kind == Val::Num) {
    if (v.num < 0 || v.num > addr4::kAddressMask)
      lx.fail(v.at, "address " + std::to_string(v.num) + " for " + what +
                        " does not fit 27 bits (write addr4(0x...) for a raw ADDR4)");
    return static_cast<std::uint32_t>(v.num);
  }
  if (v.kind == Val::Call && (v.name == "sbuf" || v.name == "psum")) {
    check_args(lx, v, 2, {});
    if (v.args.size() != 2) lx.fail(v.at, v.name + "(PARTITION, OFFSET) takes two arguments");
    const auto p =
        want_range(lx, v.args[0], v.name + " partition", 0, kNumPartitions - 1, "7 bits");
    const auto o = want_range(lx, v.args[1], v.name + " offset", 0, kPartitionSlot - 1, "18 bits");
    return v.name == "sbuf" ? sbuf_addr(static_cast<unsigned>(p), static_cast<std::uint32_t>(o))
                            : psum_addr(static_cast<unsigned>(p), static_cast<std::uint32_t>(o));
  }
  lx.fail(v.at, "expected an address for " + what +
                    " (sbuf(P, OFF), psum(P, OFF), reg(rN), shape_reg(..), addr_shape_reg(rN), "
                    "mxv2(..), indirect(..), addr4(0xRAW) or a number)");
}

void put_list(Lexer& lx, const Val& v, const std::string& what, std::size_t n,
              const std::function<void(std::size_t, const Val&)>& each);

// Writes a 16-byte pattern field. `one_d` selects MXMEM_PATTERN1D.
void put_pattern(Builder& b, const Val& v, const FieldSpec& f, int key) {
  Lexer& lx = b.lx();
  const std::string what = std::string("field '") + f.name + "'";
  RawInst& r = b.raw();
  std::array<std::uint8_t, 16> bytes{};
  auto set = [&](unsigned off, unsigned len, std::uint64_t val) {
    for (unsigned i = 0; i < len; ++i) bytes[off + i] = static_cast<std::uint8_t>(val >> (8 * i));
  };
  const bool one_d = f.kind == FK::Mem1D;
  const char* forms = one_d ? "mx1d(...) or i(...)" : "t3d(...), mx(...) or i(...)";
  const char* type = one_d ? "MXMEM_PATTERN1D" : "MEM_PATTERN3D";
  if (v.kind == Val::Hex) {
    if (v.bytes.size() != 16)
      lx.fail(v.at, "i(...) needs 16 bytes, got " + std::to_string(v.bytes.size()));
    std::copy(v.bytes.begin(), v.bytes.end(), bytes.begin());
  } else if (v.kind == Val::Call && v.name == "t3d" && !one_d) {
    check_args(lx, v, 1, {"step", "num"});
    if (v.args.size() != 1) lx.fail(v.at, "t3d(ADDR, step=[..], num=[..]) needs a start address");
    set(0, 4, want_addr4(lx, v.args[0], what));
    std::int16_t step[3] = {1, 0, 0};
    std::uint16_t num[3] = {1, 1, 1};
    if (const Val* s = find_named(v, "step"))
      put_list(lx, *s, "t3d step", 3,
               [&](std::size_t i, const Val& e) { step[i] = want_i16(lx, e, "t3d step"); });
    if (const Val* s = find_named(v, "num"))
      put_list(lx, *s, "t3d num", 3, [&](std::size_t i, const Val& e) {
        num[i] = static_cast<std::uint16_t>(want_u(lx, e, "t3d num", 2));
      });
    for (unsigned i = 0; i < 3; ++i) {
      set(4 + 2 * i, 2, static_cast<std::uint16_t>(step[i]));
      set(10 + 2 * i, 2, num[i]);
    }
  } else if (v.kind == Val::Call && v.name == "mx" && !one_d) {
    // MXTENSOR_V2 (seed 003 §3.3); data carries the MXTENSOR_V2 marker.
    check_args(lx, v, 0,
               {"data", "scale", "num", "step_data", "step_scale", "p", "f", "scale_dtype"});
    std::uint32_t data = want_addr4(lx, required_named(lx, v, "data"), "mx data");
    if ((data >> 27) == addr4::kMarkerImm) data |= std::uint32_t{addr4::kMarkerMxTensorV2} << 27;
    set(0, 4, data);
    set(4, 4, want_addr4(lx, required_named(lx, v, "scale"), "mx scale"));
    std::uint8_t num[2] = {1, 1};
    if (const Val* s = find_named(v, "num"))
      put_list(lx, *s, "mx num", 2, [&](std::size_t i, const Val& e) {
        num[i] = static_cast<std::uint8_t>(want_u(lx, e, "mx num", 1));
      });
    set(8, 1, num[0]);
    set(9, 1, num[1]);
    if (const Val* s = find_named(v, "step_data"))
      set(10, 2, static_cast<std::uint16_t>(want_i16(lx, *s, "mx step_data")));
    if (const Val* s = find_named(v, "step_scale"))
      set(12, 2, static_cast<std::uint16_t>(want_i16(lx, *s, "mx step_scale")));
    unsigned p = 0, fdim = 0;
    if (const Val* s = find_named(v, "p"))
      p = static_cast<unsigned>(want_range(lx, *s, "mx p", 0, 15, "4 bits"));
    if (const Val* s = find_named(v, "f"))
      fdim = static_cast<unsigned>(want_range(lx, *s, "mx f", 0, 15, "4 bits"));
    set(14, 1, (fdim << 4) | p);
    std::uint8_t sd = static_cast<std::uint8_t>(Dtype::Sfp8E8);
    if (const Val* s = find_named(v, "scale_dtype")) sd = want_dtype(lx, *s, "mx scale_dtype");
    set(15, 1, sd);
  } else if (v.kind == Val::Call && v.name == "mx1d" && one_d) {
    // MXTENSOR1D (seed 003 §3.2)
    check_args(lx, v, 0, {"data", "scale", "num", "step", "scale_pidx", "reserved"});
    set(0, 4, want_addr4(lx, required_named(lx, v, "data"), "mx1d data"));
    set(4, 4, want_addr4(lx, required_named(lx, v, "scale"), "mx1d scale"));
    std::uint16_t num = 1;
    std::int8_t step = 1;
    if (const Val* s = find_named(v, "num"))
      num = static_cast<std::uint16_t>(want_u(lx, *s, "mx1d num", 2));
    if (const Val* s = find_named(v, "step"))
      step = static_cast<std::int8_t>(want_range(lx, *s, "mx1d step", -128, 127, "i8"));
    set(8, 2, num);
    set(10, 1, static_cast<std::uint8_t>(step));
    if (const Val* s = find_named(v, "scale_pidx"))
      set(11, 1, want_u(lx, *s, "mx1d scale_pidx", 1));
    if (const Val* s = find_named(v, "reserved"))
      put_list(lx, *s, "mx1d reserved", 4, [&](std::size_t i, const Val& e) {
        bytes[12 + i] = static_cast<std::uint8_t>(want_u(lx, e, "mx1d reserved", 1));
      });
  } else {
    const std::string found =
        v.kind == Val::Call ? "'" + v.name + "(...)'" : std::string(kind_name(v));
    lx.fail(v.at, std::string("field '") + f.name + "' is a " + type + ": expected " + forms +
                      ", found " + found);
  }
  (void)r;
  for (unsigned i = 0; i < 16; ++i) b.put_byte(f.off + i, bytes[i], key, v.at);
}

void put_list(Lexer& lx, const Val& v, const std::string& what, std::size_t n,
              const std::function<void(std::size_t, const Val&)>& each) {
  if (v.kind != Val::List)
    lx.fail(v.at, "expected a list of " + std::to_string(n) + " values for " + what + ", found " +
                      kind_name(v));
  if (v.args.size() != n)
    lx.fail(v.at,
            what + " needs " + std::to_string(n) + " values, got " + std::to_string(v.args.size()));
  for (std::size_t i = 0; i < n; ++i) each(i, v.args[i]);
}

void put_field(Builder& b, const FieldSpec& f, const Val& v, int key) {
  Lexer& lx = b.lx();
  const std::string what = std::string("field '") + f.name + "'";
  switch (f.kind) {
    case FK::U8:
    case FK::U16:
    case FK::U32:
    case FK::Grp:
    case FK::Hidden:
      b.put(f.off, f.len, want_u(lx, v, what, f.len), key, v.at);
      return;
    case FK::Dtype:
      b.put(f.off, 1, want_dtype(lx, v, what), key, v.at);
      return;
    case FK::DqFmt:
      b.put(f.off, 1, want_enum(lx, v, what, kDequantFmtNames, "dequant format"), key, v.at);
      return;
    case FK::Perf:
      b.put(f.off, 1, want_enum(lx, v, what, kPerfModeNames, "perf mode"), key, v.at);
      return;
    case FK::Bytes:
      put_list(lx, v, what, f.len, [&](std::size_t i, const Val& e) {
        b.put_byte(f.off + static_cast<unsigned>(i),
                   static_cast<std::uint8_t>(want_u(lx, e, what, 1)), key, e.at);
      });
      return;
    case FK::Mem3D:
    case FK::Mem1D:
      put_pattern(b, v, f, key);
      return;
    case FK::Wait: {
      // wait=none | eq(semN, V) | ge(semN, V)  (SPEC §2 wait_mode 0/1/2)
      if (v.kind == Val::Ident && v.name == "none") {
        b.put(f.off, 2, 0, key, v.at);
        return;
      }
      if (v.kind == Val::Call && (v.name == "eq" || v.name == "ge")) {
        check_args(lx, v, 2, {});
        if (v.args.size() != 2) lx.fail(v.at, v.name + "(semN, VALUE) takes two arguments");
        const unsigned idx = want_index(lx, v.args[0], "sem", 255, what);
        const std::uint32_t val = want_u(lx, v.args[1], "the wait value", 4);
        b.put(4, 1, v.name == "eq" ? 1 : 2, key, v.at);
        b.put(5, 1, idx, key, v.args[0].at);
        b.put(8, 4, val, key, v.args[1].at);
        return;
      }
      lx.fail(v.at, "expected none, eq(semN, VALUE) or ge(semN, VALUE) for field 'wait'");
    }
    case FK::Update: {
      // update=none | inc(semN) | dec(semN) | set(semN, V)  (SPEC §2 update_mode 0..3)
      if (v.kind == Val::Ident && v.name == "none") {
        b.put(f.off, 2, 0, key, v.at);
        return;
      }
      if (v.kind == Val::Call && (v.name == "inc" || v.name == "dec" || v.name == "set")) {
        const bool is_set = v.name == "set";
        check_args(lx, v, is_set ? 2 : 1, {});
        if (v.args.size() != (is_set ? 2u : 1u))
          lx.fail(v.at, v.name + (is_set ? "(semN, VALUE) takes two arguments"
                                         : "(semN) takes one argument"));
        const unsigned idx = want_index(lx, v.args[0], "sem", 255, what);
        b.put(6, 1, v.name == "inc" ? 1 : v.name == "dec" ? 2 : 3, key, v.at);
        b.put(7, 1, idx, key, v.args[0].at);
        if (is_set) b.put(8, 4, want_u(lx, v.args[1], "the set value", 4), key, v.args[1].at);
        return;
      }
      lx.fail(v.at, "expected none, inc(semN), dec(semN) or set(semN, VALUE) for field 'update'");
    }
  }
}

std::string field_names(const InstSpec& s) {
  std::string out;
  for (const auto* list : {&fields_of(s), &common_fields()})
    for (const auto& f : *list) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

RawInst assemble(Lexer& lx) {
  const Tok m = lx.next();
  if (m.kind != Tok::Ident)
    lx.fail(m.at, "expected an instruction mnemonic, found " + Lexer::describe(m));
  if (m.text.rfind("BSTART", 0) == 0) lx.fail(m.at, "a TQUANT block must start its line");
  const InstSpec* spec = spec_by_mnemonic(m.text);
  if (!spec) {
    std::string list;
    for (auto n : asm_mnemonics()) list += (list.empty() ? "" : ", ") + std::string(n);
    lx.fail(m.at, "unknown mnemonic '" + m.text + "' (" + list + ", or .raw)");
  }
  Builder b(lx);
  std::vector<std::string> seen;
  for (;;) {
    const Tok k = lx.next();
    if (k.kind == Tok::End) break;
    if (k.kind != Tok::Ident) lx.fail(k.at, "expected a field name, found " + Lexer::describe(k));
    const FieldSpec* f = nullptr;
    for (const auto* list : {&fields_of(*spec), &common_fields()})
      for (const auto& cand : *list)
        if (k.text == cand.name) f = &cand;
    if (!f)
      lx.fail(k.at, "unknown field '" + k.text + "' for " + std::string(spec->mnemonic) + " (" +
                        field_names(*spec) + ")");
    if (std::find(seen.begin(), seen.end(), k.text) != seen.end())
      lx.fail(k.at, "duplicate field '" + k.text + "'");
    seen.push_back(k.text);
    lx.expect('=', ("after field name '" + k.text + "'").c_str());
    const Val v = parse_value(lx);
    put_field(b, *f, v, b.add_key(k.text));
  }
  // Defaults for everything not written (SPEC §2 header: opcode, inst_word_len).
  RawInst& r = b.raw();
  if (!b.written(0)) r[0] = spec->code();
  if (!b.written(1)) r[1] = kInstWordLen;
  for (const auto& f : fields_of(*spec)) {
    if (b.written(f.off)) continue;
    if (f.required)
      lx.fail(m.at, std::string("missing required field '") + f.name + "' for " +
                        std::string(spec->mnemonic));
    if (f.kind == FK::Grp && f.from >= 0) continue;  // after the count fields are final
    // The default fills at most the low bytes of its value; wider fields
    // (reserved byte runs) are zero past them.
    for (unsigned i = 0; i < f.len; ++i)
      r[f.off + i] = i < sizeof f.def ? static_cast<std::uint8_t>(f.def >> (8 * i)) : 0;
  }
  for (const auto& f : fields_of(*spec))
    if (f.kind == FK::Grp && f.from >= 0 && !b.written(f.off))
      r[f.off] = grp_mask_for(r[static_cast<unsigned>(f.from)]);
  return r;
}

// ---------------------------------------------------------------------------
// Disassembly

std::string fmt_dtype(std::uint8_t d) {
  const auto n = name_of(kDtypeNames, d);
  return n.empty() ? hex(d) : std::string(n);
}

std::string fmt_plain_addr(std::uint32_t a) {
  switch (region_of(a)) {
    case Region::Sbuf:
      return "sbuf(" + std::to_string(partition_of(a)) + ", " + hex(offset_of(a)) + ")";
    case Region::Psum:
      return "psum(" + std::to_string(partition_of(a)) + ", " + hex(offset_of(a)) + ")";
    default:
      return hex(a);
  }
}

std::string fmt_hex_bytes(const RawInst& r, unsigned off, unsigned len) {
  std::string s;
  for (unsigned i = 0; i < len; ++i) s += (i ? " " : "") + hex2(r[off + i]);
  return s;
}

std::string fmt_pattern(const RawInst& r, const FieldSpec& f) {
  const unsigned o = f.off;
  const std::uint32_t a0 = get_le(r, o, 4);
  const std::uint8_t marker = static_cast<std::uint8_t>(a0 >> 27);
  if (marker == addr4::kMarkerIndirect) return "i(" + fmt_hex_bytes(r, o, 16) + ")";
  if (f.kind == FK::Mem1D) {
    std::string s = "mx1d(data=" + format_addr4(a0) +
                    ", scale=" + format_addr4(get_le(r, o + 4, 4)) +
                    ", num=" + std::to_string(get_le(r, o + 8, 2)) +
                    ", step=" + std::to_string(static_cast<std::int8_t>(r[o + 10])) +
                    ", scale_pidx=" + std::to_string(r[o + 11]);
    if (get_le(r, o + 12, 4) != 0) {
      s += ", reserved=[";
      for (unsigned i = 0; i < 4; ++i) s += (i ? ", " : "") + hex(r[o + 12 + i]);
      s += "]";
    }
    return s + ")";
  }
  if (marker == addr4::kMarkerMxTensorV2) {
    return "mx(data=" + fmt_plain_addr(a0 & addr4::kAddressMask) +
           ", scale=" + format_addr4(get_le(r, o + 4, 4)) + ", num=[" + std::to_string(r[o + 8]) +
           ", " + std::to_string(r[o + 9]) + "], step_data=" + std::to_string(get_i16(r, o + 10)) +
           ", step_scale=" + std::to_string(get_i16(r, o + 12)) +
           ", p=" + std::to_string(r[o + 14] & 0xF) + ", f=" + std::to_string(r[o + 14] >> 4) +
           ", scale_dtype=" + fmt_dtype(r[o + 15]) + ")";
  }
  return "t3d(" + format_addr4(a0) + ", step=[" + std::to_string(get_i16(r, o + 4)) + ", " +
         std::to_string(get_i16(r, o + 6)) + ", " + std::to_string(get_i16(r, o + 8)) + "], num=[" +
         std::to_string(get_le(r, o + 10, 2)) + ", " + std::to_string(get_le(r, o + 12, 2)) + ", " +
         std::to_string(get_le(r, o + 14, 2)) + "])";
}

std::string fmt_field(const RawInst& r, const FieldSpec& f) {
  // Scalar fields are at most 4 bytes; byte runs and patterns print their bytes.
  const std::uint32_t v = f.len <= 4 ? get_le(r, f.off, f.len) : 0;
  switch (f.kind) {
    case FK::Dtype:
      return fmt_dtype(static_cast<std::uint8_t>(v));
    case FK::DqFmt: {
      const auto n = name_of(kDequantFmtNames, static_cast<std::uint8_t>(v));
      return n.empty() ? std::to_string(v) : std::string(n);
    }
    case FK::Perf: {
      const auto n = name_of(kPerfModeNames, static_cast<std::uint8_t>(v));
      return n.empty() ? std::to_string(v) : std::string(n);
    }
    case FK::Grp:
      return hex(v);
    case FK::Bytes: {
      std::string s = "[";
      for (unsigned i = 0; i < f.len; ++i) s += (i ? ", " : "") + hex(r[f.off + i]);
      return s + "]";
    }
    case FK::Mem3D:
    case FK::Mem1D:
      return fmt_pattern(r, f);
    default:
      return std::to_string(v);
  }
}

bool field_is_default(const RawInst& r, const FieldSpec& f) {
  if (f.required || f.kind == FK::Mem3D || f.kind == FK::Mem1D) return false;
  if (f.kind == FK::Bytes) {
    for (unsigned i = 0; i < f.len; ++i)
      if (r[f.off + i]) return false;
    return true;
  }
  if (f.kind == FK::Grp && f.from >= 0)
    return r[f.off] == grp_mask_for(r[static_cast<unsigned>(f.from)]);
  return get_le(r, f.off, f.len) == f.def;
}

std::string fmt_events(const RawInst& r) {
  std::string s;
  const Events e = events_of(r);
  bool value_shown = false;
  if (e.wait_mode == 1 || e.wait_mode == 2) {
    s += std::string(" wait=") + (e.wait_mode == 1 ? "eq" : "ge") + "(sem" +
         std::to_string(e.wait_idx) + ", " + std::to_string(e.sem_value) + ")";
    value_shown = true;
  } else {
    if (e.wait_mode) s += " wait_mode=" + std::to_string(e.wait_mode);
    if (e.wait_idx) s += " wait_idx=" + std::to_string(e.wait_idx);
  }
  if (e.update_mode >= 1 && e.update_mode <= 3) {
    static const char* kNames[] = {"", "inc", "dec", "set"};
    s += std::string(" update=") + kNames[e.update_mode] + "(sem" + std::to_string(e.update_idx);
    if (e.update_mode == 3) {
      s += ", " + std::to_string(e.sem_value);
      value_shown = true;
    }
    s += ")";
  } else {
    if (e.update_mode) s += " update_mode=" + std::to_string(e.update_mode);
    if (e.update_idx) s += " update_idx=" + std::to_string(e.update_idx);
  }
  if (!value_shown && e.sem_value) s += " sem_value=" + std::to_string(e.sem_value);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API

std::string_view asm_mnemonic(std::uint8_t opcode) {
  const InstSpec* s = spec_by_opcode(opcode);
  return s ? std::string_view(s->mnemonic) : std::string_view();
}

const std::vector<std::string_view>& asm_mnemonics() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto& row : opcode_table())
      if (row.asm_fields) v.push_back(row.mnemonic);
    return v;
  }();
  return names;
}

std::string_view asm_dtype_name(std::uint8_t dtype) { return name_of(kDtypeNames, dtype); }

std::optional<std::uint8_t> asm_parse_dtype(std::string_view name) {
  return value_of(kDtypeNames, name);
}

std::string format_addr4(std::uint32_t raw) {
  const std::uint8_t m = static_cast<std::uint8_t>(raw >> 27);
  const std::uint32_t a = raw & addr4::kAddressMask;
  switch (m) {
    case addr4::kMarkerImm:
      return fmt_plain_addr(a);
    case addr4::kMarkerAddrReg:
      if (a < kNumEngineRegs) return "reg(r" + std::to_string(a) + ")";
      break;
    case addr4::kMarkerAddrShapeReg:
      if (a < kNumEngineRegs) return "addr_shape_reg(r" + std::to_string(a) + ")";
      break;
    case addr4::kMarkerShapeReg:
      return "shape_reg(" + fmt_plain_addr(a) + ")";
    case addr4::kMarkerMxTensorV2:
      return "mxv2(" + fmt_plain_addr(a) + ")";
    case addr4::kMarkerIndirect:
      return "indirect(" + fmt_plain_addr(a) + ")";
    default:
      break;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "addr4(0x%08x)", raw);
  return buf;
}

std::string disassemble_mnemonic(const RawInst& raw) {
  if (raw[0] == static_cast<std::uint8_t>(Opcode::Tquant)) return disassemble_tquant_block(raw);
  const InstSpec* spec = spec_by_opcode(raw[0]);
  if (!spec) return {};
  std::string s(spec->mnemonic);
  for (const auto& f : fields_of(*spec))
    if (!field_is_default(raw, f)) s += std::string(" ") + f.name + "=" + fmt_field(raw, f);
  s += fmt_events(raw);
  if (raw[1] != kInstWordLen) s += " inst_word_len=" + std::to_string(raw[1]);
  if (raw[2]) s += " debug_cmd=" + std::to_string(raw[2]);
  if (raw[3]) s += " debug_hint=" + std::to_string(raw[3]);
  return s;
}

std::string format_diagnostic(const AsmError& e) {
  const SourceLoc& l = e.loc();
  std::string where = l.file;
  if (l.line > 0) where += ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
  return where + ": error: " + e.message();
}

// ---------------------------------------------------------------------------
// Program text

namespace {

// Reads logical lines from a stream: comments removed, trailing-backslash
// continuations joined (with one space), each character keeping its position.
// Holds one logical line at a time, so a program of any length streams.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) {}
  // The next logical line; false at the end of the input.
  bool next(AsmLine& cur) {
    cur.text.clear();
    cur.segs.clear();
    bool any = false;
    while (std::getline(in_, phys_)) {
      any = true;
      ++line_no_;
      std::string_view v(phys_);
      if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
      const std::size_t hash = v.find('#');
      if (hash != std::string_view::npos) v = v.substr(0, hash);
      std::size_t len = v.size();
      while (len && std::isspace(static_cast<unsigned char>(v[len - 1]))) --len;
      const bool cont = len && v[len - 1] == '\\';
      if (cont) --len;
      if (!cur.segs.empty())
        cur.text += ' ';  // the joining space sits at column 0 of the next line
      cur.segs.push_back(Segment{cur.text.size(), line_no_, 1});
      cur.text.append(v.data(), len);
      if (!cont || in_.eof()) return true;
    }
    if (in_.bad()) throw std::runtime_error("read error");
    return any && !cur.segs.empty();
  }

 private:
  std::istream& in_;
  std::string phys_;
  int line_no_ = 0;
};

Engine want_engine(Lexer& lx, const Tok& t) {
  std::string names;  // "pool, dve, pe, sfu"
  for (const char* n : kEngineNames) names += (names.empty() ? "" : ", ") + std::string(n);
  if (t.kind == Tok::Ident) {
    if (auto e = parse_engine(t.text.c_str())) return *e;
    lx.fail(t.at, "unknown engine '" + t.text + "' (" + names + ")");
  }
  lx.fail(t.at, "expected an engine name (" + names + "), found " + Lexer::describe(t));
}

void expect_end(Lexer& lx, const char* what) {
  const Tok t = lx.peek();
  if (t.kind != Tok::End)
    lx.fail(t.at, std::string("unexpected ") + Lexer::describe(t) + " after " + what);
}

}  // namespace

RawInst assemble_statement(std::string_view text, const SourceLoc& loc) {
  AsmLine l;
  l.text = std::string(text);
  l.segs.push_back(Segment{0, loc.line, loc.col});
  if (starts_tquant_block(text)) return assemble_tquant_block(text, loc);
  Lexer lx(l, 0, loc.file);
  return assemble(lx);
}

void parse_program_stream(std::istream& in, const std::string& path, ProgramSink& sink) {
  std::optional<Arch> arch;
  Engine engine = Engine::Pool;
  // An open TQUANT block: its statements (separated by ';' or line ends) may
  // span lines; the word goes to the SFU queue at BSTOP.
  std::optional<TquantBlockBuilder> block;
  SourceLoc block_loc;
  LineReader reader(in);
  AsmLine line;
  while (reader.next(line)) {
    std::size_t b = 0;
    while (b < line.text.size() && std::isspace(static_cast<unsigned char>(line.text[b]))) ++b;
    if (b == line.text.size()) continue;
    Lexer lx(line, b, path);
    if (block || starts_tquant_block(std::string_view(line.text).substr(b))) {
      if (line.text[b] == '.') lx.fail(b, "directive inside a TQUANT block (no BSTOP yet)");
      std::size_t start = b;
      for (;;) {
        const std::size_t semi = line.text.find(';', start);
        const std::size_t end = semi == std::string::npos ? line.text.size() : semi;
        std::size_t p = start;
        while (p < end && std::isspace(static_cast<unsigned char>(line.text[p]))) ++p;
        if (p < end) {
          const std::string_view stmt = std::string_view(line.text).substr(p, end - p);
          if (!block) {
            if (!starts_tquant_block(stmt)) lx.fail(p, "statement after BSTOP on the same line");
            block.emplace();
            block_loc = lx.loc(p);
          }
          if (block->add(stmt, lx.loc(p))) {
            sink.inst(Engine::Sfu, block->word(), block_loc);
            block.reset();
          }
        }
        if (semi == std::string::npos) break;
        start = semi + 1;
      }
      continue;
    }
    if (line.text[b] != '.') {
      const RawInst raw = assemble(lx);
      sink.inst(engine, raw, lx.loc(b));
      continue;
    }
    std::size_t q = b + 1;
    while (q < line.text.size() && std::isalnum(static_cast<unsigned char>(line.text[q]))) ++q;
    const std::string dir = line.text.substr(b, q - b);
    lx.set_pos(q);
    if (dir == ".raw") {
      std::size_t stop = 0;
      const auto bytes = lx.hex_bytes('\0', stop);
      if (bytes.size() != kInstBytes)
        lx.fail(q, ".raw needs 64 bytes (128 hex digits), got " + std::to_string(bytes.size()));
      RawInst raw;
      std::copy(bytes.begin(), bytes.end(), raw.begin());
      sink.inst(engine, raw, lx.loc(b));
    } else if (dir == ".engine") {
      engine = want_engine(lx, lx.next());
      expect_end(lx, ".engine NAME");
    } else if (dir == ".arch") {
      const Tok t = lx.next();
      Arch a;
      if (t.kind != Tok::Ident || !parse_arch(t.text, a))
        lx.fail(t.at, "unknown arch " + Lexer::describe(t) + " (sunda, cayman, mariana, maverick)");
      if (arch && *arch != a)
        lx.fail(t.at, "conflicting .arch: already " + std::string(arch_name(*arch)));
      if (!arch) sink.arch(a, lx.loc(b));
      arch = a;
      expect_end(lx, ".arch NAME");
    } else if (dir == ".reg") {
      // .reg ENGINE rN = VALUE
      const Engine e = want_engine(lx, lx.next());
      const Tok r = lx.next();
      Val rv;
      rv.kind = r.kind == Tok::Ident ? Val::Ident : Val::Num;
      rv.name = r.text;
      rv.at = r.at;
      const unsigned idx = want_index(lx, rv, "r", kNumEngineRegs - 1, ".reg");
      lx.expect('=', "in .reg ENGINE rN = VALUE");
      const Tok v = lx.next();
      if (v.kind != Tok::Num)
        lx.fail(v.at, "expected a number for the .reg value, found " + Lexer::describe(v));
      if (v.num < -2147483648ll || v.num > 0xFFFFFFFFll)
        lx.fail(v.at, "value " + v.text + " out of range for a 32-bit register");
      sink.reg(RegInit{e, idx, static_cast<std::uint32_t>(v.num), lx.loc(b)});
      expect_end(lx, ".reg ENGINE rN = VALUE");
    } else {
      lx.fail(b, "unknown directive '" + dir + "' (.arch, .engine, .raw, .reg)");
    }
  }
  if (block) throw AsmError(block_loc, "TQUANT block without BSTOP");
}

Program parse_program(std::string_view text, const std::string& path) {
  ProgramBuilder b(path);
  std::istringstream in{std::string(text)};
  parse_program_stream(in, path, b);
  return b.take();
}

}  // namespace tpb::isa

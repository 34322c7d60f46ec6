// The encoder of the mnemonic syntax (docs/ASM.md): one statement
// ("MNEMONIC field=value ...") -> one 64-byte word, driven by the field
// tables of the opcode table (asm_fields.h).
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "models/isa/address_map.h"
#include "models/isa/asm.h"
#include "models/isa/asm_fields.h"
#include "models/isa/names.h"
#include "models/isa/tquant_block.h"

namespace tpb::isa {
namespace asm_detail {

// HEADER and EVENTS fields, common to every instruction (SPEC §2).
const std::vector<FieldSpec>& common_fields() {
  static const std::vector<FieldSpec> f = {
      {"opcode", FK::Hidden, 0, 1, false, 0},
      {"inst_word_len", FK::Hidden, 1, 1, false, kInstWordLen},
      {"debug_cmd", FK::Hidden, 2, 1, false, 0, -1, 0, 4},
      {"engine", FK::Named, 2, 1, false, 0, -1, kEngineSelectorShift, 4, engine_selector_names},
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
}  // namespace asm_detail

namespace {

using namespace asm_detail;

// ---------------------------------------------------------------------------
// Value trees: number | name | name(args) | [list] | i(hex bytes)

struct Val;
struct NamedArg;
struct Val {
  enum Kind { Num, Ident, Call, List, Hex } kind = Num;
  std::size_t at = 0;
  std::int64_t num = 0;
  bool wide = false;  // Num past INT64_MAX: unum holds it, name its text
  std::uint64_t unum = 0;
  bool flt = false;  // Num: a float literal (fnum; name its text)
  double fnum = 0;
  bool hex = false;  // Num: written 0x...
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
    lx.expect(',', ("between arguments of " + v.name));
  }
}

Val parse_value(Lexer& lx) {
  Tok t = lx.next();
  Val v;
  v.at = t.at;
  if (t.kind == Tok::Num) {
    v.kind = Val::Num;
    v.num = t.num;
    v.wide = t.wide;
    v.unum = t.unum;
    v.flt = t.is_float;
    v.fnum = t.fnum;
    v.hex = t.text.find_first_of("xX") != std::string::npos;
    if (t.wide || t.is_float) v.name = t.text;
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
      v.bytes = lx.hex_bytes(')');
      lx.expect(')', "after the bytes of i(...)");
      return v;
    }
    v.kind = Val::Call;
    return parse_call_args(lx, std::move(v));
  }
  lx.fail(t.at, "expected a value, found " + lx.describe(t));
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
// Assembly of one statement

class Builder {
 public:
  explicit Builder(Lexer& lx) : lx_(lx) {
    owner_.fill(-1);
    raw_.fill(0);
  }

  // Writes `len` little-endian bytes of `v` for field `key`, checking that no
  // other field has written different bits there.
  void put(unsigned off, unsigned len, std::uint64_t v, int key, std::size_t at) {
    for (unsigned i = 0; i < len; ++i)
      put_byte(off + i, static_cast<std::uint8_t>(v >> (8 * i)), key, at);
  }
  void put_byte(unsigned off, std::uint8_t b, int key, std::size_t at) {
    put_bits(off, 0xFF, b, key, at);
  }
  // The bits `mask` of byte `off` set to those of `b` (a bit field).
  void put_bits(unsigned off, std::uint8_t mask, std::uint8_t b, int key, std::size_t at) {
    // Only a bit whose value changes can conflict with its owner.
    const unsigned differ = static_cast<unsigned>((raw_[off] ^ b) & mask);
    for (unsigned bit = 0; differ >> bit; ++bit) {
      const int owner = owner_[off * 8 + bit];
      if (((differ >> bit) & 1u) && owner >= 0 && owner != key)
        lx_.fail(at, "field '" + keys_[static_cast<std::size_t>(key)] + "' conflicts with field '" +
                         keys_[static_cast<std::size_t>(owner)] + "' (byte " + std::to_string(off) +
                         ")");
    }
    for (unsigned bit = 0; bit < 8; ++bit)
      if ((mask >> bit) & 1u) owner_[off * 8 + bit] = key;
    raw_[off] = static_cast<std::uint8_t>((raw_[off] & ~mask) | (b & mask));
  }
  int add_key(const std::string& k) {
    keys_.push_back(k);
    return static_cast<int>(keys_.size() - 1);
  }
  // Whether any of the bits `mask` of byte `off` was written.
  bool written(unsigned off, std::uint8_t mask = 0xFF) const {
    for (unsigned bit = 0; bit < 8; ++bit)
      if (((mask >> bit) & 1u) && owner_[off * 8 + bit] >= 0) return true;
    return false;
  }
  RawInst& raw() { return raw_; }
  // `update=inc(coreK:semN)` (SPEC §15): 1 + K, and where it was written; the
  // instruction decides where it goes (a DMA descriptor's update_core byte).
  unsigned remote_core = 0;
  std::size_t remote_at = 0;
  int remote_key = -1;
  Lexer& lx() { return lx_; }

 private:
  Lexer& lx_;
  RawInst raw_;
  std::array<int, kInstBytes * 8> owner_;  // by bit
  std::vector<std::string> keys_;
};

std::int64_t want_num(Lexer& lx, const Val& v, const std::string& what) {
  if (v.kind != Val::Num)
    lx.fail(v.at, "expected a number for " + what + ", found " + kind_name(v));
  if (v.wide) lx.fail(v.at, "number '" + v.name + "' is too large");
  if (v.flt) lx.fail(v.at, "expected an integer for " + what + ", found '" + v.name + "'");
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
// A u64 field: 0 .. 2^64 - 1.
std::uint64_t want_u64(Lexer& lx, const Val& v, const std::string& what) {
  if (v.kind == Val::Num && v.wide) return v.unum;
  const std::int64_t n = want_num(lx, v, what);
  if (n < 0)
    lx.fail(v.at, "value " + std::to_string(n) + " out of range for " + what +
                      " (u64: 0..18446744073709551615)");
  return static_cast<std::uint64_t>(n);
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
std::uint8_t want_enum(Lexer& lx, const Val& v, const std::string& what, const NameTable& table,
                       const char* kind) {
  if (v.kind == Val::Ident) {
    if (auto e = table.parse(v.name)) return *e;
    lx.fail(v.at, std::string("unknown ") + kind + " '" + v.name + "' for " + what + " (" +
                      table.list() + ", or a number)");
  }
  return static_cast<std::uint8_t>(want_u(lx, v, what, 1));
}

std::uint8_t want_dtype(Lexer& lx, const Val& v, const std::string& what) {
  if (v.kind == Val::Ident) {
    if (auto e = dtype_table().parse(v.name)) return *e;
    lx.fail(v.at, "unknown dtype '" + v.name + "' for " + what + " (" + dtype_table().list() +
                      ", or a number)");
  }
  return static_cast<std::uint8_t>(want_u(lx, v, what, 1));
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
    const std::int64_t n = want_num(lx, v, what);
    if (n < 0 || n > addr4::kAddressMask)
      lx.fail(v.at, "address " + std::to_string(n) + " for " + what +
                        " does not fit 27 bits (write addr4(0x...) for a raw ADDR4)");
    return static_cast<std::uint32_t>(n);
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

using PatternBytes = std::array<std::uint8_t, 16>;

// Bytes [off, off + len) of a pattern field, little-endian.
void set_le(PatternBytes& bytes, unsigned off, unsigned len, std::uint64_t val) {
  for (unsigned i = 0; i < len; ++i) bytes[off + i] = static_cast<std::uint8_t>(val >> (8 * i));
}

// MEM_PATTERN3D: t3d(ADDR, step=[..], num=[..]).
void pattern_t3d(Lexer& lx, const Val& v, const std::string& what, PatternBytes& bytes) {
  check_args(lx, v, 1, {"step", "num"});
  if (v.args.size() != 1) lx.fail(v.at, "t3d(ADDR, step=[..], num=[..]) needs a start address");
  set_le(bytes, 0, 4, want_addr4(lx, v.args[0], what));
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
    set_le(bytes, 4 + 2 * i, 2, static_cast<std::uint16_t>(step[i]));
    set_le(bytes, 10 + 2 * i, 2, num[i]);
  }
}

// MXTENSOR_V2 (seed 003 §3.3): mx(data=, scale=, ...); data carries the
// MXTENSOR_V2 marker.
void pattern_mx(Lexer& lx, const Val& v, PatternBytes& bytes) {
  check_args(lx, v, 0,
             {"data", "scale", "num", "step_data", "step_scale", "p", "f", "scale_dtype"});
  std::uint32_t data = want_addr4(lx, required_named(lx, v, "data"), "mx data");
  if ((data >> 27) == addr4::kMarkerImm) data |= std::uint32_t{addr4::kMarkerMxTensorV2} << 27;
  set_le(bytes, 0, 4, data);
  set_le(bytes, 4, 4, want_addr4(lx, required_named(lx, v, "scale"), "mx scale"));
  std::uint8_t num[2] = {1, 1};
  if (const Val* s = find_named(v, "num"))
    put_list(lx, *s, "mx num", 2, [&](std::size_t i, const Val& e) {
      num[i] = static_cast<std::uint8_t>(want_u(lx, e, "mx num", 1));
    });
  set_le(bytes, 8, 1, num[0]);
  set_le(bytes, 9, 1, num[1]);
  if (const Val* s = find_named(v, "step_data"))
    set_le(bytes, 10, 2, static_cast<std::uint16_t>(want_i16(lx, *s, "mx step_data")));
  if (const Val* s = find_named(v, "step_scale"))
    set_le(bytes, 12, 2, static_cast<std::uint16_t>(want_i16(lx, *s, "mx step_scale")));
  unsigned p = 0, fdim = 0;
  if (const Val* s = find_named(v, "p"))
    p = static_cast<unsigned>(want_range(lx, *s, "mx p", 0, 15, "4 bits"));
  if (const Val* s = find_named(v, "f"))
    fdim = static_cast<unsigned>(want_range(lx, *s, "mx f", 0, 15, "4 bits"));
  set_le(bytes, 14, 1, (fdim << 4) | p);
  std::uint8_t sd = static_cast<std::uint8_t>(Dtype::Sfp8E8);
  if (const Val* s = find_named(v, "scale_dtype")) sd = want_dtype(lx, *s, "mx scale_dtype");
  set_le(bytes, 15, 1, sd);
}

// MXTENSOR1D (seed 003 §3.2): mx1d(data=, scale=, ...).
void pattern_mx1d(Lexer& lx, const Val& v, PatternBytes& bytes) {
  check_args(lx, v, 0, {"data", "scale", "num", "step", "scale_pidx", "reserved"});
  set_le(bytes, 0, 4, want_addr4(lx, required_named(lx, v, "data"), "mx1d data"));
  set_le(bytes, 4, 4, want_addr4(lx, required_named(lx, v, "scale"), "mx1d scale"));
  std::uint16_t num = 1;
  std::int8_t step = 1;
  if (const Val* s = find_named(v, "num"))
    num = static_cast<std::uint16_t>(want_u(lx, *s, "mx1d num", 2));
  if (const Val* s = find_named(v, "step"))
    step = static_cast<std::int8_t>(want_range(lx, *s, "mx1d step", -128, 127, "i8"));
  set_le(bytes, 8, 2, num);
  set_le(bytes, 10, 1, static_cast<std::uint8_t>(step));
  if (const Val* s = find_named(v, "scale_pidx"))
    set_le(bytes, 11, 1, want_u(lx, *s, "mx1d scale_pidx", 1));
  if (const Val* s = find_named(v, "reserved"))
    put_list(lx, *s, "mx1d reserved", 4, [&](std::size_t i, const Val& e) {
      bytes[12 + i] = static_cast<std::uint8_t>(want_u(lx, e, "mx1d reserved", 1));
    });
}

// Writes a 16-byte pattern field. `one_d` selects MXMEM_PATTERN1D.
void put_pattern(Builder& b, const Val& v, const FieldSpec& f, int key) {
  Lexer& lx = b.lx();
  PatternBytes bytes{};
  const bool one_d = f.kind == FK::Mem1D;
  if (v.kind == Val::Hex) {
    if (v.bytes.size() != 16)
      lx.fail(v.at, "i(...) needs 16 bytes, got " + std::to_string(v.bytes.size()));
    std::copy(v.bytes.begin(), v.bytes.end(), bytes.begin());
  } else if (v.kind == Val::Call && v.name == "t3d" && !one_d) {
    pattern_t3d(lx, v, std::string("field '") + f.name + "'", bytes);
  } else if (v.kind == Val::Call && v.name == "mx" && !one_d) {
    pattern_mx(lx, v, bytes);
  } else if (v.kind == Val::Call && v.name == "mx1d" && one_d) {
    pattern_mx1d(lx, v, bytes);
  } else {
    const char* forms = one_d ? "mx1d(...) or i(...)" : "t3d(...), mx(...) or i(...)";
    const char* type = one_d ? "MXMEM_PATTERN1D" : "MEM_PATTERN3D";
    const std::string found =
        v.kind == Val::Call ? "'" + v.name + "(...)'" : std::string(kind_name(v));
    lx.fail(v.at, std::string("field '") + f.name + "' is a " + type + ": expected " + forms +
                      ", found " + found);
  }
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

// A DMA descriptor endpoint (16 bytes, SPEC §10, docs/ASM.md "dma_copy"):
//   hbm(OFFSET[, stride=S])  kind 0, a u64 byte offset in the core's HBM
//   sbuf(P, OFF)             kind 1, row 0 in partition P at OFF, stride 0
//   end(kind=K, addr_lo=L, addr_hi=H, stride=S, reserved=[a, b, c])  any bytes
void put_dma_end(Builder& b, const Val& v, const FieldSpec& f, int key) {
  Lexer& lx = b.lx();
  const std::string what = std::string("field '") + f.name + "'";
  std::uint64_t addr = 0;
  std::uint32_t stride = 0;
  std::uint8_t kind = 0;
  std::array<std::uint8_t, 3> reserved{};
  if (v.kind == Val::Call && v.name == "hbm") {
    check_args(lx, v, 1, {"stride"});
    if (v.args.size() != 1) lx.fail(v.at, "hbm(OFFSET, stride=S) needs the HBM byte offset");
    addr = want_u64(lx, v.args[0], what + " hbm offset");
    if (const Val* s = find_named(v, "stride")) stride = want_u(lx, *s, what + " stride", 4);
    kind = static_cast<std::uint8_t>(DmaEndpointKind::Hbm);
  } else if (v.kind == Val::Call && v.name == "sbuf") {
    addr = want_plain_addr(lx, v, what);
    kind = static_cast<std::uint8_t>(DmaEndpointKind::Sbuf);
  } else if (v.kind == Val::Call && v.name == "end") {
    check_args(lx, v, 0, {"kind", "addr_lo", "addr_hi", "stride", "reserved"});
    if (const Val* s = find_named(v, "kind"))
      kind = static_cast<std::uint8_t>(want_u(lx, *s, what + " kind", 1));
    if (const Val* s = find_named(v, "addr_lo")) addr = want_u(lx, *s, what + " addr_lo", 4);
    if (const Val* s = find_named(v, "addr_hi"))
      addr |= std::uint64_t{want_u(lx, *s, what + " addr_hi", 4)} << 32;
    if (const Val* s = find_named(v, "stride")) stride = want_u(lx, *s, what + " stride", 4);
    if (const Val* s = find_named(v, "reserved"))
      put_list(lx, *s, what + " reserved", 3, [&](std::size_t i, const Val& e) {
        reserved[i] = static_cast<std::uint8_t>(want_u(lx, e, what + " reserved", 1));
      });
  } else {
    const std::string found =
        v.kind == Val::Call ? "'" + v.name + "(...)'" : std::string(kind_name(v));
    lx.fail(v.at, what +
                      " is a DMA endpoint: expected hbm(OFFSET, stride=S), sbuf(P, OFF) or "
                      "end(kind=.., addr_lo=.., addr_hi=.., stride=.., reserved=[..]), found " +
                      found);
  }
  b.put(f.off, 8, addr, key, v.at);
  b.put(f.off + 8u, 4, stride, key, v.at);
  b.put_byte(f.off + 12u, kind, key, v.at);
  for (unsigned i = 0; i < 3; ++i) b.put_byte(f.off + 13u + i, reserved[i], key, v.at);
}

// wait=none | eq(semN, V) | ge(semN, V)  (SPEC §2 wait_mode 0/1/2)
void put_wait(Builder& b, const FieldSpec& f, const Val& v, int key) {
  Lexer& lx = b.lx();
  if (v.kind == Val::Ident && v.name == "none") {
    b.put(f.off, 2, 0, key, v.at);
    return;
  }
  const auto mode = v.kind == Val::Call ? wait_mode_names().parse_exact(v.name) : std::nullopt;
  if (!mode) lx.fail(v.at, "expected none, eq(semN, VALUE) or ge(semN, VALUE) for field 'wait'");
  check_args(lx, v, 2, {});
  if (v.args.size() != 2) lx.fail(v.at, v.name + "(semN, VALUE) takes two arguments");
  const unsigned idx = want_index(lx, v.args[0], "sem", 255, std::string("field '") + f.name + "'");
  const std::uint32_t val = want_u(lx, v.args[1], "the wait value", 4);
  b.put(4, 1, *mode, key, v.at);
  b.put(5, 1, idx, key, v.args[0].at);
  b.put(8, 4, val, key, v.args[1].at);
}

// update=none | inc(semN) | dec(semN) | set(semN, V)  (SPEC §2 update_mode
// 0..3); semN may be coreK:semN, another core's semaphore (a DMA
// descriptor's only, SPEC §15).
void put_update(Builder& b, const FieldSpec& f, const Val& v, int key) {
  Lexer& lx = b.lx();
  const std::string what = std::string("field '") + f.name + "'";
  if (v.kind == Val::Ident && v.name == "none") {
    b.put(f.off, 2, 0, key, v.at);
    return;
  }
  const auto mode = v.kind == Val::Call ? update_mode_names().parse_exact(v.name) : std::nullopt;
  if (!mode)
    lx.fail(v.at, "expected none, inc(semN), dec(semN) or set(semN, VALUE) for field 'update'");
  const bool is_set = *mode == kUpdateSet;
  check_args(lx, v, is_set ? 2 : 1, {});
  if (v.args.size() != (is_set ? 2u : 1u))
    lx.fail(v.at,
            v.name + (is_set ? "(semN, VALUE) takes two arguments" : "(semN) takes one argument"));
  Val sem = v.args[0];
  if (sem.kind == Val::Ident && sem.name.rfind("core", 0) == 0 &&
      sem.name.find(':') != std::string::npos) {
    const std::size_t colon = sem.name.find(':');
    Val core = sem;
    core.name = sem.name.substr(0, colon);
    const unsigned k = want_index(lx, core, "core", kMaxDeviceCores - 1, what);
    sem.name = sem.name.substr(colon + 1);
    b.remote_core = k + 1;
    b.remote_at = v.args[0].at;
    b.remote_key = key;
  }
  const unsigned idx = want_index(lx, sem, "sem", 255, what);
  b.put(6, 1, *mode, key, v.at);
  b.put(7, 1, idx, key, v.args[0].at);
  if (is_set) b.put(8, 4, want_u(lx, v.args[1], "the set value", 4), key, v.args[1].at);
}

// A bit field's value: 0 .. 2^bits - 1.
std::uint8_t want_bits(Lexer& lx, const Val& v, const FieldSpec& f, const std::string& what) {
  return static_cast<std::uint8_t>(
      want_range(lx, v, what, 0, (1 << f.bits) - 1, (std::to_string(f.bits) + " bits").c_str()));
}

// A value of a named field: a name of its table, or a number that fits it.
std::uint8_t want_named(Lexer& lx, const Val& v, const FieldSpec& f, const std::string& what) {
  const NameTable& names = f.names();
  if (v.kind == Val::Ident) {
    if (auto e = names.parse(v.name)) {
      if (f.bits == 0 || *e < (1u << f.bits)) return *e;
    }
    lx.fail(v.at,
            "unknown name '" + v.name + "' for " + what + " (" + names.list() + ", or a number)");
  }
  return f.bits ? want_bits(lx, v, f, what) : static_cast<std::uint8_t>(want_u(lx, v, what, 1));
}

// A list of three i32 or u16 (iota's step and num).
void put_list3(Builder& b, const FieldSpec& f, const Val& v, int key, const std::string& what) {
  Lexer& lx = b.lx();
  const unsigned width = f.kind == FK::I32x3 ? 4 : 2;
  put_list(lx, v, what, 3, [&](std::size_t i, const Val& e) {
    const std::uint64_t x =
        width == 4
            ? static_cast<std::uint32_t>(want_range(lx, e, what, INT32_MIN, INT32_MAX, "i32"))
            : want_u(lx, e, what, 2);
    b.put(f.off + static_cast<unsigned>(i) * width, width, x, key, e.at);
  });
}

// An FP32 operand (FK::Scalar): a number is its value (rounded to FP32 to
// nearest even), 0x... its bits, inf / nan their values; an address makes
// it a per-partition vector and sets the field's flag bit.
void put_scalar(Builder& b, const FieldSpec& f, const Val& v, int key, const std::string& what) {
  Lexer& lx = b.lx();
  const std::uint8_t flag = static_cast<std::uint8_t>(1u << f.shift);
  const auto bits_of = [](float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
  };
  std::uint32_t word;
  bool vector = false;
  if (v.kind == Val::Num && v.flt) {
    // strtof: one rounding of the decimal to FP32 (the shortest decimal of
    // an FP32 value reads back as it; through a double it might not).
    word = bits_of(std::strtof(v.name.c_str(), nullptr));
  } else if (v.kind == Val::Num) {
    word = v.hex ? want_u(lx, v, what, 4) : bits_of(static_cast<float>(want_num(lx, v, what)));
  } else if (v.kind == Val::Ident && (v.name == "inf" || v.name == "nan")) {
    word = v.name == "inf" ? 0x7f800000u : 0x7fc00000u;
  } else {
    word = want_addr4(lx, v, what);
    vector = true;
  }
  b.put(f.off, 4, word, key, v.at);
  b.put_bits(static_cast<unsigned>(f.from), flag, vector ? flag : 0, key, v.at);
}

// A second source's start and steps (Steps3D): t3d(ADDR, step=[..]); its
// num is the first source's.
void put_steps3d(Builder& b, const FieldSpec& f, const Val& v, int key, const std::string& what) {
  Lexer& lx = b.lx();
  if (v.kind != Val::Call || v.name != "t3d")
    lx.fail(v.at, what + " is a second source of the first's shape: expected t3d(ADDR, step=[..])");
  check_args(lx, v, 1, {"step"});
  if (v.args.size() != 1) lx.fail(v.at, "t3d(ADDR, step=[..]) needs a start address");
  b.put(f.off, 4, want_addr4(lx, v.args[0], what), key, v.at);
  std::int16_t step[3] = {1, 0, 0};
  if (const Val* s = find_named(v, "step"))
    put_list(lx, *s, "t3d step", 3,
             [&](std::size_t i, const Val& e) { step[i] = want_i16(lx, e, "t3d step"); });
  for (unsigned i = 0; i < 3; ++i)
    b.put(f.off + 4 + 2 * i, 2, static_cast<std::uint16_t>(step[i]), key, v.at);
}

void put_field(Builder& b, const FieldSpec& f, const Val& v, int key) {
  Lexer& lx = b.lx();
  const std::string what = std::string("field '") + f.name + "'";
  if (f.bits != 0 && f.kind != FK::Named && f.kind != FK::Scalar) {
    b.put_bits(f.off, f.mask(), static_cast<std::uint8_t>(want_bits(lx, v, f, what) << f.shift),
               key, v.at);
    return;
  }
  switch (f.kind) {
    case FK::U8:
    case FK::U16:
    case FK::U32:
    case FK::Grp:
    case FK::Hidden:
      b.put(f.off, f.len, want_u(lx, v, what, f.len), key, v.at);
      return;
    case FK::Named:
      b.put_bits(f.off, f.mask(), static_cast<std::uint8_t>(want_named(lx, v, f, what) << f.shift),
                 key, v.at);
      return;
    case FK::I32:
      b.put(f.off, 4,
            static_cast<std::uint32_t>(want_range(lx, v, what, INT32_MIN, INT32_MAX, "i32")), key,
            v.at);
      return;
    case FK::I32x3:
    case FK::U16x3:
      put_list3(b, f, v, key, what);
      return;
    case FK::Steps3D:
      put_steps3d(b, f, v, key, what);
      return;
    case FK::Addr:
      b.put(f.off, 4, want_addr4(lx, v, what), key, v.at);
      return;
    case FK::Scalar:
      put_scalar(b, f, v, key, what);
      return;
    case FK::Dtype:
      b.put(f.off, 1, want_dtype(lx, v, what), key, v.at);
      return;
    case FK::DqFmt:
      b.put(f.off, 1, want_enum(lx, v, what, dequant_fmt_names(), "dequant format"), key, v.at);
      return;
    case FK::Perf:
      b.put(f.off, 1, want_enum(lx, v, what, mx_perf_mode_names(), "perf mode"), key, v.at);
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
    case FK::DmaEnd:
      put_dma_end(b, v, f, key);
      return;
    case FK::DmaOp:
      b.put(f.off, 1, want_enum(lx, v, what, dma_rmw_op_names(), "dst_rmw_op"), key, v.at);
      return;
    case FK::Wait:
      put_wait(b, f, v, key);
      return;
    case FK::Update:
      put_update(b, f, v, key);
      return;
  }
}

std::string field_names(const InstSpec& s) {
  std::string out;
  for (const auto* list : {&fields_of(s), &common_fields()})
    for (const auto& f : *list) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

}  // namespace

namespace asm_detail {

RawInst assemble(Lexer& lx, Queue queue) {
  const Tok m = lx.next();
  if (m.kind != Tok::Ident)
    lx.fail(m.at, "expected an instruction mnemonic, found " + lx.describe(m));
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
    if (k.kind != Tok::Ident) lx.fail(k.at, "expected a field name, found " + lx.describe(k));
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
    lx.expect('=', ("after field name '" + k.text + "'"));
    const Val v = parse_value(lx);
    put_field(b, *f, v, b.add_key(k.text));
  }
  if (b.remote_core != 0) {
    if (spec->code() != static_cast<std::uint8_t>(Opcode::DmaCopy))
      lx.fail(b.remote_at,
              "a semaphore of another core (coreK:semN) is updated by a DMA descriptor "
              "(dma_copy) only");
    b.put_byte(offsetof(DmaDescriptor, update_core), static_cast<std::uint8_t>(b.remote_core),
               b.remote_key, b.remote_at);
  }
  // Defaults for everything not written (SPEC §2 header: opcode, inst_word_len).
  RawInst& r = b.raw();
  if (!b.written(0)) r[0] = spec->code();
  if (!b.written(1)) r[1] = kInstWordLen;
  // The engine selector (SPEC §18): the `.engine` it is written under, when
  // that is not the opcode's home but runs it.
  const std::uint8_t sel_mask = 0xF0;
  if (!b.written(2, sel_mask))
    r[2] = static_cast<std::uint8_t>((r[2] & ~sel_mask) |
                                     (selector_for(*spec, queue) << kEngineSelectorShift));
  for (const auto& f : fields_of(*spec)) {
    if (b.written(f.off, f.mask())) continue;
    if (f.required)
      lx.fail(m.at, std::string("missing required field '") + f.name + "' for " +
                        std::string(spec->mnemonic));
    if (f.kind == FK::Grp && f.from >= 0) continue;  // after the count fields are final
    if (f.bits != 0) {
      r[f.off] =
          static_cast<std::uint8_t>((r[f.off] & ~f.mask()) | ((f.def << f.shift) & f.mask()));
      continue;
    }
    if (spec->code() == static_cast<std::uint8_t>(Opcode::DmaCopy) &&
        f.off == offsetof(DmaDescriptor, queue)) {  // the queue it is written under
      r[f.off] = static_cast<std::uint8_t>(is_dma_queue(queue) ? dma_queue_index(queue) : 0);
      continue;
    }
    if (spec->code() == static_cast<std::uint8_t>(Opcode::Nop) &&
        f.off == offsetof(NopWord, queue)) {  // the queue it is written under
      r[f.off] = static_cast<std::uint8_t>(queue);
      continue;
    }
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

unsigned want_register(Lexer& lx, const Tok& r, const std::string& what) {
  Val rv;
  rv.kind = r.kind == Tok::Ident ? Val::Ident : Val::Num;
  rv.name = r.text;
  rv.at = r.at;
  return want_index(lx, rv, "r", kNumEngineRegs - 1, what);
}

}  // namespace asm_detail

// ---------------------------------------------------------------------------
// Public API (asm.h)

using namespace asm_detail;

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

std::optional<std::uint8_t> asm_parse_dtype(std::string_view name) {
  return dtype_table().parse(name);
}

RawInst assemble_statement(std::string_view text, const SourceLoc& loc) {
  if (starts_tquant_block(text)) return assemble_tquant_block(text, loc);
  const AsmLine l = AsmLine::of(text, loc);
  Lexer lx(l, 0, loc.file);
  return assemble(lx);
}

}  // namespace tpb::isa

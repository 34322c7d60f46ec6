// The TQUANT block syntax (seed 002, docs/ASM.md): one parser per statement
// kind on the tokens of the program lexer (lexer.h, Block dialect), and the
// printer the disassembler uses.
#include "models/isa/tquant_block.h"

#include <cctype>
#include <vector>

#include "models/isa/names.h"

namespace tpb::isa {

namespace {

// A number token: decimal or 0x hex (binary with `binary`), in [lo, hi].
std::int64_t number(Lexer& lx, const Tok& t, const std::string& what, std::int64_t lo,
                    std::int64_t hi, bool binary = false) {
  if (t.kind != Tok::Num)
    lx.fail(t.at, "expected a number for " + what + ", found " + lx.describe(t));
  std::string s = t.text;
  bool neg = false;
  if (!s.empty() && s[0] == '-') {
    neg = true;
    s.erase(0, 1);
  }
  unsigned base = binary ? 2 : 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.erase(0, 2);
  }
  std::int64_t v = 0;
  for (char c : s) {
    const int d = std::isdigit(static_cast<unsigned char>(c))
                      ? c - '0'
                      : (std::isxdigit(static_cast<unsigned char>(c))
                             ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                             : 99);
    if (d >= static_cast<int>(base))
      lx.fail(t.at, "bad " + std::string(base == 2 ? "binary " : "") + "number '" + t.text +
                        "' for " + what);
    v = v * base + d;
    if (v > (std::int64_t{1} << 40)) lx.fail(t.at, "number '" + t.text + "' is too large");
  }
  if (neg) v = -v;
  if (v < lo || v > hi)
    lx.fail(t.at, what + " " + t.text + " is out of range [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  return v;
}

std::uint8_t tile_type(Lexer& lx, const std::string& what) {
  const Tok t = lx.next();
  if (t.kind == Tok::Num) return static_cast<std::uint8_t>(number(lx, t, what, 0, 255));
  if (t.kind == Tok::Ident)
    if (const auto v = tile_dtype_names().parse(t.text)) return *v;
  lx.fail(t.at, "unknown " + what + " " + lx.describe(t) + " (" + tile_dtype_names().list(" ") +
                    ", or a number)");
}

std::uint8_t rmode(Lexer& lx, const Tok& t) {
  if (t.kind == Tok::Num) return static_cast<std::uint8_t>(number(lx, t, "RMode", 0, 255));
  if (t.kind == Tok::Ident)
    if (const auto v = rmode_names().parse(t.text)) return *v;
  lx.fail(t.at,
          "unknown RMode " + lx.describe(t) + " (" + rmode_names().list(" ") + ", or a number)");
}

// "Tn" / "rn": the index, at most `max`.
unsigned indexed(Lexer& lx, const Tok& t, char prefix, unsigned max, const std::string& what) {
  if (t.kind != Tok::Ident || t.text.size() < 2 ||
      std::tolower(static_cast<unsigned char>(t.text[0])) != prefix)
    lx.fail(t.at, "expected " + what + " (" + std::string(1, prefix == 't' ? 'T' : 'r') + "0.." +
                      std::string(1, prefix == 't' ? 'T' : 'r') + std::to_string(max) +
                      "), found " + lx.describe(t));
  unsigned v = 0;
  for (std::size_t i = 1; i < t.text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(t.text[i])) || v > 1000)
      lx.fail(t.at, "bad " + what + " '" + t.text + "'");
    v = v * 10 + static_cast<unsigned>(t.text[i] - '0');
  }
  if (v > max) lx.fail(t.at, what + " '" + t.text + "' is past " + std::to_string(max));
  return v;
}

// BSTOP [wait=eq|ge(semN, V)] [update=inc|dec(semN) | set(semN, V)]: the
// word's EVENTS (SPEC §2) in the mnemonic syntax's spelling (convention: the
// seed's block has no semaphores; an SFU block joins a semaphore-ordered
// pipeline this way).
void bstop_events(Lexer& lx, Events& ev) {
  bool have_value = false;
  while (lx.peek().kind == Tok::Ident) {
    const Tok key = lx.next();
    const bool wait = iequal(key.text, "wait");
    if (!wait && !iequal(key.text, "update"))
      lx.fail(key.at, "expected wait=... or update=... after BSTOP, found " + lx.describe(key));
    lx.expect("=", "after " + key.text);
    const Tok kind = lx.next();
    const std::string k = kind.kind == Tok::Ident ? kind.text : "";
    const auto mode = (wait ? wait_mode_names() : update_mode_names()).parse_exact(k);
    const bool has_value = mode && (wait || *mode == kUpdateSet);
    if (!mode)
      lx.fail(kind.at, wait ? "expected eq(semN, VALUE) or ge(semN, VALUE) for wait"
                            : "expected inc(semN), dec(semN) or set(semN, VALUE) for update");
    lx.expect("(", "after " + k);
    const Tok sem = lx.next();
    const bool sem_ok = sem.kind == Tok::Ident && sem.text.size() > 3 && sem.text.size() <= 6 &&
                        iequal(sem.text.substr(0, 3), "sem") &&
                        sem.text.find_first_not_of("0123456789", 3) == std::string::npos;
    if (!sem_ok) lx.fail(sem.at, "expected a semaphore semN, found " + lx.describe(sem));
    const unsigned long idx = std::stoul(sem.text.substr(3));
    if (idx > 255) lx.fail(sem.at, "semaphore index " + sem.text.substr(3) + " past 255");
    std::uint32_t value = 0;
    if (has_value) {
      lx.expect(",", "after the semaphore");
      value = static_cast<std::uint32_t>(number(lx, lx.next(), "the value", 0, UINT32_MAX));
      if (have_value && value != ev.sem_value)
        lx.fail(kind.at, "wait and update=set share one sem_value: " +
                             std::to_string(ev.sem_value) + " vs " + std::to_string(value));
      have_value = true;
      ev.sem_value = value;
    }
    lx.expect(")", "closing " + k);
    if (wait) {
      ev.wait_mode = *mode;
      ev.wait_idx = static_cast<std::uint8_t>(idx);
    } else {
      ev.update_mode = *mode;
      ev.update_idx = static_cast<std::uint8_t>(idx);
    }
  }
}

void end_of(Lexer& lx, const char* stmt) {
  if (lx.peek().kind != Tok::End)
    lx.fail(lx.peek().at, std::string("unexpected ") + lx.describe(lx.peek()) + " in " + stmt);
}

std::string bits(unsigned v) {
  std::string s;
  for (int b = 15; b >= 0; --b)
    if (v >> b & 1u || !s.empty() || b < 4) s += (v >> b & 1u) ? '1' : '0';
  return s;
}

// B.DATR DataType[, RMode][, Field=V ...]: the first sets the word's fields
// (a second is parsed for its syntax and counted: it is illegal).
void parse_datr(Lexer& lx, const Tok& k, TquantBlock& w) {
  const bool first = w.datr_count == 0;
  if (w.datr_count == 255) lx.fail(k.at, "too many B.DATR");
  ++w.datr_count;
  TquantBlock t = w;
  t.dst_dtype = tile_type(lx, "B.DATR DataType");
  bool rmode_seen = false;
  std::vector<std::string> seen;
  while (lx.accept(",")) {
    const Tok a = lx.next();
    if (a.kind != Tok::Ident || !lx.accept("=")) {
      if (rmode_seen) lx.fail(a.at, "B.DATR takes one RMode");
      rmode_seen = true;
      t.rmode = rmode(lx, a);
      continue;
    }
    for (const auto& f : seen)
      if (iequal(f, a.text)) lx.fail(a.at, "duplicate B.DATR field '" + a.text + "'");
    seen.push_back(a.text);
    const Tok v = lx.next();
    if (iequal(a.text, "RMode")) {
      if (rmode_seen) lx.fail(a.at, "duplicate RMode");
      rmode_seen = true;
      t.rmode = rmode(lx, v);
      continue;
    }
    const auto n = static_cast<std::uint8_t>(number(lx, v, a.text, 0, 255));
    if (iequal(a.text, "Sat"))
      t.sat = n;
    else if (iequal(a.text, "Canonicalize"))
      t.canonicalize = n;
    else if (iequal(a.text, "Layout"))
      t.layout = n;
    else if (iequal(a.text, "CMode"))
      t.cmode = n;
    else if (iequal(a.text, "PadValue") || iequal(a.text, "PadValueOrByteId"))
      t.pad_value = n;
    else
      lx.fail(a.at, "unknown B.DATR field '" + a.text +
                        "' (RMode, Sat, Canonicalize, Layout, CMode, PadValue)");
  }
  end_of(lx, "B.DATR");
  if (first) {
    t.datr_count = w.datr_count;
    w = t;
  }
}

// B.DIM LBd=V[, ...]: a binding of a dimension already bound is counted.
void parse_dim(Lexer& lx, TquantBlock& w) {
  do {
    const Tok a = lx.next();
    if (a.kind != Tok::Ident || a.text.size() != 3 || !iequal(a.text.substr(0, 2), "LB") ||
        a.text[2] < '0' || a.text[2] > '7')
      lx.fail(a.at, "expected a B.DIM binding LB0..LB7, found " + lx.describe(a));
    const unsigned d = static_cast<unsigned>(a.text[2] - '0');
    lx.expect("=", "after " + a.text);
    const auto v = static_cast<std::uint16_t>(number(lx, lx.next(), a.text, 0, 0xFFFF));
    if (w.dim_mask >> d & 1u) {
      if (w.dim_repeats == 255) lx.fail(a.at, "too many B.DIM bindings");
      ++w.dim_repeats;
      continue;
    }
    w.dim_mask = static_cast<std::uint8_t>(w.dim_mask | (1u << d));
    if (d == 0) w.lb0 = v;
    if (d == 1) w.lb1 = v;
    if (d == 2) w.lb2 = v;
  } while (lx.accept(","));
  end_of(lx, "B.DIM");
}

// B.IOR rM, rZ[, rS2[, rD]]: the first sets the GPRs.
void parse_ior(Lexer& lx, const Tok& k, TquantBlock& w) {
  if (w.ior_count == 255) lx.fail(k.at, "too many B.IOR");
  const bool first = w.ior_count++ == 0;
  std::uint8_t r[4] = {0, 0, 0, 0};
  unsigned n = 0;
  do {
    if (n == 4) lx.fail(lx.peek().at, "B.IOR takes at most four GPRs (RegSrc0..2, RegDst)");
    r[n++] = static_cast<std::uint8_t>(
        indexed(lx, lx.next(), 'r', kNumEngineRegs - 1, "a GPR of B.IOR"));
  } while (lx.accept(","));
  end_of(lx, "B.IOR");
  if (n < 2) lx.fail(lx.end_pos(), "B.IOR needs two GPRs: multiplier, zero point");
  if (first) {
    w.reg_src0 = r[0];
    w.reg_src1 = r[1];
    w.reg_src2 = r[2];
    w.reg_dst = r[3];
  }
}

// One operand of B.IOT: <last>, ->Tn<TSize>, mask=BITS or a source tile Tn.
void parse_iot_operand(Lexer& lx, TquantBlock& t, bool& mask_seen) {
  const Tok a = lx.peek();
  if (lx.accept("<")) {
    const Tok l = lx.next();
    if (l.kind != Tok::Ident || !iequal(l.text, "last"))
      lx.fail(l.at, "expected <last>, found " + lx.describe(l));
    lx.expect(">", "after <last");
    if (t.last) lx.fail(a.at, "duplicate <last>");
    t.last = 1;
  } else if (lx.accept("->")) {
    const auto d =
        static_cast<std::uint8_t>(indexed(lx, lx.next(), 't', 255, "a destination tile"));
    lx.expect("<", "before the destination TSize (->Tn<TSize>)");
    const auto n = static_cast<std::uint16_t>(number(lx, lx.next(), "TSize", 0, 0xFFFF));
    lx.expect(">", "after the destination TSize");
    if (t.dst_count == 255) lx.fail(a.at, "too many destinations");
    if (t.dst_count == 0) {
      t.dst_tile = d;
      t.tsize = n;
    } else if (t.dst_count == 1) {
      if (n > 255) lx.fail(a.at, "a second destination's TSize is at most 255");
      t.dst2_tile = d;
      t.dst2_tsize = static_cast<std::uint8_t>(n);
    }
    ++t.dst_count;
  } else if (a.kind == Tok::Ident && iequal(a.text, "mask")) {
    lx.next();
    lx.expect("=", "after mask");
    if (mask_seen) lx.fail(a.at, "duplicate mask");
    mask_seen = true;
    t.mask = static_cast<std::uint16_t>(number(lx, lx.next(), "PE_MASK", 0, 0xFFFF, true));
  } else {
    const auto src = static_cast<std::uint8_t>(indexed(lx, lx.next(), 't', 255, "a source tile"));
    if (t.src_count == 255) lx.fail(a.at, "too many sources");
    if (t.src_count == 0) t.src_tile = src;
    if (t.src_count == 1) t.src2_tile = src;
    ++t.src_count;
  }
}

// B.IOT operands...: the first sets the tiles (a second is parsed for its
// syntax only: it is illegal and counted).
void parse_iot(Lexer& lx, const Tok& k, TquantBlock& w) {
  if (w.iot_count == 255) lx.fail(k.at, "too many B.IOT");
  const bool first = w.iot_count++ == 0;
  TquantBlock t = first ? w : TquantBlock{};
  bool mask_seen = false;
  if (lx.peek().kind != Tok::End) do
      parse_iot_operand(lx, t, mask_seen);
    while (lx.accept(","));
  end_of(lx, "B.IOT");
  if (first) {
    t.iot_count = w.iot_count;
    w = t;
  }
}

// BSTART.SFU TQUANT, DataType: the block's first statement.
void parse_bstart(Lexer& lx, const Tok& k, TquantBlock& w) {
  const std::string& kw = k.text;
  if (kw.size() < 6 || !iequal(kw.substr(0, 6), "BSTART"))
    lx.fail(k.at, "a TQUANT block starts with BSTART.SFU, found " + lx.describe(k));
  if (!iequal(kw, "BSTART.SFU"))
    lx.fail(k.at, "'" + kw + "': TQUANT blocks are written BSTART.SFU (seed 002)");
  const Tok op = lx.next();
  if (op.kind != Tok::Ident || !iequal(op.text, "TQUANT"))
    lx.fail(op.at, "unknown block operation " + lx.describe(op) + " (TQUANT)");
  lx.expect(",", "after TQUANT");
  w.src_dtype = tile_type(lx, "BSTART DataType");
  end_of(lx, "BSTART");
}

}  // namespace

bool starts_tquant_block(std::string_view s) {
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.size() - b >= 6 && iequal(s.substr(b, 6), "BSTART");
}

TquantBlockBuilder::TquantBlockBuilder() {
  w_.header = Header{static_cast<std::uint8_t>(Opcode::Tquant), kInstWordLen, 0, 0};
  w_.selector = kTquantSelector;
  w_.mode = kTquantMode;
  w_.function = kTquantFunction;
}

bool TquantBlockBuilder::add(std::string_view statement, const SourceLoc& loc) {
  const AsmLine line = AsmLine::of(statement, loc);
  return add(line, 0, line.text.size(), loc.file);
}

bool TquantBlockBuilder::add(const AsmLine& line, std::size_t begin, std::size_t end,
                             const std::string& file) {
  Lexer lx(line, begin, file, Dialect::Block, end);
  const Tok k = lx.next();
  if (k.kind == Tok::End) return false;
  if (k.kind != Tok::Ident)
    lx.fail(k.at,
            "expected a block statement (BSTART, B.DATR, B.DIM, B.IOR, B.IOS, B.IOT, "
            "BSTOP), found " +
                lx.describe(k));
  if (done_) lx.fail(k.at, "statement after BSTOP");
  const std::string& kw = k.text;
  if (!started_) {
    parse_bstart(lx, k, w_);
    started_ = true;
    raw_ = encode(w_);
    return false;
  }
  if (iequal(kw, "BSTOP")) {
    bstop_events(lx, w_.events);
    end_of(lx, "BSTOP");
    done_ = true;
  } else if (iequal(kw, "BSTART") || (kw.size() > 6 && iequal(kw.substr(0, 7), "BSTART."))) {
    lx.fail(k.at, "BSTART inside a block (the previous block has no BSTOP)");
  } else if (iequal(kw, "B.DATR")) {
    parse_datr(lx, k, w_);
  } else if (iequal(kw, "B.DIM")) {
    parse_dim(lx, w_);
  } else if (iequal(kw, "B.IOR")) {
    parse_ior(lx, k, w_);
  } else if (iequal(kw, "B.IOS")) {
    if (w_.ios_count == 255) lx.fail(k.at, "too many B.IOS");
    ++w_.ios_count;  // its operands are not interpreted: B.IOS is illegal in TQUANT
  } else if (iequal(kw, "B.IOT")) {
    parse_iot(lx, k, w_);
  } else {
    lx.fail(k.at,
            "unknown block statement '" + kw + "' (B.DATR, B.DIM, B.IOR, B.IOS, B.IOT, BSTOP)");
  }
  raw_ = encode(w_);
  return done_;
}

RawInst assemble_tquant_block(std::string_view text, const SourceLoc& loc) {
  TquantBlockBuilder b;
  const AsmLine line = AsmLine::of(text, loc);
  std::size_t start = 0;
  for (;;) {
    const std::size_t semi = text.find(';', start);
    const std::size_t end = semi == std::string_view::npos ? text.size() : semi;
    if (b.done()) {
      std::size_t p = start;
      while (p < end && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
      if (p < end) throw AsmError(Lexer(line, p, loc.file).loc(p), "statement after BSTOP");
    } else {
      b.add(line, start, end, loc.file);
    }
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  if (!b.done()) throw AsmError(loc, "TQUANT block without BSTOP");
  return b.word();
}

std::string disassemble_tquant_block(const RawInst& raw) {
  if (raw[0] != static_cast<std::uint8_t>(Opcode::Tquant)) return {};
  const auto w = decode_as<TquantBlock>(raw);
  auto dtype = [](std::uint8_t t) {
    const auto n = tile_dtype_name(t);
    return n.empty() ? std::to_string(t) : std::string(n);
  };
  std::string s = "BSTART.SFU TQUANT, " + dtype(w.src_dtype);
  for (unsigned i = 0; i < w.datr_count; ++i) {
    s += "; B.DATR " + dtype(w.dst_dtype) + ", " +
         (!rmode_names().name(w.rmode).empty() ? std::string(rmode_names().name(w.rmode))
                                               : "RMode=" + std::to_string(w.rmode)) +
         ", Sat=" + std::to_string(w.sat);
    if (w.canonicalize) s += ", Canonicalize=" + std::to_string(w.canonicalize);
    if (w.layout) s += ", Layout=" + std::to_string(w.layout);
    if (w.cmode) s += ", CMode=" + std::to_string(w.cmode);
    if (w.pad_value) s += ", PadValue=" + std::to_string(w.pad_value);
  }
  const std::uint16_t lb[3] = {w.lb0, w.lb1, w.lb2};
  unsigned first_dim = 8;
  for (unsigned d = 0; d < 8; ++d)
    if (w.dim_mask >> d & 1u) {
      if (first_dim == 8) first_dim = d;
      s += "; B.DIM LB" + std::to_string(d) + "=" + std::to_string(d < 3 ? lb[d] : 0);
    }
  for (unsigned i = 0; i < w.dim_repeats && first_dim < 8; ++i)
    s += "; B.DIM LB" + std::to_string(first_dim) + "=0";
  for (unsigned i = 0; i < w.ior_count; ++i) {
    s += "; B.IOR r" + std::to_string(w.reg_src0) + ", r" + std::to_string(w.reg_src1);
    if (w.reg_src2 || w.reg_dst) s += ", r" + std::to_string(w.reg_src2);
    if (w.reg_dst) s += ", r" + std::to_string(w.reg_dst);
  }
  for (unsigned i = 0; i < w.ios_count; ++i) s += "; B.IOS";
  for (unsigned i = 0; i < w.iot_count; ++i) {
    std::vector<std::string> items;
    for (unsigned k = 0; k < w.src_count; ++k)
      items.push_back("T" + std::to_string(k == 0 ? w.src_tile : w.src2_tile));
    items.push_back("mask=" + bits(w.mask));
    if (w.last) items.push_back("<last>");
    for (unsigned k = 0; k < w.dst_count; ++k)
      items.push_back(
          k == 0 ? "->T" + std::to_string(w.dst_tile) + "<" + std::to_string(w.tsize) + ">"
                 : "->T" + std::to_string(w.dst2_tile) + "<" + std::to_string(w.dst2_tsize) + ">");
    s += "; B.IOT";
    for (std::size_t k = 0; k < items.size(); ++k) s += (k ? ", " : " ") + items[k];
  }
  s += "; BSTOP";
  const Events& ev = w.events;
  if (const auto wm = wait_mode_names().name(ev.wait_mode); !wm.empty())
    s += " wait=" + std::string(wm) + "(sem" + std::to_string(ev.wait_idx) + ", " +
         std::to_string(ev.sem_value) + ")";
  if (const auto um = update_mode_names().name(ev.update_mode); !um.empty())
    s += " update=" + std::string(um) + "(sem" + std::to_string(ev.update_idx) +
         (ev.update_mode == kUpdateSet ? ", " + std::to_string(ev.sem_value) : std::string()) + ")";
  try {
    if (assemble_tquant_block(s, SourceLoc{"", 1, 1}) == raw) return s;
  } catch (const AsmError&) {
  }
  return {};
}

}  // namespace tpb::isa

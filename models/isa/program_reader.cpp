// The program reader (SPEC §9, docs/ASM.md): program text, line by line,
// into a ProgramSink (directives here, statements through the encoder and
// the TQUANT block builder), raw binaries, and the choice between the two.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <istream>
#include <memory>
#include <new>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "models/isa/asm.h"
#include "models/isa/asm_fields.h"
#include "models/isa/input_file.h"
#include "models/isa/lexer.h"
#include "models/isa/names.h"
#include "models/isa/program.h"
#include "models/isa/tquant_block.h"

namespace tpb::isa {
namespace {

using namespace asm_detail;

// What a file's first bytes are (docs/ASM.md "Binaries and engines").
struct Kind {
  enum What { Text, NotUtf8, Control } what = Text;
  std::size_t offset = 0;  // Control: where the first control character is
  std::uint8_t byte = 0;
};

// Program text is strict UTF-8 (no NUL, no overlongs or surrogates) without
// control characters other than tab, line feed and carriage return.
// `prefix`: b is the start of a longer file, so a sequence cut at its end is
// not an error.
Kind classify(const std::vector<std::uint8_t>& b, bool prefix = false) {
  Kind control;
  std::size_t i = 0;
  while (i < b.size()) {
    const std::uint8_t c = b[i];
    if (c == 0) return {Kind::NotUtf8};
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
        if (control.what == Kind::Text) control = Kind{Kind::Control, i, c};
      }
      ++i;
      continue;
    }
    unsigned n;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return {Kind::NotUtf8};
    }
    for (unsigned k = 1; k <= n; ++k) {
      if (i + k >= b.size()) return prefix ? control : Kind{Kind::NotUtf8};
      if ((b[i + k] & 0xC0) != 0x80) return {Kind::NotUtf8};
      cp = (cp << 6) | (b[i + k] & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {Kind::NotUtf8};
    i += n + 1;
  }
  return control;
}

// Text, or a binary (true); throws when the file is neither.
bool is_binary(const std::string& path, const std::vector<std::uint8_t>& head, bool whole,
               std::uint64_t size) {
  const Kind k = classify(head, !whole);
  if (k.what == Kind::Text) return false;
  if (k.what == Kind::Control) {
    // UTF-8 without NUL but with a control character: a text file with a
    // stray byte or a binary whose bytes are all ASCII. Neither is guessed.
    char b[8];
    std::snprintf(b, sizeof b, "0x%02x", k.byte);
    throw std::runtime_error(printable(path) + ": not program text (control character " + b +
                             " at byte " + std::to_string(k.offset) +
                             ") and not taken for a binary: a binary's name ends in .bin");
  }
  if (whole && size % kInstBytes != 0)
    throw std::runtime_error(printable(path) + ": neither UTF-8 program text nor a binary (size " +
                             std::to_string(size) + " bytes is not a multiple of 64)");
  return true;
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Reads logical lines from a stream: comments removed, trailing-backslash
// continuations joined (with one space), each character keeping its position.
// Holds one logical line at a time, so a program of any length streams; a
// line longer than kMaxProgramLineBytes is an error, not an allocation that
// fails under a memory limit.
class LineReader {
 public:
  LineReader(std::istream& in, const std::string& path) : in_(in), path_(path) {}
  // The next logical line; false at the end of the input.
  bool next(AsmLine& cur) {
    cur.text.clear();
    cur.segs.clear();
    bool any = false;
    while (get_line()) {
      any = true;
      std::string_view v(phys_);
      if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
      const std::size_t hash = v.find('#');
      if (hash != std::string_view::npos) v = v.substr(0, hash);
      std::size_t len = v.size();
      while (len && std::isspace(static_cast<unsigned char>(v[len - 1]))) --len;
      const bool cont = len && v[len - 1] == '\\';
      if (cont) --len;
      if (cur.text.size() + len + 1 > kMaxProgramLineBytes)
        too_long(cur.segs.empty() ? line_no_ : cur.segs[0].line);
      if (!cur.segs.empty())
        cur.text += ' ';  // the joining space sits at column 0 of the next line
      cur.segs.push_back(Segment{cur.text.size(), line_no_, 1});
      cur.text.append(v.data(), len);
      if (!cont || in_.eof()) return true;
    }
    return any && !cur.segs.empty();
  }

 private:
  [[noreturn]] void too_long(int line) const {
    throw AsmError(SourceLoc{path_, line, 1},
                   "line is longer than " + std::to_string(kMaxProgramLineBytes) +
                       " bytes, the most one line of program text may hold (is this a program?)");
  }
  // One physical line into phys_, without its '\n'; false at the end.
  bool get_line() {
    phys_.clear();
    bool any = false;
    char buf[8192];
    try {
      for (;;) {
        in_.get(buf, sizeof buf, '\n');
        const auto n = static_cast<std::size_t>(in_.gcount());
        if (in_.bad()) read_error();
        if (n) {
          if (!any) ++line_no_;
          any = true;
          if (phys_.size() + n > kMaxProgramLineBytes) too_long(line_no_);
          phys_.append(buf, n);
        }
        if (in_.eof()) return any;
        if (in_.fail()) in_.clear();  // nothing stored: the next character is '\n'
        if (in_.peek() == '\n') {
          in_.ignore();
          if (!any) ++line_no_;
          return true;
        }
        if (in_.bad()) read_error();
      }
    } catch (const std::bad_alloc&) {
      const std::size_t got = phys_.size();
      std::string().swap(phys_);
      throw AsmError(SourceLoc{path_, line_no_, 1},
                     "out of memory after reading " + std::to_string(got) +
                         " bytes of this line (the machine, or a memory limit such as ulimit -v, "
                         "allows no more)");
    }
  }
  [[noreturn]] void read_error() const {
    throw std::runtime_error(printable(path_) + ": read error after line " +
                             std::to_string(line_no_) + " (" + std::strerror(errno) + ")");
  }

  std::istream& in_;
  const std::string& path_;
  std::string phys_;
  int line_no_ = 0;
};

// `.engine NAME`: a compute engine or a DMA queue.
Queue want_queue(Lexer& lx, const Tok& t) {
  const char* names = "pool, dve, pe, sfu, dma0 .. dma15";
  if (t.kind == Tok::Ident) {
    if (auto e = parse_queue(t.text.c_str())) return *e;
    lx.fail(t.at, "unknown engine '" + t.text + "' (" + names + ")");
  }
  lx.fail(t.at, std::string("expected an engine name (") + names + "), found " + lx.describe(t));
}

// `.reg ENGINE`: the engines with registers (a DMA queue has none).
Queue want_engine(Lexer& lx, const Tok& t) {
  const std::string names = engine_names().list();  // "pool, dve, pe, sfu"
  if (t.kind == Tok::Ident) {
    if (auto e = parse_engine(t.text.c_str())) return *e;
    if (parse_queue(t.text.c_str()))
      lx.fail(t.at, "engine '" + t.text + "' is a DMA queue, which has no registers (" + names +
                        " have)");
    lx.fail(t.at, "unknown engine '" + t.text + "' (" + names + ")");
  }
  lx.fail(t.at, "expected an engine name (" + names + "), found " + lx.describe(t));
}

void expect_end(Lexer& lx, const char* what) {
  const Tok t = lx.peek();
  if (t.kind != Tok::End)
    lx.fail(t.at, std::string("unexpected ") + lx.describe(t) + " after " + what);
}

}  // namespace

Queue binary_queue(const RawInst& raw, const std::string& /*path*/, std::uint64_t /*word*/) {
  return word_queue(raw);
}

namespace {

// What the directives set: the program's .arch, the queue of what follows.
struct ReaderState {
  std::optional<Arch> arch;
  Queue engine = Queue::Pool;
};

// An open TQUANT block: its statements (separated by ';' or line ends) may
// span lines; the word goes to the SFU queue at BSTOP.
struct OpenBlock {
  std::optional<TquantBlockBuilder> builder;
  SourceLoc loc;
  explicit operator bool() const { return builder.has_value(); }
};

// The block statements of `line` from b on.
void block_statements(const AsmLine& line, std::size_t b, const std::string& path, Lexer& lx,
                      OpenBlock& block, ProgramSink& sink) {
  std::size_t start = b;
  for (;;) {
    const std::size_t semi = line.text.find(';', start);
    const std::size_t end = semi == std::string::npos ? line.text.size() : semi;
    std::size_t p = start;
    while (p < end && std::isspace(static_cast<unsigned char>(line.text[p]))) ++p;
    if (p < end) {
      if (!block) {
        if (!starts_tquant_block(std::string_view(line.text).substr(p, end - p)))
          lx.fail(p, "statement after BSTOP on the same line");
        block.builder.emplace();
        block.loc = lx.loc(p);
      }
      if (block.builder->add(line, p, end, path)) {
        sink.inst(Queue::Sfu, block.builder->word(), block.loc);
        block.builder.reset();
      }
    }
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
}

// .reg ENGINE rN = VALUE (the lexer past the directive).
void reg_directive(Lexer& lx, std::size_t b, ProgramSink& sink) {
  const Queue e = want_engine(lx, lx.next());
  const unsigned idx = want_register(lx, lx.next(), ".reg");
  lx.expect('=', "in .reg ENGINE rN = VALUE");
  const Tok v = lx.next();
  if (v.kind != Tok::Num)
    lx.fail(v.at, "expected a number for the .reg value, found " + lx.describe(v));
  if (v.num < -2147483648ll || v.num > 0xFFFFFFFFll)
    lx.fail(v.at, "value " + v.text + " out of range for a 32-bit register");
  sink.reg(RegInit{e, idx, static_cast<std::uint32_t>(v.num), lx.loc(b)});
  expect_end(lx, ".reg ENGINE rN = VALUE");
}

// The directive at b: .raw, .engine, .arch or .reg.
void directive(const AsmLine& line, std::size_t b, Lexer& lx, ReaderState& st, ProgramSink& sink) {
  std::size_t q = b + 1;
  while (q < line.text.size() && std::isalnum(static_cast<unsigned char>(line.text[q]))) ++q;
  const std::string dir = line.text.substr(b, q - b);
  lx.set_pos(q);
  if (dir == ".raw") {
    const auto bytes = lx.hex_bytes('\0');
    if (bytes.size() != kInstBytes)
      lx.fail(q, ".raw needs 64 bytes (128 hex digits), got " + std::to_string(bytes.size()));
    RawInst raw;
    std::copy(bytes.begin(), bytes.end(), raw.begin());
    sink.inst(st.engine, raw, lx.loc(b));
  } else if (dir == ".engine") {
    st.engine = want_queue(lx, lx.next());
    expect_end(lx, ".engine NAME");
  } else if (dir == ".arch") {
    const Tok t = lx.next();
    Arch a;
    if (t.kind != Tok::Ident || !parse_arch(t.text, a))
      lx.fail(t.at, "unknown arch " + lx.describe(t) + " (" + arch_list() + ")");
    if (st.arch && *st.arch != a)
      lx.fail(t.at, "conflicting .arch: already " + std::string(arch_name(*st.arch)));
    if (!st.arch) sink.arch(a, lx.loc(b));
    st.arch = a;
    expect_end(lx, ".arch NAME");
  } else if (dir == ".reg") {
    reg_directive(lx, b, sink);
  } else {
    lx.fail(b, "unknown directive '" + dir + "' (.arch, .engine, .raw, .reg)");
  }
}

}  // namespace

void parse_program_stream(std::istream& in, const std::string& path, ProgramSink& sink) {
  ReaderState state;
  Queue& engine = state.engine;
  OpenBlock block;
  LineReader reader(in, path);
  AsmLine line;
  while (reader.next(line)) {
    std::size_t b = 0;
    while (b < line.text.size() && std::isspace(static_cast<unsigned char>(line.text[b]))) ++b;
    if (b == line.text.size()) continue;
    Lexer lx(line, b, path);
    if (block || starts_tquant_block(std::string_view(line.text).substr(b))) {
      if (line.text[b] == '.') lx.fail(b, "directive inside a TQUANT block (no BSTOP yet)");
      block_statements(line, b, path, lx, block, sink);
    } else if (line.text[b] != '.') {
      const RawInst raw = assemble(lx, engine);
      sink.inst(engine, raw, lx.loc(b));
    } else {
      directive(line, b, lx, state, sink);
    }
  }
  if (block) throw AsmError(block.loc, "TQUANT block without BSTOP");
}

Program parse_program(std::string_view text, const std::string& path) {
  ProgramBuilder b(path);
  std::istringstream in{std::string(text)};
  parse_program_stream(in, path, b);
  return b.take();
}

Program parse_binary(const std::vector<std::uint8_t>& bytes, const std::string& path) {
  if (bytes.size() % kInstBytes != 0)
    throw std::runtime_error(printable(path) + ": size " + std::to_string(bytes.size()) +
                             " bytes is not a multiple of 64 (one instruction word)");
  Program p;
  p.path = path;
  for (std::size_t off = 0; off < bytes.size(); off += kInstBytes) {
    ProgramInst pi;
    std::copy(bytes.begin() + static_cast<long>(off),
              bytes.begin() + static_cast<long>(off + kInstBytes), pi.raw.begin());
    pi.loc = SourceLoc{path, 0, 0};
    p.queues[static_cast<unsigned>(binary_queue(pi.raw, path, off / kInstBytes))].push_back(pi);
  }
  return p;
}

Program load_program(const std::string& path) {
  std::string text;
  if (is_pipe_input(path)) {
    // From the pipe's one copy (an empty pipe is refused there).
    const std::unique_ptr<std::istream> in = open_program_input(path);
    char buf[65536];
    while (*in) {
      in->read(buf, sizeof buf);
      const auto n = static_cast<std::size_t>(in->gcount());
      if (text.size() + n > kMaxProgramFileBytes)
        throw std::runtime_error(printable(path) + ": is larger than " +
                                 std::to_string(kMaxProgramFileBytes) +
                                 " bytes, the most a program file may hold");
      text.append(buf, n);
    }
  } else if (const std::string why =
                 read_input_file(path, kMaxProgramFileBytes, "a program file", text);
             !why.empty()) {
    throw std::runtime_error(printable(path) + ": " + why);
  }
  const std::vector<std::uint8_t> bytes(text.begin(), text.end());
  if (ends_with(path, ".bin") || is_binary(path, bytes, true, bytes.size()))
    return parse_binary(bytes, path);
  return parse_program(text, path);
}

void stream_program(const std::string& path, ProgramSink& sink) {
  // A regular file is read by its path; a pipe from its one copy (so a
  // second pass, and the rewind after the probe, see the whole program).
  const std::unique_ptr<std::istream> input = open_program_input(path);
  std::istream& in = *input;
  // Text or binary from the first 64 KiB (the whole file when it is smaller,
  // so the decision is load_program's).
  constexpr std::size_t kProbe = 64 * 1024;
  std::vector<std::uint8_t> head(kProbe);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(kProbe));
  if (in.bad()) throw std::runtime_error("cannot read " + printable(path));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const bool whole = head.size() < kProbe;
  const bool binary = ends_with(path, ".bin") || is_binary(path, head, whole, head.size());
  in.clear();
  in.seekg(0);
  if (!in)
    throw std::runtime_error(printable(path) +
                             ": cannot read it again from its start (not a file, not a pipe?)");
  if (!binary) {
    parse_program_stream(in, path, sink);
    return;
  }
  const SourceLoc loc{path, 0, 0};
  std::vector<std::uint8_t> buf(kInstBytes * 4096);
  std::uint64_t total = 0;
  for (;;) {
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    if (in.bad()) throw std::runtime_error("cannot read " + printable(path));
    const auto got = static_cast<std::size_t>(in.gcount());
    total += got;
    if (got % kInstBytes != 0)
      throw std::runtime_error(printable(path) + ": size " + std::to_string(total) +
                               " bytes is not a multiple of 64 (one instruction word)");
    for (std::size_t off = 0; off < got; off += kInstBytes) {
      RawInst raw;
      std::memcpy(raw.data(), buf.data() + off, kInstBytes);
      sink.inst(binary_queue(raw, path, (total - got + off) / kInstBytes), raw, loc);
    }
    if (got < buf.size()) break;
  }
}

}  // namespace tpb::isa

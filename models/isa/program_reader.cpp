// The program reader (SPEC §9, docs/ASM.md): program text, line by line,
// into a ProgramSink (directives here, statements through the encoder and
// the TQUANT block builder), raw binaries, and the choice between the two.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <sstream>
#include <stdexcept>

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

// Strict UTF-8 check (no NUL, no overlongs or surrogates): program text is
// UTF-8, anything else is taken for a binary.
// `prefix`: b is the start of a longer file, so a sequence cut at its end is
// not an error.
bool is_utf8_text(const std::vector<std::uint8_t>& b, bool prefix = false) {
  std::size_t i = 0;
  while (i < b.size()) {
    const std::uint8_t c = b[i];
    if (c == 0) return false;
    if (c < 0x80) {
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
      return false;
    }
    for (unsigned k = 1; k <= n; ++k) {
      if (i + k >= b.size()) return prefix;
      if ((b[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b[i + k] & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

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
  const std::string names = engine_names().list();  // "pool, dve, pe, sfu"
  if (t.kind == Tok::Ident) {
    if (auto e = parse_engine(t.text.c_str())) return *e;
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
          if (!block) {
            if (!starts_tquant_block(std::string_view(line.text).substr(p, end - p)))
              lx.fail(p, "statement after BSTOP on the same line");
            block.emplace();
            block_loc = lx.loc(p);
          }
          if (block->add(line, p, end, path)) {
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
      const auto bytes = lx.hex_bytes('\0');
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
        lx.fail(t.at, "unknown arch " + lx.describe(t) + " (" + arch_list() + ")");
      if (arch && *arch != a)
        lx.fail(t.at, "conflicting .arch: already " + std::string(arch_name(*arch)));
      if (!arch) sink.arch(a, lx.loc(b));
      arch = a;
      expect_end(lx, ".arch NAME");
    } else if (dir == ".reg") {
      // .reg ENGINE rN = VALUE
      const Engine e = want_engine(lx, lx.next());
      const unsigned idx = want_register(lx, lx.next(), ".reg");
      lx.expect('=', "in .reg ENGINE rN = VALUE");
      const Tok v = lx.next();
      if (v.kind != Tok::Num)
        lx.fail(v.at, "expected a number for the .reg value, found " + lx.describe(v));
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

Program parse_binary(const std::vector<std::uint8_t>& bytes, const std::string& path) {
  if (bytes.size() % kInstBytes != 0)
    throw std::runtime_error(path + ": size " + std::to_string(bytes.size()) +
                             " bytes is not a multiple of 64 (one instruction word)");
  Program p;
  p.path = path;
  for (std::size_t off = 0; off < bytes.size(); off += kInstBytes) {
    ProgramInst pi;
    std::copy(bytes.begin() + static_cast<long>(off),
              bytes.begin() + static_cast<long>(off + kInstBytes), pi.raw.begin());
    pi.loc = SourceLoc{path, 0, 0};
    p.queues[static_cast<unsigned>(home_engine(pi.raw[0]))].push_back(pi);
  }
  return p;
}

Program load_program(const std::string& path) {
  std::string text;
  if (const std::string why = read_input_file(path, kMaxProgramFileBytes, "a program file", text);
      !why.empty())
    throw std::runtime_error(path + ": " + why);
  const std::vector<std::uint8_t> bytes(text.begin(), text.end());
  if (ends_with(path, ".bin")) return parse_binary(bytes, path);
  if (!is_utf8_text(bytes)) {
    if (bytes.size() % kInstBytes != 0)
      throw std::runtime_error(path + ": neither UTF-8 program text nor a binary (size " +
                               std::to_string(bytes.size()) + " bytes is not a multiple of 64)");
    return parse_binary(bytes, path);
  }
  return parse_program(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                       path);
}

void stream_program(const std::string& path, ProgramSink& sink) {
  if (const std::string why = input_file_problem(path); !why.empty())
    throw std::runtime_error(path + ": " + why);
  // A program of any length streams, so an endless device would never end:
  // files and pipes only.
  std::error_code ec;
  if (std::filesystem::is_character_file(path, ec))
    throw std::runtime_error(path + ": is a device, not a program file (a file or a pipe)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  // Text or binary from the first 64 KiB (the whole file when it is smaller,
  // so the decision is load_program's).
  constexpr std::size_t kProbe = 64 * 1024;
  std::vector<std::uint8_t> head(kProbe);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(kProbe));
  if (in.bad()) throw std::runtime_error("cannot read " + path);
  head.resize(static_cast<std::size_t>(in.gcount()));
  const bool whole = head.size() < kProbe;
  bool binary = ends_with(path, ".bin");
  if (!binary && !is_utf8_text(head, !whole)) {
    if (whole && head.size() % kInstBytes != 0)
      throw std::runtime_error(path + ": neither UTF-8 program text nor a binary (size " +
                               std::to_string(head.size()) + " bytes is not a multiple of 64)");
    binary = true;
  }
  in.clear();
  in.seekg(0);
  if (!binary) {
    parse_program_stream(in, path, sink);
    return;
  }
  const SourceLoc loc{path, 0, 0};
  std::vector<std::uint8_t> buf(kInstBytes * 4096);
  std::uint64_t total = 0;
  for (;;) {
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    if (in.bad()) throw std::runtime_error("cannot read " + path);
    const auto got = static_cast<std::size_t>(in.gcount());
    total += got;
    if (got % kInstBytes != 0)
      throw std::runtime_error(path + ": size " + std::to_string(total) +
                               " bytes is not a multiple of 64 (one instruction word)");
    for (std::size_t off = 0; off < got; off += kInstBytes) {
      RawInst raw;
      std::memcpy(raw.data(), buf.data() + off, kInstBytes);
      sink.inst(home_engine(raw[0]), raw, loc);
    }
    if (got < buf.size()) break;
  }
}

}  // namespace tpb::isa

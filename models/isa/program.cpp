// Programs: binary input, file loading, disassembly of a whole program and
// the home engine of each opcode (its opcode-table row). The text parser is
// in asm.cpp.
#include "models/isa/program.h"
#include "models/isa/input_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "models/isa/asm.h"
#include "models/isa/opcode_table.h"

namespace tpb::isa {

namespace {

std::string where(const SourceLoc& loc) {
  std::string s = loc.file;
  if (loc.line > 0) s += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  return s;
}

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

// The queue a binary word goes to: its opcode's home engine, when the core
// has a sequencer for it (a DMA descriptor's home, a DMA queue, has none).
Engine binary_queue(const RawInst& raw, const std::string& path, std::uint64_t word) {
  const Engine e = home_engine(raw[0]);
  if (static_cast<unsigned>(e) >= kNumEngines)
    throw std::runtime_error(fmt::format(
        "{}: word {}: opcode 0x{:02x} ({}) runs on {}, which has no instruction queue in this core",
        path, word, raw[0], opcode_mnemonic(raw[0]), engine_name(e)));
  return e;
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

std::size_t Program::size() const {
  std::size_t n = 0;
  for (const auto& q : queues) n += q.size();
  return n;
}

AsmError::AsmError(SourceLoc loc, const std::string& message)
    : std::runtime_error(where(loc) + ": " + message), loc_(std::move(loc)), message_(message) {}

Engine home_engine(std::uint8_t opcode) {
  const OpcodeInfo* row = opcode_info(opcode);
  return row ? row->home : Engine::Pool;  // convention: unknown opcodes go to POOL
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
    p.queues[static_cast<unsigned>(binary_queue(pi.raw, path, off / kInstBytes))].push_back(pi);
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
      sink.inst(binary_queue(raw, path, (total - got + off) / kInstBytes), raw, loc);
    }
    if (got < buf.size()) break;
  }
}

std::string disassemble_inst(const RawInst& raw) {
  std::string s = disassemble_mnemonic(raw);
  if (!s.empty()) return s;
  s = ".raw";
  static const char* kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < kInstBytes; ++i) {
    s += ' ';
    s += kHex[raw[i] >> 4];
    s += kHex[raw[i] & 0xF];
  }
  return s;
}

std::string disassemble(const Program& p) {
  std::string out;
  if (!p.path.empty()) out += "# disassembled from " + p.path + "\n";
  if (p.arch) out += ".arch " + std::string(arch_name(*p.arch)) + "\n";
  for (const auto& r : p.regs) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%x", r.value);
    out += ".reg " + std::string(engine_name(r.engine)) + " r" + std::to_string(r.reg) + " = " +
           buf + "\n";
  }
  for (unsigned e = 0; e < kNumEngines; ++e) {
    if (p.queues[e].empty()) continue;
    out += ".engine " + std::string(engine_name(static_cast<Engine>(e))) + "\n";
    for (const auto& inst : p.queues[e]) out += disassemble_inst(inst.raw) + "\n";
  }
  return out;
}

std::vector<std::uint8_t> to_binary(const Program& p) {
  std::vector<std::uint8_t> out;
  out.reserve(p.size() * kInstBytes);
  for (const auto& q : p.queues)
    for (const auto& inst : q) out.insert(out.end(), inst.raw.begin(), inst.raw.end());
  return out;
}

}  // namespace tpb::isa

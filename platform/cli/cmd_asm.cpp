// `tpbsim asm` (program text -> raw 64-byte words) and `tpbsim disasm`
// (raw words or text -> program text), SPEC §9, docs/ASM.md.
#include <unistd.h>

#include <boost/program_options.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include "models/isa/asm.h"
#include "models/isa/input_file.h"
#include "models/isa/program.h"
#include "models/isa/program_spool.h"
#include "models/trace/trace_output.h"
#include "platform/cli/commands.h"
#include "platform/run/staged_outputs.h"

namespace po = boost::program_options;

namespace tpb::cli {
namespace {

struct Parsed {
  std::string input;
  std::string output;
  bool help = false;
};

// Parses `IN [-o OUT]`; returns false (after printing the error) on a usage error.
bool parse_in_out(const char* cmd, const Args& args, const po::options_description& visible,
                  Parsed& out) {
  po::options_description all;
  all.add(visible);
  all.add_options()("input", po::value<std::string>(&out.input));
  po::positional_options_description pos;
  pos.add("input", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
    out.help = vm.count("help") > 0;
  } catch (const po::error& e) {
    std::fprintf(stderr, "tpbsim %s: error: %s\n", cmd, e.what());
    return false;
  }
  if (!out.help && out.input.empty()) {
    std::fprintf(stderr, "tpbsim %s: error: missing input file (see tpbsim %s --help)\n", cmd, cmd);
    return false;
  }
  return true;
}

// Writes a file whole: to a staging file of its own (run::OutputFile),
// closed and checked, then renamed into place, so a full disk never leaves a
// half-written file reported as written. A device or a pipe (/dev/stdout) is
// written in place.
bool write_file(const char* cmd, const std::string& path,
                const std::function<bool(std::FILE*)>& write) {
  bool ok = false;
  int err = 0;
  std::string why;
  try {
    run::OutputFile out(path);
    // A staging file is new and empty: opened without O_TRUNC (open_output).
    std::FILE* f = nullptr;
    if (out.staged()) {
      const int fd = trace::open_output(out.write_path());
      f = fd < 0 ? nullptr : ::fdopen(fd, "wb");
      if (fd >= 0 && !f) ::close(fd);
    } else {
      f = std::fopen(out.write_path().c_str(), "ab");
    }
    err = errno;
    try {
      ok = f != nullptr && write(f);
      err = errno;
    } catch (const std::exception& e) {  // the program's words could not be read back
      why = e.what();
    }
    if (f && std::fclose(f) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (ok) out.commit();
  } catch (const run::OutputError& e) {
    ok = false;
    why = e.what();
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);
  }
  if (!ok)
    std::fprintf(stderr, "tpbsim %s: error: cannot write %s (%s); nothing written\n", cmd,
                 isa::printable(path).c_str(), why.empty() ? std::strerror(err) : why.c_str());
  return ok;
}
bool write_file(const char* cmd, const std::string& path, const void* data, std::size_t n) {
  return write_file(cmd, path, [&](std::FILE* f) { return std::fwrite(data, 1, n, f) == n; });
}

// -o naming the input (the same file by any path) would replace it: refused
// before anything is read.
bool names_input(const char* cmd, const Parsed& p) {
  std::error_code e1, e2;
  const std::filesystem::path a = std::filesystem::weakly_canonical(p.input, e1);
  const std::filesystem::path b = std::filesystem::weakly_canonical(p.output, e2);
  if (e1 || e2 ? p.input != p.output : a != b) return false;
  std::fprintf(stderr, "tpbsim %s: error: -o %s names the input; nothing written\n", cmd,
               isa::printable(p.output).c_str());
  return true;
}

}  // namespace

int cmd_asm(const Args& args) {
  po::options_description opts(
      "usage: tpbsim asm PROGRAM.tpb -o OUT.bin\n\n"
      "Assembles program text (docs/ASM.md) into raw 64-byte instruction words,\n"
      "queue by queue in engine order (pool, dve, pe, sfu, dma0..dma15). A binary sends\n"
      "each word to its opcode's home engine, a dma_copy to the DMA queue of its `queue`\n"
      "byte (the .engine it was written under). .arch and .reg lines are not part of a\n"
      "binary. Exit 0 ok, 1 usage, file or syntax error.\n\noptions");
  Parsed p;
  opts.add_options()("output,o", po::value<std::string>(&p.output), "output binary file")(
      "help,h", "this help");
  if (!parse_in_out("asm", args, opts, p)) return 1;
  if (p.help) {
    std::cout << opts;
    return 0;
  }
  if (p.output.empty()) {
    std::fprintf(stderr, "tpbsim asm: error: missing -o OUT.bin\n");
    return 1;
  }
  if (names_input("asm", p)) return 1;
  // Streamed: the text is read line by line into per-engine spools, so a
  // program of any length assembles in memory proportional to one line.
  std::unique_ptr<isa::SpooledProgram> prog;
  try {
    prog = isa::SpooledProgram::load(p.input);
  } catch (const isa::AsmError& e) {
    std::fprintf(stderr, "%s\n", isa::format_diagnostic(e).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim asm: error: %s\n", e.what());
    return 1;
  }
  if (!write_file("asm", p.output, [&](std::FILE* f) { return prog->write_binary(f); })) return 1;
  if (!prog->regs().empty() || prog->arch()) {
    std::string what = prog->arch() ? ".arch" : "";
    if (!prog->regs().empty())
      what += (what.empty() ? "" : " and ") + std::to_string(prog->regs().size()) + " .reg line(s)";
    std::fprintf(stderr, "tpbsim asm: note: %s not stored in %s (a binary holds words only)\n",
                 what.c_str(), isa::printable(p.output).c_str());
  }
  if (const std::uint64_t m = prog->misplaced())
    std::fprintf(stderr,
                 "tpbsim asm: note: %llu word(s) would run on another queue from %s than from "
                 "the text (a word under a queue that does not execute it, or a dma_copy whose "
                 "queue byte names another DMA queue; tpbsim check names each)\n",
                 static_cast<unsigned long long>(m), isa::printable(p.output).c_str());
  const std::uint64_t n = prog->size();
  std::printf("%s: %llu instruction(s), %llu bytes\n", isa::printable(p.output).c_str(),
              static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(n * isa::kInstBytes));
  return 0;
}

int cmd_disasm(const Args& args) {
  po::options_description opts(
      "usage: tpbsim disasm IN.bin [-o OUT.tpb]\n\n"
      "Disassembles raw 64-byte words (each sent to its opcode's home engine) or\n"
      "program text into program text: the mnemonic form for every word of a known\n"
      "opcode, .raw for the rest. `tpbsim asm` of the output gives back the same\n"
      "words. Writes to stdout unless -o is given. Exit 0 ok, 1 usage or file error.\n\n"
      "options");
  Parsed p;
  opts.add_options()("output,o", po::value<std::string>(&p.output),
                     "output text file (default stdout)")("help,h", "this help");
  if (!parse_in_out("disasm", args, opts, p)) return 1;
  if (p.help) {
    std::cout << opts;
    return 0;
  }
  if (!p.output.empty() && names_input("disasm", p)) return 1;
  std::string text;
  try {
    text = isa::disassemble(isa::load_program(p.input));
  } catch (const isa::AsmError& e) {
    std::fprintf(stderr, "%s\n", isa::format_diagnostic(e).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim disasm: error: %s\n", e.what());
    return 1;
  }
  if (p.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "tpbsim disasm: error: cannot write to stdout (%s)\n",
                   std::strerror(errno));
      return 1;
    }
    return 0;
  }
  return write_file("disasm", p.output, text.data(), text.size()) ? 0 : 1;
}

}  // namespace tpb::cli

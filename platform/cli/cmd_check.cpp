// `tpbsim check PROGRAM [--arch X]`: the validity report of every instruction,
// naming each failed predicate (SPEC §9). Exit 0 all valid, 2 any invalid,
// 1 usage, file or syntax error.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/asm.h"
#include "models/isa/checker.h"
#include "models/isa/input_file.h"
#include "models/isa/program.h"
#include "platform/cli/commands.h"

namespace po = boost::program_options;

namespace tpb::cli {
namespace {

struct Entry {
  isa::Engine engine;
  std::size_t index;  // position in the engine's queue
  const isa::ProgramInst* inst;
  std::size_t order;  // source line (text) or word index (binary)
};

std::string mnemonic_of(std::uint8_t opcode) {
  auto m = isa::asm_mnemonic(opcode);
  if (m.empty()) m = isa::opcode_mnemonic(opcode);
  if (!m.empty()) return std::string(m);
  char buf[16];
  std::snprintf(buf, sizeof buf, "opcode 0x%02x", opcode);
  return buf;
}

}  // namespace

int cmd_check(const Args& args) {
  po::options_description opts(
      "usage: tpbsim check PROGRAM [--arch sunda|cayman|mariana|maverick]\n\n"
      "Checks every instruction of PROGRAM (text or raw binary) against the validity\n"
      "contract of the generation (--arch, else the program's .arch, else mariana) and\n"
      "prints one line per instruction naming each failed predicate, then a summary.\n"
      "Exit 0 all valid, 2 any invalid, 1 usage, file or syntax error.\n\noptions");
  std::string input, arch_text;
  opts.add_options()("arch", po::value<std::string>(&arch_text), "generation")("help,h",
                                                                               "this help");
  po::options_description all;
  all.add(opts);
  all.add_options()("input", po::value<std::string>(&input));
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "tpbsim check: error: %s\n", e.what());
    return 1;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (input.empty()) {
    std::fprintf(stderr, "tpbsim check: error: missing PROGRAM (see tpbsim check --help)\n");
    return 1;
  }
  isa::Arch cli_arch{};
  if (!arch_text.empty() && !isa::parse_arch(arch_text, cli_arch)) {
    std::fprintf(stderr,
                 "tpbsim check: error: unknown --arch '%s' (sunda, cayman, mariana, maverick)\n",
                 arch_text.c_str());
    return 1;
  }

  isa::Program prog;
  try {
    prog = isa::load_program(input);
  } catch (const isa::AsmError& e) {
    std::fprintf(stderr, "%s\n", isa::format_diagnostic(e).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim check: error: %s\n", e.what());
    return 1;
  }
  const isa::Arch arch = !arch_text.empty() ? cli_arch : prog.arch.value_or(isa::Arch::Mariana);

  // Report in program order: source lines for text; for a binary, the word
  // order of the file (parse_binary keeps it within each home-engine queue).
  std::vector<Entry> entries;
  bool binary = false;
  for (unsigned e = 0; e < isa::kNumEngines; ++e)
    for (std::size_t i = 0; i < prog.queues[e].size(); ++i) {
      const auto& inst = prog.queues[e][i];
      binary = binary || inst.loc.line == 0;
      entries.push_back({static_cast<isa::Engine>(e), i, &inst,
                         static_cast<std::size_t>(std::max(inst.loc.line, 0))});
    }
  if (binary) {
    // parse_binary keeps the file order only within each home-engine queue;
    // walk the words again to give each its word index in the file.
    std::string bytes;
    isa::read_input_file(input, isa::kMaxProgramFileBytes, "a program file", bytes);
    std::vector<std::vector<std::size_t>> word_of(isa::kNumEngines);
    for (std::size_t w = 0; (w + 1) * isa::kInstBytes <= bytes.size(); ++w) {
      const auto e = static_cast<unsigned>(
          isa::home_engine(static_cast<std::uint8_t>(bytes[w * isa::kInstBytes])));
      word_of[e].push_back(w);
    }
    for (Entry& en : entries) {
      const auto e = static_cast<unsigned>(en.engine);
      en.order = en.index < word_of[e].size() ? word_of[e][en.index] : en.index;
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.order < b.order; });

  std::size_t invalid = 0;
  for (const Entry& en : entries) {
    const isa::CheckResult r = isa::check_instruction(en.inst->raw, arch);
    std::string where = input;
    where += binary ? ":word " + std::to_string(en.order) : ":" + std::to_string(en.inst->loc.line);
    std::string line = where + ": " + isa::engine_name(en.engine) + "[" + std::to_string(en.index) +
                       "] " + mnemonic_of(en.inst->raw[0]) + ": ";
    if (r.valid()) {
      line += "ok";
    } else {
      ++invalid;
      line += "INVALID ";
      for (std::size_t i = 0; i < r.failed.size(); ++i)
        line += (i ? ", " : "") + std::string(r.failed[i]);
    }
    std::puts(line.c_str());
  }
  std::printf("%s: %zu instruction(s) checked for %s: %zu ok, %zu invalid\n", input.c_str(),
              entries.size(), std::string(isa::arch_name(arch)).c_str(), entries.size() - invalid,
              invalid);
  return invalid ? 2 : 0;
}

}  // namespace tpb::cli

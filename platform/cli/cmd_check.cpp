// `tpbsim check PROGRAM [--arch X] [--cores N]`: the validity report of every instruction,
// naming each failed predicate (SPEC §9). Exit 0 all valid, 2 any invalid,
// 1 usage, file or syntax error.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

#include "models/isa/address_map.h"
#include "models/isa/asm.h"
#include "models/isa/checker.h"
#include "models/isa/input_file.h"
#include "models/isa/names.h"
#include "models/isa/predicates.h"
#include "models/isa/program.h"
#include "models/isa/program_check.h"
#include "platform/cli/commands.h"

namespace po = boost::program_options;

namespace tpb::cli {
namespace {

// Prints each instruction's verdict as the program streams in, in file
// order: memory proportional to one line, any length.
isa::CheckingSink::OnCheck print_each(const std::string& input) {
  return [input = isa::printable(input)](const isa::InstructionCheck& c) {
    // Text: the source line; a binary: the word's index in the file.
    std::string line = input + (c.loc.line == 0 ? ":word " + std::to_string(c.word)
                                                : ":" + std::to_string(c.loc.line));
    line += ": " + std::string(isa::engine_name(c.engine)) + "[" + std::to_string(c.index) + "] " +
            isa::mnemonic_or_opcode(c.opcode) + ": ";
    if (c.result.valid()) {
      line += "ok";
    } else {
      line += "INVALID ";
      for (std::size_t i = 0; i < c.result.failed.size(); ++i)
        line += (i ? ", " : "") + std::string(c.result.failed[i]);
    }
    std::puts(line.c_str());
  };
}

// --cores N: a device of 1..32 cores (its HBM the cores' pooled).
bool parse_cores(const std::string& text, unsigned& cores) {
  const bool digits = !text.empty() && text.size() <= 3 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  cores = digits ? static_cast<unsigned>(std::stoul(text)) : 0;
  if (cores >= 1 && cores <= isa::kMaxDeviceCores) return true;
  std::fprintf(stderr, "tpbsim check: error: --cores '%s' is not a number of cores (1 to %u)\n",
               isa::excerpt(text).c_str(), isa::kMaxDeviceCores);
  return false;
}

}  // namespace

int cmd_check(const Args& args) {
  po::options_description opts(
      "usage: tpbsim check PROGRAM [--arch " + isa::arch_list("|") +
      "] [--cores N]\n\n"
      "Checks every instruction of PROGRAM (text or raw binary) against the validity\n"
      "contract of the generation (--arch, else the program's .arch, else mariana), the HBM\n"
      "of a device of N cores (--cores, default 1: N cores' HBM pooled, SPEC §15) and\n"
      "prints one line per instruction naming each failed predicate, then a summary.\n"
      "Exit 0 all valid, 2 any invalid, 1 usage, file or syntax error.\n\noptions");
  std::string input, arch_text, cores_text;
  opts.add_options()("arch", po::value<std::string>(&arch_text), "generation")(
      "cores", po::value<std::string>(&cores_text), "the device's cores (1..32): its HBM")(
      "help,h", "this help");
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
  unsigned cores = 1;
  if (vm.count("cores") && !parse_cores(cores_text, cores)) return 1;
  isa::Arch cli_arch{};
  if (!arch_text.empty() && !isa::parse_arch(arch_text, cli_arch)) {
    std::fprintf(stderr, "tpbsim check: error: unknown --arch '%s' (%s)\n", arch_text.c_str(),
                 isa::arch_list().c_str());
    return 1;
  }

  // The generation first (a pass for the program's .arch unless --arch is
  // given: syntax errors are reported before any line), then every
  // instruction checked as it streams in.
  isa::Arch arch = cli_arch;
  std::uint64_t checked = 0, invalid = 0;
  try {
    if (arch_text.empty()) {
      isa::ArchSink a;
      isa::stream_program(input, a);
      arch = a.found().value_or(isa::Arch::Mariana);
    }
    // The device's HBM: every core's pooled (SPEC §15).
    isa::MemoryCapacity cap = isa::default_capacity(arch);
    cap.hbm_bytes *= cores;
    const isa::CapacityScope scope(cap);
    isa::CheckingSink c(arch, print_each(input));
    isa::stream_program(input, c);
    checked = c.checked();
    invalid = c.invalid();
  } catch (const isa::AsmError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", isa::format_diagnostic(e).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tpbsim check: error: %s\n", e.what());
    return 1;
  }
  std::printf("%s: %llu instruction(s) checked for %s: %llu ok, %llu invalid\n",
              isa::printable(input).c_str(), static_cast<unsigned long long>(checked),
              std::string(isa::arch_name(arch)).c_str(),
              static_cast<unsigned long long>(checked - invalid),
              static_cast<unsigned long long>(invalid));
  return invalid ? 2 : 0;
}

}  // namespace tpb::cli

// tpbsim: command-line entry point; dispatches to the subcommands.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "platform/cli/commands.h"

namespace {

constexpr const char* kUsage =
    "usage: tpbsim COMMAND [ARGS...]\n"
    "\n"
    "commands:\n"
    "  run PROGRAM [options]      simulate a program on one NeuronCore (tpbsim run --help)\n"
    "  sweep SWEEP.json [options] run a grid of timing overrides x workloads (tpbsim sweep "
    "--help)\n"
    "  check PROGRAM --arch X     report every failed validity predicate per instruction\n"
    "  asm PROGRAM.tpb -o OUT     assemble program text into raw 64-byte words\n"
    "  disasm IN.bin [-o OUT]     disassemble raw 64-byte words into program text\n"
    "  convert FROM TO VALUE...   numeric format calculator (RNE, saturating)\n"
    "\n"
    "formats: fp32 bf16 fp16 e4m3 e5m2 e3m4 e2m5 fp6_e2m3 fp6_e3m2 fp4_e2m1 int4 nf4 e8m0 s8 u8\n"
    "exit codes: 0 ok, 1 usage or file error, 2 fault or invalid instruction, 3 deadlock,\n"
    "  4 watchdog (run --max-sim-time / --max-wall-time), 5 race found (run --racecheck),\n"
    "  128+N stopped by signal N (130 SIGINT, 143 SIGTERM); docs/BAD_INPUT.md lists them\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::puts("tpbsim 0.1.0");
    return 0;
  }
  const std::string cmd = argv[1];
  const tpb::cli::Args args(argv + 2, argv + argc);
  try {
    if (cmd == "run") return tpb::cli::cmd_run(args);
    if (cmd == "sweep") return tpb::cli::cmd_sweep(args);
    if (cmd == "check") return tpb::cli::cmd_check(args);
    if (cmd == "asm") return tpb::cli::cmd_asm(args);
    if (cmd == "disasm") return tpb::cli::cmd_disasm(args);
    if (cmd == "convert") return tpb::cli::cmd_convert(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "tpbsim: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
  return 1;
}

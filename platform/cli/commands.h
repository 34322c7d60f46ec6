// Subcommands of the `tpbsim` tool. Each takes the arguments after its name
// and returns the process exit code (SPEC §9: 0 ok, 1 usage or file error,
// 2 fault / invalid instruction, 3 deadlock; `run` adds 4, a watchdog's
// limit reached, docs/BAD_INPUT.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tpb::cli {

using Args = std::vector<std::string>;

int cmd_convert(const Args& args);  // tpbsim convert FROM TO VALUE...
int cmd_check(const Args& args);    // tpbsim check PROGRAM --arch X
int cmd_asm(const Args& args);      // tpbsim asm PROGRAM.tpb -o OUT.bin
int cmd_disasm(const Args& args);   // tpbsim disasm IN.bin [-o OUT.tpb]
int cmd_run(const Args& args);      // tpbsim run PROGRAM [options]
int cmd_sweep(const Args& args);    // tpbsim sweep SWEEP.json [options] (docs/SWEEPS.md)

}  // namespace tpb::cli

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

// Outputs are written to "PATH.tpbsim-tmp" and renamed into place when
// complete, unless PATH is a device or a pipe (/dev/null, /dev/stdout), which
// is written in place and never replaced.
bool output_is_staged(const std::string& path);
std::string staged_output_path(const std::string& path);  // where to write PATH
// The file PATH names: a symbolic link's target (written through the link,
// the link kept), else PATH itself. A staged output is renamed onto it.
std::string output_target(const std::string& path);

// `tpbsim run --max-sim-time T`: an integer with a unit ps, ns, us, ms or s
// (none: ps), 1 ps .. 2^62 ps. False with the reason in `why`.
bool parse_sim_time(const std::string& s, std::uint64_t& ps, std::string& why);
// `tpbsim run --max-wall-time S`: seconds (a decimal number), in (0, 1e9].
bool parse_wall_time(const std::string& s, double& seconds, std::string& why);

}  // namespace tpb::cli
